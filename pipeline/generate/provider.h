/*
 * provider.h - where candidate edits come from when rules do not suffice.
 *
 * A provider turns a chat (a system message, then alternating user and
 * assistant messages) into one reply text.  Kinds:
 *   openai     any OpenAI-compatible chat-completions endpoint over HTTP
 *              (POST {base_url}/chat/completions).  The request is
 *              {model, messages: [{role, content}...], temperature?,
 *              max_tokens?, response_format?}; the reply is
 *              choices[0].message.content, tokens from usage.prompt_tokens
 *              and usage.completion_tokens; finish_reason "length" sets
 *              sl_completion.truncated.  The key goes in
 *              "Authorization: Bearer KEY".
 *   anthropic  the Anthropic Messages API (POST {base_url}/messages, e.g.
 *              base_url https://api.anthropic.com/v1).  The request is
 *              {model, max_tokens (default 4096), system?, messages,
 *              temperature?}: every "system" message of the chat goes into
 *              the top-level system field (joined by a blank line), the
 *              others into messages in order.  Headers: x-api-key: KEY and
 *              anthropic-version (default 2023-06-01).  The reply is the
 *              concatenated text of the content[] blocks of type "text";
 *              tokens from usage.input_tokens / usage.output_tokens;
 *              stop_reason "max_tokens" sets sl_completion.truncated.
 *              response_format is not sent (the Messages API has no such
 *              field); the system prompt must state the format.
 *   command    an external program run with /bin/sh -c on the host, with the
 *              host environment, in its own process group: the chat
 *              flattened to text on its stdin (sl_provider_flatten_chat), the
 *              reply read from its stdout (capped at 1 MiB; the rest is read
 *              and dropped), stderr kept only for its last line: when that
 *              is "sluice-usage: prompt=N completion=M" the numbers are
 *              tokens_in and tokens_out (else -1: not said) and the line
 *              before it is the one an error quotes.  At the
 *              timeout, and after every run, the process group is killed
 *              with SIGKILL, so a command cannot leave background processes
 *              behind; so is it, within 100 ms, when opts.stop is set or
 *              opts.deadline_ms passes (sl_completion.transient set: the
 *              request may pass in a later run).  Should sluice itself be
 *              killed, the command's leader (not its background children)
 *              is killed too (parent-death signal).  It inherits no descriptor other than its stdin (a
 *              Unix stream socket, so that a command which stops reading
 *              cannot raise SIGPIPE in sluice), stdout and stderr (pipes).
 *              The caller must not reap children it did not start (no
 *              waitpid(-1)).  Never retried.
 *   replay     replies read from a JSON lines file (opts.replay_path) written
 *              by sl_replay_record, matched by request key (sl_request_key):
 *              no network, no process.  opts.model and opts.replay_kind name
 *              the model and provider kind the replies were recorded from
 *              (both are part of the key; replay_kind 0 tries openai,
 *              anthropic and command in turn); the other options of that kind
 *              (temperature, max_tokens, response_format...) only shape
 *              sl_completion.request, so a replayed run records the same
 *              request bodies as the recorded one.
 * (The rules kind never reaches a provider: see rules.h.)
 *
 * Secrets: the API key is read from the environment variable the spec
 * names, once, in sl_provider_new; it is sent only in a request header, is
 * redacted ("[redacted]", SL_HTTP_REDACTED) in every reply body as it
 * arrives, in every error message, in sl_completion.text and in
 * sl_completion.request, so nothing stored or shown quotes it; it never
 * appears in any process's argv (libcurl runs in-process; the command kind
 * gets its command line only), and is wiped from memory on free.  Extra
 * headers (opts.headers) are sent as given and are not treated as secret.
 *
 * Retries (openai and anthropic): HTTP 429 and 408, 5xx, connection
 * failures (refused, reset, dropped mid-reply) and timeouts are retried up
 * to opts.max_retries times.  The wait before retry k (0-based) is the
 * server's Retry-After (seconds or an HTTP date; retry-after-ms too) when a
 * 429 or 503 gives one, otherwise "full jitter": uniform in
 * [0, min(max_backoff_ms, base_backoff_ms * 2^k)]; every wait is capped at
 * max_backoff_ms.  A 2xx whose body is cut, is not JSON or lacks the
 * reply's fields is retried the same way.  Any other 4xx and a response
 * over 8 MiB fail at once.  A failure that retries could have cured sets
 * sl_completion.transient.  opts.deadline_ms cuts each try's timeout and
 * stops retrying; opts.stop aborts a transfer in progress.  The waits taken are in
 * sl_completion.waits_ms.  Each try has the whole timeout to itself.
 *
 * Cost: the caller prices tokens (the price table is the orchestrator's).
 * tokens_in / tokens_out are what the endpoint reported for the successful
 * try, -1 when it did not say; failed tries are not billed by the providers
 * sluice knows, so they are not counted.  A caller enforcing a budget should
 * reserve before the call and settle with these numbers after it.
 *
 * libcurl: sl_provider_new calls curl_global_init itself, once per process
 * (pthread_once); callers need not and should not call it.
 *
 * Threads: sl_provider_complete may be called from any number of threads at
 * once on the same provider (each call takes its own libcurl handle from a
 * locked pool; the replay cursor is locked).  The hooks, when set, must be
 * thread-safe too.
 *
 * Calling sequence: sl_provider_new, sl_provider_complete (any number of
 * times, from any threads), sl_provider_free (after the last call returned).
 */
