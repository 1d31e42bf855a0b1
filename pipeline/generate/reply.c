/*
 * reply.c - model replies to edits: unified diffs and search/replace blocks.
 *
 * Reads one reply text, appends edits to the caller's list, writes nothing
 * else.  The reply is split into lines with CR before LF dropped; both
 * parsers then look for edits anywhere in it and skip whatever prose and
 * code fences surround them.
 *
 * Unified diff.  A file starts at a "--- PATH" line directly followed by a
 * "+++ PATH" line (any "diff --git" or "index" line before them is prose to
 * us).  Each "@@" line starts a hunk; so do body lines directly after the
 * file header, for models that forget the "@@" line.  A body runs while
 * lines look like hunk lines: ' ', '-', '+', '\' (no newline at end of file)
 * or an empty line, which models write for a blank context line.  The
 * header's counts are not trusted (the body is recounted); they only help to
 * find where a body ends when a bare diff is followed by prose: if the
 * counts are met exactly at an empty line, the hunk ends there.  Trailing
 * empty lines never belong to a hunk (context at a hunk's end only anchors
 * it, so dropping a blank one is harmless).  A "--- "/"+++ " pair inside a
 * body is a new file header when a "@@" line follows it or the counts are
 * met, else a removed "-- x" and an added "++ y" line (SQL, Lua comments).
 * Hunks with only context lines are dropped.
 *
 * Search/replace.  A block is "<<<<<<< SEARCH", the lines to find,
 * "=======", the new lines, ">>>>>>> REPLACE" (5 to 9 marker characters,
 * surrounding blanks ignored).  Its path is the last non-empty line before
 * the block or before the fence that opens it, stripped of markdown
 * (backticks, asterisks, '#', colons); when that line is prose, its last
 * path-like word; when it is an earlier block, that block's path.
 */
#include <ctype.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/edit.h"
#include "common/util.h"
#include "common/caps.h"

struct line {
	const char *s;
	size_t len;
};

struct lines {
	struct line *v;
	size_t n, alloc;
	char *text;
};

static int split_lines(struct lines *ls, const char *reply, size_t len, sl_err *err)
{
	size_t o = 0, start = 0;
	char *t;

	if (memchr(reply, '\0', len))
		return sl_err_set(err, SL_EINPUT, "the reply contains a NUL byte");
	t = sl_xmalloc(sl_st_add(len, 1));
	for (size_t i = 0; i < len; i++) {
		if (reply[i] == '\r' && (i + 1 == len || reply[i + 1] == '\n'))
			continue;
		t[o++] = reply[i];
	}
	t[o] = '\0';
	ls->text = t;
	for (size_t i = 0; i <= o; i++) {
		if (i < o && t[i] != '\n')
			continue;
		if (i == o && start == o)
			break;
		SL_ALLOC_GROW(ls->v, ls->n + 1, ls->alloc);
		ls->v[ls->n].s = t + start;
		ls->v[ls->n].len = i - start;
		ls->n++;
		start = i + 1;
	}
	return SL_OK;
}

static void lines_release(struct lines *ls)
{
	free(ls->v);
	free(ls->text);
}

static int starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->len >= n && !memcmp(l->s, prefix, n);
}

/* A code fence: up to 3 spaces, then 3 or more '`' or '~'.  Returns the run length. */
static size_t fence_run(const struct line *l, char *ch)
{
	size_t i = 0, run = 0;

	while (i < l->len && i < 3 && l->s[i] == ' ')
		i++;
	if (i >= l->len || (l->s[i] != '`' && l->s[i] != '~'))
		return 0;
	*ch = l->s[i];
	while (i + run < l->len && l->s[i + run] == *ch)
		run++;
	return run >= 3 ? run : 0;
}

static int is_blank(const struct line *l)
{
	for (size_t i = 0; i < l->len; i++)
		if (!isspace((unsigned char)l->s[i]))
			return 0;
	return 1;
}

