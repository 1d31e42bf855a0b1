/*
 * record.c - what the run writes to the store: the campaign (or the one
 * recorded first, whose base a rerun resumes on), the scoped targets (and
 * a fix campaign's unplaced findings, in the same transaction), a
 * target moved to a new state, and an attempt with its candidate and gate
 * runs.  Every write for a target the worker holds is a fenced transaction
 * (lease.c): a run that lost the target writes nothing.
 */
#include <string.h>

#include "pipeline/run/run_internal.h"
#include "storage/lease.h"
#include "storage/unplaced_store.h"
#include "common/caps.h"

int run_record_campaign(run_ctx *x, sl_err *err)
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

int run_record_targets(run_ctx *x, const sl_target_list *list, sl_err *err)
{
	sl_buf key = SL_BUF_INIT;
	int ret = SL_ERROR;

	if (sl_store_begin(x->st, err))
		return SL_ERROR;
	for (size_t i = 0; i < list->n; i++) {
		const sl_target *t = &list->v[i];
		sl_target_rec r = { 0 };
		int64_t id;

		run_key_of(&key, t);
		if (!run_in_shard(x, key.buf))
			continue;
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
	for (size_t i = 0; i < x->unplaced.f.n; i++) {
		const sl_finding *f = &x->unplaced.f.v[i];
		sl_unplaced_rec u = { f->file, f->line, f->rule, f->message,
				      (char *)sl_unplaced_reason_name(x->unplaced.why[i]) };

		if (sl_store_unplaced_add(x->st, x->campaign_id, &u, err))
			goto done;
	}
	ret = sl_store_commit(x->st, err);
done:
	if (ret)
		sl_store_rollback(x->st);
	sl_buf_release(&key);
	return ret;
}

/* Move a target, in a transaction of its own. */
int run_move_target(run_ctx *x, int64_t id, enum sl_target_state state, int64_t attempts,
		    const char *reason, sl_err *err)
{
	int ret;

	if ((ret = run_begin_fenced(x, id, err)))
		return ret;
	if (sl_store_target_update(x->st, id, state, attempts, reason, err)) {
		sl_store_rollback(x->st);
		return SL_ERROR;
	}
	return sl_store_commit(x->st, err);
}

/* Record an attempt that produced no candidate and move the target. */
int run_record_plain(run_attempt *a, enum sl_target_state state, int64_t attempts,
		     const char *reason, sl_err *err)
{
	run_ctx *x = a->x;
	const attempt_state *s = &a->s;
	const sl_target_rec *rec = a->rec;
	int64_t id;
	int ret;

	if ((ret = run_begin_fenced(x, rec->id, err)))
		return ret;
	if ((s->a.outcome != SL_A_NONE && sl_store_attempt_add(x->st, &s->a, &id, err)) ||
	    sl_store_target_update(x->st, rec->id, state, attempts, reason, err)) {
		sl_store_rollback(x->st);
		return SL_ERROR;
	}
	return sl_store_commit(x->st, err);
}

/*
 * Record the attempt, its candidate and gate runs, and move the target, in
 * one transaction.  a->done is set when the target reached a final state.
 */
int run_record_attempt(run_attempt *a, const char *feedback, sl_err *err)
{
	run_ctx *x = a->x;
	const attempt_state *s = &a->s;
	const sl_target_rec *rec = a->rec;
	const char *branch = a->branch;
	sl_gate_outcome *gates = &a->gates;
	int64_t n = a->n;
	int passed = a->passed;
	sl_candidate_rec cand = { 0 };
	char hex[GIT_OID_HEXSZ + 1];
	int64_t attempt_id = 0, cand_id = 0;
	int last, ret;

	if ((ret = run_begin_fenced(x, rec->id, err)))
		return ret;
	if (sl_store_attempt_add(x->st, &s->a, &attempt_id, err) ||
	    sl_journal_attempt_note(x->st, attempt_id, passed ? NULL : feedback,
				    s->usage_note[0] ? s->usage_note : NULL, err))
		goto fail;
	if (branch) {
		git_oid_tostr(hex, sizeof(hex), &a->commit);
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
	last = passed || n >= run_attempt_limit(x, rec) || (s->use_rules && !x->provider);
	if (sl_store_target_update(x->st, rec->id, passed ? SL_T_PROPOSED :
				   last ? SL_T_FAILED : SL_T_PENDING, n,
				   passed ? NULL : s->feedback.buf, err) ||
	    (last && sl_lease_set_digest(x->st, rec->id, x->digest, err)) ||
	    sl_store_commit(x->st, err))
		goto fail;
	a->done = last;
	return SL_OK;
fail:
	sl_store_rollback(x->st);
	return SL_ERROR;
}