#ifndef SL_PROVIDER_H
#define SL_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

enum sl_provider_kind {
	SL_PROVIDER_RULES = 1,
	SL_PROVIDER_OPENAI,
	SL_PROVIDER_COMMAND,
	SL_PROVIDER_ANTHROPIC,
	SL_PROVIDER_REPLAY,
};

#define SL_PROVIDER_MAX_RETRIES 20

/*
 * Seams for tests (and for a caller with its own scheduler).  Any NULL
 * member uses the default: nanosleep, a per-thread generator seeded from
 * getrandom, time(NULL).
 */
typedef struct sl_provider_hooks {
	void (*sleep_ms)(void *ctx, int64_t ms);  /* wait before a retry */
	double (*jitter)(void *ctx);              /* uniform in [0, 1] */
	int64_t (*now_s)(void *ctx);              /* wall clock, for Retry-After dates */
	void *ctx;
} sl_provider_hooks;

typedef struct sl_provider sl_provider;

typedef struct sl_provider_opts {
	enum sl_provider_kind kind;
	const char *base_url;       /* openai, anthropic: e.g. http://127.0.0.1:8080/v1 */
	const char *model;          /* openai, anthropic, replay */
	const char *api_key_env;    /* openai, anthropic: env var holding the key; NULL = none */
	double temperature;         /* < 0 = not sent */
	int max_tokens;             /* openai: 0 = not sent; anthropic: 0 = 4096 */
	unsigned timeout_s;         /* one try / the command; 0 = 300 */
	const char *command;        /* command: shell command line */
	const char *const *headers; /* openai, anthropic: NULL-terminated "Name: value"
				     * list, copied; no CR or LF */
	const char *response_format;/* openai: JSON object text, sent as "response_format" */
	const char *anthropic_version; /* NULL = "2023-06-01" */
	int max_retries;            /* < 0 = 4; 0 = no retry; at most SL_PROVIDER_MAX_RETRIES */
	unsigned base_backoff_ms;   /* 0 = 1000 */
	unsigned max_backoff_ms;    /* cap on one wait; 0 = 30000 */
	unsigned timeout_ms;        /* non-zero: overrides timeout_s */
	const char *replay_path;    /* replay: the JSON lines file */
	enum sl_provider_kind replay_kind; /* replay: kind recorded from; 0 = whichever of
				     * openai, anthropic, command has the key */
	sl_provider_hooks hooks;
	int64_t deadline_ms;        /* openai, anthropic, command: an sl_now_ms() instant
				     * (the run's wall-time budget); no try or command
				     * runs past it and no retry waits past it; 0 = none */
	/*
	 * openai, anthropic: offer the one tool `bash` ({"command": string}) and
	 * send a session's steps in the kind's native form (an assistant message
	 * that is one fenced command, act.h, is a call of the tool with that
	 * command, and the user message after it is the call's result):
	 * OpenAI "tools" with a function, the assistant's "tool_calls" and
	 * "tool" messages with their tool_call_id; Anthropic "tools" with an
	 * input_schema, "tool_use" and "tool_result" blocks.  A reply that calls
	 * the tool becomes the text "```sh\nCOMMAND\n```\n" after any text the
	 * reply has (the session's plain form, act.h); ids are made from the
	 * message's place in the chat (call_N, toolu_N), so a chat is sent the
	 * same way every time.
	 */
	int tools;
	const volatile int *stop;   /* openai, anthropic, command: when *stop becomes
				     * non-zero, the transfer in progress is aborted
				     * (the command's process group killed) and no
				     * retry is made; borrowed; NULL = never */
} sl_provider_opts;
#define SL_PROVIDER_OPTS_INIT { .temperature = -1.0, .max_retries = -1 }

typedef struct sl_chat_msg {
	const char *role;           /* "system", "user" or "assistant" */
	const char *content;
} sl_chat_msg;

/*
 * The outcome of one sl_provider_complete, filled on success and, as far as
 * it got, on failure (request, key, http_status, retries, waits, latency).
 */
