/*
 * test_spec.c - the campaign file: a full spec, defaults, every error's
 * exact "file:line:col: message", and query positions.
 *
 * Each case writes its YAML into a fresh file under a mkdtemp() directory,
 * loads it with sl_spec_load() and checks the result; the directory is
 * removed at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/generate/edit.h"
#include "pipeline/generate/provider.h"
#include "pipeline/spec.h"
#include "scoping/scope.h"
#include "unit.h"

static char tmpdir[64];
static int nfiles;

/* Write text to a new file in tmpdir; returns its path (caller frees). */
static char *write_spec(const char *text, size_t len)
{
	sl_buf path = SL_BUF_INIT;
	FILE *f;

	sl_buf_addf(&path, "%s/spec%d.yaml", tmpdir, ++nfiles);
	f = fopen(path.buf, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "cannot write '%s'\n", path.buf);
		exit(2);
	}
	return sl_buf_detach(&path, NULL);
}

static sl_spec *load_ok(const char *text, char **path_out)
{
	sl_err err = SL_ERR_INIT;
	sl_spec *spec = NULL;
	char *path = write_spec(text, strlen(text));
	int rc = sl_spec_load(&spec, path, &err);

	CHECK_INT(rc, 0);
	CHECK_STR(err.msg, "");
	if (path_out)
		*path_out = path;
	else
		free(path);
	return spec;
}

/* Load text and expect SL_EINPUT with exactly "<path>:<where_msg>". */
static void expect_error_at(int line, const char *text, size_t len, const char *where_msg)
{
	sl_err err = SL_ERR_INIT;
	sl_spec *spec = (sl_spec *)&err;
	char *path = write_spec(text, len);
	sl_buf want = SL_BUF_INIT;
	int before = unit_cur_failed, rc;

	unit_cur_failed = 0;
	rc = sl_spec_load(&spec, path, &err);
	sl_buf_addf(&want, "%s:%s", path, where_msg);
	CHECK_INT(rc, SL_EINPUT);
	CHECK(spec == NULL);
	CHECK_INT(err.code, SL_EINPUT);
	CHECK_STR(err.msg, want.buf);
	if (unit_cur_failed)
		fprintf(stderr, "  (the case at line %d)\n", line);
	unit_cur_failed |= before;
	sl_buf_release(&want);
	free(path);
}

#define EXPECT_ERROR(text, msg) expect_error_at(__LINE__, (text), strlen(text), (msg))

/* A minimal valid spec; lines 1-8, so appended keys start on line 9. */
#define BASE \
	"name: t\n" \
	"repository: r\n" \
	"targets:\n" \
	"  language: c\n" \
	"  query: q\n" \
	"rules:\n" \
	"  - capture: c\n" \
	"    template: x\n"

static const char full_spec[] =
	"# a campaign with every field\n"                          /*  1 */
	"name: greet-v2\n"                                         /*  2 */
	"repository: ../repo\n"                                    /*  3 */
	"base: main\n"                                             /*  4 */
	"scratch: /dev/shm/sluice\n"                               /*  5 */
	"targets:\n"                                               /*  6 */
	"  language: c\n"                                          /*  7 */
	"  paths: [\"src/**/*.c\", '*.h']\n"                       /*  8 */
	"  query: |\n"                                             /*  9 */
	"    (call_expression\n"                                   /* 10 */
	"      function: (identifier) @fn (#eq? @fn \"old\")) @call\n" /* 11 */
	"  capture: call\n"                                        /* 12 */
	"  unit: function\n"                                       /* 13 */
	"rules:\n"                                                 /* 14 */
	"  - capture: call\n"                                      /* 15 */
	"    template: \"new(${args})\"\n"                         /* 16 */
	"  - {capture: fn, template: ''}\n"                        /* 17 */
	"provider:\n"                                              /* 18 */
	"  kind: openai\n"                                         /* 19 */
	"  base_url: http://127.0.0.1:8080/v1\n"                   /* 20 */
	"  model: gpt-4o-mini\n"                                   /* 21 */
	"  api_key_env: OPENAI_API_KEY\n"                          /* 22 */
	"  temperature: 0.2\n"                                     /* 23 */
	"  max_tokens: 2048\n"                                     /* 24 */
	"  timeout: 120\n"                                         /* 25 */
	"  command: ./model.sh\n"                                  /* 26 */
	"instructions: |\n"                                        /* 27 */
	"  Replace old() with new().\n"                            /* 28 */
	"prompt: |\n"                                              /* 29 */
	"  File {{path}}:\n"                                       /* 30 */
	"  {{file}}\n"                                             /* 31 */
	"edit_format: search-replace\n"                            /* 32 */
	"attempts: 5\n"                                            /* 33 */
	"gates:\n"                                                 /* 34 */
	"  - name: build\n"                                        /* 35 */
	"    command: make\n"                                      /* 36 */
	"    timeout: 120\n"                                       /* 37 */
	"  - name: test\n"                                         /* 38 */
	"    command: make test\n"                                 /* 39 */
	"review:\n"                                                /* 40 */
	"  branch_prefix: sluice/greet-v2\n";                      /* 41 */

