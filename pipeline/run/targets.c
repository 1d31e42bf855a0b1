/*
 * targets.c - the targets of a run: which ones this run scoped (a bit a
 * target id; each target's unit text and sites are read back from the
 * store when a worker takes it), the branch name of each, and which targets this run works on: the pending ones, and
 * for fix and testgen campaigns those the baseline chooses; of a shard, only
 * those its key puts in the shard, on the base every shard is told.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/run/run_internal.h"
#include "storage/merge.h"
#include "common/sha256.h"

void run_key_of(sl_buf *b, const sl_target *t)
{
	sl_buf_reset(b);
	sl_buf_addf(b, "%s:%u-%u", t->path, t->start_byte, t->end_byte);
}

static int bit_get(const uint64_t *v, size_t nwords, int64_t id)
{
	return id > 0 && (size_t)id / 64 < nwords && (v[id / 64] >> (id % 64) & 1);
}

void run_target_index_mark(target_index *ix, int64_t id, int shares)
{
	size_t w = (size_t)id / 64;

	if (id <= 0)
		BUG("target id %lld", (long long)id);
	if (w >= ix->nwords) {
		size_t n = ix->nwords ? ix->nwords : 64;

		while (n <= w)
			n = sl_st_mult(n, 2);
		ix->scoped = sl_xrealloc(ix->scoped, sl_st_mult(n, sizeof(uint64_t)));
		ix->shares = sl_xrealloc(ix->shares, sl_st_mult(n, sizeof(uint64_t)));
		memset(ix->scoped + ix->nwords, 0, (n - ix->nwords) * sizeof(uint64_t));
		memset(ix->shares + ix->nwords, 0, (n - ix->nwords) * sizeof(uint64_t));
		ix->nwords = n;
	}
	ix->scoped[w] |= (uint64_t)1 << (id % 64);
	if (shares)
		ix->shares[w] |= (uint64_t)1 << (id % 64);
}

void run_target_index_release(target_index *ix)
{
	free(ix->scoped);
	free(ix->shares);
	memset(ix, 0, sizeof(*ix));
}

int run_scoped_target(run_ctx *x, const sl_target_rec *rec, sl_target *out, sl_buf *tmp,
		      sl_err *err)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (!bit_get(x->index.scoped, x->index.nwords, rec->id))
		return SL_ENOTFOUND;
	/* scoped, then nothing recorded: the store is not what this run wrote */
	if ((ret = sl_store_target_scope_get(x->st, rec->id, tmp, err)))
		return ret == SL_ENOTFOUND ? SL_ERROR : ret;
	return sl_target_decode(out, tmp->buf, tmp->len, rec->path, rec->blob, rec->lang, err);
}

char *run_branch_name(const char *prefix, const sl_target_rec *t, const target_index *list)
{
	sl_buf b = SL_BUF_INIT, ref = SL_BUF_INIT, at = SL_BUF_INIT;
	size_t from;
	int valid = 0;

	sl_buf_addf(&at, "-L%lld", (long long)t->start_line);
	if (t->start_col > 1)
		sl_buf_addf(&at, "C%lld", (long long)t->start_col);
	sl_buf_addf(&b, "%s/", prefix);
	from = b.len;
	for (const char *p = t->path; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (isalnum(ch) || ch == '_' || ch == '-' || (ch == '.' && p[1] != '.'))
			sl_buf_addch(&b, ch);
		else
			sl_buf_addch(&b, '-');
	}
	/* a long path keeps its head and a hash of the rest; the position stays readable */
	sl_ref_name_bound(&b, from, from + SL_REF_COMPONENT_MAX - at.len, t->path);
	sl_buf_add(&b, at.buf, at.len);
	sl_buf_addf(&ref, "refs/heads/%s", b.buf);
	if (bit_get(list->shares, list->nwords, t->id) ||
	    git_reference_name_is_valid(&valid, ref.buf) || !valid) {
		sl_buf_reset(&b);
		/* ids are a store's: a shard's name its branches apart from other shards' */
		if (list->shard_n)
			sl_buf_addf(&b, "%s/target-%u-%lld", prefix, list->shard_k, (long long)t->id);
		else
			sl_buf_addf(&b, "%s/target-%lld", prefix, (long long)t->id);
	}
	sl_buf_release(&ref);
	sl_buf_release(&at);
	return sl_buf_detach(&b, NULL);
}

/* testgen with coverage_below: only the units the base's tests cover too little. */
int run_testgen_targets(run_ctx *x, sl_target_list *list, sl_err *err)
{
	size_t before = list->n;
	int ret;

	if ((ret = run_baseline_first(x, err)))
		return ret;
	sl_testgen_select(list, sl_gating_base_coverage(x->gating), x->c->spec->coverage_below);
	run_notice(x, "testgen: %zu of %zu units below %u%% line coverage", list->n, before,
		   x->c->spec->coverage_below);
	return SL_OK;
}

/*
 * kind fix: the baseline comes first, for its findings are the targets:
 * keep the scoped units that enclose one (fixjob.h).
 */
