/*
 * fuzz_testreport.c - the test-report parsers (validators/testreport.c):
 * every input is read as JUnit XML and as TAP, then summarised.
 */
#include "fuzz.h"
#include "validators/testreport.h"

int sl_fuzz_testreport(const uint8_t *data, size_t size);

int sl_fuzz_testreport(const uint8_t *data, size_t size)
{
	sl_tests junit, tap;
	sl_buf sum = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	sl_tests_init(&junit);
	sl_tests_init(&tap);
	if (sl_tests_parse_junit(&junit, (const char *)data, size, &err))
		FUZZ_CHECK(err.code == SL_EINPUT);
	sl_tests_parse_tap(&tap, (const char *)data, size);
	sl_tests_summary(&junit, &sum, 4096);
	FUZZ_CHECK(sum.len <= 4096 + 128);
	sl_buf_reset(&sum);
	sl_tests_summary(&tap, &sum, 4096);
	FUZZ_CHECK(sum.len <= 4096 + 128);
	sl_buf_release(&sum);
	sl_tests_release(&junit);
	sl_tests_release(&tap);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_testreport)