/* Trimmed line matches: 5..9 times `ch`, blanks, then `word` (or nothing). */
static int is_marker(const struct line *l, char ch, const char *word)
{
	size_t i = 0, e = l->len, run = 0, wl = word ? strlen(word) : 0;

	while (i < e && isspace((unsigned char)l->s[i]))
		i++;
	while (e > i && isspace((unsigned char)l->s[e - 1]))
		e--;
	while (i + run < e && l->s[i + run] == ch)
		run++;
	if (run < 5 || run > 9)
		return 0;
	i += run;
	while (i < e && isspace((unsigned char)l->s[i]))
		i++;
	return e - i == wl && (!wl || !strncasecmp(l->s + i, word, wl));
}

static int is_search(const struct line *l) { return is_marker(l, '<', "SEARCH"); }
static int is_divider(const struct line *l) { return is_marker(l, '=', NULL); }
static int is_replace(const struct line *l) { return is_marker(l, '>', "REPLACE"); }

static int has_search_block(const struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		if (is_search(&ls->v[i]))
			return 1;
	return 0;
}

static int has_udiff(const struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++) {
		if (starts(&ls->v[i], "@@"))
			return 1;
		if (starts(&ls->v[i], "--- ") && i + 1 < ls->n && starts(&ls->v[i + 1], "+++ "))
			return 1;
	}
	return 0;
}

/* ---- unified diff ---------------------------------------------------- */

struct udiff {
	const struct lines *ls;
	sl_edit_list *out;
	sl_err *err;
	char *path;            /* the current file, NULL before the first header */
	int new_file, delete_file;
	int file_hunks;        /* hunks seen for the current file */
	int files, edits, noops;
};

/* A timestamp as diff -u writes it: " 2024-01-31 ..." (after a space or tab). */
static int is_timestamp_at(const char *s, size_t len)
{
	static const char pat[] = "dddd-dd-dd";

	if (len < sizeof(pat))
		return 0;
	for (size_t i = 0; i < sizeof(pat) - 1; i++) {
		char c = s[i + 1];

		if (pat[i] == 'd' ? !isdigit((unsigned char)c) : c != pat[i])
			return 0;
	}
	return s[0] == ' ' || s[0] == '\t';
}

/* The path of a "--- " or "+++ " line: no timestamp, no quotes, no blanks. */
static char *header_path(const struct line *l)
{
	const char *s = l->s + 4;
	size_t len = l->len - 4, cut = len;
	sl_buf b = SL_BUF_INIT;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	cut = len;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\t' || is_timestamp_at(s + i, len - i)) {
			cut = i;
			break;
		}
	}
	while (cut && isspace((unsigned char)s[cut - 1]))
		cut--;
	if (cut >= 2 && s[0] == '"' && s[cut - 1] == '"') {
		for (size_t i = 1; i + 1 < cut; i++) {
			if (s[i] == '\\' && i + 2 < cut) {
				i++;
				sl_buf_addch(&b, s[i] == 't' ? '\t' : s[i] == 'n' ? '\n' : s[i]);
			} else {
				sl_buf_addch(&b, s[i]);
			}
		}
	} else {
		sl_buf_add(&b, s, cut);
	}
	return sl_buf_detach(&b, NULL);
}

static int finish_file(struct udiff *u)
{
	sl_edit *e;

	if (!u->path || u->file_hunks)
		return SL_OK;
	if (!u->new_file && !u->delete_file)
		return sl_err_set(u->err, SL_EINPUT,
				  "the diff for '%s' has no hunk: after the '---' and '+++' lines, "
				  "write '@@ -LINE,COUNT +LINE,COUNT @@' and the changed lines",
				  u->path);
	/* an empty new file, or a deletion written without its lines */
	e = sl_edit_list_add(u->out, SL_EDIT_HUNK, u->path, "", "");
	e->new_file = u->new_file;
	e->delete_file = u->delete_file;
	u->edits++;
	return SL_OK;
}

