/*
 * test_policy.c - the policy gate on real diffs.
 *
 * Fixtures: tests/fixtures/gates/policy/NAME.diff (git diff output), the
 * options in NAME.policy ("key: value" lines: allow_paths, max_files,
 * max_lines, forbid, allow_build_files, build_files; repeated keys append),
 * and NAME.expect, the feedback text sl_policy_result_text writes.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/policy.h"
#include "gates_fixtures.h"

/* sl_policy_check on the text diff, parsed first as the gate runner does. */
static int check_text(sl_policy_result *r, const sl_policy_opts *opts, const char *diff,
		      size_t len, sl_err *err)
{
	sl_changed ch;
	int ret;

	sl_changed_init(&ch);
	sl_changed_parse(&ch, diff, len, NULL, NULL, NULL);
	ret = sl_policy_check(r, opts, &ch, err);
	sl_changed_release(&ch);
	return ret;
}

static void set_list(sl_strvec *v, const char *value)
{
	sl_strvec_push(v, value);
}

static void run_policy(sl_buf *got, const char *name, const sl_buf *in)
{
	sl_policy_opts opts = SL_POLICY_OPTS_INIT;
	sl_strvec allow = SL_STRVEC_INIT, forbid = SL_STRVEC_INIT, build = SL_STRVEC_INIT;
	sl_buf spec = SL_BUF_INIT, path = SL_BUF_INIT;
	sl_policy_result r;
	sl_err err = SL_ERR_INIT;
	char *line, *save = NULL;

	sl_buf_addf(&path, "%s/policy/%s.policy", GATES_FIXTURES, name);
	CHECK_INT(sl_read_file(&spec, path.buf, 0, NULL), 0);
	for (line = strtok_r(spec.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		const char *value;

		if (line[0] == '#' || !colon)
			continue;
		*colon = '\0';
		value = colon + 1 + (colon[1] == ' ');
		if (!strcmp(line, "allow_paths"))
			set_list(&allow, value);
		else if (!strcmp(line, "forbid"))
			set_list(&forbid, value);
		else if (!strcmp(line, "build_files"))
			set_list(&build, value);
		else if (!strcmp(line, "max_files"))
			opts.max_files = (unsigned)atoi(value);
		else if (!strcmp(line, "max_lines"))
			opts.max_lines = (unsigned)atoi(value);
		else if (!strcmp(line, "allow_build_files"))
			opts.allow_build_files = atoi(value);
		else
			CHECK(!"unknown key in .policy fixture");
	}
	opts.allow_paths = allow.n ? (const char *const *)allow.v : NULL;
	opts.forbid = forbid.n ? (const char *const *)forbid.v : NULL;
	opts.build_files = build.n ? (const char *const *)build.v : NULL;
	sl_policy_result_init(&r);
	CHECK_INT(sl_policy_validate(&opts, &err), 0);
	CHECK_INT(check_text(&r, &opts, in->buf, in->len, &err), 0);
	CHECK_INT(r.pass, r.n == 0);
	sl_policy_result_text(&r, got);
	sl_policy_result_release(&r);
	sl_strvec_release(&allow);
	sl_strvec_release(&forbid);
	sl_strvec_release(&build);
	sl_buf_release(&spec);
	sl_buf_release(&path);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("policy", "diff", run_policy) >= 7);
}

static void test_bad_regex(void)
{
	const char *forbid[] = { "ok", "(unclosed", NULL };
	sl_policy_opts opts = SL_POLICY_OPTS_INIT;
	sl_policy_result r;
	sl_err err = SL_ERR_INIT;

	opts.forbid = forbid;
	sl_policy_result_init(&r);
	CHECK_INT(sl_policy_validate(&opts, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "'(unclosed'") != NULL);
	sl_err_clear(&err);
	CHECK_INT(check_text(&r, &opts, "", 0, &err), SL_EINPUT);
	sl_policy_result_release(&r);
}

/*
 * "x{1,32767}" took glibc's regcomp 13 s and 4 GB; nested bounds multiply;
 * back-references make regexec backtrack.  Each is refused before regcomp,
 * and patterns of ordinary size still compile.
 */
