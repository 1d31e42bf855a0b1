/*
 * run.c - the orchestrator (see run.h for the sequence).
 *
 * Reads: the campaign file, the repository's objects, the store.  Writes: the
 * store, candidate commits and branches under the campaign's prefix (no
 * reflog; without gates, one pack per batch of candidates, see objbatch),
 * scratch worktrees and batch journals under the scratch root (removed
 * after their gates, or their batch).  Never touches the user's working
 * tree or index.
 */
#include <ctype.h>
#include <pthread.h>
#include <semaphore.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "pipeline/apply/apply.h"
#include "pipeline/apply/warm.h"
#include "pipeline/generate/edit.h"
#include "scoping/context.h"
#include "pipeline/fixjob.h"
#include "validators/validators.h"
#include "storage/journal.h"
#include "storage/lease.h"
#include "common/sha256.h"
#include "pipeline/generate/prompt.h"
#include "pipeline/generate/provider.h"
#include "pipeline/generate/rules.h"
#include "pipeline/run.h"
#include "storage/store.h"
#include "common/term.h"
#include "common/util.h"
#include "common/caps.h"

char *sl_default_store_path(const char *explicit_path)
{
	const char *env = getenv("SLUICE_STORE"), *data = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	sl_buf b = SL_BUF_INIT;

	if (explicit_path && *explicit_path)
		return sl_xstrdup(explicit_path);
	if (env && *env)
		return sl_xstrdup(env);
	if (data && *data)
		sl_buf_addf(&b, "%s/sluice/sluice.db", data);
	else
		sl_buf_addf(&b, "%s/.local/share/sluice/sluice.db", home && *home ? home : ".");
	return sl_buf_detach(&b, NULL);
}

void sl_run_summary_release(sl_run_summary *s)
{
	free(s->campaign);
	free(s->stop_reason);
	memset(s, 0, sizeof(*s));
}

/*
 * The scoped targets, looked up by key and by start position in O(log n):
 * a lookup per target must not cost a pass over every target, or a
 * campaign's cost per target grows with its size.
 */
typedef struct target_index {
	const sl_target_list *list;
	size_t *by_key;             /* (path, start_byte, end_byte) */
	size_t *by_start;           /* (path, start_line, start_col) */
} target_index;

/*
 * The per-run state.  Workers (threads) share it; everything below `lock`
 * is guarded by it.  Each worker opens its own git_repository (libgit2
 * objects are not shared across threads); the store serialises
 * transactions itself; the provider may be called from several threads.
 */
typedef struct run_ctx {
	const sl_run_opts *opts;
	sl_campaign *c;
	sl_store *st;
	sl_provider *provider;      /* NULL for the rules kind */
	char *scratch;              /* this campaign's worktree root */
	char *gitconfig;            /* config layered on each repo handle: no reflog */
	int gitconfig_fd;
	int64_t campaign_id;
	const sl_target_list *list; /* scoped at the base; read-only */
	target_index index;         /* of list; read-only once the workers run */
	sl_target_rec *pending;     /* targets this run works on */
	size_t npending;
	sem_t model_slots;          /* `concurrency` */
	sem_t gate_slots;           /* `jobs` */
	int64_t start_ms;
	char owner[160];            /* this run's name in leases: HOST:PID:START */
	char digest[65];            /* of what judges a target (campaign_digest) */
	int64_t lease_ttl_ms;

	int git_lock_fd;            /* the git directory, flock()ed with git_lock: other
				       sluice processes */
	pthread_mutex_t git_lock;   /* ref and worktree changes in the repository: libgit2
				       creates and prunes ref directories without locking */
	pthread_mutex_t lock;
	size_t next;                /* next index into pending */
	size_t seq;                 /* worktree names */
	size_t finished, passed_now;
	int64_t tokens_used;        /* campaign-wide, including earlier runs */
	double cost_used;
	int64_t tokens_reserved;    /* by the requests in flight */
	double cost_reserved;
	size_t inflight;
	pthread_cond_t settled;     /* a request in flight settled its reservation */
	size_t held_elsewhere, transient, usage_rejected;
	size_t lost;                /* targets taken over while this run was paused */
	int ending;                 /* the workers are done: the lease keeper stops */
	pthread_cond_t end_cond;
	int renewing;               /* the lease keeper is writing to the store */
	size_t nworkers;            /* worker threads running */
	size_t at_flush;            /* tests: workers waiting to flush (stop_for_test) */
	char *replay_file;          /* replay: the JSON lines file in use */
	sl_gating *gating;          /* the gates and their baseline */
	sl_warm *warm;              /* the warm base; NULL: a worktree per candidate */
	sl_findings findings;       /* kind fix: the base findings the targets come from */
	int stop;                   /* a budget ran out: start nothing new */
	char stop_reason[160];
	int failed;                 /* machinery broke: every worker stops */
	sl_err err;                 /* the first such error */
	int base_stopped;           /* a signal came before the baseline was complete */
} run_ctx;

