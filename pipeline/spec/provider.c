/*
 * provider.c - the campaign file's 'provider' section: where edits come
 * from when no rule applies (the rules are rules.c's): the model endpoint,
 * its kind, strings, headers, prices and numbers, and what each kind
 * requires.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/caps.h"
#include "pipeline/generate/provider.h"
#include "pipeline/spec/spec_internal.h"

static int load_headers(struct loader *ld, const struct node *seq, sl_spec *spec)
{
	if (spec_want_type(ld, seq, N_SEQ, "headers", "provider"))
		return SL_EINPUT;
	for (size_t i = 0; i < seq->nkid; i++) {
		const struct node *h = seq->kid[i];
		const char *colon;
		char *text = NULL;

		if (spec_get_str(ld, h, "headers", "provider", 1, &text))
			return SL_EINPUT;
		colon = strchr(text, ':');
		if (!colon || colon == text || strpbrk(text, "\r\n") ||
		    strcspn(text, " \t\"(),/;<=>?@[\\]{}") < (size_t)(colon - text)) {
			free(text);
			return spec_fail(ld, h->start, "a header must look like 'Name: value'");
		}
		sl_strvec_push_nodup(&spec->headers, text);
	}
	return 0;
}

/* prices: {MODEL: {input: X, output: Y}} per million tokens; keeps the spec's model. */
static int load_prices(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const prices_keys[] = { "input", "output", NULL };
	const struct node *v[SL_CAP_SPEC_KEYS];

	if (spec_want_type(ld, map, N_MAP, "prices", "provider"))
		return SL_EINPUT;
	spec->prices_pos.line = (uint32_t)(map->start.line + 1);
	spec->prices_pos.col = (uint32_t)(map->start.column + 1);
	for (size_t i = 0; i + 1 < map->nkid; i += 2) {
		const struct node *key = map->kid[i], *val = map->kid[i + 1];
		double in = -1, out = -1;

		if (key->type != N_SCALAR)
			return spec_fail(ld, key->start, "expected a model name in 'prices'");
		for (size_t j = 0; j < i; j += 2)
			if (!strcmp(map->kid[j]->text, key->text)) {
				char sbuf[80];

				return spec_fail(ld, key->start, "duplicate key '%s' in 'prices'",
						 spec_show(sbuf, sizeof(sbuf), key->text, key->len));
			}
		if (spec_want_type(ld, val, N_MAP, "prices", "provider") ||
		    spec_map_fields(ld, val, "prices", prices_keys, v) ||
		    spec_need(ld, val, v[0], "input", "prices") ||
		    spec_need(ld, val, v[1], "output", "prices") ||
		    spec_get_num(ld, v[0], "input", "prices", 0, 1e9, &in) ||
		    spec_get_num(ld, v[1], "output", "prices", 0, 1e9, &out))
			return SL_EINPUT;
		if (spec->model && !strcmp(key->text, spec->model)) {
			spec->price_in = in;
			spec->price_out = out;
		}
	}
	return 0;
}

/* The provider's keys, in the order of the enum that indexes them. */
static const char *const provider_keys[] = { "kind", "base_url", "model", "api_key_env",
	"temperature", "max_tokens", "timeout", "command", "headers",
	"anthropic_version", "max_retries", "replay", "prices", "response_format", NULL };
enum { P_KIND, P_BASE_URL, P_MODEL, P_KEY_ENV, P_TEMP, P_MAX_TOKENS, P_TIMEOUT, P_COMMAND,
	P_HEADERS, P_ANTHROPIC_VERSION, P_MAX_RETRIES, P_REPLAY, P_PRICES, P_RESPONSE_FORMAT };

/* 'response_format', when given, must be a JSON object. */
static int check_response_format(struct loader *ld, const struct node *v, const sl_spec *spec)
{
	json_error_t je;
	json_t *j;

	if (!spec->response_format)
		return 0;
	j = json_loads(spec->response_format, 0, &je);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return spec_fail(ld, v->start, "'response_format' must be a JSON object, e.g. "
				 "'{\"type\": \"json_object\"}'");
	}
	json_decref(j);
	return 0;
}

