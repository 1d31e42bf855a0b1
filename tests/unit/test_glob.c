/*
 * test_glob.c - sl_glob_match (common/util.c): a table of patterns and paths,
 * one segment against glibc's fnmatch(FNM_PERIOD) over many generated
 * patterns, and the hostile patterns that once took exponential time or
 * overflowed the stack (many "**", many '*', thousands of segments).
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "unit.h"

static const struct { const char *pat, *path; int want; } table[] = {
	{ "src/*.c", "src/a.c", 1 },
	{ "src/*.c", "src/a/b.c", 0 },
	{ "src/**/*.c", "src/a.c", 1 },
	{ "src/**/*.c", "src/a/b/c.c", 1 },
	{ "src/**/*.c", "lib/a.c", 0 },
	{ "src/**", "src/a/b.c", 1 },
	{ "src/**", "src/.hidden/x", 1 },
	{ "src/**", "src", 0 },
	{ "**", "a", 1 },
	{ "**/x.c", "x.c", 1 },
	{ "**/x.c", "a/b/x.c", 1 },
	{ "**/x.c", "a/b/y.c", 0 },
	{ "a/**/b", "a/b", 1 },
	{ "a/**/b", "a/x/y/b", 1 },
	{ "a/**/b", "a", 0 },
	{ "a/**/**/b", "a/b", 1 },
	{ "**/**", "a", 1 },
	{ "*", ".hidden", 0 },
	{ ".*", ".hidden", 1 },
	{ "?hidden", ".hidden", 0 },
	{ "[.]hidden", ".hidden", 0 },
	{ "*.c", "dir/x.c", 0 },
	{ "a*b*c", "axxbyyc", 1 },
	{ "a*b*c", "axxbyy", 0 },
	{ "[a-c]x", "bx", 1 },
	{ "[!a-c]x", "bx", 0 },
	{ "[]]x", "]x", 1 },
	{ "[[:digit:]]*", "7up", 1 },
	{ "[[:digit:]]*", "up", 0 },
	{ "\\*", "*", 1 },
	{ "\\*", "a", 0 },
	{ "[ab", "[ab", 1 },
	{ "a**b", "axyb", 1 },
	{ "a**b", "ax/yb", 0 },
	{ "", "", 1 },
	{ "a//b", "a//b", 1 },
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int got = sl_glob_match(table[i].pat, table[i].path);

		if (got != table[i].want)
			fprintf(stderr, "glob '%s' on '%s': got %d\n", table[i].pat, table[i].path, got);
		CHECK_INT(got, table[i].want);
	}
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 16) % n;
}

/* Within one segment the matcher agrees with fnmatch(FNM_PERIOD). */
static void test_against_fnmatch(void)
{
	static const char *const ptok[] = { "a", "b", ".", "*", "?", "[ab]", "[!a]", "[a-c]", "\\*" };
	static const char *const stok[] = { "a", "b", "c", ".", "*" };
	int bad = 0;

	for (int i = 0; i < 50000 && bad < 5; i++) {
		sl_buf pat = SL_BUF_INIT, path = SL_BUF_INIT;
		int np = (int)rnd(7), ns = (int)rnd(7), flags;

		for (int k = 0; k < np; k++)
			sl_buf_adds(&pat, ptok[rnd(sizeof(ptok) / sizeof(ptok[0]))]);
		for (int k = 0; k < ns; k++)
			sl_buf_adds(&path, stok[rnd(sizeof(stok) / sizeof(stok[0]))]);
		/*
		 * A whole-segment "**" is ours: it matches directories, dotted
		 * too.  FNM_PERIOD only where it matters: glibc 2.36 applies it
		 * to a '.' after the start after "*?" ("*?[!a]" misses "b.").
		 */
		flags = path.buf[0] == '.' ? FNM_PERIOD : 0;

		if (strcmp(pat.buf, "**") &&
		    sl_glob_match(pat.buf, path.buf) != !fnmatch(pat.buf, path.buf, flags)) {
			fprintf(stderr, "glob '%s' on '%s': %d, fnmatch says %d\n", pat.buf, path.buf,
				sl_glob_match(pat.buf, path.buf), !fnmatch(pat.buf, path.buf, flags));
			bad++;
		}
		sl_buf_release(&pat);
		sl_buf_release(&path);
	}
	CHECK_INT(bad, 0);
}

static char *repeat(const char *unit, size_t n, const char *tail)
{
	sl_buf b = SL_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		sl_buf_adds(&b, unit);
	sl_buf_adds(&b, tail);
	return sl_buf_detach(&b, NULL);
}

/*
 * Backtracking over every way to split 40 directories among 40 "**" took
 * C(80, 40) steps; thousands of segments overflowed the stack.  Each call
 * here would hang or crash the test with the recursive matcher.
 */
static void test_hostile(void)
{
	char *pat = repeat("**/", 40, "x"), *path = repeat("a/", 40, "y");
	char *stars = repeat("*a", 60, "b"), *name = repeat("a", 4000, "");
	char *deep_pat = repeat("a/", 20000, "b"), *deep_path = repeat("a/", 20000, "b");
	char *deep_star = repeat("*/", 20000, "b");

	CHECK_INT(sl_glob_match(pat, path), 0);
	path[strlen(path) - 1] = 'x';
	CHECK_INT(sl_glob_match(pat, path), 1);
	CHECK_INT(sl_glob_match(stars, name), 0);
	CHECK_INT(sl_glob_match(deep_pat, deep_path), 1);
	CHECK_INT(sl_glob_match(deep_star, deep_path), 1);
	deep_path[strlen(deep_path) - 1] = 'c';
	CHECK_INT(sl_glob_match(deep_star, deep_path), 0);
	free(pat);
	free(path);
	free(stars);
	free(name);
	free(deep_pat);
	free(deep_path);
	free(deep_star);
}

int main(void)
{
	RUN(test_table);
	RUN(test_against_fnmatch);
	RUN(test_hostile);
	return unit_done();
}
