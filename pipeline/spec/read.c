/*
 * read.c - the campaign loader's reading helpers (spec_internal.h): one
 * node each, checked for its type and range, its value copied out; every
 * problem a "FILE:LINE:COLUMN: " message naming the node at fault.
 *
 * YAML nulls (an empty value, "~", "null") mean "not set": the helpers
 * receive NULL for them and leave their output alone.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

/*
 * A short copy of untrusted text for a message, on one line: a control
 * character is shown as its C escape (\n, \t, \r, \xNN), and text that does
 * not fit ends in "...".
 */
const char *spec_show(char *buf, size_t size, const char *s, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[5];
		size_t n;

		if (c == '\n' || c == '\t' || c == '\r')
			n = (size_t)snprintf(esc, sizeof(esc), "\\%c",
					     c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
		else if (c < 0x20 || c == 0x7f)
			n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			n = (size_t)snprintf(esc, sizeof(esc), "%c", c);
		if (o + n + 4 > size)
			break;
		memcpy(buf + o, esc, n);
		o += n;
	}
	if (i < len) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* spec_show() for code outside the loader (pipeline/spec.h). */
const char *sl_spec_show(char *buf, size_t size, const char *s)
{
	return spec_show(buf, size, s, strlen(s));
}

int spec_fail_at(struct loader *ld, size_t line, size_t col, const char *fmt, ...)
{
	char msg[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sl_err_set(ld->err, SL_EINPUT, "%s:%zu:%zu: %s", ld->path, line, col, msg);
}

/* "'key'" at the top level, "'key' in 'ctx'" below it. */
static const char *keyname(char *buf, size_t size, const char *key, const char *ctx)
{
	if (ctx)
		snprintf(buf, size, "'%s' in '%s'", key, ctx);
	else
		snprintf(buf, size, "'%s'", key);
	return buf;
}

int spec_is_null(const struct node *n)
{
	return n->type == N_SCALAR && n->style == YAML_PLAIN_SCALAR_STYLE &&
		(!n->len || !strcmp(n->text, "~") || !strcmp(n->text, "null") ||
		 !strcmp(n->text, "Null") || !strcmp(n->text, "NULL"));
}

/*
 * The optimal string alignment distance between a and b (Damerau-Levenshtein
 * where no substring is edited twice): insertions, deletions, substitutions
 * and swaps of two neighbours cost 1 each.  Strings longer than 63 bytes
 * are "far" (SIZE_MAX).
 */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[3][64], *prev2 = row[0], *prev = row[1], *cur = row[2];

	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1], d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/*
 * The known key nearest to a misspelt one, NULL when none is near: at most
 * two edits, and at most a third of the known key's length ("attemps" ->
 * "attempts"; "jb" suggests nothing).  The first of equals wins.
 */
static const char *nearest_key(const char *const *keys, size_t nkeys, const char *key,
			       size_t len)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (size_t k = 0; k < nkeys; k++) {
		size_t klen = strlen(keys[k]), d = edit_distance(key, len, keys[k], klen);

		if (d <= 2 && d * 3 <= klen && d < best_d) {
			best = keys[k];
			best_d = d;
		}
	}
	return best;
}

/* "unknown key 'x' [in 'ctx']", then "; did you mean 'y'?" when one is near. */
static int unknown_key(struct loader *ld, const struct node *key, const char *ctx,
		       const char *const *keys, size_t nkeys)
{
	const char *near = nearest_key(keys, nkeys, key->text, key->len);
	char sbuf[80], hint[96] = "";

	spec_show(sbuf, sizeof(sbuf), key->text, key->len);
	if (near)
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
	if (ctx)
		return spec_fail(ld, key->start, "unknown key '%s' in '%s'%s", sbuf, ctx, hint);
	return spec_fail(ld, key->start, "unknown key '%s'%s", sbuf, hint);
}