static void test_full_spec(void)
{
	char *path = NULL;
	sl_spec *s = load_ok(full_spec, &path);

	if (!s)
		return;
	CHECK_STR(s->path, path);
	CHECK_STR(s->dir, tmpdir);
	CHECK_STR(s->name, "greet-v2");
	CHECK_STR(s->repository, "../repo");
	CHECK_STR(s->base, "main");
	CHECK_STR(s->scratch, "/dev/shm/sluice");
	CHECK_STR(s->language, "c");
	CHECK_INT(s->language_pos.line, 7);
	CHECK_INT(s->language_pos.col, 13);
	CHECK_INT(s->paths.n, 2);
	if (s->paths.n == 2) {
		CHECK_STR(s->paths.v[0], "src/**/*.c");
		CHECK_STR(s->paths.v[1], "*.h");
		CHECK(s->paths.v[2] == NULL);
	}
	CHECK_STR(s->query, "(call_expression\n"
		  "  function: (identifier) @fn (#eq? @fn \"old\")) @call\n");
	CHECK_INT(s->query_pos.line, 10);
	CHECK_INT(s->query_pos.col, 5);
	CHECK_INT(s->query_block, 1);
	CHECK_STR(s->capture, "call");
	CHECK_STR(s->unit, "function");
	CHECK_INT(s->nrules, 2);
	if (s->nrules == 2) {
		CHECK_STR(s->rules[0].capture, "call");
		CHECK_STR(s->rules[0].template_text, "new(${args})");
		CHECK_INT(s->rules[0].pos.line, 15);
		CHECK_INT(s->rules[0].pos.col, 5);
		CHECK_STR(s->rules[1].capture, "fn");
		CHECK_STR(s->rules[1].template_text, "");
		CHECK_INT(s->rules[1].pos.line, 17);
	}
	CHECK_INT(s->provider, SL_PROVIDER_OPENAI);
	CHECK_STR(s->base_url, "http://127.0.0.1:8080/v1");
	CHECK_STR(s->model, "gpt-4o-mini");
	CHECK_STR(s->api_key_env, "OPENAI_API_KEY");
	CHECK(s->temperature > 0.199 && s->temperature < 0.201);
	CHECK_INT(s->max_tokens, 2048);
	CHECK_INT(s->provider_timeout_s, 120);
	CHECK_STR(s->command, "./model.sh");
	CHECK_STR(s->instructions, "Replace old() with new().\n");
	CHECK_STR(s->prompt, "File {{path}}:\n{{file}}\n");
	CHECK_INT(s->prompt_pos.line, 30);
	CHECK_INT(s->prompt_pos.col, 3);
	CHECK_INT(s->edit_format, SL_FORMAT_SEARCH_REPLACE);
	CHECK_INT(s->attempts, 5);
	CHECK_INT(s->ngates, 2);
	if (s->ngates == 2) {
		CHECK_STR(s->gates[0].name, "build");
		CHECK_STR(s->gates[0].command, "make");
		CHECK_INT(s->gates[0].timeout_s, 120);
		CHECK_INT(s->gates[0].pos.line, 35);
		CHECK_STR(s->gates[1].name, "test");
		CHECK_STR(s->gates[1].command, "make test");
		CHECK_INT(s->gates[1].timeout_s, 600);
	}
	CHECK_STR(s->branch_prefix, "sluice/greet-v2");
	sl_spec_free(s);
	free(path);
}

static void test_defaults(void)
{
	sl_spec *s = load_ok(BASE "gates:\n  - name: build\n    command: make\n", NULL);

	if (!s)
		return;
	CHECK_STR(s->base, "HEAD");
	CHECK(s->scratch == NULL);
	CHECK_INT(s->paths.n, 0);
	CHECK(s->capture == NULL);
	CHECK_STR(s->unit, "capture");
	CHECK_INT(s->attempts, 3);
	CHECK_INT(s->edit_format, SL_FORMAT_UDIFF);
	CHECK_INT(s->provider, SL_PROVIDER_RULES);
	CHECK(s->temperature < 0);
	CHECK_INT(s->max_tokens, 0);
	CHECK_INT(s->provider_timeout_s, 300);
	CHECK(s->base_url == NULL && s->model == NULL && s->command == NULL);
	CHECK(s->instructions == NULL && s->prompt == NULL);
	CHECK_INT(s->prompt_pos.line, 0);
	CHECK_STR(s->branch_prefix, "sluice/t");
	CHECK_INT(s->ngates, 1);
	if (s->ngates == 1)
		CHECK_INT(s->gates[0].timeout_s, 600);
	CHECK_INT(s->query_block, 0);
	sl_spec_free(s);
}

