/*
 * diff_lines.c - a unified diff to per-file sets of changed lines.
 *
 * One pass over the lines, with two states: between hunks (headers are read:
 * "diff --git", "---", "+++", mode, rename and binary lines) and inside a
 * hunk (the header's counts say how many old and new lines remain; a line
 * that is none of ' ', '+', '-', '\' ends the hunk early, which is how a
 * truncated or hand-trimmed diff is survived).  Paths from "---"/"+++" win
 * over those guessed from "diff --git", which are ambiguous when a path
 * holds " b/".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "validators/diff_lines.h"
#include "common/util.h"
#include "common/caps.h"

void sl_changed_init(sl_changed *c)
{
	memset(c, 0, sizeof(*c));
}

void sl_changed_release(sl_changed *c)
{
	for (size_t i = 0; i < c->nfiles; i++) {
		free(c->files[i].path);
		free(c->files[i].old_path);
		free(c->files[i].lines);
		free(c->files[i].cuts);
	}
	free(c->files);
	for (size_t i = 0; i < c->npaths; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->adds);
	free(c->error_msg);
	sl_changed_init(c);
}

/* "a/x" -> "x" (one leading a/ or b/ only). */
static const char *strip_ab(const char *p)
{
	if ((p[0] == 'a' || p[0] == 'b') && p[1] == '/')
		return p + 2;
	return p;
}

/*
 * Read one path token at s (up to end): a C-quoted string as git writes for
 * unusual names, or everything up to a tab (plain diffs append timestamps)
 * or the end.  *next gets where parsing stopped.  Returns an owned string.
 */
static char *read_path(const char *s, const char *end, const char **next)
{
	sl_buf b = SL_BUF_INIT;

	if (s < end && *s == '"') {
		s++;
		while (s < end && *s != '"') {
			if (*s == '\\' && s + 1 < end) {
				s++;
				if (*s >= '0' && *s <= '7') {
					unsigned v = 0;
					for (int k = 0; k < 3 && s < end && *s >= '0' && *s <= '7'; k++)
						v = v * 8 + (unsigned)(*s++ - '0');
					sl_buf_addch(&b, (int)(v & 0xff));
					continue;
				}
				switch (*s) {
				case 'n': sl_buf_addch(&b, '\n'); break;
				case 't': sl_buf_addch(&b, '\t'); break;
				case 'r': sl_buf_addch(&b, '\r'); break;
				case 'a': sl_buf_addch(&b, '\a'); break;
				case 'b': sl_buf_addch(&b, '\b'); break;
				case 'f': sl_buf_addch(&b, '\f'); break;
				case 'v': sl_buf_addch(&b, '\v'); break;
				default: sl_buf_addch(&b, *s); break;
				}
				s++;
				continue;
			}
			sl_buf_addch(&b, *s++);
		}
		if (s < end)
			s++;
	} else {
		const char *t = s;

		while (t < end && *t != '\t')
			t++;
		sl_buf_add(&b, s, (size_t)(t - s));
		s = t;
	}
	if (next)
		*next = s;
	return sl_buf_detach(&b, NULL);
}

static sl_changed_file *new_file(sl_changed *c, sl_err *err)
{
	sl_changed_file *f;

	if (c->nfiles >= SL_CAP_DIFF_FILES) {
		sl_err_set(err, SL_EINPUT, "diff names more than %u files", SL_CAP_DIFF_FILES);
		return NULL;
	}
	SL_ALLOC_GROW(c->files, c->nfiles + 1, c->alloc);
	f = &c->files[c->nfiles++];
	memset(f, 0, sizeof(*f));
	return f;
}

static void set_str(char **dst, char *src)
{
	free(*dst);
	*dst = src;
}

/* Paths from "diff --git A B": quoted pairs, or "a/P b/P", or split at " b/". */
static void git_line_paths(sl_changed_file *f, const char *s, const char *end)
{
	char *a = NULL, *b = NULL;
	size_t len = (size_t)(end - s);

	if (s < end && *s == '"') {
		const char *next;

		a = read_path(s, end, &next);
		while (next < end && *next == ' ')
			next++;
		b = read_path(next, end, NULL);
	} else if (len >= 5 && (len - 1) % 2 == 0 && !memcmp(s, "a/", 2) &&
		   !memcmp(s + (len - 1) / 2, " b/", 3) &&
		   !memcmp(s + 2, s + (len - 1) / 2 + 3, (len - 1) / 2 - 2)) {
		a = sl_xstrndup(s, (len - 1) / 2);
		b = sl_xstrndup(s + (len - 1) / 2 + 1, (len - 1) / 2);
	} else {
		const char *mid = NULL;

		for (const char *p = s; p + 3 <= end; p++)
			if (!memcmp(p, " b/", 3))
				mid = p;
		if (!mid)
			return;
		a = sl_xstrndup(s, (size_t)(mid - s));
		b = sl_xstrndup(mid + 1, (size_t)(end - mid - 1));
	}
	set_str(&f->old_path, sl_xstrdup(strip_ab(a)));
	set_str(&f->path, sl_xstrdup(strip_ab(b)));
	free(a);
	free(b);
}

