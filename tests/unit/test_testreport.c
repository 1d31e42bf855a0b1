/*
 * test_testreport.c - JUnit XML, TAP, automake and ctest to per-test results; regressions,
 * flaky tests and the feedback summary.
 *
 * Fixtures in tests/fixtures/gates/tests: node20-junit.xml and node20.tap
 * (node 20's --test-reporter junit and tap), ctest.xml (CTest
 * --output-junit), perl-test-more.tap (Test::More), sluice-unit.tap (our
 * own unit.h, one line flipped to "not ok") are real outputs made here;
 * surefire.xml, pytest.xml, go-junit-report.xml and gtest-nested.xml are
 * written in those tools' shapes; junit-file-line.xml has testcases placed by
 * their file and line attributes; hostile-* must be refused or harmless.
 * ctest-console.ctest is ctest 3.25's output here (every status it prints),
 * ctest-output-on-failure.ctest its --output-on-failure (a failed test's
 * output joins its message); ctest12-* are ctest 3.25's outputs for the
 * 12-test project ctest12.cmake (numbers padded to two digits): plain,
 * `-j2 --output-on-failure`, and `| tail -11` (only the summary blocks);
 * automake-*.am are written in automake 1.16's shapes (`make check` output
 * with colour, test-suite.log whose sections give the failures' messages,
 * grep -H over .trs files).
 * NAME.expect holds the dump below.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/testreport.h"
#include "gates_fixtures.h"

static void dump_tests(sl_buf *got, const sl_tests *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *m = t->v[i].message;

		sl_buf_addf(got, "%s %s\n", sl_test_result_name(t->v[i].result), t->v[i].id);
		while (m && *m) {
			const char *nl = strchr(m, '\n');
			size_t l = nl ? (size_t)(nl - m) : strlen(m);

			sl_buf_addf(got, "  | %.*s\n", (int)l, m);
			m += l + (nl != NULL);
		}
	}
	if (t->bailed_out)
		sl_buf_adds(got, "(bailed out)\n");
}

typedef int (*parse_fn)(sl_tests *out, const char *text, size_t len, sl_err *err);

static void dump_parsed(sl_buf *got, const sl_buf *in, parse_fn parse)
{
	sl_tests t;
	sl_err err = SL_ERR_INIT;

	sl_tests_init(&t);
	if (parse(&t, in->buf, in->len, &err))
		sl_buf_addf(got, "error: %s\n", err.msg);
	else
		dump_tests(got, &t);
	sl_tests_release(&t);
}

static void dump_junit(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_parsed(got, in, sl_tests_parse_junit);
}

static int parse_tap(sl_tests *out, const char *text, size_t len, sl_err *err)
{
	sl_tests_parse_tap(out, text, len);
	return 0;
}

static int parse_automake(sl_tests *out, const char *text, size_t len, sl_err *err)
{
	sl_tests_parse_automake(out, text, len, NULL);
	return 0;
}

static void dump_tap(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_parsed(got, in, parse_tap);
}

static void dump_automake(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_parsed(got, in, parse_automake);
}

static void dump_ctest(sl_buf *got, const char *name, const sl_buf *in)
{
	dump_parsed(got, in, sl_tests_parse_ctest);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("tests", "xml", dump_junit) >= 10);
	CHECK(fixture_run_all("tests", "tap", dump_tap) >= 6);
	CHECK(fixture_run_all("tests", "am", dump_automake) >= 3);
	CHECK(fixture_run_all("tests", "ctest", dump_ctest) >= 1);
}

/* One .trs file read as the report: its results take the file's name. */
static void test_automake_trs(void)
{
	static const char trs[] = ":test-result: PASS\n:test-result: FAIL\n"
		":global-test-result: FAIL\n:recheck: yes\n:copy-in-global-log: yes\n";
	static const char ok[] = ":test-result: XFAIL\n:test-result: PASS\n"
		":global-test-result: PASS\n";
	sl_tests t;

	sl_tests_init(&t);
	sl_tests_parse_automake(&t, trs, sizeof(trs) - 1, "tests/one");
	CHECK_INT((int)t.n, 1);
	CHECK_STR(t.v[0].id, "tests/one");
	CHECK_INT(t.v[0].result, SL_TEST_FAIL);
	sl_tests_release(&t);
	sl_tests_init(&t);
	sl_tests_parse_automake(&t, ok, sizeof(ok) - 1, "tests/two");
	CHECK_INT((int)t.n, 1);
	CHECK_INT(t.v[0].result, SL_TEST_PASS);
	CHECK_STR(t.v[0].message, "expected failure");
	sl_tests_release(&t);
	sl_tests_init(&t);
	sl_tests_parse_automake(&t, trs, sizeof(trs) - 1, NULL);
	CHECK_INT((int)t.n, 0);
	sl_tests_release(&t);
}

