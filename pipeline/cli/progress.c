/*
 * progress.c - what `sluice run` shows while a campaign runs (README,
 * "Watching a campaign").
 *
 * On a terminal (stderr is one): the library's notices scroll, and below
 * them a block is redrawn in place every second from the run's watch
 * (run.h): the counts, rate, ETA, tokens and cost, then one line per busy
 * worker (and the run itself while it scopes, prepares the warm base or
 * measures the baseline) with its target, its step and how long it has been
 * in it.  Off a terminal: the notices, each event as a line stamped with
 * its time, and a heartbeat every SLUICE_HEARTBEAT_S seconds (default 30)
 * of one step ("still running gate build on src/x.c:10 (1m30s)").
 * --events FILE: the event stream's JSON lines (docs/EVENTS.md) appended
 * to FILE, made on the first event, or written to stdout for "-".
 *
 * Everything written to stderr and to the stream is under one lock: the
 * run's threads (notices, events) and the ticker thread take turns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/cli/progress.h"
#include "common/term.h"
#include "common/util.h"

struct sl_progress {
	pthread_mutex_t lock;       /* stderr, the stream and the fields below */
	pthread_cond_t wake;
	pthread_t ticker;
	int ticking, quit;
	sl_run_watch *watch;
	int tty;                    /* stderr is a terminal: the block is drawn */
	unsigned drawn;             /* lines of the block on the screen */
	int64_t heartbeat_ms;
	int64_t *beat_since;        /* per slot: the step a heartbeat was said for, */
	int64_t *beats;             /* and how many were */
	size_t nbeat;
	const char *events_path;
	FILE *events;
	int events_err;             /* errno of the stream's first failure, or 0 */
};

/* What a slot is doing, in words: "gate build", "baseline gate test". */
static void step_text(sl_buf *out, const sl_step_view *v)
{
	if (v->step == SL_STEP_GATE)
		sl_buf_addf(out, "gate %s", v->gate);
	else if (v->step == SL_STEP_BASELINE && v->gate[0])
		sl_buf_addf(out, "baseline gate %s", v->gate);
	else if (v->step == SL_STEP_PREPARE && v->gate[0])
		sl_buf_addf(out, "base preparation (gate %s)", v->gate);
	else
		sl_buf_adds(out, sl_step_name(v->step));
}

/* Is the slot worth a line: a worker with a target, or the run setting up? */
static int slot_busy(const sl_run_view *v, size_t i)
{
	const sl_step_view *s = &v->slot[i];

	return i ? s->target[0] != '\0' : s->step != SL_STEP_IDLE;
}

/* The terminal's width, 80 when it cannot say. */
static size_t columns(void)
{
	struct winsize ws;

	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 10)
		return ws.ws_col;
	return 80;
}

/* Append text neutralised and cut to fit a line of width cols, then a newline. */
static void add_line(sl_buf *out, const char *text, size_t cols)
{
	sl_buf safe = SL_BUF_INIT;
	size_t n;

	sl_term_safe(&safe, text, strlen(text), 0);
	n = safe.len;
	if (n > cols - 1) {
		n = cols - 1;
		while (n && ((unsigned char)safe.buf[n] & 0xC0) == 0x80)
			n--;
	}
	sl_buf_add(out, safe.buf, n);
	sl_buf_addch(out, '\n');
	sl_buf_release(&safe);
}

