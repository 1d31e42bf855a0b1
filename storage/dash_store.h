/*
 * dash_store.h - what the dashboard (`sluice serve`, pipeline/review/serve.c)
 * and its /metrics read beyond the funnel and the outcome metrics: a
 * campaign's activity over time, its gates' verdicts and durations, the
 * targets a filter finds, and a stamp that changes whenever a run records
 * something for the campaign.  Nothing here writes the store.
 *
 * Records returned are owned by the caller and freed with the matching
 * *_free function.
 */
#ifndef SL_DASH_STORE_H
#define SL_DASH_STORE_H

#include "common/buf.h"
#include "storage/store.h"

/* One step of time: what the campaign did in it (UTC). */
typedef struct sl_dash_point {
	char t[20];                 /* the step's start: "YYYY-MM-DDTHH:MM", cut to the step */
	int64_t attempts, tokens;   /* attempts made, their tokens */
	double cost;
	int64_t decided, accepted;  /* decisions taken */
	int64_t landed_checked, landed_unchanged; /* published changes whose landing was checked */
} sl_dash_point;

/* How long a step is: a minute, an hour or a day, chosen by the campaign's span. */
enum sl_dash_step { SL_DASH_MINUTE, SL_DASH_HOUR, SL_DASH_DAY };

/*
 * The campaign's steps with anything in them, oldest first, at most the last
 * SL_DASH_MAX_POINTS; the step is a minute when the attempts span less than
 * three hours, an hour under a week, else a day (*step_out).
 */
#define SL_DASH_MAX_POINTS 120
int sl_store_dash_series(sl_store *st, int64_t campaign_id, sl_dash_point **out, size_t *n,
			 enum sl_dash_step *step_out, sl_err *err);

/* The upper bounds (seconds) of the gate duration histogram's buckets. */
#define SL_DASH_NBUCKETS 9
extern const double sl_dash_bucket_s[SL_DASH_NBUCKETS];

/* One gate's runs over the campaign's candidates. */
typedef struct sl_dash_gate {
	char *gate;
	int64_t verdicts[SL_VERDICT_N]; /* runs by verdict, cached ones too */
	int64_t cached;             /* of those, verdicts taken from the cache */
	int64_t runs;               /* runs not cached: the histogram's count */
	int64_t le[SL_DASH_NBUCKETS]; /* of runs, those that took at most sl_dash_bucket_s[i] */
	double sum_s;               /* their time, seconds */
} sl_dash_gate;

/* The campaign's gates in order of first run. */
int sl_store_dash_gates(sl_store *st, int64_t campaign_id, sl_dash_gate **out, size_t *n,
			sl_err *err);
void sl_dash_gate_list_free(sl_dash_gate *v, size_t n);

/*
 * Which targets to find: every field left NULL or SL_T_ANY takes all.  gate:
 * a candidate of the target did not pass that gate (fail, timeout, error);
 * file: the path is file, lies under the directory file, or matches it as a
 * glob when it holds '*', '?' or '['; text: found, case-insensitive, in the
 * path, the enclosing unit or the reason.
 */
typedef struct sl_dash_query {
	enum sl_target_state state; /* or SL_T_ANY */
	const char *gate, *file, *text;
	size_t offset, limit;       /* limit 0: no limit */
} sl_dash_query;

/* The ids of the targets found, in id order, and how many there are in all. */
int sl_store_dash_targets(sl_store *st, int64_t campaign_id, const sl_dash_query *q,
			  int64_t **ids_out, size_t *n, int64_t *total_out, sl_err *err);

/* The ids of a target's candidates, oldest first. */
int sl_store_dash_target_candidates(sl_store *st, int64_t target_id, int64_t **ids_out,
				    size_t *n, sl_err *err);

/*
 * A stamp of what the campaign's records hold: it changes whenever a run
 * records an attempt, candidate, gate run, decision or target state.
 */
int sl_store_dash_stamp(sl_store *st, int64_t campaign_id, sl_buf *out, sl_err *err);

#endif
