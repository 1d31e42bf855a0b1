/*
 * gate_store.h - the store's records for judging gates: the baseline (every
 * gate run on the campaign's base commit, kept so it runs once per
 * campaign and gate definition) and the verdict cache (a gate's verdict on a tree, keyed by
 * tree id, gate definition and environment digest).
 */
#ifndef SL_GATE_STORE_H
#define SL_GATE_STORE_H

#include <stdint.h>

#include "common/err.h"
#include "storage/store.h"

typedef struct sl_baseline_rec {
	char *gate;
	int64_t run;                /* 1-based: test gates run twice to find flaky tests */
	sl_verdict verdict;
	int64_t exit_status;
	char *output;               /* the tail the gate kept */
	char *report;               /* the report file's text, or NULL */
	char *digest;               /* of the gate definition that ran */
} sl_baseline_rec;

void sl_baseline_list_free(sl_baseline_rec *v, size_t n);
/*
 * The baseline runs of one gate measured under the definition `digest`, in
 * run order (n = 0 when none is stored: a run of another definition is
 * stale, and the next sl_store_baseline_add of its run number replaces it).
 */
int sl_store_baseline_get(sl_store *st, int64_t campaign_id, const char *gate,
			  const char *digest, sl_baseline_rec **out, size_t *n, sl_err *err);
int sl_store_baseline_add(sl_store *st, int64_t campaign_id, const sl_baseline_rec *in,
			  sl_err *err);
/* Forget every baseline run of the campaign: its gates are measured again, in order. */
int sl_store_baseline_clear(sl_store *st, int64_t campaign_id, sl_err *err);

/* A cached verdict; SL_ENOTFOUND on a miss.  *feedback_out may be NULL after a hit. */
int sl_store_cache_get(sl_store *st, const char *key, sl_gate_run_rec *out,
		       char **feedback_out, sl_err *err);
int sl_store_cache_put(sl_store *st, const char *key, const sl_gate_run_rec *in,
		       const char *feedback, sl_err *err);

#endif
