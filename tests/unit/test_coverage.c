/*
 * test_coverage.c - lcov and gcov parsing, region coverage, "raised".
 *
 * Fixtures in tests/fixtures/gates/coverage: gcov12-*.gcov are real
 * `gcov -t` outputs (gcc 12) of src/lib.c run by a base test and by a
 * candidate's better test; geninfo-*.info are the same runs written in
 * lcov's tracefile shape (lcov itself is not installed here), with the
 * jail's /src paths; merged-records.info and hostile-* check merging,
 * odd paths and junk.  NAME.expect is the dump below.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/coverage.h"
#include "gates_fixtures.h"

static void dump_cov(sl_buf *got, const sl_coverage *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const sl_cov_file *f = &c->files[i];
		unsigned cov, tot;

		sl_coverage_of(c, f->path, 0, 0, &cov, &tot);
		sl_buf_addf(got, "%s %u/%u:", f->path, cov, tot);
		for (size_t k = 0; k < f->n; k++)
			sl_buf_addf(got, " %u=%llu", f->v[k].line, (unsigned long long)f->v[k].count);
		sl_buf_addch(got, '\n');
	}
	if (c->truncated)
		sl_buf_adds(got, "(truncated)\n");
}

typedef int (*parse_fn)(sl_coverage *out, const char *text, size_t len, sl_err *err);

static int parse_gcov_text(sl_coverage *out, const char *text, size_t len, sl_err *err)
{
	return sl_coverage_parse_gcov(out, text, len, NULL, err);
}

static void dump_with(sl_buf *got, const sl_buf *in, parse_fn parse)
{
	sl_coverage c;
	sl_err err = SL_ERR_INIT;

	sl_coverage_init(&c);
	if (parse(&c, in->buf, in->len, &err))
		sl_buf_addf(got, "error: %s\n", err.msg);
	dump_cov(got, &c);
	sl_coverage_release(&c);
}

static void dump_lcov(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_with(got, in, sl_coverage_parse_lcov);
}

static void dump_gcov(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_with(got, in, parse_gcov_text);
}

static void dump_gcov_json(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_with(got, in, sl_coverage_parse_gcov_json);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("coverage", "info", dump_lcov) >= 4);
	CHECK(fixture_run_all("coverage", "gcov", dump_gcov) >= 3);
	CHECK(fixture_run_all("coverage", "gcovjson", dump_gcov_json) >= 2);
}

static void load(sl_coverage *c, const char *name)
{
	sl_buf b = SL_BUF_INIT, p = SL_BUF_INIT;
	size_t n = strlen(name);

	sl_buf_addf(&p, "%s/coverage/%s", GATES_FIXTURES, name);
	CHECK_INT(sl_read_file(&b, p.buf, 0, NULL), 0);
	sl_coverage_init(c);
	if (n > 5 && !strcmp(name + n - 5, ".gcov"))
		CHECK_INT(sl_coverage_parse_gcov(c, b.buf, b.len, NULL, NULL), 0);
	else
		CHECK_INT(sl_coverage_parse_lcov(c, b.buf, b.len, NULL), 0);
	sl_buf_release(&b);
	sl_buf_release(&p);
}

static void test_region_and_raised(void)
{
	static const char *pairs[][2] = {
		{ "gcov12-base.gcov", "gcov12-cand.gcov" },
		{ "geninfo-base.info", "geninfo-cand.info" },
	};

	for (size_t i = 0; i < 2; i++) {
		sl_coverage base, cand;
		sl_buf why = SL_BUF_INIT;
		unsigned cov, tot;

		load(&base, pairs[i][0]);
		load(&cand, pairs[i][1]);
		/* clamp() is lines 1-8: 4 of 6 executable lines at base, 6 of 6 after. */
		CHECK_INT(sl_coverage_of(&base, "src/lib.c", 1, 8, &cov, &tot), 0);
		CHECK_INT(cov, 4);
		CHECK_INT(tot, 6);
		CHECK_INT(sl_coverage_of(&cand, "/src/src/lib.c", 1, 8, &cov, &tot), 0);
		CHECK_INT(cov, 6);
		CHECK_INT(sl_coverage_raised(&base, &cand, "src/lib.c", 1, 8, &why), 1);
		CHECK_STR(why.buf, "covered lines in src/lib.c:1-8: 4/6 -> 6/6; whole file: 4/8 -> 6/8\n");
		/* never() (10-13) is not covered by either: not raised there... */
		CHECK_INT(sl_coverage_raised(&base, &cand, "src/lib.c", 10, 13, NULL), 1);
		/* ...which counts via the whole file; against itself nothing rises. */
		CHECK_INT(sl_coverage_raised(&cand, &cand, "src/lib.c", 1, 8, NULL), 0);
		CHECK_INT(sl_coverage_raised(&cand, &base, "src/lib.c", 1, 8, NULL), 0);
		CHECK_INT(sl_coverage_of(&cand, "nope.c", 1, 8, &cov, &tot), SL_ENOTFOUND);
		sl_buf_reset(&why);
		CHECK_INT(sl_coverage_raised(&base, &cand, "nope.c", 1, 8, &why), 0);
		CHECK(strstr(why.buf, "not in the candidate") != NULL);
		sl_coverage_release(&base);
		sl_coverage_release(&cand);
		sl_buf_release(&why);
	}
}

/* A file missing at base counts as nothing covered there. */
static void test_new_file(void)
{
	sl_coverage base, cand;

	load(&base, "geninfo-base.info");
	load(&cand, "geninfo-cand.info");
	CHECK_INT(sl_coverage_raised(&base, &cand, "tests/test_clamp.c", 1, 0, NULL), 1);
	sl_coverage_release(&base);
	sl_coverage_release(&cand);
}

static void test_caps(void)
{
	sl_buf b = SL_BUF_INIT;
	sl_coverage c;
	int64_t t0 = sl_now_ms();

	sl_coverage_init(&c);
	for (int i = 0; i < 12000; i++)
		sl_buf_addf(&b, "SF:f%d.c\nDA:1,1\nend_of_record\n", i);
	sl_buf_adds(&b, "SF:big.c\n");
	for (int i = 1; i <= 1100000; i++)
		sl_buf_addf(&b, "DA:%d,1\n", i);
	CHECK_INT(sl_coverage_parse_lcov(&c, b.buf, b.len, NULL), 0);
	CHECK_INT(c.n, 10000);
	CHECK(c.truncated);
	CHECK(c.lines <= 1000000);
	CHECK(sl_now_ms() - t0 < 60000);
	sl_coverage_release(&c);
	sl_buf_release(&b);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_region_and_raised);
	RUN(test_new_file);
	RUN(test_caps);
	return unit_done();
}
