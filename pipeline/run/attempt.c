/*
 * attempt.c - the attempts at one target: rules on the first attempt of a
 * round (attempt 1, or the first after `sluice retry`), else the model step
 * (model.c); the edits placed on the base and committed; the candidate
 * judged (judge.c); the attempt, candidate and gate runs recorded in one
 * transaction (record.c).  A failed attempt's reply and feedback go
 * into the next attempt's prompt.
 *
 * A new step of an attempt is a function taking the attempt's context
 * (run_attempt, run_internal.h), called from attempt() below.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/run/run_internal.h"
#include "pipeline/generate/rules.h"
#include "storage/lease.h"

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

/*
 * The first attempt of the target's current round: attempt 1, or the first
 * after a `sluice retry` (which may follow a change of the rules).
 */
static int first_of_round(const run_attempt *a)
{
	return a->n == a->rec->attempt_base + 1;
}

/* Rules on a round's first attempt: sets a->s.use_rules when some rule rewrote a site. */
static int try_rules(run_attempt *a, sl_err *err)
{
	const sl_spec *spec = a->x->c->spec;
	attempt_state *s = &a->s;
	sl_rule *rules = sl_spec_rules(spec);
	int r;

	run_attempt_step(a, SL_STEP_RULES);
	r = sl_rules_apply(&s->edits, rules, spec->nrules, a->t, &s->aerr);
	free(rules);
	if (r < 0)
		return sl_err_set(err, s->aerr.code, "%s", s->aerr.msg);
	s->use_rules = r > 0;
	if (s->use_rules)
		s->a.source = "rules";
	return SL_OK;
}

/*
 * Rules only, and none applies (or their candidate failed): nothing to try.
 * Records the target skipped (a round's first attempt) or failed.
 */
static int record_nothing_to_try(run_attempt *a, sl_err *err)
{
	attempt_state *s = &a->s;
	int64_t n = a->n;
	int first = first_of_round(a);
	const char *why = first ? "no rule applies to this target" :
		"the rules' candidate failed and there is no model to retry";

	if (first) {
		s->a.source = "rules";
		s->a.outcome = SL_A_NO_EDIT;
		s->a.error = (char *)why;
	}
	return run_record_plain(a, first ? SL_T_SKIPPED : SL_T_FAILED, first ? n : n - 1, why,
				err);
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
	git_diff *diff = NULL;
	hunk_scan h = { t, 0 };
	int ret = SL_ERROR;

	if (sl_diff_commits(&diff, NULL, repo, base, commit, t->path, err))
		goto done;
	if (git_diff_foreach(diff, NULL, NULL, hunk_in_target, NULL, &h)) {
		sl_err_set(err, SL_ERROR, "cannot diff the candidate: %s", sl_git_error());
		goto done;
	}
	ret = h.hit;
	if (!h.hit)
		sl_err_set(err, SL_EREFUSED, "the edit does not change the target, lines %u-%u of "
			   "'%s'; change that code", t->start_line, t->end_line, t->path);
done:
	git_diff_free(diff);
	return ret;
}

/*
 * The message of a candidate's commit.  Its Sluice-Store trailer names the
 * store and campaign that made it: a run deletes or proposes over only
 * branches whose commit names its own (sl_branch_holder()).
 */
void run_candidate_message(sl_buf *msg, const run_ctx *x, const char *path,
			   long long start, long long end, long long n, const char *source)
{
	const char *name = x->c->spec->name;

	sl_buf_addf(msg, "sluice(%s): %s:%lld\n\nCampaign: %s\nTarget: %s:%lld-%lld\n"
		    "Attempt: %lld (%s)\n" SL_STORE_TRAILER "%s\n", name, path, start, name, path,
		    start, end, n, source, x->store_tag);
}

/*
 * Place the attempt's edits on the base and commit them (a->commit).  Sets
 * s->a.outcome: a candidate, or an apply error whose reason goes to the
 * feedback.  Returns an error code only when the machinery broke.
 */
