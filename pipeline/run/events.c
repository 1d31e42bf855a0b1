/*
 * events.c - what a run says while it goes: the watch (run.h), where the
 * run itself (slot 0) and each worker (slots 1..) keep the step they are
 * in, its target and since when, under the watch's lock; the counts and
 * the measured model and gate times the ETA comes from; and the event
 * stream, one JSON line per step (docs/EVENTS.md), handed to the caller's
 * callback one at a time.
 *
 * Calling sequence: run_watch_open() when the run begins (the caller's
 * watch, or one of the run's own for the ETA of the progress lines),
 * run_watch_workers() before the workers start, run_slot_take() as a
 * worker's first act, then the steps' hooks (run_step, run_ev_*) from
 * attempt.c, model.c, judge.c, base.c, pool.c and run.c, and
 * run_watch_close() at the end.  Lock order: x->lock, then the emit lock
 * (the caller's callback takes its own lock under it), then the watch's
 * lock, which is held for no call out.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/run/run_internal.h"
#include "common/term.h"

struct sl_run_watch {
	pthread_mutex_t lock;       /* everything below but emit */
	pthread_mutex_t emit;       /* one event at a time, in order */
	int started;
	int64_t start_ms, work_ms;  /* the run began; its workers began (0: not yet) */
	size_t total, finished, proposed;
	int64_t tokens;
	double cost;
	sl_step_view *slot;
	size_t nslots, taken;
	unsigned concurrency, jobs; /* model and gate slots */
	/* measured: model requests, candidates' gate times, targets done */
	int64_t model_n, model_ms, cand_n, gate_ms, done_n, done_ms;
	char run_id[160];
};

/* This thread's slot in the watch (0: the run itself). */
static _Thread_local size_t cur_slot;

static const char *const step_names[] = {
	[SL_STEP_IDLE] = "idle", [SL_STEP_SCOPE] = "scoping",
	[SL_STEP_PREPARE] = "base preparation", [SL_STEP_BASELINE] = "baseline",
	[SL_STEP_CLAIM] = "claim", [SL_STEP_RULES] = "rules",
	[SL_STEP_MODEL] = "model request", [SL_STEP_APPLY] = "apply",
	[SL_STEP_CHECK] = "diff checks", [SL_STEP_WAIT] = "waiting for a gate slot",
	[SL_STEP_TREE] = "tree", [SL_STEP_GATE] = "gate", [SL_STEP_RECORD] = "record",
};

const char *sl_step_name(enum sl_step step)
{
	return (size_t)step < sizeof(step_names) / sizeof(step_names[0]) ? step_names[step] : "?";
}

static const char *const event_names[] = {
	[SL_EV_RUN_START] = "run_start", [SL_EV_RUN_END] = "run_end",
	[SL_EV_TARGET_CLAIMED] = "target_claimed", [SL_EV_TARGET_DONE] = "target_done",
	[SL_EV_REQUEST_SENT] = "request_sent", [SL_EV_REQUEST_ANSWERED] = "request_answered",
	[SL_EV_EDIT_PLACED] = "edit_placed", [SL_EV_EDIT_REFUSED] = "edit_refused",
	[SL_EV_GATE_STARTED] = "gate_started", [SL_EV_GATE_ENDED] = "gate_ended",
	[SL_EV_CANDIDATE] = "candidate", [SL_EV_BUDGET] = "budget", [SL_EV_STOP] = "stop",
};

const char *sl_event_kind_name(enum sl_event_kind kind)
{
	return (size_t)kind < sizeof(event_names) / sizeof(event_names[0]) ? event_names[kind] :
		"?";
}

sl_run_watch *sl_run_watch_new(void)
{
	sl_run_watch *w = sl_xcalloc(1, sizeof(*w));

	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->emit, NULL);
	w->slot = sl_xcalloc(1, sizeof(*w->slot));
	w->nslots = 1;
	return w;
}

void sl_run_watch_free(sl_run_watch *w)
{
	if (!w)
		return;
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->emit);
	free(w->slot);
	free(w);
}

int64_t sl_run_eta(const sl_eta_in *in)
{
	/* targets whose steps are counted: those done, half of those in flight */
	double seen = (double)in->done + (double)in->busy / 2, per_target, model = 0, gates = 0;

	if (!in->left)
		return 0;
	if (seen < 1)
		seen = 1;
	if (in->model_n)
		model = (double)in->model_ms / seen / (in->concurrency ? in->concurrency : 1);
	if (in->cand_n)
		gates = (double)in->gate_ms / seen / (in->jobs ? in->jobs : 1);
	per_target = model > gates ? model : gates;
	if (per_target <= 0 && in->done)
		per_target = (double)in->done_ms / (double)in->done /
			(in->workers ? in->workers : 1);
	if (per_target <= 0)
		return -1;
	return (int64_t)(per_target * (double)in->left);
}