typedef struct sl_completion {
	sl_buf text;                /* the reply (capped at 1 MiB) */
	int64_t tokens_in, tokens_out; /* as reported by the endpoint; -1 if unknown */
	int http_status;            /* openai, anthropic: status of the last try (0: no
				     * response); command: exit status, 128+N when killed
				     * by signal N; replay: as recorded (0 if not) */
	int64_t latency_ms;         /* the whole call, retries and waits included */
	sl_buf request;             /* the exact body sent (JSON; command: its stdin),
				     * with the key masked should the chat contain it */
	char key[65];               /* sl_request_key of this request */
	int retries;                /* tries repeated after a retryable failure */
	int64_t waits_ms[SL_PROVIDER_MAX_RETRIES]; /* the wait before each retry */
	int truncated;              /* the reply was cut at max tokens (finish_reason
				     * "length" / stop_reason "max_tokens"); the text is
				     * returned as is and the call succeeds */
	char finish_reason[32];     /* as the endpoint said it, "" if it did not */
	int transient;              /* the call failed for a reason that may go away
				     * (connection, timeout, 408/429/5xx, a body that is
				     * cut or not the expected JSON), after its retries */
	char *at;                   /* sl_provider_complete_at: the call's position in a
				     * session, recorded with the reply; else NULL */
	char seen[65];              /* with at: sha256 of the chat's last message */
	int seen_differs;           /* replayed by position: the chat's last message is
				     * not the one recorded (the observation before it
				     * differs) */
} sl_completion;

void sl_completion_init(sl_completion *c);
void sl_completion_release(sl_completion *c);

/* "rules", "openai", "command", "anthropic", "replay"; "unknown" for a value that is none. */
const char *sl_provider_kind_name(int kind);

/*
 * SL_EINPUT when the options are incomplete or malformed (a header without
 * ':' or with CR/LF, response_format that is not a JSON object, an
 * unreadable or malformed replay file: "replay file 'F' line N: ..."), the
 * kind is rules or unknown, or the key variable is unset or empty
 * ("environment variable 'X' is not set").  The key is copied now; later
 * changes to the environment do not matter.
 */
int sl_provider_new(sl_provider **out, const sl_provider_opts *opts, sl_err *err);
/*
 * Complete a chat into *out (initialised by the caller with
 * sl_completion_init; it is reset first).  SL_ERROR on transport failure,
 * timeout, a non-2xx status ("HTTP 400: <error.message from the body>"),
 * after the last retry ("... (gave up after 4 retries)"), a reply that is not
 * JSON, has no choices or no content, or a command that exits non-zero ("the
 * command exited with status 3: <last line of stderr>").  Replay: SL_EINPUT
 * "no recorded reply for request key 'K' in 'F'".  Messages never contain
 * the API key.  msgs are borrowed for the call.
 */
int sl_provider_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			 sl_completion *out, sl_err *err);
/*
 * sl_provider_complete for a call at a position of a session (at: "TARGET
 * ATTEMPT STEP"), which out keeps (at, seen) for sl_replay_record.  Replay
 * takes the reply recorded at that position whatever the request's key (a
 * command's output may differ on replay), setting out->seen_differs when
 * the chat's last message is not the recorded one; with none recorded
 * there, it matches by key as sl_provider_complete does.
 */
int sl_provider_complete_at(sl_provider *p, const char *at, const sl_chat_msg *msgs,
			    size_t n, sl_completion *out, sl_err *err);
/*
 * Check, without a request and without spending anything, that the
 * provider can work at all.  command: the shell checks the command's
 * syntax (sh -n) and finds its first program (command -v) without running
 * it; SL_EINPUT "the command is not valid shell: ..." or
 * "... cannot start: 'X' is not a program ...".  openai, anthropic: a GET
 * of {base_url}/models with the key; SL_EINPUT when the endpoint answers
 * 401 or 403 (it refuses the key); any other answer, or none, passes.
 * replay: nothing to check.
 */
int sl_provider_probe(sl_provider *p, sl_err *err);
void sl_provider_free(sl_provider *p);

/*
 * The key of a request: the lowercase hex SHA-256 of the fields
 *     "sluice-request-1", the kind's name, the model (NULL = ""), the number
 *     of messages in decimal, then each message's role and content
 * each written as its decimal byte length, ':' and its bytes, so distinct
 * requests cannot collide by concatenation.  Temperature and the other
 * options are not part of it.
 */
void sl_request_key(char out[65], int kind, const char *model,
		    const sl_chat_msg *msgs, size_t n);

/*
 * Append one line to the replay file at path (with c->at, the position and
 * the hash of the last message seen too) (created 0600 if missing):
 *     {"key":K,"reply":TEXT,"tokens_in":N,"tokens_out":N[,"truncated":true]
 *      [,"http_status":S]}
 * with a single write to a descriptor opened O_APPEND, under a process-wide
 * lock, so concurrent recorders never interleave lines.  Text that is not
 * valid UTF-8 is stored with U+FFFD in place of the bad bytes.
 */
int sl_replay_record(const char *path, const char *key, const sl_completion *c, sl_err *err);

/*
 * Append the chat as the command provider's stdin gets it: for each message
 * a line "### ROLE" (system, user, assistant: as the attempt's recorded
 * prompt and `sluice show --attempts` write them), its content, a newline
 * if the content does not end with one, and a blank line between messages:
 *     ### system\n<system>\n\n### user\n<user>\n
 */
void sl_provider_flatten_chat(sl_buf *out, const sl_chat_msg *msgs, size_t n);

#endif
