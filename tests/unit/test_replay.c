/*
 * test_replay.c - request keys, recording replies to a JSON lines file and
 * replaying them: a run recorded against tests/helper/stub-model is replayed
 * with the stub stopped, request bodies and replies identical; misses,
 * repeats, malformed files and concurrent recorders; a session's steps
 * exported from a store, found by position.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/provider.h"
#include "storage/step_store.h"
#include "stub.h"
#include "common/sha256.h"
#include "common/util.h"
#include "unit.h"
#include "store_fixture.h"

static char tmp[PATH_MAX];

static char *tmp_file(const char *name)
{
	return sl_path_join(tmp, name);
}

static const sl_chat_msg chat[] = {
	{ "system", "You edit code." },
	{ "user", "Fix x.c" },
};

static void test_request_key(void)
{
	char a[65], b[65];
	const sl_chat_msg split1[] = { { "user", "ab" }, { "user", "c" } };
	const sl_chat_msg split2[] = { { "user", "a" }, { "user", "bc" } };
	const sl_chat_msg other_role[] = { { "system", "You edit code." }, { "assistant", "Fix x.c" } };
	const sl_chat_msg one_more[] = { { "system", "You edit code." }, { "user", "Fix x.c" },
					 { "user", "" } };

	sl_request_key(a, SL_PROVIDER_OPENAI, "m1", chat, 2);
	CHECK_INT(strlen(a), 64);
	CHECK(strspn(a, "0123456789abcdef") == 64);
	/* pinned: a change of the key's definition breaks every recorded file */
	CHECK_STR(a, "a17ce92122fe778da84c12fe0574a437a87736eb3b8d730f147411f2797e134b");
	sl_request_key(b, SL_PROVIDER_OPENAI, "m1", chat, 2);
	CHECK_STR(a, b);
	sl_request_key(b, SL_PROVIDER_ANTHROPIC, "m1", chat, 2);
	CHECK(strcmp(a, b));
	sl_request_key(b, SL_PROVIDER_OPENAI, "m2", chat, 2);
	CHECK(strcmp(a, b));
	sl_request_key(b, SL_PROVIDER_OPENAI, "m1", other_role, 2);
	CHECK(strcmp(a, b));
	sl_request_key(b, SL_PROVIDER_OPENAI, "m1", one_more, 3);
	CHECK(strcmp(a, b));
	sl_request_key(b, SL_PROVIDER_OPENAI, "m1", chat, 1);
	CHECK(strcmp(a, b));
	sl_request_key(a, SL_PROVIDER_OPENAI, "m1", split1, 2);
	sl_request_key(b, SL_PROVIDER_OPENAI, "m1", split2, 2);
	CHECK(strcmp(a, b));
	sl_request_key(a, SL_PROVIDER_COMMAND, NULL, chat, 2);
	sl_request_key(b, SL_PROVIDER_COMMAND, "", chat, 2);
	CHECK_STR(a, b);
}

static sl_provider *replayer(const char *path, int kind, const char *model)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;

	o.kind = SL_PROVIDER_REPLAY;
	o.replay_path = path;
	o.replay_kind = kind;
	o.model = model;
	o.temperature = 0.5;
	o.max_tokens = 64;
	if (sl_provider_new(&p, &o, &err))
		fprintf(stderr, "sl_provider_new: %s\n", err.msg);
	CHECK(p != NULL);
	return p;
}