/* generate: act and its session's budgets; reply and the defaults otherwise. */
static void test_session(void)
{
	sl_spec *s = load_ok(BASE "generate: act\nsession: {steps: 5, max_tokens: 900, "
			     "step_timeout: 7, timeout: 70, output_bytes: 400, on_budget: gate}\n"
			     "gates: [{name: b, command: make}]\n",
			     NULL);

	if (s) {
		CHECK_INT(s->session.mode, SL_GENERATE_ACT);
		CHECK_INT(s->session.steps, 5);
		CHECK_INT(s->session.max_tokens, 900);
		CHECK_INT(s->session.step_timeout_s, 7);
		CHECK_INT(s->session.timeout_s, 70);
		CHECK_INT(s->session.output_bytes, 400);
		CHECK_INT(s->session.on_budget, SL_SESSION_GATE);
		sl_spec_free(s);
	}
	if ((s = load_ok(BASE "generate: act\ngates: [{name: b, command: make}]\n", NULL))) {
		CHECK_INT(s->session.steps, 30);
		CHECK_INT(s->session.step_timeout_s, 60);
		CHECK_INT(s->session.timeout_s, 900);
		CHECK_INT(s->session.output_bytes, 8000);
		CHECK_INT(s->session.on_budget, SL_SESSION_DROP);
		sl_spec_free(s);
	}
	if ((s = load_ok(BASE, NULL))) {
		CHECK_INT(s->session.mode, SL_GENERATE_REPLY);
		sl_spec_free(s);
	}
}

/* expect defaults to pass; goal: fix makes test gates (only) expect fix. */
static void test_expectations(void)
{
	sl_spec *s = load_ok(BASE "goal: fix\ngates:\n"
			     "  - {name: build, command: make}\n"
			     "  - {name: t1, kind: test, command: make check, format: tap}\n"
			     "  - {name: t2, kind: test, command: make check, expect: pass}\n"
			     "  - {name: lint, command: make lint, allow_skip: true}\n", NULL);

	if (!s)
		return;
	CHECK_INT(s->goal_fix, 1);
	CHECK_INT((int)s->ngates, 4);
	if (s->ngates == 4) {
		CHECK_INT(s->gates[0].expect, SL_EXPECT_PASS);
		CHECK_INT(s->gates[1].expect, SL_EXPECT_FIX);
		CHECK_INT(s->gates[2].expect, SL_EXPECT_PASS);
		CHECK_INT(s->gates[3].expect, SL_EXPECT_PASS);
		CHECK_INT(s->gates[0].allow_skip, 0);
		CHECK_INT(s->gates[3].allow_skip, 1);
	}
	sl_spec_free(s);
	s = load_ok(BASE "gates:\n  - {name: t, kind: test, command: x, format: ctest}\n"
		    "  - {name: a, kind: test, command: x, format: automake, must_fix: [t1]}\n",
		    NULL);
	if (!s)
		return;
	CHECK_INT(s->goal_fix, 0);
	CHECK_INT(s->gates[0].expect, SL_EXPECT_PASS);
	CHECK_INT(s->gates[0].format, SL_REPORT_CTEST);
	CHECK_INT(s->gates[1].format, SL_REPORT_AUTOMAKE);
	sl_spec_free(s);
}

static const char fix_gate[] = "provider: {kind: command, command: x}\n"
	"gates:\n  - {name: a, kind: finding-gone, command: x, format: gcc}\n";

/* A fix campaign whose targets section ends with tail; NULL when it does not load. */
static sl_spec *fix_spec(const char *tail)
{
	sl_buf b = SL_BUF_INIT;
	sl_spec *s;

	sl_buf_addf(&b, "name: t\nrepository: r\nkind: fix\ntargets:\n%s%s", tail, fix_gate);
	s = load_ok(b.buf, NULL);
	sl_buf_release(&b);
	return s;
}

/* kind fix without a query: the language's functions, unit function. */
static void test_fix_default_query(void)
{
	static const struct { const char *tail, *query, *unit; int is_default, format; } ok[] = {
		{ "  language: go\n", "[(function_declaration) (method_declaration)] @unit",
		  "function", 1, SL_FORMAT_NODE },
		{ "  language: c\n  unit: file\n", "(function_definition) @unit", "file", 1,
		  SL_FORMAT_UDIFF },
		{ "  language: c\n  query: (call_expression) @c\n", "(call_expression) @c",
		  "capture", 0, SL_FORMAT_UDIFF },
	};
	sl_buf b = SL_BUF_INIT;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		sl_spec *s = fix_spec(ok[i].tail);

		if (!s)
			continue;
		CHECK_STR(s->query, ok[i].query);
		CHECK_INT(s->query_default, ok[i].is_default);
		CHECK_STR(s->unit, ok[i].unit);
		CHECK_INT(s->edit_format, ok[i].format);
		sl_spec_free(s);
	}
	sl_buf_addf(&b, "name: t\nrepository: r\nkind: fix\ntargets:\n  language: json\n%s",
		    fix_gate);
	EXPECT_ERROR(b.buf, "5:3: a fix campaign on json needs a 'query' in 'targets': "
		     "the language has no functions to default to");
	sl_buf_reset(&b);
	sl_buf_addf(&b, "name: t\nrepository: r\nkind: fix\ntargets:\n  language: cobol\n%s",
		    fix_gate);
	EXPECT_ERROR(b.buf, "5:13: unknown language 'cobol' (known: c, cpp, python, javascript, "
		     "typescript, tsx, go, java, rust, bash, json)");
	EXPECT_ERROR("name: t\nrepository: r\nkind: testgen\ntest_paths: [t.c]\n"
		     "targets:\n  language: c\n", "6:3: missing required field 'query' in 'targets'");
	sl_buf_release(&b);
}

