/*
 * provider.c - the front of the model providers (provider.h): options
 * checked and copied, the kind chosen from the kind table, request keys,
 * and sl_provider_complete, which builds the request the recorded way and
 * hands the call to its kind (provider_internal.h names the files).  The
 * helpers the kinds share are in provider_text.c.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/provider_internal.h"
#include "pipeline/http/http.h"
#include "common/sha256.h"
#include "common/util.h"

const sl_provider_ops *const sl_provider_kinds[SL_PROVIDER_NKINDS] = {
	[SL_PROVIDER_OPENAI] = &sl_provider_openai,
	[SL_PROVIDER_COMMAND] = &sl_provider_command,
	[SL_PROVIDER_ANTHROPIC] = &sl_provider_anthropic,
	[SL_PROVIDER_REPLAY] = &sl_provider_replay,
};

/* The kind's entry of the table; NULL for rules and for a value that is no kind. */
static const sl_provider_ops *ops_of(int kind)
{
	return kind > 0 && kind < SL_PROVIDER_NKINDS ? sl_provider_kinds[kind] : NULL;
}

void sl_completion_init(sl_completion *c)
{
	sl_buf_init(&c->text, SL_CAP_REPLY_BYTES);
	sl_buf_init(&c->request, 0);
	c->tokens_in = c->tokens_out = -1;
	c->http_status = 0;
	c->latency_ms = 0;
	c->key[0] = '\0';
	c->retries = 0;
	memset(c->waits_ms, 0, sizeof(c->waits_ms));
	c->truncated = 0;
	c->transient = 0;
	c->finish_reason[0] = '\0';
	c->at = NULL;
	c->seen[0] = '\0';
	c->seen_differs = 0;
}

void sl_completion_release(sl_completion *c)
{
	free(c->at);
	sl_buf_release(&c->text);
	sl_buf_release(&c->request);
	sl_completion_init(c);
}

/* ---- request keys ---------------------------------------------------- */

static void key_field(sl_sha256 *c, const char *s)
{
	char len[32];
	size_t n = s ? strlen(s) : 0;
	int k = snprintf(len, sizeof(len), "%zu:", n);

	sl_sha256_update(c, len, (size_t)k);
	sl_sha256_update(c, s ? s : "", n);
}

void sl_request_key(char out[65], int kind, const char *model,
		    const sl_chat_msg *msgs, size_t n)
{
	sl_sha256 c;
	unsigned char d[32];
	char count[32];

	sl_sha256_init(&c);
	key_field(&c, "sluice-request-1");
	key_field(&c, sl_provider_kind_name(kind));
	key_field(&c, model);
	snprintf(count, sizeof(count), "%zu", n);
	key_field(&c, count);
	for (size_t i = 0; i < n; i++) {
		key_field(&c, msgs[i].role ? msgs[i].role : "user");
		key_field(&c, msgs[i].content);
	}
	sl_sha256_final(&c, d);
	sl_sha256_tohex(out, d);
}

/* ---- lifecycle ------------------------------------------------------- */

static int check_header(const char *h, sl_err *err)
{
	const char *colon = strchr(h, ':');

	if (!colon || colon == h || strpbrk(h, "\r\n"))
		return sl_err_set(err, SL_EINPUT, "header '%.80s' is not a \"Name: value\" line", h);
	for (const char *c = h; c < colon; c++)
		if (*c <= ' ' || *c >= 0x7F)
			return sl_err_set(err, SL_EINPUT, "header name in '%.80s' is not a token", h);
	return SL_OK;
}