/* Record a run against the stub, stop it, replay the run: same requests, same replies. */
static void test_record_then_replay_offline(void)
{
	enum { N = 5 };
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_completion c, r;
	sl_err err = SL_ERR_INIT;
	char *path = tmp_file("run.jsonl"), texts[N][32];
	sl_buf requests[N], replies[N];
	sl_chat_msg m[N][2];
	stub s;

	if (!stub_start(&s))
		goto done;
	stub_put(&s, "reply-1.echo", "");
	stub_fixture(&s, "reply-3.json", "openai-length.json");
	stub_put(&s, "reply-4.echo", "");
	o.kind = SL_PROVIDER_OPENAI;
	o.base_url = s.base_url;
	o.model = "stub-1";
	o.temperature = 0.5;
	o.max_tokens = 64;
	o.max_retries = 0;
	CHECK_INT(sl_provider_new(&p, &o, &err), 0);
	sl_completion_init(&c);
	sl_completion_init(&r);
	for (int i = 0; p && i < N; i++) {
		snprintf(texts[i], sizeof(texts[i]), "target %d\n\"quoted\"\t\xc3\xa9", i);
		m[i][0] = chat[0];
		m[i][1] = (sl_chat_msg){ "user", texts[i] };
		sl_buf_init(&requests[i], 0);
		sl_buf_init(&replies[i], 0);
		CHECK_INT(sl_provider_complete(p, m[i], 2, &c, &err), 0);
		CHECK_INT(sl_replay_record(path, c.key, &c, &err), 0);
		sl_buf_add(&requests[i], c.request.buf, c.request.len);
		sl_buf_add(&replies[i], c.text.buf, c.text.len);
	}
	sl_provider_free(p);
	stub_stop(&s);          /* from here on, nothing listens */

	p = replayer(path, SL_PROVIDER_OPENAI, "stub-1");
	for (int i = 0; p && i < N; i++) {
		char key[65];

		CHECK_INT(sl_provider_complete(p, m[i], 2, &r, &err), 0);
		CHECK_STR(err.msg, "");
		CHECK_STR(r.text.buf, replies[i].buf);
		CHECK_STR(r.request.buf, requests[i].buf);
		sl_request_key(key, SL_PROVIDER_OPENAI, "stub-1", m[i], 2);
		CHECK_STR(r.key, key);
		CHECK_INT(r.http_status, 200);
		CHECK_INT(r.truncated, i == 2);
		CHECK_INT(r.tokens_in, i == 2 ? 50 : (int64_t)strlen(texts[i]));
		CHECK_INT(r.tokens_out, i == 2 ? 100 : 7);
		CHECK_INT(r.retries, 0);
	}
	sl_provider_free(p);
	/* replay_kind 0 finds the openai records by itself */
	p = replayer(path, 0, "stub-1");
	CHECK_INT(p ? sl_provider_complete(p, m[1], 2, &r, &err) : -100, 0);
	CHECK_STR(r.text.buf, replies[1].buf);
	CHECK_STR(r.request.buf, requests[1].buf);
	sl_provider_free(p);
	/* another model is another request */
	p = replayer(path, SL_PROVIDER_OPENAI, "stub-2");
	sl_err_clear(&err);
	CHECK_INT(p ? sl_provider_complete(p, m[1], 2, &r, &err) : -100, SL_EINPUT);
	CHECK(!strncmp(err.msg, "no recorded reply for request key '", 35));
	CHECK(strstr(err.msg, r.key) != NULL);
	CHECK(strstr(err.msg, path) != NULL);
	sl_provider_free(p);
	for (int i = 0; i < N; i++) {
		sl_buf_release(&requests[i]);
		sl_buf_release(&replies[i]);
	}
	sl_completion_release(&c);
	sl_completion_release(&r);
done:
	free(path);
}

static void test_miss_names_every_key(void)
{
	char *path = tmp_file("empty.jsonl");
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char k1[65], k2[65], k3[65];

	sl_write_file(path, "\n", 1, NULL);
	p = replayer(path, 0, "m");
	sl_completion_init(&c);
	CHECK_INT(p ? sl_provider_complete(p, chat, 2, &c, &err) : -100, SL_EINPUT);
	sl_request_key(k1, SL_PROVIDER_OPENAI, "m", chat, 2);
	sl_request_key(k2, SL_PROVIDER_ANTHROPIC, "m", chat, 2);
	sl_request_key(k3, SL_PROVIDER_COMMAND, "m", chat, 2);
	CHECK(strstr(err.msg, k1) && strstr(err.msg, k2) && strstr(err.msg, k3));
	CHECK_STR(c.text.buf, "");
	sl_completion_release(&c);
	sl_provider_free(p);
	free(path);
}

