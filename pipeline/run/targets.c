/*
 * targets.c - the targets of a run: the scoped targets' index (by key and
 * by start position, for a lookup per target in O(log n)), the branch
 * name of each, and which targets this run works on: the pending ones, and
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

static const sl_target_list *sort_list;    /* only during run_target_index_init's qsort */

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
void run_target_index_init(target_index *ix, const sl_target_list *list)
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

void run_target_index_release(target_index *ix)
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
	if (shares_start(list, t) || git_reference_name_is_valid(&valid, ref.buf) || !valid) {
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

const sl_target *run_find_target(const target_index *ix, const sl_target_rec *rec,
				 sl_buf *tmp)
{
	size_t lo = 0, hi = ix->list->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const sl_target *o = &ix->list->v[ix->by_key[mid]];
		int c = cmp_key(rec->path, rec->start_byte, rec->end_byte, o);

		if (!c) {
			run_key_of(tmp, o);
			return strcmp(tmp->buf, rec->key) ? NULL : o;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
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

/* Pending targets, and those a budget stopped in an earlier run, in id order. */
/* Target records per chunk read from the store; SLUICE_RUN_CHUNK in tests. */
#define RUN_CHUNK 256

int run_load_pending(run_ctx *x, sl_err *err)
{
	const char *env = getenv("SLUICE_RUN_CHUNK");

	x->chunk_size = env && atoi(env) > 0 ? (size_t)atoi(env) : RUN_CHUNK;
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
