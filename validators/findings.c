/*
 * findings.c - compiler diagnostics and SARIF results to findings, and the
 * "new and near a change" comparison the static gate judges by.
 *
 * Reads text a gate produced (a command's output, a SARIF file read with
 * sl_read_beneath); everything in it is untrusted, so each line is looked
 * at only up to 64 KiB, messages and notes are capped, and a set holds at
 * most 10000 findings.  SARIF is parsed with jansson, whose parser limits
 * nesting depth; any field of the wrong type is treated as absent.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "validators/findings.h"
#include "common/util.h"
#include "common/caps.h"

void sl_findings_init(sl_findings *f)
{
	memset(f, 0, sizeof(*f));
}

void sl_findings_release(sl_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].file);
		free(f->v[i].rule);
		free(f->v[i].message);
		free(f->v[i].notes);
	}
	free(f->v);
	sl_findings_init(f);
}

const char *sl_finding_level_name(enum sl_finding_level level)
{
	switch (level) {
	case SL_LEVEL_NOTE: return "note";
	case SL_LEVEL_WARNING: return "warning";
	case SL_LEVEL_ERROR: return "error";
	}
	return "unknown";
}

static char *capped_dup(const char *s, size_t len, size_t cap)
{
	sl_buf b = SL_BUF_INIT;

	if (len > cap) {
		sl_buf_add(&b, s, cap);
		sl_buf_adds(&b, "...");
	} else {
		sl_buf_add(&b, s, len);
	}
	return sl_buf_detach(&b, NULL);
}

/* Takes ownership of file, rule and message; returns NULL (and frees) past the cap. */
static sl_finding *add(sl_findings *f, char *file, unsigned line, unsigned col, int level,
		       char *rule, char *message)
{
	sl_finding *x;

	if (f->n >= SL_CAP_FINDINGS) {
		f->dropped++;
		free(file);
		free(rule);
		free(message);
		return NULL;
	}
	SL_ALLOC_GROW(f->v, f->n + 1, f->alloc);
	x = &f->v[f->n++];
	x->file = file;
	x->line = line;
	x->col = col;
	x->level = level;
	x->rule = rule ? rule : sl_xstrdup("");
	x->message = message;
	x->notes = NULL;
	return x;
}

void sl_findings_add_copy(sl_findings *f, const sl_finding *src)
{
	sl_finding *x = add(f, sl_xstrdup(src->file), src->line, src->col, src->level,
			    sl_xstrdup(src->rule), sl_xstrdup(src->message));

	if (x)
		x->notes = sl_xstrdup_or_null(src->notes);
}

void sl_findings_filter_level(sl_findings *f, enum sl_finding_level min_level)
{
	size_t j = 0;

	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].level >= min_level) {
			f->v[j++] = f->v[i];
			continue;
		}
		free(f->v[i].file);
		free(f->v[i].rule);
		free(f->v[i].message);
		free(f->v[i].notes);
	}
	f->n = j;
}

static int parse_num(const char **s, const char *end, unsigned *out)
{
	unsigned long v = 0;
	const char *p = *s;

	if (p >= end || !isdigit((unsigned char)*p))
		return -1;
	while (p < end && isdigit((unsigned char)*p)) {
		v = v * 10 + (unsigned long)(*p++ - '0');
		if (v > 0x7fffffffu)
			return -1;
	}
	*s = p;
	*out = (unsigned)v;
	return 0;
}

static const struct { const char *word; int level; int is_note; } levels[] = {
	{ "fatal error: ", SL_LEVEL_ERROR, 0 },
	{ "error: ", SL_LEVEL_ERROR, 0 },
	{ "warning: ", SL_LEVEL_WARNING, 0 },
	{ "note: ", SL_LEVEL_NOTE, 1 },
	{ "remark: ", SL_LEVEL_NOTE, 0 },
};

/*
 * One diagnostic line: "FILE:LINE[:COL]: LEVEL: MSG".  The file is what
 * precedes the first ':' (so a file name holding ':' is not understood,
 * but nothing else on the line can pose as the file).
 */