/* The same request asked again gets the next recorded reply, then the last again. */
static void test_repeats_in_order(void)
{
	char *path = tmp_file("repeat.jsonl");
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char key[65];
	static const char *const want[] = { "first", "second", "third", "third" };

	sl_completion_init(&c);
	sl_request_key(key, SL_PROVIDER_ANTHROPIC, "m", chat, 2);
	c.tokens_in = 1;
	c.tokens_out = 2;
	for (int i = 0; i < 3; i++) {
		sl_buf_reset(&c.text);
		sl_buf_adds(&c.text, want[i]);
		CHECK_INT(sl_replay_record(path, key, &c, &err), 0);
	}
	p = replayer(path, SL_PROVIDER_ANTHROPIC, "m");
	for (int i = 0; p && i < 4; i++) {
		CHECK_INT(sl_provider_complete(p, chat, 2, &c, &err), 0);
		CHECK_STR(c.text.buf, want[i]);
		CHECK_INT(c.tokens_in, 1);
		CHECK_INT(c.http_status, 0);
	}
	/* a replayed anthropic request records the anthropic body */
	CHECK(strstr(c.request.buf, "\"system\":\"You edit code.\"") != NULL);
	sl_completion_release(&c);
	sl_provider_free(p);
	CHECK_INT(sl_replay_record(path, "not-a-key", &c, &err), SL_EINPUT);
	free(path);
}

static void test_malformed_files(void)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "{\"key\":\"" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "\",\"reply\":\"x\"}\n{oops\n", "line 2: string or '}' expected near 'oops'" },
		{ "\n\n[1]\n", "line 3: not a JSON object" },
		{ "{\"key\":\"abc\",\"reply\":\"x\"}\n", "line 1: \"key\" is not 64 lowercase hex digits" },
		{ "{\"key\":\"" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "\",\"reply\":7}\n", "line 1: no \"reply\" string" },
	};
	char *path = tmp_file("bad.jsonl"), *missing = tmp_file("missing.jsonl");
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;
	sl_buf want = SL_BUF_INIT;

	o.kind = SL_PROVIDER_REPLAY;
	o.replay_path = path;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sl_write_file(path, cases[i].text, strlen(cases[i].text), NULL);
		sl_err_clear(&err);
		CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
		CHECK(p == NULL);
		sl_buf_reset(&want);
		sl_buf_addf(&want, "replay file '%s' %s", path, cases[i].want);
		CHECK_STR(err.msg, want.buf);
	}
	o.replay_path = missing;
	sl_err_clear(&err);
	CHECK(sl_provider_new(&p, &o, &err) < 0);
	CHECK(strstr(err.msg, "missing.jsonl") != NULL);
	o.replay_path = path;
	o.replay_kind = SL_PROVIDER_RULES;
	sl_err_clear(&err);
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	sl_buf_release(&want);
	free(path);
	free(missing);
}

typedef struct rec_arg {
	const char *path;
	int id, failed;
} rec_arg;

static void *recorder(void *arg)
{
	rec_arg *a = arg;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	for (int i = 0; i < 25; i++) {
		char key[65], text[64];
		sl_chat_msg m = { "user", text };

		snprintf(text, sizeof(text), "recorder %d item %d", a->id, i);
		sl_request_key(key, SL_PROVIDER_COMMAND, NULL, &m, 1);
		sl_buf_reset(&c.text);
		/* long enough that a torn write would show */
		for (int k = 0; k < 200; k++)
			sl_buf_adds(&c.text, text);
		if (sl_replay_record(a->path, key, &c, &err))
			a->failed++;
	}
	sl_completion_release(&c);
	return NULL;
}