static void start_file(struct udiff *u, const struct line *minus, const struct line *plus)
{
	char *o = header_path(minus), *n = header_path(plus);
	int o_null = !strcmp(o, "/dev/null"), n_null = !strcmp(n, "/dev/null");
	int o_pre = !strncmp(o, "a/", 2), n_pre = !strncmp(n, "b/", 2);

	free(u->path);
	/* strip git's prefixes only when the pair uses them consistently */
	if ((o_null || o_pre) && (n_null || n_pre) && (o_pre || n_pre)) {
		if (o_pre)
			memmove(o, o + 2, strlen(o + 2) + 1);
		if (n_pre)
			memmove(n, n + 2, strlen(n + 2) + 1);
	}
	u->new_file = o_null && !n_null;
	u->delete_file = n_null && !o_null;
	if (n_null) {
		u->path = o;
		free(n);
	} else {
		u->path = n;
		free(o);
	}
	u->file_hunks = 0;
	u->files++;
}

static int parse_num(const struct line *l, size_t *i, unsigned long *out)
{
	unsigned long v = 0;
	size_t start = *i;

	while (*i < l->len && isdigit((unsigned char)l->s[*i])) {
		if (v > SL_CAP_REPLY_NUMBER)
			return 0;
		v = v * 10 + (unsigned long)(l->s[*i] - '0');
		(*i)++;
	}
	*out = v;
	return *i > start;
}

/* "@@ -l[,c] +l[,c] @@ ...": 1 with counts, 0 without (old_line then 0 or l). */
static int parse_hunk_header(const struct line *l, unsigned long *old_line,
			     unsigned long *oc, unsigned long *nc)
{
	size_t i = 2;
	unsigned long nl;

	*old_line = 0;
	*oc = *nc = 1;
	while (i < l->len && l->s[i] == ' ')
		i++;
	if (i >= l->len || l->s[i] != '-')
		return 0;
	i++;
	if (!parse_num(l, &i, old_line))
		return 0;
	if (i < l->len && l->s[i] == ',') {
		i++;
		if (!parse_num(l, &i, oc))
			return 0;
	}
	while (i < l->len && l->s[i] == ' ')
		i++;
	if (i >= l->len || l->s[i] != '+')
		return 0;
	i++;
	if (!parse_num(l, &i, &nl))
		return 0;
	if (i < l->len && l->s[i] == ',') {
		i++;
		if (!parse_num(l, &i, nc))
			return 0;
	}
	return 1;
}

static int is_body_line(const struct line *l)
{
	return !l->len || l->s[0] == ' ' || l->s[0] == '-' || l->s[0] == '+' || l->s[0] == '\\';
}

/*
 * Find the end of the body starting at line `i`.  With counts (has_counts),
 * they decide ambiguous "--- "/"+++ " pairs and empty lines after the body.
 */
static size_t body_end(const struct lines *ls, size_t i, int has_counts,
		       unsigned long oc, unsigned long nc)
{
	unsigned long os = 0, ns = 0;
	size_t j, cut = SIZE_MAX, end;

	for (j = i; j < ls->n; j++) {
		const struct line *l = &ls->v[j];

		if (has_counts && cut == SIZE_MAX && os == oc && ns == nc)
			cut = j;
		if (!is_body_line(l))
			break;
		if (!l->len) {
			os++;
			ns++;
			continue;
		}
		if (starts(l, "--- ") && j + 1 < ls->n && starts(&ls->v[j + 1], "+++ ")) {
			int hunk_follows = j + 2 < ls->n && starts(&ls->v[j + 2], "@@");

			if (hunk_follows || !has_counts || (os >= oc && ns >= nc))
				break;
		}
		switch (l->s[0]) {
		case ' ': os++; ns++; break;
		case '-': os++; break;
		case '+': ns++; break;
		}
	}
	end = j;
	if (cut != SIZE_MAX && cut < end && !ls->v[cut].len)
		end = cut;
	while (end > i && !ls->v[end - 1].len)
		end--;
	return end;
}

