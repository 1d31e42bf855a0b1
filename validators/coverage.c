/*
 * coverage.c - lcov, gcov text and gcov JSON to per-file line counts.
 *
 * Lines are appended as read and put in order once per parse (sorted,
 * duplicates merged by adding counts), so a report may list lines in any
 * order and a file in several records.  Counts saturate instead of
 * wrapping; a line number or count that does not parse skips the line.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "validators/coverage.h"
#include "validators/diff_lines.h"
#include "common/util.h"
#include "common/caps.h"

void sl_coverage_init(sl_coverage *c)
{
	memset(c, 0, sizeof(*c));
}

void sl_coverage_release(sl_coverage *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->files[i].path);
		free(c->files[i].v);
	}
	free(c->files);
	sl_coverage_init(c);
}

static sl_cov_file *find_file(const sl_coverage *c, const char *norm)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->files[i].path, norm))
			return &c->files[i];
	return NULL;
}

const sl_cov_file *sl_coverage_file(const sl_coverage *c, const char *path)
{
	char *norm = sl_report_path(path);
	const sl_cov_file *f = find_file(c, norm);

	free(norm);
	return f;
}

/* The file for a raw path, created if new; NULL past the cap. */
static sl_cov_file *get_file(sl_coverage *c, const char *raw, size_t len)
{
	char *tmp = sl_xstrndup(raw, len), *norm = sl_report_path(tmp);
	sl_cov_file *f = find_file(c, norm);

	free(tmp);
	if (f || c->n >= SL_CAP_COVERAGE_FILES) {
		if (!f)
			c->truncated = 1;
		free(norm);
		return f;
	}
	SL_ALLOC_GROW(c->files, c->n + 1, c->alloc);
	f = &c->files[c->n++];
	memset(f, 0, sizeof(*f));
	f->path = norm;
	return f;
}

static void add_line(sl_coverage *c, sl_cov_file *f, unsigned line, uint64_t count)
{
	if (c->lines >= SL_CAP_COVERAGE_LINES) {
		c->truncated = 1;
		return;
	}
	SL_ALLOC_GROW(f->v, f->n + 1, f->alloc);
	f->v[f->n].line = line;
	f->v[f->n].count = count;
	f->n++;
	c->lines++;
}

static int cmp_line(const void *a, const void *b)
{
	const sl_cov_line *x = a, *y = b;

	return (x->line > y->line) - (x->line < y->line);
}

static void normalise(sl_coverage *c)
{
	c->lines = 0;
	for (size_t i = 0; i < c->n; i++) {
		sl_cov_file *f = &c->files[i];
		size_t j = 0;

		if (f->n > 1)
			qsort(f->v, f->n, sizeof(*f->v), cmp_line);
		for (size_t k = 0; k < f->n; k++) {
			if (j && f->v[j - 1].line == f->v[k].line) {
				uint64_t s = f->v[j - 1].count + f->v[k].count;

				f->v[j - 1].count = s < f->v[k].count ? UINT64_MAX : s;
				continue;
			}
			f->v[j++] = f->v[k];
		}
		f->n = j;
		c->lines += j;
	}
}

/* Decimal number at *s (leading spaces skipped); saturates at max. */
static int num(const char **s, const char *end, uint64_t max, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	while (p < end && *p == ' ')
		p++;
	if (p >= end || !isdigit((unsigned char)*p))
		return -1;
	while (p < end && isdigit((unsigned char)*p)) {
		unsigned d = (unsigned)(*p++ - '0');

		v = v > (max - d) / 10 ? max : v * 10 + d;
	}
	*s = p;
	*out = v;
	return 0;
}

int sl_coverage_parse_lcov(sl_coverage *out, const char *text, size_t len, sl_err *err)
{
	const char *p = text, *stop = text + len;
	sl_cov_file *f = NULL;
	int records = 0;

	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *end = eol ? eol : stop;

		if (end > p && end[-1] == '\r')
			end--;
		if (end - p > 3 && !memcmp(p, "SF:", 3)) {
			f = get_file(out, p + 3, (size_t)(end - p - 3));
			records++;
		} else if (end - p > 3 && !memcmp(p, "DA:", 3) && f) {
			const char *q = p + 3;
			uint64_t line, count = 0;

			if (!num(&q, end, SL_CAP_LINE_NUMBER, &line) && line && q < end && *q == ',') {
				q++;
				if (q < end && *q == '-')   /* negative counts from broken tools */
					count = 0;
				else if (num(&q, end, UINT64_MAX, &count))
					goto next_line;
				add_line(out, f, (unsigned)line, count);
			}
		} else if (end - p == 13 && !memcmp(p, "end_of_record", 13)) {
			f = NULL;
		}
next_line:
		p = next;
	}
	normalise(out);
	if (!records)
		return sl_err_set(err, SL_EINPUT, "lcov: no SF: record");
	return 0;
}