static void test_paths_single_string(void)
{
	sl_spec *s = load_ok("name: t\nrepository: r\nrules: [{capture: c, template: x}]\n"
			     "targets:\n  language: c\n  query: q\n  paths: 'src/*.c'\n", NULL);

	if (!s)
		return;
	CHECK_INT(s->paths.n, 1);
	if (s->paths.n == 1) {
		CHECK_STR(s->paths.v[0], "src/*.c");
		CHECK(s->paths.v[1] == NULL);
	}
	sl_spec_free(s);
}

/*
 * A gate command with a pipe is kept; where there is no bash for pipefail
 * (SLUICE_TEST_NO_BASH=1 stands for such a machine) it gets a warning naming
 * where it is, and "||" or a quoted '|' none.
 */
static void test_pipe_warning(void)
{
	static const char text[] = BASE "gates:\n"
		"  - {name: build, command: make 2>&1 | tail -20}\n"     /* 10 */
		"  - {name: test, command: \"make check || echo '|'\"}\n";
	sl_spec *s;
	char *path = NULL;
	sl_buf want = SL_BUF_INIT;

	if ((s = load_ok(text, NULL))) {
		CHECK_INT(s->warnings.n, 0);
		CHECK_STR(s->gates[0].command, "make 2>&1 | tail -20");
		sl_spec_free(s);
	}
	setenv("SLUICE_TEST_NO_BASH", "1", 1);
	if ((s = load_ok(text, &path))) {
		sl_buf_addf(&want, "%s:10:28: warning: gate 'build': its command's status is the "
			    "last stage of its pipeline, so a failure before a '|' passes (no "
			    "/bin/bash here to run it with pipefail)", path);
		CHECK_INT(s->warnings.n, 1);
		if (s->warnings.n == 1)
			CHECK_STR(s->warnings.v[0], want.buf);
		sl_spec_free(s);
	}
	unsetenv("SLUICE_TEST_NO_BASH");
	sl_buf_release(&want);
	free(path);
}

/* Number-looking plain scalars are strings where a string is wanted; nulls are "not set". */
static void test_scalars_and_nulls(void)
{
	sl_spec *s = load_ok("name: 2024\nrepository: 1.5\nbase: 7\nscratch: ~\n"
			     "targets: {language: c, query: q, capture: null}\n"
			     "rules: [{capture: c, template: x}]\nprovider:\ngates:\n", NULL);

	if (!s)
		return;
	CHECK_STR(s->name, "2024");
	CHECK_STR(s->repository, "1.5");
	CHECK_STR(s->base, "7");
	CHECK(s->scratch == NULL);
	CHECK(s->capture == NULL);
	CHECK_INT(s->provider, SL_PROVIDER_RULES);
	CHECK_INT(s->ngates, 0);
	CHECK_STR(s->branch_prefix, "sluice/2024");
	sl_spec_free(s);
}

static void test_dir_and_missing_file(void)
{
	sl_spec *s = NULL;
	sl_err err = SL_ERR_INIT;
	char cwd[4096];
	FILE *f;

	sl_spec_free(NULL);
	CHECK_INT(sl_spec_load(&s, "/nonexistent/spec.yaml", &err), SL_ENOTFOUND);
	CHECK(s == NULL);
	CHECK(strstr(err.msg, "/nonexistent/spec.yaml") != NULL);

	/* a bare file name lives in "." */
	if (!getcwd(cwd, sizeof(cwd)) || chdir(tmpdir)) {
		CHECK(!"cannot enter the test directory");
		return;
	}
	f = fopen("bare.yaml", "w");
	CHECK(f != NULL);
	if (f) {
		fputs(BASE, f);
		fclose(f);
		sl_err_clear(&err);
		CHECK_INT(sl_spec_load(&s, "bare.yaml", &err), 0);
		if (s) {
			CHECK_STR(s->path, "bare.yaml");
			CHECK_STR(s->dir, ".");
		}
		sl_spec_free(s);
		s = NULL;
	}
	CHECK_INT(chdir(cwd), 0);
}