static int parse_diag(const char *s, const char *end, const char **file_end, unsigned *line,
		      unsigned *col, int *level, int *is_note, const char **msg)
{
	const char *c = memchr(s, ':', (size_t)(end - s));
	const char *p;

	if (s >= end || *s == ' ' || *s == '\t' || !c || c == s)
		return -1;
	p = c + 1;
	if (parse_num(&p, end, line) || p >= end || *p != ':')
		return -1;
	p++;
	*col = 0;
	if (p < end && isdigit((unsigned char)*p)) {
		if (parse_num(&p, end, col) || p >= end || *p != ':')
			return -1;
		p++;
	}
	if (p >= end || *p != ' ')
		return -1;
	p++;
	for (size_t k = 0; k < sizeof(levels) / sizeof(levels[0]); k++) {
		size_t n = strlen(levels[k].word);

		if ((size_t)(end - p) >= n && !memcmp(p, levels[k].word, n)) {
			*file_end = c;
			*level = levels[k].level;
			*is_note = levels[k].is_note;
			*msg = p + n;
			return 0;
		}
	}
	return -1;
}

/* Split "message [-Wflag]" into message and rule ("-Werror=x" -> "-Wx"). */
static void split_rule(const char *msg, const char *end, const char **msg_end, char **rule)
{
	const char *open;

	*msg_end = end;
	*rule = NULL;
	while (*msg_end > msg && (*msg_end)[-1] == ' ')
		(*msg_end)--;
	if (*msg_end - msg < 3 || (*msg_end)[-1] != ']')
		return;
	open = *msg_end - 1;
	while (open > msg && *open != '[')
		open--;
	if (*open != '[' || open == msg || open[-1] != ' ')
		return;
	if (!strncmp(open + 1, "-Werror=", 8)) {
		sl_buf b = SL_BUF_INIT;

		sl_buf_adds(&b, "-W");
		sl_buf_add(&b, open + 9, (size_t)(*msg_end - 1 - (open + 9)));
		*rule = sl_buf_detach(&b, NULL);
	} else if (!strncmp(open + 1, "enabled by default]", 19)) {
		*rule = sl_xstrdup("");
	} else {
		*rule = sl_xstrndup(open + 1, (size_t)(*msg_end - 1 - (open + 1)));
	}
	*msg_end = open - 1;
}

void sl_findings_parse_gcc(sl_findings *out, const char *text, size_t len)
{
	const char *p = text, *stop = text + len;
	sl_finding *last = NULL;

	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *end = eol ? eol : stop;
		const char *file_end, *msg, *msg_end;
		unsigned line, col;
		int level, is_note;
		char *file, *rule;

		if (end > p && end[-1] == '\r')
			end--;
		if ((size_t)(end - p) > SL_CAP_FINDING_LINE)
			end = p + SL_CAP_FINDING_LINE;
		if (parse_diag(p, end, &file_end, &line, &col, &level, &is_note, &msg)) {
			p = next;
			continue;
		}
		split_rule(msg, end, &msg_end, &rule);
		if (is_note) {
			if (last) {
				sl_buf notes = SL_BUF_INIT;
				char *fname = sl_xstrndup(p, (size_t)(file_end - p));
				char *norm = sl_report_path(fname);

				sl_buf_adds(&notes, last->notes ? last->notes : "");
				if (notes.len < SL_CAP_FINDING_NOTES)
					sl_buf_addf(&notes, "%s:%u: note: %.*s\n", norm, line,
						    (int)(msg_end - msg > 300 ? 300 : msg_end - msg), msg);
				free(last->notes);
				last->notes = sl_buf_detach(&notes, NULL);
				free(fname);
				free(norm);
			}
			free(rule);
			p = next;
			continue;
		}
		{
			char *raw = sl_xstrndup(p, (size_t)(file_end - p));

			file = sl_report_path(raw);
			free(raw);
		}
		last = add(out, file, line, col, level, rule,
			   capped_dup(msg, (size_t)(msg_end - msg), SL_CAP_FINDING_MESSAGE));
		p = next;
	}
}

/* --- SARIF --- */