static void test_concurrent_recorders(void)
{
	char *path = tmp_file("many.jsonl");
	pthread_t t[8];
	rec_arg a[8];
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int hits = 0;

	for (int i = 0; i < 8; i++) {
		a[i] = (rec_arg){ path, i, 0 };
		pthread_create(&t[i], NULL, recorder, &a[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(a[i].failed, 0);
	}
	p = replayer(path, SL_PROVIDER_COMMAND, NULL);    /* parses every line, or fails */
	sl_completion_init(&c);
	for (int i = 0; p && i < 8; i++) {
		for (int j = 0; j < 25; j += 6) {
			char text[64];
			sl_chat_msg m = { "user", text };

			snprintf(text, sizeof(text), "recorder %d item %d", i, j);
			if (!sl_provider_complete(p, &m, 1, &c, &err) && c.text.len == 200 * strlen(text) &&
			    !strncmp(c.text.buf, text, strlen(text)))
				hits++;
		}
	}
	CHECK_INT(hits, 8 * 5);
	sl_completion_release(&c);
	sl_provider_free(p);
	free(path);
}

/*
 * A store's session steps exported (sl_store_export_replies) carry their
 * position and what the model had seen, as a --record file's do: a replay
 * finds each by position, and marks a step whose last message differs.
 */
static void test_store_steps_by_position(void)
{
	static const char *const replies[] = { "step one", "step two", "" };
	static const char *const outputs[] = { "exit status 0\nfound\n", NULL, "out of steps" };
	char *db = tmp_file("steps.db"), *path = tmp_file("steps.jsonl"), keys[3][65];
	sl_store *st = NULL;
	sl_provider *p = NULL;
	sl_completion r;
	sl_err err = SL_ERR_INIT;
	sl_chat_msg m[2] = { { "system", "act" }, { "user", "exit status 0\nfound\n" } };
	int64_t camp, tid = 0;
	int inserted = 0;

	sl_completion_init(&r);
	CHECK_INT(sl_store_open(&st, db, 1, &err), 0);
	camp = fixture_campaign(st, "c", "name: c\n");
	CHECK_INT(fixture_target(st, camp, "src/a.c:3-4", &tid, &inserted, &err), 0);
	for (int i = 0; st && i < 3; i++) {
		sl_step_rec rec = { 0 };

		sl_sha256_hex(keys[i], replies[i], strlen(replies[i]));
		rec.target_id = tid;
		rec.n = 1;
		rec.step = i + 1;
		rec.reply = (char *)replies[i];
		rec.request_key = i < 2 ? keys[i] : NULL;   /* a budget step asks nobody */
		rec.kind = i < 2 ? "command" : "budget";
		rec.output = (char *)outputs[i];
		rec.tokens_in = 10 + i;
		rec.tokens_out = 3;
		CHECK_INT(sl_step_put(st, &rec, &err), 0);
	}
	CHECK_INT(sl_store_export_replies(st, path, &err), 0);
	sl_store_free(st);
	p = replayer(path, SL_PROVIDER_COMMAND, NULL);
	/* step 2: its key from the record whatever the chat, what it had seen the same */
	CHECK_INT(p ? sl_provider_complete_at(p, "src/a.c:3-4 1 2", m, 2, &r, &err) : -1, 0);
	CHECK_STR(r.text.buf, "step two");
	CHECK_STR(r.key, keys[1]);
	CHECK_INT(r.tokens_in, 11);
	CHECK_INT(r.seen_differs, 0);
	/* step 1's output was not what was recorded: step 2 says so */
	m[1].content = "exit status 0\nfound something else\n";
	CHECK_INT(p ? sl_provider_complete_at(p, "src/a.c:3-4 1 2", m, 2, &r, &err) : -1, 0);
	CHECK_STR(r.text.buf, "step two");
	CHECK_INT(r.seen_differs, 1);
	/* step 1 has no step before it to have seen */
	CHECK_INT(p ? sl_provider_complete_at(p, "src/a.c:3-4 1 1", m, 2, &r, &err) : -1, 0);
	CHECK_STR(r.text.buf, "step one");
	CHECK_INT(r.seen_differs, 0);
	/* nothing recorded at step 3 (its budget step asked nobody) */
	CHECK_INT(p ? sl_provider_complete_at(p, "src/a.c:3-4 1 3", m, 2, &r, &err) : -1,
		  SL_EINPUT);
	sl_provider_free(p);
	sl_completion_release(&r);
	free(db);
	free(path);
}

int main(void)
{
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	snprintf(tmp, sizeof(tmp), "%s/sluice-test-replay-XXXXXX", sl_getenv_or("TMPDIR", "/tmp"));
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_request_key);
	RUN(test_record_then_replay_offline);
	RUN(test_miss_names_every_key);
	RUN(test_repeats_in_order);
	RUN(test_malformed_files);
	RUN(test_concurrent_recorders);
	RUN(test_store_steps_by_position);
	sl_rm_rf(tmp, NULL);
	return unit_done();
}
