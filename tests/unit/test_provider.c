/*
 * test_provider.c - the providers against real processes: the openai kind
 * against tests/helper/stub-model on 127.0.0.1 (binary from $STUB_MODEL, or
 * build/tests/helper/stub-model), the command kind with /bin/sh commands.
 *
 * The stub serves reply-N.json for request N from a temporary directory and
 * records each request there; the openai tests run in order and each one
 * knows which request number it makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/provider.h"
#include "util.h"
#include "unit.h"

#define KEY "sk-test-0123456789"

static char dir[PATH_MAX];
static char base_url[128];
static pid_t stub = -1;

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void put(const char *name, const char *text)
{
	char *p = sl_path_join(dir, name);
	sl_err err = SL_ERR_INIT;

	if (sl_write_file(p, text, strlen(text), &err))
		fprintf(stderr, "%s\n", err.msg);
	free(p);
}

static char *get(const char *name)
{
	char *p = sl_path_join(dir, name);
	sl_buf b = SL_BUF_INIT;

	sl_read_file(&b, p, 0, NULL);
	free(p);
	return sl_buf_detach(&b, NULL);
}

static int start_stub(void)
{
	const char *bin = sl_getenv_or("STUB_MODEL", "build/tests/helper/stub-model");
	char *port_file;
	char *port = NULL;
	int ok = 0;

	snprintf(dir, sizeof(dir), "%s/sluice-test-provider-XXXXXX", sl_getenv_or("TMPDIR", "/tmp"));
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 0;
	}
	put("reply-1.json",
	    "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
	    "\"content\":\"--- a/x.c\\n+++ b/x.c\\n\"},\"finish_reason\":\"stop\"}],"
	    "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46}}");
	put("reply-2.status", "500\n");
	put("reply-2.json", "{\"error\":{\"message\":\"boom: key " KEY " rejected\",\"type\":\"x\"}}");
	put("reply-3.json", "{\"choices\":[]}");
	put("reply-4.json", "{\"choices\":[{\"message\":{\"content\":\"no usage\"}}]}");
	put("reply-5.json", "{\"choices\":[{\"message\":{\"content\":\"late\"}}]}");
	put("reply-5.delay", "3000");
	port_file = sl_path_join(dir, "port");
	stub = fork();
	if (stub == 0) {
		execl(bin, bin, "--dir", dir, "--port-file", port_file, "--max-seconds", "120",
		      (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	for (int i = 0; stub > 0 && i < 500; i++) {
		int st;

		free(port);
		port = get("port");
		if (*port && strchr(port, '\n')) {
			ok = 1;
			break;
		}
		if (waitpid(stub, &st, WNOHANG) == stub) {
			stub = -1;
			break;
		}
		nap_ms(10);
	}
	if (ok)
		snprintf(base_url, sizeof(base_url), "http://127.0.0.1:%d/v1/", atoi(port));
	else
		fprintf(stderr, "stub-model did not start (%s)\n", bin);
	free(port);
	free(port_file);
	return ok;
}

static void stop_stub(void)
{
	if (stub > 0) {
		kill(stub, SIGTERM);
		waitpid(stub, NULL, 0);
		stub = -1;
	}
	sl_rm_rf(dir, NULL);
}

static const sl_chat_msg chat[] = {
	{ "system", "You edit code." },
	{ "user", "Fix x.c \xff please" },      /* invalid UTF-8 must not break the request */
};

static sl_provider *openai(const char *key_env, unsigned timeout_s)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;

	o.kind = SL_PROVIDER_OPENAI;
	o.base_url = base_url;
	o.model = "stub-1";
	o.api_key_env = key_env;
	o.temperature = 0.25;
	o.max_tokens = 100;
	o.timeout_s = timeout_s;
	if (sl_provider_new(&p, &o, &err))
		fprintf(stderr, "sl_provider_new: %s\n", err.msg);
	return p;
}