static const char *jstr(json_t *obj, const char *key)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *jpath(json_t *v, const char *a, const char *b)
{
	if (json_is_object(v))
		v = json_object_get(v, a);
	else
		return NULL;
	if (b)
		v = json_is_object(v) ? json_object_get(v, b) : NULL;
	return v;
}

static unsigned juint(json_t *v)
{
	json_int_t i = json_is_integer(v) ? json_integer_value(v) : 0;

	return i > 0 && i <= 0x7fffffff ? (unsigned)i : 0;
}

/*
 * The base a uriBaseId names (runs[].originalUriBaseIds), itself resolved
 * against its own uriBaseId, up to 8 levels; appended to b with a final '/'.
 * An id the run does not define adds nothing (the uri is then taken as
 * relative to the repository, as %SRCROOT% is).
 */
static void sarif_base(json_t *run, const char *base_id, sl_buf *b, int depth)
{
	json_t *ent = jpath(jpath(run, "originalUriBaseIds", NULL), base_id, NULL);
	const char *root = jstr(ent, "uri"), *parent = jstr(ent, "uriBaseId");

	if (!root)
		return;
	if (parent && depth < 8 && !strstr(root, "://") && root[0] != '/')
		sarif_base(run, parent, b, depth + 1);
	sl_buf_adds(b, root);
	if (b->len && b->buf[b->len - 1] != '/')
		sl_buf_addch(b, '/');
}

static char *sarif_path(json_t *run, json_t *art)
{
	const char *uri = jstr(art, "uri");
	const char *base_id = jstr(art, "uriBaseId");
	json_t *idx = jpath(art, "index", NULL);
	sl_buf b = SL_BUF_INIT, dec = SL_BUF_INIT;
	char *ret;

	if (!uri && json_is_integer(idx)) {
		json_t *arts = jpath(run, "artifacts", NULL);
		json_t *a = json_is_array(arts) ? json_array_get(arts, (size_t)json_integer_value(idx)) : NULL;

		uri = jstr(jpath(a, "location", NULL), "uri");
		if (!base_id)
			base_id = jstr(jpath(a, "location", NULL), "uriBaseId");
	}
	if (!uri)
		return sl_xstrdup("");
	if (base_id && !strstr(uri, "://") && uri[0] != '/')
		sarif_base(run, base_id, &b, 0);
	sl_buf_adds(&b, uri);
	/* a SARIF uri is a URI reference: percent-encoded even when relative */
	if (strncmp(b.buf, "file://", 7))
		sl_percent_decode(&dec, b.buf);
	ret = sl_report_path(dec.len ? dec.buf : b.buf);
	sl_buf_release(&b);
	sl_buf_release(&dec);
	return ret;
}

static int result_level(json_t *run, json_t *res)
{
	const char *lv = jstr(res, "level");
	json_t *rules, *rule;

	if (!lv) {
		rules = jpath(jpath(run, "tool", "driver"), "rules", NULL);
		rule = json_is_array(rules) ? json_array_get(rules, juint(jpath(res, "ruleIndex", NULL))) : NULL;
		lv = jstr(jpath(rule, "defaultConfiguration", NULL), "level");
	}
	if (!lv)
		return SL_LEVEL_WARNING;
	if (!strcmp(lv, "error"))
		return SL_LEVEL_ERROR;
	if (!strcmp(lv, "warning"))
		return SL_LEVEL_WARNING;
	return SL_LEVEL_NOTE;
}

/* One "FILE:LINE: note: TEXT" line for a SARIF location with a message. */
static void sarif_note(sl_buf *b, json_t *run, json_t *loc, size_t *n)
{
	json_t *phys = jpath(loc, "physicalLocation", NULL);
	const char *text = jstr(jpath(loc, "message", NULL), "text");
	char *path;

	if (!text || !phys || ++*n > 64)
		return;
	path = sarif_path(run, jpath(phys, "artifactLocation", NULL));
	sl_buf_addf(b, "%s%s:%u: note: ", b->len ? "\n" : "", path,
		    juint(jpath(jpath(phys, "region", NULL), "startLine", NULL)));
	sl_buf_add(b, text, strnlen(text, SL_CAP_FINDING_MESSAGE));
	free(path);
}