/* max_retries, prices, max_tokens and timeout, in that order. */
static int read_provider_numbers(struct loader *ld, const struct node *const *v, sl_spec *spec)
{
	long long n;

	if (v[P_MAX_RETRIES]) {
		if (spec_get_int(ld, v[P_MAX_RETRIES], "max_retries", "provider", 0, 20, &n))
			return SL_EINPUT;
		spec->max_retries = (int)n;
	}
	if (v[P_PRICES] && load_prices(ld, v[P_PRICES], spec))
		return SL_EINPUT;
	if (v[P_MAX_TOKENS]) {
		if (spec_get_int(ld, v[P_MAX_TOKENS], "max_tokens", "provider", 1, INT_MAX, &n))
			return SL_EINPUT;
		spec->max_tokens = (int)n;
	}
	return spec_get_uint(ld, v[P_TIMEOUT], "timeout", "provider", 1, INT_MAX,
			     &spec->provider_timeout_s);
}

/* api_key_env names a variable, base_url is HTTP, and each kind has what it needs. */
static int check_provider_values(struct loader *ld, const struct node *map,
				 const struct node *const *v, const sl_spec *spec)
{
	/* Never echo this value: a user may have pasted the key itself here. */
	if (spec->api_key_env &&
	    (isdigit((unsigned char)spec->api_key_env[0]) ||
	     strspn(spec->api_key_env, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_") != strlen(spec->api_key_env)))
		return spec_fail(ld, v[P_KEY_ENV]->start,
				 "'api_key_env' must be the name of an environment variable "
				 "(letters, digits and '_'), not the key itself");
	if (spec->base_url &&
	    spec_check_http_url(ld, v[P_BASE_URL], "base_url", spec->base_url))
		return SL_EINPUT;
	if ((spec->provider == SL_PROVIDER_OPENAI || spec->provider == SL_PROVIDER_ANTHROPIC) &&
	    (spec_need(ld, map, v[P_BASE_URL], "base_url", "provider") ||
	     spec_need(ld, map, v[P_MODEL], "model", "provider")))
		return SL_EINPUT;
	if (spec->provider == SL_PROVIDER_REPLAY &&
	    spec_need(ld, map, v[P_REPLAY], "replay", "provider"))
		return SL_EINPUT;
	if (spec->provider == SL_PROVIDER_COMMAND &&
	    spec_need(ld, map, v[P_COMMAND], "command", "provider"))
		return SL_EINPUT;
	return 0;
}

/* 'provider': its kind and strings, then its numbers and their checks. */
int spec_load_provider(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const kinds[] = { "rules", "openai", "command", "anthropic", "replay",
		NULL };
	static const int kind_ix[] = { SL_PROVIDER_RULES, SL_PROVIDER_OPENAI, SL_PROVIDER_COMMAND,
		SL_PROVIDER_ANTHROPIC, SL_PROVIDER_REPLAY };
	const struct node *v[SL_CAP_SPEC_KEYS];
	int kind = spec->provider;

	if (spec_want_type(ld, map, N_MAP, "provider", NULL) ||
	    spec_map_fields(ld, map, "provider", provider_keys, v) ||
	    spec_get_enum(ld, v[P_KIND], "kind", "provider", kinds, kind_ix, &kind) ||
	    spec_get_str(ld, v[P_BASE_URL], "base_url", "provider", 1, &spec->base_url) ||
	    spec_get_str(ld, v[P_MODEL], "model", "provider", 1, &spec->model) ||
	    spec_get_str(ld, v[P_KEY_ENV], "api_key_env", "provider", 1, &spec->api_key_env) ||
	    spec_get_num(ld, v[P_TEMP], "temperature", "provider", 0, 2, &spec->temperature) ||
	    spec_get_str(ld, v[P_COMMAND], "command", "provider", 1, &spec->command) ||
	    spec_get_str(ld, v[P_ANTHROPIC_VERSION], "anthropic_version", "provider", 1,
			 &spec->anthropic_version) ||
	    spec_get_str(ld, v[P_REPLAY], "replay", "provider", 1, &spec->replay) ||
	    spec_get_str(ld, v[P_RESPONSE_FORMAT], "response_format", "provider", 1,
			 &spec->response_format) ||
	    (v[P_HEADERS] && load_headers(ld, v[P_HEADERS], spec)))
		return SL_EINPUT;
	spec->provider = (enum sl_provider_kind)kind;
	if (check_response_format(ld, v[P_RESPONSE_FORMAT], spec) ||
	    read_provider_numbers(ld, v, spec) || check_provider_values(ld, map, v, spec))
		return SL_EINPUT;
	return 0;
}