static int parse_uint(const char **s, const char *end, unsigned *out)
{
	unsigned long v = 0;
	const char *p = *s;

	if (p >= end || *p < '0' || *p > '9')
		return -1;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned long)(*p++ - '0');
		if (v > SL_CAP_LINE_NUMBER)
			return -1;
	}
	*s = p;
	*out = (unsigned)v;
	return 0;
}

/* "@@ -a[,b] +c[,d] @@"; lines are 1-based, so a start of 0 only with a count of 0 */
static int parse_hunk_header(const char *s, const char *end, unsigned *old_n,
			     unsigned *new_start, unsigned *new_n)
{
	unsigned a;

	s += 3;
	if (s >= end || *s++ != '-' || parse_uint(&s, end, &a))
		return -1;
	*old_n = 1;
	if (s < end && *s == ',' && (s++, parse_uint(&s, end, old_n)))
		return -1;
	if (s >= end || *s++ != ' ' || s >= end || *s++ != '+' || parse_uint(&s, end, new_start))
		return -1;
	*new_n = 1;
	if (s < end && *s == ',' && (s++, parse_uint(&s, end, new_n)))
		return -1;
	if (end - s < 3 || memcmp(s, " @@", 3))
		return -1;
	if ((!a && *old_n) || (!*new_start && *new_n))
		return -1;
	return 0;
}

/* Keep the added line [text, text + len) of the file named path. */
static void keep_added(sl_changed *c, const char *path, unsigned line, const char *text,
		       size_t len)
{
	sl_added_line *a;

	if (!c->npaths || strcmp(c->paths[c->npaths - 1], path)) {
		SL_ALLOC_GROW(c->paths, c->npaths + 1, c->paths_alloc);
		c->paths[c->npaths++] = sl_xstrdup(path);
	}
	SL_ALLOC_GROW(c->adds, c->nadds + 1, c->adds_alloc);
	a = &c->adds[c->nadds++];
	a->path = c->npaths - 1;
	a->line = line;
	a->text = text;
	a->len = len;
}

static void push_line(unsigned **v, size_t *n, size_t *alloc, unsigned line)
{
	if (*n && (*v)[*n - 1] == line)
		return;
	SL_ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[(*n)++] = line;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* Hunks of one file may come in any order in a hand-made diff: sort, dedupe. */
static void normalise(unsigned *v, size_t *n)
{
	size_t j = 0;

	if (*n < 2)
		return;
	qsort(v, *n, sizeof(*v), cmp_uint);
	for (size_t i = 0; i < *n; i++)
		if (!j || v[j - 1] != v[i])
			v[j++] = v[i];
	*n = j;
}

static int starts(const char *s, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - s) >= n && !memcmp(s, prefix, n);
}

/* Where the one pass over a diff is. */
struct diff_pass {
	sl_changed *out;
	sl_changed_file *f;         /* the file whose headers or hunks are read */
	unsigned old_left, new_left;/* lines the current hunk still holds */
	unsigned new_line;          /* the next line number in the new file */
	int in_hunk, prev_minus, had_hunk, had_minus_header;
	sl_added_line_fn on_added;
	void *data;
};

/*
 * One line [P, END) inside a hunk.  Returns 1 when it was the hunk's, 0 when
 * it ends the hunk early (then it is read as a header), or the callback's
 * nonzero return as a negative error.
 */