/*
 * A result's related locations, then the steps of its first code flow (the
 * analyzer's path to the defect), as notes; NULL when it has none.
 */
static char *sarif_notes(json_t *run, json_t *res)
{
	json_t *rel = jpath(res, "relatedLocations", NULL), *steps, *v;
	sl_buf b = SL_BUF_INIT;
	size_t i, n = 0;

	json_array_foreach(rel, i, v)
		sarif_note(&b, run, v, &n);
	steps = jpath(json_array_get(jpath(json_array_get(jpath(res, "codeFlows", NULL), 0),
					   "threadFlows", NULL), 0), "locations", NULL);
	json_array_foreach(steps, i, v)
		sarif_note(&b, run, jpath(v, "location", NULL), &n);
	return b.len ? sl_buf_detach(&b, NULL) : (sl_buf_release(&b), NULL);
}

static void sarif_result(sl_findings *out, json_t *run, json_t *res)
{
	sl_finding *x;
	const char *kind = jstr(res, "kind");
	const char *rule = jstr(res, "ruleId");
	const char *msg = jstr(jpath(res, "message", NULL), "text");
	json_t *locs = jpath(res, "locations", NULL);
	json_t *phys = json_is_array(locs) ? jpath(json_array_get(locs, 0), "physicalLocation", NULL) : NULL;
	json_t *region = jpath(phys, "region", NULL);
	json_t *supp = jpath(res, "suppressions", NULL);

	if (kind && (!strcmp(kind, "pass") || !strcmp(kind, "notApplicable")))
		return;
	if (json_is_array(supp) && json_array_size(supp) > 0)
		return;
	if (!rule)
		rule = jstr(jpath(res, "rule", NULL), "id");
	if (!msg)
		msg = jstr(jpath(res, "message", NULL), "markdown");
	if (!msg)
		msg = "";
	x = add(out, sarif_path(run, jpath(phys, "artifactLocation", NULL)),
		juint(jpath(region, "startLine", NULL)), juint(jpath(region, "startColumn", NULL)),
		result_level(run, res), sl_xstrdup(rule ? rule : ""),
		capped_dup(msg, strlen(msg), SL_CAP_FINDING_MESSAGE));
	if (x)
		x->notes = sarif_notes(run, res);
}

int sl_findings_parse_sarif(sl_findings *out, const char *text, size_t len, sl_err *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr);
	json_t *runs;
	int ret = 0;

	if (!root) {
		ret = sl_err_set(err, SL_EINPUT, "sarif: %s at line %d", jerr.text, jerr.line);
		goto done;
	}
	runs = jpath(root, "runs", NULL);
	if (!json_is_array(runs)) {
		ret = sl_err_set(err, SL_EINPUT, "sarif: no 'runs' array");
		goto done;
	}
	for (size_t i = 0; i < json_array_size(runs); i++) {
		json_t *run = json_array_get(runs, i);
		json_t *results = jpath(run, "results", NULL);

		for (size_t j = 0; json_is_array(results) && j < json_array_size(results); j++)
			sarif_result(out, run, json_array_get(results, j));
	}
done:
	json_decref(root);
	return ret;
}

/* --- comparison --- */

static void add_norm_message(sl_buf *b, const char *m)
{
	int space = 0;

	while (*m) {
		unsigned char c = (unsigned char)*m;

		if (c == 0xe2 && (unsigned char)m[1] == 0x80 &&
		    ((unsigned char)m[2] == 0x98 || (unsigned char)m[2] == 0x99 ||
		     (unsigned char)m[2] == 0x9c || (unsigned char)m[2] == 0x9d)) {
			if (space && b->len)
				sl_buf_addch(b, ' ');
			sl_buf_addch(b, '\'');
			m += 3;
			space = 0;
			continue;
		}
		if (isspace(c)) {
			space = 1;
			m++;
			continue;
		}
		if (space && b->len)
			sl_buf_addch(b, ' ');
		space = 0;
		if (isdigit(c) && b->len &&
		    (b->buf[b->len - 1] == ':' ||
		     (b->len >= 5 && !memcmp(b->buf + b->len - 5, "line ", 5)))) {
			while (isdigit((unsigned char)*m))
				m++;
			sl_buf_addch(b, '#');
			continue;
		}
		sl_buf_addch(b, *m++);
	}
}