/* The watch's ETA; call with the lock held. */
static int64_t eta_ms(const sl_run_watch *w)
{
	sl_eta_in in = { 0 };

	in.left = w->total > w->finished ? w->total - w->finished : 0;
	for (size_t i = 1; i < w->nslots; i++)
		in.busy += w->slot[i].target[0] != '\0';
	in.done = (size_t)w->done_n;
	in.model_n = w->model_n;
	in.model_ms = w->model_ms;
	in.cand_n = w->cand_n;
	in.gate_ms = w->gate_ms;
	in.done_ms = w->done_ms;
	in.concurrency = w->concurrency;
	in.jobs = w->jobs;
	in.workers = w->nslots > 1 ? (unsigned)(w->nslots - 1) : 1;
	return sl_run_eta(&in);
}

void sl_run_watch_view(sl_run_watch *w, sl_run_view *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&w->lock);
	out->started = w->started;
	out->working = w->work_ms != 0;
	out->now_ms = sl_now_ms();
	out->elapsed_ms = w->started ? out->now_ms - w->start_ms : 0;
	out->total = w->total;
	out->finished = w->finished;
	out->proposed = w->proposed;
	out->tokens = w->tokens;
	out->cost = w->cost;
	if (w->work_ms && out->now_ms > w->work_ms)
		out->per_min = 60000.0 * (double)w->finished / (double)(out->now_ms - w->work_ms);
	out->eta_ms = eta_ms(w);
	out->nslots = w->nslots;
	out->slot = sl_xcalloc(w->nslots, sizeof(*out->slot));
	memcpy(out->slot, w->slot, w->nslots * sizeof(*out->slot));
	pthread_mutex_unlock(&w->lock);
}

void sl_run_view_release(sl_run_view *v)
{
	free(v->slot);
	memset(v, 0, sizeof(*v));
}

void run_watch_open(run_ctx *x)
{
	sl_run_watch *w = x->opts->watch;

	if (!w) {
		w = sl_run_watch_new();
		x->own_watch = 1;
	}
	x->watch = w;
	cur_slot = 0;
	pthread_mutex_lock(&w->lock);
	w->started = 1;
	w->start_ms = x->start_ms;
	snprintf(w->run_id, sizeof(w->run_id), "%s", x->owner);
	pthread_mutex_unlock(&w->lock);
}

void run_watch_close(run_ctx *x)
{
	if (x->own_watch)
		sl_run_watch_free(x->watch);
	x->watch = NULL;
}

void run_watch_workers(run_ctx *x, size_t n, unsigned jobs)
{
	sl_run_watch *w = x->watch;

	pthread_mutex_lock(&x->lock);
	pthread_mutex_lock(&w->lock);
	w->slot = sl_xrealloc(w->slot, sl_st_mult(n + 1, sizeof(*w->slot)));
	memset(w->slot + 1, 0, n * sizeof(*w->slot));
	w->nslots = n + 1;
	w->taken = 0;
	w->slot[0].step = SL_STEP_IDLE;
	w->slot[0].since_ms = sl_now_ms();
	w->total = x->npending;
	w->concurrency = x->provider ? x->c->spec->concurrency : 0;
	w->jobs = jobs;
	w->work_ms = sl_now_ms();
	w->tokens = x->tokens_used;
	w->cost = x->cost_used;
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_unlock(&x->lock);
}

void run_slot_take(run_ctx *x)
{
	sl_run_watch *w = x->watch;

	pthread_mutex_lock(&w->lock);
	cur_slot = w->taken + 1 < w->nslots ? ++w->taken : 0;
	pthread_mutex_unlock(&w->lock);
}

void run_watch_counts(run_ctx *x)
{
	sl_run_watch *w = x->watch;

	pthread_mutex_lock(&w->lock);
	w->finished = x->finished;
	w->proposed = x->passed_now;
	w->tokens = x->tokens_used;
	w->cost = x->cost_used;
	pthread_mutex_unlock(&w->lock);
}