/* The block: one status line and a line per busy slot. */
static unsigned render(sl_buf *out, const sl_run_view *v)
{
	sl_buf line = SL_BUF_INIT;
	size_t cols = columns();
	unsigned n = 1;

	sl_buf_adds(&line, "sluice: ");
	sl_run_duration_text(&line, v->elapsed_ms);
	if (!v->working) {
		sl_buf_adds(&line, " | setting up");
	} else {
		sl_buf_addf(&line, " | %zu/%zu done, %zu proposed | %.1f/min | ETA ", v->finished,
			    v->total, v->proposed, v->per_min);
		if (v->eta_ms < 0)
			sl_buf_adds(&line, "unknown");
		else
			sl_run_duration_text(&line, v->eta_ms);
		sl_buf_addf(&line, " | %lld tokens, cost %.4f", (long long)v->tokens, v->cost);
	}
	add_line(out, line.buf, cols);
	for (size_t i = 0; i < v->nslots; i++) {
		const sl_step_view *s = &v->slot[i];

		if (!slot_busy(v, i))
			continue;
		sl_buf_reset(&line);
		if (i)
			sl_buf_addf(&line, "  w%-2zu %s", i, s->target);
		else
			sl_buf_adds(&line, "  run");
		if (s->attempt)
			sl_buf_addf(&line, " attempt %lld", (long long)s->attempt);
		sl_buf_adds(&line, ": ");
		step_text(&line, s);
		sl_buf_adds(&line, " (");
		sl_run_duration_text(&line, v->now_ms - s->since_ms);
		sl_buf_adds(&line, ")");
		add_line(out, line.buf, cols);
		n++;
	}
	sl_buf_release(&line);
	return n;
}

/* Take the block off the screen (the cursor goes back to where it began). */
static void clear_block(sl_progress *p)
{
	if (p->drawn)
		fprintf(stderr, "\033[%uA\r\033[J", p->drawn);
	p->drawn = 0;
}

static void draw_block(sl_progress *p)
{
	sl_run_view v;
	sl_buf out = SL_BUF_INIT;
	unsigned n = 0;

	sl_run_watch_view(p->watch, &v);
	if (v.started)
		n = render(&out, &v);
	clear_block(p);
	fputs(out.buf, stderr);
	fflush(stderr);
	p->drawn = n;
	sl_buf_release(&out);
	sl_run_view_release(&v);
}

/* "[2026-01-02T03:04:05Z] " before a line off a terminal. */
static void stamp(void)
{
	char ts[32];

	sl_iso8601_now(ts);
	fprintf(stderr, "[%s] ", ts);
}

/* Off a terminal: a line for each slot every heartbeat_ms of one step. */
static void heartbeats(sl_progress *p)
{
	sl_run_view v;

	sl_run_watch_view(p->watch, &v);
	if (v.nslots > p->nbeat) {
		p->beat_since = sl_xrealloc(p->beat_since, sl_st_mult(v.nslots, sizeof(int64_t)));
		p->beats = sl_xrealloc(p->beats, sl_st_mult(v.nslots, sizeof(int64_t)));
		memset(p->beat_since + p->nbeat, 0, (v.nslots - p->nbeat) * sizeof(int64_t));
		memset(p->beats + p->nbeat, 0, (v.nslots - p->nbeat) * sizeof(int64_t));
		p->nbeat = v.nslots;
	}
	for (size_t i = 0; v.started && i < v.nslots; i++) {
		const sl_step_view *s = &v.slot[i];
		int64_t took = v.now_ms - s->since_ms;
		sl_buf line = SL_BUF_INIT, safe = SL_BUF_INIT;

		if (p->beat_since[i] != s->since_ms) {
			p->beat_since[i] = s->since_ms;
			p->beats[i] = 0;
		}
		if (!slot_busy(&v, i) || took < (p->beats[i] + 1) * p->heartbeat_ms)
			continue;
		p->beats[i] = took / p->heartbeat_ms;
		if (i)
			sl_buf_addf(&line, "w%zu ", i);
		sl_buf_adds(&line, "still running ");
		step_text(&line, s);
		if (s->target[0])
			sl_buf_addf(&line, " on %s", s->target);
		sl_buf_adds(&line, " (");
		sl_run_duration_text(&line, took);
		sl_buf_adds(&line, ")");
		sl_term_safe(&safe, line.buf, line.len, 0);
		stamp();
		fprintf(stderr, "%s\n", safe.buf);
		sl_buf_release(&line);
		sl_buf_release(&safe);
	}
	fflush(stderr);
	sl_run_view_release(&v);
}

