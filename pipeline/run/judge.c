/*
 * judge.c - a candidate judged: the syntax check, what was asked
 * (expect.c) and the policy gates on its diff, then its tree (the warm base
 * under a layer of its own, or a worktree) and the jailed gates, at most
 * `jobs` candidates at once; a run without gates proposes the branch as it
 * is.  The model judge (judge_model.c), when the campaign has one, comes
 * last.  Branches are written only while the worker holds the target's
 * lease, under the git lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/run/run_internal.h"
#include "storage/lease.h"

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

/*
 * Create a candidate's branch (the caller holds git_lock) only while the
 * worker still holds its target: a run that lost the lease writes no branch
 * (SL_ELEASE).  Under git_lock the check and the write are one step for
 * every sluice process, and the run that took the target over deletes what
 * was there before it works on the target.  A branch another store wrote
 * since the target was taken is left alone: the candidate goes on this
 * store's own name for it (run_store_branch()).
 */
static int fenced_branch(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	int ret = sl_lease_check(x->st, a->s.a.target_id, x->owner, run_cur_epoch, err);

	if (!ret)
		ret = make_branch(a->repo, a->branch, &a->commit, err);
	if (ret == SL_ELEASE &&
	    sl_branch_holder(a->repo, a->branch, x->store_tags, NULL) == SL_HOLDER_OTHER &&
	    run_store_branch(x, a->rec, &a->branch)) {
		sl_err_clear(err);
		ret = make_branch(a->repo, a->branch, &a->commit, err);
	}
	return ret;
}

