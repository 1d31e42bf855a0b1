/*
 * pool.c - the worker threads.  Each takes the next pending target, claims
 * its lease (another run may hold it), looks it up among the scoped targets
 * and takes it through its attempts (attempt.c); then the progress line.
 * The first machinery failure stops every worker (fail_run); a target
 * another run took over while this one was paused is left to it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/run/run_internal.h"
#include "storage/lease.h"
#include "common/term.h"

/* After a target finished: progress line and the early-stop rule. */
static void finished_one(run_ctx *x, const sl_target_rec *after)
{
	int final = after->state != SL_T_BUDGET && after->state != SL_T_SKIPPED;

	pthread_mutex_lock(&x->lock);
	if (final)
		x->finished++;
	if (after->state == SL_T_PROPOSED)
		x->passed_now++;
	run_watch_counts(x);
	if (x->opts->progress) {
		sl_buf path = SL_BUF_INIT, rate = SL_BUF_INIT;

		/* a repository's path names may hold escape sequences too */
		sl_term_safe(&path, after->path, strlen(after->path), 0);
		run_rate_text(x, &rate);
		run_notice(x, "[%zu/%zu] %s:%lld %s after %lld attempt%s | %zu proposed, "
			   "%s, %lld tokens, cost %.4f", x->finished, x->npending,
			   path.buf, (long long)after->start_line, sl_target_state_name(after->state),
			   (long long)after->attempts, after->attempts == 1 ? "" : "s", x->passed_now,
			   rate.buf, (long long)x->tokens_used, x->cost_used);
		sl_buf_release(&path);
		sl_buf_release(&rate);
	}
	run_early_stop(x);
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

/*
 * A target the worker holds but does not work on now (stopped by the
 * budget, or no longer matching the query): what a killed run left of it
 * goes all the same, then it moves to state.
 */
static int set_aside(run_ctx *x, git_repository *repo, const sl_target_rec *rec,
		     enum sl_target_state state, const char *reason, sl_err *err)
{
	char *branch = run_branch_name(x->c->spec->branch_prefix, rec, &x->index);
	int ret = run_clear_leftover(x, repo, rec, &branch, err);

	free(branch);
	return ret ? ret : run_move_target(x, rec->id, state, rec->attempts, reason, err);
}

/*
 * Claim the target rec and take it through its attempts (stop: a budget
 * ran out, it is set aside).  0 when the worker stops: the run failed or
 * it was stopped.
 */
static int work_on(run_ctx *x, git_repository *repo, sl_target_rec *rec, int stop,
		   sl_buf *tmp, sl_err *err)
{
	sl_target_rec after = { 0 };
	sl_target t = { 0 };
	int ret, claimed = 0;
	int64_t t0 = sl_now_ms();

	/* another run may hold it: only the holder touches its branch */
	if ((ret = sl_lease_claim(x->st, rec->id, x->owner, sl_wall_ms(), x->lease_ttl_ms,
				  &claimed, &run_cur_epoch, err))) {
		fail_run(x, err, rec);
		return 0;
	}
	if (!claimed) {
		/* held by another run, or finished by one since this run listed it */
		if ((ret = sl_store_target_get(x->st, rec->id, &after, err))) {
			fail_run(x, err, rec);
			sl_target_rec_release(&after);
			return 0;
		}
		pthread_mutex_lock(&x->lock);
		x->held_elsewhere += after.state == SL_T_PENDING || after.state == SL_T_BUDGET;
		pthread_mutex_unlock(&x->lock);
		sl_target_rec_release(&after);
		return 1;
	}
	/* it may have moved on since this run listed it */
	if ((ret = sl_store_target_get(x->st, rec->id, &after, err))) {
		fail_run(x, err, rec);
		sl_target_rec_release(&after);
		return 0;
	}
	rec->attempts = after.attempts;
	rec->attempt_base = after.attempt_base;
	sl_target_rec_release(&after);
	memset(&after, 0, sizeof(after));
	run_ev_claimed(x, rec);
	ret = run_scoped_target(x, rec, &t, tmp, err);
	if (ret == SL_ENOTFOUND)
		ret = set_aside(x, repo, rec, SL_T_SKIPPED, "no longer matches the query", err);
	else if (!ret && stop)
		ret = set_aside(x, repo, rec, SL_T_BUDGET, x->stop_reason, err);
	else if (!ret)
		ret = run_process_target(x, repo, rec, &t, err);
	sl_target_release(&t);
	if (ret == SL_ELEASE) {
		/* paused past its lease: the target is another run's now */
		run_ev_left(x);
		run_lease_lost(x, rec, err);
		return 1;
	}
	if (!ret)
		ret = sl_store_target_get(x->st, rec->id, &after, err);
	if (ret) {
		fail_run(x, err, rec);
		sl_target_rec_release(&after);
		return 0;
	}
	run_ev_done(x, &after, t0);
	if (after.state == SL_T_PENDING && run_interrupted(x)) {
		sl_target_rec_release(&after);
		return 0;
	}
	finished_one(x, &after);
	sl_target_rec_release(&after);
	return 1;
}

/*
 * Take the next target this run works on (read from the store a chunk at
 * a time) and work on it.  0 when the worker stops: nothing is left, the
 * run failed or it was stopped.
 */
static int work_one(run_ctx *x, git_repository *repo, sl_buf *tmp, sl_err *err)
{
	sl_target_rec rec;
	int stop, got = 0, ret;

	sl_err_clear(err);
	/* between targets: a target's objects are read until it is done, and a
	   worker's object database does not take in the packs (run_batch_open) */
	if (run_cur_batch && BATCH_FULL(run_cur_batch) && run_batch_flush(x, run_cur_batch, err)) {
		fail_run(x, err, NULL);
		return 0;
	}
	pthread_mutex_lock(&x->lock);
	if (!x->failed && !run_interrupted(x))
		got = run_next_target(x, &rec, err);
	stop = got > 0 && run_budget_reached(x);
	pthread_mutex_unlock(&x->lock);
	if (got <= 0) {
		if (got < 0)
			fail_run(x, err, NULL);
		return 0;
	}
	ret = work_on(x, repo, &rec, stop, tmp, err);
	run_put_target(x, &rec);
	return ret;
}

/*
 * A worker thread: its own repository handle (and, without gates, its own
 * batch), then one target after another.
 */
void *run_worker(void *arg)
{
	run_ctx *x = arg;
	git_repository *repo = NULL;
	sl_buf tmp = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	objbatch batch;

	run_slot_take(x);
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
		if (run_batch_open(&batch, x, repo, seq, &err)) {
			run_batch_close(x, &batch, NULL);
			fail_run(x, &err, NULL);
			goto out;
		}
		run_cur_batch = &batch;
	}
	while (work_one(x, repo, &tmp, &err))
		;
	if (run_cur_batch) {
		run_cur_batch = NULL;
		sl_err_clear(&err);
		if (run_batch_close(x, &batch, &err))
			fail_run(x, &err, NULL);
	}
out:
	sl_buf_release(&tmp);
	git_repository_free(repo);
	return NULL;
}
