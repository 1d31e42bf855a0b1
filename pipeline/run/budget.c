/*
 * budget.c - what stops a run early: the token, cost and wall-time budgets
 * (a request reserves its share before it starts and settles it on its
 * reply), the early-stop rule, a provider failing the same way
 * SL_RUN_SAME_ERRORS times in a row, and the caller's stop flag (run.h,
 * opts.stop).  x->stop and x->stop_reason are set once, under x->lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pipeline/run/run_internal.h"

/* The run was told to stop (a signal): nothing new starts. */
int run_interrupted(const run_ctx *x)
{
	return x->opts->stop && *x->opts->stop;
}

/* Budgets: call with x->lock held.  Sets x->stop and the reason once. */
int run_budget_reached(run_ctx *x)
{
	const sl_spec *spec = x->c->spec;

	if (x->stop)
		return 1;
	if (spec->budget_tokens && x->tokens_used >= spec->budget_tokens)
		snprintf(x->stop_reason, sizeof(x->stop_reason),
			 "token budget reached (%lld of %lld)", (long long)x->tokens_used,
			 (long long)spec->budget_tokens);
	else if (spec->budget_cost > 0 && x->cost_used >= spec->budget_cost)
		snprintf(x->stop_reason, sizeof(x->stop_reason), "cost budget reached (%.4f of %.4f)",
			 x->cost_used, spec->budget_cost);
	else if (spec->budget_wall_s && sl_now_ms() - x->start_ms >= (int64_t)spec->budget_wall_s * 1000)
		snprintf(x->stop_reason, sizeof(x->stop_reason), "wall-time budget reached (%us)",
			 spec->budget_wall_s);
	else
		return 0;
	x->stop = 1;
	run_ev_budget(x);
	return 1;
}

/*
 * The early-stop rule, after a target finished: too few of the first
 * targets passed.  Call with x->lock held.
 */
void run_early_stop(run_ctx *x)
{
	const sl_spec *spec = x->c->spec;

	if (spec->early_stop_after && !x->stop && x->finished >= spec->early_stop_after &&
	    (double)x->passed_now < spec->early_stop_rate * (double)x->finished) {
		x->stop = 1;
		snprintf(x->stop_reason, sizeof(x->stop_reason),
			 "early stop: %zu of the first %zu targets passed (below %.0f%%)",
			 x->passed_now, x->finished, spec->early_stop_rate * 100);
		run_ev_budget(x);
	}
}

int run_provider_error(run_ctx *x, const char *msg)
{
	int stop;

	pthread_mutex_lock(&x->lock);
	if (!msg) {
		x->same_errors = 0;
	} else if (x->same_errors && !strncmp(x->same_error, msg, sizeof(x->same_error) - 1)) {
		x->same_errors++;
	} else {
		snprintf(x->same_error, sizeof(x->same_error), "%s", msg);
		x->same_errors = 1;
	}
	if (msg && x->same_errors >= SL_RUN_SAME_ERRORS && !x->failed) {
		x->failed = 1;
		sl_err_set(&x->err, SL_EINPUT, "the provider failed %u times in a row with the same "
			   "error (%s); the run stops, the targets not done stay pending",
			   x->same_errors, msg);
	}
	stop = msg && x->same_errors >= SL_RUN_SAME_ERRORS;
	pthread_mutex_unlock(&x->lock);
	return stop;
}

double run_cost_of(const sl_spec *spec, int64_t tin, int64_t tout)
{
	if (spec->price_in < 0)
		return 0;
	return ((double)(tin > 0 ? tin : 0) * spec->price_in +
		(double)(tout > 0 ? tout : 0) * spec->price_out) / 1e6;
}

/*
 * Reserve before a request: it may start while the tokens and cost used
 * plus those reserved by the requests in flight stay under the budgets, so
 * the overshoot is at most the reservations of the requests in flight.
 * When they do not, wait for one in flight to settle.  0 reserved; 1 a
 * budget is reached (x->stop set); 2 the run broke; 3 the run was stopped.
 */
int run_reserve(run_ctx *x, int64_t tokens, double cost)
{
	const sl_spec *spec = x->c->spec;
	int r;

	pthread_mutex_lock(&x->lock);
	for (;;) {
		struct timespec ts;

		if (x->failed) {
			r = 2;
			break;
		}
		if (run_interrupted(x)) {
			r = 3;
			break;
		}
		if (run_budget_reached(x)) {
			r = 1;
			break;
		}
		if (!x->inflight ||
		    ((!spec->budget_tokens || x->tokens_used + x->tokens_reserved < spec->budget_tokens) &&
		     (!(spec->budget_cost > 0) || x->cost_used + x->cost_reserved < spec->budget_cost))) {
			x->tokens_reserved += tokens;
			x->cost_reserved += cost;
			x->inflight++;
			r = 0;
			break;
		}
		/* requests in flight end within their timeout; look at the stop flag
		   and the wall clock every 0.2 s meanwhile */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&x->settled, &x->lock, &ts);
	}
	pthread_mutex_unlock(&x->lock);
	return r;
}

/* Replace a reservation by what the reply cost. */
void run_settle(run_ctx *x, int64_t reserved, double reserved_cost, int64_t tokens,
		double cost)
{
	pthread_mutex_lock(&x->lock);
	x->tokens_reserved -= reserved;
	x->cost_reserved -= reserved_cost;
	x->inflight--;
	x->tokens_used = tokens > INT64_MAX - x->tokens_used ? INT64_MAX : x->tokens_used + tokens;
	x->cost_used += cost;
	pthread_cond_broadcast(&x->settled);
	pthread_mutex_unlock(&x->lock);
}
