/*
 * provider_internal.h - what the provider kinds share inside
 * pipeline/generate/ (never included from elsewhere; callers use
 * provider.h).
 *
 * provider.c is the front: options, the choice of kind, request keys, and
 * sl_provider_complete, which hands each call to one kind through the kind
 * table (sl_provider_kinds, below):
 *   provider_openai.c     the chat-completions request body and reply
 *   provider_anthropic.c  the Messages request body and reply
 *   provider_http.c       their transport: one try after another with
 *                         libcurl, retries and backoff
 *   provider_command.c    an external command in its own process group
 *   provider_replay.c     replies read back from a JSON lines file
 * provider_text.c holds the helpers every file uses.  Each kind's file
 * includes this header only; no kind names the front or another kind
 * (the HTTP transport reaches its kind's wire through p->ops).
 */
#ifndef SL_PROVIDER_INTERNAL_H
#define SL_PROVIDER_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>

#include "pipeline/generate/provider.h"
#include "common/util.h"
#include "common/caps.h"

#define POOL_KEEP 64                     /* idle libcurl handles kept */

typedef struct replay_entry {
	char key[65];
	char *reply;
	size_t reply_len;
	int64_t tokens_in, tokens_out;
	int truncated, http_status;
	size_t line;                /* 1-based, for ordering and messages */
	size_t used;                /* first of a key group: replies handed out */
	char *at;                   /* the session position it answered; may be NULL */
	char seen[65];              /* with at: hash of the last message then; "" if none */
} replay_entry;

typedef struct sl_provider_ops sl_provider_ops;

struct sl_provider {
	enum sl_provider_kind kind;
	const sl_provider_ops *ops; /* the kind's entry of sl_provider_kinds */
	unsigned timeout_ms;
	/* http */
	char *url;                  /* base_url + "/chat/completions" or "/messages" */
	char *model;
	char *key;                  /* NULL: no key header */
	double temperature;
	int max_tokens;
	int tools;                  /* opts.tools */
	sl_strvec headers;          /* extra "Name: value" lines */
	char *response_format;      /* JSON text or NULL */
	char *anthropic_version;
	int max_retries;
	int64_t base_backoff_ms, max_backoff_ms;
	sl_provider_hooks hooks;
	int64_t deadline_ms;        /* sl_now_ms() after which nothing is sent; 0 = none */
	const volatile int *stop;   /* set: abort transfers and waits */
	pthread_mutex_t lock;       /* the pool and the replay cursors */
	CURL **pool;
	size_t npool, apool;
	/* command */
	char *command;
	/* replay */
	enum sl_provider_kind replay_kind;
	char *replay_path;
	replay_entry *replay;
	size_t nreplay;
};

/* ---- provider_text.c: helpers every kind uses ------------------------- */

/* Zero the bytes of s (NULL: nothing). */
void sl_provider_wipe(char *s);
/* A new JSON string of s[0..n) (s: up to its NUL), invalid UTF-8 repaired to U+FFFD. */
json_t *sl_provider_json_textn(const char *s, size_t n);
json_t *sl_provider_json_text(const char *s);
/* root as compact JSON text (malloc'd); root's reference is stolen. */
char *sl_provider_json_dump(json_t *root);
/* obj[key] if it is an integer, else -1. */
int64_t sl_provider_json_int(json_t *obj, const char *key);
/* One line of server text for an error message: no control characters, capped. */
void sl_provider_add_snippet(sl_buf *out, const char *s, size_t len);
/* "3 s" or "250 ms" */
void sl_provider_add_duration(sl_buf *out, unsigned ms);
/* Append the header line prefix + value ("x-api-key: " + key) to out. */
void sl_provider_add_header(sl_strvec *out, const char *prefix, const char *value);
/* nanosleep for ms, resumed after signals. */
void sl_provider_sleep_ms(long ms);

/* ---- provider_http.c ------------------------------------------------ */

/*
 * An HTTP kind's open and complete (sl_provider_ops), its wire p->ops->wire.
 * Open: check model and base_url, read the key from the environment, build
 * p->url, init libcurl.  Complete: send call->body (the exact bytes) with
 * retries; fills out; messages have the key masked.
 */