/* Half lines and look-alikes name no test; nothing reads past the text. */
static void test_report_edges(void)
{
	static const char *const am[] = { "PASS:", "PASS: ", "PASS:x", "PASSED: x", "# PASS:  4",
		"x.trs::test-result:", ".trs::test-result: PASS", "trs::test-result: PASS",
		":test-result: PASS", "FAIL: \033[0m", "\033[", "\033[0;32m" };
	static const char *const ct[] = { "Test #", "Test #1", "Test #1:", "Test #1: ***Failed",
		"1/1 Test #x: a ...   Passed", "Test #1: ... Passed", "Test #1: a ....",
		"Test #1:  ***", "Test #1: a ***", "Test  #", "Test   #1", "  1/120 Test   #1:",
		"Test  #1: ....   Passed", "The following tests FAILED:\n\t  3 - ",
		"The following tests FAILED:\n\t  3 - x (", "The following tests FAILED:\n 3 - x ()",
		"The following tests FAILED:\n 3 -  (Failed)", "The following tests FAILED:\n3 - (Failed)",
		"The following tests FAILED:\n\t  x - a (Failed)", "\t  3 - a (Failed)",
		"The following tests FAILED:\n\nx\n\t  3 - a (Failed)" };
	static const char two[] = "PASS: a\r\nFAIL: a\nPASS: b";
	sl_tests t;

	for (size_t i = 0; i < sizeof(am) / sizeof(am[0]); i++) {
		char *copy = sl_xstrdup(am[i]);   /* exact length: ASan sees any overread */

		sl_tests_init(&t);
		sl_tests_parse_automake(&t, copy, strlen(copy), NULL);
		if (t.n)
			fprintf(stderr, "automake '%s' gave '%s'\n", am[i], t.v[0].id);
		CHECK_INT((int)t.n, 0);
		sl_tests_release(&t);
		free(copy);
	}
	for (size_t i = 0; i < sizeof(ct) / sizeof(ct[0]); i++) {
		char *copy = sl_xstrdup(ct[i]);

		sl_tests_init(&t);
		CHECK_INT(sl_tests_parse_ctest(&t, copy, strlen(copy), NULL), 0);
		if (t.n)
			fprintf(stderr, "ctest '%s' gave '%s'\n", ct[i], t.v[0].id);
		CHECK_INT((int)t.n, 0);
		sl_tests_release(&t);
		free(copy);
	}
	sl_tests_init(&t);
	sl_tests_parse_automake(&t, two, sizeof(two) - 1, NULL);
	CHECK_INT((int)t.n, 2);
	if (t.n == 2) {
		CHECK_STR(t.v[0].id, "a");
		CHECK_INT(t.v[0].result, SL_TEST_FAIL);
		CHECK_STR(t.v[1].id, "b");
	}
	sl_tests_release(&t);
}

/*
 * ctest pads the numbers to the widest (a run of 120 tests: "  1/120 Test
 * #1:" with three spaces); the summary block names what the result lines
 * lost (output cut by `| tail`) and adds nothing they already gave.
 */
static void test_ctest_padding(void)
{
	static const char run[] =
		"        Start   1: first\n"
		"  1/120 Test   #1: first ..........   Passed    0.00 sec\n"
		"        Start  42: mid\n"
		" 42/120 Test  #42: mid ............***Failed    0.00 sec\n"
		"mid.c:3: no\n"
		"        Start 120: last\n"
		"120/120 Test #120: last ...........***Timeout   1.00 sec\n"
		"\n"
		"The following tests FAILED:\n"
		"\t 42 - mid (Failed)\n"
		"\t 77 - lost - cut (Subprocess aborted)\n"
		"\t120 - last (Timeout)\n"
		"Errors while running CTest\n"
		"\t 99 - after (Failed)\n";
	sl_buf got = SL_BUF_INIT;
	sl_tests t;

	sl_tests_init(&t);
	CHECK_INT(sl_tests_parse_ctest(&t, run, sizeof(run) - 1, NULL), 0);
	dump_tests(&got, &t);
	CHECK_STR(got.buf, "pass first\nfail mid\n  | mid.c:3: no\nerror last\n  | Timeout\n"
		  "error lost - cut\n  | Subprocess aborted\n");
	sl_tests_release(&t);
	sl_buf_release(&got);
}

