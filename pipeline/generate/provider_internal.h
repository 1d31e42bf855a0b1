/*
 * provider_internal.h - what the provider kinds share inside
 * pipeline/generate/ (never included from elsewhere; callers use
 * provider.h).
 *
 * provider.c is the front: options, the choice of kind, request keys, the
 * text helpers below, and sl_provider_complete, which hands each call to
 * one kind:
 *   provider_http.c       openai and anthropic: one try after another with
 *                         libcurl, retries and backoff
 *   provider_openai.c     the chat-completions request body and reply
 *   provider_anthropic.c  the Messages request body and reply
 *   provider_command.c    an external command in its own process group
 *   provider_replay.c     replies read back from a JSON lines file
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
} replay_entry;

struct sl_provider {
	int kind;
	unsigned timeout_ms;
	/* http */
	char *url;                  /* base_url + "/chat/completions" or "/messages" */
	char *model;
	char *key;                  /* NULL: no key header */
	double temperature;
	int max_tokens;
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
	int replay_kind;
	char *replay_path;
	replay_entry *replay;
	size_t nreplay;
};

/* ---- provider.c: helpers every kind uses ------------------------------ */

/* Zero the bytes of s (NULL: nothing). */
void sl_provider_wipe(char *s);
/* Replace every occurrence of key in b by "***" (keys shorter than 4 are left). */
void sl_provider_mask_key(sl_buf *b, const char *key);
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

/* Check model and base_url, read the key from the environment, build p->url, init libcurl. */
int sl_provider_http_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err);
/* Send req (the exact body) with retries; fills out; messages have the key masked. */
int sl_provider_http_complete(sl_provider *p, const char *req, sl_completion *out, sl_err *err);
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

extern const sl_provider_wire sl_provider_openai_wire;
extern const sl_provider_wire sl_provider_anthropic_wire;

/* The wire of an HTTP kind; NULL for the others. */
const sl_provider_wire *sl_provider_wire_of(int kind);

/* ---- provider_command.c --------------------------------------------- */

/* Check and copy opts->command. */
int sl_provider_command_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err);
int sl_provider_command_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
				 sl_completion *out, sl_err *err);

/* ---- provider_replay.c ---------------------------------------------- */

/*
 * Check the replay options and read the whole file into p->replay, sorted
 * by key; SL_EINPUT naming file and line.
 */
int sl_provider_replay_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err);
/* Index of the first entry recorded for key, or (size_t)-1. */
size_t sl_provider_replay_find(const sl_provider *p, const char *key);
/* The next reply recorded for the key group starting at first. */
int sl_provider_replay_complete(sl_provider *p, size_t first, sl_completion *out);

#endif
