/*
 * provider.h - where candidate edits come from when rules do not suffice.
 *
 * A provider turns a chat (a system message, then alternating user and
 * assistant messages) into one reply text.  Kinds:
 *   openai   any OpenAI-compatible chat-completions endpoint over HTTP
 *            (POST {base_url}/chat/completions); the API key is read from
 *            the environment variable the spec names, sent only in the
 *            Authorization header, and never copied into errors or records.
 *            The request is {model, messages: [{role, content}...],
 *            temperature?, max_tokens?}; the reply is
 *            choices[0].message.content, tokens from usage.prompt_tokens and
 *            usage.completion_tokens.  Redirects are not followed.
 *   command  an external program run with /bin/sh -c on the host, with the
 *            host environment, in its own process group: the chat flattened
 *            to text on its stdin (sl_provider_flatten_chat), the reply read
 *            from its stdout (capped at 1 MiB; the rest is read and
 *            dropped), stderr kept only for its last line.  At the timeout,
 *            and after every run, the process group is killed with SIGKILL,
 *            so a command cannot leave background processes behind.  It
 *            inherits no descriptor other than its stdin (a Unix stream
 *            socket, so that a command which stops reading cannot raise
 *            SIGPIPE in sluice), stdout and stderr (pipes).  The caller must
 *            not reap children it did not start (no waitpid(-1)).
 * (The rules kind never reaches a provider: see rules.h.)
 *
 * libcurl: sl_provider_new calls curl_global_init itself, once per process
 * (pthread_once); callers need not and should not call it.
 *
 * Calling sequence: sl_provider_new, sl_provider_complete (any number of
 * times, from one thread at a time), sl_provider_free.  Distinct providers
 * may be used from distinct threads concurrently.
 */
#ifndef SL_PROVIDER_H
#define SL_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

enum sl_provider_kind {
	SL_PROVIDER_RULES = 1,
	SL_PROVIDER_OPENAI,
	SL_PROVIDER_COMMAND,
};

typedef struct sl_provider sl_provider;

#define SL_PROVIDER_OPTS_VERSION 1
typedef struct sl_provider_opts {
	unsigned version;
	int kind;                   /* enum sl_provider_kind */
	const char *base_url;       /* openai: e.g. http://127.0.0.1:8080/v1 */
	const char *model;          /* openai */
	const char *api_key_env;    /* openai: env var holding the key; NULL = no key */
	double temperature;         /* openai; < 0 = not sent */
	int max_tokens;             /* openai; 0 = not sent */
	unsigned timeout_s;         /* whole request / command; 0 = 300 */
	const char *command;        /* command: shell command line */
} sl_provider_opts;
#define SL_PROVIDER_OPTS_INIT { SL_PROVIDER_OPTS_VERSION, 0, NULL, NULL, NULL, -1.0, 0, 0, NULL }

typedef struct sl_chat_msg {
	const char *role;           /* "system", "user" or "assistant" */
	const char *content;
} sl_chat_msg;

typedef struct sl_completion {
	sl_buf text;                /* the reply (capped at 1 MiB) */
	int64_t tokens_in, tokens_out; /* as reported by the endpoint; -1 if unknown */
	int http_status;            /* openai: last HTTP status (0: none); command: exit
				     * status, 128+N when killed by signal N */
	int64_t latency_ms;
} sl_completion;

void sl_completion_init(sl_completion *c);
void sl_completion_release(sl_completion *c);

/* "rules" / "openai" / "command" <-> enum; 0 for an unknown name. */
int sl_provider_kind_parse(const char *name);
const char *sl_provider_kind_name(int kind);

/*
 * SL_EINPUT when the options are incomplete, the kind is rules or unknown,
 * or the key variable is unset or empty ("environment variable 'X' is not
 * set").  The key is copied now; later changes to the environment do not
 * matter.
 */
int sl_provider_new(sl_provider **out, const sl_provider_opts *opts, sl_err *err);
/*
 * Complete a chat into *out (initialised by the caller with
 * sl_completion_init; its text is reset first).  SL_ERROR on transport
 * failure, timeout, a non-2xx status ("HTTP 429: <error.message from the
 * body>"), a reply without choices or content, or a command that exits
 * non-zero ("the command exited with status 3: <last line of stderr>").
 * Messages never contain the API key.  msgs are borrowed for the call.
 */
int sl_provider_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			 sl_completion *out, sl_err *err);
void sl_provider_free(sl_provider *p);

/*
 * Append the chat as the command provider's stdin gets it: for each message
 * a line "### ROLE" (the role in upper case: SYSTEM, USER, ASSISTANT), its
 * content, a newline if the content does not end with one, and a blank line
 * between messages:
 *     ### SYSTEM\n<system>\n\n### USER\n<user>\n
 */
void sl_provider_flatten_chat(sl_buf *out, const sl_chat_msg *msgs, size_t n);

#endif
