/*
 * test_fuzz_regress.c - every fuzz harness (tests/fuzz/fuzz_*.c), built
 * with gcc and without libFuzzer, replays its seeds (tests/fuzz/seeds) and
 * every crash input once found (tests/fuzz/regress/NAME/), so `make test`
 * keeps each fixed crash fixed without clang.  A harness's own checks fail
 * the test; a crash or a hang fails the binary.
 */
#define SL_FUZZ_REPLAY 1

#include <glob.h>
#include <stdio.h>

#include "../fuzz/fuzz_apply.c"
#include "../fuzz/fuzz_coverage.c"
#include "../fuzz/fuzz_diff.c"
#include "../fuzz/fuzz_findings.c"
#include "../fuzz/fuzz_glob.c"
#include "../fuzz/fuzz_items.c"
#include "../fuzz/fuzz_policy.c"
#include "../fuzz/fuzz_query.c"
#include "../fuzz/fuzz_reply.c"
#include "../fuzz/fuzz_spec.c"
#include "../fuzz/fuzz_testreport.c"
#include "common/buf.h"
#include "common/util.h"

typedef int (*harness_fn)(const uint8_t *, size_t);

static const struct { const char *name; harness_fn fn; } harnesses[] = {
	{ "apply", sl_fuzz_apply }, { "coverage", sl_fuzz_coverage },
	{ "diff", sl_fuzz_diff }, { "findings", sl_fuzz_findings },
	{ "glob", sl_fuzz_glob }, { "items", sl_fuzz_items },
	{ "policy", sl_fuzz_policy },
	{ "query", sl_fuzz_query }, { "reply", sl_fuzz_reply },
	{ "spec", sl_fuzz_spec }, { "testreport", sl_fuzz_testreport },
};

/* Run fn on every file matching pattern; returns how many. */
static size_t replay_glob(harness_fn fn, const char *pattern)
{
	glob_t g;
	size_t n = 0;

	if (glob(pattern, 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		sl_buf b = SL_BUF_INIT;
		sl_err err = SL_ERR_INIT;

		if (sl_read_file(&b, g.gl_pathv[i], 1u << 20, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			unit_cur_failed = 1;
		} else {
			int before = unit_cur_failed;

			fn((const uint8_t *)b.buf, b.len);
			if (unit_cur_failed && !before)
				fprintf(stderr, "  (input: %s)\n", g.gl_pathv[i]);
			n++;
		}
		sl_buf_release(&b);
	}
	globfree(&g);
	return n;
}

/* The seed globs of name in tests/fuzz/seeds, space-separated, or "". */
static char *seed_globs(const char *name)
{
	sl_buf seeds = SL_BUF_INIT, out = SL_BUF_INIT;
	size_t nl = strlen(name);

	if (sl_read_file(&seeds, "tests/fuzz/seeds", 0, NULL))
		return sl_buf_detach(&out, NULL);
	for (char *line = seeds.buf; line && *line; ) {
		char *end = strchr(line, '\n');

		if (end)
			*end = '\0';
		if (!strncmp(line, name, nl) && line[nl] == ' ')
			sl_buf_adds(&out, line + nl);
		line = end ? end + 1 : NULL;
	}
	sl_buf_release(&seeds);
	return sl_buf_detach(&out, NULL);
}

static void replay(const char *name)
{
	char *globs, *save = NULL;
	size_t seeds = 0, regress, h = 0;
	sl_buf pat = SL_BUF_INIT;

	while (h < sizeof(harnesses) / sizeof(harnesses[0]) && strcmp(harnesses[h].name, name))
		h++;
	if (h == sizeof(harnesses) / sizeof(harnesses[0])) {
		CHECK(!"no such harness");
		return;
	}
	globs = seed_globs(name);
	for (char *g = strtok_r(globs, " ", &save); g; g = strtok_r(NULL, " ", &save))
		seeds += replay_glob(harnesses[h].fn, g);
	sl_buf_addf(&pat, "tests/fuzz/regress/%s/*", name);
	regress = replay_glob(harnesses[h].fn, pat.buf);
	printf("# %s: %zu seeds, %zu regressions\n", name, seeds, regress);
	CHECK(seeds > 0);
	sl_buf_release(&pat);
	free(globs);
}

static void test_apply(void) { replay("apply"); }
static void test_coverage(void) { replay("coverage"); }
static void test_diff(void) { replay("diff"); }
static void test_findings(void) { replay("findings"); }
static void test_glob(void) { replay("glob"); }
static void test_items(void) { replay("items"); }
static void test_policy(void) { replay("policy"); }
static void test_query(void) { replay("query"); }
static void test_reply(void) { replay("reply"); }
static void test_spec(void) { replay("spec"); }
static void test_testreport(void) { replay("testreport"); }

int main(void)
{
	RUN(test_apply);
	RUN(test_coverage);
	RUN(test_diff);
	RUN(test_findings);
	RUN(test_glob);
	RUN(test_items);
	RUN(test_policy);
	RUN(test_query);
	RUN(test_reply);
	RUN(test_spec);
	RUN(test_testreport);
	return unit_done();
}