/* The options every kind shares, checked and copied into p. */
static int copy_opts(sl_provider *p, const sl_provider_opts *opts, sl_err *err)
{
	int ret;

	p->kind = opts->kind;
	p->timeout_ms = opts->timeout_ms ? opts->timeout_ms :
		(opts->timeout_s ? (opts->timeout_s < 4000000 ? opts->timeout_s : 4000000) : 300) * 1000;
	p->model = sl_xstrdup(opts->model ? opts->model : "");
	p->temperature = opts->temperature;
	p->tools = opts->tools;
	p->max_tokens = opts->max_tokens;
	p->anthropic_version = sl_xstrdup(opts->anthropic_version && *opts->anthropic_version ?
					  opts->anthropic_version : "2023-06-01");
	p->max_retries = opts->max_retries < 0 ? 4 : opts->max_retries;
	if (p->max_retries > SL_PROVIDER_MAX_RETRIES)
		p->max_retries = SL_PROVIDER_MAX_RETRIES;
	p->base_backoff_ms = opts->base_backoff_ms ? opts->base_backoff_ms : 1000;
	p->max_backoff_ms = opts->max_backoff_ms ? opts->max_backoff_ms : 30000;
	p->hooks = opts->hooks;
	p->deadline_ms = opts->deadline_ms;
	p->stop = opts->stop;
	for (const char *const *h = opts->headers; h && *h; h++) {
		if ((ret = check_header(*h, err)))
			return ret;
		sl_strvec_push(&p->headers, *h);
	}
	if (opts->response_format) {
		json_t *rf = json_loads(opts->response_format, 0, NULL);
		int ok = json_is_object(rf);

		json_decref(rf);
		if (!ok)
			return sl_err_set(err, SL_EINPUT, "response_format is not a JSON object");
		p->response_format = sl_xstrdup(opts->response_format);
	}
	return SL_OK;
}

int sl_provider_new(sl_provider **out, const sl_provider_opts *opts, sl_err *err)
{
	sl_provider *p = NULL;
	int ret;

	*out = NULL;
	if (!opts)
		return sl_err_set(err, SL_EINPUT, "no provider options");
	p = sl_xcalloc(1, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	if ((ret = copy_opts(p, opts, err)))
		goto done;
	if ((p->ops = ops_of(opts->kind)))
		ret = p->ops->open(p, opts, err);
	else if (opts->kind == SL_PROVIDER_RULES)
		ret = sl_err_set(err, SL_EINPUT, "the rules provider does not call a model");
	else
		ret = sl_err_set(err, SL_EINPUT, "unknown provider kind %d", opts->kind);
	if (!ret) {
		*out = p;
		p = NULL;
	}
done:
	sl_provider_free(p);
	return ret;
}

/*
 * The kind whose request this call is: itself, or for replay the recorded
 * kind; with none named, the first of openai, anthropic, command whose key
 * has a recorded reply.  Sets out->key; *first is the replay entry, if any.
 */
static int request_kind(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			sl_completion *out, size_t *first, sl_err *err)
{
	static const int any[] = { SL_PROVIDER_OPENAI, SL_PROVIDER_ANTHROPIC, SL_PROVIDER_COMMAND };
	char keys[3][65];

	*first = (size_t)-1;
	if (p->kind != SL_PROVIDER_REPLAY || p->replay_kind) {
		int kind = p->kind == SL_PROVIDER_REPLAY ? p->replay_kind : p->kind;

		sl_request_key(out->key, kind, p->model, msgs, n);
		if (p->kind == SL_PROVIDER_REPLAY && (*first = sl_provider_replay_find(p, out->key)) == (size_t)-1)
			return sl_err_set(err, SL_EINPUT, "no recorded reply for request key '%s' in '%s'",
					  out->key, p->replay_path);
		return kind;
	}
	for (size_t i = 0; i < 3; i++) {
		sl_request_key(keys[i], any[i], p->model, msgs, n);
		if ((*first = sl_provider_replay_find(p, keys[i])) != (size_t)-1) {
			memcpy(out->key, keys[i], sizeof(keys[i]));
			return any[i];
		}
	}
	memcpy(out->key, keys[0], sizeof(keys[0]));
	return sl_err_set(err, SL_EINPUT, "no recorded reply for request key '%s' (openai), "
			  "'%s' (anthropic) or '%s' (command) in '%s'",
			  keys[0], keys[1], keys[2], p->replay_path);
}

/*
 * A replayed call at a session position recorded in the file: that entry,
 * whatever the request's key (which out->key takes from the record); its
 * kind as request_kind's; -1 when nothing is recorded there.
 */
static int replay_at(sl_provider *p, const char *at, size_t n, sl_completion *out,
		     size_t *first)
{
	size_t i;

	if (p->kind != SL_PROVIDER_REPLAY || !at ||
	    (i = sl_provider_replay_find_at(p, at)) == (size_t)-1)
		return -1;
	*first = i;
	memcpy(out->key, p->replay[i].key, sizeof(out->key));
	out->seen_differs = p->replay[i].seen[0] && n && strcmp(p->replay[i].seen, out->seen);
	return p->replay_kind ? (int)p->replay_kind : SL_PROVIDER_REPLAY;
}

int sl_provider_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			 sl_completion *out, sl_err *err)
{
	return sl_provider_complete_at(p, NULL, msgs, n, out, err);
}

