/*
 * fuzz_coverage.c - the coverage parsers (validators/coverage.c): every
 * input is read as lcov and as gcov, then asked about a few regions.
 */
#include "validators/coverage.h"
#include "fuzz.h"

int sl_fuzz_coverage(const uint8_t *data, size_t size);

int sl_fuzz_coverage(const uint8_t *data, size_t size)
{
	sl_coverage lcov, gcov;

	sl_coverage_init(&lcov);
	sl_coverage_init(&gcov);
	sl_coverage_parse_lcov(&lcov, (const char *)data, size, NULL);
	sl_coverage_parse_gcov(&gcov, (const char *)data, size, "src/a.c", NULL);
	for (size_t i = 0; i < lcov.n && i < 8; i++)
		(void)sl_coverage_raised(&lcov, &gcov, lcov.files[i].path, 1, 100, NULL);
	(void)sl_coverage_raised(&gcov, &lcov, "src/a.c", 0, 4000000000u, NULL);
	for (size_t i = 0; i < gcov.n && i < 8; i++) {
		unsigned covered, total;

		if (!sl_coverage_of(&gcov, gcov.files[i].path, 1, 0, &covered, &total))
			FUZZ_CHECK(covered <= total);
	}
	sl_coverage_release(&lcov);
	sl_coverage_release(&gcov);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_coverage)