/* ctest's JUnit goes through the JUnit reader. */
static void test_ctest_junit(void)
{
	{
		sl_buf b = SL_BUF_INIT, direct = SL_BUF_INIT, via = SL_BUF_INIT;
		sl_tests a, c;

		CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/tests/ctest.xml", 0, NULL), 0);
		sl_tests_init(&a);
		sl_tests_init(&c);
		CHECK_INT(sl_tests_parse_junit(&a, b.buf, b.len, NULL), 0);
		CHECK_INT(sl_tests_parse_ctest(&c, b.buf, b.len, NULL), 0);
		dump_tests(&direct, &a);
		dump_tests(&via, &c);
		CHECK(a.n > 0);
		CHECK_STR(via.buf, direct.buf);
		sl_tests_release(&a);
		sl_tests_release(&c);
		sl_buf_release(&b);
		sl_buf_release(&direct);
		sl_buf_release(&via);
	}
}

static void load(sl_tests *t, const char *name)
{
	sl_buf b = SL_BUF_INIT, p = SL_BUF_INIT;

	sl_buf_addf(&p, "%s/tests/%s", GATES_FIXTURES, name);
	CHECK_INT(sl_read_file(&b, p.buf, 0, NULL), 0);
	sl_tests_init(t);
	CHECK_INT(sl_tests_parse_junit(t, b.buf, b.len, NULL), 0);
	sl_buf_release(&b);
	sl_buf_release(&p);
}

/* The base passes a, b, c and skips d; the candidate breaks b, loses c. */
static void test_regressions(void)
{
	sl_tests base, cand, out;

	sl_tests_init(&base);
	sl_tests_init(&cand);
	sl_tests_init(&out);
	sl_tests_add(&base, "a", SL_TEST_PASS, NULL);
	sl_tests_add(&base, "b", SL_TEST_PASS, NULL);
	sl_tests_add(&base, "c", SL_TEST_PASS, NULL);
	sl_tests_add(&base, "d", SL_TEST_SKIP, NULL);
	sl_tests_add(&base, "e", SL_TEST_FAIL, "broken at base");
	sl_tests_add(&cand, "a", SL_TEST_PASS, NULL);
	sl_tests_add(&cand, "b", SL_TEST_ERROR, "boom");
	sl_tests_add(&cand, "d", SL_TEST_FAIL, NULL);
	sl_tests_add(&cand, "e", SL_TEST_FAIL, "still broken");
	sl_tests_add(&cand, "new", SL_TEST_FAIL, NULL);
	CHECK_INT(sl_tests_regressions(&base, &cand, &out), 2);
	CHECK_STR(out.v[0].id, "b");
	CHECK_INT(out.v[0].result, SL_TEST_ERROR);
	CHECK_STR(out.v[0].message, "boom");
	CHECK_STR(out.v[1].id, "c");
	CHECK_STR(out.v[1].message, "missing from the report");
	sl_tests_release(&out);
	CHECK_INT(sl_tests_regressions(&base, &base, &out), 0);
	sl_tests_release(&base);
	sl_tests_release(&cand);
	sl_tests_release(&out);
}

/* Two runs of the same tree: pass<->fail flips are flaky, skips are not. */
/*
 * Lookups by id in large sets (the index): every id found at its own entry,
 * a duplicate id finds the first one added, a set filled by hand is still
 * searched, and two 60,000-test reports compare test by test.
 */