/* --repo stands in for a missing `repository:`; the file's own wins otherwise. */
static void test_repository_override(void)
{
	static const char no_repo[] = "name: t\ntargets: {language: c, query: q}\n"
		"rules: [{capture: c, template: x}]\n";
	sl_spec_opts so = SL_SPEC_OPTS_INIT;
	sl_err err = SL_ERR_INIT;
	sl_spec *s = NULL;
	char *path = write_spec(no_repo, strlen(no_repo));
	sl_buf want = SL_BUF_INIT;

	so.repository = "/elsewhere/repo";
	CHECK_INT(sl_spec_load_ext(&s, path, &so, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK(s && s->repository == NULL);
	sl_spec_free(s);
	s = NULL;

	CHECK_INT(sl_spec_load_ext(&s, path, NULL, &err), SL_EINPUT);
	sl_buf_addf(&want, "%s:1:1: missing required field 'repository'", path);
	CHECK_STR(err.msg, want.buf);
	CHECK(s == NULL);
	free(path);

	sl_err_clear(&err);
	path = write_spec(BASE, strlen(BASE));
	CHECK_INT(sl_spec_load_ext(&s, path, &so, &err), 0);
	CHECK(s && s->repository && !strcmp(s->repository, "r"));
	sl_spec_free(s);
	sl_buf_release(&want);
	free(path);
}

static void test_errors(void)
{
	/* structure */
	EXPECT_ERROR("", "1:1: empty file");
	EXPECT_ERROR("# only a comment\n\n", "1:1: empty file");
	EXPECT_ERROR("- a\n- b\n", "1:1: expected a mapping at the top level");
	EXPECT_ERROR("just text\n", "1:1: expected a mapping at the top level");
	EXPECT_ERROR(BASE "---\nname: u\n", "9:1: multiple YAML documents are not supported");
	EXPECT_ERROR(BASE "base: &b main\n", "9:7: anchors and aliases are not supported");
	EXPECT_ERROR(BASE "base: *b\n", "9:7: anchors and aliases are not supported");
	EXPECT_ERROR(BASE "base: !!str main\n", "9:7: tags are not supported");

	/* invalid YAML */
	EXPECT_ERROR("name: t\nrepository: [r\n",
		     "3:1: invalid YAML: did not find expected ',' or ']' "
		     "(while parsing a flow sequence at line 2, column 13)");
	EXPECT_ERROR("a: b\n c: d\n", "2:3: invalid YAML: mapping values are not allowed in this context");
	expect_error_at(__LINE__, "name: t\xff\n", 8, "1:8: invalid YAML: invalid leading UTF-8 octet");

	/* keys */
	EXPECT_ERROR(BASE "colour: red\n", "9:1: unknown key 'colour'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets:\n  language: c\n  query: q\n  lang: c\n",
		     "6:3: unknown key 'lang' in 'targets'");
	EXPECT_ERROR(BASE "review: {prefix: x}\n", "9:10: unknown key 'prefix' in 'review'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: q}\n"
		     "rules:\n  - capture: c\n    template: x\n    tmpl: y\n",
		     "7:5: unknown key 'tmpl' in 'rules'");
	EXPECT_ERROR(BASE "name: u\n", "9:1: duplicate key 'name'");

	/* an unknown key near a known one of its mapping: at most two edits and a third */
	EXPECT_ERROR(BASE "attemps: 3\n", "9:1: unknown key 'attemps'; did you mean 'attempts'?");
	EXPECT_ERROR(BASE "nmae: x\n", "9:1: unknown key 'nmae'; did you mean 'name'?");
	EXPECT_ERROR(BASE "jail: {memroy_mb: 1}\n",
		     "9:8: unknown key 'memroy_mb' in 'jail'; did you mean 'memory_mb'?");
	EXPECT_ERROR(BASE "gates:\n  - {name: b, command: make, timeot: 5}\n",
		     "10:30: unknown key 'timeot' in 'gates'; did you mean 'timeout'?");
	EXPECT_ERROR(BASE "review: {grop: file}\n",
		     "9:10: unknown key 'grop' in 'review'; did you mean 'group'?");
	EXPECT_ERROR(BASE "kindd: fix\n", "9:1: unknown key 'kindd'; did you mean 'kind'?");
	EXPECT_ERROR(BASE "jb: 1\n", "9:1: unknown key 'jb'");
	EXPECT_ERROR(BASE "attmp: 3\n", "9:1: unknown key 'attmp'");
	EXPECT_ERROR(BASE "budget: {max_token: 5}\n",
		     "9:10: unknown key 'max_token' in 'budget'; did you mean 'max_tokens'?");
	EXPECT_ERROR(BASE "provider: {kind: rules, kind: openai}\n",
		     "9:25: duplicate key 'kind' in 'provider'");
	EXPECT_ERROR(BASE "[a]: b\n", "9:1: expected a string key");

	/* types */
	EXPECT_ERROR(BASE "attempts: [1]\n", "9:11: expected an integer for 'attempts'");
	EXPECT_ERROR(BASE "attempts: 3x\n", "9:11: expected an integer for 'attempts'");
	EXPECT_ERROR(BASE "attempts: 1e3\n", "9:11: expected an integer for 'attempts'");
	EXPECT_ERROR(BASE "attempts: '3'\n", "9:11: expected an integer for 'attempts'");
	EXPECT_ERROR(BASE "attempts: 03\n", "9:11: expected an integer for 'attempts'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets:\n  language: [c]\n  query: q\n",
		     "4:13: expected a string for 'language' in 'targets'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: c\n", "3:10: expected a mapping for 'targets'");
	EXPECT_ERROR(BASE "gates: {build: make}\n", "9:8: expected a sequence for 'gates'");
	EXPECT_ERROR(BASE "gates: [make]\n", "9:9: expected a mapping for an entry of 'gates'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: q, paths: [a, [b]]}\n",
		     "3:45: expected a string for an entry of 'paths'");
	EXPECT_ERROR(BASE "provider: {temperature: warm}\n",
		     "9:25: expected a number for 'temperature' in 'provider'");
	EXPECT_ERROR(BASE "name: {a: b}\n", "9:1: duplicate key 'name'");
	EXPECT_ERROR("name: {a: b}\n", "1:7: expected a string for 'name'");

	/* required fields */
	EXPECT_ERROR("repository: r\ntargets: {language: c, query: q}\n",
		     "1:1: missing required field 'name'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets:\n  language: c\n  paths: '*.c'\n",
		     "4:3: missing required field 'query' in 'targets'");
	EXPECT_ERROR("name: t\ntargets: {language: c, query: q}\n",
		     "1:1: missing required field 'repository'");
	EXPECT_ERROR("name: t\nrepository: r\n", "1:1: missing required field 'targets'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: q}\n"
		     "rules:\n  - capture: c\n",
		     "5:5: missing required field 'template' in 'rules'");
	EXPECT_ERROR(BASE "gates:\n  - name: build\n",
		     "10:5: missing required field 'command' in 'gates'");

	/* values */
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: q, unit: fn}\n",
		     "3:40: 'unit' must be one of: capture, statement, function, class, file");
	EXPECT_ERROR(BASE "edit_format: diff\n", "9:14: 'edit_format' must be one of: udiff, search-replace, node");
	EXPECT_ERROR(BASE "generate: agent\n", "9:11: 'generate' must be one of: reply, act");
	EXPECT_ERROR(BASE "session: {steps: 3}\n", "9:10: 'session' belongs to 'generate: act'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: \"(x)\"}\n"
		     "generate: act\n", "4:11: 'generate: act' needs a gate that runs in the jail: "
		     "the session works over the warm base the gates use");
	EXPECT_ERROR(BASE "generate: act\nsession: {steps: 0}\ngates: [{name: b, command: make}]\n",
		     "10:18: 'steps' must be between 1 and 1000");
	EXPECT_ERROR(BASE "generate: act\nsession: {on_budget: keep}\ngates: [{name: b, command: make}]\n",
		     "10:22: 'on_budget' must be one of: drop, gate");
	EXPECT_ERROR(BASE "generate: act\nsession: {stepz: 3}\ngates: [{name: b, command: make}]\n",
		     "10:11: unknown key 'stepz' in 'session'; did you mean 'steps'?");
	EXPECT_ERROR(BASE "provider:\n  kind: claude\n",
		     "10:9: 'kind' must be one of: rules, openai, command, anthropic, replay");
	EXPECT_ERROR(BASE "attempts: 0\n", "9:11: 'attempts' must be between 1 and 100");
	EXPECT_ERROR(BASE "attempts: 101\n", "9:11: 'attempts' must be between 1 and 100");
	EXPECT_ERROR(BASE "attempts: -1\n", "9:11: 'attempts' must be between 1 and 100");
	EXPECT_ERROR(BASE "provider: {max_tokens: 0}\n", "9:24: 'max_tokens' must be a positive integer");
	EXPECT_ERROR(BASE "gates:\n  - {name: b, command: make, timeout: -5}\n",
		     "10:39: 'timeout' must be a positive integer");
	EXPECT_ERROR(BASE "provider: {temperature: 2.5}\n", "9:25: 'temperature' must be between 0 and 2");
	EXPECT_ERROR(BASE "gates:\n  - {name: s, kind: static, command: x, format: junit}\n",
		     "10:49: 'format' of a static gate must be gcc, gcc-json or sarif");
	EXPECT_ERROR(BASE "gates:\n  - {name: c, kind: coverage, command: x, format: gcov-jsonx}\n",
		     "10:51: 'format' of a coverage gate must be lcov, gcov or gcov-json");
	EXPECT_ERROR(BASE "gates:\n  - {name: b, kind: build, command: x, format: gcc}\n",
		     "10:48: 'format' of a build gate must be left out (this kind reads no report)");
	EXPECT_ERROR(BASE "gates:\n  - {name: s, kind: static, command: x, format: gcc, fail_on: note}\n",
		     "10:63: 'fail_on' must be warning or error");
	EXPECT_ERROR("name: greet v2\nrepository: r\ntargets: {language: c, query: q}\n",
		     "1:7: invalid name 'greet v2': use only A-Z, a-z, 0-9, '.', '_' and '-'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: ''}\n",
		     "3:31: 'query' must not be empty");
	EXPECT_ERROR(BASE "gates:\n  - name: build\n    command: make\n  - name: build\n    command: make -k\n",
		     "12:11: duplicate gate name 'build'");
	EXPECT_ERROR(BASE "gates:\n  - name: 'a/b'\n    command: make\n",
		     "10:11: invalid gate name 'a/b': use only A-Z, a-z, 0-9, '.', '_' and '-'");
	EXPECT_ERROR(BASE "base: --upload-pack=x\n", "9:7: 'base' must not start with '-'");

	/* provider */
	EXPECT_ERROR(BASE "provider:\n  kind: openai\n  base_url: http://127.0.0.1:1/v1\n",
		     "10:3: missing required field 'model' in 'provider'");
	EXPECT_ERROR(BASE "provider:\n  kind: openai\n  model: m\n",
		     "10:3: missing required field 'base_url' in 'provider'");
	EXPECT_ERROR(BASE "provider: {kind: command}\n",
		     "9:11: missing required field 'command' in 'provider'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: q}\n",
		     "1:1: the 'rules' provider needs at least one entry in 'rules'");
	EXPECT_ERROR("name: t\nrepository: r\ntargets: {language: c, query: q}\nrules: []\n"
		     "provider:\n  kind: rules\n",
		     "6:3: the 'rules' provider needs at least one entry in 'rules'");
	EXPECT_ERROR(BASE "provider:\n  api_key_env: sk-secret123\n",
		     "10:16: 'api_key_env' must be the name of an environment variable "
		     "(letters, digits and '_'), not the key itself");
	EXPECT_ERROR(BASE "provider: {base_url: 127.0.0.1:8080}\n",
		     "9:22: 'base_url' must be an http:// or https:// URL with a host, "
		     "not '127.0.0.1:8080'");
	EXPECT_ERROR(BASE "review:\n  forge: github\n  project: o/r\n  token_env: T\n"
		     "  api_url: file:///etc\n",
		     "13:12: 'api_url' must be an http:// or https:// URL with a host, "
		     "not 'file:///etc'");
	EXPECT_ERROR(BASE "provider: {kind: rules, base_url: \"https:///x\"}\n",
		     "9:35: 'base_url' must be an http:// or https:// URL with a host, "
		     "not 'https:///x'");

	/* branch prefix */
	EXPECT_ERROR(BASE "review:\n  branch_prefix: sluice/a..b\n",
		     "10:18: invalid branch prefix 'sluice/a..b': it must not contain '..'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: 'sluice/a b'\n",
		     "10:18: invalid branch prefix 'sluice/a b': use only A-Z, a-z, 0-9, "
		     "'.', '_', '-' and '/'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: /sluice\n",
		     "10:18: invalid branch prefix '/sluice': it must not start or end with '/'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: sluice/\n",
		     "10:18: invalid branch prefix 'sluice/': it must not start or end with '/'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: a//b\n",
		     "10:18: invalid branch prefix 'a//b': it must not contain '//'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: sluice/x.lock\n",
		     "10:18: invalid branch prefix 'sluice/x.lock': a component must not end with '.lock'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: a.lock/b\n",
		     "10:18: invalid branch prefix 'a.lock/b': a component must not end with '.lock'");
	EXPECT_ERROR(BASE "review:\n  branch_prefix: a/.b\n",
		     "10:18: invalid branch prefix 'a/.b': a component must not start with '.'");
	EXPECT_ERROR("name: .hidden\nrepository: r\ntargets: {language: c, query: q}\n"
		     "rules: [{capture: c, template: x}]\n",
		     "1:7: invalid branch prefix 'sluice/.hidden' made from 'name': a component "
		     "must not start with '.' (set 'branch_prefix' in 'review')");
}