int run_fix_targets(run_ctx *x, sl_target_list *list, sl_err *err)
{
	sl_buf note = SL_BUF_INIT;
	int ret;

	if ((ret = run_baseline_first(x, err)))
		return ret;
	/* a findings file says where to look; the gate still proves each fix */
	if (x->c->spec->findings_report)
		ret = sl_fix_load_findings(&x->findings, &x->unplaced, x->c, &note, err);
	else
		sl_gating_base_findings(x->gating, &x->findings);
	for (const char *l = note.buf, *e; !ret && *l; l = *e ? e + 1 : e) {
		e = strchrnul(l, '\n');
		run_notice(x, "findings: %.*s", (int)(e - l), l);
	}
	sl_buf_reset(&note);
	/* a failing test's target: the code it exercises (fixtarget.c) */
	if (!ret && !(ret = sl_fix_tests(&x->findings, &x->unplaced, x->c, x->st, x->gating, &note,
					   err)) &&
	    note.len)
		run_notice(x, "%s", note.buf);
	sl_buf_reset(&note);
	if (!ret && !(ret = sl_fix_targets(list, x->c, x->st, &x->findings, &x->unplaced, &note,
					  err)))
		run_notice(x, "%s", note.buf);
	sl_buf_release(&note);
	return ret;
}

/* Target records per chunk read from or written to the store. */
#define RUN_CHUNK 256

size_t run_chunk_size(void)
{
	const char *env = getenv("SLUICE_RUN_CHUNK");

	return env && atoi(env) > 0 ? (size_t)atoi(env) : RUN_CHUNK;
}

/* Pending targets, and those a budget stopped in an earlier run, in id order. */
int run_load_pending(run_ctx *x, sl_err *err)
{
	x->chunk_size = run_chunk_size();
	return sl_store_targets_open_count(x->st, x->campaign_id, &x->npending, err) ?
		SL_ERROR : SL_OK;
}

int run_next_target(run_ctx *x, sl_target_rec *out, sl_err *err)
{
	memset(out, 0, sizeof(*out));
	if (x->chunk_at == x->nchunk) {
		/* every record of the chunk was moved out: its array holds none */
		free(x->chunk);
		x->chunk = NULL;
		x->nchunk = x->chunk_at = 0;
		if (x->chunk_end)
			return 0;
		if (sl_store_targets_open(x->st, x->campaign_id, x->cursor, x->chunk_size,
					  &x->chunk, &x->nchunk, err))
			return SL_ERROR;
		x->chunk_end = x->nchunk < x->chunk_size;
		if (!x->nchunk)
			return 0;
		x->cursor = x->chunk[x->nchunk - 1].id;
		x->held += x->nchunk;
		if (x->held > x->held_max)
			x->held_max = x->held;
	}
	*out = x->chunk[x->chunk_at];
	memset(&x->chunk[x->chunk_at++], 0, sizeof(*out));
	x->next++;
	return 1;
}

void run_put_target(run_ctx *x, sl_target_rec *rec)
{
	sl_target_rec_release(rec);
	pthread_mutex_lock(&x->lock);
	x->held--;
	pthread_mutex_unlock(&x->lock);
}

unsigned sl_run_shard_of(const char *key, unsigned n)
{
	unsigned char d[32];
	sl_sha256 h;
	uint64_t v = 0;

	if (n <= 1)
		return 0;
	sl_sha256_init(&h);
	sl_sha256_update(&h, key, strlen(key));
	sl_sha256_final(&h, d);
	for (int i = 0; i < 8; i++)
		v = v << 8 | d[i];
	return (unsigned)(v % n);
}

int run_in_shard(const run_ctx *x, const char *key)
{
	return !x->opts->shard_n || sl_run_shard_of(key, x->opts->shard_n) == x->opts->shard_k;
}

/*
 * Every shard scopes the same base: --base names it, and a campaign whose
 * base is another (resolved here, or recorded by the store's first run:
 * checked again once the store is open) is refused before anything runs.
 * Once open, the store records its shard, and a store of a shard is not
 * run as another or as the whole campaign.
 */
int run_shard_check(run_ctx *x, int opened, sl_err *err)
{
	unsigned k, n;
	git_object *obj = NULL, *commit = NULL;
	char want[GIT_OID_HEXSZ + 1];

	if (x->opts->base) {
		if (git_revparse_single(&obj, x->c->repo, x->opts->base) ||
		    git_object_peel(&commit, obj, GIT_OBJECT_COMMIT)) {
			git_object_free(obj);
			return sl_err_set(err, SL_EINPUT, "--base '%s': no such commit in '%s'",
					  x->opts->base, x->c->repo_path);
		}
		git_oid_tostr(want, sizeof(want), git_object_id(commit));
		git_object_free(commit);
		git_object_free(obj);
		if (strcmp(want, x->c->base_hex))
			return sl_err_set(err, SL_EINPUT, "--base '%s' is %.12s, but campaign '%s' "
					  "scopes %.12s%s; every shard must scope the same base",
					  x->opts->base, want, x->c->spec->name, x->c->base_hex,
					  opened ? " (recorded in the store)" : "");
	}
	if (!opened)
		return SL_OK;
	if (x->opts->shard_n)
		return sl_store_shard_set(x->st, x->opts->shard_k, x->opts->shard_n, err);
	if (sl_store_shard_get(x->st, &k, &n, err))
		return SL_ERROR;
	return n ? sl_err_set(err, SL_EINPUT, "store '%s' holds shard %u/%u of the campaign; "
			      "run it with --shard %u/%u", x->opts->store, k, n, k, n) : SL_OK;
}

unsigned sl_run_target_shard(const sl_target *t, unsigned n)
{
	sl_buf key = SL_BUF_INIT;
	unsigned k;

	run_key_of(&key, t);
	k = sl_run_shard_of(key.buf, n);
	sl_buf_release(&key);
	return k;
}