static void strip_newline(sl_buf *b)
{
	if (b->len && b->buf[b->len - 1] == '\n')
		sl_buf_setlen(b, b->len - 1);
}

/* Turn body lines [i, end) into one hunk edit (none if it changes nothing). */
static void add_hunk(struct udiff *u, size_t i, size_t end, unsigned long old_line)
{
	sl_buf o = SL_BUF_INIT, n = SL_BUF_INIT;
	int last = 0, changes = 0;   /* last: 1 old, 2 new, 3 both */
	sl_edit *e;

	for (size_t j = i; j < end; j++) {
		const struct line *l = &u->ls->v[j];
		const char *s = l->len ? l->s + 1 : "";
		size_t len = l->len ? l->len - 1 : 0;
		char c = l->len ? l->s[0] : ' ';

		switch (c) {
		case ' ':
			sl_buf_add(&o, s, len);
			sl_buf_addch(&o, '\n');
			sl_buf_add(&n, s, len);
			sl_buf_addch(&n, '\n');
			last = 3;
			break;
		case '-':
			sl_buf_add(&o, s, len);
			sl_buf_addch(&o, '\n');
			last = 1;
			changes++;
			break;
		case '+':
			sl_buf_add(&n, s, len);
			sl_buf_addch(&n, '\n');
			last = 2;
			changes++;
			break;
		case '\\':
			if (last & 1)
				strip_newline(&o);
			if (last & 2)
				strip_newline(&n);
			last = 0;
			break;
		}
	}
	u->file_hunks++;
	if (!changes) {
		u->noops++;
	} else {
		e = sl_edit_list_add(u->out, SL_EDIT_HUNK, u->path, o.buf, n.buf);
		e->old_line = old_line > UINT32_MAX ? 0 : (uint32_t)old_line;
		e->new_file = u->new_file;
		e->delete_file = u->delete_file;
		u->edits++;
	}
	sl_buf_release(&o);
	sl_buf_release(&n);
}

static int parse_udiff(struct udiff *u)
{
	const struct lines *ls = u->ls;
	size_t i = 0;

	while (i < ls->n) {
		const struct line *l = &ls->v[i];
		unsigned long old_line = 0, oc = 0, nc = 0;
		int has_counts = 0;
		size_t end;

		if (starts(l, "--- ") && i + 1 < ls->n && starts(&ls->v[i + 1], "+++ ")) {
			int ret = finish_file(u);

			if (ret)
				return ret;
			start_file(u, l, &ls->v[i + 1]);
			i += 2;
			/* body lines right after the header: a hunk without its "@@" line */
			if (i < ls->n && ls->v[i].len && is_body_line(&ls->v[i]) &&
			    ls->v[i].s[0] != '\\' &&
			    !(starts(&ls->v[i], "--- ") && i + 1 < ls->n &&
			      starts(&ls->v[i + 1], "+++ "))) {
				end = body_end(ls, i, 0, 0, 0);
				add_hunk(u, i, end, 0);
				i = end;
			}
			continue;
		}
		if (!starts(l, "@@")) {
			i++;
			continue;
		}
		if (!u->path)
			return sl_err_set(u->err, SL_EINPUT,
					  "the '@@' hunk on line %zu of the reply has no "
					  "'--- a/PATH' and '+++ b/PATH' lines before it", i + 1);
		has_counts = parse_hunk_header(l, &old_line, &oc, &nc);
		end = body_end(ls, i + 1, has_counts, oc, nc);
		add_hunk(u, i + 1, end, old_line);
		i = end > i + 1 ? end : i + 1;
	}
	return finish_file(u);
}

/* ---- search/replace -------------------------------------------------- */