static void test_errors_sanitize_and_size(void)
{
	size_t big = (1u << 20) + 1;
	char *text = malloc(big);

	/* control characters in an echoed key are not sent to the terminal */
	EXPECT_ERROR(BASE "\"a\\e[31mb\": x\n", "9:1: unknown key 'a\\x1b[31mb'");
	EXPECT_ERROR(BASE "\"n\\0\": x\n", "9:1: unknown key 'n\\x00'");
	/* and shown on one line */
	EXPECT_ERROR(BASE "\"a\\nb\\tc\\r\": x\n", "9:1: unknown key 'a\\nb\\tc\\r'");
	EXPECT_ERROR(BASE "base: \"ma\\0in\"\n", "9:7: 'base' must not contain NUL characters");

	if (!text)
		return;
	memset(text, '#', big);
	text[big - 1] = '\n';
	expect_error_at(__LINE__, text, big, "1:1: file is larger than 1 MiB");
	/* exactly 1 MiB is allowed (here: a comment, then a valid spec) */
	memset(text, ' ', big);
	memcpy(text, "#", 1);
	text[(1u << 20) - strlen(BASE) - 1] = '\n';
	memcpy(text + (1u << 20) - strlen(BASE), BASE, strlen(BASE));
	{
		char *path = write_spec(text, 1u << 20);
		sl_spec *s = NULL;
		sl_err err = SL_ERR_INIT;

		CHECK_INT(sl_spec_load(&s, path, &err), 0);
		CHECK_STR(err.msg, "");
		sl_spec_free(s);
		free(path);
	}
	free(text);

	/* deep nesting is refused rather than recursed into */
	{
		sl_buf deep = SL_BUF_INIT;
		int i;

		sl_buf_adds(&deep, BASE "instructions: ");
		for (i = 0; i < 40; i++)
			sl_buf_addch(&deep, '[');
		for (i = 0; i < 40; i++)
			sl_buf_addch(&deep, ']');
		sl_buf_addch(&deep, '\n');
		expect_error_at(__LINE__, deep.buf, deep.len, "9:46: nesting deeper than 32 levels");
		sl_buf_release(&deep);
	}
}