/* Progress and notices go to the caller's callback (run.h), never to a terminal. */
static void notice(const run_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(const run_ctx *x, const char *fmt, ...)
{
	sl_buf line = SL_BUF_INIT;
	va_list ap;

	if (!x->opts->progress)
		return;
	va_start(ap, fmt);
	sl_buf_vaddf(&line, fmt, ap);
	va_end(ap);
	x->opts->progress(x->opts->progress_ctx, line.buf);
	sl_buf_release(&line);
}

/* Earlier attempts of the target, for the next prompt. */
typedef sl_turn history;

/*
 * Ref and worktree changes, one at a time across the threads of this run and
 * the other sluice processes on the repository: libgit2 reports a branch as
 * "already checked out" when another process's worktree vanishes while it
 * looks.
 */
static void git_lock_take(run_ctx *x)
{
	pthread_mutex_lock(&x->git_lock);
	while (x->git_lock_fd >= 0 && flock(x->git_lock_fd, LOCK_EX) && errno == EINTR)
		;
}

static void git_lock_give(run_ctx *x)
{
	if (x->git_lock_fd >= 0)
		flock(x->git_lock_fd, LOCK_UN);
	pthread_mutex_unlock(&x->git_lock);
}

/*
 * The epoch of the lease the calling worker holds on its target (lease.h,
 * fencing): a worker holds one target at a time.
 */
static _Thread_local int64_t cur_epoch;

/*
 * Begin a transaction that writes for a target the worker holds:
 * SL_ELEASE (nothing begun) once another run has taken the target over.
 */
static int begin_fenced(run_ctx *x, int64_t target_id, sl_err *err)
{
	int ret;

	if (sl_store_begin(x->st, err))
		return SL_ERROR;
	if ((ret = sl_lease_check(x->st, target_id, x->owner, cur_epoch, err)))
		sl_store_rollback(x->st);
	return ret;
}

/* The run was told to stop (a signal): nothing new starts. */
static int interrupted(const run_ctx *x)
{
	return x->opts->stop && *x->opts->stop;
}

/* The last attempt number the target may use (retries add to earlier attempts). */
static int64_t attempt_limit(const run_ctx *x, const sl_target_rec *rec)
{
	return rec->attempt_base + (int64_t)x->c->spec->attempts;
}

static void key_of(sl_buf *b, const sl_target *t)
{
	sl_buf_reset(b);
	sl_buf_addf(b, "%s:%u-%u", t->path, t->start_byte, t->end_byte);
}

static const sl_target_list *sort_list;    /* only during target_index_init's qsort */

static int cmp_key(const char *path, int64_t sb, int64_t eb, const sl_target *o)
{
	int c = strcmp(path, o->path);

	if (c)
		return c;
	if (sb != (int64_t)o->start_byte)
		return sb < (int64_t)o->start_byte ? -1 : 1;
	return eb < (int64_t)o->end_byte ? -1 : eb > (int64_t)o->end_byte;
}

static int cmp_start(const char *path, int64_t line, int64_t col, const sl_target *o)
{
	int c = strcmp(path, o->path);

	if (c)
		return c;
	if (line != (int64_t)o->start_line)
		return line < (int64_t)o->start_line ? -1 : 1;
	return col < (int64_t)o->start_col ? -1 : col > (int64_t)o->start_col;
}

static int qcmp_key(const void *a, const void *b)
{
	const sl_target *x = &sort_list->v[*(const size_t *)a], *y = &sort_list->v[*(const size_t *)b];

	return cmp_key(x->path, x->start_byte, x->end_byte, y);
}

static int qcmp_start(const void *a, const void *b)
{
	const sl_target *x = &sort_list->v[*(const size_t *)a], *y = &sort_list->v[*(const size_t *)b];

	return cmp_start(x->path, x->start_line, x->start_col, y);
}

/* Called once, before the workers start. */
static void target_index_init(target_index *ix, const sl_target_list *list)
{
	ix->list = list;
	ix->by_key = sl_xcalloc(list->n ? list->n : 1, sizeof(size_t));
	ix->by_start = sl_xcalloc(list->n ? list->n : 1, sizeof(size_t));
	for (size_t i = 0; i < list->n; i++)
		ix->by_key[i] = ix->by_start[i] = i;
	sort_list = list;
	qsort(ix->by_key, list->n, sizeof(size_t), qcmp_key);
	qsort(ix->by_start, list->n, sizeof(size_t), qcmp_start);
	sort_list = NULL;
}

static void target_index_release(target_index *ix)
{
	free(ix->by_key);
	free(ix->by_start);
	memset(ix, 0, sizeof(*ix));
}

/* The first position in by_start whose target does not sort before (path, line, col). */
static size_t lower_start(const target_index *ix, const char *path, int64_t line, int64_t col)
{
	size_t lo = 0, hi = ix->list->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_start(path, line, col, &ix->list->v[ix->by_start[mid]]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 if another scoped target starts where t does: their names would collide. */
static int shares_start(const target_index *ix, const sl_target_rec *t)
{
	for (size_t i = lower_start(ix, t->path, t->start_line, t->start_col); i < ix->list->n; i++) {
		const sl_target *o = &ix->list->v[ix->by_start[i]];

		if (cmp_start(t->path, t->start_line, t->start_col, o))
			break;
		if ((int64_t)o->start_byte != t->start_byte || (int64_t)o->end_byte != t->end_byte)
			return 1;
	}
	return 0;
}

static char *branch_name(const char *prefix, const sl_target_rec *t, const target_index *list)
{
	sl_buf b = SL_BUF_INIT, ref = SL_BUF_INIT;
	int valid = 0;

	sl_buf_addf(&b, "%s/", prefix);
	for (const char *p = t->path; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (isalnum(ch) || ch == '_' || ch == '-' || (ch == '.' && p[1] != '.'))
			sl_buf_addch(&b, ch);
		else
			sl_buf_addch(&b, '-');
	}
	sl_buf_addf(&b, "-L%lld", (long long)t->start_line);
	if (t->start_col > 1)
		sl_buf_addf(&b, "C%lld", (long long)t->start_col);
	sl_buf_addf(&ref, "refs/heads/%s", b.buf);
	if (shares_start(list, t) || git_reference_name_is_valid(&valid, ref.buf) || !valid) {
		sl_buf_reset(&b);
		sl_buf_addf(&b, "%s/target-%lld", prefix, (long long)t->id);
	}
	sl_buf_release(&ref);
	return sl_buf_detach(&b, NULL);
}

static int read_blob_text(sl_buf *out, git_repository *repo, const char *hex, sl_err *err)
{
	git_oid oid;
	git_blob *blob = NULL;

	if (git_oid_fromstr(&oid, hex) || git_blob_lookup(&blob, repo, &oid))
		return sl_err_set(err, SL_ERROR, "cannot read blob %s: %s", hex, sl_git_error());
	sl_buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return SL_OK;
}

static void build_chat(const sl_buf *prompt, sl_chat_msg **msgs, size_t *n, const char *system,
		       const history *h, size_t nh)
{
	size_t alloc = 0;

	*msgs = NULL;
	*n = 0;
	SL_ALLOC_GROW(*msgs, 2 + 2 * nh, alloc);
	(*msgs)[(*n)++] = (sl_chat_msg){ "system", system };
	(*msgs)[(*n)++] = (sl_chat_msg){ "user", prompt->buf };
	for (size_t i = 0; i < nh; i++) {
		if (h[i].reply)
			(*msgs)[(*n)++] = (sl_chat_msg){ "assistant", h[i].reply };
		(*msgs)[(*n)++] = (sl_chat_msg){ "user", h[i].feedback };
	}
}

/* Flatten a chat into the text recorded as the attempt's prompt. */
static char *chat_text(const sl_chat_msg *msgs, size_t n)
{
	sl_buf b = SL_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		sl_buf_addf(&b, "%s### %s\n%s\n", i ? "\n" : "", msgs[i].role, msgs[i].content);
	return sl_buf_detach(&b, NULL);
}

/* Budgets: call with x->lock held.  Sets x->stop and the reason once. */
static int budget_reached(run_ctx *x)
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
	return 1;
}

static double cost_of(const sl_spec *spec, int64_t tin, int64_t tout)
{
	if (spec->price_in < 0)
		return 0;
	return ((double)(tin > 0 ? tin : 0) * spec->price_in +
		(double)(tout > 0 ? tout : 0) * spec->price_out) / 1e6;
}

/*
 * Create the branch at commit, never moving it: SL_ELEASE when it exists at
 * another commit (another run wrote it after taking the target over).
 */
static int make_branch(git_repository *repo, const char *branch, const git_oid *commit,
		       sl_err *err)
{
	git_commit *c = NULL;
	git_reference *ref = NULL;
	int rc, ret = SL_OK;

	if (!(rc = git_commit_lookup(&c, repo, commit)))
		rc = git_branch_create(&ref, repo, branch, c, 0);
	if (rc == GIT_EEXISTS && !git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL))
		rc = git_reference_target(ref) && git_oid_equal(git_reference_target(ref), commit) ?
			0 : GIT_EEXISTS;
	if (rc == GIT_EEXISTS)
		ret = sl_err_set(err, SL_ELEASE, "branch '%s' points at a commit another run "
				 "wrote", branch);
	else if (rc)
		ret = sl_err_set(err, SL_ERROR, "cannot create branch '%s': %s", branch,
				 sl_git_error());
	git_reference_free(ref);
	git_commit_free(c);
	return ret;
}

/* What one attempt produced, before it is recorded. */
typedef struct attempt_state {
	sl_attempt_rec a;           /* strings borrowed from the fields below */
	sl_edit_list edits;
	sl_completion comp;
	sl_buf prompt, file, diff, feedback, report_json, context;
	sl_buf finding, fix_instr;  /* kind fix: the target's findings, the instructions with them */
	const char *tree;           /* how the candidate's tree was made (static), or NULL */
	int64_t tree_ms;            /* and the time that took */
	sl_apply_report report;
	sl_err aerr;                /* why the attempt's edits were unusable */
	char *chat;
	char *correction_reply;     /* the unusable reply a correction round quoted */
	char correction_key[65];    /* and the key of its request */
	int use_rules;
	int transient;              /* the request failed for a passing reason: the
				       attempt does not count, the target stays pending */
	char usage_note[256];       /* the endpoint's usage numbers were rejected */
} attempt_state;

static void attempt_state_init(attempt_state *s, const sl_target_rec *rec, int64_t n)
{
	memset(s, 0, sizeof(*s));
	s->a.target_id = rec->id;
	s->a.n = n;
	s->a.tokens_in = s->a.tokens_out = -1;
	sl_completion_init(&s->comp);
	sl_buf_init(&s->prompt, 0);
	sl_buf_init(&s->file, 0);
	sl_buf_init(&s->diff, 0);
	sl_buf_init(&s->feedback, 0);
	sl_buf_init(&s->report_json, 0);
	sl_buf_init(&s->context, 0);
	sl_buf_init(&s->finding, 0);
	sl_buf_init(&s->fix_instr, 0);
}

static void attempt_state_release(attempt_state *s)
{
	sl_edit_list_release(&s->edits);
	sl_completion_release(&s->comp);
	sl_buf_release(&s->prompt);
	sl_buf_release(&s->file);
	sl_buf_release(&s->diff);
	sl_buf_release(&s->feedback);
	sl_buf_release(&s->report_json);
	sl_buf_release(&s->context);
	sl_buf_release(&s->finding);
	sl_buf_release(&s->fix_instr);
	sl_apply_report_release(&s->report);
	free(s->chat);
	free(s->correction_reply);
}

/* Tokens a chat's prompt may count: a byte is at most about a third of a token. */
static int64_t estimate_tokens(const sl_chat_msg *msgs, size_t n)
{
	int64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += (int64_t)(strlen(msgs[i].content) / 3) + 8;
	return t;
}

/* The reply cap a reservation assumes: max_tokens, else a typical endpoint's default. */
static int64_t reply_cap(const sl_spec *spec)
{
	return spec->max_tokens > 0 ? spec->max_tokens : 4096;
}

/*
 * Reserve before a request: it may start while the tokens and cost used
 * plus those reserved by the requests in flight stay under the budgets, so
 * the overshoot is at most the reservations of the requests in flight.
 * When they do not, wait for one in flight to settle.  0 reserved; 1 a
 * budget is reached (x->stop set); 2 the run broke; 3 the run was stopped.
 */
static int reserve(run_ctx *x, int64_t tokens, double cost)
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
		if (interrupted(x)) {
			r = 3;
			break;
		}
		if (budget_reached(x)) {
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
static void settle(run_ctx *x, int64_t reserved, double reserved_cost, int64_t tokens,
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

/*
 * The tokens to bill for a reply.  Numbers the endpoint reports are taken
 * when plausible; negative (other than -1, "not said"), absurd or
 * overflowing ones are rejected, the reservation is billed instead and the
 * reason noted with the attempt.
 */
static void check_usage(run_ctx *x, attempt_state *s, int64_t est_in, int64_t cap,
			int64_t *tin, int64_t *tout)
{
	int64_t in = s->comp.tokens_in, out = s->comp.tokens_out;

	if (in < -1 || out < -1 || in > SL_CAP_USAGE_TOKENS || out > SL_CAP_USAGE_TOKENS) {
		snprintf(s->usage_note, sizeof(s->usage_note), "the endpoint reported %lld prompt "
			 "and %lld completion tokens, which cannot be; billed the reservation "
			 "(%lld + %lld) instead", (long long)in, (long long)out, (long long)est_in,
			 (long long)cap);
		*tin = est_in;
		*tout = cap;
		pthread_mutex_lock(&x->lock);
		x->usage_rejected++;
		pthread_mutex_unlock(&x->lock);
		return;
	}
	*tin = in > 0 ? in : 0;
	*tout = out > 0 ? out : 0;
}

/* Record the reply that just arrived, before anything is done with it. */
static int journal_reply(run_ctx *x, attempt_state *s, int round, int64_t tin, int64_t tout,
			 double cost, sl_err *err)
{
	sl_reply_rec r = { 0 };
	int ret;

	r.target_id = s->a.target_id;
	r.n = s->a.n;
	r.round = round;
	r.request_key = s->comp.key[0] ? s->comp.key : NULL;
	r.request = s->comp.request.len ? s->comp.request.buf : NULL;
	r.reply = s->comp.text.buf;
	r.tokens_in = tin;
	r.tokens_out = tout;
	r.cost = cost;
	r.http_status = s->comp.http_status;
	r.latency_ms = s->comp.latency_ms;
	r.retries = s->comp.retries;
	r.truncated = s->comp.truncated;
	r.usage_note = s->usage_note[0] ? s->usage_note : NULL;
	if ((ret = begin_fenced(x, r.target_id, err)))
		return ret;
	if ((ret = sl_journal_reply_put(x->st, &r, err))) {
		sl_store_rollback(x->st);
		return ret;
	}
	return sl_store_commit(x->st, err);
}

/* 1 if the journalled reply answered this very request (same key). */
static int journal_matches(const sl_spec *spec, const sl_reply_rec *jr, const sl_chat_msg *msgs,
			   size_t n)
{
	static const enum sl_provider_kind kinds[] = { SL_PROVIDER_OPENAI, SL_PROVIDER_ANTHROPIC,
				     SL_PROVIDER_COMMAND };
	char key[65];

	if (!jr->request_key)
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		/* replay records the key of the kind it was recorded from */
		if (spec->provider != SL_PROVIDER_REPLAY && spec->provider != kinds[i])
			continue;
		sl_request_key(key, kinds[i], spec->model, msgs, n);
		if (!strcmp(key, jr->request_key))
			return 1;
	}
	return 0;
}

/* Fill the completion from a journalled reply. */
static void from_journal(attempt_state *s, const sl_reply_rec *jr)
{
	sl_buf_adds(&s->comp.text, jr->reply ? jr->reply : "");
	if (jr->request)
		sl_buf_adds(&s->comp.request, jr->request);
	snprintf(s->comp.key, sizeof(s->comp.key), "%s", jr->request_key ? jr->request_key : "");
	s->comp.tokens_in = jr->tokens_in;
	s->comp.tokens_out = jr->tokens_out;
	s->comp.http_status = (int)jr->http_status;
	s->comp.latency_ms = jr->latency_ms;
	s->comp.retries = (int)jr->retries;
	s->comp.truncated = jr->truncated;
	if (jr->usage_note)
		snprintf(s->usage_note, sizeof(s->usage_note), "%s", jr->usage_note);
}

/*
 * Ask the model for edits.  Returns SL_OK (a.outcome set when the request or
 * the reply failed), SL_EBUDGET when a budget ran out before the request
 * started (nothing was spent), or SL_ERROR.
 */
static int ask_model(run_ctx *x, git_repository *repo, const sl_target *t, attempt_state *s,
		     const history *hist, size_t nhist, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	sl_prompt_vars vars = { 0 };
	sl_chat_msg *msgs = NULL;
	size_t nmsgs = 0;
	int rc, r;

	s->a.source = (char *)sl_provider_kind_name(spec->provider);
	if (read_blob_text(&s->file, repo, t->blob, err))
		return SL_ERROR;
	vars.path = t->path;
	vars.language = t->lang;
	vars.unit = t->unit_text;
	vars.file = s->file.buf;
	vars.instructions = spec->instructions ? spec->instructions : "";
	if (spec->job == SL_JOB_FIX) {
		sl_fix_finding_text(&x->findings, t, &s->finding);
		vars.finding = s->finding.buf;
		/* the default template has no {{finding}}: the findings follow the instructions */
		if (!spec->prompt) {
			sl_buf_addf(&s->fix_instr, "%s\n\nThe analyzer's findings in this part "
				    "(fix their cause; do not suppress them, do not delete the "
				    "code):\n%s", vars.instructions, s->finding.buf);
			vars.instructions = s->fix_instr.buf;
		}
	}
	if (spec->job == SL_JOB_TESTGEN) {
		sl_buf_addf(&s->fix_instr, "%s\n\nWrite one test for the part to change above, "
			    "in a new or an existing test file matching ", vars.instructions);
		for (size_t i = 0; i < spec->test_paths.n; i++)
			sl_buf_addf(&s->fix_instr, "%s%s", i ? " or " : "", spec->test_paths.v[i]);
		sl_buf_adds(&s->fix_instr, ", and do not change any other file.");
		if (spec->test_template)
			sl_buf_addf(&s->fix_instr, "  Follow this template:\n%s", spec->test_template);
		vars.instructions = s->fix_instr.buf;
	}
	vars.feedback = nhist ? hist[nhist - 1].feedback : "";
	if (spec->context_tokens && (!spec->prompt || strstr(spec->prompt, "context"))) {
		if (sl_context_build(&s->context, repo, &x->c->base, t, spec->context_tokens, err))
			return SL_ERROR;
		vars.context = s->context.buf;
	}
	vars.start_line = t->start_line;
	vars.end_line = t->end_line;
	vars.edit_format = spec->edit_format;
	if (sl_prompt_render(&s->prompt, spec->prompt ? spec->prompt : sl_prompt_default_template,
			     &vars, err))
		return SL_EINPUT;
	build_chat(&s->prompt, &msgs, &nmsgs, sl_prompt_system(spec->edit_format), hist, nhist);
	s->chat = chat_text(msgs, nmsgs);
	s->a.prompt = s->chat;

	/* the request, and at most one format-correction round after it */
	for (int round = 0; round < 2; round++) {
		int64_t tin, tout, est_in = estimate_tokens(msgs, nmsgs), cap = reply_cap(spec);
		double cost, est_cost = cost_of(spec, est_in, cap);
		sl_reply_rec jr;

		sl_completion_release(&s->comp);
		sl_completion_init(&s->comp);
		/* they pointed into the released completion and the cleared error */
		s->a.reply = NULL;
		s->a.error = NULL;
		sl_err_clear(&s->aerr);

		/* a reply journalled before a crash is taken, never paid for again */
		rc = sl_journal_reply_get(x->st, s->a.target_id, s->a.n, round, &jr, err);
		if (rc != SL_OK && rc != SL_ENOTFOUND) {
			free(msgs);
			return SL_ERROR;
		}
		if (rc == SL_OK && !journal_matches(spec, &jr, msgs, nmsgs)) {
			/* recorded for another request (the campaign changed): ask again */
			sl_reply_rec_release(&jr);
			rc = SL_ENOTFOUND;
		}
		if (rc == SL_OK) {
			sl_err_clear(err);
			from_journal(s, &jr);
			tin = jr.tokens_in > 0 ? jr.tokens_in : 0;
			tout = jr.tokens_out > 0 ? jr.tokens_out : 0;
			cost = jr.cost;
			sl_reply_rec_release(&jr);
		} else {
			sl_err_clear(err);
			sem_wait(&x->model_slots);
			r = reserve(x, est_in + cap, est_cost);
			if (r) {
				sem_post(&x->model_slots);
				free(msgs);
				/* a correction round cut short leaves the format error */
				if (round && r == 1)
					return SL_OK;
				if (r == 3) {
					s->transient = 1;
					sl_buf_reset(&s->feedback);
					sl_buf_adds(&s->feedback, "the run was stopped before the request");
					return SL_OK;
				}
				/* another worker broke the run: the target stays pending */
				return r == 2 ? sl_err_set(err, SL_ERROR, "the run was stopped") :
					SL_EBUDGET;
			}
			rc = sl_provider_complete(x->provider, msgs, nmsgs, &s->comp, &s->aerr);
			sem_post(&x->model_slots);
			tin = tout = 0;
			if (!rc)
				check_usage(x, s, est_in, cap, &tin, &tout);
			cost = cost_of(spec, tin, tout);
			settle(x, est_in + cap, est_cost, tin + tout, cost);
			if (!rc && (r = journal_reply(x, s, round, tin, tout, cost, err))) {
				free(msgs);
				return r;
			}
			if (!rc && x->opts->record &&
			    sl_replay_record(x->opts->record, s->comp.key, &s->comp, err)) {
				free(msgs);
				return SL_ERROR;
			}
		}

		s->a.tokens_in = (s->a.tokens_in > 0 ? s->a.tokens_in : 0) + tin;
		s->a.tokens_out = (s->a.tokens_out > 0 ? s->a.tokens_out : 0) + tout;
		s->a.latency_ms += s->comp.latency_ms;
		s->a.http_status = s->comp.http_status;
		s->a.retries += s->comp.retries;
		s->a.request = s->comp.request.len ? s->comp.request.buf : NULL;
		s->a.request_key = s->comp.key[0] ? s->comp.key : NULL;
		s->a.cost += cost;
		if (rc && s->aerr.code == SL_EINPUT && spec->provider == SL_PROVIDER_REPLAY) {
			free(msgs);
			return sl_err_set(err, SL_EINPUT, "replay: %s; the run stops (the target "
					  "stays pending)", s->aerr.msg);
		}
		if (rc && (s->comp.transient || interrupted(x))) {
			/* retries ran out on a failure that may pass: not the target's fault */
			s->transient = 1;
			sl_buf_reset(&s->feedback);
			sl_buf_addf(&s->feedback, "%s", s->aerr.msg);
			free(msgs);
			return SL_OK;
		}
		if (rc) {
			s->a.outcome = SL_A_PROVIDER_ERROR;
			s->a.error = s->aerr.msg;
			sl_buf_reset(&s->feedback);
			sl_buf_addf(&s->feedback, "The previous request failed: %s", s->aerr.msg);
			break;
		}
		s->a.reply = s->comp.text.buf;
		s->a.outcome = SL_A_NONE;
		sl_edit_list_release(&s->edits);
		if (spec->edit_format == SL_FORMAT_NODE)
			rc = sl_reply_parse_node(&s->edits, s->comp.text.buf, s->comp.text.len,
						 t->path, t->start_byte, t->end_byte, t->unit_text,
						 &s->aerr);
		else
			rc = sl_reply_parse(&s->edits, s->comp.text.buf, s->comp.text.len,
					    spec->edit_format, &s->aerr);
		if (!rc)
			break;
		if (s->comp.truncated)
			sl_err_prefix(&s->aerr, "the reply was cut at the token limit: ");
		s->a.format_errors++;
		s->a.outcome = SL_A_PARSE_ERROR;
		s->a.error = s->aerr.msg;
		sl_buf_reset(&s->feedback);
		sl_buf_addf(&s->feedback, "Your reply could not be used: %s\n"
			    "Answer again in the required format%s.", s->aerr.msg,
			    s->comp.truncated ? ", and keep it shorter" : "");
		if (round == 0) {
			/* the correction round: the same chat, the reply, what was wrong */
			free(s->correction_reply);
			s->correction_reply = sl_xstrdup(s->comp.text.buf);
			memcpy(s->correction_key, s->comp.key, sizeof(s->correction_key));
			s->a.format_reply = s->correction_reply;
			s->a.format_key = s->correction_key[0] ? s->correction_key : NULL;
			msgs = sl_xrealloc(msgs, sl_st_mult(nmsgs + 2, sizeof(*msgs)));
			msgs[nmsgs++] = (sl_chat_msg){ "assistant", s->correction_reply };
			msgs[nmsgs++] = (sl_chat_msg){ "user", s->feedback.buf };
			free(s->chat);
			s->chat = chat_text(msgs, nmsgs);
			s->a.prompt = s->chat;
		}
	}
	free(msgs);
	return SL_OK;
}

/* Rules on the first attempt: sets s->use_rules when some rule rewrote a site. */
static int try_rules(run_ctx *x, const sl_target *t, attempt_state *s, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	sl_rule *rules = sl_xcalloc(spec->nrules, sizeof(*rules));
	int r;

	for (size_t i = 0; i < spec->nrules; i++) {
		rules[i].capture = spec->rules[i].capture;
		rules[i].template_text = spec->rules[i].template_text;
	}
	r = sl_rules_apply(&s->edits, rules, spec->nrules, t, &s->aerr);
	free(rules);
	if (r < 0)
		return sl_err_set(err, s->aerr.code, "%s", s->aerr.msg);
	s->use_rules = r > 0;
	if (s->use_rules)
		s->a.source = "rules";
	return SL_OK;
}

/* Move a target, in a transaction of its own. */
static int move_target(run_ctx *x, int64_t id, int state, int64_t attempts,
		       const char *reason, sl_err *err)
{
	int ret;

	if ((ret = begin_fenced(x, id, err)))
		return ret;
	if (sl_store_target_update(x->st, id, state, attempts, reason, err)) {
		sl_store_rollback(x->st);
		return SL_ERROR;
	}
	return sl_store_commit(x->st, err);
}

/* Record an attempt that produced no candidate and move the target. */
static int record_plain(run_ctx *x, attempt_state *s, const sl_target_rec *rec,
			int state, int64_t attempts, const char *reason, sl_err *err)
{
	int64_t id;
	int ret;

	if ((ret = begin_fenced(x, rec->id, err)))
		return ret;
	if ((s->a.outcome != SL_A_NONE && sl_store_attempt_add(x->st, &s->a, &id, err)) ||
	    sl_store_target_update(x->st, rec->id, state, attempts, reason, err)) {
		sl_store_rollback(x->st);
		return SL_ERROR;
	}
	return sl_store_commit(x->st, err);
}

typedef struct hunk_scan {
	const sl_target *t;
	int hit;
} hunk_scan;

static int hunk_in_target(const git_diff_delta *delta, const git_diff_hunk *hunk, void *data)
{
	hunk_scan *h = data;
	int64_t first = hunk->old_start, last = hunk->old_start + hunk->old_lines - 1;

	if (!hunk->old_lines)        /* a pure insertion after line old_start */
		last = first = hunk->old_start + 1;
	if (first <= (int64_t)h->t->end_line && last >= (int64_t)h->t->start_line)
		h->hit = 1;
	return 0;
}

/*
 * Does the candidate change the target itself?  A candidate may touch other
 * places too (an include, a caller), but one that leaves its target's lines
 * alone is not a candidate for this target.  1 yes, 0 no (reason in err),
 * negative on a libgit2 failure.
 */
static int touches_target(git_repository *repo, const git_oid *base, const git_oid *commit,
			  const sl_target *t, sl_err *err)
{
	git_commit *bc = NULL, *cc = NULL;
	git_tree *bt = NULL, *ct = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	char *paths[1];
	hunk_scan h = { t, 0 };
	int ret = SL_ERROR;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	paths[0] = t->path;
	opts.pathspec.strings = paths;
	opts.pathspec.count = 1;
	opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	opts.context_lines = 0;
	if (git_commit_lookup(&bc, repo, base) || git_commit_lookup(&cc, repo, commit) ||
	    git_commit_tree(&bt, bc) || git_commit_tree(&ct, cc) ||
	    git_diff_tree_to_tree(&diff, repo, bt, ct, &opts) ||
	    git_diff_foreach(diff, NULL, NULL, hunk_in_target, NULL, &h)) {
		sl_err_set(err, SL_ERROR, "cannot diff the candidate: %s", sl_git_error());
		goto done;
	}
	ret = h.hit;
	if (!h.hit)
		sl_err_set(err, SL_EREFUSED, "the edit does not change the target, lines %u-%u of "
			   "'%s'; change that code", t->start_line, t->end_line, t->path);
done:
	git_diff_free(diff);
	git_tree_free(bt);
	git_tree_free(ct);
	git_commit_free(bc);
	git_commit_free(cc);
	return ret;
}

static int tree_of(char out[GIT_OID_HEXSZ + 1], git_repository *repo, const git_oid *commit,
		   sl_err *err)
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, repo, commit))
		return sl_err_set(err, SL_ERROR, "cannot read candidate: %s", sl_git_error());
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, git_commit_tree_id(c));
	git_commit_free(c);
	return SL_OK;
}

