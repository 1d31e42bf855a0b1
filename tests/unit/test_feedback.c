/*
 * test_feedback.c - a failed gate's output trimmed for the model.
 *
 * tests/fixtures/gates/feedback/make-gcc12.out is real `make -k` output
 * (gcc 12) of the candidate whose diff is findings/calc.diff; the expected
 * feedback is make-gcc12.expect.  The other cases use the test-report
 * fixtures and synthetic logs.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/feedback.h"
#include "gates_fixtures.h"

static sl_changed calc_changes;

static void build_with_diff(sl_buf *got, const char *name, const sl_buf *in)
{
	sl_feedback_build(got, "build", "fail", in->buf, &calc_changes, NULL);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("feedback", "out", build_with_diff) >= 1);
}

static void test_tests_and_tail(void)
{
	sl_buf xml = SL_BUF_INIT, fb = SL_BUF_INIT, log = SL_BUF_INIT;
	sl_tests t;

	sl_tests_init(&t);
	CHECK_INT(sl_read_file(&xml, GATES_FIXTURES "/tests/surefire.xml", 0, NULL), 0);
	CHECK_INT(sl_tests_parse_junit(&t, xml.buf, xml.len, NULL), 0);
	sl_feedback_build(&fb, "unit", "fail", "[INFO] BUILD FAILURE\n", &calc_changes, &t);
	CHECK(!strncmp(fb.buf, "gate 'unit': fail\n4 tests: 1 passed, 1 failed, 1 errors, 1 skipped\n", 67));
	CHECK(strstr(fb.buf, "expected: <Infinity> but was: <NaN>") != NULL);
	CHECK(strstr(fb.buf, "last lines") == NULL);
	sl_tests_release(&t);

	/* Nothing parses: the tail of a 1 MiB log, cut at a line start, capped. */
	for (int i = 0; i < 20000; i++)
		sl_buf_addf(&log, "step %d of the build script printed something long enough\n", i);
	sl_buf_adds(&log, "FATAL: the last line");
	sl_buf_reset(&fb);
	sl_feedback_build(&fb, "custom", "timeout", log.buf, NULL, NULL);
	CHECK(fb.len <= SL_FEEDBACK_CAP);
	CHECK(fb.len > SL_FEEDBACK_CAP - 200);
	CHECK(!strncmp(fb.buf, "gate 'custom': timeout\nlast lines of the output:\nstep ", 53));
	CHECK(strstr(fb.buf, "FATAL: the last line\n") != NULL);

	/* Empty and NULL output. */
	sl_buf_reset(&fb);
	sl_feedback_build(&fb, NULL, NULL, NULL, NULL, NULL);
	CHECK_STR(fb.buf, "gate '?': fail\nlast lines of the output:\n");
	sl_buf_release(&xml);
	sl_buf_release(&fb);
	sl_buf_release(&log);
}

/* Thousands of diagnostics near the edit: still capped. */
static void test_cap(void)
{
	sl_buf log = SL_BUF_INIT, fb = SL_BUF_INIT;

	for (int i = 0; i < 5000; i++)
		sl_buf_addf(&log, "src/calc.c:25:%d: error: expected ';' before '}' token number %d\n", i + 1, i);
	sl_feedback_build(&fb, "build", "fail", log.buf, &calc_changes, NULL);
	CHECK(fb.len <= SL_FEEDBACK_CAP);
	CHECK(strstr(fb.buf, "diagnostics on or near your edits:\nsrc/calc.c:25:1: error:") != NULL);
	CHECK(strstr(fb.buf, "more findings\n") != NULL);
	sl_buf_release(&log);
	sl_buf_release(&fb);
}

int main(void)
{
	sl_buf d = SL_BUF_INIT;
	int rc;

	sl_changed_init(&calc_changes);
	if (sl_read_file(&d, GATES_FIXTURES "/findings/calc.diff", 0, NULL) ||
	    sl_changed_parse(&calc_changes, d.buf, d.len, NULL, NULL, NULL))
		return 1;
	RUN(test_fixtures);
	RUN(test_tests_and_tail);
	RUN(test_cap);
	rc = unit_done();
	sl_changed_release(&calc_changes);
	sl_buf_release(&d);
	return rc;
}