static void test_openai_complete(void)
{
	sl_provider *p = openai("SL_TEST_KEY", 10);
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char *headers = NULL, *body = NULL;
	json_t *req = NULL, *msgs;

	sl_completion_init(&c);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(sl_provider_complete(p, chat, 2, &c, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_STR(c.text.buf, "--- a/x.c\n+++ b/x.c\n");
	CHECK_INT(c.tokens_in, 12);
	CHECK_INT(c.tokens_out, 34);
	CHECK_INT(c.http_status, 200);
	CHECK(c.latency_ms >= 0 && c.latency_ms < 10000);

	headers = get("request-1.headers");
	CHECK(!strncmp(headers, "POST /v1/chat/completions HTTP/1.1\r\n", 36));
	CHECK(strstr(headers, "\r\nAuthorization: Bearer " KEY "\r\n") != NULL);
	CHECK(strstr(headers, "\r\nContent-Type: application/json\r\n") != NULL);
	body = get("request-1.json");
	req = json_loads(body, 0, NULL);
	CHECK(json_is_object(req));
	CHECK_STR(json_string_value(json_object_get(req, "model")), "stub-1");
	CHECK(json_real_value(json_object_get(req, "temperature")) == 0.25);
	CHECK_INT(json_integer_value(json_object_get(req, "max_tokens")), 100);
	msgs = json_object_get(req, "messages");
	CHECK_INT(json_array_size(msgs), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "content")),
		  "You edit code.");
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 1), "role")), "user");
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
		  "Fix x.c \xef\xbf\xbd please");
	json_decref(req);
	free(headers);
	free(body);
	sl_completion_release(&c);
	sl_provider_free(p);
}