enum { K_BLANK, K_TEXT, K_FENCE_OPEN, K_FENCE_CLOSE, K_BLOCK };

static int path_trim_char(char c)
{
	return strchr(" \t`*'\":#", c) != NULL;
}

static int token_trim_char(char c)
{
	return strchr(" \t`*'\":#,;()[]<>", c) != NULL;
}

/* s[0..len) without leading/trailing characters for which trim() holds. */
static void trim_with(const char **s, size_t *len, int (*trim)(char))
{
	while (*len && trim(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && trim((*s)[*len - 1]))
		(*len)--;
}

/* The path named by a line before a block, or NULL if it names none. */
static char *line_path(const struct line *l)
{
	const char *s = l->s, *best = NULL;
	size_t len = l->len, best_len = 0;
	int best_slash = 0;

	trim_with(&s, &len, path_trim_char);
	if (!len)
		return NULL;
	if (!memchr(s, ' ', len) && !memchr(s, '\t', len))
		return sl_xstrndup(s, len);
	/* prose: the last word with a '/', else the last with an inner '.' */
	for (size_t i = 0; i < len; ) {
		const char *w;
		size_t wl = 0;
		int slash, dot;

		while (i < len && isspace((unsigned char)s[i]))
			i++;
		w = s + i;
		while (i < len && !isspace((unsigned char)s[i])) {
			i++;
			wl++;
		}
		trim_with(&w, &wl, token_trim_char);
		while (wl && w[wl - 1] == '.')
			wl--;
		if (!wl)
			continue;
		slash = memchr(w, '/', wl) != NULL;
		dot = wl > 2 && memchr(w + 1, '.', wl - 2) != NULL;
		if (slash || (dot && !best_slash)) {
			best = w;
			best_len = wl;
			best_slash = slash;
		}
	}
	return best ? sl_xstrndup(best, best_len) : NULL;
}

static char *block_path(const struct lines *ls, const int *kind, size_t i, const char *last_path)
{
	size_t j = i;
	char *p;

	while (j && kind[j - 1] == K_BLANK)
		j--;
	if (j && kind[j - 1] == K_FENCE_OPEN) {
		j--;
		while (j && kind[j - 1] == K_BLANK)
			j--;
	}
	if (j && kind[j - 1] == K_TEXT && (p = line_path(&ls->v[j - 1])))
		return p;
	return sl_xstrdup_or_null(last_path);
}

static int parse_search_replace(const struct lines *ls, sl_edit_list *out, int *noops, sl_err *err)
{
	int *kind = sl_xcalloc(ls->n ? ls->n : 1, sizeof(*kind));
	char *path = NULL, *last_path = NULL;
	sl_buf o = SL_BUF_INIT, n = SL_BUF_INIT;
	int ret = SL_EINPUT, in_fence = 0, blocks = 0;
	size_t fence_len = 0;
	char fence_ch = 0;

	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->v[i];
		size_t j, run;
		char ch;

		if (!is_search(l)) {
			run = fence_run(l, &ch);
			if (run && !in_fence) {
				kind[i] = K_FENCE_OPEN;
				in_fence = 1;
				fence_ch = ch;
				fence_len = run;
			} else if (run && ch == fence_ch && run >= fence_len) {
				kind[i] = K_FENCE_CLOSE;
				in_fence = 0;
			} else {
				kind[i] = is_blank(l) ? K_BLANK : K_TEXT;
			}
			continue;
		}
		free(path);
		path = block_path(ls, kind, i, last_path);
		if (!path) {
			sl_err_set(err, SL_EINPUT,
				   "the search/replace block on line %zu of the reply has no file "
				   "path: write the path alone on the line before the block", i + 1);
			goto done;
		}
		sl_buf_reset(&o);
		sl_buf_reset(&n);
		for (j = i + 1; j < ls->n && !is_divider(&ls->v[j]); j++) {
			if (is_search(&ls->v[j]) || is_replace(&ls->v[j]))
				break;
			sl_buf_add(&o, ls->v[j].s, ls->v[j].len);
			sl_buf_addch(&o, '\n');
		}
		if (j >= ls->n || !is_divider(&ls->v[j])) {
			sl_err_set(err, SL_EINPUT,
				   "search/replace block for '%s' has no '=======' separator", path);
			goto done;
		}
		for (j++; j < ls->n && !is_replace(&ls->v[j]); j++) {
			if (is_search(&ls->v[j]))
				break;
			sl_buf_add(&n, ls->v[j].s, ls->v[j].len);
			sl_buf_addch(&n, '\n');
		}
		if (j >= ls->n || !is_replace(&ls->v[j])) {
			sl_err_set(err, SL_EINPUT,
				   "search/replace block for '%s' has no '>>>>>>> REPLACE' line", path);
			goto done;
		}
		for (size_t k = i; k <= j; k++)
			kind[k] = K_BLOCK;
		i = j;
		blocks++;
		if (o.len && !strcmp(o.buf, n.buf)) {
			(*noops)++;
		} else {
			sl_edit *e = sl_edit_list_add(out, SL_EDIT_REPLACE, path, o.buf, n.buf);

			e->new_file = !o.len;
		}
		free(last_path);
		last_path = path;
		path = NULL;
	}
	ret = blocks;
done:
	free(kind);
	free(path);
	free(last_path);
	sl_buf_release(&o);
	sl_buf_release(&n);
	return ret;
}