/* Set this thread's step (gate: its name or NULL); returns how long the last one took. */
static int64_t set_step(sl_run_watch *w, enum sl_step step, const char *gate)
{
	sl_step_view *v;
	int64_t now = sl_now_ms(), took;

	pthread_mutex_lock(&w->lock);
	v = &w->slot[cur_slot < w->nslots ? cur_slot : 0];
	took = now - v->since_ms;
	v->step = step;
	snprintf(v->gate, sizeof(v->gate), "%s", gate ? gate : "");
	v->since_ms = now;
	pthread_mutex_unlock(&w->lock);
	return took;
}

void run_step(run_ctx *x, enum sl_step step)
{
	set_step(x->watch, step, NULL);
}

/* This thread's attempt number in its slot. */
static void set_attempt(sl_run_watch *w, int64_t n)
{
	pthread_mutex_lock(&w->lock);
	w->slot[cur_slot < w->nslots ? cur_slot : 0].attempt = n;
	pthread_mutex_unlock(&w->lock);
}

void run_attempt_step(run_attempt *a, enum sl_step step)
{
	set_attempt(a->x->watch, a->n);
	set_step(a->x->watch, step, NULL);
}

/* ---- the event stream ------------------------------------------------- */

/* A JSON string of s; bytes that are not UTF-8 become '?'. */
static json_t *jstr(const char *s)
{
	json_t *j;
	char *copy;
	size_t n;

	if (!s)
		return json_null();
	if ((j = json_string(s)))
		return j;
	copy = sl_xstrdup(s);
	n = strlen(copy);
	for (size_t i = 0; i < n;) {
		size_t k = sl_utf8_seq((const unsigned char *)copy + i, n - i);

		if (!k) {
			copy[i] = '?';
			k = 1;
		}
		i += k;
	}
	j = json_string(copy);
	free(copy);
	return j ? j : json_string("?");
}

/* The current time as 2026-01-02T03:04:05.678Z. */
static void timestamp(char out[32])
{
	struct timeval tv;
	struct tm tm;
	char sec[20];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%.19s.%03dZ", sec, (int)(tv.tv_usec / 1000 % 1000));
}

/* The target this thread works on (its key and "path:line"), or NULL. */
static _Thread_local const sl_target_rec *cur_target;

/*
 * Emit one event: the common fields (v, ts, run, campaign, event, worker,
 * target, path, line) and those of extra (stolen; may be NULL), with the
 * log line text (printf format).
 */
static void emit(run_ctx *x, enum sl_event_kind kind, json_t *extra, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void emit(run_ctx *x, enum sl_event_kind kind, json_t *extra, const char *fmt, ...)
{
	sl_run_watch *w = x->watch;
	const sl_target_rec *t = cur_target;
	json_t *o;
	char ts[32], *line;
	sl_buf text = SL_BUF_INIT;
	sl_run_event ev;
	va_list ap;

	if (!x->opts->event) {
		json_decref(extra);
		return;
	}
	/* stamped and written in one turn: the stream's times never go back */
	pthread_mutex_lock(&w->emit);
	timestamp(ts);
	o = json_object();
	json_object_set_new(o, "v", json_integer(SL_EVENTS_VERSION));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "run", jstr(w->run_id));
	json_object_set_new(o, "campaign", jstr(x->c && x->c->spec ? x->c->spec->name : NULL));
	json_object_set_new(o, "event", json_string(sl_event_kind_name(kind)));
	json_object_set_new(o, "worker", json_integer((json_int_t)cur_slot));
	json_object_set_new(o, "target", t ? jstr(t->key) : json_null());
	if (t) {
		json_object_set_new(o, "path", jstr(t->path));
		json_object_set_new(o, "line", json_integer(t->start_line));
	}
	if (extra)
		json_object_update(o, extra);
	json_decref(extra);
	line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (t)
		sl_buf_addf(&text, "%s:%lld: ", t->path, (long long)t->start_line);
	va_start(ap, fmt);
	sl_buf_vaddf(&text, fmt, ap);
	va_end(ap);
	ev = (sl_run_event){ kind, (unsigned)cur_slot, line, text.buf };
	x->opts->event(x->opts->event_ctx, &ev);
	pthread_mutex_unlock(&w->emit);
	free(line);
	sl_buf_release(&text);
}

void run_ev_start(run_ctx *x)
{
	emit(x, SL_EV_RUN_START, json_pack("{s:o,s:I}", "store", jstr(x->opts->store), "pid",
					   (json_int_t)getpid()),
	     "run %s of campaign %s started", x->owner, x->c->spec->name);
}