/*
 * Check a mapping's keys against the NULL-terminated list keys: no unknown
 * and no duplicate key.  vals[i] gets the value of keys[i], NULL when the
 * key is absent or its value is null.
 */
int spec_map_fields(struct loader *ld, const struct node *map, const char *ctx,
		      const char *const *keys, const struct node **vals)
{
	unsigned char seen[SL_CAP_SPEC_KEYS] = { 0 };
	size_t i, k, nkeys = 0;
	char sbuf[80];

	while (keys[nkeys])
		nkeys++;
	if (nkeys > SL_CAP_SPEC_KEYS)
		BUG("too many keys");
	for (k = 0; k < nkeys; k++)
		vals[k] = NULL;
	for (i = 0; i + 1 < map->nkid; i += 2) {
		const struct node *key = map->kid[i], *val = map->kid[i + 1];

		if (key->type != N_SCALAR) {
			if (ctx)
				return spec_fail(ld, key->start, "expected a string key in '%s'", ctx);
			return spec_fail(ld, key->start, "expected a string key");
		}
		for (k = 0; k < nkeys; k++)
			if (strlen(keys[k]) == key->len && !memcmp(keys[k], key->text, key->len))
				break;
		if (k == nkeys)
			return unknown_key(ld, key, ctx, keys, nkeys);
		spec_show(sbuf, sizeof(sbuf), key->text, key->len);
		if (seen[k]) {
			if (ctx)
				return spec_fail(ld, key->start, "duplicate key '%s' in '%s'", sbuf,
						 ctx);
			return spec_fail(ld, key->start, "duplicate key '%s'", sbuf);
		}
		seen[k] = 1;
		vals[k] = spec_is_null(val) ? NULL : val;
	}
	return 0;
}

int spec_need(struct loader *ld, const struct node *map, const struct node *val,
		const char *key, const char *ctx)
{
	if (val)
		return 0;
	if (ctx)
		return spec_fail(ld, map->start, "missing required field '%s' in '%s'", key, ctx);
	return spec_fail(ld, map->start, "missing required field '%s'", key);
}

