/*
 * review_store.h - the review side of the store: outcome metrics, and the
 * record of changes published as pull or merge requests.
 *
 * Records returned are owned by the caller and freed with the matching
 * *_release function.
 */
#ifndef SL_REVIEW_STORE_H
#define SL_REVIEW_STORE_H

#include "store.h"

/* Outcome metrics of a campaign, overall and per group (rule vs model, ...). */
typedef struct sl_metric_group {
	char *kind;                 /* "source" (rule|model), "provider", "model", "edit_format" */
	char *name;
	int64_t proposed, accepted, rejected, landed_unchanged;
	int64_t tokens;             /* of every attempt in the group, failed ones too */
	double cost;
} sl_metric_group;

typedef struct sl_metrics {
	int64_t proposed, decided, accepted, rejected, landed_unchanged, landed_checked;
	double acceptance_rate;     /* accepted / decided; -1 with no decision yet */
	double landed_unchanged_rate; /* of accepted changes whose landing was checked; -1 if none */
	double median_decision_hours; /* from candidate to latest decision; -1 with none */
	int64_t tokens;             /* all tokens of the campaign */
	double cost;
	double tokens_per_accepted, cost_per_accepted; /* campaign totals per accepted change;
							  -1 with nothing accepted */
	sl_metric_group *groups;
	size_t ngroups;
} sl_metrics;

int sl_store_metrics(sl_store *st, int64_t campaign_id, sl_metrics *out, sl_err *err);
/* Frees the contents; the struct is reusable. */
void sl_metrics_release(sl_metrics *m);

#endif