void run_ev_end(run_ctx *x, const char *outcome)
{
	cur_slot = 0;
	cur_target = NULL;
	emit(x, SL_EV_RUN_END, json_pack("{s:s,s:I,s:I,s:I,s:I,s:f}", "outcome", outcome,
					 "targets", (json_int_t)x->npending, "finished",
					 (json_int_t)x->finished, "proposed",
					 (json_int_t)x->passed_now, "tokens",
					 (json_int_t)x->tokens_used, "cost", x->cost_used),
	     "run ended (%s): %zu of %zu targets finished, %zu proposed", outcome, x->finished,
	     x->npending, x->passed_now);
}

void run_ev_claimed(run_ctx *x, const sl_target_rec *rec)
{
	sl_run_watch *w = x->watch;
	sl_step_view *v;

	cur_target = rec;
	pthread_mutex_lock(&w->lock);
	v = &w->slot[cur_slot < w->nslots ? cur_slot : 0];
	snprintf(v->target, sizeof(v->target), "%s:%lld", rec->path, (long long)rec->start_line);
	v->attempt = 0;
	v->step = SL_STEP_CLAIM;
	v->since_ms = sl_now_ms();
	v->gate[0] = '\0';
	pthread_mutex_unlock(&w->lock);
	emit(x, SL_EV_TARGET_CLAIMED, json_pack("{s:I}", "attempts", (json_int_t)rec->attempts),
	     "claimed (%lld earlier attempts)", (long long)rec->attempts);
}

/* This thread's slot free again: no target, idle. */
static void slot_clear(sl_run_watch *w)
{
	sl_step_view *v;

	pthread_mutex_lock(&w->lock);
	v = &w->slot[cur_slot < w->nslots ? cur_slot : 0];
	memset(v, 0, sizeof(*v));
	v->since_ms = sl_now_ms();
	pthread_mutex_unlock(&w->lock);
	cur_target = NULL;
}

void run_ev_left(run_ctx *x)
{
	slot_clear(x->watch);
}

void run_ev_done(run_ctx *x, const sl_target_rec *after, int64_t started_ms)
{
	sl_run_watch *w = x->watch;

	emit(x, SL_EV_TARGET_DONE, json_pack("{s:s,s:I,s:o}", "state",
					     sl_target_state_name(after->state), "attempts",
					     (json_int_t)after->attempts, "reason",
					     jstr(after->reason)),
	     "%s after %lld attempt%s%s%s", sl_target_state_name(after->state),
	     (long long)after->attempts, after->attempts == 1 ? "" : "s",
	     after->reason ? ": " : "", after->reason ? after->reason : "");
	pthread_mutex_lock(&w->lock);
	w->done_n++;
	w->done_ms += sl_now_ms() - started_ms;
	pthread_mutex_unlock(&w->lock);
	slot_clear(w);
}

void run_ev_request(run_attempt *a, int round)
{
	run_ctx *x = a->x;

	run_attempt_step(a, SL_STEP_MODEL);
	emit(x, SL_EV_REQUEST_SENT, json_pack("{s:I,s:i}", "attempt", (json_int_t)a->n, "round",
					      round),
	     "attempt %lld: model request%s", (long long)a->n, round ? " (format correction)" : "");
}

void run_ev_answered(run_attempt *a, int rc, int64_t tin, int64_t tout, double cost)
{
	run_ctx *x = a->x;
	const sl_completion *c = &a->s.comp;
	int64_t took = set_step(x->watch, SL_STEP_MODEL, NULL);

	pthread_mutex_lock(&x->watch->lock);
	x->watch->model_n++;
	x->watch->model_ms += took;
	x->watch->tokens += tin + tout;
	x->watch->cost += cost;
	pthread_mutex_unlock(&x->watch->lock);
	emit(x, SL_EV_REQUEST_ANSWERED,
	     json_pack("{s:I,s:b,s:I,s:I,s:f,s:I,s:i,s:i,s:o}", "attempt", (json_int_t)a->n, "ok",
		       !rc, "tokens_in", (json_int_t)tin, "tokens_out", (json_int_t)tout, "cost",
		       cost, "latency_ms", (json_int_t)took, "http_status", c->http_status,
		       "retries", c->retries, "error", rc ? jstr(a->s.aerr.msg) : json_null()),
	     "attempt %lld: model answered in %.1f s, %lld+%lld tokens%s%s", (long long)a->n,
	     (double)took / 1000, (long long)tin, (long long)tout, rc ? ": " : "",
	     rc ? a->s.aerr.msg : "");
}

