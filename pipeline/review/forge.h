/*
 * forge.h - pull requests (GitHub) and merge requests (GitLab) over their
 * REST APIs, with libcurl.
 *
 * One client per project.  Every request carries the token in its
 * authentication header only (GitHub: "Authorization: Bearer", GitLab:
 * "PRIVATE-TOKEN"); the token is never part of an error message, a log or
 * anything returned (a reply that quotes it has it redacted as it arrives).  Lists follow the Link header's rel="next" (at most
 * SL_FORGE_MAX_PAGES pages).  Rate limits are honoured: 429, and 403 with
 * Retry-After, x-ratelimit-remaining: 0 or GitHub's "secondary rate limit"
 * message, wait for Retry-After seconds, else until x-ratelimit-reset, else
 * one minute (GitHub's documented rule), then retry, at most max_retries
 * times; 408, 5xx, timeouts and connection errors retry after 1, 2, 4, 8,
 * 16, then 30 s.  A wait longer than max_wait_s is an error (SL_EBUDGET)
 * rather than a stall; a reply body over 8 MiB fails at once.
 *
 * Calling sequence: sl_forge_new, then any of the calls, then sl_forge_free.
 */
#ifndef SL_FORGE_H
#define SL_FORGE_H

#include <stdint.h>

#include "common/err.h"
#include "pipeline/spec.h"
#include "storage/review_store.h"
#include "common/caps.h"

typedef struct sl_forge sl_forge;

typedef struct sl_forge_opts {
	enum sl_forge_kind kind;
	const char *api_url;        /* NULL = the public service's */
	const char *project;        /* owner/name (GitHub); id or path (GitLab) */
	const char *token;          /* borrowed for the client's life */
	unsigned timeout_s;         /* per request */
	unsigned max_retries;
	unsigned max_wait_s;        /* longest rate-limit wait accepted */
	unsigned write_interval_ms; /* least time between two mutating requests (POST,
				       PATCH, PUT, DELETE): GitHub asks for about a second */
	/* told before each wait; may be NULL */
	void (*on_wait)(void *ctx, const char *why, unsigned seconds);
	void *ctx;
} sl_forge_opts;

/* The environment variable that sets write_interval_ms for publish and sync. */
#define SL_FORGE_WRITE_INTERVAL_ENV "SLUICE_FORGE_WRITE_INTERVAL_MS"

#define SL_FORGE_OPTS_INIT { .timeout_s = 60, .max_retries = 6, .max_wait_s = 900, \
	.write_interval_ms = 1000 }

/*
 * How long to wait before a mutating request at now_ms (monotonic) when
 * the last one was sent at last_ms (negative: none yet): 0 to interval_ms.
 */
int64_t sl_forge_write_wait_ms(int64_t last_ms, int64_t now_ms, unsigned interval_ms);

/* A pull or merge request as the forge reports it. */
typedef struct sl_forge_pr {
	int64_t number;             /* GitHub number, GitLab iid; 0 = none */
	char *url;                  /* the page people open */
	enum sl_pr_state state;
	char *merge_sha;            /* the merge (or squash) commit; NULL if not merged */
	int64_t review_comments;    /* filled by sl_forge_pr_feedback() */
	char *close_comment;        /* the last comment; filled by sl_forge_pr_feedback() */
} sl_forge_pr;

void sl_forge_pr_release(sl_forge_pr *pr);

int sl_forge_new(sl_forge **out, const sl_forge_opts *opts, sl_err *err);
/* If NULL nothing occurs. */
void sl_forge_free(sl_forge *f);

/* *exists_out = whether the branch is on the forge (a 404 is "no"). */
int sl_forge_branch_exists(sl_forge *f, const char *branch, int *exists_out, sl_err *err);

/* The request whose head is branch, in any state (out->number 0 when none). */
int sl_forge_find(sl_forge *f, const char *branch, sl_forge_pr *out, sl_err *err);

/*
 * Open a request from branch into base.  A duplicate (GitHub's 422, GitLab's
 * 409) is not an error: the existing request is returned.
 */
int sl_forge_open(sl_forge *f, const char *branch, const char *base, const char *title,
		  const char *body, const sl_strvec *labels, int draft, sl_forge_pr *out,
		  sl_err *err);

/* Replace the title and body of an existing request. */
int sl_forge_update(sl_forge *f, int64_t number, const char *title, const char *body,
		    sl_err *err);

/*
 * Close an open request without merging it, after posting comment (saying
 * why; NULL: none) on it.
 */
int sl_forge_close(sl_forge *f, int64_t number, const char *comment, sl_err *err);

/* Read a request's state and merge commit. */
int sl_forge_get(sl_forge *f, int64_t number, sl_forge_pr *out, sl_err *err);

/* Fill pr->review_comments and pr->close_comment (the last comment, or NULL). */
int sl_forge_pr_feedback(sl_forge *f, sl_forge_pr *pr, sl_err *err);

#endif
