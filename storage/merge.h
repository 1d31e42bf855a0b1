/*
 * merge.h - shards and their merge: a store that holds one shard of a
 * campaign says which (store_meta "shard" = "K/N"), and sl_store_merge()
 * folds shard stores into one store.
 *
 * A campaign run as N shards (`sluice run --shard K/N`, README "Running on
 * many machines") leaves N stores, each holding the targets of its shard.
 * Merging checks every input first (sl_merge_check: campaigns of one name
 * must have the same definition digest, base commit and branch prefix, and
 * shards the same N), then copies, per input and campaign, each target with
 * everything recorded under it (attempts, replies, candidates, gate runs,
 * decisions, published changes) under new ids, and the campaign's runs,
 * baselines and findings not placed, and the store's verdict and scope
 * caches.  Table merge_origin (migration 13) records which store each target
 * came from and a signature of what it held: merging the same store again
 * copies nothing, a store that ran on since replaces what came from it, and
 * a target finished in one store replaces the same target left unfinished by
 * another.  Nothing is ever copied twice.
 *
 * Calling sequence: open every input and the output (sl_store_open),
 * sl_merge_check(out, in, n), then sl_store_merge(out, in[i]) for each; each
 * merge is one transaction of out.
 */
#ifndef SL_MERGE_H
#define SL_MERGE_H

#include <stddef.h>

#include "common/buf.h"
#include "storage/store.h"

/*
 * The shard a store holds: *k of *n (0 <= k < n); *n = 0 when the store is
 * no shard.  sl_store_shard_set records it once: a store that holds another
 * shard (or the same campaign unsharded) is refused with SL_EINPUT.
 */
int sl_store_shard_get(sl_store *st, unsigned *k, unsigned *n, sl_err *err);
int sl_store_shard_set(sl_store *st, unsigned k, unsigned n, sl_err *err);

/*
 * Refuse (SL_EINPUT, one line naming the store and the campaign) inputs
 * that cannot be merged into out (may be NULL: a new store): a campaign of
 * one name with another definition digest, base commit or branch prefix, or
 * shards of different partitions (another N), out among the inputs, or out
 * a shard's store.
 * Writes nothing.
 */
int sl_merge_check(sl_store *out, sl_store *const *in, size_t n, sl_err *err);

typedef struct sl_merge_opts {
	const char *repo_path;      /* recorded as each merged campaign's repository; NULL
				       keeps the one the input recorded */
} sl_merge_opts;
#define SL_MERGE_OPTS_INIT { .repo_path = NULL }

typedef struct sl_merge_counts {
	size_t campaigns;           /* campaigns of the input */
	size_t copied;              /* targets new in out */
	size_t replaced;            /* targets out held, replaced by the input's */
	size_t kept;                /* targets out already held as the input has them */
} sl_merge_counts;

/*
 * Fold in into out, in one transaction of out; counts added to *counts.
 * Each of in's campaigns is recorded in out's table merged_stores (with
 * the stores merged into in before): as in's store id and campaign id,
 * the tag its candidates' commits carry.
 */
int sl_store_merge(sl_store *out, sl_store *in, const sl_merge_opts *opts,
		   sl_merge_counts *counts, sl_err *err);

/*
 * The Sluice-Store tags that count as campaign_id's of st, one a line:
 * its own "STORE_ID/CAMPAIGN_ID" first, then one for each store campaign
 * merged into it ("SHARD_STORE_ID/ITS_CAMPAIGN_ID").  Appended to out.
 */
int sl_store_tags(sl_buf *out, sl_store *st, int64_t campaign_id, sl_err *err);

#endif
