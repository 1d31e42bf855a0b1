/*
 * test_review_forge.c - the forge client's spacing of mutating requests
 * (forge.h): the wait computed before a POST, PATCH, PUT or DELETE.
 */
#include "pipeline/review/forge.h"
#include "tests/unit/unit.h"

static void test_first_write_waits_nothing(void)
{
	CHECK_INT(sl_forge_write_wait_ms(-1, 5, 1000), 0);
	CHECK_INT(sl_forge_write_wait_ms(-1, 123456789, 1000), 0);
}

static void test_write_waits_the_rest_of_the_interval(void)
{
	CHECK_INT(sl_forge_write_wait_ms(5000, 5000, 1000), 1000);
	CHECK_INT(sl_forge_write_wait_ms(5000, 5200, 1000), 800);
	CHECK_INT(sl_forge_write_wait_ms(5000, 5999, 1000), 1);
	CHECK_INT(sl_forge_write_wait_ms(5000, 6000, 1000), 0);
	CHECK_INT(sl_forge_write_wait_ms(5000, 90000, 1000), 0);
	/* a clock that went back never makes a wait longer than the interval */
	CHECK_INT(sl_forge_write_wait_ms(5000, 10, 1000), 1000);
}

static void test_interval_zero_never_waits(void)
{
	CHECK_INT(sl_forge_write_wait_ms(5000, 5000, 0), 0);
	CHECK_INT(sl_forge_write_wait_ms(5000, 5001, 0), 0);
}

static void test_default_is_a_second(void)
{
	sl_forge_opts o = SL_FORGE_OPTS_INIT;

	CHECK_INT(o.write_interval_ms, 1000);
}

int main(void)
{
	RUN(test_first_write_waits_nothing);
	RUN(test_write_waits_the_rest_of_the_interval);
	RUN(test_interval_zero_never_waits);
	RUN(test_default_is_a_second);
	return unit_done();
}