static int build_candidate(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	const sl_target *t = a->t;
	attempt_state *s = &a->s;
	sl_apply_opts ao = SL_APPLY_OPTS_INIT;
	sl_buf msg = SL_BUF_INIT;
	int r;

	run_attempt_step(a, SL_STEP_APPLY);
	run_candidate_message(&msg, x, t->path, (long long)t->start_line, (long long)t->end_line,
			      (long long)a->n, s->a.source);
	ao.allowed_globs = (const char *const *)spec->paths.v;
	ao.nglobs = spec->paths.n;
	if (spec->job == SL_JOB_TESTGEN) {
		/* a generated test goes only where tests live */
		ao.allowed_globs = (const char *const *)spec->test_paths.v;
		ao.nglobs = spec->test_paths.n;
	}
	r = sl_apply_edits_ext(&a->commit, &s->diff, a->repo, &x->c->base, &s->edits, msg.buf, &ao,
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
	} else if ((r = touches_target(a->repo, &x->c->base, &a->commit, t, &s->aerr)) < 0) {
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
 * One attempt at a target (a->n): get edits, build the candidate, gate it,
 * record everything in one transaction.  a->done is set when the target
 * reached a final state.  Returns SL_ERROR only for machinery failures (the
 * attempt is then not recorded and the target stays pending for a later
 * run).
 */
static int attempt(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	attempt_state *s = &a->s;
	sl_buf fb = SL_BUF_INIT;
	int ret = SL_ERROR;

	attempt_state_init(s, a->rec, a->n);
	memset(&a->commit, 0, sizeof(a->commit));
	memset(&a->gates, 0, sizeof(a->gates));
	a->branch = NULL;
	a->passed = a->ended = a->done = 0;
	if (first_of_round(a) && spec->nrules && try_rules(a, err))
		goto done;
	if (!s->use_rules && !x->provider) {
		if ((ret = record_nothing_to_try(a, err)))
			goto done;
		a->ended = 1;
	} else if (!s->use_rules && (ret = spec->session.mode == SL_GENERATE_ACT ?
				     run_session_step(a, err) : run_model_step(a, err))) {
		goto done;
	}
	if (a->ended) {
		a->done = 1;
		ret = SL_OK;
		goto done;
	}
	if (s->a.outcome == SL_A_NONE && (ret = build_candidate(a, err)))
		goto done;
	run_ev_applied(a);
	if (s->a.outcome == SL_A_CANDIDATE) {
		a->branch = sl_xstrdup(a->target_branch);
		if ((ret = run_base_wait(x, err)) || (ret = run_judge_step(a, err)))
			goto done;
		if (a->ended) {
			a->done = 1;
			ret = SL_OK;
			goto done;
		}
	}
	if (s->use_rules)
		sl_buf_addf(&fb, "A deterministic rewrite was tried first and failed. "
			    "Its diff:\n```diff\n%s```\n%s", s->diff.buf, s->feedback.buf);
	else
		sl_buf_adds(&fb, s->feedback.buf);
	run_attempt_step(a, SL_STEP_RECORD);
	if ((ret = run_record_attempt(a, fb.buf, err)))
		goto done;
	run_ev_candidate(a);
	if (!a->passed) {
		run_history *h = a->hist;
		sl_turn *turn;

		SL_ALLOC_GROW(h->v, h->n + 1, h->alloc);
		turn = &h->v[h->n++];
		turn->reply = s->comp.text.len ? sl_xstrdup(s->comp.text.buf) : NULL;
		turn->feedback = sl_buf_detach(&fb, NULL);
	}
	ret = SL_OK;
done:
	if (a->branch && ret) {
		/* only the branch this attempt wrote: another run may hold the target now */
		if (run_cur_batch)
			run_batch_unqueue(run_cur_batch, a->branch);
		run_git_lock_take(x);
		sl_branch_delete_matching(a->repo, a->branch, &a->commit, NULL);
		run_git_lock_give(x);
	}
	sl_gate_outcome_release(&a->gates);
	free(a->branch);
	a->branch = NULL;
	attempt_state_release(s);
	sl_buf_release(&fb);
	return ret;
}

int run_store_branch(run_ctx *x, const sl_target_rec *rec, char **branch)
{
	sl_buf prefix = SL_BUF_INIT;
	char *own;

	sl_buf_addf(&prefix, "%s-%.8s", x->c->spec->branch_prefix, x->store_tag);
	own = run_branch_name(prefix.buf, rec, &x->index);
	sl_buf_release(&prefix);
	if (!strcmp(own, *branch)) {
		free(own);
		return 0;
	}
	run_notice(x, "branch '%s' is held by another store (its commit does not name this "
		   "one): left alone; this store's candidate for %s:%lld goes on branch '%s'",
		   *branch, rec->path, (long long)rec->start_line, own);
	free(*branch);
	*branch = own;
	return 1;
}

/*
 * The branch name's leftover from this store (a run killed during the gates
 * of one of the target's candidates) goes; where another store made the
 * branch, *branch becomes this store's own name (run_store_branch()).  The
 * caller holds git_lock and the target's lease.
 */
static int own_branch(run_ctx *x, git_repository *repo, const sl_target_rec *rec,
		      char **branch, sl_err *err)
{
	git_oid at;
	enum sl_holder h = sl_branch_holder(repo, *branch, x->store_tags, &at);

	if (h == SL_HOLDER_OTHER && run_store_branch(x, rec, branch))
		h = sl_branch_holder(repo, *branch, x->store_tags, &at);
	return h == SL_HOLDER_MINE ? sl_branch_delete_matching(repo, *branch, &at, err) : SL_OK;
}

int run_clear_leftover(run_ctx *x, git_repository *repo, const sl_target_rec *rec,
		       char **branch, sl_err *err)
{
	int ret;

	/* the target has no passed candidate: a branch of its name that this
	   store made is what a run killed during the gates of one of its
	   candidates left behind, and so is a lock file of that branch (this
	   run holds the target's lease: no one else of this store may be
	   writing it; checked under git_lock, the way a branch is written) */
	run_git_lock_take(x);
	ret = sl_lease_check(x->st, rec->id, x->owner, run_cur_epoch, err);
	if (!ret) {
		sl_buf lock = SL_BUF_INIT;

		sl_buf_addf(&lock, "%srefs/heads/%s.lock", git_repository_path(repo), *branch);
		if (unlink(lock.buf) && errno != ENOENT)
			ret = sl_err_set(err, SL_ERROR, "cannot remove stale lock '%s': %s",
					 lock.buf, strerror(errno));
		sl_buf_release(&lock);
	}
	if (!ret)
		ret = own_branch(x, repo, rec, branch, err);
	run_git_lock_give(x);
	return ret;
}

/*
 * Take a target the worker holds through its attempts, after the ones
 * earlier runs made: the conversation so far comes back from the store.
 */
int run_process_target(run_ctx *x, git_repository *repo, sl_target_rec *rec,
		       const sl_target *t, sl_err *err)
{
	run_history hist = { NULL, 0, 0 };
	run_attempt a;
	int ret = SL_OK, done = 0;
	char *branch = run_branch_name(x->c->spec->branch_prefix, rec, &x->index);

	/* the conversation so far: earlier replies and what went wrong with them */
	if (rec->attempts > 0 && sl_journal_history(x->st, rec->id, &hist.v, &hist.n, err)) {
		free(branch);
		return SL_ERROR;
	}
	hist.alloc = hist.n;

	ret = run_clear_leftover(x, repo, rec, &branch, err);
	memset(&a, 0, sizeof(a));
	a.x = x;
	a.repo = repo;
	a.target_branch = branch;
	a.rec = rec;
	a.t = t;
	a.hist = &hist;
	for (a.n = rec->attempts + 1;
	     !ret && !done && !run_interrupted(x) && a.n <= run_attempt_limit(x, rec); a.n++) {
		if ((ret = attempt(&a, err)))
			break;
		done = a.done;
	}
	if (!ret && !done && !run_interrupted(x)) {
		/* attempts were used up in an earlier run */
		ret = run_move_target(x, rec->id, SL_T_FAILED, rec->attempts, "attempts exhausted",
				      err);
	}
	sl_turn_list_free(hist.v, hist.n);
	free(branch);
	return ret;
}