static void test_find_many(void)
{
	sl_tests base, cand, reg, hand;
	sl_buf id = SL_BUF_INIT;
	size_t bad = 0;
	sl_test one[2] = { { "a", SL_TEST_PASS, NULL }, { "b", SL_TEST_FAIL, NULL } };

	sl_tests_init(&base);
	sl_tests_init(&cand);
	sl_tests_init(&reg);
	for (int i = 0; i < 60000; i++) {
		sl_buf_reset(&id);
		sl_buf_addf(&id, "suite.case_%d", i);
		sl_tests_add(&base, id.buf, SL_TEST_PASS, NULL);
		/* the candidate runs them backwards, every 1000th failing, the last 10 gone */
		sl_buf_reset(&id);
		sl_buf_addf(&id, "suite.case_%d", 59999 - i);
		if (i >= 10)
			sl_tests_add(&cand, id.buf, (59999 - i) % 1000 ? SL_TEST_PASS : SL_TEST_FAIL,
				     NULL);
	}
	for (int i = 0; i < 60000; i++) {
		const sl_test *t;

		sl_buf_reset(&id);
		sl_buf_addf(&id, "suite.case_%d", i);
		t = sl_tests_find(&base, id.buf);
		bad += t != &base.v[i];
	}
	CHECK_INT(bad, 0);
	CHECK(sl_tests_find(&base, "suite.case_60000") == NULL);
	CHECK(sl_tests_find(&base, "") == NULL);
	CHECK(sl_tests_find(&cand, "suite.case_59995") == NULL);
	/* failing: 0, 1000, ..., 59000; gone: case_59990..59999 */
	CHECK_INT(sl_tests_regressions(&base, &cand, &reg), 70);
	CHECK_STR(reg.v[1].id, "suite.case_1000");
	CHECK_STR(reg.v[69].id, "suite.case_59999");

	sl_tests_add(&base, "suite.case_7", SL_TEST_FAIL, "second");
	CHECK(sl_tests_find(&base, "suite.case_7") == &base.v[7]);

	hand.v = one;
	hand.n = hand.alloc = 2;
	hand.slot = NULL;
	hand.nslot = hand.indexed = 0;
	CHECK(sl_tests_find(&hand, "b") == &one[1]);
	CHECK(sl_tests_find(&hand, "c") == NULL);
	sl_tests_release(&base);
	sl_tests_release(&cand);
	sl_tests_release(&reg);
	sl_buf_release(&id);
}

static void test_flaky(void)
{
	sl_tests a, b, out;

	sl_tests_init(&a);
	sl_tests_init(&b);
	sl_tests_init(&out);
	sl_tests_add(&a, "steady", SL_TEST_PASS, NULL);
	sl_tests_add(&a, "flips", SL_TEST_PASS, NULL);
	sl_tests_add(&a, "flops", SL_TEST_ERROR, "timeout");
	sl_tests_add(&a, "skippy", SL_TEST_SKIP, NULL);
	sl_tests_add(&a, "broken", SL_TEST_FAIL, NULL);
	sl_tests_add(&a, "only-a", SL_TEST_PASS, NULL);
	sl_tests_add(&b, "steady", SL_TEST_PASS, NULL);
	sl_tests_add(&b, "flips", SL_TEST_FAIL, "race");
	sl_tests_add(&b, "flops", SL_TEST_PASS, NULL);
	sl_tests_add(&b, "skippy", SL_TEST_PASS, NULL);
	sl_tests_add(&b, "broken", SL_TEST_ERROR, NULL);
	CHECK_INT(sl_tests_flaky(&a, &b, &out), 2);
	CHECK_STR(out.v[0].id, "flips");
	CHECK_STR(out.v[0].message, "race");
	CHECK_STR(out.v[1].id, "flops");
	CHECK_STR(out.v[1].message, "timeout");
	sl_tests_release(&a);
	sl_tests_release(&b);
	sl_tests_release(&out);
}