static void test_query_pos_block(void)
{
	static const char text[] =
		"name: q\n"                                    /* 1 */
		"repository: ../repo\n"                        /* 2 */
		"rules: [{capture: call, template: x}]\n"      /* 3 */
		"targets:\n"                                   /* 4 */
		"  language: c\n"                              /* 5 */
		"  query: |   # the query\n"                   /* 6 */
		"\n"                                           /* 7 */
		"    (call_expression\n"                       /* 8 */
		"      function: (identifier) @fn) @call\n";   /* 9 */
	sl_spec *s = load_ok(text, NULL);
	const char *q, *fn, *call;
	sl_pos p;

	if (!s)
		return;
	q = s->query;
	CHECK_STR(q, "\n(call_expression\n  function: (identifier) @fn) @call\n");
	CHECK_INT(s->query_block, 1);
	CHECK_INT(s->query_pos.line, 7);
	CHECK_INT(s->query_pos.col, 5);
	fn = strstr(q, "function");
	call = strstr(q, "@call");
	if (!fn || !call)
		goto done;

	p = sl_spec_query_pos(s, 0);
	CHECK_INT(p.line, 7);
	CHECK_INT(p.col, 5);
	p = sl_spec_query_pos(s, 1);                 /* "(call_expression" */
	CHECK_INT(p.line, 8);
	CHECK_INT(p.col, 5);
	p = sl_spec_query_pos(s, (uint32_t)(fn - q));
	CHECK_INT(p.line, 9);
	CHECK_INT(p.col, 7);
	p = sl_spec_query_pos(s, (uint32_t)(call - q));
	CHECK_INT(p.line, 9);
	CHECK_INT(p.col, 35);
	/* the file really has those characters there */
	CHECK(!strncmp(strstr(text, "      function") + 6, "function", 8));
	p = sl_spec_query_pos(s, 100000);            /* clamped to the end */
	CHECK_INT(p.line, 10);
	CHECK_INT(p.col, 5);
done:
	sl_spec_free(s);
}

