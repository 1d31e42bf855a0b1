/*
 * review_store.h - the review side of the store: outcome metrics, and the
 * record of changes published as pull or merge requests.
 *
 * Records returned are owned by the caller and freed with the matching
 * *_release function.
 */
#ifndef SL_REVIEW_STORE_H
#define SL_REVIEW_STORE_H

#include "storage/store.h"

/* Outcome metrics of a campaign, overall and per group (rule vs model, ...). */
typedef struct sl_metric_group {
	char *kind;                 /* "source" (rule|model), "provider", "model", "edit_format" */
	char *name;
	int64_t proposed, accepted, rejected, landed_unchanged;
	int64_t tokens;             /* of every attempt in the group, failed ones too */
	double cost;
} sl_metric_group;

/* Decisions taken on one day (UTC), for the acceptance rate over time. */
typedef struct sl_metric_day {
	char day[11];               /* YYYY-MM-DD */
	int64_t decided, accepted;
} sl_metric_day;

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
	sl_metric_day *days;        /* oldest first */
	size_t ndays;
} sl_metrics;

int sl_store_metrics(sl_store *st, int64_t campaign_id, sl_metrics *out, sl_err *err);
/* Frees the contents; the struct is reusable. */
void sl_metrics_release(sl_metrics *m);

/*
 * A published change's pull or merge request; names ("open", "merged",
 * "closed") only in the store's rows and in JSON (the forge's own words,
 * GitLab's "opened" among them, are read in pipeline/review/forge.c).
 */
enum sl_pr_state {
	SL_PR_ANY = -1,             /* a filter that takes every state */
	SL_PR_NONE = 0,             /* no request known */
	SL_PR_OPEN,
	SL_PR_MERGED,
	SL_PR_CLOSED,               /* closed without merging */
	SL_PR_N
};

/* "open", "merged", "closed"; NULL for SL_PR_NONE or a value that is none. */
const char *sl_pr_state_name(int state);
/* The state named name, or SL_PR_NONE when there is none. */
int sl_pr_state_parse(const char *name);

/* One candidate's published change (a change may hold several candidates). */
typedef struct sl_published_rec {
	int64_t candidate_id, campaign_id;
	char *forge;                /* "github" or "gitlab" */
	char *project, *branch, *head_oid;
	char *text_sha;             /* SHA-256 of the title and body sent; may be NULL */
	int64_t number;             /* 0 until the request is open */
	char *url;                  /* may be NULL */
	enum sl_pr_state state;
	int landed_unchanged;       /* -1 unknown, 0 changed, 1 unchanged */
	int64_t review_comments;
	char *close_reason;         /* may be NULL */
	char *opened_at, *updated_at;
} sl_published_rec;

void sl_published_rec_release(sl_published_rec *p);
void sl_published_list_free(sl_published_rec *v, size_t n);
/* SL_ENOTFOUND when the candidate was never published. */
int sl_store_published_get(sl_store *st, int64_t candidate_id, sl_published_rec *out,
			   sl_err *err);
/* Insert or replace the candidate's row (opened_at kept from the first insert). */
int sl_store_published_put(sl_store *st, const sl_published_rec *in, sl_err *err);
/* A campaign's rows in candidate order; state SL_PR_ANY = all. */
int sl_store_published_list(sl_store *st, int64_t campaign_id, int state,
			    sl_published_rec **out, size_t *n, sl_err *err);
/* Distinct requests now open, and opened in the last hour, for pacing. */
int sl_store_published_pace(sl_store *st, int64_t campaign_id, int64_t *open_out,
			    int64_t *last_hour_out, sl_err *err);

#endif