static void test_summary(void)
{
	sl_tests t;
	sl_buf s = SL_BUF_INIT;

	load(&t, "surefire.xml");
	sl_tests_summary(&t, &s, 0);
	CHECK_STR(s.buf,
		  "4 tests: 1 passed, 1 failed, 1 errors, 1 skipped\n"
		  "fail: com.example.calc.CalculatorTest.dividesByZero\n"
		  "    expected: <Infinity> but was: <NaN>\n"
		  "    org.opentest4j.AssertionFailedError: expected: <Infinity> but was: <NaN>\n"
		  "    \tat org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)\n"
		  "    \tat com.example.calc.CalculatorTest.dividesByZero(CalculatorTest.java:31)\n"
		  "error: com.example.calc.CalculatorTest.parsesInput\n"
		  "    Cannot invoke \"String.trim()\" because \"s\" is null\n"
		  "    java.lang.NullPointerException: Cannot invoke \"String.trim()\" because \"s\" is null\n"
		  "    \tat com.example.calc.Parser.parse(Parser.java:12)\n");
	sl_tests_release(&t);

	/* 5000 failures with long messages: capped, and says how many were left. */
	sl_buf_reset(&s);
	sl_tests_init(&t);
	for (int i = 0; i < 5000; i++) {
		char id[32];

		snprintf(id, sizeof(id), "t%d", i);
		sl_tests_add(&t, id, SL_TEST_FAIL, "assertion failed: expected the answer to be 42 but it was 41");
	}
	sl_tests_summary(&t, &s, 4096);
	CHECK(s.len <= 4096 + 100);
	CHECK(strstr(s.buf, "more failing tests\n") != NULL);
	sl_tests_release(&t);
	sl_buf_release(&s);
}

static void test_hostile(void)
{
	sl_buf b = SL_BUF_INIT;
	sl_tests t;
	sl_err err = SL_ERR_INIT;
	int64_t t0 = sl_now_ms();

	/* Billion laughs: whatever libxml2 decides, nothing expands. */
	sl_tests_init(&t);
	CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/tests/hostile-billion-laughs.xml", 0, NULL), 0);
	(void)sl_tests_parse_junit(&t, b.buf, b.len, &err);
	for (size_t i = 0; i < t.n; i++)
		CHECK(strlen(t.v[i].id) < 100 && (!t.v[i].message || strlen(t.v[i].message) < 2048));
	CHECK(sl_now_ms() - t0 < 60000);    /* an expansion would not end */
	sl_tests_release(&t);

	/* External entities are never fetched: no passwd content anywhere. */
	sl_buf_reset(&b);
	CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/tests/hostile-xxe.xml", 0, NULL), 0);
	sl_err_clear(&err);
	if (!sl_tests_parse_junit(&t, b.buf, b.len, &err))
		for (size_t i = 0; i < t.n; i++)
			CHECK(!t.v[i].message || !strstr(t.v[i].message, "root:"));
	sl_tests_release(&t);

	/* Over the size cap: refused before parsing. */
	sl_buf_reset(&b);
	sl_buf_adds(&b, "<testsuite>");
	sl_buf_grow(&b, 33u << 20);
	memset(b.buf + b.len, ' ', 33u << 20);
	sl_buf_setlen(&b, b.len + (33u << 20));
	sl_err_clear(&err);
	CHECK_INT(sl_tests_parse_junit(&t, b.buf, b.len, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "limit") != NULL);

	/* A 1 MiB test name and message in TAP; a huge plan; binary junk. */
	sl_buf_reset(&b);
	sl_buf_adds(&b, "not ok 1 - ");
	sl_buf_grow(&b, 1u << 20);
	memset(b.buf + b.len, 'n', 1u << 20);
	sl_buf_setlen(&b, b.len + (1u << 20));
	sl_buf_adds(&b, "\n# why\n1..99999999999\n\x01\xff\x00ok\n");
	sl_tests_parse_tap(&t, b.buf, b.len);
	CHECK_INT(t.n, 1);
	CHECK_STR(t.n ? t.v[0].message : "", "why");
	sl_tests_release(&t);

	/* Deeply nested suites. */
	sl_buf_reset(&b);
	for (int i = 0; i < 200; i++)
		sl_buf_adds(&b, "<testsuite>");
	sl_buf_adds(&b, "<testcase name=\"deep\"/>");
	for (int i = 0; i < 200; i++)
		sl_buf_adds(&b, "</testsuite>");
	CHECK_INT(sl_tests_parse_junit(&t, b.buf, b.len, NULL), 0);
	CHECK_INT(t.n, 0);   /* below the 64 levels walked */
	sl_tests_release(&t);
	CHECK(sl_now_ms() - t0 < 5000);
	sl_buf_release(&b);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_automake_trs);
	RUN(test_ctest_junit);
	RUN(test_ctest_padding);
	RUN(test_report_edges);
	RUN(test_regressions);
	RUN(test_find_many);
	RUN(test_flaky);
	RUN(test_summary);
	RUN(test_hostile);
	return unit_done();
}