typedef struct keyed {
	char *key;
	size_t idx;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static keyed *make_keys(const sl_findings *f, const sl_changed *changed)
{
	keyed *k = sl_xcalloc(f->n ? f->n : 1, sizeof(*k));

	for (size_t i = 0; i < f->n; i++) {
		const sl_finding *x = &f->v[i];
		const sl_changed_file *cf = changed ? sl_changed_find(changed, x->file) : NULL;
		sl_buf b = SL_BUF_INIT;

		sl_buf_adds(&b, cf ? cf->path : x->file);
		sl_buf_addch(&b, '\x1f');
		sl_buf_adds(&b, x->rule);
		sl_buf_addch(&b, '\x1f');
		add_norm_message(&b, x->message);
		k[i].key = sl_buf_detach(&b, NULL);
		k[i].idx = i;
	}
	qsort(k, f->n, sizeof(*k), cmp_keyed);
	return k;
}

static void free_keys(keyed *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i].key);
	free(k);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

size_t sl_findings_new_near(const sl_findings *base, const sl_findings *cand,
			    const sl_changed *changed, unsigned radius, sl_findings *out)
{
	keyed *bk = make_keys(base, changed), *ck = make_keys(cand, changed);
	size_t *take = sl_xcalloc(cand->n ? cand->n : 1, sizeof(*take));
	size_t ntake = 0, bi = 0;

	for (size_t i = 0; i < cand->n;) {
		size_t j = i, c, b = 0, need;

		while (j < cand->n && !strcmp(ck[j].key, ck[i].key))
			j++;
		c = j - i;
		while (bi < base->n && strcmp(bk[bi].key, ck[i].key) < 0)
			bi++;
		while (bi + b < base->n && !strcmp(bk[bi + b].key, ck[i].key))
			b++;
		need = c > b ? c - b : 0;
		for (size_t k = i; k < j && need; k++) {
			const sl_finding *x = &cand->v[ck[k].idx];

			if (x->line && sl_changed_near(changed, x->file, x->line, radius)) {
				take[ntake++] = ck[k].idx;
				need--;
			}
		}
		i = j;
	}
	qsort(take, ntake, sizeof(*take), cmp_size);
	for (size_t i = 0; i < ntake; i++)
		sl_findings_add_copy(out, &cand->v[take[i]]);
	free(take);
	free_keys(bk, base->n);
	free_keys(ck, cand->n);
	return ntake;
}

void sl_findings_text(const sl_findings *f, sl_buf *out, size_t cap)
{
	size_t start = out->len;

	for (size_t i = 0; i < f->n; i++) {
		const sl_finding *x = &f->v[i];
		size_t before = out->len;

		sl_buf_addf(out, "%s:%u:", x->file, x->line);
		if (x->col)
			sl_buf_addf(out, "%u:", x->col);
		sl_buf_addf(out, " %s: %s", sl_finding_level_name(x->level), x->message);
		if (*x->rule)
			sl_buf_addf(out, " [%s]", x->rule);
		sl_buf_addch(out, '\n');
		for (const char *n = x->notes; n && *n;) {
			const char *nl = strchr(n, '\n');
			size_t l = nl ? (size_t)(nl - n) : strlen(n);

			sl_buf_addf(out, "  %.*s\n", (int)l, n);
			n += l + (nl != NULL);
		}
		if (cap && out->len - start > cap) {
			sl_buf_setlen(out, before);
			sl_buf_addf(out, "... %zu more finding%s\n", f->n - i,
				    f->n - i == 1 ? "" : "s");
			break;
		}
	}
	if (f->dropped)
		sl_buf_addf(out, "... %zu findings over the limit not parsed\n", f->dropped);
}