static int hunk_line(struct diff_pass *d, const char *p, const char *end, int *cb_ret)
{
	sl_changed_file *f = d->f;
	char c = p < end ? *p : ' ';

	if (c == ' ' && d->old_left && d->new_left) {
		d->old_left--;
		d->new_left--;
		d->new_line++;
		d->prev_minus = 0;
	} else if (c == '+' && d->new_left) {
		d->new_left--;
		f->added++;
		d->out->added++;
		push_line(&f->lines, &f->nlines, &f->lines_alloc, d->new_line);
		keep_added(d->out, f->path ? f->path : "", d->new_line, p + 1, (size_t)(end - p - 1));
		if (d->on_added && (*cb_ret = d->on_added(d->data, f->path ? f->path : "",
							  d->new_line, p + 1, (size_t)(end - p - 1))))
			return -1;
		d->new_line++;
		d->prev_minus = 0;
	} else if (c == '-' && d->old_left) {
		d->old_left--;
		f->removed++;
		d->out->removed++;
		if (!d->prev_minus)
			push_line(&f->cuts, &f->ncuts, &f->cuts_alloc, d->new_line);
		d->prev_minus = 1;
	} else if (c == '\\') {
		return 1;       /* "\ No newline at end of file" */
	} else {
		d->in_hunk = 0;
		return 0;
	}
	if (!d->old_left && !d->new_left)
		d->in_hunk = 0;
	return 1;
}

/* A "--- " or "+++ " header's path, "/dev/null" meaning no file on that side. */
static void side_path(sl_changed_file *f, const char *s, const char *hend, int new_side)
{
	char *path = read_path(s, hend, NULL);

	if (!strcmp(path, "/dev/null")) {
		if (new_side) {
			f->deleted = 1;
			if (f->old_path)
				set_str(&f->path, sl_xstrdup(f->old_path));
		} else {
			f->created = 1;
			set_str(&f->old_path, NULL);
		}
	} else {
		set_str(new_side ? &f->path : &f->old_path, sl_xstrdup(strip_ab(path)));
	}
	free(path);
}

/* One line [P, HEND) between hunks; lines that are none of the headers are skipped. */
static int header_line(struct diff_pass *d, const char *p, const char *hend, sl_err *err)
{
	sl_changed_file *f = d->f;

	if (starts(p, hend, "diff --git ")) {
		if (!(f = d->f = new_file(d->out, err)))
			return SL_EINPUT;
		git_line_paths(f, p + 11, hend);
		d->had_hunk = d->had_minus_header = 0;
	} else if (starts(p, hend, "--- ")) {
		if (!f || d->had_hunk || d->had_minus_header) {
			if (!(f = d->f = new_file(d->out, err)))
				return SL_EINPUT;
			d->had_hunk = 0;
		}
		d->had_minus_header = 1;
		side_path(f, p + 4, hend, 0);
	} else if (starts(p, hend, "+++ ") && f) {
		side_path(f, p + 4, hend, 1);
	} else if (starts(p, hend, "@@ ")) {
		unsigned old_n, new_start, new_n;

		if (!f || parse_hunk_header(p, hend, &old_n, &new_start, &new_n))
			return sl_err_set(err, SL_EINPUT, "bad hunk header '%.*s'",
					  (int)(hend - p > 80 ? 80 : hend - p), p);
		d->old_left = old_n;
		d->new_left = new_n;
		d->new_line = new_n ? new_start : new_start + 1;
		d->in_hunk = d->old_left || d->new_left;
		d->had_hunk = 1;
		d->prev_minus = 0;
	} else if (f && starts(p, hend, "new file mode")) {
		f->created = 1;
	} else if (f && starts(p, hend, "deleted file mode")) {
		f->deleted = 1;
	} else if (f && (starts(p, hend, "rename from ") || starts(p, hend, "copy from "))) {
		const char *s = p + (p[0] == 'r' ? 12 : 10);

		set_str(&f->old_path, read_path(s, hend, NULL));
		f->renamed = p[0] == 'r';
	} else if (f && (starts(p, hend, "rename to ") || starts(p, hend, "copy to "))) {
		const char *s = p + (p[0] == 'r' ? 10 : 8);

		set_str(&f->path, read_path(s, hend, NULL));
	} else if (f && (starts(p, hend, "Binary files ") || starts(p, hend, "GIT binary patch"))) {
		f->binary = 1;
	}
	return 0;
}

/* Keep what the parse returned, and say it in err. */
static int parse_failed(sl_changed *out, int ret, const sl_err *perr, sl_err *err)
{
	out->error = ret;
	free(out->error_msg);
	out->error_msg = sl_xstrdup(perr->msg);
	if (perr->code)
		sl_err_set(err, perr->code, "%s", perr->msg);
	return ret;
}

