/*
 * test_eta.c - the ETA of a run's progress (pipeline/run.h, sl_run_eta):
 * from the measured model and gate times over their slots, the bottleneck
 * of the two; never from the time the run spent setting up.
 */
#include "pipeline/run.h"
#include "unit.h"

static void test_unknown_until_measured(void)
{
	sl_eta_in in = { .left = 40, .busy = 3, .concurrency = 4, .jobs = 2, .workers = 6 };

	CHECK_INT(sl_run_eta(&in), -1);
	in.left = 0;
	CHECK_INT(sl_run_eta(&in), 0);
}

static void test_gates_the_bottleneck(void)
{
	/* 4 targets done: 8 requests (80 s over 4 slots), 6 candidates' gates (120 s over 2) */
	sl_eta_in in = { .left = 36, .done = 4, .model_n = 8, .model_ms = 80000, .cand_n = 6,
			 .gate_ms = 120000, .concurrency = 4, .jobs = 2, .workers = 6 };

	CHECK_INT(sl_run_eta(&in), 36 * 15000);
	/* a slow model instead: 800 s of requests */
	in.model_ms = 800000;
	CHECK_INT(sl_run_eta(&in), 36 * 50000);
}

static void test_in_flight_count_half(void)
{
	/* nothing done yet, 4 in flight, 2 requests measured: 20 s over 2 slots, per 2 targets */
	sl_eta_in in = { .left = 10, .busy = 4, .model_n = 2, .model_ms = 20000,
			 .concurrency = 2, .jobs = 1, .workers = 3 };

	CHECK_INT(sl_run_eta(&in), 10 * 5000);
}

static void test_rules_without_gates(void)
{
	/* no request and no gate: the targets done, over the workers */
	sl_eta_in in = { .left = 30, .done = 3, .done_ms = 3000, .workers = 3 };

	CHECK_INT(sl_run_eta(&in), 10000);
}

int main(void)
{
	RUN(test_unknown_until_measured);
	RUN(test_gates_the_bottleneck);
	RUN(test_in_flight_count_half);
	RUN(test_rules_without_gates);
	return unit_done();
}