/*
 * Judge a candidate commit: the syntax check and the policy gates on the
 * diff (no checkout), then a worktree and the jailed gates, at most `jobs`
 * candidates at once.  The branch exists afterwards only if every gate
 * passed.  SL_ERROR for machinery failures.
 */
static void candidate_message(sl_buf *msg, const sl_spec *spec, const char *path,
			      long long start, long long end, long long n, const char *source)
{
	sl_buf_addf(msg, "sluice(%s): %s:%lld\n\nCampaign: %s\nTarget: %s:%lld-%lld\n"
		    "Attempt: %lld (%s)\n", spec->name, path, start, spec->name, path, start, end,
		    n, source);
}

/*
 * A run without gates writes each worker's new objects to an in-memory
 * object database (libgit2's mempack) and flushes them as one pack per
 * batch, then creates the batch's branches: no loose file per object and
 * per candidate in the user's .git.  Until its batch is flushed, a
 * proposed candidate's commit and branch exist only in memory, so each is
 * first appended to the worker's journal in the scratch root (before the
 * store records the candidate); the next run restores what a crash lost
 * (restore_journals: the commit is rebuilt from the diff the store holds).
 */
/*
 * Candidates per pack.  libgit2 rescans objects/pack whenever it writes an
 * object it does not have, at a cost that grows with the number of packs,
 * so batches are large: a few tens of MB of objects per worker.
 */
#define BATCH_MAX 4096

typedef struct objbatch {
	git_repository *repo;       /* the worker's */
	git_odb *odb;
	git_odb_backend *mem;       /* owned by odb */
	char *journal;
	int fd;
	char **branch;              /* queued branches, their commits, and the */
	git_oid *commit;            /* targets and lease epochs they were written for */
	int64_t *target, *epoch;
	size_t n, alloc;
	size_t count;               /* candidates written since the last flush */
	git_oid *written;           /* each object the mempack took since the last flush */
	size_t nwritten, awritten;
	int (*mem_write)(git_odb_backend *, const git_oid *, const void *, size_t, git_object_t);
} objbatch;

/* The calling worker's batch, or NULL when objects go straight to disk. */
static _Thread_local objbatch *cur_batch;

/*
 * The mempack's write, noting each object: the flush packs exactly these.
 * (git_mempack_dump would add each commit's whole tree, every blob of the
 * base included: a walk of the whole tree per candidate.)
 */
static int batch_write(git_odb_backend *be, const git_oid *oid, const void *data, size_t len,
		       git_object_t type)
{
	objbatch *b = cur_batch;
	int rc;

	if (!b || b->mem != be) {
		git_error_set_str(GIT_ERROR_ODB, "object written outside its worker's batch");
		return GIT_ERROR;
	}
	if (!(rc = b->mem_write(be, oid, data, len, type))) {
		SL_ALLOC_GROW(b->written, b->nwritten + 1, b->awritten);
		git_oid_cpy(&b->written[b->nwritten++], oid);
	}
	return rc;
}

static int batch_open(objbatch *b, run_ctx *x, git_repository *repo, size_t seq, sl_err *err)
{
	sl_buf path = SL_BUF_INIT;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	b->repo = repo;
	sl_buf_addf(&path, "%s/journal-%ld-%zu", x->scratch, (long)getpid(), seq);
	b->journal = sl_buf_detach(&path, NULL);
	if ((b->fd = open(b->journal, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
			  0600)) < 0)
		return sl_err_set(err, SL_ERROR, "cannot create '%s': %s", b->journal,
				  strerror(errno));
	if (git_repository_odb(&b->odb, repo) || git_mempack_new(&b->mem) ||
	    git_odb_add_backend(b->odb, b->mem, 1000)) {
		if (b->mem && b->mem->free)
			b->mem->free(b->mem);
		b->mem = NULL;
		return sl_err_set(err, SL_ERROR, "cannot set up an object database in memory: %s",
				  sl_git_error());
	}
	b->mem_write = b->mem->write;
	b->mem->write = batch_write;
	return SL_OK;
}

/* The objects the batch's mempack took, as one pack in *pack. */
static int pack_written(git_buf *pack, objbatch *b)
{
	git_packbuilder *pb = NULL;
	int rc;

	if ((rc = git_packbuilder_new(&pb, b->repo)))
		return rc;
	git_packbuilder_set_threads(pb, 1);
	for (size_t i = 0; !rc && i < b->nwritten; i++)
		rc = git_packbuilder_insert(pb, &b->written[i], NULL);
	if (!rc)
		rc = git_packbuilder_write_buf(pack, pb);
	git_packbuilder_free(pb);
	return rc;
}

/* Forget queued branch i: the flush will not write it. */
static void batch_forget(objbatch *b, size_t i)
{
	size_t rest = b->n - i - 1;

	free(b->branch[i]);
	memmove(b->branch + i, b->branch + i + 1, rest * sizeof(*b->branch));
	memmove(b->commit + i, b->commit + i + 1, rest * sizeof(*b->commit));
	memmove(b->target + i, b->target + i + 1, rest * sizeof(*b->target));
	memmove(b->epoch + i, b->epoch + i + 1, rest * sizeof(*b->epoch));
	b->n--;
}

/*
 * Under git_lock, before the flush writes the branches: forget those of
 * targets another run took over since they were queued (the check and the
 * write one step, as fenced_branch), so that run's branch is left alone
 * and the others are written.
 */
static int batch_drop_lost(run_ctx *x, objbatch *b, sl_err *err)
{
	for (size_t i = b->n; i-- > 0;) {
		int r = sl_lease_check(x->st, b->target[i], x->owner, b->epoch[i], err);

		if (r && r != SL_ELEASE)
			return r;
		if (!r)
			continue;
		pthread_mutex_lock(&x->lock);
		x->lost++;
		pthread_mutex_unlock(&x->lock);
		notice(x, "branch '%s' left to another run: %s", b->branch[i], err->msg);
		sl_err_clear(err);
		batch_forget(b, i);
	}
	return SL_OK;
}