/* ---- entry point ----------------------------------------------------- */

int sl_reply_parse(sl_edit_list *out, const char *reply, size_t len, int format, sl_err *err)
{
	struct lines ls = { NULL, 0, 0, NULL };
	size_t n0 = out->n;
	int ret;

	if (format != SL_FORMAT_UDIFF && format != SL_FORMAT_SEARCH_REPLACE)
		return sl_err_set(err, SL_EINPUT, "unknown edit format %d", format);
	if ((ret = split_lines(&ls, reply, len, err)))
		goto done;

	if (format == SL_FORMAT_UDIFF) {
		struct udiff u = { .ls = &ls, .out = out, .err = err };

		ret = parse_udiff(&u);
		free(u.path);
		if (ret)
			goto done;
		if (!u.files) {
			ret = sl_err_set(err, SL_EINPUT,
					 "no unified diff found: expected '--- a/PATH', '+++ b/PATH' "
					 "and '@@' hunk headers%s",
					 has_search_block(&ls) ?
					 " (the reply has search/replace blocks, but this campaign "
					 "expects a unified diff)" : "");
			goto done;
		}
		if (!u.edits) {
			ret = sl_err_set(err, SL_EINPUT,
					 "the diff changes nothing: its hunks have no '-' or '+' lines");
			goto done;
		}
	} else {
		int noops = 0;

		ret = parse_search_replace(&ls, out, &noops, err);
		if (ret < 0)
			goto done;
		if (!ret) {
			ret = sl_err_set(err, SL_EINPUT,
					 "no search/replace block found: expected a line with the file "
					 "path, then '<<<<<<< SEARCH', the exact lines to find, '=======', "
					 "the new lines and '>>>>>>> REPLACE'%s",
					 has_udiff(&ls) ?
					 " (the reply has a unified diff, but this campaign expects "
					 "search/replace blocks)" : "");
			goto done;
		}
		if (out->n == n0) {
			ret = sl_err_set(err, SL_EINPUT,
					 "the edit changes nothing: every REPLACE section equals its "
					 "SEARCH section");
			goto done;
		}
	}
	ret = SL_OK;
done:
	if (ret) {
		/* all or nothing: drop what this call appended */
		while (out->n > n0) {
			sl_edit *e = &out->v[--out->n];

			free(e->path);
			free(e->old_text);
			free(e->new_text);
		}
	}
	lines_release(&ls);
	return ret;
}