static void test_costly_regex(void)
{
	static const struct { const char *re, *why; } bad[] = {
		{ "x{1,32767}", "too large once its repetitions are expanded" },
		{ "((a{30}){30}){30}", "too large once its repetitions are expanded" },
		{ "(ab{10,}){3000}", "too large once its repetitions are expanded" },
		{ "(a*)*\\1", "back-references are not supported" },
		{ "pa++++++++++++++++++++++++++++++sswd", "a repetition right after another" },
		{ "((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+",
		  "too large once its repetitions are expanded" },
		{ "a|||||b??????????????????????????????????????????????????+++",
		  "a repetition right after another is not supported" },
		{ "x*{2}", "a repetition right after another is not supported" },
		{ "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((a"
		  "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
		  "groups nested too deep" },
	};
	static const char *const good[] = {
		"system\\(", "a{2,5}b{3}", "((a{10}){10}){10}", "[[:alpha:]_]{1,64}\\(",
		"[]{}]{100}", "x{5,}", "a+b+c+(d+e+)+", "[[:digit:]]+\\.[0-9]+",
	};
	sl_policy_opts opts = SL_POLICY_OPTS_INIT;
	sl_err err = SL_ERR_INIT;
	const char *one[2] = { NULL, NULL };
	sl_buf big = SL_BUF_INIT;

	opts.forbid = one;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		one[0] = bad[i].re;
		sl_err_clear(&err);
		CHECK_INT(sl_policy_validate(&opts, &err), SL_EINPUT);
		CHECK(strstr(err.msg, bad[i].why) != NULL);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		one[0] = good[i];
		sl_err_clear(&err);
		CHECK_INT(sl_policy_validate(&opts, &err), 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
	}
	for (int i = 0; i < 5000; i++)
		sl_buf_adds(&big, "a");
	one[0] = big.buf;
	sl_err_clear(&err);
	CHECK_INT(sl_policy_validate(&opts, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "longer than 4096 bytes") != NULL);
	CHECK(strlen(err.msg) < 300);
	sl_buf_release(&big);
}

static void test_empty_diff_passes(void)
{
	sl_policy_opts opts = SL_POLICY_OPTS_INIT;
	sl_policy_result r;
	sl_buf t = SL_BUF_INIT;

	opts.max_files = 1;
	sl_policy_result_init(&r);
	CHECK_INT(check_text(&r, &opts, "", 0, NULL), 0);
	CHECK(r.pass);
	sl_policy_result_text(&r, &t);
	CHECK_STR(t.buf, "policy: pass\n");
	sl_policy_result_release(&r);
	sl_buf_release(&t);
}

/* Many violations are capped at 100 kept, the rest counted; NULs do not hide. */
static void test_caps_and_nul(void)
{
	const char *forbid[] = { "evil", NULL };
	sl_policy_opts opts = SL_POLICY_OPTS_INIT;
	sl_policy_result r;
	sl_buf d = SL_BUF_INIT, t = SL_BUF_INIT;

	opts.forbid = forbid;
	sl_buf_adds(&d, "--- a/x.c\n+++ b/x.c\n@@ -0,0 +1,300 @@\n");
	for (int i = 0; i < 299; i++)
		sl_buf_adds(&d, "+evil\n");
	sl_buf_add(&d, "+a\0evil\n", 8);
	sl_policy_result_init(&r);
	CHECK_INT(check_text(&r, &opts, d.buf, d.len, NULL), 0);
	CHECK(!r.pass);
	CHECK_INT(r.n, 100);
	CHECK_INT(r.dropped, 200);
	sl_policy_result_text(&r, &t);
	CHECK(strstr(t.buf, "policy: 300 violations\n") != NULL);
	CHECK(strstr(t.buf, "... and 200 more\n") != NULL);
	sl_policy_result_release(&r);
	sl_buf_release(&d);
	sl_buf_release(&t);
}

static void test_default_list(void)
{
	size_t n = 0;

	while (sl_policy_default_build_files[n])
		n++;
	CHECK(n > 40);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_bad_regex);
	RUN(test_costly_regex);
	RUN(test_empty_diff_passes);
	RUN(test_caps_and_nul);
	RUN(test_default_list);
	return unit_done();
}