/* The cap of a candidate's layer, MiB. */
unsigned run_layer_cap(const run_ctx *x)
{
	return x->c->spec->jail.disk_mb ? x->c->spec->jail.disk_mb : 2048;
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
 * The checks on the diff, no checkout: the syntax check (recorded as the
 * gate "syntax"), that the change did what was asked (expect.c, the gate
 * "expect") and the policy gates.  a->passed when both pass; the
 * reason in the feedback when not.
 */
static int check_diff(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	sl_gate_outcome *gates = &a->gates;
	sl_buf report = SL_BUF_INIT;
	int ok = 0;
	int64_t t0 = sl_now_ms();
	sl_gate_run_rec *rec;

	if (run_cur_batch)
		run_cur_batch->count++;
	if (sl_syntax_check_commit(a->repo, &x->c->base, &a->commit, &report, &ok, err)) {
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
	if (run_expect_check(a, &ok, err))
		return SL_ERROR;
	if (!ok)
		return SL_OK;
	if (sl_gating_policy_on(x->gating, a->changed, gates, &a->passed, &s->feedback, err))
		return SL_ERROR;
	return SL_OK;
}

/* Nothing to run: no checkout, the branch is the proposal. */
static int propose(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	int r;

	if (run_cur_batch) {
		r = run_batch_queue(run_cur_batch, s->a.target_id, a->branch, &a->commit, s->a.source,
				    err);
	} else {
		run_git_lock_take(x);
		r = fenced_branch(a, err);
		run_git_lock_give(x);
	}
	a->passed = !r;
	return r;
}

/* The warm base below, the candidate's own layer above: no checkout. */
static int gate_on_warm(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	sl_gate_tree gt = { .dir = sl_warm_tree(x->warm), .prepared = 1 };
	char tree[GIT_OID_HEXSZ + 1];
	char *layer = NULL;
	int capped = 0, r;
	int64_t tree_t0 = sl_now_ms();

	r = tree_of(tree, a->repo, &a->commit, err);
	run_git_lock_take(x);
	if (!r)
		r = fenced_branch(a, err);
	run_git_lock_give(x);
	if (!r)
		r = sl_warm_layer_add(&layer, &capped, x->warm, a->repo, &a->commit,
				      run_layer_cap(x), err);
	s->tree = "overlay";
	s->tree_ms = sl_now_ms() - tree_t0;
	gt.layer = layer;
	gt.layer_cap_mb = capped ? 0 : run_layer_cap(x);
	if (!r)
		r = sl_gating_run_on(x->gating, &gt, tree, a->changed, a->t, &a->gates,
				     &a->passed, &s->feedback, err);
	if (layer && sl_warm_layer_remove(layer, r ? NULL : err))
		r = SL_ERROR;
	free(layer);
	return r;
}

/* A worktree of the candidate's branch under the scratch root, removed after its gates. */
static int gate_in_worktree(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	sl_gate_tree gt = { .dir = NULL };
	sl_worktree *wt = NULL;
	char wtname[64], tree[GIT_OID_HEXSZ + 1];
	int r;
	int64_t tree_t0 = sl_now_ms();

	pthread_mutex_lock(&x->lock);
	snprintf(wtname, sizeof(wtname), "sl-%ld-%zu", (long)getpid(), ++x->seq);
	pthread_mutex_unlock(&x->lock);
	r = tree_of(tree, a->repo, &a->commit, err);
	run_git_lock_take(x);
	if (!r)
		r = fenced_branch(a, err);
	if (!r)
		r = sl_worktree_add(&wt, a->repo, x->scratch, wtname, a->branch, &a->commit, err);
	run_git_lock_give(x);
	s->tree = "worktree";
	s->tree_ms = sl_now_ms() - tree_t0;
	if (!r) {
		gt.dir = sl_worktree_path(wt);
		r = sl_gating_run_on(x->gating, &gt, tree, a->changed, a->t, &a->gates,
				     &a->passed, &s->feedback, err);
	}
	run_git_lock_take(x);
	if (wt && sl_worktree_remove(wt, r ? NULL : err))
		r = SL_ERROR;
	run_git_lock_give(x);
	return r;
}

/*
 * Judge a candidate commit: the syntax check and the policy gates on the
 * diff (no checkout), then a worktree and the jailed gates, at most `jobs`
 * candidates at once.  The branch exists afterwards only if every gate
 * passed.  SL_ERROR for machinery failures.
 */
static int judge_candidate(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	int r, r2, gated = 0;

	a->passed = 0;
	run_attempt_step(a, SL_STEP_CHECK);
	a->changed = sl_cand_diff_parse(a->s.diff.buf);
	r = check_diff(a, err);
	/* without gates to run, the model judge comes before the proposal */
	if (!r && a->passed && spec->judge && !spec->ngates)
		r = run_model_judge(a, err);
	if (!r && a->passed) {
		run_attempt_step(a, SL_STEP_WAIT);
		sem_wait(&x->gate_slots);
		run_attempt_step(a, SL_STEP_TREE);
		if (!spec->ngates)
			r = propose(a, err);
		else if (x->warm)
			r = gate_on_warm(a, err);
		else
			r = gate_in_worktree(a, err);
		sem_post(&x->gate_slots);
		run_ev_judged(x);
		gated = 1;
		/* and after them when there are: it is the last gate */
		if (!r && a->passed && spec->judge && spec->ngates)
			r = run_model_judge(a, err);
	}
	sl_cand_diff_free(a->changed);
	a->changed = NULL;
	if ((r && r != SL_EBUDGET) || !gated)
		return r;
	run_git_lock_take(x);
	r2 = a->passed ? SL_OK : sl_branch_delete_matching(a->repo, a->branch, &a->commit, err);
	run_git_lock_give(x);
	return r2 ? r2 : r;
}

/*
 * Gate the candidate.  a->ended is set when the run stopped during its gates:
 * no verdict, its branch is gone, nothing is recorded and the next run judges
 * it again (the reply is journalled).
 */
int run_judge_step(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	int r;

	if ((r = judge_candidate(a, err)) == SL_EBUDGET) {
		/* the model judge found the budget spent: the target waits, like the model step's */
		pthread_mutex_lock(&x->lock);
		r = run_record_plain(a, SL_T_BUDGET, a->n - 1, x->stop_reason, err);
		pthread_mutex_unlock(&x->lock);
		a->ended = !r;
		return r;
	}
	if (r)
		return r;
	if (a->passed || !run_interrupted(x))
		return SL_OK;
	run_git_lock_take(x);
	r = sl_branch_delete_matching(a->repo, a->branch, &a->commit, err);
	run_git_lock_give(x);
	a->ended = !r;
	return r ? SL_ERROR : SL_OK;
}
