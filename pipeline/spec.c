/*
 * spec.c - load a campaign file into an sl_spec.
 *
 * Reads the file named by the caller (whole, at most 1 MiB) and writes a new
 * sl_spec that the caller frees with sl_spec_free().  Two passes: libyaml's
 * event stream is turned into a small tree of nodes that keeps each node's
 * mark, then the tree is walked key by key, checking names, types and
 * values and filling defaults.  Every problem becomes SL_EINPUT with a
 * "FILE:LINE:COLUMN: " message naming the node at fault.
 *
 * The event API is used rather than yaml_parser_load() because only events
 * show anchors, aliases, tags and extra documents.  All of these are
 * rejected: a campaign has no use for them, and aliases are the road to
 * exponential expansion ("billion laughs").  YAML nulls (an empty value,
 * "~", "null") mean "not set".
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <yaml.h>

#include "pipeline/generate/edit.h"
#include "pipeline/generate/provider.h"
#include "pipeline/spec.h"
#include "common/caps.h"
#include "scoping/scope.h"

enum { N_SCALAR = 1, N_MAP, N_SEQ };

struct node {
	int type;
	yaml_mark_t start;
	char *text;                 /* scalars: NUL-terminated (may hold NULs) */
	size_t len;
	yaml_scalar_style_t style;
	struct node **kid;          /* maps: key, value, key, value...; seqs: items */
	size_t nkid, alloc;
};

struct loader {
	const char *path;
	const char *src;
	size_t srclen;
	sl_err *err;
};

static void node_free(struct node *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->nkid; i++)
		node_free(n->kid[i]);
	free(n->kid);
	free(n->text);
	free(n);
}

/* A short, printable copy of untrusted text for a message. */
static const char *show(char *buf, size_t size, const char *s, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 4 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (i < len) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static int fail_at(struct loader *ld, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_at(struct loader *ld, size_t line, size_t col, const char *fmt, ...)
{
	char msg[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sl_err_set(ld->err, SL_EINPUT, "%s:%zu:%zu: %s", ld->path, line, col, msg);
}

#define fail(ld, mark, ...) fail_at((ld), (mark).line + 1, (mark).column + 1, __VA_ARGS__)

/* "'key'" at the top level, "'key' in 'ctx'" below it. */
static const char *keyname(char *buf, size_t size, const char *key, const char *ctx)
{
	if (ctx)
		snprintf(buf, size, "'%s' in '%s'", key, ctx);
	else
		snprintf(buf, size, "'%s'", key);
	return buf;
}

/* ---- events to tree ---- */

static int yaml_failed(struct loader *ld, yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown problem";

	if (p->error == YAML_MEMORY_ERROR)
		return sl_err_set(ld->err, SL_ERROR, "%s: out of memory", ld->path);
	if (p->error == YAML_READER_ERROR) {
		size_t i, line = 1, col = 1;

		for (i = 0; i < p->problem_offset && i < ld->srclen; i++) {
			if (ld->src[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return fail_at(ld, line, col, "invalid YAML: %s", problem);
	}
	if (p->problem_mark.index < ld->srclen && ld->src[p->problem_mark.index] == '\t')
		return fail(ld, p->problem_mark,
			    "invalid YAML: a tab is not allowed here (YAML indents with spaces)");
	if (p->context)
		return fail(ld, p->problem_mark, "invalid YAML: %s (%s at line %zu, column %zu)",
			    problem, p->context, p->context_mark.line + 1,
			    p->context_mark.column + 1);
	return fail(ld, p->problem_mark, "invalid YAML: %s", problem);
}

static int next_event(struct loader *ld, yaml_parser_t *p, yaml_event_t *ev)
{
	if (yaml_parser_parse(p, ev))
		return 0;
	return yaml_failed(ld, p);
}

/* Build the node that *ev starts; consumes *ev. */
static int build(struct loader *ld, yaml_parser_t *p, yaml_event_t *ev, int depth,
		 struct node **out)
{
	struct node *n = NULL;
	yaml_char_t *anchor = NULL, *tag = NULL;
	int ret = SL_EINPUT;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		fail(ld, ev->start_mark, "anchors and aliases are not supported");
		goto done;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		BUG("unexpected YAML event %d", (int)ev->type);
	}
	if (anchor) {
		fail(ld, ev->start_mark, "anchors and aliases are not supported");
		goto done;
	}
	if (tag) {
		fail(ld, ev->start_mark, "tags are not supported");
		goto done;
	}

	n = sl_xcalloc(1, sizeof(*n));
	n->start = ev->start_mark;
	if (ev->type == YAML_SCALAR_EVENT) {
		n->type = N_SCALAR;
		n->len = ev->data.scalar.length;
		n->text = sl_xmalloc(sl_st_add(n->len, 1));
		memcpy(n->text, ev->data.scalar.value, n->len);
		n->text[n->len] = '\0';
		n->style = ev->data.scalar.style;
		ret = 0;
		goto done;
	}

	n->type = ev->type == YAML_MAPPING_START_EVENT ? N_MAP : N_SEQ;
	if (depth >= SL_CAP_SPEC_DEPTH) {
		fail(ld, ev->start_mark, "nesting deeper than %d levels", SL_CAP_SPEC_DEPTH);
		goto done;
	}
	for (;;) {
		yaml_event_t kev;
		struct node *kid;

		if (next_event(ld, p, &kev))
			goto done;
		if (kev.type == YAML_MAPPING_END_EVENT || kev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&kev);
			break;
		}
		if (build(ld, p, &kev, depth + 1, &kid))
			goto done;
		SL_ALLOC_GROW(n->kid, n->nkid + 1, n->alloc);
		n->kid[n->nkid++] = kid;
	}
	ret = 0;
done:
	yaml_event_delete(ev);
	if (ret) {
		node_free(n);
		n = NULL;
	}
	*out = n;
	return ret;
}

/* Parse the whole stream: exactly one document, whose root is returned. */
static int parse_tree(struct loader *ld, struct node **out)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct node *root = NULL;
	int ret = SL_EINPUT;

	*out = NULL;
	if (!yaml_parser_initialize(&p))
		return sl_err_set(ld->err, SL_ERROR, "%s: out of memory", ld->path);
	yaml_parser_set_input_string(&p, (const unsigned char *)ld->src, ld->srclen);

	if (next_event(ld, &p, &ev))           /* STREAM-START */
		goto done;
	yaml_event_delete(&ev);
	if (next_event(ld, &p, &ev))
		goto done;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		fail_at(ld, 1, 1, "empty file");
		goto done;
	}
	yaml_event_delete(&ev);                /* DOCUMENT-START */
	if (next_event(ld, &p, &ev) || build(ld, &p, &ev, 0, &root))
		goto done;
	if (next_event(ld, &p, &ev))           /* DOCUMENT-END */
		goto done;
	yaml_event_delete(&ev);
	if (next_event(ld, &p, &ev))
		goto done;
	if (ev.type == YAML_DOCUMENT_START_EVENT) {
		fail(ld, ev.start_mark, "multiple YAML documents are not supported");
		yaml_event_delete(&ev);
		goto done;
	}
	yaml_event_delete(&ev);
	*out = root;
	root = NULL;
	ret = 0;
done:
	node_free(root);
	yaml_parser_delete(&p);
	return ret;
}

/* ---- node helpers ---- */

static int is_null(const struct node *n)
{
	return n->type == N_SCALAR && n->style == YAML_PLAIN_SCALAR_STYLE &&
		(!n->len || !strcmp(n->text, "~") || !strcmp(n->text, "null") ||
		 !strcmp(n->text, "Null") || !strcmp(n->text, "NULL"));
}

/*
 * Check a mapping's keys against the NULL-terminated list keys: no unknown
 * and no duplicate key.  vals[i] gets the value of keys[i], NULL when the
 * key is absent or its value is null.
 */
static int map_fields(struct loader *ld, const struct node *map, const char *ctx,
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
				return fail(ld, key->start, "expected a string key in '%s'", ctx);
			return fail(ld, key->start, "expected a string key");
		}
		for (k = 0; k < nkeys; k++)
			if (strlen(keys[k]) == key->len && !memcmp(keys[k], key->text, key->len))
				break;
		show(sbuf, sizeof(sbuf), key->text, key->len);
		if (k == nkeys) {
			if (ctx)
				return fail(ld, key->start, "unknown key '%s' in '%s'", sbuf, ctx);
			return fail(ld, key->start, "unknown key '%s'", sbuf);
		}
		if (seen[k]) {
			if (ctx)
				return fail(ld, key->start, "duplicate key '%s' in '%s'", sbuf, ctx);
			return fail(ld, key->start, "duplicate key '%s'", sbuf);
		}
		seen[k] = 1;
		vals[k] = is_null(val) ? NULL : val;
	}
	return 0;
}

