/*
 * record.c - what the run writes to the store: the campaign (or the one
 * recorded first, whose base a rerun resumes on), the scoped targets as
 * scoping passes them on, a chunk a transaction, with what scoping gave
 * for each (its unit text and sites: read back when a worker takes it),
 * then a fix campaign's unplaced findings, a
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

/* A scoped target waiting to be written: its record and its scope's bytes. */
struct rec_item {
	sl_target_rec r;            /* owns key and path; lang, blob and unit borrowed */
	char blob[GIT_OID_HEXSZ + 1];
	sl_buf data;                /* sl_target_encode */
	int shares;                 /* another target starts where it does */
};

void run_recorder_init(run_recorder *r, run_ctx *x)
{
	memset(r, 0, sizeof(*r));
	r->x = x;
	r->size = run_chunk_size();
	r->v = sl_xcalloc(r->size, sizeof(*r->v));
	r->prev_at = SIZE_MAX;
}

void run_recorder_release(run_recorder *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].r.key);
		free(r->v[i].r.path);
		sl_buf_release(&r->v[i].data);
	}
	free(r->v);
	free(r->prev_path);
	memset(r, 0, sizeof(*r));
	r->prev_at = SIZE_MAX;
}

/* Write the chunk held in one transaction and note each target as scoped. */
static int flush(run_recorder *r)
{
	run_ctx *x = r->x;
	int ret = SL_ERROR;

	if (!r->n)
		return SL_OK;
	if (sl_store_begin(x->st, &r->err))
		return SL_ERROR;
	for (size_t i = 0; i < r->n; i++) {
		struct rec_item *it = &r->v[i];

		if (sl_store_target_add(x->st, &it->r, &it->r.id, NULL, &r->err) ||
		    sl_store_target_scope_put(x->st, it->r.id, it->data.buf, it->data.len, &r->err))
			goto done;
	}
	if (sl_store_commit(x->st, &r->err))
		goto done;
	for (size_t i = 0; i < r->n; i++) {
		run_target_index_mark(&x->index, r->v[i].r.id, r->v[i].shares);
		free(r->v[i].r.key);
		free(r->v[i].r.path);
		sl_buf_release(&r->v[i].data);
	}
	if (r->prev_at != SIZE_MAX)
		r->prev_id = r->v[r->prev_at].r.id;
	r->prev_at = SIZE_MAX;
	r->n = 0;
	ret = SL_OK;
done:
	if (ret)
		sl_store_rollback(x->st);
	return ret;
}

/* Hold t to be written (shares: another target starts where it does); its place, or SIZE_MAX. */
static size_t hold(run_recorder *r, const sl_target *t, int shares)
{
	sl_buf key = SL_BUF_INIT;
	struct rec_item *it;

	r->scoped++;
	run_key_of(&key, t);
	if (!run_in_shard(r->x, key.buf)) {
		sl_buf_release(&key);
		return SIZE_MAX;
	}
	it = &r->v[r->n];
	memset(it, 0, sizeof(*it));
	it->r.campaign_id = r->x->campaign_id;
	it->r.key = sl_buf_detach(&key, NULL);
	it->r.path = sl_xstrdup(t->path);
	it->r.lang = (char *)t->lang;
	memcpy(it->blob, t->blob, sizeof(it->blob));
	it->r.blob = it->blob;
	it->r.unit = (char *)t->unit;
	it->r.start_byte = t->start_byte;
	it->r.end_byte = t->end_byte;
	it->r.start_line = t->start_line;
	it->r.start_col = t->start_col;
	it->r.end_line = t->end_line;
	it->r.end_col = t->end_col;
	it->r.nsites = (int64_t)t->nsites;
	it->shares = shares;
	sl_target_encode(&it->data, t);
	if (++r->n > r->held_max)
		r->held_max = r->n;
	return r->n - 1;
}

/*
 * Scoping passes the targets on in order (path, start, the enclosing one
 * first): those that start at the same place are neighbours.
 */
int run_record_emit(const sl_target *t, void *arg)
{
	run_recorder *r = arg;
	int shares = r->prev_path && !strcmp(r->prev_path, t->path) &&
		r->prev_start == t->start_byte && r->prev_end != t->end_byte;
	size_t at;

	if (shares && r->prev_at != SIZE_MAX)
		r->v[r->prev_at].shares = 1;
	else if (shares && r->prev_id)
		run_target_index_mark(&r->x->index, r->prev_id, 1);
	if (r->n == r->size && flush(r))
		return SL_ERROR;
	at = hold(r, t, shares);
	if (!r->prev_path || strcmp(r->prev_path, t->path)) {
		free(r->prev_path);
		r->prev_path = sl_xstrdup(t->path);
	}
	r->prev_start = t->start_byte;
	r->prev_end = t->end_byte;
	r->prev_at = at;
	r->prev_id = 0;
	return SL_OK;
}

static int cmp_start(const void *a, const void *b)
{
	const sl_target *x = *(const sl_target *const *)a, *y = *(const sl_target *const *)b;
	int c = strcmp(x->path, y->path);

	return c ? c : x->start_byte < y->start_byte ? -1 : x->start_byte > y->start_byte;
}

int run_record_list(run_recorder *r, const sl_target_list *list)
{
	const sl_target **by_start = sl_xcalloc(list->n ? list->n : 1, sizeof(*by_start));
	unsigned char *shares = sl_xcalloc(list->n ? list->n : 1, 1);
	int ret = SL_OK;

	/* a list chosen after scoping may not be in scope order: look for neighbours sorted */
	for (size_t i = 0; i < list->n; i++)
		by_start[i] = &list->v[i];
	qsort(by_start, list->n, sizeof(*by_start), cmp_start);
	for (size_t i = 1; i < list->n; i++)
		if (!cmp_start(&by_start[i - 1], &by_start[i]) &&
		    by_start[i - 1]->end_byte != by_start[i]->end_byte)
			shares[by_start[i - 1] - list->v] = shares[by_start[i] - list->v] = 1;
	for (size_t i = 0; !ret && i < list->n; i++) {
		if (r->n == r->size && (ret = flush(r)))
			break;
		hold(r, &list->v[i], shares[i]);
	}
	free(by_start);
	free(shares);
	return ret;
}

int run_record_finish(run_recorder *r, sl_err *err)
{
	run_ctx *x = r->x;
	int ret = SL_ERROR;

	if (r->err.code || flush(r))
		goto done;
	if (!x->unplaced.f.n) {
		ret = SL_OK;
		goto done;
	}
	if (sl_store_begin(x->st, &r->err))
		goto done;
	for (size_t i = 0; i < x->unplaced.f.n; i++) {
		const sl_finding *f = &x->unplaced.f.v[i];
		sl_unplaced_rec u = { f->file, f->line, f->rule, f->message,
				      (char *)sl_unplaced_reason_name(x->unplaced.why[i]) };

		if (sl_store_unplaced_add(x->st, x->campaign_id, &u, &r->err)) {
			sl_store_rollback(x->st);
			goto done;
		}
	}
	ret = sl_store_commit(x->st, &r->err);
done:
	if (ret)
		*err = r->err;
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