void run_ev_applied(run_attempt *a)
{
	const attempt_state *s = &a->s;
	int placed = s->a.outcome == SL_A_CANDIDATE;

	if (s->a.outcome == SL_A_NONE)
		return;
	if (placed)
		emit(a->x, SL_EV_EDIT_PLACED,
		     json_pack("{s:I,s:s,s:I}", "attempt", (json_int_t)a->n, "source",
			       s->a.source ? s->a.source : "", "edits", (json_int_t)s->edits.n),
		     "attempt %lld: %zu edit%s placed", (long long)a->n, s->edits.n,
		     s->edits.n == 1 ? "" : "s");
	else
		emit(a->x, SL_EV_EDIT_REFUSED,
		     json_pack("{s:I,s:s,s:s,s:o}", "attempt", (json_int_t)a->n, "source",
			       s->a.source ? s->a.source : "", "outcome",
			       sl_attempt_outcome_name(s->a.outcome), "reason", jstr(s->a.error)),
		     "attempt %lld: edit refused (%s)%s%s", (long long)a->n,
		     sl_attempt_outcome_name(s->a.outcome), s->a.error ? ": " : "",
		     s->a.error ? s->a.error : "");
}

void run_ev_candidate(run_attempt *a)
{
	if (a->s.a.outcome != SL_A_CANDIDATE || !a->gates.n)
		return;
	emit(a->x, SL_EV_CANDIDATE,
	     json_pack("{s:I,s:b,s:o}", "attempt", (json_int_t)a->n, "passed", a->passed,
		       "branch", a->passed ? jstr(a->branch) : json_null()),
	     "attempt %lld: candidate %s%s%s", (long long)a->n,
	     a->passed ? "proposed on " : "failed its gates", a->passed ? a->branch : "", "");
}

void run_ev_gate(void *ctx, const char *gate, const char *where, const sl_gate_run_rec *rec)
{
	run_ctx *x = ctx;
	sl_run_watch *w = x->watch;
	enum sl_step step = !strcmp(where, "prepare") ? SL_STEP_PREPARE :
		!strcmp(where, "baseline") ? SL_STEP_BASELINE : SL_STEP_GATE;

	if (!rec) {
		set_step(w, step, gate);
		emit(x, SL_EV_GATE_STARTED, json_pack("{s:o,s:s}", "gate", jstr(gate), "on", where),
		     "gate %s started (%s)", gate, where);
		return;
	}
	if (step == SL_STEP_GATE && !rec->cached) {
		pthread_mutex_lock(&w->lock);
		w->gate_ms += rec->duration_ms;
		pthread_mutex_unlock(&w->lock);
	}
	emit(x, SL_EV_GATE_ENDED,
	     json_pack("{s:o,s:s,s:s,s:I,s:I,s:b}", "gate", jstr(gate), "on", where, "verdict",
		       sl_verdict_name(rec->verdict), "exit_status", (json_int_t)rec->exit_status,
		       "duration_ms", (json_int_t)rec->duration_ms, "cached", rec->cached != 0),
	     "gate %s %s%s in %.1f s (%s)", gate, sl_verdict_name(rec->verdict),
	     rec->cached ? " (cached)" : "", (double)rec->duration_ms / 1000, where);
}

/* A candidate's gates are over: one more measured for the ETA. */
void run_ev_judged(run_ctx *x)
{
	pthread_mutex_lock(&x->watch->lock);
	x->watch->cand_n++;
	pthread_mutex_unlock(&x->watch->lock);
}

void run_ev_budget(run_ctx *x)
{
	emit(x, SL_EV_BUDGET, json_pack("{s:s}", "reason", x->stop_reason), "stop: %s",
	     x->stop_reason);
}

void run_ev_stop(run_ctx *x, const char *why)
{
	emit(x, SL_EV_STOP, json_pack("{s:s}", "reason", why), "stop: %s", why);
}

void sl_run_duration_text(sl_buf *out, int64_t ms)
{
	int64_t s = ms / 1000;

	if (s >= 3600)
		sl_buf_addf(out, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else if (s >= 60)
		sl_buf_addf(out, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else
		sl_buf_addf(out, "%llds", (long long)s);
}

void run_rate_text(run_ctx *x, sl_buf *out)
{
	sl_run_view v;

	sl_run_watch_view(x->watch, &v);
	sl_buf_addf(out, "%.1f/min, ETA ", v.per_min);
	if (v.eta_ms < 0)
		sl_buf_adds(out, "unknown");
	else
		sl_run_duration_text(out, v.eta_ms);
	sl_run_view_release(&v);
}