int sl_coverage_parse_gcov(sl_coverage *out, const char *text, size_t len,
			   const char *path, sl_err *err)
{
	const char *p = text, *stop = text + len;
	sl_cov_file *f = path ? get_file(out, path, strlen(path)) : NULL;
	int parsed = 0;

	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *end = eol ? eol : stop;
		const char *c1 = memchr(p, ':', (size_t)(end - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		const char *q, *cs = p;
		uint64_t line, count;

		p = next;
		if (!c2)
			continue;
		while (cs < c1 && *cs == ' ')
			cs++;
		q = c1 + 1;
		if (num(&q, c2, SL_CAP_LINE_NUMBER, &line))
			continue;
		while (q < c2 && *q == ' ')
			q++;
		if (q != c2)
			continue;
		if (line == 0) {
			if (end - c2 > 8 && !memcmp(c2 + 1, "Source:", 7)) {
				const char *s = c2 + 8;
				size_t l = (size_t)(end - s);

				if (l && s[l - 1] == '\r')
					l--;
				f = get_file(out, s, l);
			}
			continue;
		}
		if (!f)
			continue;
		if (c1 - cs == 1 && *cs == '-')
			continue;   /* not executable */
		if (c1 - cs == 5 && (!memcmp(cs, "#####", 5) || !memcmp(cs, "=====", 5))) {
			count = 0;
		} else {
			const char *n = cs;

			if (num(&n, c1, UINT64_MAX, &count))
				continue;
			if (n < c1 && *n == '*')
				n++;
			if (n != c1)
				continue;
		}
		add_line(out, f, (unsigned)line, count);
		parsed++;
	}
	normalise(out);
	if (!parsed)
		return sl_err_set(err, SL_EINPUT, "gcov: no line with a count");
	return 0;
}

int sl_coverage_parse_gcov_json(sl_coverage *out, const char *text, size_t len, sl_err *err)
{
	size_t off = 0, seen = 0;

	while (off < len) {
		json_error_t je;
		json_t *doc, *files, *f, *lines, *l;
		size_t i, j;

		while (off < len && text[off] != '{')
			off++;
		if (off >= len)
			break;
		doc = json_loadb(text + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
		off += doc && je.position > 0 ? (size_t)je.position : 1;
		files = json_object_get(doc, "files");
		json_array_foreach(files, i, f) {
			json_t *name = json_object_get(f, "file");
			sl_cov_file *cf;

			if (!json_is_string(name) ||
			    !(cf = get_file(out, json_string_value(name), json_string_length(name))))
				continue;
			lines = json_object_get(f, "lines");
			json_array_foreach(lines, j, l) {
				json_t *no = json_object_get(l, "line_number");
				json_t *count = json_object_get(l, "count");

				if (!json_is_integer(no) || !json_is_integer(count) ||
				    json_integer_value(no) < 1 || json_integer_value(no) > SL_CAP_LINE_NUMBER ||
				    json_integer_value(count) < 0)
					continue;
				add_line(out, cf, (unsigned)json_integer_value(no),
					 (uint64_t)json_integer_value(count));
				seen++;
			}
		}
		json_decref(doc);
	}
	normalise(out);
	if (!seen)
		return sl_err_set(err, SL_EINPUT, "no line of gcov JSON found");
	return SL_OK;
}

int sl_coverage_of(const sl_coverage *c, const char *path, unsigned start_line,
		   unsigned end_line, unsigned *covered, unsigned *total)
{
	const sl_cov_file *f = sl_coverage_file(c, path);

	*covered = *total = 0;
	if (!f)
		return SL_ENOTFOUND;
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].line < start_line || (end_line && f->v[i].line > end_line))
			continue;
		(*total)++;
		if (f->v[i].count)
			(*covered)++;
	}
	return 0;
}

int sl_coverage_raised(const sl_coverage *base, const sl_coverage *cand, const char *path,
		       unsigned start_line, unsigned end_line, sl_buf *why)
{
	unsigned bc, bt, cc, ct, bfc, bft, cfc, cft;
	int have_cand = !sl_coverage_of(cand, path, start_line, end_line, &cc, &ct);

	sl_coverage_of(base, path, start_line, end_line, &bc, &bt);
	sl_coverage_of(base, path, 0, 0, &bfc, &bft);
	sl_coverage_of(cand, path, 0, 0, &cfc, &cft);
	if (!have_cand) {
		if (why)
			sl_buf_addf(why, "%s is not in the candidate's coverage report\n", path);
		return 0;
	}
	if (why)
		sl_buf_addf(why, "covered lines in %s:%u-%u: %u/%u -> %u/%u; whole file: %u/%u -> %u/%u\n",
			    path, start_line, end_line, bc, bt, cc, ct, bfc, bft, cfc, cft);
	return cc > bc || cfc > bfc;
}