static int need(struct loader *ld, const struct node *map, const struct node *val,
		const char *key, const char *ctx)
{
	if (val)
		return 0;
	if (ctx)
		return fail(ld, map->start, "missing required field '%s' in '%s'", key, ctx);
	return fail(ld, map->start, "missing required field '%s'", key);
}

static int want_type(struct loader *ld, const struct node *v, int type,
		     const char *key, const char *ctx)
{
	static const char *const what[] = { "", "a string", "a mapping", "a sequence" };
	char kbuf[96];

	if (v->type == type)
		return 0;
	return fail(ld, v->start, "expected %s for %s", what[type],
		    keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* A string field; NULL v leaves *out alone. */
/* A scalar's text, borrowed from the node; *out untouched when v is NULL. */
static int get_word(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    int nonempty, const char **out)
{
	if (!v)
		return 0;
	if (want_type(ld, v, N_SCALAR, key, ctx))
		return SL_EINPUT;
	if (strlen(v->text) != v->len)
		return fail(ld, v->start, "'%s' must not contain NUL characters", key);
	if (nonempty && !v->len)
		return fail(ld, v->start, "'%s' must not be empty", key);
	*out = v->text;
	return 0;
}

static int get_str(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		   int nonempty, char **out)
{
	const char *s = NULL;

	if (get_word(ld, v, key, ctx, nonempty, &s))
		return SL_EINPUT;
	if (s) {
		free(*out);
		*out = sl_xstrdup(s);
	}
	return 0;
}

/* A plain decimal integer: -?[0-9]+ without leading zeros. */
static int get_int(struct loader *ld, const struct node *v, const char *key, const char *ctx,
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
		return fail(ld, v->start, "'%s' must be between %lld and %lld", key, min, max);
	*out = strtoll(s, NULL, 10);
	if (*out < min || *out > max) {
		if (min == 1 && max == INT_MAX && *out < min)
			return fail(ld, v->start, "'%s' must be a positive integer", key);
		return fail(ld, v->start, "'%s' must be between %lld and %lld", key, min, max);
	}
	return 0;
bad:
	return fail(ld, v->start, "expected an integer for %s", keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* get_int() into an unsigned field; *out is left alone when v is NULL. */
static int get_uint(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    long long min, long long max, unsigned *out)
{
	long long n;

	if (!v)
		return 0;
	if (get_int(ld, v, key, ctx, min, max, &n))
		return SL_EINPUT;
	*out = (unsigned)n;
	return 0;
}

/* A plain decimal number: [-+]?(.d+|d+(.d*)?)([eE][-+]?d+)? as YAML's core schema. */
static int get_num(struct loader *ld, const struct node *v, const char *key, const char *ctx,
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
		return fail(ld, v->start, "'%s' must be between %g and %g", key, min, max);
	return 0;
bad:
	return fail(ld, v->start, "expected a number for %s", keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* One of names[] (a NULL-terminated list), stored as values[index]. */
static int get_enum(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    const char *const *names, const int *values, int *out)
{
	char list[160] = "";
	size_t i, used = 0;

	if (!v)
		return 0;
	if (want_type(ld, v, N_SCALAR, key, ctx))
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
	return fail(ld, v->start, "'%s' must be one of: %s", key, list);
}

static int valid_name(const char *s)
{
	return *s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._-") == strlen(s);
}

/* NULL if s is usable as a ref path prefix (git check-ref-format rules), else why not. */
static const char *bad_branch_prefix(const char *s)
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
static sl_pos text_pos(struct loader *ld, const struct node *v)
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

/* ---- the campaign's sections ---- */

/* 1 if s is in v. */
static int has_str(const sl_strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return 1;
	return 0;
}

/* 'language_overrides' in 'targets': glob to language, each glob once. */
static int load_overrides(struct loader *ld, const struct node *m, sl_spec *spec)
{
	char sbuf[80];

	if (want_type(ld, m, N_MAP, "language_overrides", "targets"))
		return SL_EINPUT;
	for (size_t i = 0; i + 1 < m->nkid; i += 2) {
		char *glob = NULL, *lang = NULL;

		if (get_str(ld, m->kid[i], "language_overrides", "targets", 1, &glob) ||
		    get_str(ld, m->kid[i + 1], "language_overrides", "targets", 1, &lang)) {
			free(glob);
			return SL_EINPUT;
		}
		if (has_str(&spec->override_globs, glob)) {
			fail(ld, m->kid[i]->start, "duplicate key '%s' in 'language_overrides'",
			     show(sbuf, sizeof(sbuf), glob, strlen(glob)));
			free(glob);
			free(lang);
			return SL_EINPUT;
		}
		sl_strvec_push_nodup(&spec->override_globs, glob);
		sl_strvec_push_nodup(&spec->override_langs, lang);
		SL_ALLOC_GROW(spec->override_pos, spec->override_langs.n, spec->override_pos_alloc);
		spec->override_pos[spec->override_langs.n - 1] = text_pos(ld, m->kid[i + 1]);
	}
	return 0;
}

/* 'paths' in 'targets': one string or a sequence of strings. */
static int load_paths(struct loader *ld, const struct node *v, sl_spec *spec)
{
	char *one = NULL;

	if (v->type == N_MAP)
		return fail(ld, v->start, "expected a string or a sequence for 'paths' in 'targets'");
	if (v->type == N_SCALAR) {
		if (get_str(ld, v, "paths", "targets", 1, &one))
			return SL_EINPUT;
		sl_strvec_push_nodup(&spec->paths, one);
		return 0;
	}
	for (size_t i = 0; i < v->nkid; i++) {
		const struct node *item = v->kid[i];

		one = NULL;
		if (item->type != N_SCALAR || is_null(item))
			return fail(ld, item->start, "expected a string for an entry of 'paths'");
		if (get_str(ld, item, "paths", "targets", 1, &one))
			return SL_EINPUT;
		sl_strvec_push_nodup(&spec->paths, one);
	}
	return 0;
}

/* 'targets': language, query, capture, unit, overrides and paths. */
static int load_targets(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const keys[] = { "language", "paths", "query", "capture", "unit",
		"language_overrides", NULL };
	static const char *const units[] = { "capture", "statement", "function", "class", "file",
		NULL };
	static const int unit_ix[] = { 0, 1, 2, 3, 4 };
	enum { K_LANGUAGE, K_PATHS, K_QUERY, K_CAPTURE, K_UNIT, K_OVERRIDES };
	const struct node *v[SL_CAP_SPEC_KEYS];
	int unit = 0;

	if (map_fields(ld, map, "targets", keys, v) ||
	    get_str(ld, v[K_LANGUAGE], "language", "targets", 1, &spec->language) ||
	    get_str(ld, v[K_QUERY], "query", "targets", 1, &spec->query) ||
	    get_str(ld, v[K_CAPTURE], "capture", "targets", 1, &spec->capture) ||
	    get_enum(ld, v[K_UNIT], "unit", "targets", units, unit_ix, &unit) ||
	    need(ld, map, v[K_LANGUAGE], "language", "targets"))
		return SL_EINPUT;
	spec->language_pos = text_pos(ld, v[K_LANGUAGE]);
	if (v[K_QUERY]) {
		spec->query_pos = text_pos(ld, v[K_QUERY]);
		spec->query_block = v[K_QUERY]->style == YAML_LITERAL_SCALAR_STYLE ||
			v[K_QUERY]->style == YAML_FOLDED_SCALAR_STYLE;
	} else if (!v[K_UNIT]) {
		unit = 2;   /* fix's default query: the unit is the function */
	}
	spec->unit = sl_xstrdup(units[unit]);
	if (v[K_OVERRIDES] && load_overrides(ld, v[K_OVERRIDES], spec))
		return SL_EINPUT;
	if (v[K_PATHS] && load_paths(ld, v[K_PATHS], spec))
		return SL_EINPUT;
	return 0;
}

static int load_rules(struct loader *ld, const struct node *seq, sl_spec *spec)
{
	static const char *const keys[] = { "capture", "template", NULL };
	enum { K_CAPTURE, K_TEMPLATE };
	const struct node *v[SL_CAP_SPEC_KEYS];
	size_t i;

	if (want_type(ld, seq, N_SEQ, "rules", NULL))
		return SL_EINPUT;
	spec->rules = sl_xcalloc(seq->nkid ? seq->nkid : 1, sizeof(*spec->rules));
	for (i = 0; i < seq->nkid; i++) {
		const struct node *item = seq->kid[i];
		sl_spec_rule *r = &spec->rules[spec->nrules];

		if (item->type != N_MAP)
			return fail(ld, item->start, "expected a mapping for an entry of 'rules'");
		spec->nrules++;
		r->pos.line = (uint32_t)(item->start.line + 1);
		r->pos.col = (uint32_t)(item->start.column + 1);
		if (map_fields(ld, item, "rules", keys, v) ||
		    get_str(ld, v[K_CAPTURE], "capture", "rules", 1, &r->capture) ||
		    get_str(ld, v[K_TEMPLATE], "template", "rules", 0, &r->template_text) ||
		    need(ld, item, v[K_CAPTURE], "capture", "rules") ||
		    need(ld, item, v[K_TEMPLATE], "template", "rules"))
			return SL_EINPUT;
	}
	return 0;
}

static int load_headers(struct loader *ld, const struct node *seq, sl_spec *spec)
{
	if (want_type(ld, seq, N_SEQ, "headers", "provider"))
		return SL_EINPUT;
	for (size_t i = 0; i < seq->nkid; i++) {
		const struct node *h = seq->kid[i];
		const char *colon;
		char *text = NULL;

		if (get_str(ld, h, "headers", "provider", 1, &text))
			return SL_EINPUT;
		colon = strchr(text, ':');
		if (!colon || colon == text || strpbrk(text, "\r\n") ||
		    strcspn(text, " \t\"(),/;<=>?@[\\]{}") < (size_t)(colon - text)) {
			free(text);
			return fail(ld, h->start, "a header must look like 'Name: value'");
		}
		sl_strvec_push_nodup(&spec->headers, text);
	}
	return 0;
}

/* prices: {MODEL: {input: X, output: Y}} per million tokens; keeps the spec's model. */
static int load_prices(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const keys[] = { "input", "output", NULL };
	const struct node *v[SL_CAP_SPEC_KEYS];

	if (want_type(ld, map, N_MAP, "prices", "provider"))
		return SL_EINPUT;
	spec->prices_pos.line = (uint32_t)(map->start.line + 1);
	spec->prices_pos.col = (uint32_t)(map->start.column + 1);
	for (size_t i = 0; i + 1 < map->nkid; i += 2) {
		const struct node *key = map->kid[i], *val = map->kid[i + 1];
		double in = -1, out = -1;

		if (key->type != N_SCALAR)
			return fail(ld, key->start, "expected a model name in 'prices'");
		for (size_t j = 0; j < i; j += 2)
			if (!strcmp(map->kid[j]->text, key->text)) {
				char sbuf[80];

				return fail(ld, key->start, "duplicate key '%s' in 'prices'",
					    show(sbuf, sizeof(sbuf), key->text, key->len));
			}
		if (want_type(ld, val, N_MAP, "prices", "provider") ||
		    map_fields(ld, val, "prices", keys, v) ||
		    need(ld, val, v[0], "input", "prices") ||
		    need(ld, val, v[1], "output", "prices") ||
		    get_num(ld, v[0], "input", "prices", 0, 1e9, &in) ||
		    get_num(ld, v[1], "output", "prices", 0, 1e9, &out))
			return SL_EINPUT;
		if (spec->model && !strcmp(key->text, spec->model)) {
			spec->price_in = in;
			spec->price_out = out;
		}
	}
	return 0;
}

static int load_budget(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const keys[] = { "max_tokens", "max_cost", "max_wall_time",
		"early_stop_after", "early_stop_below", NULL };
	enum { K_TOKENS, K_COST, K_WALL, K_AFTER, K_BELOW };
	const struct node *v[SL_CAP_SPEC_KEYS];
	long long n;

	if (want_type(ld, map, N_MAP, "budget", NULL) ||
	    map_fields(ld, map, "budget", keys, v) ||
	    get_num(ld, v[K_COST], "max_cost", "budget", 0, 1e12, &spec->budget_cost) ||
	    get_num(ld, v[K_BELOW], "early_stop_below", "budget", 0, 1, &spec->early_stop_rate))
		return SL_EINPUT;
	if (v[K_TOKENS]) {
		if (get_int(ld, v[K_TOKENS], "max_tokens", "budget", 1, LLONG_MAX, &n))
			return SL_EINPUT;
		spec->budget_tokens = n;
	}
	if (v[K_WALL]) {
		if (get_int(ld, v[K_WALL], "max_wall_time", "budget", 1, INT_MAX, &n))
			return SL_EINPUT;
		spec->budget_wall_s = (unsigned)n;
	}
	if (v[K_AFTER]) {
		if (get_int(ld, v[K_AFTER], "early_stop_after", "budget", 1, INT_MAX, &n))
			return SL_EINPUT;
		spec->early_stop_after = (unsigned)n;
	}
	if (!!v[K_AFTER] != !!v[K_BELOW])
		return fail(ld, map->start, "'early_stop_after' and 'early_stop_below' go together");
	if (spec->budget_cost > 0 && spec->price_in < 0)
		return fail(ld, v[K_COST]->start, "'max_cost' needs a price for model '%s' in "
			    "'prices' of 'provider'", spec->model ? spec->model : "(none)");
	return 0;
}

static int get_strings(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		       sl_strvec *sv);
static int get_bool(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		    int *out);

static int load_jail(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const keys[] = { "memory_mb", "pids", "tmp_mb", "disk_mb", "cpus",
		"address_space_mb", "unenforced", "writable_worktree", "warm_base", NULL };
	enum { K_UNENFORCED = 6, K_WRITABLE = 7, K_WARM = 8 };
	static const char *const warm_names[] = { "auto", "overlay", "off", NULL };
	static const int warm_ix[] = { SL_WARM_AUTO, SL_WARM_OVERLAY, SL_WARM_OFF };
	unsigned *fields[] = { &spec->jail.mem_mb, &spec->jail.pids, &spec->jail.tmp_mb,
			       &spec->jail.disk_mb, &spec->jail.cpus, &spec->jail.as_mb };
	const struct node *v[SL_CAP_SPEC_KEYS];
	sl_strvec words = SL_STRVEC_INIT;
	long long n;
	int ret = SL_EINPUT;

	if (want_type(ld, map, N_MAP, "jail", NULL) || map_fields(ld, map, "jail", keys, v))
		return SL_EINPUT;
	for (size_t i = 0; i < K_UNENFORCED; i++) {
		if (!v[i])
			continue;
		if (get_int(ld, v[i], keys[i], "jail", 1, i == 4 ? 4096 : 1 << 24, &n))
			return SL_EINPUT;
		*fields[i] = (unsigned)n;
	}
	if (get_bool(ld, v[K_WRITABLE], keys[K_WRITABLE], "jail", &spec->jail.writable) ||
	    get_enum(ld, v[K_WARM], keys[K_WARM], "jail", warm_names, warm_ix,
		     &spec->jail.warm_base) ||
	    get_strings(ld, v[K_UNENFORCED], keys[K_UNENFORCED], "jail", &words))
		goto done;
	for (size_t i = 0; i < words.n; i++) {
		if (!strcmp(words.v[i], "memory"))
			spec->jail.accept |= SL_JAIL_CG_MEMORY;
		else if (!strcmp(words.v[i], "cpu"))
			spec->jail.accept |= SL_JAIL_CG_CPU;
		else {
			fail(ld, v[K_UNENFORCED]->start, "unknown limit '%s' in 'unenforced' of "
			     "'jail' (memory or cpu)", words.v[i]);
			goto done;
		}
	}
	if (spec->jail.writable && spec->jail.disk_mb) {
		fail(ld, v[K_WRITABLE]->start, "'writable_worktree' and 'disk_mb' of 'jail' "
		     "exclude each other");
		goto done;
	}
	if (spec->jail.writable && spec->jail.warm_base == SL_WARM_OVERLAY) {
		fail(ld, v[K_WRITABLE]->start, "'writable_worktree' and 'warm_base: overlay' of "
		     "'jail' exclude each other");
		goto done;
	}
	/* a writable worktree is the plain tree the candidate's gates share */
	if (spec->jail.writable)
		spec->jail.warm_base = SL_WARM_OFF;
	ret = 0;
done:
	sl_strvec_release(&words);
	return ret;
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
		return fail(ld, v->start, "'response_format' must be a JSON object, e.g. "
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
		if (get_int(ld, v[P_MAX_RETRIES], "max_retries", "provider", 0, 20, &n))
			return SL_EINPUT;
		spec->max_retries = (int)n;
	}
	if (v[P_PRICES] && load_prices(ld, v[P_PRICES], spec))
		return SL_EINPUT;
	if (v[P_MAX_TOKENS]) {
		if (get_int(ld, v[P_MAX_TOKENS], "max_tokens", "provider", 1, INT_MAX, &n))
			return SL_EINPUT;
		spec->max_tokens = (int)n;
	}
	return get_uint(ld, v[P_TIMEOUT], "timeout", "provider", 1, INT_MAX,
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
		return fail(ld, v[P_KEY_ENV]->start,
			    "'api_key_env' must be the name of an environment variable "
			    "(letters, digits and '_'), not the key itself");
	if (spec->base_url && strncmp(spec->base_url, "http://", 7) &&
	    strncmp(spec->base_url, "https://", 8))
		return fail(ld, v[P_BASE_URL]->start, "'base_url' must start with http:// or https://");
	if ((spec->provider == SL_PROVIDER_OPENAI || spec->provider == SL_PROVIDER_ANTHROPIC) &&
	    (need(ld, map, v[P_BASE_URL], "base_url", "provider") ||
	     need(ld, map, v[P_MODEL], "model", "provider")))
		return SL_EINPUT;
	if (spec->provider == SL_PROVIDER_REPLAY && need(ld, map, v[P_REPLAY], "replay", "provider"))
		return SL_EINPUT;
	if (spec->provider == SL_PROVIDER_COMMAND &&
	    need(ld, map, v[P_COMMAND], "command", "provider"))
		return SL_EINPUT;
	return 0;
}

/* 'provider': its kind and strings, then its numbers and their checks. */
static int load_provider(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const kinds[] = { "rules", "openai", "command", "anthropic", "replay",
		NULL };
	static const int kind_ix[] = { SL_PROVIDER_RULES, SL_PROVIDER_OPENAI, SL_PROVIDER_COMMAND,
		SL_PROVIDER_ANTHROPIC, SL_PROVIDER_REPLAY };
	const struct node *v[SL_CAP_SPEC_KEYS];

	if (want_type(ld, map, N_MAP, "provider", NULL) ||
	    map_fields(ld, map, "provider", provider_keys, v) ||
	    get_enum(ld, v[P_KIND], "kind", "provider", kinds, kind_ix, &spec->provider) ||
	    get_str(ld, v[P_BASE_URL], "base_url", "provider", 1, &spec->base_url) ||
	    get_str(ld, v[P_MODEL], "model", "provider", 1, &spec->model) ||
	    get_str(ld, v[P_KEY_ENV], "api_key_env", "provider", 1, &spec->api_key_env) ||
	    get_num(ld, v[P_TEMP], "temperature", "provider", 0, 2, &spec->temperature) ||
	    get_str(ld, v[P_COMMAND], "command", "provider", 1, &spec->command) ||
	    get_str(ld, v[P_ANTHROPIC_VERSION], "anthropic_version", "provider", 1,
		    &spec->anthropic_version) ||
	    get_str(ld, v[P_REPLAY], "replay", "provider", 1, &spec->replay) ||
	    get_str(ld, v[P_RESPONSE_FORMAT], "response_format", "provider", 1,
		    &spec->response_format) ||
	    (v[P_HEADERS] && load_headers(ld, v[P_HEADERS], spec)))
		return SL_EINPUT;
	if (check_response_format(ld, v[P_RESPONSE_FORMAT], spec) ||
	    read_provider_numbers(ld, v, spec) || check_provider_values(ld, map, v, spec))
		return SL_EINPUT;
	return 0;
}

/* A sequence of strings (or one string) appended to sv. */
static int get_strings(struct loader *ld, const struct node *v, const char *key, const char *ctx,
		       sl_strvec *sv)
{
	char *text = NULL;

	if (!v)
		return 0;
	if (v->type == N_SCALAR) {
		if (get_str(ld, v, key, ctx, 1, &text))
			return SL_EINPUT;
		sl_strvec_push_nodup(sv, text);
		return 0;
	}
	if (want_type(ld, v, N_SEQ, key, ctx))
		return SL_EINPUT;
	for (size_t i = 0; i < v->nkid; i++) {
		text = NULL;
		if (is_null(v->kid[i]))
			return fail(ld, v->kid[i]->start, "expected a string for an entry of '%s'", key);
		if (get_str(ld, v->kid[i], key, ctx, 1, &text))
			return SL_EINPUT;
		sl_strvec_push_nodup(sv, text);
	}
	return 0;
}

static int get_bool(struct loader *ld, const struct node *v, const char *key, const char *ctx,
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
	return fail(ld, v->start, "expected true or false for %s", keyname(kbuf, sizeof(kbuf), key, ctx));
}

/* "a, b or c": the names of formats (ending with SL_REPORT_NONE) for a message. */
static void format_list(char *buf, size_t size, const int *formats)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; formats[i] && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
					 !i ? "" : formats[i + 1] ? ", " : " or ",
					 sl_report_format_name(formats[i]));
}

/* A gate's `format:` word, one of the formats its kind reads, into *out. */
static int gate_format(struct loader *ld, const struct node *v, const char *word, int kind,
		       const char *kind_name, int *out)
{
	/* the formats each kind reads, in the order the message names them */
	static const int formats[][8] = {
		[SL_GATE_STATIC] = { SL_REPORT_GCC, SL_REPORT_GCC_JSON, SL_REPORT_SARIF },
		[SL_GATE_TEST] = { SL_REPORT_JUNIT, SL_REPORT_TAP, SL_REPORT_AUTOMAKE,
			SL_REPORT_CTEST },
		[SL_GATE_COVERAGE] = { SL_REPORT_LCOV, SL_REPORT_GCOV, SL_REPORT_GCOV_JSON },
		[SL_GATE_FINDING_GONE] = { SL_REPORT_GCC, SL_REPORT_GCC_JSON, SL_REPORT_SARIF,
			SL_REPORT_TAP, SL_REPORT_JUNIT, SL_REPORT_AUTOMAKE, SL_REPORT_CTEST },
		[SL_GATE_MUTANTS] = { SL_REPORT_NONE },
	};
	int f = sl_report_format_parse(word);
	char list[160];

	for (size_t j = 0; f && formats[kind][j]; j++)
		if (formats[kind][j] == f) {
			*out = f;
			return 0;
		}
	format_list(list, sizeof(list), formats[kind]);
	return fail(ld, v->start, "'format' of a %s gate must be %s", kind_name,
		    list[0] ? list : "left out (this kind reads no report)");
}

/* A gate's keys, in the order of the enum that indexes them. */
static const char *const gate_keys[] = { "name", "command", "timeout", "kind", "format",
	"report", "radius", "fail_on", "reruns", "must_fix", "allow_paths", "forbid",
	"build_files", "max_files", "max_lines", "allow_build_files", "loopback", "expect",
	"allow_skip", "prepare", NULL };
enum { G_NAME, G_COMMAND, G_TIMEOUT, G_KIND, G_FORMAT, G_REPORT, G_RADIUS, G_FAIL_ON,
	G_RERUNS, G_MUST_FIX, G_ALLOW_PATHS, G_FORBID, G_BUILD_FILES, G_MAX_FILES,
	G_MAX_LINES, G_ALLOW_BUILD, G_LOOPBACK, G_EXPECT, G_ALLOW_SKIP, G_PREPARE };
static const char *const gate_kinds[] = { "custom", "build", "policy", "static", "test",
	"coverage", "finding-gone", "mutants", NULL };

/* One entry of 'gates' as read: its node, its values by key, its words. */
struct gate_item {
	const struct node *item;
	const struct node *v[SL_CAP_SPEC_KEYS];
	const char *format, *fail_on;
};

/* Read an entry's keys into g (defaults first); the name is required. */
static int read_gate(struct loader *ld, struct gate_item *it, sl_gate_conf *g)
{
	static const char *const expects[] = { "pass", "fix", NULL };
	static const int expect_ix[] = { SL_EXPECT_PASS, SL_EXPECT_FIX };
	static const int kind_ix[] = { SL_GATE_CUSTOM, SL_GATE_BUILD, SL_GATE_POLICY,
		SL_GATE_STATIC, SL_GATE_TEST, SL_GATE_COVERAGE, SL_GATE_FINDING_GONE,
		SL_GATE_MUTANTS };
	const struct node **v = it->v;

	g->pos.line = (uint32_t)(it->item->start.line + 1);
	g->pos.col = (uint32_t)(it->item->start.column + 1);
	g->timeout_s = 600;
	g->radius = 3;
	g->reruns = 1;
	if (map_fields(ld, it->item, "gates", gate_keys, v) ||
	    get_str(ld, v[G_NAME], "name", "gates", 1, &g->name) ||
	    get_enum(ld, v[G_KIND], "kind", "gates", gate_kinds, kind_ix, &g->kind) ||
	    get_str(ld, v[G_COMMAND], "command", "gates", 1, &g->command) ||
	    get_word(ld, v[G_FORMAT], "format", "gates", 1, &it->format) ||
	    get_str(ld, v[G_REPORT], "report", "gates", 1, &g->report) ||
	    get_word(ld, v[G_FAIL_ON], "fail_on", "gates", 1, &it->fail_on) ||
	    get_strings(ld, v[G_MUST_FIX], "must_fix", "gates", &g->must_fix) ||
	    get_strings(ld, v[G_ALLOW_PATHS], "allow_paths", "gates", &g->allow_paths) ||
	    get_strings(ld, v[G_FORBID], "forbid", "gates", &g->forbid) ||
	    get_strings(ld, v[G_BUILD_FILES], "build_files", "gates", &g->build_files) ||
	    get_bool(ld, v[G_ALLOW_BUILD], "allow_build_files", "gates",
		     &g->allow_build_files) ||
	    get_bool(ld, v[G_LOOPBACK], "loopback", "gates", &g->loopback) ||
	    get_enum(ld, v[G_EXPECT], "expect", "gates", expects, expect_ix, &g->expect) ||
	    get_bool(ld, v[G_ALLOW_SKIP], "allow_skip", "gates", &g->allow_skip) ||
	    get_bool(ld, v[G_PREPARE], "prepare", "gates", &g->prepare) ||
	    need(ld, it->item, v[G_NAME], "name", "gates"))
		return SL_EINPUT;
	return 0;
}

/*
 * Gate i's expect, allow_skip, prepare, command and loopback against its
 * kind (a fix campaign's test gates expect a fix); preparing gates come first.
 */
static int check_gate_running(struct loader *ld, const struct gate_item *it, sl_spec *spec,
			      size_t i)
{
	const struct node *const *v = it->v;
	sl_gate_conf *g = &spec->gates[i];

	if (!v[G_EXPECT] && spec->goal_fix && g->kind == SL_GATE_TEST)
		g->expect = SL_EXPECT_FIX;
	if (v[G_EXPECT] && g->kind != SL_GATE_BUILD && g->kind != SL_GATE_CUSTOM &&
	    g->kind != SL_GATE_TEST)
		return fail(ld, v[G_EXPECT]->start,
			    "'expect' belongs to build, custom and test gates");
	if (v[G_ALLOW_SKIP] && g->kind == SL_GATE_POLICY)
		return fail(ld, v[G_ALLOW_SKIP]->start,
			    "'allow_skip' belongs to gates that run a command");
	if (v[G_PREPARE] && g->kind == SL_GATE_POLICY)
		return fail(ld, v[G_PREPARE]->start,
			    "'prepare' belongs to gates that run a command");
	/* the warm base is what the leading gates leave behind */
	for (size_t j = 0; g->prepare && j < i; j++)
		if (spec->gates[j].kind != SL_GATE_POLICY && !spec->gates[j].prepare)
			return fail(ld, v[G_PREPARE]->start, "'prepare' after gate "
				    "'%s', which does not prepare: preparing gates come "
				    "first", spec->gates[j].name);
	if (g->kind != SL_GATE_POLICY && need(ld, it->item, v[G_COMMAND], "command", "gates"))
		return SL_EINPUT;
	if (g->kind == SL_GATE_POLICY && v[G_COMMAND])
		return fail(ld, v[G_COMMAND]->start, "a policy gate runs no command");
	if (g->kind == SL_GATE_POLICY && v[G_LOOPBACK])
		return fail(ld, v[G_LOOPBACK]->start,
			    "'loopback' belongs to gates that run a command");
	return 0;
}

/* Gate i's name: valid, and unlike the names of the gates before it. */
static int check_gate_name(struct loader *ld, const struct gate_item *it, const sl_spec *spec,
			   size_t i)
{
	const sl_gate_conf *g = &spec->gates[i];
	char sbuf[80];

	if (!valid_name(g->name))
		return fail(ld, it->v[G_NAME]->start,
			    "invalid gate name '%s': use only A-Z, a-z, 0-9, '.', '_' and '-'",
			    show(sbuf, sizeof(sbuf), g->name, strlen(g->name)));
	for (size_t j = 0; j < i; j++)
		if (!strcmp(spec->gates[j].name, g->name))
			return fail(ld, it->v[G_NAME]->start, "duplicate gate name '%s'", g->name);
	return 0;
}

/* The numeric keys; a testgen campaign's test gates rerun 5 times unless told. */
static int read_gate_numbers(struct loader *ld, const struct gate_item *it, sl_gate_conf *g,
			     const sl_spec *spec)
{
	const struct node *const *v = it->v;

	if (get_uint(ld, v[G_TIMEOUT], "timeout", "gates", 1, INT_MAX, &g->timeout_s) ||
	    get_uint(ld, v[G_RADIUS], "radius", "gates", 0, 10000, &g->radius) ||
	    get_uint(ld, v[G_RERUNS], "reruns", "gates", 1, 100, &g->reruns))
		return SL_EINPUT;
	if (!v[G_RERUNS] && spec->job == SL_JOB_TESTGEN && g->kind == SL_GATE_TEST)
		g->reruns = 5;      /* a generated test must not be flaky */
	if (get_uint(ld, v[G_MAX_FILES], "max_files", "gates", 1, INT_MAX, &g->max_files) ||
	    get_uint(ld, v[G_MAX_LINES], "max_lines", "gates", 1, INT_MAX, &g->max_lines))
		return SL_EINPUT;
	return 0;
}

/* format, report, fail_on and must_fix: what the gate reads and how it judges it. */
static int check_gate_report(struct loader *ld, const struct gate_item *it, sl_gate_conf *g)
{
	const struct node *const *v = it->v;

	if (it->format && gate_format(ld, v[G_FORMAT], it->format, g->kind,
				      gate_kinds[g->kind], &g->format))
		return SL_EINPUT;
	if ((g->kind == SL_GATE_STATIC || g->kind == SL_GATE_COVERAGE ||
	     g->kind == SL_GATE_FINDING_GONE) && !g->format)
		return need(ld, it->item, NULL, "format", "gates");
	if (g->kind == SL_GATE_COVERAGE && !g->report)
		return need(ld, it->item, NULL, "report", "gates");
	if (it->fail_on && !(g->fail_on = sl_fail_on_parse(it->fail_on)))
		return fail(ld, v[G_FAIL_ON]->start, "'fail_on' must be warning or error");
	if (g->report && (g->report[0] == '/' || strstr(g->report, "..")))
		return fail(ld, v[G_REPORT]->start,
			    "'report' must be a path inside the worktree, without '..'");
	if ((g->must_fix.n || v[G_RERUNS]) && g->kind != SL_GATE_TEST && g->kind != SL_GATE_CUSTOM)
		return fail(ld, it->item->start, "'must_fix' and 'reruns' belong to test gates");
	/* without a report nothing would ever read the names */
	if (v[G_MUST_FIX] && (g->kind != SL_GATE_TEST || !g->format))
		return fail(ld, v[G_MUST_FIX]->start, "'must_fix' needs a test gate with a "
			    "'format' (junit, tap, automake or ctest)");
	return 0;
}

/* The policy keys: only on policy gates, and their patterns must compile. */
static int check_gate_policy(struct loader *ld, const struct gate_item *it,
			     const sl_gate_conf *g)
{
	const struct node *const *v = it->v;
	sl_policy_opts po = SL_POLICY_OPTS_INIT;
	sl_err perr = SL_ERR_INIT;

	if (g->kind != SL_GATE_POLICY &&
	    (g->allow_paths.n || g->forbid.n || g->build_files.n || g->max_files ||
	     g->max_lines || v[G_ALLOW_BUILD]))
		return fail(ld, it->item->start, "'allow_paths', 'forbid', 'build_files', "
			    "'max_files', 'max_lines' and 'allow_build_files' belong to "
			    "policy gates");
	if (g->kind != SL_GATE_POLICY)
		return 0;
	po.forbid = g->forbid.n ? (const char *const *)g->forbid.v : NULL;
	if (sl_policy_validate(&po, &perr))
		return fail(ld, v[G_FORBID] ? v[G_FORBID]->start : it->item->start,
			    "%s", perr.msg);
	return 0;
}

/* 'gates': each entry read, then checked against its kind and the gates before it. */
static int load_gates(struct loader *ld, const struct node *seq, sl_spec *spec)
{
	if (want_type(ld, seq, N_SEQ, "gates", NULL))
		return SL_EINPUT;
	spec->gates = sl_xcalloc(seq->nkid ? seq->nkid : 1, sizeof(*spec->gates));
	for (size_t i = 0; i < seq->nkid; i++) {
		struct gate_item it = { .item = seq->kid[i] };
		sl_gate_conf *g = &spec->gates[spec->ngates];

		if (it.item->type != N_MAP)
			return fail(ld, it.item->start, "expected a mapping for an entry of 'gates'");
		spec->ngates++;
		if (read_gate(ld, &it, g) || check_gate_running(ld, &it, spec, i) ||
		    check_gate_name(ld, &it, spec, i) || read_gate_numbers(ld, &it, g, spec) ||
		    check_gate_report(ld, &it, g) || check_gate_policy(ld, &it, g))
			return SL_EINPUT;
	}
	return 0;
}

/* The {{variables}} a review template may use (review_change.c fills them). */
static const char *const review_vars[] = { "campaign", "paths", "path", "line", "targets",
	"count", "source", "model", "gates", "produced", "branch", "instructions", NULL };

static int check_template(struct loader *ld, const struct node *v, const char *key)
{
	const char *p;

	for (p = v ? strstr(v->text, "{{") : NULL; p; p = strstr(p + 2, "{{")) {
		const char *end = strstr(p + 2, "}}");
		size_t i, n = end ? (size_t)(end - p - 2) : 0;
		char sbuf[80];

		for (i = 0; end && review_vars[i]; i++)
			if (strlen(review_vars[i]) == n && !strncmp(review_vars[i], p + 2, n))
				break;
		if (!end || !review_vars[i])
			return fail(ld, v->start, "unknown variable '%s' in '%s' (known: campaign, "
				    "paths, path, line, targets, count, source, model, gates, "
				    "produced, branch, instructions)",
				    show(sbuf, sizeof(sbuf), p, end ? n + 4 : strlen(p)), key);
	}
	return 0;
}

/* "Name <email>" */
static int check_ident(struct loader *ld, const struct node *v, const char *key)
{
	const char *lt = v ? strchr(v->text, '<') : NULL;

	if (!v)
		return 0;
	if (!lt || lt == v->text || v->text[v->len - 1] != '>' || strchr(lt + 1, '<') ||
	    lt + 2 >= v->text + v->len)
		return fail(ld, v->start, "'%s' must be \"Name <email>\"", key);
	return 0;
}

static int load_review(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const keys[] = { "branch_prefix", "group", "batch_files",
		"batch_lines", "commit_message", "title", "body", "author", "committer", "labels",
		"draft", "forge", "api_url", "project", "token_env", "remote", "target_branch",
		"max_open", "max_per_hour", NULL };
	static const char *const groups[] = { "target", "file", "directory", "batch", NULL };
	static const int group_vals[] = { SL_GROUP_TARGET, SL_GROUP_FILE, SL_GROUP_DIRECTORY,
		SL_GROUP_BATCH };
	static const char *const forges[] = { "github", "gitlab", NULL };
	static const int forge_vals[] = { SL_FORGE_GITHUB, SL_FORGE_GITLAB };
	sl_spec_review *r = &spec->review;
	const struct node *v[SL_CAP_SPEC_KEYS];
	long long bf = 10, bl = 500, mo = 10, mh = 10;
	const char *why;
	char sbuf[80];

	r->pos.line = (uint32_t)map->start.line + 1;
	r->pos.col = (uint32_t)map->start.column + 1;
	if (want_type(ld, map, N_MAP, "review", NULL) ||
	    map_fields(ld, map, "review", keys, v) ||
	    get_str(ld, v[0], "branch_prefix", "review", 1, &spec->branch_prefix) ||
	    get_enum(ld, v[1], "group", "review", groups, group_vals, &r->group) ||
	    get_int(ld, v[2], "batch_files", "review", 1, 100000, &bf) ||
	    get_int(ld, v[3], "batch_lines", "review", 1, 100000000, &bl) ||
	    get_str(ld, v[4], "commit_message", "review", 1, &r->commit_message) ||
	    get_str(ld, v[5], "title", "review", 1, &r->title) ||
	    get_str(ld, v[6], "body", "review", 1, &r->body) ||
	    get_str(ld, v[7], "author", "review", 1, &r->author) ||
	    get_str(ld, v[8], "committer", "review", 1, &r->committer) ||
	    get_strings(ld, v[9], "labels", "review", &r->labels) ||
	    get_bool(ld, v[10], "draft", "review", &r->draft) ||
	    get_enum(ld, v[11], "forge", "review", forges, forge_vals, &r->forge) ||
	    get_str(ld, v[12], "api_url", "review", 1, &r->api_url) ||
	    get_str(ld, v[13], "project", "review", 1, &r->project) ||
	    get_str(ld, v[14], "token_env", "review", 1, &r->token_env) ||
	    get_str(ld, v[15], "remote", "review", 1, &r->remote) ||
	    get_str(ld, v[16], "target_branch", "review", 1, &r->target_branch) ||
	    get_int(ld, v[17], "max_open", "review", 1, 100000, &mo) ||
	    get_int(ld, v[18], "max_per_hour", "review", 1, 100000, &mh) ||
	    check_template(ld, v[4], "commit_message") || check_template(ld, v[5], "title") ||
	    check_template(ld, v[6], "body") || check_ident(ld, v[7], "author") ||
	    check_ident(ld, v[8], "committer"))
		return SL_EINPUT;
	r->batch_files = (unsigned)bf;
	r->batch_lines = (unsigned)bl;
	r->max_open = (unsigned)mo;
	r->max_per_hour = (unsigned)mh;
	if (r->forge && (need(ld, map, v[13], "project", "review") ||
			 need(ld, map, v[14], "token_env", "review")))
		return SL_EINPUT;
	if (!r->forge && (v[12] || v[13] || v[14]))
		return fail(ld, (v[12] ? v[12] : v[13] ? v[13] : v[14])->start,
			    "'review' needs 'forge' (github or gitlab) for this key");
	if (spec->branch_prefix && (why = bad_branch_prefix(spec->branch_prefix)))
		return fail(ld, v[0]->start, "invalid branch prefix '%s': %s",
			    show(sbuf, sizeof(sbuf), spec->branch_prefix,
				 strlen(spec->branch_prefix)), why);
	return 0;
}

/* fix: `findings: {report: FILE, format: F}`, the targets' source instead of the gate. */
static int load_findings(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const keys[] = { "report", "format", NULL };
	static const int format_ix[] = { SL_REPORT_GCC, SL_REPORT_GCC_JSON, SL_REPORT_SARIF,
		SL_REPORT_TAP, SL_REPORT_JUNIT, SL_REPORT_AUTOMAKE, SL_REPORT_CTEST };
	const char *formats[8];
	const struct node *v[SL_CAP_SPEC_KEYS];

	for (size_t i = 0; i < 7; i++)
		formats[i] = sl_report_format_name(format_ix[i]);
	formats[7] = NULL;
	if (want_type(ld, map, N_MAP, "findings", NULL) ||
	    map_fields(ld, map, "findings", keys, v) ||
	    get_str(ld, v[0], "report", "findings", 1, &spec->findings_report) ||
	    get_enum(ld, v[1], "format", "findings", formats, format_ix, &spec->findings_format) ||
	    need(ld, map, v[0], "report", "findings") ||
	    need(ld, map, v[1], "format", "findings"))
		return SL_EINPUT;
	return 0;
}

static int has_gate_kind(const sl_spec *spec, int kind)
{
	for (size_t i = 0; i < spec->ngates; i++)
		if (spec->gates[i].kind == kind)
			return 1;
	return 0;
}

/*
 * No `query` in `targets`: a fix campaign takes every function of its
 * language (scope.h, sl_lang_function_query); other kinds must name one.
 */
static int default_query(struct loader *ld, const struct node *targets, sl_spec *spec)
{
	const char *q = spec->job == SL_JOB_FIX ? sl_lang_function_query(spec->language) : NULL;
	char sbuf[80];

	if (q) {
		spec->query = sl_xstrdup(q);
		spec->query_default = 1;
		return 0;
	}
	if (spec->job != SL_JOB_FIX)
		return need(ld, targets, NULL, "query", "targets");
	if (!sl_lang_known(spec->language))
		return fail_at(ld, spec->language_pos.line, spec->language_pos.col,
			       "unknown language '%s' (known: %s)",
			       show(sbuf, sizeof(sbuf), spec->language, strlen(spec->language)),
			       sl_lang_names());
	return fail(ld, targets->start, "a fix campaign on %s needs a 'query' in 'targets': "
		    "the language has no functions to default to", spec->language);
}

/* The top level's keys, in the order of the enum that indexes them. */
static const char *const root_keys[] = { "name", "repository", "base", "scratch", "targets",
	"rules", "provider", "instructions", "prompt", "edit_format", "attempts",
	"gates", "review", "concurrency", "jobs", "budget", "context_tokens", "jail", "goal",
	"kind", "test_paths", "test_template", "coverage_below", "findings", "lease_ttl",
	NULL };
enum { R_NAME, R_REPOSITORY, R_BASE, R_SCRATCH, R_TARGETS, R_RULES, R_PROVIDER,
	R_INSTRUCTIONS, R_PROMPT, R_EDIT_FORMAT, R_ATTEMPTS, R_GATES, R_REVIEW,
	R_CONCURRENCY, R_JOBS, R_BUDGET, R_CONTEXT_TOKENS, R_JAIL, R_GOAL, R_KIND,
	R_TEST_PATHS, R_TEST_TEMPLATE, R_COVERAGE_BELOW, R_FINDINGS, R_LEASE_TTL };

/* A mapping at the top level, its keys into v; name, repository, base and scratch. */
static int read_root_identity(struct loader *ld, const struct node *root,
			      const struct node **v, sl_spec *spec)
{
	char sbuf[80];

	if (root->type == N_SCALAR && root->style == YAML_PLAIN_SCALAR_STYLE && !root->len)
		return fail_at(ld, 1, 1, "empty file");
	if (root->type != N_MAP)
		return fail(ld, root->start, "expected a mapping at the top level");
	if (map_fields(ld, root, NULL, root_keys, v) ||
	    get_str(ld, v[R_NAME], "name", NULL, 1, &spec->name) ||
	    get_str(ld, v[R_REPOSITORY], "repository", NULL, 1, &spec->repository) ||
	    get_str(ld, v[R_BASE], "base", NULL, 1, &spec->base) ||
	    get_str(ld, v[R_SCRATCH], "scratch", NULL, 1, &spec->scratch) ||
	    need(ld, root, v[R_NAME], "name", NULL) ||
	    need(ld, root, v[R_REPOSITORY], "repository", NULL) ||
	    need(ld, root, v[R_TARGETS], "targets", NULL))
		return SL_EINPUT;
	if (!valid_name(spec->name))
		return fail(ld, v[R_NAME]->start,
			    "invalid name '%s': use only A-Z, a-z, 0-9, '.', '_' and '-'",
			    show(sbuf, sizeof(sbuf), spec->name, strlen(spec->name)));
	/* A revision that looks like an option could reach a git command line. */
	if (spec->base && spec->base[0] == '-')
		return fail(ld, v[R_BASE]->start, "'base' must not start with '-'");
	return 0;
}

/* The sections and keys of each stage: targets to jail, in the order they are checked. */
static int read_root_stages(struct loader *ld, const struct node *const *v, sl_spec *spec)
{
	static const char *const goals[] = { "keep", "fix", NULL };
	static const int goal_ix[] = { 0, 1 };
	static const char *const formats[] = { "udiff", "search-replace", "node", NULL };
	static const int format_ix[] = { SL_FORMAT_UDIFF, SL_FORMAT_SEARCH_REPLACE, SL_FORMAT_NODE };
	static const char *const jobs[] = { "migration", "fix", "testgen", NULL };
	static const int job_ix[] = { SL_JOB_MIGRATION, SL_JOB_FIX, SL_JOB_TESTGEN };

	if (want_type(ld, v[R_TARGETS], N_MAP, "targets", NULL) ||
	    load_targets(ld, v[R_TARGETS], spec) ||
	    (v[R_RULES] && load_rules(ld, v[R_RULES], spec)) ||
	    (v[R_PROVIDER] && load_provider(ld, v[R_PROVIDER], spec)) ||
	    get_str(ld, v[R_INSTRUCTIONS], "instructions", NULL, 0, &spec->instructions) ||
	    get_str(ld, v[R_PROMPT], "prompt", NULL, 0, &spec->prompt) ||
	    get_enum(ld, v[R_EDIT_FORMAT], "edit_format", NULL, formats, format_ix,
		     &spec->edit_format))
		return SL_EINPUT;
	if (v[R_PROMPT])
		spec->prompt_pos = text_pos(ld, v[R_PROMPT]);
	if (get_uint(ld, v[R_ATTEMPTS], "attempts", NULL, 1, 100, &spec->attempts) ||
	    get_enum(ld, v[R_GOAL], "goal", NULL, goals, goal_ix, &spec->goal_fix) ||
	    get_enum(ld, v[R_KIND], "kind", NULL, jobs, job_ix, &spec->job) ||
	    get_strings(ld, v[R_TEST_PATHS], "test_paths", NULL, &spec->test_paths) ||
	    get_str(ld, v[R_TEST_TEMPLATE], "test_template", NULL, 0, &spec->test_template) ||
	    (v[R_GATES] && load_gates(ld, v[R_GATES], spec)) ||
	    (v[R_REVIEW] && load_review(ld, v[R_REVIEW], spec)) ||
	    (v[R_BUDGET] && load_budget(ld, v[R_BUDGET], spec)) ||
	    (v[R_JAIL] && load_jail(ld, v[R_JAIL], spec)))
		return SL_EINPUT;
	return 0;
}

/* concurrency, jobs, lease_ttl and context_tokens. */
static int read_root_numbers(struct loader *ld, const struct node *const *v, sl_spec *spec)
{
	if (get_uint(ld, v[R_CONCURRENCY], "concurrency", NULL, 1, 256, &spec->concurrency) ||
	    get_uint(ld, v[R_JOBS], "jobs", NULL, 1, 256, &spec->jobs) ||
	    get_uint(ld, v[R_LEASE_TTL], "lease_ttl", NULL, 1, SL_LEASE_TTL_MAX,
		     &spec->lease_ttl_s) ||
	    get_uint(ld, v[R_CONTEXT_TOKENS], "context_tokens", NULL, 0, 1000000,
		     &spec->context_tokens))
		return SL_EINPUT;
	return 0;
}

/* coverage_below: testgen only, with a coverage gate to read it from. */
static int read_coverage_below(struct loader *ld, const struct node *v, sl_spec *spec)
{
	if (!v)
		return 0;
	if (spec->job != SL_JOB_TESTGEN)
		return fail(ld, v->start, "'coverage_below' belongs to testgen campaigns");
	if (get_uint(ld, v, "coverage_below", NULL, 1, 100, &spec->coverage_below))
		return SL_EINPUT;
	if (!has_gate_kind(spec, SL_GATE_COVERAGE)) {
		spec->coverage_below = 0;
		return fail(ld, v->start, "'coverage_below' needs a gate "
			    "of kind coverage: its report on the base says what is covered");
	}
	return 0;
}

/* The keys that belong to one kind of campaign, and what each kind needs. */
static int check_root_job(struct loader *ld, const struct node *root,
			  const struct node *const *v, sl_spec *spec)
{
	if (read_coverage_below(ld, v[R_COVERAGE_BELOW], spec))
		return SL_EINPUT;
	if (v[R_FINDINGS] && (spec->job != SL_JOB_FIX || load_findings(ld, v[R_FINDINGS], spec)))
		return spec->job != SL_JOB_FIX ? fail(ld, v[R_FINDINGS]->start,
						      "'findings' belongs to fix campaigns") : SL_EINPUT;
	if (spec->job == SL_JOB_TESTGEN && !spec->test_paths.n)
		return need(ld, root, NULL, "test_paths", NULL);
	if (spec->job != SL_JOB_TESTGEN && (v[R_TEST_PATHS] || v[R_TEST_TEMPLATE]))
		return fail(ld, (v[R_TEST_PATHS] ? v[R_TEST_PATHS] : v[R_TEST_TEMPLATE])->start,
			    "'test_paths' and 'test_template' belong to testgen campaigns");
	if (spec->job == SL_JOB_FIX && !has_gate_kind(spec, SL_GATE_FINDING_GONE))
		return fail(ld, v[R_KIND]->start, "a fix campaign needs a gate of kind "
			    "finding-gone: its findings on the base are the targets");
	return 0;
}

/* The branch prefix made from the name, when 'review' set none; it must be a valid ref. */
static int default_branch_prefix(struct loader *ld, const struct node *name, sl_spec *spec)
{
	sl_buf b = SL_BUF_INIT;
	const char *why;
	char sbuf[80];

	if (spec->branch_prefix)
		return 0;
	sl_buf_addf(&b, "sluice/%s", spec->name);
	spec->branch_prefix = sl_buf_detach(&b, NULL);
	if ((why = bad_branch_prefix(spec->branch_prefix)))
		return fail(ld, name->start,
			    "invalid branch prefix '%s' made from 'name': %s "
			    "(set 'branch_prefix' in 'review')",
			    show(sbuf, sizeof(sbuf), spec->branch_prefix,
				 strlen(spec->branch_prefix)), why);
	return 0;
}

/* What the file left out: query, edit format, branch prefix and base. */
static int root_defaults(struct loader *ld, const struct node *root,
			 const struct node *const *v, sl_spec *spec)
{
	if (!spec->query && default_query(ld, v[R_TARGETS], spec))
		return SL_EINPUT;
	if (!spec->edit_format)
		spec->edit_format = spec->unit && strcmp(spec->unit, "capture") &&
			strcmp(spec->unit, "file") ? SL_FORMAT_NODE : SL_FORMAT_UDIFF;
	if (spec->provider == SL_PROVIDER_RULES && !spec->nrules)
		return fail(ld, v[R_PROVIDER] ? v[R_PROVIDER]->start : root->start,
			    "the 'rules' provider needs at least one entry in 'rules'");
	if (default_branch_prefix(ld, v[R_NAME], spec))
		return SL_EINPUT;
	if (!spec->base)
		spec->base = sl_xstrdup("HEAD");
	return 0;
}

/* The whole file: read in the order of its checks, then the defaults. */
static int load_root(struct loader *ld, const struct node *root, sl_spec *spec)
{
	const struct node *v[SL_CAP_SPEC_KEYS];

	if (read_root_identity(ld, root, v, spec) || read_root_stages(ld, v, spec) ||
	    read_root_numbers(ld, v, spec) || check_root_job(ld, root, v, spec) ||
	    root_defaults(ld, root, v, spec))
		return SL_EINPUT;
	return 0;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return sl_xstrdup(".");
	while (slash > path && slash[-1] == '/')
		slash--;
	if (slash == path)
		return sl_xstrdup("/");
	return sl_xstrndup(path, (size_t)(slash - path));
}

int sl_spec_load(sl_spec **out, const char *path, sl_err *err)
{
	sl_buf text = SL_BUF_INIT;
	struct loader ld;
	struct node *root = NULL;
	sl_spec *spec = NULL;
	struct stat st;
	int ret;

	*out = NULL;
	ld.path = path;
	ld.err = err;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		ret = sl_err_set(err, SL_EINPUT, "'%s' is a directory, not a campaign file", path);
		goto done;
	}
	if ((ret = sl_read_file(&text, path, SL_CAP_SPEC_BYTES, err)))
		goto done;
	if (text.truncated) {
		ret = fail_at(&ld, 1, 1, "file is larger than 1 MiB");
		goto done;
	}
	ld.src = text.buf;
	ld.srclen = text.len;
	if ((ret = parse_tree(&ld, &root)))
		goto done;

	spec = sl_xcalloc(1, sizeof(*spec));
	spec->path = sl_xstrdup(path);
	spec->dir = dir_of(path);
	spec->provider = SL_PROVIDER_RULES;
	spec->temperature = -1;
	spec->provider_timeout_s = 300;
	spec->attempts = 3;
	spec->review.batch_files = 10;
	spec->review.batch_lines = 500;
	spec->review.max_open = 10;
	spec->review.max_per_hour = 10;
	spec->max_retries = -1;
	spec->price_in = spec->price_out = -1;
	spec->concurrency = 4;
	spec->context_tokens = 2000;
	if ((ret = load_root(&ld, root, spec)))
		goto done;
	*out = spec;
	spec = NULL;
done:
	sl_spec_free(spec);
	node_free(root);
	sl_buf_release(&text);
	return ret;
}

void sl_spec_free(sl_spec *spec)
{
	size_t i;

	if (!spec)
		return;
	for (i = 0; i < spec->nrules; i++) {
		free(spec->rules[i].capture);
		free(spec->rules[i].template_text);
	}
	free(spec->rules);
	for (i = 0; i < spec->ngates; i++) {
		free(spec->gates[i].name);
		free(spec->gates[i].command);
		free(spec->gates[i].report);
		sl_strvec_release(&spec->gates[i].must_fix);
		sl_strvec_release(&spec->gates[i].allow_paths);
		sl_strvec_release(&spec->gates[i].forbid);
		sl_strvec_release(&spec->gates[i].build_files);
	}
	free(spec->gates);
	sl_strvec_release(&spec->paths);
	sl_strvec_release(&spec->override_globs);
	sl_strvec_release(&spec->override_langs);
	free(spec->override_pos);
	free(spec->path);
	free(spec->dir);
	free(spec->name);
	free(spec->repository);
	free(spec->base);
	free(spec->scratch);
	free(spec->language);
	free(spec->query);
	free(spec->capture);
	free(spec->unit);
	free(spec->base_url);
	free(spec->model);
	free(spec->api_key_env);
	free(spec->command);
	free(spec->anthropic_version);
	free(spec->replay);
	free(spec->response_format);
	sl_strvec_release(&spec->headers);
	free(spec->instructions);
	free(spec->test_template);
	free(spec->findings_report);
	sl_strvec_release(&spec->test_paths);
	free(spec->prompt);
	free(spec->branch_prefix);
	free(spec->review.commit_message);
	free(spec->review.title);
	free(spec->review.body);
	free(spec->review.author);
	free(spec->review.committer);
	sl_strvec_release(&spec->review.labels);
	free(spec->review.api_url);
	free(spec->review.project);
	free(spec->review.token_env);
	free(spec->review.remote);
	free(spec->review.target_branch);
	free(spec);
}

sl_pos sl_spec_query_pos(const sl_spec *spec, uint32_t offset)
{
	sl_pos pos = { 0, 0 };
	size_t len, i, nl = 0, last = 0;

	if (!spec || !spec->query || !spec->query_pos.line)
		return pos;
	pos = spec->query_pos;
	len = strlen(spec->query);
	if (offset > len)
		offset = (uint32_t)len;
	if (!spec->query_block) {
		pos.col += offset;
		return pos;
	}
	for (i = 0; i < offset; i++) {
		if (spec->query[i] == '\n') {
			nl++;
			last = i + 1;
		}
	}
	pos.line += (uint32_t)nl;
	pos.col = (uint32_t)(nl ? spec->query_pos.col + (offset - last) : spec->query_pos.col + offset);
	return pos;
}