/* The batch's branches in one packed-refs update, but for those another run wrote. */
static int batch_branches(run_ctx *x, objbatch *b, sl_err *err)
{
	int ret = sl_branches_write_packed(b->repo, b->branch, b->commit, b->n, err);

	if (ret != SL_ELEASE)
		return ret;
	/* the others are written: that one is the other run's */
	notice(x, "%s", err->msg);
	sl_err_clear(err);
	return SL_OK;
}

/* Write the batch's objects as one pack, then its branches; empty the journal. */
static int batch_flush(run_ctx *x, objbatch *b, sl_err *err)
{
	git_buf pack = { 0 };
	git_odb_writepack *wp = NULL;
	git_indexer_progress prog;
	int ret = SL_ERROR;

	if (!b->mem || !b->count)
		return SL_OK;
	memset(&prog, 0, sizeof(prog));
	git_lock_take(x);
	if (batch_drop_lost(x, b, err))
		goto done;
	if (pack_written(&pack, b) || git_odb_write_pack(&wp, b->odb, NULL, NULL) ||
	    wp->append(wp, pack.ptr, pack.size, &prog) || wp->commit(wp, &prog)) {
		sl_err_set(err, SL_ERROR, "cannot write a pack of candidates: %s", sl_git_error());
		goto done;
	}
	if (batch_branches(x, b, err))
		goto done;
	git_mempack_reset(b->mem);
	b->nwritten = 0;
	if (ftruncate(b->fd, 0)) {
		sl_err_set(err, SL_ERROR, "cannot truncate '%s': %s", b->journal, strerror(errno));
		goto done;
	}
	for (size_t i = 0; i < b->n; i++)
		free(b->branch[i]);
	b->n = b->count = 0;
	ret = SL_OK;
done:
	git_lock_give(x);
	if (wp)
		wp->free(wp);
	git_buf_dispose(&pack);
	return ret;
}

/*
 * Queue a proposed candidate's branch (for target_id, held with the
 * worker's lease epoch): journal first, then memory.
 */
static int batch_queue(objbatch *b, int64_t target_id, const char *branch,
		       const git_oid *commit, const char *source, sl_err *err)
{
	char hex[GIT_OID_HEXSZ + 1];
	sl_buf line = SL_BUF_INIT;
	int ret = SL_OK;

	git_oid_tostr(hex, sizeof(hex), commit);
	sl_buf_addf(&line, "%s %s %s\n", hex, source, branch);
	if (sl_write_all(b->fd, line.buf, line.len))
		ret = sl_err_set(err, SL_ERROR, "cannot write '%s': %s", b->journal,
				 strerror(errno));
	sl_buf_release(&line);
	if (ret)
		return ret;
	if (b->n == b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 64;
		b->branch = sl_xrealloc(b->branch, sl_st_mult(b->alloc, sizeof(*b->branch)));
		b->commit = sl_xrealloc(b->commit, sl_st_mult(b->alloc, sizeof(*b->commit)));
		b->target = sl_xrealloc(b->target, sl_st_mult(b->alloc, sizeof(*b->target)));
		b->epoch = sl_xrealloc(b->epoch, sl_st_mult(b->alloc, sizeof(*b->epoch)));
	}
	b->branch[b->n] = sl_xstrdup(branch);
	b->target[b->n] = target_id;
	b->epoch[b->n] = cur_epoch;
	git_oid_cpy(&b->commit[b->n++], commit);
	return SL_OK;
}

/*
 * Forget a queued branch whose candidate the store did not record: the next
 * flush must not create it.  Its journal line stays; restore_line skips it.
 */
static void batch_unqueue(objbatch *b, const char *branch)
{
	for (size_t i = b->n; i-- > 0;) {
		if (!strcmp(b->branch[i], branch)) {
			batch_forget(b, i);
			return;
		}
	}
}

/*
 * Tests (SLUICE_TEST_STOP_BEFORE_FLUSH): stop the whole process once every
 * worker waits to flush and the lease keeper is not writing, so that no
 * thread holds a store transaction while the test works on the store.  The
 * last worker to arrive raises SIGSTOP holding x->lock; after SIGCONT the
 * workers flush.
 */
static void stop_for_test(run_ctx *x)
{
	pthread_mutex_lock(&x->lock);
	if (++x->at_flush < x->nworkers) {
		while (x->at_flush && x->at_flush < x->nworkers)
			pthread_cond_wait(&x->end_cond, &x->lock);
		pthread_mutex_unlock(&x->lock);
		return;
	}
	while (x->renewing)
		pthread_cond_wait(&x->end_cond, &x->lock);
	raise(SIGSTOP);
	x->at_flush = 0;
	pthread_cond_broadcast(&x->end_cond);
	pthread_mutex_unlock(&x->lock);
}

/* Flush what is left; the journal goes once everything it holds is on disk. */
static int batch_close(run_ctx *x, objbatch *b, sl_err *err)
{
	int ret = SL_OK;

	if (b->mem && getenv("SLUICE_TEST_KILL_BEFORE_FLUSH"))
		raise(SIGKILL);
	if (b->mem && getenv("SLUICE_TEST_STOP_BEFORE_FLUSH"))
		stop_for_test(x);
	if (b->mem)
		ret = batch_flush(x, b, err);
	if (b->fd >= 0)
		close(b->fd);
	if (!ret && b->journal)
		unlink(b->journal);
	for (size_t i = 0; i < b->n; i++)
		free(b->branch[i]);
	free(b->branch);
	free(b->commit);
	free(b->target);
	free(b->epoch);
	free(b->written);
	free(b->journal);
	git_odb_free(b->odb);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	return ret;
}

