/*
 * base.c - the base commit's side of a run: how candidates' trees are made
 * (the warm base and an overlay, or a worktree each; README, "Warm base"),
 * the gates opened on the base, and the baseline measured (or loaded) one
 * run of the campaign at a time under the baseline lease.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/run/run_internal.h"
#include "storage/lease.h"

int run_base_checkout_dir(void *ctx, sl_gate_tree *out, sl_err *err)
{
	base_checkout *b = ctx;
	char hex[GIT_OID_HEXSZ + 1], name[64];
	sl_buf br = SL_BUF_INIT;
	int ret, capped = 0;

	if (b->x->warm) {
		/* the base is the warm base under an empty layer, like a candidate */
		if ((ret = sl_warm_layer_add(&b->layer, &capped, b->x->warm, b->repo, b->base,
					     run_layer_cap(b->x), err)))
			return ret;
		out->dir = sl_warm_tree(b->x->warm);
		out->layer = b->layer;
		out->layer_cap_mb = capped ? 0 : run_layer_cap(b->x);
		return SL_OK;
	}

	git_oid_tostr(hex, sizeof(hex), b->base);
	/* one per run: two runs may measure the base at once (a paused one) */
	sl_buf_addf(&br, "%s/base-%.12s-%ld", b->prefix, hex, (long)getpid());
	b->branch = sl_buf_detach(&br, NULL);
	snprintf(name, sizeof(name), "sl-base-%ld", (long)getpid());
	/* the workers change refs meanwhile (run_base in run.c) */
	run_git_lock_take(b->x);
	ret = sl_worktree_add(&b->wt, b->repo, b->scratch, name, b->branch, b->base, err);
	run_git_lock_give(b->x);
	if (ret)
		return ret;
	out->dir = sl_worktree_path(b->wt);
	out->layer = NULL;
	out->layer_cap_mb = 0;
	return SL_OK;
}

/* Remove the checkout and its branch; ret: the measurement's result, returned or SL_ERROR. */
int run_base_checkout_release(base_checkout *b, int ret, sl_err *err)
{
	run_git_lock_take(b->x);
	if (b->wt && sl_worktree_remove(b->wt, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	if (b->layer && sl_warm_layer_remove(b->layer, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	free(b->layer);
	if (b->branch)
		sl_branch_delete(b->repo, b->branch, NULL);
	run_git_lock_give(b->x);
	free(b->branch);
	return ret;
}

/* A stop while the base is made: not a failure; the next run starts over. */
static int base_stop(run_ctx *x, const char *when, sl_err *err)
{
	x->base_stopped = 1;
	return sl_err_set(err, SL_ERROR, "the run was stopped %s", when);
}

/*
 * sl_warm_prepare_fn: the preparing gates on the exported base.  Gates
 * killed by a stop prepared nothing: an error, so the tree is never marked
 * ready.
 */
static int prepare_warm(void *ctx, const char *dir, const char *prev_key, int unfinished,
			sl_err *err)
{
	run_ctx *x = ctx;
	sl_buf key = SL_BUF_INIT, why = SL_BUF_INIT;
	int ret;

	/* a re-preparation says why */
	if (unfinished)
		sl_buf_adds(&why, "the last preparation of this warm base did not finish");
	else if (prev_key) {
		sl_gating_warm_key(x->gating, &key);
		sl_gating_warm_why(prev_key, key.buf, &why);
	}
	if (why.len)
		run_notice(x, "warm base: prepared again: %s", why.buf);
	sl_buf_release(&key);
	sl_buf_release(&why);
	ret = sl_gating_prepare(x->gating, dir, x->opts->progress, x->opts->progress_ctx, NULL,
				err);
	if (run_interrupted(x)) {
		sl_err_clear(err);
		return base_stop(x, "while the warm base was prepared", err);
	}
	return ret;
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
				     run_layer_cap(x), err)))
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
	sl_buf key = SL_BUF_INIT;
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
		sl_warm_opts wo = { .repo = x->c->repo, .root = x->scratch, .base = &x->c->base,
				    .store = x->opts->store, .prepare = prepare_warm, .ctx = x };

		sl_gating_warm_key(x->gating, &key);
		wo.key = key.buf;
		run_step(x, SL_STEP_PREPARE);
		if ((ret = sl_warm_open(&x->warm, &wo, &built, err)) ||
		    (ret = warm_works(x, &why, err)))
			goto done;
	}
	/* a probe killed by a stop says nothing about the overlay */
	if (run_interrupted(x)) {
		ret = base_stop(x, "while the warm base was prepared", err);
		goto done;
	}
	if (why.len) {
		sl_warm_free(x->warm);
		x->warm = NULL;
		if (mode == SL_WARM_OVERLAY) {
			ret = sl_err_set(err, SL_EINPUT, "warm_base: overlay, but %s", why.buf);
			goto done;
		}
		run_notice(x, "tree: a worktree per candidate (%s)", why.buf);
		goto done;
	}
	/* the baselines of this definition belong with its warm base */
	sl_gating_share_baselines(x->gating, sl_warm_dir(x->warm));
	if (built)
		run_notice(x, "tree: warm base (overlay), prepared in %.1f s",
			   (double)(sl_now_ms() - start) / 1000);
	else
		run_notice(x, "tree: warm base (overlay), reused");
done:
	sl_buf_release(&why);
	sl_buf_release(&key);
	return ret;
}