/* The ticker: every second, the block redrawn or the heartbeats said. */
static void *tick(void *arg)
{
	sl_progress *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->quit) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&p->wake, &p->lock, &ts);
		if (p->quit)
			break;
		if (p->tty)
			draw_block(p);
		else
			heartbeats(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* sl_notice_fn: the library's progress lines and notices, above the block. */
static void on_notice(void *ctx, const char *line)
{
	sl_progress *p = ctx;

	pthread_mutex_lock(&p->lock);
	if (p->tty) {
		clear_block(p);
		fprintf(stderr, "%s\n", line);
		draw_block(p);
	} else {
		fprintf(stderr, "%s\n", line);
	}
	pthread_mutex_unlock(&p->lock);
}

/* The stream's line, into the file (made now if need be) or stdout. */
static void write_event(sl_progress *p, const char *json)
{
	if (!p->events_path || p->events_err)
		return;
	if (!p->events) {
		if (!strcmp(p->events_path, "-"))
			p->events = stdout;
		else if (!(p->events = fopen(p->events_path, "a"))) {
			p->events_err = errno;
			return;
		}
	}
	if (fprintf(p->events, "%s\n", json) < 0 || fflush(p->events))
		p->events_err = errno ? errno : EIO;
}

/* sl_event_fn: the stream's line, and off a terminal the same in words. */
static void on_event(void *ctx, const sl_run_event *ev)
{
	sl_progress *p = ctx;

	pthread_mutex_lock(&p->lock);
	/*
	 * the ticker starts with the run's first event, after the campaign is
	 * loaded: loading forks a child that compiles the query without
	 * exec, which must not inherit another thread's allocator lock
	 */
	if (!p->ticking && !p->quit)
		p->ticking = !pthread_create(&p->ticker, NULL, tick, p);
	write_event(p, ev->json);
	if (p->tty && !ev->worker) {
		/*
		 * the run's own steps (set-up, base preparation, the baseline's
		 * gates, stops) are drawn as they begin, however short they are;
		 * the workers' many steps wait for the next tick
		 */
		draw_block(p);
	} else if (!p->tty) {
		sl_buf safe = SL_BUF_INIT;

		sl_term_safe(&safe, ev->text, strlen(ev->text), 0);
		stamp();
		if (ev->worker)
			fprintf(stderr, "w%u ", ev->worker);
		fprintf(stderr, "%s\n", safe.buf);
		sl_buf_release(&safe);
	}
	pthread_mutex_unlock(&p->lock);
}

sl_progress *sl_progress_start(sl_run_opts *ro, const char *events)
{
	sl_progress *p = sl_xcalloc(1, sizeof(*p));
	const char *term = getenv("TERM");
	long hb = strtol(sl_getenv_or("SLUICE_HEARTBEAT_S", "30"), NULL, 10);

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->watch = sl_run_watch_new();
	p->tty = isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
	p->heartbeat_ms = (hb > 0 ? hb : 30) * 1000;
	p->events_path = events;
	ro->progress = on_notice;
	ro->progress_ctx = p;
	ro->event = on_event;
	ro->event_ctx = p;
	ro->watch = p->watch;
	return p;
}

int sl_progress_stop(sl_progress *p, sl_err *err)
{
	int ret = SL_OK;

	if (!p)
		return SL_OK;
	pthread_mutex_lock(&p->lock);
	p->quit = 1;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	if (p->ticking)
		pthread_join(p->ticker, NULL);
	if (p->tty) {
		clear_block(p);
		fflush(stderr);
	}
	if (p->events && p->events != stdout && fclose(p->events) && !p->events_err)
		p->events_err = errno ? errno : EIO;
	if (p->events_err)
		ret = sl_err_set(err, SL_ERROR, "cannot write the events to '%s': %s",
				 p->events_path, strerror(p->events_err));
	sl_run_watch_free(p->watch);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->beat_since);
	free(p->beats);
	free(p);
	return ret;
}