int sl_provider_http_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err);
struct sl_provider_call;
int sl_provider_http_complete(sl_provider *p, const struct sl_provider_call *call,
			      sl_completion *out, sl_err *err);
/* The probe (sl_provider_probe): GET {base_url}/models; SL_EINPUT on 401 or 403. */
int sl_provider_http_probe(sl_provider *p, sl_err *err);
/* For the reply parsers: finish_reason from fr; the body as a JSON object. */
void sl_provider_set_finish(sl_completion *out, json_t *fr);
/*
 * out->truncated when the finish reason is cut_reason; out->tokens_in and
 * tokens_out from root's "usage" object at in_key and out_key (-1: absent).
 */
void sl_provider_set_usage(sl_completion *out, json_t *root, const char *cut_reason,
			   const char *in_key, const char *out_key);
json_t *sl_provider_load_object(const sl_buf *body, sl_err *err);

/* ---- provider_openai.c, provider_anthropic.c -------------------------- */

/* What an HTTP kind adds to the transport of provider_http.c. */
typedef struct sl_provider_wire {
	const char *path;           /* after base_url: "/chat/completions" */
	/* the request body for the chat (malloc'd JSON text) */
	char *(*body)(const sl_provider *p, const sl_chat_msg *msgs, size_t n);
	/* the kind's header lines, the key's included (the caller wipes them) */
	void (*headers)(const sl_provider *p, sl_strvec *out);
	/* out->text, tokens, finish_reason, truncated from a 2xx body; SL_ERROR if malformed */
	int (*parse)(sl_completion *out, const sl_buf *body, sl_err *err);
} sl_provider_wire;


/* ---- the kind table ------------------------------------------------- */

/* One call as the front prepared it for the kind. */
typedef struct sl_provider_call {
	const sl_chat_msg *msgs;
	size_t n;
	const char *body;           /* HTTP kinds: the exact request body to send */
	size_t first;               /* replay: the first entry of the key's group */
	int exact;                  /* replay: first is the entry itself (by position) */
} sl_provider_call;

/* A kind of provider: what provider.c calls. */
struct sl_provider_ops {
	/* check the kind's options and fill p (the shared ones are copied already) */
	int (*open)(sl_provider *p, const sl_provider_opts *opts, sl_err *err);
	int (*complete)(sl_provider *p, const sl_provider_call *call, sl_completion *out,
			sl_err *err);
	const sl_provider_wire *wire; /* an HTTP kind's wire; NULL for the others */
	/* can the provider work at all (sl_provider_probe)? NULL: nothing to check */
	int (*probe)(sl_provider *p, sl_err *err);
};

/*
 * provider_tools.c: the session's one tool (opts.tools): its name and
 * description, its JSON schema (a new reference), the command of an
 * assistant message that is one fenced command, sent as a tool call (NULL:
 * send it as text; caller frees), the tool's input for a command (a new reference), and a call's
 * input turned into the reply text (prose, when not NULL, before it).
 */
extern const char sl_tool_name[];
extern const char sl_tool_about[];
json_t *sl_tool_schema(void);
char *sl_tool_command(const sl_chat_msg *m);
json_t *sl_tool_input(const char *command);
int sl_tool_reply(sl_completion *out, const char *prose, json_t *input, sl_err *err);

/* provider_openai.c, provider_anthropic.c, provider_command.c, provider_replay.c */
extern const sl_provider_ops sl_provider_openai;
extern const sl_provider_ops sl_provider_anthropic;
extern const sl_provider_ops sl_provider_command;
extern const sl_provider_ops sl_provider_replay;

/* Every kind by enum sl_provider_kind (provider.c); NULL for rules (no model). */
#define SL_PROVIDER_NKINDS (SL_PROVIDER_REPLAY + 1)
extern const sl_provider_ops *const sl_provider_kinds[SL_PROVIDER_NKINDS];

/* ---- provider_replay.c ---------------------------------------------- */

/* Index of the first entry recorded for key, or (size_t)-1. */
size_t sl_provider_replay_find(const sl_provider *p, const char *key);
/* Index of the entry recorded at a session position, or (size_t)-1. */
size_t sl_provider_replay_find_at(const sl_provider *p, const char *at);

#endif
