/*
 * fuzz_testreport.c - the test-report parsers (validators/testreport.c):
 * every input is read as JUnit XML, TAP, automake results (as make check
 * output and as one .trs file) and ctest output, then each is summarised.
 */
#include "fuzz.h"
#include "validators/testreport.h"

int sl_fuzz_testreport(const uint8_t *data, size_t size);

static void check_summary(const sl_tests *t)
{
	sl_buf sum = SL_BUF_INIT;

	sl_tests_summary(t, &sum, 4096);
	FUZZ_CHECK(sum.len <= 4096 + 128);
	sl_buf_release(&sum);
}

int sl_fuzz_testreport(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	sl_tests t[5];
	sl_err err = SL_ERR_INIT;

	for (size_t i = 0; i < 5; i++)
		sl_tests_init(&t[i]);
	if (sl_tests_parse_junit(&t[0], text, size, &err))
		FUZZ_CHECK(err.code == SL_EINPUT);
	sl_tests_parse_tap(&t[1], text, size);
	sl_tests_parse_automake(&t[2], text, size, NULL);
	sl_tests_parse_automake(&t[3], text, size, "fuzz.trs");
	sl_err_clear(&err);
	if (sl_tests_parse_ctest(&t[4], text, size, &err))
		FUZZ_CHECK(err.code == SL_EINPUT);
	for (size_t i = 0; i < 5; i++) {
		check_summary(&t[i]);
		sl_tests_release(&t[i]);
	}
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_testreport)