int sl_provider_complete_at(sl_provider *p, const char *at, const sl_chat_msg *msgs,
			    size_t n, sl_completion *out, sl_err *err)
{
	int64_t t0 = sl_now_ms();
	const sl_provider_ops *ops;
	sl_provider_call call = { msgs, n, NULL, (size_t)-1, 0 };
	char *body = NULL;
	int kind, ret;

	sl_buf_reset(&out->text);
	sl_buf_reset(&out->request);
	out->text.truncated = 0;
	out->tokens_in = out->tokens_out = -1;
	out->http_status = 0;
	out->retries = 0;
	memset(out->waits_ms, 0, sizeof(out->waits_ms));
	out->truncated = 0;
	out->transient = 0;
	out->finish_reason[0] = '\0';
	free(out->at);
	out->at = at ? sl_xstrdup(at) : NULL;
	out->seen[0] = '\0';
	out->seen_differs = 0;
	if (at && n)
		sl_sha256_hex(out->seen, msgs[n - 1].content ? msgs[n - 1].content : "",
			      msgs[n - 1].content ? strlen(msgs[n - 1].content) : 0);
	if ((kind = replay_at(p, at, n, out, &call.first)) >= 0)
		call.exact = 1;
	else
		kind = request_kind(p, msgs, n, out, &call.first, err);
	if ((ops = ops_of(kind)) && ops->wire) {
		call.body = body = ops->wire->body(p, msgs, n);
		sl_buf_adds(&out->request, body);
	} else {
		sl_provider_flatten_chat(&out->request, msgs, n);
	}
	sl_http_redact(&out->request, p->key);

	/* an HTTP kind sends the exact bytes: the recorded request may have had the key masked */
	ret = kind < 0 ? kind : p->ops->complete(p, &call, out, err);
	/* the reply as parsed (JSON escapes undone) quotes the key no more than the body did */
	sl_http_redact(&out->text, p->key);
	out->latency_ms = sl_now_ms() - t0;
	free(body);
	return ret;
}

int sl_provider_probe(sl_provider *p, sl_err *err)
{
	return p->ops->probe ? p->ops->probe(p, err) : SL_OK;
}

void sl_provider_free(sl_provider *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->npool; i++)
		sl_curl()->easy_cleanup(p->pool[i]);
	free(p->pool);
	pthread_mutex_destroy(&p->lock);
	sl_provider_wipe(p->key);
	free(p->key);
	free(p->url);
	free(p->model);
	free(p->command);
	sl_strvec_release(&p->headers);
	free(p->response_format);
	free(p->anthropic_version);
	for (size_t i = 0; i < p->nreplay; i++) {
		free(p->replay[i].reply);
		free(p->replay[i].at);
	}
	free(p->replay);
	free(p->replay_path);
	free(p);
}