int run_open_gating(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	int ret;

	if ((ret = sl_gating_open(&x->gating, spec->gates, spec->ngates, &spec->jail, x->st,
				  x->campaign_id, &x->c->base, x->opts->unsafe, err)))
		return ret;
	sl_gating_watch(x->gating, run_ev_gate, x);
	if ((ret = open_tree(x, err)))
		return ret;
	if (spec->session.mode == SL_GENERATE_ACT && x->provider && !x->warm)
		return sl_err_set(err, SL_EINPUT, "generate: act needs the warm base, and the jail "
				  "cannot mount an overlay here (see the tree: line above)");
	return SL_OK;
}

/* The baseline measured before the targets are chosen from it. */
int run_baseline_first(run_ctx *x, sl_err *err)
{
	int ret;

	if ((ret = run_open_gating(x, err)))
		return ret;
	return run_baseline(x, err);
}

/*
 * Wait for the baseline's lease (runs started together wait for the first
 * to record the baseline, then load it): the wait ends when the holder
 * releases the claim or its lease expires; *stopped 1 (SL_OK) when a
 * signal came first.
 */
static int baseline_claim(run_ctx *x, int64_t *epoch, int *stopped, sl_err *err)
{
	int claimed = 0, said = 0, ret;

	*stopped = 0;
	for (;;) {
		if ((ret = sl_lease_baseline_claim(x->st, x->campaign_id, x->owner, sl_wall_ms(),
						   x->lease_ttl_ms, &claimed, epoch, err)))
			return ret;
		if (claimed)
			return SL_OK;
		if (run_interrupted(x)) {
			*stopped = 1;
			return SL_OK;
		}
		if (!said++)
			run_notice(x, "baseline: another run is measuring the base; waiting for "
				   "its baseline");
		usleep(200 * 1000);
	}
}

/*
 * What the baseline lease is taken for: a run's baseline, or the
 * description `sluice baseline` prints (describe, json, out).
 */
typedef struct base_ask {
	int describe, json;
	sl_buf *out;
} base_ask;

/* The gates on the base, their rows fenced by the baseline lease's epoch. */
static int baseline_measure(run_ctx *x, int64_t epoch, const base_ask *ask, sl_err *err)
{
	base_checkout b = { x->c->repo, x->scratch, x->c->spec->branch_prefix, &x->c->base,
			    NULL, NULL, x, NULL };
	int ret;

	sl_gating_fence_baseline(x->gating, x->owner, epoch);
	if (ask->describe) {
		sl_buf_reset(ask->out);
		ret = sl_gating_describe(x->gating, run_base_checkout_dir, &b, x->opts->progress,
					 x->opts->progress_ctx, ask->json, ask->out, err);
	} else {
		ret = sl_gating_baseline(x->gating, run_base_checkout_dir, &b, x->opts->progress,
					 x->opts->progress_ctx, err);
	}
	return run_base_checkout_release(&b, ret, err);
}

/* Base failures that no candidate will be blamed for are said once (README, "Gate expectations"). */
static void notice_unblamed(run_ctx *x)
{
	sl_buf text = SL_BUF_INIT;

	sl_gating_unblamed(x->gating, &text);
	for (char *line = text.buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		run_notice(x, "baseline: %s", line);
	}
	sl_buf_release(&text);
}

/*
 * Measure (or load) the baseline, one run of the campaign at a time.  Its
 * rows are fenced by the lease's epoch: a run paused past its lease while
 * another took the baseline over writes none of them (SL_ELEASE), waits
 * for the claim again and loads what the other run measured.
 */
static int baseline_leased(run_ctx *x, const base_ask *ask, sl_err *err)
{
	int64_t epoch = 0;
	int stopped = 0, ret;

	run_step(x, SL_STEP_BASELINE);
	do {
		if ((ret = baseline_claim(x, &epoch, &stopped, err)))
			return ret;
		if (stopped)
			goto stopped;
		if ((ret = baseline_measure(x, epoch, ask, err)) == SL_ELEASE) {
			run_notice(x, "baseline: taken over by another run while this one was "
				   "paused; reading its baseline (%s)", err->msg);
			sl_err_clear(err);
		}
	} while (ret == SL_ELEASE);
	if (sl_lease_baseline_release(x->st, x->owner, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	if (!ret)
		notice_unblamed(x);
	if (!ret || !run_interrupted(x))
		return ret;
stopped:
	/* the baseline's gates were killed, or never started: nothing was kept */
	return base_stop(x, "during the baseline", err);
}

int run_baseline(run_ctx *x, sl_err *err)
{
	const base_ask ask = { 0, 0, NULL };

	return baseline_leased(x, &ask, err);
}

int run_baseline_describe(run_ctx *x, int json, sl_buf *out, sl_err *err)
{
	const base_ask ask = { 1, json, out };

	return baseline_leased(x, &ask, err);
}