int spec_want_type(struct loader *ld, const struct node *v, int type,
		     const char *key, const char *ctx)
{
	static const char *const what[] = { "", "a string", "a mapping", "a sequence" };
	char kbuf[96];

	if (v->type == type)
		return 0;
	return spec_fail(ld, v->start, "expected %s for %s", what[type],
			 keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* A string field; NULL v leaves *out alone. */
/* A scalar's text, borrowed from the node; *out untouched when v is NULL. */
int spec_get_word(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    int nonempty, const char **out)
{
	if (!v)
		return 0;
	if (spec_want_type(ld, v, N_SCALAR, key, ctx))
		return SL_EINPUT;
	if (strlen(v->text) != v->len)
		return spec_fail(ld, v->start, "'%s' must not contain NUL characters", key);
	if (nonempty && !v->len)
		return spec_fail(ld, v->start, "'%s' must not be empty", key);
	*out = v->text;
	return 0;
}

int spec_get_str(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		   int nonempty, char **out)
{
	const char *s = NULL;

	if (spec_get_word(ld, v, key, ctx, nonempty, &s))
		return SL_EINPUT;
	if (s) {
		free(*out);
		*out = sl_xstrdup(s);
	}
	return 0;
}

/* A plain decimal integer: -?[0-9]+ without leading zeros. */
int spec_get_int(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		   long long min, long long max, long long *out)
{
	const char *s;
	size_t i;
	char kbuf[96];

	if (!v)
		return 0;
	if (v->type != N_SCALAR || v->style != YAML_PLAIN_SCALAR_STYLE)
		goto bad;
	s = v->text;
	i = s[0] == '-';
	if (!isdigit((unsigned char)s[i]) || (s[i] == '0' && s[i + 1]) ||
	    strspn(s + i, "0123456789") != v->len - i)
		goto bad;
	if (v->len - i > 18)
		return spec_fail(ld, v->start, "'%s' must be between %lld and %lld", key, min, max);
	*out = strtoll(s, NULL, 10);
	if (*out < min || *out > max) {
		if (min == 1 && max == INT_MAX && *out < min)
			return spec_fail(ld, v->start, "'%s' must be a positive integer", key);
		return spec_fail(ld, v->start, "'%s' must be between %lld and %lld", key, min, max);
	}
	return 0;
bad:
	return spec_fail(ld, v->start, "expected an integer for %s",
			 keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* spec_get_int() into an unsigned field; *out is left alone when v is NULL. */
int spec_get_uint(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    long long min, long long max, unsigned *out)
{
	long long n;

	if (!v)
		return 0;
	if (spec_get_int(ld, v, key, ctx, min, max, &n))
		return SL_EINPUT;
	*out = (unsigned)n;
	return 0;
}

/* A plain decimal number: [-+]?(.d+|d+(.d*)?)([eE][-+]?d+)? as YAML's core schema. */
int spec_get_num(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		   double min, double max, double *out)
{
	const char *s;
	size_t i = 0, digits = 0;
	char kbuf[96];

	if (!v)
		return 0;
	s = v->text;
	if (v->type != N_SCALAR || v->style != YAML_PLAIN_SCALAR_STYLE)
		goto bad;
	if (s[i] == '-' || s[i] == '+')
		i++;
	while (isdigit((unsigned char)s[i]))
		i++, digits++;
	if (s[i] == '.')
		for (i++; isdigit((unsigned char)s[i]); i++)
			digits++;
	if (!digits)
		goto bad;
	if (s[i] == 'e' || s[i] == 'E') {
		i++;
		if (s[i] == '-' || s[i] == '+')
			i++;
		if (!isdigit((unsigned char)s[i]))
			goto bad;
		while (isdigit((unsigned char)s[i]))
			i++;
	}
	if (i != v->len)
		goto bad;
	*out = strtod(s, NULL);
	if (!(*out >= min && *out <= max))
		return spec_fail(ld, v->start, "'%s' must be between %g and %g", key, min, max);
	return 0;
bad:
	return spec_fail(ld, v->start, "expected a number for %s",
			 keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* One of names[] (a NULL-terminated list), stored as values[index]. */
int spec_get_enum(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    const char *const *names, const int *values, int *out)
{
	char list[160] = "";
	size_t i, used = 0;

	if (!v)
		return 0;
	if (spec_want_type(ld, v, N_SCALAR, key, ctx))
		return SL_EINPUT;
	for (i = 0; names[i]; i++) {
		if (!strcmp(names[i], v->text) && strlen(v->text) == v->len) {
			*out = values[i];
			return 0;
		}
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 i ? ", " : "", names[i]);
		if (used >= sizeof(list))
			BUG("enum list too long");
	}
	return spec_fail(ld, v->start, "'%s' must be one of: %s", key, list);
}

/*
 * http:// or https:// and a host: curl would take file://, ftp:// and
 * others, and a request sent there fails only after a run or a push.
 */
int spec_check_http_url(struct loader *ld, const struct node *v, const char *key,
			const char *url)
{
	size_t skip = !strncasecmp(url, "http://", 7) ? 7 : !strncasecmp(url, "https://", 8) ? 8 : 0;
	char sbuf[80];

	if (!skip || !url[skip] || strchr("/?#", url[skip]) ||
	    strcspn(url, " \t\r\n") != strlen(url))
		return spec_fail(ld, v->start, "'%s' must be an http:// or https:// URL with a "
				 "host, not '%s'", key, spec_show(sbuf, sizeof(sbuf), url, strlen(url)));
	return 0;
}

int spec_valid_name(const char *s)
{
	return *s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._-") == strlen(s);
}

/* NULL if s is usable as a ref path prefix (git check-ref-format rules), else why not. */
const char *spec_bad_branch_prefix(const char *s)
{
	const char *comp, *end;

	if (!*s)
		return "it must not be empty";
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		   "0123456789._/-") != strlen(s))
		return "use only A-Z, a-z, 0-9, '.', '_', '-' and '/'";
	if (strstr(s, ".."))
		return "it must not contain '..'";
	if (s[0] == '/' || s[strlen(s) - 1] == '/')
		return "it must not start or end with '/'";
	if (strstr(s, "//"))
		return "it must not contain '//'";
	if (s[strlen(s) - 1] == '.')
		return "it must not end with '.'";
	for (comp = s;; comp = end + 1) {
		size_t len;

		end = strchr(comp, '/');
		len = end ? (size_t)(end - comp) : strlen(comp);

		if (comp[0] == '.')
			return "a component must not start with '.'";
		if (len >= 5 && !memcmp(comp + len - 5, ".lock", 5))
			return "a component must not end with '.lock'";
		if (!end)
			break;
	}
	return NULL;
}

/*
 * Where a string value's first character sits in the file.  For a block
 * scalar that is on the line after the indicator, at the block's
 * indentation: the source's leading spaces on the first non-blank line minus
 * those the value kept on the same line.
 */
sl_pos spec_text_pos(struct loader *ld, const struct node *v)
{
	sl_pos pos;
	size_t i, nl = 0, k = 0, s = 0, line, off;

	pos.line = (uint32_t)(v->start.line + 1);
	pos.col = (uint32_t)(v->start.column + 1);
	if (v->style == YAML_SINGLE_QUOTED_SCALAR_STYLE || v->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		pos.col++;
	if (v->style != YAML_LITERAL_SCALAR_STYLE && v->style != YAML_FOLDED_SCALAR_STYLE)
		return pos;

	pos.line++;
	pos.col = 1;
	for (i = 0; i < v->len; i++) {
		if (v->text[i] == '\n') {
			nl++;
			k = 0;
		} else if (v->text[i] == ' ') {
			k++;
		} else {
			break;
		}
	}
	if (i == v->len)
		return pos;
	line = v->start.line + 1 + nl;
	for (off = 0; off < ld->srclen && line; off++)
		if (ld->src[off] == '\n')
			line--;
	while (off + s < ld->srclen && ld->src[off + s] == ' ')
		s++;
	if (s >= k)
		pos.col = (uint32_t)(s - k + 1);
	return pos;
}

/* A sequence of strings (or one string) appended to sv. */
int spec_get_strings(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		       sl_strvec *sv)
{
	char *text = NULL;

	if (!v)
		return 0;
	if (v->type == N_SCALAR) {
		if (spec_get_str(ld, v, key, ctx, 1, &text))
			return SL_EINPUT;
		sl_strvec_push_nodup(sv, text);
		return 0;
	}
	if (spec_want_type(ld, v, N_SEQ, key, ctx))
		return SL_EINPUT;
	for (size_t i = 0; i < v->nkid; i++) {
		text = NULL;
		if (spec_is_null(v->kid[i]))
			return spec_fail(ld, v->kid[i]->start,
					 "expected a string for an entry of '%s'", key);
		if (spec_get_str(ld, v->kid[i], key, ctx, 1, &text))
			return SL_EINPUT;
		sl_strvec_push_nodup(sv, text);
	}
	return 0;
}

int spec_get_bool(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    int *out)
{
	char kbuf[96];

	if (!v)
		return 0;
	if (v->type == N_SCALAR && v->style == YAML_PLAIN_SCALAR_STYLE) {
		if (!strcmp(v->text, "true")) {
			*out = 1;
			return 0;
		}
		if (!strcmp(v->text, "false")) {
			*out = 0;
			return 0;
		}
	}
	return spec_fail(ld, v->start, "expected true or false for %s",
			 keyname(kbuf, sizeof(kbuf), key, ctx));
}