static void test_openai_http_error(void)
{
	sl_provider *p = openai("SL_TEST_KEY", 10);
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	if (!p)
		return;
	CHECK_INT(sl_provider_complete(p, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 500: boom: key *** rejected");
	CHECK(strstr(err.msg, KEY) == NULL);
	CHECK_INT(c.http_status, 500);
	sl_completion_release(&c);
	sl_provider_free(p);
}

static void test_openai_no_choices(void)
{
	sl_provider *p = openai(NULL, 10);
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char *headers;

	sl_completion_init(&c);
	if (!p)
		return;
	CHECK_INT(sl_provider_complete(p, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the model's reply has no choices");
	/* no api_key_env: no Authorization header at all */
	headers = get("request-3.headers");
	CHECK(*headers && strstr(headers, "Authorization") == NULL);
	free(headers);

	sl_err_clear(&err);
	CHECK_INT(sl_provider_complete(p, chat, 1, &c, &err), 0);
	CHECK_STR(c.text.buf, "no usage");
	CHECK_INT(c.tokens_in, -1);
	CHECK_INT(c.tokens_out, -1);
	sl_completion_release(&c);
	sl_provider_free(p);
}

static void test_openai_timeout(void)
{
	sl_provider *p = openai(NULL, 1);
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int64_t t0 = sl_now_ms();

	sl_completion_init(&c);
	if (!p)
		return;
	CHECK_INT(sl_provider_complete(p, chat, 2, &c, &err), SL_ERROR);
	CHECK(strstr(err.msg, "timed out after 1 s") != NULL);
	CHECK(sl_now_ms() - t0 < 2500);
	sl_completion_release(&c);
	sl_provider_free(p);
}

static void test_openai_unreachable(void)
{
	sl_provider *p = openai(NULL, 5);
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	if (!p)
		return;
	CHECK_INT(sl_provider_complete(p, chat, 2, &c, &err), SL_ERROR);
	CHECK(!strncmp(err.msg, "cannot reach the model at 'http://127.0.0.1:", 44));
	sl_completion_release(&c);
	sl_provider_free(p);
}

static void test_openai_options(void)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = (sl_provider *)&o;
	sl_err err = SL_ERR_INIT;

	o.kind = SL_PROVIDER_OPENAI;
	o.base_url = "http://127.0.0.1:9/v1";
	o.model = "m";
	o.api_key_env = "SL_TEST_SURELY_UNSET";
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK(p == NULL);
	CHECK_STR(err.msg, "environment variable 'SL_TEST_SURELY_UNSET' is not set");
	sl_err_clear(&err);
	o.api_key_env = NULL;
	o.model = NULL;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the openai provider needs a model");
	sl_err_clear(&err);
	o.model = "m";
	o.base_url = "ftp://x";
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	sl_err_clear(&err);
	o.kind = SL_PROVIDER_RULES;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	sl_err_clear(&err);
	o.kind = SL_PROVIDER_COMMAND;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the command provider needs a command");

	CHECK_INT(sl_provider_kind_parse("openai"), SL_PROVIDER_OPENAI);
	CHECK_INT(sl_provider_kind_parse("command"), SL_PROVIDER_COMMAND);
	CHECK_INT(sl_provider_kind_parse("rules"), SL_PROVIDER_RULES);
	CHECK_INT(sl_provider_kind_parse("anthropic"), 0);
	CHECK_STR(sl_provider_kind_name(SL_PROVIDER_COMMAND), "command");
}

/* ---- command --------------------------------------------------------- */

static sl_provider *command(const char *cmd, unsigned timeout_s)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;

	o.kind = SL_PROVIDER_COMMAND;
	o.command = cmd;
	o.timeout_s = timeout_s;
	if (sl_provider_new(&p, &o, &err))
		fprintf(stderr, "sl_provider_new: %s\n", err.msg);
	return p;
}

/* Run cmd on chat; returns the code, text in *c. */
static int run(const char *cmd, unsigned timeout_s, const sl_chat_msg *m, size_t n,
	       sl_completion *c, sl_err *err)
{
	sl_provider *p = command(cmd, timeout_s);
	int rc;

	if (!p)
		return -100;
	rc = sl_provider_complete(p, m, n, c, err);
	sl_provider_free(p);
	return rc;
}

static void test_flatten(void)
{
	sl_buf b = SL_BUF_INIT;
	const sl_chat_msg m[] = {
		{ "system", "S" }, { "user", "U1\n" }, { "assistant", "A" }, { "user", "" },
	};

	sl_provider_flatten_chat(&b, m, 4);
	CHECK_STR(b.buf, "### SYSTEM\nS\n\n### USER\nU1\n\n### ASSISTANT\nA\n\n### USER\n\n");
	sl_buf_release(&b);
}

static void test_command_cat(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	CHECK_INT(run("cat", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "### SYSTEM\nYou edit code.\n\n### USER\nFix x.c \xff please\n");
	CHECK_INT(c.http_status, 0);
	CHECK_INT(c.tokens_in, -1);
	sl_completion_release(&c);
}

static void test_command_big_stdin_and_cap(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	sl_buf big = SL_BUF_INIT, want = SL_BUF_INIT;
	sl_chat_msg m[1];

	for (int i = 0; i < 20000; i++)
		sl_buf_addf(&big, "line %05d of a big prompt\n", i);
	m[0].role = "user";
	m[0].content = big.buf;
	sl_provider_flatten_chat(&want, m, 1);
	sl_completion_init(&c);
	/* 540 kB through stdin and back: no deadlock between writing and reading */
	CHECK_INT(run("cat", 20, m, 1, &c, &err), 0);
	CHECK_INT(c.text.len, want.len);
	CHECK(!strcmp(c.text.buf, want.buf));
	/* a command that does not read its stdin must not kill us with SIGPIPE */
	CHECK_INT(run("exec echo ignored", 20, m, 1, &c, &err), 0);
	CHECK_STR(c.text.buf, "ignored\n");
	/* stdout is capped at 1 MiB, and the rest drained */
	CHECK_INT(run("head -c 3000000 /dev/zero | tr '\\0' a", 20, chat, 1, &c, &err), 0);
	CHECK_INT(c.text.len, 1024 * 1024);
	CHECK(c.text.truncated);
	sl_completion_release(&c);
	sl_buf_release(&big);
	sl_buf_release(&want);
}

static void test_command_failure(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	CHECK_INT(run("echo partial; echo first >&2; echo 'the real error  ' >&2; exit 3",
		      10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command exited with status 3: the real error");
	CHECK_INT(c.http_status, 3);
	sl_err_clear(&err);
	CHECK_INT(run("kill -9 $$", 10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command was killed by signal 9");
	sl_err_clear(&err);
	CHECK_INT(run("exit 1", 10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command exited with status 1");
	sl_completion_release(&c);
}

static void test_command_timeout(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int64_t t0 = sl_now_ms();

	sl_completion_init(&c);
	CHECK_INT(run("sleep 30", 1, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command timed out after 1 s and was killed");
	CHECK(sl_now_ms() - t0 < 3000);
	/* a background child holding stdout open is killed with the group */
	sl_err_clear(&err);
	t0 = sl_now_ms();
	CHECK_INT(run("sleep 30 & echo started; wait", 1, chat, 2, &c, &err), SL_ERROR);
	CHECK(strstr(err.msg, "timed out") != NULL);
	CHECK(sl_now_ms() - t0 < 3000);
	CHECK_STR(c.text.buf, "started\n");
	sl_completion_release(&c);
}

/* 1 if pid is gone or a zombie (killed, waiting for its new parent to reap it). */
static int dead(long pid)
{
	char path[64];
	sl_buf st = SL_BUF_INIT;
	const char *close;
	int ret;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (sl_read_file(&st, path, 4096, NULL))
		return 1;
	close = strrchr(st.buf, ')');
	ret = close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
	sl_buf_release(&st);
	return ret;
}

static void test_command_kills_stragglers(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	long pid;
	int gone = 0;

	sl_completion_init(&c);
	CHECK_INT(run("sleep 30 >/dev/null 2>&1 & echo $!", 10, chat, 2, &c, &err), 0);
	pid = atol(c.text.buf);
	CHECK(pid > 1);
	for (int i = 0; pid > 1 && i < 200 && !gone; i++) {
		gone = dead(pid);
		if (!gone)
			nap_ms(10);
	}
	CHECK(gone);
	sl_completion_release(&c);
}

static void test_command_env_and_fds(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int leak = open("/dev/null", O_RDONLY);   /* deliberately without O_CLOEXEC */

	sl_completion_init(&c);
	setenv("SL_TEST_ENV", "from the host", 1);
	CHECK_INT(run("printf '%s\\n' \"$SL_TEST_ENV\"", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "from the host\n");
	CHECK(leak >= 3);
	/* ls opens the directory itself as fd 3: nothing else may be open */
	CHECK_INT(run("exec ls /proc/self/fd", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "0\n1\n2\n3\n");
	close(leak);
	sl_completion_release(&c);
}

int main(void)
{
	int up;

	setenv("SL_TEST_KEY", KEY, 1);
	unsetenv("SL_TEST_SURELY_UNSET");
	/* the stub is on loopback: never route it through a proxy */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);

	up = start_stub();
	CHECK(up);
	if (up) {
		RUN(test_openai_complete);
		RUN(test_openai_http_error);
		RUN(test_openai_no_choices);
		RUN(test_openai_timeout);
	}
	stop_stub();
	if (up)
		RUN(test_openai_unreachable);
	RUN(test_openai_options);
	RUN(test_flatten);
	RUN(test_command_cat);
	RUN(test_command_big_stdin_and_cap);
	RUN(test_command_failure);
	RUN(test_command_timeout);
	RUN(test_command_kills_stragglers);
	RUN(test_command_env_and_fds);
	if (!up) {
		printf("not ok - stub-model did not start\n");
		return 1;
	}
	return unit_done();
}
