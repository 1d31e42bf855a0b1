/*
 * forge_internal.h - what the forge front (forge.c) and the per-kind files
 * (forge_github.c, forge_gitlab.c) share; private to pipeline/review/.
 *
 * The front does authentication, retries, rate limits, the Link header and
 * the calls' common shape; a kind says where things are and what its JSON
 * calls them, as one sl_forge_ops table (as the model providers do,
 * pipeline/generate/provider_internal.h).  A new forge is a file of its
 * own with a table, named in the front's kind table (forge.c).
 */
#ifndef SL_FORGE_INTERNAL_H
#define SL_FORGE_INTERNAL_H

#include <jansson.h>

#include "common/buf.h"
#include "pipeline/http/http.h"
#include "pipeline/review/forge.h"

typedef struct sl_forge_ops sl_forge_ops;

struct sl_forge {
	sl_forge_opts o;
	const sl_forge_ops *kind;
	char *api;                  /* without a trailing slash */
	char *project_enc;          /* the project id or path, URL-encoded */
	char *owner;                /* the part of project before '/' */
	int64_t quota_reset;        /* the quota is spent until this epoch second; 0 = not */
	int64_t last_write_ms;      /* monotonic ms the last mutating request was sent; -1 = none */
};

/* One reply of the forge (forge.c's call). */
typedef struct sl_forge_reply {
	sl_http_response http;      /* status, body, Retry-After */
	int64_t remaining, reset;   /* x-ratelimit-*; -1 = not sent */
	char *next;                 /* Link rel="next" */
} sl_forge_reply;

/*
 * A kind of forge: its paths, fields and headers.  Each function fills
 * path (empty on entry) with a path under the API URL.
 */
struct sl_forge_ops {
	const char *api;            /* the public service's API URL */
	const char *auth;           /* the token's header, "%s" for the token */
	const char *const *headers; /* the other headers of every request, NULL-ended */
	/* SL_EINPUT when the project does not name one on this forge; may be NULL */
	int (*check)(const sl_forge_opts *o, sl_err *err);
	void (*branch_path)(sl_buf *path, const sl_forge *f, const char *branch_enc);
	/* the list of every request whose head is the branch */
	void (*find_path)(sl_buf *path, const sl_forge *f, const char *branch_enc);
	/* one request, to read (GET) and to update (update_method) */
	void (*pr_path)(sl_buf *path, const sl_forge *f, int64_t number);
	/* the request that opens one (POST to path) */
	void (*open_request)(sl_buf *path, json_t *req, const sl_forge *f, const char *branch,
			     const char *base, const char *title, const char *body,
			     const sl_strvec *labels, int draft);
	long open_duplicate;        /* the status of "a request for this branch exists" */
	/* after a request was opened (GitHub: its labels); may be NULL */
	int (*after_open)(sl_forge *f, const sl_strvec *labels, const sl_forge_pr *pr,
			  sl_err *err);
	const char *update_method;
	/* the field and value of an update that closes a request without merging */
	const char *close_key, *close_value;
	/* the request's discussion, where a comment is posted (POST to path) */
	void (*comment_path)(sl_buf *path, const sl_forge *f, int64_t number);
	const char *body_key;       /* the field of a request's text */
	/* the state (enum sl_pr_state) of a request in the forge's JSON */
	int (*pr_state)(json_t *j);
	/* out (released first) from a request in the forge's JSON */
	void (*fill_pr)(json_t *j, sl_forge_pr *out);
	int (*pr_feedback)(sl_forge *f, sl_forge_pr *pr, sl_err *err);
};

extern const sl_forge_ops sl_forge_github;
extern const sl_forge_ops sl_forge_gitlab;

void sl_forge_reply_init(sl_forge_reply *r);
void sl_forge_reply_release(sl_forge_reply *r);

/* Fill out (released first); url and sha are copied, sha kept only when merged. */
void sl_forge_pr_set(sl_forge_pr *out, int64_t number, const char *url, int state,
		     const char *sha);

/* A request that must answer 2xx with JSON; *json_out owned by the caller. */
int sl_forge_call_json(sl_forge *f, const char *method, const char *path, json_t *body,
		       json_t **json_out, sl_forge_reply *r, sl_err *err);
/* Every element of a paginated list, in order (*all: a new array). */
int sl_forge_call_list(sl_forge *f, const char *path, json_t **all, sl_err *err);

#endif