int sl_changed_parse(sl_changed *out, const char *diff, size_t len,
		     sl_added_line_fn on_added, void *data, sl_err *err)
{
	const char *p = diff, *stop = diff + len;
	struct diff_pass d;
	sl_err perr = SL_ERR_INIT;
	size_t first = out->nfiles;
	int ret = 0;

	memset(&d, 0, sizeof(d));
	d.out = out;
	d.on_added = on_added;
	d.data = data;
	out->diff = diff;
	out->diff_len = len;
	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *end = eol ? eol : stop;
		const char *hend = end;
		int took;

		if (hend > p && hend[-1] == '\r')
			hend--;
		if (d.in_hunk) {
			if ((took = hunk_line(&d, p, end, &ret)) < 0)
				return parse_failed(out, ret, &perr, err);
			if (took) {
				p = next;
				continue;
			}
		}
		if ((ret = header_line(&d, p, hend, &perr)))
			return parse_failed(out, ret, &perr, err);
		p = next;
	}
	for (size_t i = first; i < out->nfiles; i++) {
		sl_changed_file *g = &out->files[i];

		if (g->created)
			set_str(&g->old_path, NULL);
		if (!g->path)
			g->path = sl_xstrdup(g->old_path ? g->old_path : "");
		normalise(g->lines, &g->nlines);
		normalise(g->cuts, &g->ncuts);
	}
	return 0;
}

int sl_changed_each_added(const sl_changed *c, sl_added_line_fn fn, void *data)
{
	int ret = 0;

	for (size_t i = 0; i < c->nadds && !ret; i++) {
		const sl_added_line *a = &c->adds[i];

		ret = fn(data, c->paths[a->path], a->line, a->text, a->len);
	}
	return ret;
}

const sl_changed_file *sl_changed_find(const sl_changed *c, const char *path)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].path && !strcmp(c->files[i].path, path))
			return &c->files[i];
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].old_path && !strcmp(c->files[i].old_path, path))
			return &c->files[i];
	return NULL;
}

/* 1 if some v[i] lies in [lo, hi] (v ascending). */
static int any_in(const unsigned *v, size_t n, unsigned lo, unsigned hi)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && v[a] <= hi;
}

int sl_changed_near(const sl_changed *c, const char *path, unsigned line, unsigned radius)
{
	char *norm = sl_report_path(path);
	const sl_changed_file *f = sl_changed_find(c, norm);
	unsigned lo, hi;
	int ret = 0;

	if (!f)
		goto done;
	if (f->created) {
		ret = 1;
		goto done;
	}
	lo = line > radius ? line - radius : 0;
	hi = line > UINT32_MAX - radius ? UINT32_MAX : line + radius;
	ret = any_in(f->lines, f->nlines, lo, hi) || any_in(f->cuts, f->ncuts, lo, hi);
done:
	free(norm);
	return ret;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void sl_percent_decode(sl_buf *out, const char *s)
{
	for (; *s; s++) {
		int h, l;

		if (*s == '%' && (h = hexval(s[1])) >= 0 && (l = hexval(s[2])) >= 0) {
			sl_buf_addch(out, h * 16 + l);
			s += 2;
		} else {
			sl_buf_addch(out, *s);
		}
	}
}

char *sl_report_path(const char *raw)
{
	sl_buf in = SL_BUF_INIT, out = SL_BUF_INIT;
	const char *s = raw ? raw : "";
	int absolute;
	size_t nseg = 0, segalloc = 0;
	size_t *segstart = NULL;

	if (!strncmp(s, "file://", 7)) {
		s += 7;
		if (*s != '/') {    /* file://host/path: drop the host */
			const char *slash = strchr(s, '/');
			s = slash ? slash : "";
		}
		sl_percent_decode(&in, s);
	} else {
		sl_buf_adds(&in, s);
	}
	s = in.buf;
	absolute = *s == '/';
	if (!strncmp(s, "/src/", 5)) {
		s += 5;
		absolute = 0;
	}
	/* Segments: drop "" and ".", pop on "..". */
	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (n == 0 || (n == 1 && s[0] == '.')) {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (nseg) {
				sl_buf_setlen(&out, segstart[--nseg]);
			} else if (!absolute) {
				/* climbs above the root: keep it visibly outside */
				absolute = 1;
				sl_buf_adds(&out, "/..");
			}
		} else {
			SL_ALLOC_GROW(segstart, nseg + 1, segalloc);
			segstart[nseg++] = out.len;
			if (out.len || absolute)
				sl_buf_addch(&out, '/');
			sl_buf_add(&out, s, n);
		}
		s += n;
		if (*s == '/')
			s++;
	}
	if (absolute && !out.len)
		sl_buf_addch(&out, '/');
	free(segstart);
	sl_buf_release(&in);
	return sl_buf_detach(&out, NULL);
}