/* 1 if the process named by a journal's PID is gone. */
static int journal_orphaned(const char *name)
{
	char *end;
	long pid = strtol(name + strlen("journal-"), &end, 10);

	if (pid <= 0 || *end != '-' || pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* The branches a journal gives back, written as one packed-refs update. */
typedef struct restored {
	sl_strvec branch;
	git_oid *commit;
	size_t alloc;
} restored;

/* Restore one journal line "COMMIT SOURCE BRANCH" of a crashed run (its branch into out). */
static int restore_line(run_ctx *x, char *line, sl_candidate_rec *cands, size_t ncands,
			restored *out, sl_err *err)
{
	git_repository *repo = x->c->repo;
	char *src = strchr(line, ' '), *branch = src ? strchr(src + 1, ' ') : NULL;
	git_reference *ref = NULL;
	git_commit *c = NULL;
	sl_candidate_rec *cr = NULL;
	git_oid oid;
	sl_buf name = SL_BUF_INIT, msg = SL_BUF_INIT;
	int ret = SL_OK;

	if (!branch)
		return SL_OK;
	*src++ = '\0';
	*branch++ = '\0';
	sl_buf_addf(&name, "refs/heads/%s", branch);
	if (!git_reference_lookup(&ref, repo, name.buf) || git_oid_fromstr(&oid, line))
		goto done;
	for (size_t i = 0; i < ncands && !cr; i++)
		if (cands[i].commit_oid && !strcmp(cands[i].commit_oid, line) &&
		    cands[i].branch && !strcmp(cands[i].branch, branch))
			cr = &cands[i];
	/* never recorded (the store failed, or the kill came first): its commit
	   may be in a pack all the same, but nothing was proposed */
	if (!cr)
		goto done;
	if (git_commit_lookup(&c, repo, &oid)) {
		/* its pack was never written: rebuild it from the stored diff */
		char hex[GIT_OID_HEXSZ + 1];

		if (!cr->diff)
			goto done;
		candidate_message(&msg, x->c->spec, cr->path, (long long)cr->start_line,
				  (long long)cr->end_line, (long long)cr->attempt_n, src);
		if ((ret = sl_commit_from_diff(&oid, repo, &x->c->base, cr->diff, msg.buf, err)))
			goto done;
		git_oid_tostr(hex, sizeof(hex), &oid);
		if ((ret = sl_store_candidate_set_commit(x->st, cr->id, hex, err)))
			goto done;
	}
	SL_ALLOC_GROW(out->commit, out->branch.n + 1, out->alloc);
	git_oid_cpy(&out->commit[out->branch.n], &oid);
	sl_strvec_push(&out->branch, branch);
done:
	git_commit_free(c);
	git_reference_free(ref);
	sl_buf_release(&name);
	sl_buf_release(&msg);
	return ret;
}

/* Read one orphaned journal's lines into got. */
static int restore_journal(run_ctx *x, const char *path, sl_candidate_rec *cands,
			   size_t ncands, restored *got, sl_err *err)
{
	sl_buf text = SL_BUF_INIT;
	char *line, *next;
	int ret;

	if ((ret = sl_read_file(&text, path, 0, err)))
		goto done;
	for (line = text.buf; !ret && line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		ret = restore_line(x, line, cands, ncands, got, err);
	}
done:
	sl_buf_release(&text);
	return ret;
}

/*
 * Give the candidates crashed runs proposed without flushing them their
 * commits and branches: every orphaned journal read, the branches written
 * in one packed-refs update, then the journals removed.  Under git_lock:
 * other runs starting now see the same journals; one restores them and the
 * others find them gone.
 */
static int restore_journals(run_ctx *x, sl_err *err)
{
	DIR *d = opendir(x->scratch);
	struct dirent *de;
	sl_candidate_rec *cands = NULL;
	sl_strvec done = SL_STRVEC_INIT;
	restored got = { SL_STRVEC_INIT, NULL, 0 };
	size_t ncands = 0;
	int loaded = 0, ret = SL_OK;

	if (!d)
		return SL_OK;
	git_lock_take(x);
	while (!ret && (de = readdir(d))) {
		char *path;

		if (strncmp(de->d_name, "journal-", 8) || !journal_orphaned(de->d_name))
			continue;
		path = sl_path_join(x->scratch, de->d_name);
		if (!loaded)
			ret = sl_store_candidates(x->st, x->campaign_id, SL_C_PASSED, &cands,
						  &ncands, err);
		loaded = 1;
		if (!ret && !(access(path, F_OK) && errno == ENOENT) &&
		    !(ret = restore_journal(x, path, cands, ncands, &got, err)))
			sl_strvec_push(&done, path);
		free(path);
	}
	if (!ret)
		ret = sl_branches_write_packed(x->c->repo, got.branch.v, got.commit, got.branch.n,
					       err);
	for (size_t i = 0; !ret && i < done.n; i++)
		unlink(done.v[i]);
	git_lock_give(x);
	closedir(d);
	sl_strvec_release(&done);
	sl_strvec_release(&got.branch);
	free(got.commit);
	sl_candidate_list_free(cands, ncands);
	return ret;
}

/*
 * Create a candidate's branch (the caller holds git_lock) only while the
 * worker still holds its target: a run that lost the lease writes no branch
 * (SL_ELEASE).  Under git_lock the check and the write are one step for
 * every sluice process, and the run that took the target over deletes what
 * was there before it works on the target.
 */
static int fenced_branch(run_ctx *x, git_repository *repo, int64_t target_id,
			 const char *branch, const git_oid *commit, sl_err *err)
{
	int ret = sl_lease_check(x->st, target_id, x->owner, cur_epoch, err);

	return ret ? ret : make_branch(repo, branch, commit, err);
}

/* The cap of a candidate's layer, MiB. */
static unsigned layer_cap(const run_ctx *x)
{
	return x->c->spec->jail.disk_mb ? x->c->spec->jail.disk_mb : 2048;
}

static int judge_candidate(run_ctx *x, git_repository *repo, const sl_target *t,
			   attempt_state *s, const git_oid *commit, const char *branch,
			   sl_gate_outcome *gates, int *passed, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	sl_buf report = SL_BUF_INIT;
	sl_worktree *wt = NULL;
	char wtname[64], tree[GIT_OID_HEXSZ + 1];
	int ok = 0, r = SL_OK;
	int64_t t0 = sl_now_ms();
	sl_gate_run_rec *rec;

	*passed = 0;
	if (cur_batch) {
		if (cur_batch->count >= BATCH_MAX && batch_flush(x, cur_batch, err))
			return SL_ERROR;
		cur_batch->count++;
	}
	if (sl_syntax_check_commit(repo, &x->c->base, commit, &report, &ok, err)) {
		sl_buf_release(&report);
		return SL_ERROR;
	}
	SL_ALLOC_GROW(gates->v, gates->n + 1, gates->alloc);
	rec = &gates->v[gates->n++];
	memset(rec, 0, sizeof(*rec));
	rec->gate = sl_xstrdup("syntax");
	rec->verdict = ok ? SL_VERDICT_PASS : SL_VERDICT_FAIL;
	rec->exit_status = ok ? 0 : 1;
	rec->duration_ms = sl_now_ms() - t0;
	rec->output_bytes = (int64_t)report.len;
	rec->output_tail = sl_xstrdup(report.buf);
	if (!ok) {
		sl_buf_addf(&s->feedback, "The candidate does not parse; nothing was built. "
			    "Syntax errors it adds:\n%s", report.buf);
		sl_buf_release(&report);
		return SL_OK;
	}
	sl_buf_release(&report);
	if (sl_gating_policy(x->gating, s->diff.buf, gates, passed, &s->feedback, err))
		return SL_ERROR;
	if (!*passed)
		return SL_OK;

	sem_wait(&x->gate_slots);
	if (!spec->ngates) {
		/* nothing to run: no checkout, the branch is the proposal */
		if (cur_batch) {
			r = batch_queue(cur_batch, s->a.target_id, branch, commit, s->a.source,
					err);
		} else {
			git_lock_take(x);
			r = fenced_branch(x, repo, s->a.target_id, branch, commit, err);
			git_lock_give(x);
		}
		*passed = !r;
	} else if (x->warm) {
		/* the warm base below, the candidate's own layer above: no checkout */
		sl_gate_tree gt = { sl_warm_tree(x->warm), NULL, 0 };
		char *layer = NULL;
		int capped = 0;
		int64_t tree_t0 = sl_now_ms();

		r = tree_of(tree, repo, commit, err);
		git_lock_take(x);
		if (!r)
			r = fenced_branch(x, repo, s->a.target_id, branch, commit, err);
		git_lock_give(x);
		if (!r)
			r = sl_warm_layer_add(&layer, &capped, x->warm, repo, commit, layer_cap(x),
					      err);
		s->tree = "overlay";
		s->tree_ms = sl_now_ms() - tree_t0;
		gt.layer = layer;
		gt.layer_cap_mb = capped ? 0 : layer_cap(x);
		if (!r)
			r = sl_gating_run(x->gating, &gt, tree, s->diff.buf, t, gates, passed,
					  &s->feedback, err);
		if (layer && sl_warm_layer_remove(layer, r ? NULL : err))
			r = SL_ERROR;
		free(layer);
	} else {
		sl_gate_tree gt = { NULL, NULL, 0 };
		int64_t tree_t0 = sl_now_ms();

		pthread_mutex_lock(&x->lock);
		snprintf(wtname, sizeof(wtname), "sl-%ld-%zu", (long)getpid(), ++x->seq);
		pthread_mutex_unlock(&x->lock);
		r = tree_of(tree, repo, commit, err);
		git_lock_take(x);
		if (!r)
			r = fenced_branch(x, repo, s->a.target_id, branch, commit, err);
		if (!r)
			r = sl_worktree_add(&wt, repo, x->scratch, wtname, branch, commit, err);
		git_lock_give(x);
		s->tree = "worktree";
		s->tree_ms = sl_now_ms() - tree_t0;
		if (!r) {
			gt.dir = sl_worktree_path(wt);
			r = sl_gating_run(x->gating, &gt, tree, s->diff.buf, t, gates, passed,
					  &s->feedback, err);
		}
		git_lock_take(x);
		if (wt && sl_worktree_remove(wt, r ? NULL : err))
			r = SL_ERROR;
		git_lock_give(x);
	}
	sem_post(&x->gate_slots);
	if (r)
		return r;
	git_lock_take(x);
	r = *passed ? SL_OK : sl_branch_delete_matching(repo, branch, commit, err);
	git_lock_give(x);
	return r;
}

/*
 * Rules only, and none applies (or their candidate failed): nothing to try.
 * Records the target skipped (attempt 1) or failed.
 */
static int record_nothing_to_try(run_ctx *x, attempt_state *s, const sl_target_rec *rec,
				 int64_t n, sl_err *err)
{
	const char *why = n == 1 ? "no rule applies to this target" :
		"the rules' candidate failed and there is no model to retry";

	if (n == 1) {
		s->a.source = "rules";
		s->a.outcome = SL_A_NO_EDIT;
		s->a.error = (char *)why;
	}
	return record_plain(x, s, rec, n == 1 ? SL_T_SKIPPED : SL_T_FAILED, n == 1 ? 1 : n - 1,
			    why, err);
}

/*
 * Ask the model.  *ended is set when the attempt ends here, recorded: a
 * budget ran out before the request, or the endpoint failed after its
 * retries (or the run is stopping) and the target waits for the next run.
 */
static int model_step(run_ctx *x, git_repository *repo, const sl_target *t, attempt_state *s,
		      const sl_target_rec *rec, int64_t n, const history *hist, size_t nhist,
		      int *ended, sl_err *err)
{
	sl_buf msg = SL_BUF_INIT;
	int r = ask_model(x, repo, t, s, hist, nhist, err);

	if (r == SL_EBUDGET) {
		pthread_mutex_lock(&x->lock);
		r = record_plain(x, s, rec, SL_T_BUDGET, n - 1, x->stop_reason, err);
		pthread_mutex_unlock(&x->lock);
		*ended = !r;
		return r;
	}
	if (r || !s->transient)
		return r;
	/* the attempt does not count */
	sl_buf_addf(&msg, "the model request failed (%s); the next run tries again",
		    s->feedback.buf);
	r = move_target(x, rec->id, SL_T_PENDING, n - 1, msg.buf, err);
	sl_buf_release(&msg);
	if (r)
		return r;
	/* a request cut at the wall-time deadline is the budget's stop, not the endpoint's fault */
	pthread_mutex_lock(&x->lock);
	x->transient += !interrupted(x) && !budget_reached(x);
	pthread_mutex_unlock(&x->lock);
	*ended = 1;
	return SL_OK;
}

/*
 * Place the attempt's edits on the base and commit them (*commit).  Sets
 * s->a.outcome: a candidate, or an apply error whose reason goes to the
 * feedback.  Returns an error code only when the machinery broke.
 */
static int build_candidate(run_ctx *x, git_repository *repo, const sl_target *t,
			   attempt_state *s, int64_t n, git_oid *commit, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	sl_apply_opts ao = SL_APPLY_OPTS_INIT;
	sl_buf msg = SL_BUF_INIT;
	int r;

	candidate_message(&msg, spec, t->path, (long long)t->start_line, (long long)t->end_line,
			  (long long)n, s->a.source);
	ao.allowed_globs = (const char *const *)spec->paths.v;
	ao.nglobs = spec->paths.n;
	if (spec->job == SL_JOB_TESTGEN) {
		/* a generated test goes only where tests live */
		ao.allowed_globs = (const char *const *)spec->test_paths.v;
		ao.nglobs = spec->test_paths.n;
	}
	r = sl_apply_edits_ext(commit, &s->diff, repo, &x->c->base, &s->edits, msg.buf, &ao,
			       &s->report, &s->aerr);
	sl_buf_release(&msg);
	if (s->report.n) {
		sl_apply_report_json(&s->report_json, &s->report);
		s->a.apply_report = s->report_json.buf;
	}
	if (r) {
		if (s->aerr.code != SL_EREFUSED && s->aerr.code != SL_EINPUT)
			return sl_err_set(err, s->aerr.code, "%s", s->aerr.msg);
		s->a.outcome = SL_A_APPLY_ERROR;
		s->a.error = s->aerr.msg;
		sl_buf_addf(&s->feedback, "Your edit could not be applied: %s", s->aerr.msg);
	} else if (spec->job == SL_JOB_TESTGEN) {
		/* the test must leave its target alone: the mutants gate checks */
		s->a.outcome = SL_A_CANDIDATE;
	} else if ((r = touches_target(repo, &x->c->base, commit, t, &s->aerr)) < 0) {
		return sl_err_set(err, s->aerr.code, "%s", s->aerr.msg);
	} else if (!r) {
		s->a.outcome = SL_A_APPLY_ERROR;
		s->a.error = s->aerr.msg;
		sl_buf_addf(&s->feedback, "Your edit could not be used: %s", s->aerr.msg);
	} else {
		s->a.outcome = SL_A_CANDIDATE;
	}
	return SL_OK;
}

/*
 * Gate the candidate.  *ended is set when the run stopped during its gates:
 * no verdict, its branch is gone, nothing is recorded and the next run judges
 * it again (the reply is journalled).
 */
static int judge_step(run_ctx *x, git_repository *repo, const sl_target *t, attempt_state *s,
		      const git_oid *commit, const char *branch, sl_gate_outcome *gates,
		      int *passed, int *ended, sl_err *err)
{
	int r;

	if ((r = judge_candidate(x, repo, t, s, commit, branch, gates, passed, err)))
		return r;
	if (*passed || !interrupted(x))
		return SL_OK;
	git_lock_take(x);
	r = sl_branch_delete_matching(repo, branch, commit, err);
	git_lock_give(x);
	*ended = !r;
	return r ? SL_ERROR : SL_OK;
}

/*
 * Record the attempt, its candidate and gate runs, and move the target, in
 * one transaction.  *done is set when the target reached a final state.
 */
static int record_attempt(run_ctx *x, attempt_state *s, const sl_target_rec *rec, int64_t n,
			  const char *branch, const git_oid *commit, sl_gate_outcome *gates,
			  int passed, const char *feedback, int *done, sl_err *err)
{
	sl_candidate_rec cand = { 0 };
	char hex[GIT_OID_HEXSZ + 1];
	int64_t attempt_id = 0, cand_id = 0;
	int last, ret;

	if ((ret = begin_fenced(x, rec->id, err)))
		return ret;
	if (sl_store_attempt_add(x->st, &s->a, &attempt_id, err) ||
	    sl_journal_attempt_note(x->st, attempt_id, passed ? NULL : feedback,
				    s->usage_note[0] ? s->usage_note : NULL, err))
		goto fail;
	if (branch) {
		git_oid_tostr(hex, sizeof(hex), commit);
		cand.attempt_id = attempt_id;
		cand.target_id = rec->id;
		cand.diff = s->diff.buf;
		cand.commit_oid = hex;
		cand.state = passed ? SL_C_PASSED : SL_C_FAILED;
		cand.branch = passed ? (char *)branch : NULL;
		cand.tree = (char *)s->tree;
		cand.tree_ms = s->tree_ms;
		if (sl_store_candidate_add(x->st, &cand, &cand_id, err))
			goto fail;
		for (size_t g = 0; g < gates->n; g++) {
			gates->v[g].candidate_id = cand_id;
			if (sl_store_gate_run_add(x->st, &gates->v[g], err))
				goto fail;
		}
	}
	last = passed || n >= attempt_limit(x, rec) || (s->use_rules && !x->provider);
	if (sl_store_target_update(x->st, rec->id, passed ? SL_T_PROPOSED :
				   last ? SL_T_FAILED : SL_T_PENDING, n,
				   passed ? NULL : s->feedback.buf, err) ||
	    (last && sl_lease_set_digest(x->st, rec->id, x->digest, err)) ||
	    sl_store_commit(x->st, err))
		goto fail;
	*done = last;
	return SL_OK;
fail:
	sl_store_rollback(x->st);
	return SL_ERROR;
}

/*
 * One attempt at a target: get edits, build the candidate, gate it, record
 * everything in one transaction.  *done is set when the target reached a
 * final state.  Returns SL_ERROR only for machinery failures (the attempt is
 * then not recorded and the target stays pending for a later run).
 */
static int attempt(run_ctx *x, git_repository *repo, sl_target_rec *rec, const sl_target *t,
		   int64_t n, history **hist, size_t *nhist, size_t *ahist, int *done, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	attempt_state s;
	sl_gate_outcome gates = { NULL, 0, 0 };
	sl_buf fb = SL_BUF_INIT;
	char *branch = NULL;
	int passed = 0, ret = SL_ERROR, ended = 0;
	git_oid commit;

	attempt_state_init(&s, rec, n);
	memset(&commit, 0, sizeof(commit));
	*done = 0;
	if (n == 1 && spec->nrules && try_rules(x, t, &s, err))
		goto done;
	if (!s.use_rules && !x->provider) {
		if ((ret = record_nothing_to_try(x, &s, rec, n, err)))
			goto done;
		ended = 1;
	} else if (!s.use_rules &&
		   (ret = model_step(x, repo, t, &s, rec, n, *hist, *nhist, &ended, err))) {
		goto done;
	}
	if (ended) {
		*done = 1;
		ret = SL_OK;
		goto done;
	}
	if (s.a.outcome == SL_A_NONE && (ret = build_candidate(x, repo, t, &s, n, &commit, err)))
		goto done;
	if (s.a.outcome == SL_A_CANDIDATE) {
		branch = branch_name(spec->branch_prefix, rec, &x->index);
		if ((ret = judge_step(x, repo, t, &s, &commit, branch, &gates, &passed, &ended,
				      err)))
			goto done;
		if (ended) {
			*done = 1;
			ret = SL_OK;
			goto done;
		}
	}
	if (s.use_rules)
		sl_buf_addf(&fb, "A deterministic rewrite was tried first and failed. "
			    "Its diff:\n```diff\n%s```\n%s", s.diff.buf, s.feedback.buf);
	else
		sl_buf_adds(&fb, s.feedback.buf);
	if ((ret = record_attempt(x, &s, rec, n, branch, &commit, &gates, passed, fb.buf, done,
				  err)))
		goto done;
	if (!passed) {
		history *h;

		SL_ALLOC_GROW(*hist, *nhist + 1, *ahist);
		h = &(*hist)[(*nhist)++];
		h->reply = s.comp.text.len ? sl_xstrdup(s.comp.text.buf) : NULL;
		h->feedback = sl_buf_detach(&fb, NULL);
	}
	ret = SL_OK;
done:
	if (branch && ret) {
		/* only the branch this attempt wrote: another run may hold the target now */
		if (cur_batch)
			batch_unqueue(cur_batch, branch);
		git_lock_take(x);
		sl_branch_delete_matching(repo, branch, &commit, NULL);
		git_lock_give(x);
	}
	sl_gate_outcome_release(&gates);
	free(branch);
	attempt_state_release(&s);
	sl_buf_release(&fb);
	return ret;
}

static int process_target(run_ctx *x, git_repository *repo, sl_target_rec *rec,
			  const sl_target *t, sl_err *err)
{
	history *hist = NULL;
	size_t nhist = 0, ahist = 0;
	int ret = SL_OK, done = 0;
	char *branch = branch_name(x->c->spec->branch_prefix, rec, &x->index);

	/* the conversation so far: earlier replies and what went wrong with them */
	if (rec->attempts > 0 && sl_journal_history(x->st, rec->id, &hist, &nhist, err)) {
		free(branch);
		return SL_ERROR;
	}
	ahist = nhist;

	/* the target has no passed candidate: a branch of its name is what a run
	   killed during the gates of one of its candidates left behind, and so
	   is a lock file of that branch (this run holds the target's lease: no
	   one else may be writing it; checked under git_lock, the way a branch
	   is written) */
	git_lock_take(x);
	ret = sl_lease_check(x->st, rec->id, x->owner, cur_epoch, err);
	if (!ret) {
		sl_buf lock = SL_BUF_INIT;

		sl_buf_addf(&lock, "%srefs/heads/%s.lock", git_repository_path(repo), branch);
		if (unlink(lock.buf) && errno != ENOENT)
			ret = sl_err_set(err, SL_ERROR, "cannot remove stale lock '%s': %s",
					 lock.buf, strerror(errno));
		sl_buf_release(&lock);
	}
	if (!ret)
		ret = sl_branch_delete(repo, branch, err);
	git_lock_give(x);
	free(branch);
	for (int64_t n = rec->attempts + 1;
	     !ret && !done && !interrupted(x) && n <= attempt_limit(x, rec); n++)
		if ((ret = attempt(x, repo, rec, t, n, &hist, &nhist, &ahist, &done, err)))
			break;
	if (!ret && !done && !interrupted(x)) {
		/* attempts were used up in an earlier run */
		ret = move_target(x, rec->id, SL_T_FAILED, rec->attempts, "attempts exhausted",
				  err);
	}
	sl_turn_list_free(hist, nhist);
	return ret;
}

static const sl_target *find_target(const target_index *ix, const sl_target_rec *rec,
				    sl_buf *tmp)
{
	size_t lo = 0, hi = ix->list->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const sl_target *o = &ix->list->v[ix->by_key[mid]];
		int c = cmp_key(rec->path, rec->start_byte, rec->end_byte, o);

		if (!c) {
			key_of(tmp, o);
			return strcmp(tmp->buf, rec->key) ? NULL : o;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* After a target finished: progress line and the early-stop rule. */
static void finished_one(run_ctx *x, const sl_target_rec *after)
{
	const sl_spec *spec = x->c->spec;
	int final = after->state != SL_T_BUDGET && after->state != SL_T_SKIPPED;

	pthread_mutex_lock(&x->lock);
	if (final)
		x->finished++;
	if (after->state == SL_T_PROPOSED)
		x->passed_now++;
	if (x->opts->progress) {
		int64_t el = sl_now_ms() - x->start_ms;
		double per_min = el > 0 ? 60000.0 * (double)x->finished / (double)el : 0.0;
		size_t left = x->npending > x->finished ? x->npending - x->finished : 0;
		sl_buf path = SL_BUF_INIT;

		/* a repository's path names may hold escape sequences too */
		sl_term_safe(&path, after->path, strlen(after->path), 0);
		notice(x, "[%zu/%zu] %s:%lld %s after %lld attempt%s | %zu proposed, "
			"%.1f/min, ETA %.0fs, %lld tokens, cost %.4f", x->finished, x->npending,
			path.buf, (long long)after->start_line, sl_target_state_name(after->state),
			(long long)after->attempts, after->attempts == 1 ? "" : "s", x->passed_now,
			per_min, per_min > 0 ? 60.0 * (double)left / per_min : 0.0,
			(long long)x->tokens_used, x->cost_used);
		sl_buf_release(&path);
	}
	if (spec->early_stop_after && !x->stop && x->finished >= spec->early_stop_after &&
	    (double)x->passed_now < spec->early_stop_rate * (double)x->finished) {
		x->stop = 1;
		snprintf(x->stop_reason, sizeof(x->stop_reason),
			 "early stop: %zu of the first %zu targets passed (below %.0f%%)",
			 x->passed_now, x->finished, spec->early_stop_rate * 100);
	}
	pthread_mutex_unlock(&x->lock);
}

static void fail_run(run_ctx *x, const sl_err *err, const sl_target_rec *rec)
{
	pthread_mutex_lock(&x->lock);
	if (!x->failed) {
		x->failed = 1;
		sl_err_set(&x->err, err->code ? err->code : SL_ERROR, "%s", err->msg);
		if (rec)
			sl_err_prefix(&x->err, "%s:%lld: ", rec->path, (long long)rec->start_line);
	}
	pthread_mutex_unlock(&x->lock);
}

/* A target taken over by another run while this one was paused: left to it. */
static void lease_lost(run_ctx *x, const sl_target_rec *rec, const sl_err *err)
{
	sl_buf path = SL_BUF_INIT;

	sl_term_safe(&path, rec->path, strlen(rec->path), 0);
	pthread_mutex_lock(&x->lock);
	x->lost++;
	pthread_mutex_unlock(&x->lock);
	notice(x, "%s:%lld: left to another run: %s", path.buf, (long long)rec->start_line,
	       err->msg);
	sl_buf_release(&path);
}

static void *worker(void *arg)
{
	run_ctx *x = arg;
	git_repository *repo = NULL;
	sl_buf tmp = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	objbatch batch;

	if (git_repository_open_ext(&repo, x->c->repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) ||
	    sl_repo_no_reflog(repo, x->gitconfig, &err)) {
		if (!err.code)
			sl_err_set(&err, SL_ERROR, "cannot open '%s': %s", x->c->repo_path,
				   sl_git_error());
		pthread_mutex_lock(&x->lock);
		if (!x->failed) {
			x->failed = 1;
			x->err = err;
		}
		pthread_mutex_unlock(&x->lock);
		return NULL;
	}
	if (!x->c->spec->ngates) {
		size_t seq;

		pthread_mutex_lock(&x->lock);
		seq = ++x->seq;
		pthread_mutex_unlock(&x->lock);
		if (batch_open(&batch, x, repo, seq, &err)) {
			batch_close(x, &batch, NULL);
			fail_run(x, &err, NULL);
			goto out;
		}
		cur_batch = &batch;
	}
	for (;;) {
		sl_target_rec *rec, after = { 0 };
		const sl_target *t;
		int stop, ret, claimed = 0;

		pthread_mutex_lock(&x->lock);
		if (x->failed || interrupted(x) || x->next >= x->npending) {
			pthread_mutex_unlock(&x->lock);
			break;
		}
		rec = &x->pending[x->next++];
		stop = budget_reached(x);
		pthread_mutex_unlock(&x->lock);

		sl_err_clear(&err);
		/* another run may hold it: only the holder touches its branch */
		if ((ret = sl_lease_claim(x->st, rec->id, x->owner, sl_wall_ms(), x->lease_ttl_ms,
					  &claimed, &cur_epoch, &err))) {
			fail_run(x, &err, rec);
			break;
		}
		if (!claimed) {
			/* held by another run, or finished by one since this run listed it */
			if ((ret = sl_store_target_get(x->st, rec->id, &after, &err))) {
				fail_run(x, &err, rec);
				sl_target_rec_release(&after);
				break;
			}
			pthread_mutex_lock(&x->lock);
			x->held_elsewhere += after.state == SL_T_PENDING || after.state == SL_T_BUDGET;
			pthread_mutex_unlock(&x->lock);
			sl_target_rec_release(&after);
			continue;
		}
		/* it may have moved on since this run listed it */
		if ((ret = sl_store_target_get(x->st, rec->id, &after, &err))) {
			fail_run(x, &err, rec);
			sl_target_rec_release(&after);
			break;
		}
		rec->attempts = after.attempts;
		rec->attempt_base = after.attempt_base;
		sl_target_rec_release(&after);
		memset(&after, 0, sizeof(after));
		t = find_target(&x->index, rec, &tmp);
		if (!t)
			ret = move_target(x, rec->id, SL_T_SKIPPED, rec->attempts,
					  "no longer matches the query", &err);
		else if (stop)
			ret = move_target(x, rec->id, SL_T_BUDGET, rec->attempts,
					  x->stop_reason, &err);
		else
			ret = process_target(x, repo, rec, t, &err);
		if (ret == SL_ELEASE) {
			/* paused past its lease: the target is another run's now */
			lease_lost(x, rec, &err);
			continue;
		}
		if (!ret)
			ret = sl_store_target_get(x->st, rec->id, &after, &err);
		if (ret) {
			fail_run(x, &err, rec);
			sl_target_rec_release(&after);
			break;
		}
		if (after.state == SL_T_PENDING && interrupted(x)) {
			sl_target_rec_release(&after);
			break;
		}
		finished_one(x, &after);
		sl_target_rec_release(&after);
	}
	if (cur_batch) {
		cur_batch = NULL;
		sl_err_clear(&err);
		if (batch_close(x, &batch, &err))
			fail_run(x, &err, NULL);
	}
out:
	sl_buf_release(&tmp);
	git_repository_free(repo);
	return NULL;
}

static int record_campaign(run_ctx *x, sl_err *err)
{
	sl_campaign_rec rec = { 0 }, in = { 0 };
	sl_buf text = SL_BUF_INIT;
	int ret, retried = 0;

again:
	ret = sl_store_campaign_get(x->st, x->c->spec->name, &rec, err);
	if (ret == SL_OK) {
		if (strcmp(rec.repo_path, x->c->repo_path)) {
			ret = sl_err_set(err, SL_EINPUT, "campaign '%s' in this store belongs to "
					 "repository '%s'; use another name or --store",
					 rec.name, rec.repo_path);
			goto done;
		}
		/* resume on the tree the campaign started from */
		if (git_oid_fromstr(&x->c->base, rec.base_oid)) {
			ret = sl_err_set(err, SL_ERROR, "bad base id in store: %s", rec.base_oid);
			goto done;
		}
		git_oid_tostr(x->c->base_hex, sizeof(x->c->base_hex), &x->c->base);
		x->campaign_id = rec.id;
		goto done;
	}
	if (ret != SL_ENOTFOUND)
		goto done;
	sl_err_clear(err);
	if ((ret = sl_read_file(&text, x->c->spec->path, SL_CAP_SPEC_BYTES, err)))
		goto done;
	in.name = x->c->spec->name;
	in.spec_path = x->c->spec->path;
	in.spec_text = text.buf;
	in.repo_path = x->c->repo_path;
	in.base_rev = x->c->spec->base;
	in.base_oid = x->c->base_hex;
	in.branch_prefix = x->c->spec->branch_prefix;
	ret = sl_store_campaign_add(x->st, &in, &x->campaign_id, err);
	if (ret && !retried) {
		/* another run recorded it first: take that one */
		sl_err_clear(err);
		sl_buf_release(&text);
		retried = 1;
		goto again;
	}
done:
	sl_campaign_rec_release(&rec);
	sl_buf_release(&text);
	return ret;
}

static int record_targets(run_ctx *x, const sl_target_list *list, sl_err *err)
{
	sl_buf key = SL_BUF_INIT;
	int ret = SL_ERROR;

	if (sl_store_begin(x->st, err))
		return SL_ERROR;
	for (size_t i = 0; i < list->n; i++) {
		const sl_target *t = &list->v[i];
		sl_target_rec r = { 0 };
		int64_t id;

		key_of(&key, t);
		r.campaign_id = x->campaign_id;
		r.key = key.buf;
		r.path = t->path;
		r.lang = (char *)t->lang;
		r.blob = (char *)t->blob;
		r.unit = (char *)t->unit;
		r.start_byte = t->start_byte;
		r.end_byte = t->end_byte;
		r.start_line = t->start_line;
		r.start_col = t->start_col;
		r.end_line = t->end_line;
		r.end_col = t->end_col;
		r.nsites = (int64_t)t->nsites;
		if (sl_store_target_add(x->st, &r, &id, NULL, err))
			goto done;
	}
	ret = sl_store_commit(x->st, err);
done:
	if (ret)
		sl_store_rollback(x->st);
	sl_buf_release(&key);
	return ret;
}

static int baseline(run_ctx *x, sl_err *err);

static int open_tree(run_ctx *x, sl_err *err);

static int open_gating(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	int ret;

	if ((ret = sl_gating_open(&x->gating, spec->gates, spec->ngates, &spec->jail, x->st,
				  x->campaign_id, &x->c->base, x->opts->unsafe, err)))
		return ret;
	return open_tree(x, err);
}

/* The base's checkout for the baseline: made when the first gate must run there. */
typedef struct base_checkout {
	git_repository *repo;
	const char *scratch, *prefix;
	const git_oid *base;
	sl_worktree *wt;
	char *branch;
	run_ctx *x;                 /* its warm base, when there is one */
	char *layer;                /* the base's layer over the warm base */
} base_checkout;

static int base_checkout_dir(void *ctx, sl_gate_tree *out, sl_err *err)
{
	base_checkout *b = ctx;
	char hex[GIT_OID_HEXSZ + 1], name[64];
	sl_buf br = SL_BUF_INIT;
	int ret, capped = 0;

	if (b->x->warm) {
		/* the base is the warm base under an empty layer, like a candidate */
		if ((ret = sl_warm_layer_add(&b->layer, &capped, b->x->warm, b->repo, b->base,
					     layer_cap(b->x), err)))
			return ret;
		out->dir = sl_warm_tree(b->x->warm);
		out->layer = b->layer;
		out->layer_cap_mb = capped ? 0 : layer_cap(b->x);
		return SL_OK;
	}

	git_oid_tostr(hex, sizeof(hex), b->base);
	/* one per run: two runs may measure the base at once (a paused one) */
	sl_buf_addf(&br, "%s/base-%.12s-%ld", b->prefix, hex, (long)getpid());
	b->branch = sl_buf_detach(&br, NULL);
	snprintf(name, sizeof(name), "sl-base-%ld", (long)getpid());
	if ((ret = sl_worktree_add(&b->wt, b->repo, b->scratch, name, b->branch, b->base, err)))
		return ret;
	out->dir = sl_worktree_path(b->wt);
	out->layer = NULL;
	out->layer_cap_mb = 0;
	return SL_OK;
}

/* Remove the checkout and its branch; ret: the measurement's result, returned or SL_ERROR. */
static int base_checkout_release(base_checkout *b, int ret, sl_err *err)
{
	if (b->wt && sl_worktree_remove(b->wt, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	if (b->layer && sl_warm_layer_remove(b->layer, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	free(b->layer);
	if (b->branch)
		sl_branch_delete(b->repo, b->branch, NULL);
	free(b->branch);
	return ret;
}

/* sl_warm_prepare_fn: the preparing gates on the exported base. */
static int prepare_warm(void *ctx, const char *dir, sl_err *err)
{
	run_ctx *x = ctx;

	return sl_gating_prepare(x->gating, dir, x->opts->progress, x->opts->progress_ctx, NULL,
				 err);
}

/* Can the jail mount the overlay over the warm base with a layer of ours?  why: if not. */
static int warm_works(run_ctx *x, sl_buf *why, sl_err *err)
{
	sl_jail_opts jo = SL_JAIL_OPTS_INIT;
	sl_jail_result jr;
	sl_err e = SL_ERR_INIT;
	char *layer = NULL;
	int capped = 0, ret;

	if ((ret = sl_warm_layer_add(&layer, &capped, x->warm, x->c->repo, &x->c->base,
				     layer_cap(x), err)))
		return ret;
	jo.workdir = sl_warm_tree(x->warm);
	jo.layer = layer;
	jo.command = "true";
	jo.unsafe = x->opts->unsafe;
	jo.accept = SL_JAIL_CG_MEMORY | SL_JAIL_CG_CPU;
	sl_jail_result_init(&jr);
	if (sl_jail_run(&jr, &jo, &e) || !jr.exited || jr.exit_status)
		sl_buf_addf(why, "the jail cannot mount an overlay with a layer here: %s",
			    e.code ? e.msg : "its probe failed");
	sl_jail_result_release(&jr);
	ret = sl_warm_layer_remove(layer, err);
	free(layer);
	return ret;
}

/*
 * How candidates' trees are made (README, "Warm base"): the warm base and
 * an overlay, or a worktree each; the run's log says which and why.
 */
static int open_tree(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	int mode = spec->jail.warm_base, built = 0, jailed = 0, ret = SL_OK;
	sl_buf why = SL_BUF_INIT;
	char digest[65];
	int64_t start = sl_now_ms();

	for (size_t i = 0; i < spec->ngates; i++)
		jailed |= spec->gates[i].kind != SL_GATE_POLICY;
	if (!jailed)
		return SL_OK;
	if (mode == SL_WARM_OFF)
		sl_buf_adds(&why, spec->jail.writable ? "writable_worktree" : "warm_base: off");
	else if (sl_gating_writes_tree(x->gating))
		sl_buf_adds(&why, "a mutants gate writes the candidate's tree");
	if (!why.len) {
		sl_jail_layers l;

		/* before anything is prepared for nothing */
		if ((ret = sl_jail_probe(&l, err)))
			goto done;
		if (!(l.available & SL_JAIL_OVERLAY))
			sl_buf_addf(&why, "the jail cannot mount an overlay here: %s",
				    l.overlay_error[0] ? l.overlay_error : "no mount namespace");
	}
	if (!why.len) {
		sl_gating_warm_digest(x->gating, digest);
		if ((ret = sl_warm_open(&x->warm, x->c->repo, x->scratch, &x->c->base, digest,
					prepare_warm, x, &built, err)) ||
		    (ret = warm_works(x, &why, err)))
			goto done;
	}
	if (why.len) {
		sl_warm_free(x->warm);
		x->warm = NULL;
		if (mode == SL_WARM_OVERLAY) {
			ret = sl_err_set(err, SL_EINPUT, "warm_base: overlay, but %s", why.buf);
			goto done;
		}
		notice(x, "tree: a worktree per candidate (%s)", why.buf);
		goto done;
	}
	/* the baselines of this definition belong with its warm base */
	sl_gating_share_baselines(x->gating, sl_warm_dir(x->warm));
	if (built)
		notice(x, "tree: warm base (overlay), prepared in %.1f s",
		       (double)(sl_now_ms() - start) / 1000);
	else
		notice(x, "tree: warm base (overlay), reused");
done:
	sl_buf_release(&why);
	return ret;
}

/* The baseline measured before the targets are chosen from it. */
static int baseline_first(run_ctx *x, sl_err *err)
{
	int ret;

	if ((ret = open_gating(x, err)))
		return ret;
	return baseline(x, err);
}

/* testgen with coverage_below: only the units the base's tests cover too little. */
static int testgen_targets(run_ctx *x, sl_target_list *list, sl_err *err)
{
	size_t before = list->n;
	int ret;

	if ((ret = baseline_first(x, err)))
		return ret;
	sl_testgen_select(list, sl_gating_base_coverage(x->gating), x->c->spec->coverage_below);
	notice(x, "testgen: %zu of %zu units below %u%% line coverage", list->n, before,
	       x->c->spec->coverage_below);
	return SL_OK;
}

/*
 * kind fix: the baseline comes first, for its findings are the targets:
 * keep the scoped units that enclose one (fixjob.h).
 */
static int fix_targets(run_ctx *x, sl_target_list *list, sl_err *err)
{
	sl_buf note = SL_BUF_INIT;
	int ret;

	if ((ret = baseline_first(x, err)))
		return ret;
	/* a findings file says where to look; the gate still proves each fix */
	if (x->c->spec->findings_report)
		ret = sl_fix_load_findings(&x->findings, x->c, &note, err);
	else
		sl_gating_base_findings(x->gating, &x->findings);
	for (const char *l = note.buf, *e; !ret && *l; l = *e ? e + 1 : e) {
		e = strchrnul(l, '\n');
		notice(x, "findings: %.*s", (int)(e - l), l);
	}
	sl_buf_reset(&note);
	if (!ret && !(ret = sl_fix_targets(list, x->c, x->st, &x->findings, &note, err)))
		notice(x, "%s", note.buf);
	sl_buf_release(&note);
	return ret;
}

/* Pending targets, and those a budget stopped in an earlier run, in id order. */
static int load_pending(run_ctx *x, sl_err *err)
{
	sl_target_rec *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	if (sl_store_targets(x->st, x->campaign_id, SL_T_PENDING, &a, &na, err))
		return SL_ERROR;
	if (sl_store_targets(x->st, x->campaign_id, SL_T_BUDGET, &b, &nb, err)) {
		sl_target_list_free(a, na);
		return SL_ERROR;
	}
	x->pending = sl_xrealloc(a, sl_st_mult(na + nb + 1, sizeof(*a)));
	if (nb)
		memcpy(x->pending + na, b, nb * sizeof(*b));
	free(b);
	x->npending = na + nb;
	return SL_OK;
}

#define SHM_DIR "/dev/shm"
#define SHM_MIN_FREE (1ull << 30)

/* 1 if dir is a tmpfs we may write with at least SHM_MIN_FREE bytes free. */
static int roomy_tmpfs(const char *dir)
{
	struct statfs sf;

	if (access(dir, W_OK | X_OK) || statfs(dir, &sf) || sf.f_type != TMPFS_MAGIC)
		return 0;
	return (unsigned long long)sf.f_bavail * (unsigned long long)sf.f_bsize >= SHM_MIN_FREE;
}

static char *uid_dir(const char *dir)
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "%s/sluice-%ld", dir, (long)getuid());
	return sl_buf_detach(&b, NULL);
}

char *sl_default_scratch_root(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp && *tmp)
		return uid_dir(tmp);
	return uid_dir(roomy_tmpfs(SHM_DIR) ? SHM_DIR : "/tmp");
}

void sl_default_scratch_roots(sl_strvec *out)
{
	const char *tmp = getenv("TMPDIR");
	char *d;

	if (tmp && *tmp) {
		sl_strvec_push(out, (d = uid_dir(tmp)));
		free(d);
	}
	sl_strvec_push(out, (d = uid_dir(SHM_DIR)));
	free(d);
	sl_strvec_push(out, (d = uid_dir("/tmp")));
	free(d);
}

static char *scratch_root(const sl_spec *spec)
{
	char *root = spec->scratch ? NULL : sl_default_scratch_root();
	char *ret = sl_path_join(spec->scratch ? spec->scratch : root, spec->name);

	free(root);
	return ret;
}

static int is_sqlite_file(const char *path)
{
	char head[16] = { 0 };
	FILE *fp = fopen(path, "rb");
	int yes;

	if (!fp)
		return 0;
	yes = fread(head, 1, sizeof(head), fp) == sizeof(head) &&
		!memcmp(head, "SQLite format 3", 16);
	fclose(fp);
	return yes;
}

/*
 * The JSON lines file the replay provider reads: the spec's file, or, when
 * the spec names an earlier run's store, every recorded reply of that store
 * written out to a file under the scratch root.  Caller frees.
 */
static char *replay_source(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	char *path = spec->replay[0] == '/' ? sl_xstrdup(spec->replay) :
		sl_path_join(spec->dir, spec->replay);
	sl_store *old = NULL;
	char *out = NULL;

	if (!is_sqlite_file(path))
		return path;
	if (sl_store_open(&old, path, 0, err))
		goto done;
	out = sl_path_join(x->scratch, "replay.jsonl");
	if (sl_mkdir_p(x->scratch, 0700, err) ||
	    sl_store_export_replies(old, out, err)) {
		free(out);
		out = NULL;
	}
done:
	sl_store_free(old);
	free(path);
	return out;
}

static int open_provider(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	sl_provider_opts po = SL_PROVIDER_OPTS_INIT;

	if (spec->provider == SL_PROVIDER_RULES)
		return SL_OK;
	po.kind = spec->provider;
	po.base_url = spec->base_url;
	po.model = spec->model;
	po.api_key_env = spec->api_key_env;
	po.temperature = spec->temperature;
	po.max_tokens = spec->max_tokens;
	po.timeout_s = spec->provider_timeout_s;
	po.command = spec->command;
	po.headers = spec->headers.n ? (const char *const *)spec->headers.v : NULL;
	po.anthropic_version = spec->anthropic_version;
	po.max_retries = spec->max_retries;
	po.response_format = spec->response_format;
	/* a hanging endpoint cannot hold the run past its wall-time budget */
	if (spec->budget_wall_s)
		po.deadline_ms = x->start_ms + (int64_t)spec->budget_wall_s * 1000;
	po.stop = x->opts->stop;
	if (spec->provider == SL_PROVIDER_REPLAY) {
		if (!(x->replay_file = replay_source(x, err)))
			return SL_EINPUT;
		po.replay_path = x->replay_file;
	}
	return sl_provider_new(&x->provider, &po, err);
}

/* Hash one field of the campaign definition, length-prefixed. */
static void digest_add(sl_sha256 *h, const char *v)
{
	char len[24];

	snprintf(len, sizeof(len), "%zu:", v ? strlen(v) : (size_t)0);
	sl_sha256_update(h, len, strlen(len));
	if (v)
		sl_sha256_update(h, v, strlen(v));
}

static void digest_num(sl_sha256 *h, double v)
{
	char num[48];

	snprintf(num, sizeof(num), "%.17g", v);
	digest_add(h, num);
}

/*
 * The digest of what judges a target: the gates, the rules, the prompt and
 * instructions, the edit format, the attempts, the provider and its model.
 * Budgets, concurrency and paths are not part of it.
 */
static void campaign_digest(char out[65], const sl_spec *spec)
{
	sl_sha256 h;
	unsigned char d[32];

	sl_sha256_init(&h);
	digest_add(&h, "sluice-campaign-1");
	for (size_t i = 0; i < spec->nrules; i++) {
		digest_add(&h, spec->rules[i].capture);
		digest_add(&h, spec->rules[i].template_text);
	}
	digest_add(&h, spec->prompt);
	digest_add(&h, spec->instructions);
	digest_num(&h, spec->edit_format);
	digest_num(&h, spec->attempts);
	digest_num(&h, spec->provider);
	digest_add(&h, spec->model);
	digest_add(&h, spec->command);
	digest_num(&h, spec->temperature);
	digest_num(&h, spec->max_tokens);
	for (size_t i = 0; i < spec->ngates; i++) {
		const sl_gate_conf *g = &spec->gates[i];

		digest_add(&h, g->name);
		digest_num(&h, g->kind);
		digest_add(&h, g->command);
		digest_num(&h, g->timeout_s);
		digest_add(&h, sl_report_format_name(g->format));
		digest_add(&h, g->report);
		digest_num(&h, g->radius);
		digest_add(&h, sl_fail_on_name(g->fail_on));
		digest_num(&h, g->reruns);
		digest_num(&h, g->loopback);
		for (size_t k = 0; k < g->must_fix.n; k++)
			digest_add(&h, g->must_fix.v[k]);
		for (size_t k = 0; k < g->allow_paths.n; k++)
			digest_add(&h, g->allow_paths.v[k]);
		for (size_t k = 0; k < g->forbid.n; k++)
			digest_add(&h, g->forbid.v[k]);
		for (size_t k = 0; k < g->build_files.n; k++)
			digest_add(&h, g->build_files.v[k]);
		digest_num(&h, g->max_files);
		digest_num(&h, g->max_lines);
		digest_num(&h, g->allow_build_files);
	}
	sl_sha256_final(&h, d);
	sl_sha256_tohex(out, d);
}

/*
 * Renew this run's leases every third of their lifetime until the workers
 * are done.  A failure to renew is not fatal: the leases may then expire and
 * another run take the targets over, which the claim check makes safe.
 */
static void *lease_keeper(void *arg)
{
	run_ctx *x = arg;

	pthread_mutex_lock(&x->lock);
	while (!x->ending) {
		struct timespec ts;
		int64_t now;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += x->lease_ttl_ms / 3000;
		ts.tv_nsec += (long)(x->lease_ttl_ms / 3 % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&x->end_cond, &x->lock, &ts);
		if (x->ending)
			break;
		x->renewing = 1;
		pthread_mutex_unlock(&x->lock);
		now = sl_wall_ms();
		sl_lease_renew(x->st, x->owner, now, now + x->lease_ttl_ms, NULL);
		pthread_mutex_lock(&x->lock);
		x->renewing = 0;
		pthread_cond_broadcast(&x->end_cond);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

static void make_owner(run_ctx *x)
{
	char host[64] = "localhost";

	if (gethostname(host, sizeof(host) - 1) || !*host)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	for (char *p = host; *p; p++)
		if (*p == ':')
			*p = '-';
	snprintf(x->owner, sizeof(x->owner), "%s:%ld:%lld", host, (long)getpid(),
		 (long long)sl_wall_ms());
}

/*
 * Wait for the baseline's lease (runs started together wait for the first
 * to record the baseline, then load it): the wait ends when the holder
 * releases the claim or its lease expires; *stopped 1 (SL_OK) when a
 * signal came first.
 */
static int baseline_claim(run_ctx *x, int64_t *epoch, int *stopped, sl_err *err)
{
	int claimed = 0, ret;

	*stopped = 0;
	for (;;) {
		if ((ret = sl_lease_baseline_claim(x->st, x->campaign_id, x->owner, sl_wall_ms(),
						   x->lease_ttl_ms, &claimed, epoch, err)))
			return ret;
		if (claimed)
			return SL_OK;
		if (interrupted(x)) {
			*stopped = 1;
			return SL_OK;
		}
		usleep(200 * 1000);
	}
}

/* The gates on the base, their rows fenced by the baseline lease's epoch. */
static int baseline_measure(run_ctx *x, int64_t epoch, sl_err *err)
{
	base_checkout b = { x->c->repo, x->scratch, x->c->spec->branch_prefix, &x->c->base,
			    NULL, NULL, x, NULL };
	int ret;

	sl_gating_fence_baseline(x->gating, x->owner, epoch);
	ret = sl_gating_baseline(x->gating, base_checkout_dir, &b, x->opts->progress,
				 x->opts->progress_ctx, err);
	return base_checkout_release(&b, ret, err);
}

/*
 * Measure (or load) the baseline, one run of the campaign at a time.  Its
 * rows are fenced by the lease's epoch: a run paused past its lease while
 * another took the baseline over writes none of them (SL_ELEASE), waits
 * for the claim again and loads what the other run measured.
 */
static int baseline(run_ctx *x, sl_err *err)
{
	int64_t epoch = 0;
	int stopped = 0, ret;

	do {
		if ((ret = baseline_claim(x, &epoch, &stopped, err)))
			return ret;
		if (stopped)
			goto stopped;
		if ((ret = baseline_measure(x, epoch, err)) == SL_ELEASE) {
			notice(x, "baseline: taken over by another run while this one was "
			       "paused; reading its baseline (%s)", err->msg);
			sl_err_clear(err);
		}
	} while (ret == SL_ELEASE);
	if (sl_lease_baseline_release(x->st, x->owner, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	if (!ret || !interrupted(x))
		return ret;
stopped:
	/* the baseline's gates were killed, or never started: nothing was kept */
	x->base_stopped = 1;
	return sl_err_set(err, SL_ERROR, "the run was stopped during the baseline");
}

static unsigned online_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

/* Open the store, record (or find) the campaign, clear a crashed run's worktrees. */
static int open_store(run_ctx *x, sl_err *err)
{
	int ret;

	if ((ret = sl_store_open(&x->st, x->opts->store, 1, err)) ||
	    (ret = record_campaign(x, err)))
		return ret;
	if (sl_path_is_under(x->scratch, x->c->repo_path))
		return sl_err_set(err, SL_EINPUT, "scratch root '%s' is inside the repository",
				  x->scratch);
	git_lock_take(x);
	ret = sl_worktree_cleanup(x->c->repo, x->scratch, err);
	git_lock_give(x);
	return ret ? ret : sl_warm_sweep_layers(x->scratch, err);
}

int sl_run_baseline(sl_buf *out, const sl_run_opts *opts, int json, sl_err *err)
{
	run_ctx x;
	int ret;

	memset(&x, 0, sizeof(x));
	pthread_mutex_init(&x.git_lock, NULL);
	x.git_lock_fd = -1;
	x.opts = opts;
	if (!(ret = sl_campaign_load(&x.c, opts->spec_path, opts->repo, err))) {
		base_checkout b = { x.c->repo, NULL, x.c->spec->branch_prefix, &x.c->base, NULL,
				    NULL, &x, NULL };

		x.scratch = scratch_root(x.c->spec);
		b.scratch = x.scratch;
		if (!(ret = open_store(&x, err)) && !(ret = open_gating(&x, err))) {
			ret = sl_gating_describe(x.gating, base_checkout_dir, &b, opts->progress,
						 opts->progress_ctx, json, out, err);
			ret = base_checkout_release(&b, ret, err);
		}
	}
	sl_warm_free(x.warm);
	sl_gating_free(x.gating);
	sl_store_free(x.st);
	sl_campaign_free(x.c);
	free(x.scratch);
	return ret;
}

int sl_run(sl_run_summary *out, const sl_run_opts *opts, sl_err *err)
{
	run_ctx x;
	sl_target_list list = SL_TARGET_LIST_INIT;
	pthread_t *threads = NULL, keeper;
	size_t nthreads = 0, want;
	unsigned jobs;
	int ret, sems = 0, registered = 0, kept = 0;
	int64_t journal_tokens = 0;
	double journal_cost = 0;
	char host[160];

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	x.gitconfig_fd = -1;
	pthread_mutex_init(&x.lock, NULL);
	pthread_mutex_init(&x.git_lock, NULL);
	x.git_lock_fd = -1;
	pthread_cond_init(&x.settled, NULL);
	pthread_cond_init(&x.end_cond, NULL);
	x.opts = opts;
	x.start_ms = sl_now_ms();
	make_owner(&x);
	if ((ret = sl_campaign_load(&x.c, opts->spec_path, opts->repo, err)))
		goto done;
	/* before the targets fill this process: its jails are copies of a small one */
	if (x.c->spec->ngates && !getenv("SLUICE_NO_JAIL_SPAWNER") &&
	    (ret = sl_jail_spawner_start(err)))
		goto done;
	x.lease_ttl_ms = (int64_t)(opts->lease_ttl_s ? opts->lease_ttl_s :
				   x.c->spec->lease_ttl_s ? x.c->spec->lease_ttl_s : 60) * 1000;
	campaign_digest(x.digest, x.c->spec);
	/* the lock is the repository's git directory itself: nothing is written there */
	x.git_lock_fd = open(git_repository_commondir(x.c->repo), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x.git_lock_fd < 0) {
		ret = sl_err_set(err, SL_ERROR, "cannot open '%s': %s",
				 git_repository_commondir(x.c->repo), strerror(errno));
		goto done;
	}
	x.scratch = scratch_root(x.c->spec);
	if ((ret = open_provider(&x, err)))
		goto done;
	if ((ret = open_store(&x, err)))
		goto done;
	{
		sl_run_rec rr = { x.campaign_id, x.owner, x.digest, x.c->spec->budget_tokens,
				  x.c->spec->budget_cost };

		/* a crashed run of this machine holds nothing any more */
		snprintf(host, sizeof(host), "%s", x.owner);
		*strchr(host, ':') = '\0';
		if ((ret = sl_lease_reap_local(x.st, host, NULL, err)) ||
		    (ret = sl_lease_run_begin(x.st, &rr, sl_wall_ms(), err)))
			goto done;
		registered = 1;
	}
	if (pthread_create(&keeper, NULL, lease_keeper, &x)) {
		ret = sl_err_set(err, SL_ERROR, "cannot start a thread");
		goto done;
	}
	kept = 1;
	out->campaign_id = x.campaign_id;
	out->campaign = sl_xstrdup(x.c->spec->name);
	sl_findings_init(&x.findings);
	/* from here on a stop kills the gates in flight, the baseline's too */
	sl_jail_set_stop(opts->stop);
	if ((ret = sl_no_reflog_config(&x.gitconfig_fd, &x.gitconfig, err)) ||
	    (ret = sl_repo_no_reflog(x.c->repo, x.gitconfig, err)) ||
	    (ret = sl_worktree_root_check(x.c->repo, x.scratch, err)) ||
	    (ret = sl_mkdir_p(x.scratch, 0700, err)) ||
	    (ret = restore_journals(&x, err)) ||
	    (ret = sl_campaign_scope(&list, x.c, x.st, err)) ||
	    (x.c->spec->job == SL_JOB_FIX && (ret = fix_targets(&x, &list, err))) ||
	    (x.c->spec->coverage_below && (ret = testgen_targets(&x, &list, err))) ||
	    (ret = record_targets(&x, &list, err)) ||
	    (ret = load_pending(&x, err)) ||
	    (ret = sl_store_usage(x.st, x.campaign_id, &x.tokens_used, &x.cost_used, err)) ||
	    (ret = sl_journal_usage(x.st, x.campaign_id, &journal_tokens, &journal_cost, err)) ||
	    (ret = sl_lease_stale_digest(x.st, x.campaign_id, x.digest, &out->stale_digest, err)))
		goto done;
	x.tokens_used += journal_tokens;
	x.cost_used += journal_cost;
	x.list = &list;
	target_index_init(&x.index, &list);
	out->targets = list.n;
	if ((!x.gating && (ret = open_gating(&x, err))) ||
	    (x.npending && x.c->spec->job != SL_JOB_FIX && !x.c->spec->coverage_below &&
	     (ret = baseline(&x, err))))
		goto done;

	jobs = x.c->spec->jobs ? x.c->spec->jobs : online_cores();
	sem_init(&x.model_slots, 0, x.c->spec->concurrency);
	sem_init(&x.gate_slots, 0, jobs);
	sems = 1;
	want = (x.provider ? x.c->spec->concurrency : 0) + jobs;
	if (want > x.npending)
		want = x.npending;
	threads = sl_xcalloc(want ? want : 1, sizeof(*threads));
	x.nworkers = want;
	for (size_t i = 0; i < want; i++) {
		if (pthread_create(&threads[nthreads], NULL, worker, &x)) {
			if (!nthreads) {
				ret = sl_err_set(err, SL_ERROR, "cannot start a worker thread");
				goto done;
			}
			pthread_mutex_lock(&x.lock);
			x.nworkers = nthreads;
			pthread_mutex_unlock(&x.lock);
			break;
		}
		nthreads++;
	}
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	nthreads = 0;
	out->processed = x.next;
	out->proposed_now = x.passed_now;
	out->held_elsewhere = x.held_elsewhere;
	out->lease_lost = x.lost;
	out->transient = x.transient;
	out->usage_rejected = x.usage_rejected;
	out->interrupted = interrupted(&x);
	out->tokens_used = x.tokens_used;
	out->budget_tokens = x.c->spec->budget_tokens;
	if (x.stop && x.stop_reason[0])
		out->stop_reason = sl_xstrdup(x.stop_reason);
	if (x.failed) {
		ret = sl_err_set(err, x.err.code, "%s", x.err.msg);
		goto done;
	}
	if (x.stop)
		notice(&x, "stopped: %s; `sluice run` continues after the budget is raised",
		       x.stop_reason);
	ret = SL_OK;
done:
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	sl_jail_spawner_stop();
	sl_jail_set_stop(NULL);
	if (ret && x.base_stopped) {
		/* a stop, not a failure: the next run measures the baseline again */
		sl_err_clear(err);
		out->interrupted = 1;
		ret = SL_OK;
	}
	if (kept) {
		pthread_mutex_lock(&x.lock);
		x.ending = 1;
		pthread_cond_broadcast(&x.end_cond);
		pthread_mutex_unlock(&x.lock);
		pthread_join(keeper, NULL);
	}
	if (registered)
		sl_lease_run_end(x.st, x.owner, ret ? "failed" : interrupted(&x) ? "stopped" :
				 x.stop ? "budget" : "done", NULL);
	if (sems) {
		sem_destroy(&x.model_slots);
		sem_destroy(&x.gate_slots);
	}
	sl_target_list_free(x.pending, x.npending);
	target_index_release(&x.index);
	sl_target_list_release(&list);
	sl_provider_free(x.provider);
	sl_warm_free(x.warm);
	sl_gating_free(x.gating);
	sl_findings_release(&x.findings);
	sl_store_free(x.st);
	sl_campaign_free(x.c);
	free(x.scratch);
	free(x.gitconfig);
	if (x.gitconfig_fd >= 0)
		close(x.gitconfig_fd);
	free(x.replay_file);
	pthread_mutex_destroy(&x.lock);
	pthread_mutex_destroy(&x.git_lock);
	if (x.git_lock_fd >= 0)
		close(x.git_lock_fd);
	pthread_cond_destroy(&x.settled);
	pthread_cond_destroy(&x.end_cond);
	return ret;
}