static void test_query_pos_inline(void)
{
	sl_spec *s = load_ok("name: q\nrepository: r\nrules: [{capture: c, template: x}]\n"
			     "targets:\n  language: c\n  query: \"(identifier) @c\"\n", NULL);
	sl_pos p;

	if (!s)
		return;
	CHECK_INT(s->query_block, 0);
	CHECK_INT(s->query_pos.line, 6);
	CHECK_INT(s->query_pos.col, 11);
	p = sl_spec_query_pos(s, 13);                /* "@c" */
	CHECK_INT(p.line, 6);
	CHECK_INT(p.col, 24);
	sl_spec_free(s);

	/* a literal block with an indentation indicator and a more-indented first line */
	s = load_ok("name: q\nrepository: r\nrules: [{capture: c, template: x}]\n"
		    "targets:\n  language: c\n  query: |2\n     (x) @c\n    (y) @c\n", NULL);
	if (!s)
		return;
	CHECK_STR(s->query, " (x) @c\n(y) @c\n");
	CHECK_INT(s->query_pos.line, 7);
	CHECK_INT(s->query_pos.col, 5);
	p = sl_spec_query_pos(s, 1);
	CHECK_INT(p.col, 6);
	p = sl_spec_query_pos(s, 8);
	CHECK_INT(p.line, 8);
	CHECK_INT(p.col, 5);
	sl_spec_free(s);

	/* a folded block: its text is joined, its position is still the first content line */
	s = load_ok("name: q\nrepository: r\nrules: [{capture: c, template: x}]\n"
		    "targets:\n  language: c\n  query: >\n   (x)\n   @c\n", NULL);
	if (!s)
		return;
	CHECK_STR(s->query, "(x) @c\n");
	CHECK_INT(s->query_block, 1);
	CHECK_INT(s->query_pos.line, 7);
	CHECK_INT(s->query_pos.col, 4);
	sl_spec_free(s);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_spec.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(test_full_spec);
	RUN(test_defaults);
	RUN(test_session);
	RUN(test_expectations);
	RUN(test_fix_default_query);
	RUN(test_paths_single_string);
	RUN(test_pipe_warning);
	RUN(test_scalars_and_nulls);
	RUN(test_dir_and_missing_file);
	RUN(test_repository_override);
	RUN(test_errors);
	RUN(test_errors_sanitize_and_size);
	RUN(test_query_pos_block);
	RUN(test_query_pos_inline);
	sl_rm_rf(tmpdir, NULL);
	return unit_done();
}
