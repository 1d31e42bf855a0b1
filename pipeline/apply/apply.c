/*
 * apply.c - edits to a candidate commit, and scratch worktrees for gates.
 *
 * Files are read from the base commit's tree and changed in memory; the
 * result goes straight into the object database (blobs, a tree built with
 * git_tree_create_updated, a commit), so no index, no working tree and no
 * hook is involved.  See apply.h for the placement and safety rules.
 *
 * Placement works on lines.  A file is split into lines (terminator not
 * included, a CR before it kept), the edit's old side likewise; locate()
 * finds where the old lines are (tier by tier) and render_region() builds
 * the bytes that replace them: lines the edit keeps are copied from the file
 * (so a whitespace-tolerant match never rewrites them), new lines are
 * re-indented and given the file's line ends.  Which new lines are kept ones
 * comes from a longest-common-subsequence alignment of the edit's own old
 * and new sides.
 *
 * Worktrees: only the repository sluice opened (the user's) is ever used;
 * a worktree's directory is created by git_worktree_add and later removed
 * with sl_rm_rf, and its admin files (in the user's .git/worktrees) are
 * pruned by name.  Nothing here opens a worktree as a repository.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2/sys/repository.h>

#include "pipeline/apply/apply.h"
#include "common/util.h"
#include "common/caps.h"

/* ---- the report -------------------------------------------------------- */

enum { T_EXACT, T_MOVED, T_WS, T_REFUSED };
static const char *const tier_names[] = { "exact", "moved", "whitespace", "refused" };

void sl_apply_report_release(sl_apply_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].reason);
	}
	free(r->v);
	r->v = NULL;
	r->n = r->alloc = 0;
}

static void json_str(sl_buf *out, const char *s)
{
	sl_buf_addch(out, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			sl_buf_addf(out, "\\%c", c);
		else if (c == '\n')
			sl_buf_adds(out, "\\n");
		else if (c == '\t')
			sl_buf_adds(out, "\\t");
		else if (c < 0x20)
			sl_buf_addf(out, "\\u%04x", c);
		else
			sl_buf_addch(out, c);
	}
	sl_buf_addch(out, '"');
}

void sl_apply_report_json(sl_buf *out, const sl_apply_report *r)
{
	sl_buf_addch(out, '[');
	for (size_t i = 0; r && i < r->n; i++) {
		const sl_apply_item *it = &r->v[i];

		sl_buf_addf(out, "%s{\"edit\":%zu,\"path\":", i ? "," : "", i + 1);
		json_str(out, it->path ? it->path : "");
		sl_buf_adds(out, ",\"kind\":");
		json_str(out, it->kind);
		sl_buf_adds(out, ",\"tier\":");
		json_str(out, it->tier);
		sl_buf_addf(out, ",\"line\":%u", it->line);
		if (it->reason) {
			sl_buf_adds(out, ",\"reason\":");
			json_str(out, it->reason);
		}
		sl_buf_addch(out, '}');
	}
	sl_buf_addch(out, ']');
}

/* ---- lines --------------------------------------------------------------- */

typedef struct tline {
	const char *s;
	size_t len;                 /* without the '\n' (a '\r' before it stays) */
} tline;

typedef struct tlines {
	tline *v;
	size_t n, alloc;
	const char *base;
	size_t total;
	int final_nl;               /* the text ends with '\n' (or is empty) */
} tlines;

static void split_text(tlines *t, const char *s, size_t len)
{
	size_t start = 0;

	memset(t, 0, sizeof(*t));
	t->base = s;
	t->total = len;
	t->final_nl = !len || s[len - 1] == '\n';
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\n')
			continue;
		SL_ALLOC_GROW(t->v, t->n + 1, t->alloc);
		t->v[t->n++] = (tline){ s + start, i - start };
		start = i + 1;
	}
	if (start < len) {
		SL_ALLOC_GROW(t->v, t->n + 1, t->alloc);
		t->v[t->n++] = (tline){ s + start, len - start };
	}
}

static void tlines_release(tlines *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* Byte offset where line k starts (k == n: the end). */
static size_t line_off(const tlines *t, size_t k)
{
	return k < t->n ? (size_t)(t->v[k].s - t->base) : t->total;
}

static size_t rtrim_len(const tline *l)
{
	size_t n = l->len;

	while (n && strchr(" \t\r\f\v", l->s[n - 1]))
		n--;
	return n;
}

static size_t lead_len(const tline *l, size_t rlen)
{
	size_t i = 0;

	while (i < rlen && (l->s[i] == ' ' || l->s[i] == '\t'))
		i++;
	return i;
}

static int line_eq(const tline *a, const tline *b)
{
	return a->len == b->len && !memcmp(a->s, b->s, a->len);
}

/* Equal once both are trimmed on both sides. */
static int line_eq_trimmed(const tline *a, const tline *b)
{
	size_t ar = rtrim_len(a), br = rtrim_len(b), al = lead_len(a, ar), bl = lead_len(b, br);

	return ar - al == br - bl && !memcmp(a->s + al, b->s + bl, ar - al);
}

/* ---- locating ------------------------------------------------------------ */

/* An indentation shift: the file's lines have `len` bytes of `s` more (dir 1) or less (-1). */
typedef struct shift {
	int dir;
	const char *s;
	size_t len;
} shift;

static int match_exact(const tlines *f, size_t p, const tline *pre, size_t n)
{
	if (p + n > f->n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!line_eq(&f->v[p + i], &pre[i]))
			return 0;
	return 1;
}

static int match_ws(const tlines *f, size_t p, const tline *pre, size_t n, shift *sh)
{
	int have = 0;

	sh->dir = 0;
	sh->s = "";
	sh->len = 0;
	if (p + n > f->n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const tline *fl = &f->v[p + i], *pl = &pre[i];
		size_t fr = rtrim_len(fl), pr = rtrim_len(pl), fi, pi;
		shift s;

		if (!fr || !pr) {
			if (fr != pr)
				return 0;
			continue;
		}
		fi = lead_len(fl, fr);
		pi = lead_len(pl, pr);
		if (fr - fi != pr - pi || memcmp(fl->s + fi, pl->s + pi, fr - fi))
			return 0;
		if (fi >= pi) {
			if (memcmp(fl->s + (fi - pi), pl->s, pi))
				return 0;
			s = (shift){ fi > pi ? 1 : 0, fl->s, fi - pi };
		} else {
			if (memcmp(pl->s + (pi - fi), fl->s, fi))
				return 0;
			s = (shift){ -1, pl->s, pi - fi };
		}
		if (!have) {
			*sh = s;
			have = 1;
		} else if (s.dir != sh->dir || s.len != sh->len || memcmp(s.s, sh->s, s.len)) {
			return 0;
		}
	}
	return 1;
}

#define MAX_LISTED 5

typedef struct located {
	size_t at;                  /* first file line */
	int tier;
	shift sh;
	size_t nmatch;              /* places found by the deciding tier */
	size_t where[MAX_LISTED];
} located;

static void clip(sl_buf *b, const tline *l)
{
	size_t r = rtrim_len(l), i = lead_len(l, r), n = r - i;

	sl_buf_addch(b, '\'');
	if (n > 60) {
		sl_buf_add(b, l->s + i, 57);
		sl_buf_adds(b, "...");
	} else {
		sl_buf_add(b, l->s + i, n);
	}
	sl_buf_addch(b, '\'');
}

/* Feedback when nothing matched: the regions most like the old lines. */
static void nearest(sl_buf *why, const tlines *f, const tline *pre, size_t n)
{
	size_t best[2] = { 0, 0 }, score[2] = { 0, 0 }, *sc;

	if (!n || !f->n || n > 20000000 / f->n) {
		sl_buf_adds(why, "; quote the lines exactly as they are in the file");
		return;
	}
	sc = sl_xcalloc(f->n, sizeof(*sc));
	for (size_t p = 0; p < f->n; p++) {
		for (size_t i = 0; i < n && p + i < f->n; i++)
			sc[p] += line_eq_trimmed(&f->v[p + i], &pre[i]);
		if (sc[p] > score[0]) {
			best[0] = p;
			score[0] = sc[p];
		}
	}
	for (size_t p = 0; p < f->n && score[0]; p++) {
		if (p + n > best[0] && p < best[0] + n)
			continue;
		if (sc[p] > score[1]) {
			best[1] = p;
			score[1] = sc[p];
		}
	}
	free(sc);
	if (!score[0]) {
		sl_buf_adds(why, "; no line of it occurs in the file");
		return;
	}
	if (score[0] == n && best[0] + n <= f->n) {
		sl_buf_addf(why, "; lines %zu-%zu differ only in indentation, and not by one "
			    "consistent shift: keep the file's indentation", best[0] + 1, best[0] + n);
		return;
	}
	sl_buf_adds(why, "; nearest:");
	for (int k = 0; k < 2 && score[k]; k++) {
		size_t p = best[k], end = p + n < f->n ? p + n : f->n;

		sl_buf_addf(why, "%s lines %zu-%zu (%zu of %zu lines equal", k ? ";" : "", p + 1, end,
			    score[k], n);
		for (size_t i = 0; i < n && p + i < f->n; i++) {
			if (line_eq_trimmed(&f->v[p + i], &pre[i]))
				continue;
			sl_buf_addf(why, "; line %zu is ", p + i + 1);
			clip(why, &f->v[p + i]);
			sl_buf_adds(why, " where the edit has ");
			clip(why, &pre[i]);
			break;
		}
		sl_buf_addch(why, ')');
	}
}

/*
 * Find pre[0..n) in f.  hint: 1-based line the edit names, 0 for none.
 * Returns 0 and fills *loc, or -1 with the reason in why.
 */
static int locate(located *loc, const tlines *f, const tline *pre, size_t n, uint32_t hint,
		  sl_buf *why)
{
	size_t count = 0;

	memset(loc, 0, sizeof(*loc));
	if (hint && match_exact(f, hint - 1, pre, n)) {
		loc->at = hint - 1;
		loc->tier = T_EXACT;
		return 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		int hint_hit = 0;
		shift sh, hint_sh = { 0, "", 0 };

		count = 0;
		for (size_t p = 0; p + n <= f->n; p++) {
			int ok = pass ? match_ws(f, p, pre, n, &sh) : match_exact(f, p, pre, n);

			if (!ok)
				continue;
			if (count < MAX_LISTED)
				loc->where[count] = p;
			if (!count)
				loc->sh = pass ? sh : (shift){ 0, "", 0 };
			if (hint && p == hint - 1) {
				hint_hit = 1;
				hint_sh = pass ? sh : (shift){ 0, "", 0 };
			}
			count++;
		}
		loc->nmatch = count;
		if (count == 1 || (count > 1 && hint_hit)) {
			loc->at = count == 1 ? loc->where[0] : hint - 1;
			if (count > 1)
				loc->sh = hint_sh;
			loc->tier = pass ? T_WS : hint && loc->at != hint - 1 ? T_MOVED : T_EXACT;
			return 0;
		}
		if (count > 1) {
			sl_buf_addf(why, "its %zu old lines match %zu places%s (lines", n, count,
				    pass ? " when whitespace is ignored" : "");
			for (size_t k = 0; k < count && k < MAX_LISTED; k++)
				sl_buf_addf(why, "%s %zu", k ? "," : "", loc->where[k] + 1);
			sl_buf_addf(why, "%s); include more context lines so that it is unique",
				    count > MAX_LISTED ? ", ..." : "");
			return -1;
		}
	}
	sl_buf_addf(why, "its %zu old line%s %s not found in the file", n, n == 1 ? "" : "s",
		    n == 1 ? "was" : "were");
	nearest(why, f, pre, n);
	return -1;
}

/* ---- building the replacement --------------------------------------------- */

/* new_of[j] = index of the old line kept as new line j, or SIZE_MAX. */
static size_t *align(const tline *o, size_t no, const tline *nw, size_t nn)
{
	size_t *map = sl_xcalloc(nn ? nn : 1, sizeof(*map)), pre = 0, suf = 0;

	for (size_t j = 0; j < nn; j++)
		map[j] = SIZE_MAX;
	while (pre < no && pre < nn && line_eq(&o[pre], &nw[pre])) {
		map[pre] = pre;
		pre++;
	}
	while (suf < no - pre && suf < nn - pre && line_eq(&o[no - 1 - suf], &nw[nn - 1 - suf])) {
		map[nn - 1 - suf] = no - 1 - suf;
		suf++;
	}
	{
		size_t a = no - pre - suf, b = nn - pre - suf;
		uint32_t *dp;

		if (!a || !b || a > 4000000 / b)
			return map;
		/* dp[i][j]: LCS of o[pre+i..] and nw[pre+j..] */
		dp = sl_xcalloc(sl_st_mult(a + 1, b + 1), sizeof(*dp));
		for (size_t i = a; i-- > 0; )
			for (size_t j = b; j-- > 0; )
				dp[i * (b + 1) + j] = line_eq(&o[pre + i], &nw[pre + j]) ?
					dp[(i + 1) * (b + 1) + j + 1] + 1 :
					dp[(i + 1) * (b + 1) + j] > dp[i * (b + 1) + j + 1] ?
					dp[(i + 1) * (b + 1) + j] : dp[i * (b + 1) + j + 1];
		for (size_t i = 0, j = 0; i < a && j < b; ) {
			if (line_eq(&o[pre + i], &nw[pre + j])) {
				map[pre + j] = pre + i;
				i++;
				j++;
			} else if (dp[(i + 1) * (b + 1) + j] >= dp[i * (b + 1) + j + 1]) {
				i++;
			} else {
				j++;
			}
		}
		free(dp);
	}
	return map;
}

/*
 * The bytes replacing file lines [at, at+no): the edit's new lines, kept
 * lines copied from the file.  old_nl/new_nl: the edit's sides end with a
 * newline.
 */
static void render_region(sl_buf *out, const tlines *f, size_t at, const tline *o, size_t no,
			  int old_nl, const tline *nw, size_t nn, int new_nl, const shift *sh)
{
	size_t *map = align(o, no, nw, nn), cr = 0, counted = 0;
	int tail = at + no >= f->n, want_nl;

	/* the region's line ends (or the whole file's, for an insertion) */
	for (size_t k = no ? at : 0; k < (no ? at + no : f->n); k++, counted++)
		if (f->v[k].len && f->v[k].s[f->v[k].len - 1] == '\r')
			cr++;
	if (tail && no == 0 && f->n && !f->final_nl)
		sl_buf_addch(out, '\n');    /* insertion after a last line without one */
	for (size_t j = 0; j < nn; j++) {
		if (map[j] != SIZE_MAX) {
			const tline *l = &f->v[at + map[j]];

			sl_buf_add(out, l->s, l->len);
		} else {
			const tline *l = &nw[j];
			size_t r = rtrim_len(l);

			if (r && sh->dir > 0) {
				sl_buf_add(out, sh->s, sh->len);
				sl_buf_add(out, l->s, l->len);
			} else if (r && sh->dir < 0 && l->len >= sh->len &&
				   !memcmp(l->s, sh->s, sh->len)) {
				sl_buf_add(out, l->s + sh->len, l->len - sh->len);
			} else {
				sl_buf_add(out, l->s, l->len);
			}
			if (counted && cr * 2 > counted)
				sl_buf_addch(out, '\r');
		}
		sl_buf_addch(out, '\n');
	}
	if (tail && out->len) {
		want_nl = old_nl != new_nl ? new_nl : (no ? f->final_nl : 1);
		if (!want_nl) {
			sl_buf_setlen(out, out->len - 1);
			if (out->len && out->buf[out->len - 1] == '\r' && map[nn - 1] == SIZE_MAX)
				sl_buf_setlen(out, out->len - 1);
		}
	}
	free(map);
}

/* ---- elided context -------------------------------------------------------- */

static int is_elision(const tline *l)
{
	size_t r = rtrim_len(l), i = lead_len(l, r);
	const char *s = l->s + i;
	size_t n = r - i;
	static const char *const leaders[] = { "//", "#", "/*", "<!--", "--", ";", "*", NULL };

	for (int k = 0; leaders[k]; k++) {
		size_t ll = strlen(leaders[k]);

		if (n >= ll && !memcmp(s, leaders[k], ll)) {
			s += ll;
			n -= ll;
			while (n && (*s == ' ' || *s == '\t')) {
				s++;
				n--;
			}
			break;
		}
	}
	if (n >= 3 && !memcmp(s, "...", 3)) {
		s += 3;
		n -= 3;
	} else if (n >= 3 && !memcmp(s, "\xe2\x80\xa6", 3)) {
		s += 3;
		n -= 3;
	} else {
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k];

		if (!(isalpha(c) || c == ' ' || c == '.' || c == '-' || c == '*' || c == '/' ||
		      c == '>' || c == '\'' || c >= 0x80))
			return 0;
	}
	return 1;
}

typedef struct segs {
	size_t n;                   /* pieces */
	size_t *start, *len;        /* line index and count of each piece */
} segs;

static void split_elided(segs *sg, const tline *l, size_t n)
{
	size_t s = 0;

	sg->n = 0;
	sg->start = sl_xcalloc(n + 2, sizeof(size_t));
	sg->len = sl_xcalloc(n + 2, sizeof(size_t));
	for (size_t i = 0; i <= n; i++) {
		if (i < n && !is_elision(&l[i]))
			continue;
		sg->start[sg->n] = s;
		sg->len[sg->n] = i - s;
		sg->n++;
		s = i + 1;
	}
}

static void segs_release(segs *sg)
{
	free(sg->start);
	free(sg->len);
}

/* ---- one edit's placement ------------------------------------------------- */

/* A region of the file an edit replaces. */
typedef struct region {
	size_t edit;
	size_t at, n;               /* file lines */
	sl_buf text;                /* their replacement */
} region;

typedef struct regions {
	region *v;
	size_t n, alloc;
} regions;

static void regions_release(regions *r)
{
	for (size_t i = 0; i < r->n; i++)
		sl_buf_release(&r->v[i].text);
	free(r->v);
	r->v = NULL;
	r->n = r->alloc = 0;
}

static region *region_add(regions *r, size_t edit, size_t at, size_t n)
{
	region *g;

	SL_ALLOC_GROW(r->v, r->n + 1, r->alloc);
	g = &r->v[r->n++];
	g->edit = edit;
	g->at = at;
	g->n = n;
	sl_buf_init(&g->text, 0);
	return g;
}

static int worse(int a, int b)
{
	return a > b ? a : b;
}

/*
 * Place one edit (old -> new lines) in f; append its regions to out.
 * Returns the tier, or T_REFUSED with the reason in why; *line_out is the
 * 1-based first line it applies at.
 */
static int place(regions *out, const tlines *f, size_t edit, const char *old_text,
		 const char *new_text, uint32_t hint, uint32_t *line_out, sl_buf *why,
		 sl_buf *note)
{
	tlines o, nw;
	located loc;
	segs so = { 0 }, sn = { 0 };
	size_t n0 = out->n;
	int old_nl, new_nl, tier = T_REFUSED;
	sl_buf first_why = SL_BUF_INIT;

	split_text(&o, old_text, strlen(old_text));
	split_text(&nw, new_text, strlen(new_text));
	old_nl = o.final_nl;
	new_nl = nw.final_nl;
	*line_out = hint;

	if (!o.n) {
		/* pure insertion after line `hint` (0: at the top) */
		region *g;

		if (hint > f->n) {
			sl_buf_addf(why, "it inserts after line %u, but the file has %zu lines; "
				    "include context lines", hint, f->n);
			goto done;
		}
		if (!hint && f->n) {
			sl_buf_adds(why, "it has no old lines and no line number; include context "
				    "lines around the new ones");
			goto done;
		}
		g = region_add(out, edit, hint, 0);
		render_region(&g->text, f, hint, NULL, 0, 1, nw.v, nw.n, new_nl,
			      &(shift){ 0, "", 0 });
		*line_out = hint + 1;
		tier = T_EXACT;
		goto done;
	}
	if (!locate(&loc, f, o.v, o.n, hint, &first_why)) {
		region *g = region_add(out, edit, loc.at, o.n);

		render_region(&g->text, f, loc.at, o.v, o.n, old_nl, nw.v, nw.n, new_nl, &loc.sh);
		*line_out = (uint32_t)loc.at + 1;
		tier = loc.tier;
		if (hint && loc.at + 1 != hint)
			sl_buf_addf(note, "the edit names line %u; applied at line %zu", hint,
				    loc.at + 1);
		if (loc.tier == T_WS && loc.sh.dir)
			sl_buf_addf(note, "%sindentation shifted by %s%zu byte%s", note->len ? "; " : "",
				    loc.sh.dir > 0 ? "+" : "-", loc.sh.len, loc.sh.len == 1 ? "" : "s");
		goto done;
	}
	/* elided context: locate the pieces between "..." lines one by one */
	split_elided(&so, o.v, o.n);
	split_elided(&sn, nw.v, nw.n);
	if (so.n > 1) {
		size_t prev_end = 0;

		if (sn.n != so.n) {
			sl_buf_addf(why, "it elides lines with '...' (%zu gaps in the old lines, %zu in "
				    "the new); write the lines out in full", so.n - 1,
				    sn.n ? sn.n - 1 : 0);
			goto done;
		}
		tier = T_EXACT;
		for (size_t k = 0; k < so.n; k++) {
			located sl;
			region *g;
			sl_buf pw = SL_BUF_INIT;

			if (!so.len[k]) {
				if (!sn.len[k])
					continue;
				sl_buf_adds(why, "it adds lines next to a '...' gap, where they cannot "
					    "be placed; write the lines around them out in full");
				tier = T_REFUSED;
				break;
			}
			if (locate(&sl, f, o.v + so.start[k], so.len[k], k ? 0 : hint, &pw) ||
			    sl.at < prev_end) {
				if (!pw.len)
					sl_buf_adds(&pw, "it is out of order");
				sl_buf_addf(why, "it elides lines with '...'; its piece %zu (%zu lines): ",
					    k + 1, so.len[k]);
				sl_buf_add(why, pw.buf, pw.len);
				sl_buf_release(&pw);
				tier = T_REFUSED;
				break;
			}
			sl_buf_release(&pw);
			g = region_add(out, edit, sl.at, so.len[k]);
			render_region(&g->text, f, sl.at, o.v + so.start[k], so.len[k],
				      k + 1 == so.n ? old_nl : 1, nw.v + sn.start[k], sn.len[k],
				      k + 1 == sn.n ? new_nl : 1, &sl.sh);
			prev_end = sl.at + so.len[k];
			if (out->n == n0 + 1)
				*line_out = (uint32_t)sl.at + 1;
			tier = worse(tier, sl.tier);
		}
		if (tier != T_REFUSED)
			sl_buf_addf(note, "%selided context: %zu pieces located separately",
				    note->len ? "; " : "", out->n - n0);
		goto done;
	}
	sl_buf_add(why, first_why.buf, first_why.len);
done:
	if (tier == T_REFUSED) {
		while (out->n > n0)
			sl_buf_release(&out->v[--out->n].text);
	}
	segs_release(&so);
	segs_release(&sn);
	sl_buf_release(&first_why);
	tlines_release(&o);
	tlines_release(&nw);
	return tier;
}

static int cmp_region(const void *a, const void *b)
{
	const region *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;    /* an insertion before a region at the same line */
	return x->edit < y->edit ? -1 : x->edit > y->edit;
}

/* Content with the regions (sorted, disjoint) replaced. */
static void render_file(sl_buf *out, const tlines *f, const regions *r)
{
	size_t pos = 0;

	for (size_t i = 0; i < r->n; i++) {
		size_t s = line_off(f, r->v[i].at), e = line_off(f, r->v[i].at + r->v[i].n);

		sl_buf_add(out, f->base + pos, s - pos);
		sl_buf_add(out, r->v[i].text.buf, r->v[i].text.len);
		pos = e;
	}
	sl_buf_add(out, f->base + pos, f->total - pos);
}

/* ---- files and paths -------------------------------------------------------- */

typedef struct file_state {
	char *path;
	int existed, deleted, created, loaded;
	int refused;                /* loading it was refused: reason in why */
	char *why;
	unsigned mode;
	sl_buf content;
} file_state;

typedef struct apply_ctx {
	git_repository *repo;
	git_tree *tree;
	const sl_apply_opts *opts;
	file_state *files;
	size_t nfiles, afiles;
	sl_apply_item *items;
	size_t *file_of;            /* per edit: index into files, SIZE_MAX if refused early */
	sl_strvec tree_paths;       /* every blob path of the base, loaded on demand */
	int have_tree_paths;
} apply_ctx;

static int component_is_git(const char *p, size_t n)
{
	/* ".git" in any case, also with trailing dots/spaces (NTFS) and its 8.3 name */
	while (n && (p[n - 1] == '.' || p[n - 1] == ' '))
		n--;
	return (n == 4 && !strncasecmp(p, ".git", 4)) || (n == 5 && !strncasecmp(p, "git~1", 5));
}

/* The path's own syntax; returns 0 or writes a reason. */
static int path_syntax(const char *path, sl_buf *why)
{
	const char *p = path;

	if (!*path) {
		sl_buf_adds(why, "the edit names an empty path");
		return -1;
	}
	if (path[0] == '/') {
		sl_buf_addf(why, "refusing absolute path '%s'", path);
		return -1;
	}
	for (const char *c = path; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			sl_buf_adds(why, "refusing a path with control characters");
			return -1;
		}
	}
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if ((n == 2 && !strncmp(p, "..", 2)) || (n == 1 && *p == '.') || n == 0) {
			sl_buf_addf(why, "refusing path '%s': it contains '%.*s'", path, (int)n, p);
			return -1;
		}
		if (component_is_git(p, n)) {
			sl_buf_addf(why, "refusing path '%s': it is under .git", path);
			return -1;
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	return 0;
}

static int path_allowed(const apply_ctx *x, const char *path, sl_buf *why)
{
	if (!x->opts->allowed_globs || !x->opts->nglobs)
		return 0;
	for (size_t i = 0; i < x->opts->nglobs; i++)
		if (sl_glob_match(x->opts->allowed_globs[i], path))
			return 0;
	sl_buf_addf(why, "refusing path '%s': outside the campaign's allowed paths (", path);
	for (size_t i = 0; i < x->opts->nglobs && i < 5; i++)
		sl_buf_addf(why, "%s%s", i ? ", " : "", x->opts->allowed_globs[i]);
	sl_buf_adds(why, x->opts->nglobs > 5 ? ", ...)" : ")");
	return -1;
}

/* Every parent component must be a directory of the base tree (or absent). */
static int path_parents(const apply_ctx *x, const char *path, sl_buf *why)
{
	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		char *prefix = sl_xstrndup(path, (size_t)(s - path));
		git_tree_entry *e = NULL;
		int bad = 0;

		if (!git_tree_entry_bypath(&e, x->tree, prefix) &&
		    git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			bad = 1;
			sl_buf_addf(why, "refusing path '%s': '%s' is %s in the base tree", path, prefix,
				    git_tree_entry_filemode(e) == GIT_FILEMODE_LINK ?
				    "a symbolic link" : git_tree_entry_type(e) == GIT_OBJECT_COMMIT ?
				    "a submodule" : "a file");
		}
		git_tree_entry_free(e);
		free(prefix);
		if (bad)
			return -1;
	}
	return 0;
}

static int check_path(const apply_ctx *x, const char *path, sl_buf *why)
{
	return path_syntax(path, why) || path_allowed(x, path, why) || path_parents(x, path, why) ?
		-1 : 0;
}

static int load_file(apply_ctx *x, file_state *f, sl_err *err)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int ret = SL_ERROR;
	sl_buf why = SL_BUF_INIT;

	f->loaded = 1;
	if (git_tree_entry_bypath(&entry, x->tree, f->path)) {
		f->existed = 0;
		f->mode = GIT_FILEMODE_BLOB;
		return SL_OK;
	}
	if (git_tree_entry_type(entry) == GIT_OBJECT_TREE) {
		sl_buf_addf(&why, "refusing to edit '%s': it is a directory", f->path);
	} else if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
		sl_buf_addf(&why, "refusing to edit '%s': it is a submodule", f->path);
	} else if (git_tree_entry_filemode(entry) == GIT_FILEMODE_LINK) {
		sl_buf_addf(&why, "refusing to edit '%s': it is a symbolic link", f->path);
	} else if (git_blob_lookup(&blob, x->repo, git_tree_entry_id(entry))) {
		sl_err_set(err, SL_ERROR, "cannot read '%s': %s", f->path, sl_git_error());
		goto done;
	} else if (git_blob_is_binary(blob)) {
		sl_buf_addf(&why, "refusing to edit binary file '%s'", f->path);
	} else {
		f->existed = 1;
		f->mode = git_tree_entry_filemode(entry);
		sl_buf_add(&f->content, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	}
	if (why.len) {
		f->refused = 1;
		f->why = sl_buf_detach(&why, NULL);
	}
	ret = SL_OK;
done:
	sl_buf_release(&why);
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return ret;
}

static size_t file_index(apply_ctx *x, const char *path, sl_err *err)
{
	file_state *f;

	for (size_t i = 0; i < x->nfiles; i++)
		if (!strcmp(x->files[i].path, path))
			return i;
	SL_ALLOC_GROW(x->files, x->nfiles + 1, x->afiles);
	f = &x->files[x->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = sl_xstrdup(path);
	sl_buf_init(&f->content, 0);
	x->nfiles++;
	if (load_file(x, f, err))
		return SIZE_MAX;
	return x->nfiles - 1;
}

static int collect_path(const char *root, const git_tree_entry *e, void *payload)
{
	sl_strvec *sv = payload;
	sl_buf b = SL_BUF_INIT;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	if (sv->n >= 100000)
		return -1;
	sl_buf_addf(&b, "%s%s", root, git_tree_entry_name(e));
	sl_strvec_push_nodup(sv, sl_buf_detach(&b, NULL));
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, best;

	if (la > 256 || lb > 256)
		return SIZE_MAX;
	row = sl_xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

/*
 * The path does not exist: the one base file with its base name, or NULL
 * with a reason naming the candidates (or the nearest path).
 */
static char *redirect(apply_ctx *x, const char *path, sl_buf *why)
{
	const char *bn = base_name(path), *found = NULL, *near = NULL;
	size_t nfound = 0, best = SIZE_MAX;
	sl_buf names = SL_BUF_INIT;

	if (!x->have_tree_paths) {
		git_tree_walk(x->tree, GIT_TREEWALK_PRE, collect_path, &x->tree_paths);
		x->have_tree_paths = 1;
	}
	for (size_t i = 0; i < x->tree_paths.n; i++) {
		const char *p = x->tree_paths.v[i];
		size_t d;

		if (!strcmp(base_name(p), bn)) {
			if (nfound < 5)
				sl_buf_addf(&names, "%s'%s'", nfound ? ", " : "", p);
			found = p;
			nfound++;
		}
		d = edit_distance(path, p);
		if (d < best) {
			best = d;
			near = p;
		}
	}
	if (nfound == 1) {
		sl_buf_release(&names);
		return sl_xstrdup(found);
	}
	if (nfound > 1)
		sl_buf_addf(why, "file '%s' does not exist; files named '%s': %s%s; use the full "
			    "path", path, bn, names.buf, nfound > 5 ? ", ..." : "");
	else if (near)
		sl_buf_addf(why, "file '%s' does not exist; the nearest path is '%s'", path, near);
	else
		sl_buf_addf(why, "file '%s' does not exist", path);
	sl_buf_release(&names);
	return NULL;
}

static int creates_file(const sl_edit *e)
{
	if (e->kind == SL_EDIT_HUNK)
		return e->new_file || (!*e->old_text && !e->old_line);
	if (e->kind == SL_EDIT_REPLACE)
		return !*e->old_text;
	return 0;
}

static void refuse(sl_apply_item *it, sl_buf *why)
{
	it->tier = tier_names[T_REFUSED];
	free(it->reason);
	it->reason = sl_buf_detach(why, NULL);
}

static void note(sl_apply_item *it, sl_buf *n)
{
	if (!n->len)
		return;
	if (it->reason) {
		sl_buf b = SL_BUF_INIT;

		sl_buf_addf(&b, "%s; %s", it->reason, n->buf);
		free(it->reason);
		it->reason = sl_buf_detach(&b, NULL);
		sl_buf_reset(n);
	} else {
		it->reason = sl_buf_detach(n, NULL);
	}
}

/* ---- per kind ------------------------------------------------------------ */

static void do_splices(apply_ctx *x, size_t fi, const sl_edit_list *edits)
{
	file_state *f = &x->files[fi];
	size_t *idx = sl_xcalloc(edits->n ? edits->n : 1, sizeof(*idx)), n = 0;
	sl_buf out = SL_BUF_INIT;
	size_t pos = 0;
	int bad = 0;

	for (size_t i = 0; i < edits->n; i++)
		if (x->file_of[i] == fi && edits->v[i].kind == SL_EDIT_SPLICE)
			idx[n++] = i;
	/* insertion sort by start: few splices per file */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && edits->v[idx[j]].start < edits->v[idx[j - 1]].start; j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (size_t k = 0; k < n; k++) {
		const sl_edit *e = &edits->v[idx[k]];
		sl_apply_item *it = &x->items[idx[k]];
		size_t ol = strlen(e->old_text);
		sl_buf why = SL_BUF_INIT;

		it->line = sl_line_of(f->content.buf, f->content.len, e->start);
		if (e->end < e->start || e->end > f->content.len || e->end - e->start != ol ||
		    memcmp(f->content.buf + e->start, e->old_text, ol))
			sl_buf_addf(&why, "the text at bytes %u-%u of '%s' is not what the edit expects",
				    e->start, e->end, f->path);
		else if (k && e->start < edits->v[idx[k - 1]].end)
			sl_buf_addf(&why, "edits at bytes %u and %u of '%s' overlap",
				    edits->v[idx[k - 1]].start, e->start, f->path);
		if (why.len) {
			refuse(it, &why);
			bad = 1;
			continue;
		}
		it->tier = tier_names[T_EXACT];
		if (!bad) {
			sl_buf_add(&out, f->content.buf + pos, e->start - pos);
			sl_buf_adds(&out, e->new_text);
			pos = e->end;
		}
	}
	if (n && !bad) {
		sl_buf_add(&out, f->content.buf + pos, f->content.len - pos);
		sl_buf_release(&f->content);
		f->content = out;
		sl_buf_init(&out, 0);
	}
	sl_buf_release(&out);
	free(idx);
}

/* A hunk that creates or deletes the whole file; 1 if it was one. */
static int whole_file_hunk(file_state *f, const sl_edit *e, sl_apply_item *it)
{
	sl_buf why = SL_BUF_INIT;

	if (e->delete_file) {
		tlines fl, ol;
		shift sh;

		split_text(&fl, f->content.buf, f->content.len);
		split_text(&ol, e->old_text, strlen(e->old_text));
		if (!f->existed || f->deleted)
			sl_buf_addf(&why, "it deletes '%s', which does not exist", f->path);
		else if (*e->old_text && (fl.n != ol.n || !match_ws(&fl, 0, ol.v, ol.n, &sh)))
			sl_buf_addf(&why, "it deletes '%s' but its lines differ from the file",
				    f->path);
		tlines_release(&fl);
		tlines_release(&ol);
		if (!why.len) {
			f->deleted = 1;
			sl_buf_reset(&f->content);
			it->tier = tier_names[T_EXACT];
			it->line = 1;
		}
	} else if (e->new_file || (!*e->old_text && !f->existed && !f->created)) {
		if ((f->existed && !f->deleted) || f->created) {
			sl_buf_addf(&why, "it creates '%s', which already exists; write a hunk against "
				    "its current lines", f->path);
		} else {
			sl_buf_reset(&f->content);
			sl_buf_adds(&f->content, e->new_text);
			f->created = 1;
			f->deleted = 0;
			it->tier = tier_names[T_EXACT];
			it->line = 1;
		}
	} else {
		return 0;
	}
	if (why.len)
		refuse(it, &why);
	return 1;
}

static void do_hunks(apply_ctx *x, size_t fi, const sl_edit_list *edits)
{
	file_state *f = &x->files[fi];
	regions rg = { NULL, 0, 0 };
	tlines fl;
	int bad = 0, any = 0;
	sl_buf out = SL_BUF_INIT;

	split_text(&fl, f->content.buf, f->content.len);
	for (size_t i = 0; i < edits->n; i++) {
		const sl_edit *e = &edits->v[i];
		sl_apply_item *it = &x->items[i];
		sl_buf why = SL_BUF_INIT, nt = SL_BUF_INIT;
		uint32_t line;
		int tier;

		if (x->file_of[i] != fi || e->kind != SL_EDIT_HUNK)
			continue;
		if (whole_file_hunk(f, e, it)) {
			if (it->tier == tier_names[T_REFUSED])
				bad = 1;
			/* a later hunk works on the new content */
			tlines_release(&fl);
			split_text(&fl, f->content.buf, f->content.len);
			continue;
		}
		if ((!f->existed && !f->created) || f->deleted) {
			sl_buf_addf(&why, "file '%s' does not exist", f->path);
			refuse(it, &why);
			bad = 1;
			continue;
		}
		any = 1;
		tier = place(&rg, &fl, i, e->old_text, e->new_text, e->old_line, &line, &why, &nt);
		it->line = line;
		if (tier == T_REFUSED) {
			refuse(it, &why);
			bad = 1;
		} else {
			it->tier = tier_names[tier];
			note(it, &nt);
		}
		sl_buf_release(&why);
		sl_buf_release(&nt);
	}
	if (rg.n)
		qsort(rg.v, rg.n, sizeof(*rg.v), cmp_region);
	for (size_t k = 1; k < rg.n; k++) {
		const region *a = &rg.v[k - 1], *b = &rg.v[k];

		if (a->edit != b->edit && b->at < a->at + a->n) {
			size_t late = a->edit > b->edit ? a->edit : b->edit;
			size_t early = a->edit > b->edit ? b->edit : a->edit;
			sl_buf why = SL_BUF_INIT;

			sl_buf_addf(&why, "it overlaps edit %zu (both change lines %zu-%zu); merge them "
				    "into one hunk", early + 1, b->at + 1,
				    (a->at + a->n < b->at + b->n ? a->at + a->n : b->at + b->n));
			if (x->items[late].tier != tier_names[T_REFUSED])
				refuse(&x->items[late], &why);
			sl_buf_release(&why);
			bad = 1;
		}
	}
	if (any && !bad) {
		render_file(&out, &fl, &rg);
		sl_buf_release(&f->content);
		f->content = out;
		sl_buf_init(&out, 0);
	}
	sl_buf_release(&out);
	regions_release(&rg);
	tlines_release(&fl);
}

static void do_replaces(apply_ctx *x, size_t fi, const sl_edit_list *edits)
{
	file_state *f = &x->files[fi];

	for (size_t i = 0; i < edits->n; i++) {
		const sl_edit *e = &edits->v[i];
		sl_apply_item *it = &x->items[i];
		sl_buf why = SL_BUF_INIT, nt = SL_BUF_INIT, out = SL_BUF_INIT;
		regions rg = { NULL, 0, 0 };
		tlines fl;
		uint32_t line;
		int tier;

		if (x->file_of[i] != fi || e->kind != SL_EDIT_REPLACE)
			continue;
		if (!*e->old_text) {
			if ((f->existed && !f->deleted && f->content.len) || f->created) {
				sl_buf_addf(&why, "it creates '%s', but that file already exists; quote "
					    "the lines to replace", f->path);
				refuse(it, &why);
			} else {
				sl_buf_reset(&f->content);
				sl_buf_adds(&f->content, e->new_text);
				f->created = !f->existed;
				f->deleted = 0;
				it->tier = tier_names[T_EXACT];
				it->line = 1;
			}
			continue;
		}
		if ((!f->existed && !f->created) || f->deleted) {
			sl_buf_addf(&why, "file '%s' does not exist", f->path);
			refuse(it, &why);
			continue;
		}
		split_text(&fl, f->content.buf, f->content.len);
		tier = place(&rg, &fl, i, e->old_text, e->new_text, 0, &line, &why, &nt);
		it->line = line;
		if (tier == T_REFUSED) {
			refuse(it, &why);
		} else {
			it->tier = tier_names[tier];
			note(it, &nt);
			if (rg.n)
		qsort(rg.v, rg.n, sizeof(*rg.v), cmp_region);
			render_file(&out, &fl, &rg);
			sl_buf_release(&f->content);
			f->content = out;
			sl_buf_init(&out, 0);
		}
		tlines_release(&fl);
		regions_release(&rg);
		sl_buf_release(&why);
		sl_buf_release(&nt);
		sl_buf_release(&out);
	}
}

static const char *kind_name(int kind)
{
	return kind == SL_EDIT_SPLICE ? "splice" : kind == SL_EDIT_REPLACE ? "replace" : "hunk";
}

/* Resolve and check the path of edit i; sets x->file_of[i] or refuses the item. */
static int resolve_edit(apply_ctx *x, const sl_edit_list *edits, size_t i, size_t *total,
			sl_err *err)
{
	const sl_edit *e = &edits->v[i];
	sl_apply_item *it = &x->items[i];
	sl_buf why = SL_BUF_INIT, nt = SL_BUF_INIT;
	size_t fi, nl = strlen(e->new_text);
	size_t max_edit = x->opts->max_edit_bytes ? x->opts->max_edit_bytes : SL_CAP_EDIT_BYTES;
	size_t max_total = x->opts->max_total_bytes ? x->opts->max_total_bytes : SL_CAP_EDITS_TOTAL_BYTES;
	char *alt = NULL;

	x->file_of[i] = SIZE_MAX;
	it->kind = kind_name(e->kind);
	it->path = sl_xstrdup(e->path ? e->path : "");
	it->line = e->kind == SL_EDIT_HUNK ? e->old_line : 0;
	*total += nl;
	/* the written path's syntax and parents; the allowed globs on the final path */
	if (!e->path || path_syntax(e->path, &why) || path_parents(x, e->path, &why))
		goto refused;
	if (nl > max_edit) {
		sl_buf_addf(&why, "the edit's new text is %zu bytes; the limit is %zu per edit: "
			    "split it into smaller edits", nl, max_edit);
		goto refused;
	}
	if (*total > max_total) {
		sl_buf_addf(&why, "the edits' new text passes %zu bytes in all; change less at once",
			    max_total);
		goto refused;
	}
	if ((fi = file_index(x, e->path, err)) == SIZE_MAX)
		return SL_ERROR;
	if (!x->files[fi].existed && !x->files[fi].refused && !creates_file(e)) {
		int created_earlier = 0;

		for (size_t k = 0; k < i; k++)
			if (x->file_of[k] == fi && creates_file(&edits->v[k]))
				created_earlier = 1;
		if (!created_earlier) {
			if (!(alt = redirect(x, e->path, &why)))
				goto refused;
			if (check_path(x, alt, &why))
				goto refused;
			if ((fi = file_index(x, alt, err)) == SIZE_MAX) {
				free(alt);
				return SL_ERROR;
			}
			sl_buf_addf(&nt, "'%s' does not exist; applied to '%s', the only file with "
				    "that name", e->path, alt);
			free(it->path);
			it->path = alt;
			alt = NULL;
		}
	}
	if (path_allowed(x, x->files[fi].path, &why))
		goto refused;
	if (x->files[fi].refused) {
		sl_buf_adds(&why, x->files[fi].why);
		goto refused;
	}
	x->file_of[i] = fi;
	note(it, &nt);
	sl_buf_release(&nt);
	return SL_OK;
refused:
	free(alt);
	refuse(it, &why);
	sl_buf_release(&nt);
	return SL_OK;
}

static int signature(git_signature **out, git_repository *repo)
{
	if (!git_signature_default(out, repo))
		return 0;
	return git_signature_now(out, "sluice", "sluice@localhost");
}

int sl_apply_edits_ext(git_oid *commit_out, sl_buf *diff_out, git_repository *repo,
		       const git_oid *base, const sl_edit_list *edits, const char *message,
		       const sl_apply_opts *opts, sl_apply_report *report, sl_err *err)
{
	apply_ctx x;
	sl_apply_opts dflt = SL_APPLY_OPTS_INIT;
	git_commit *base_commit = NULL;
	git_tree *new_tree = NULL;
	git_tree_update *updates = NULL;
	git_signature *sig = NULL;
	git_diff *diff = NULL;
	git_buf dbuf = { 0 };
	sl_buf msg = SL_BUF_INIT;
	size_t nupd = 0, total = 0, nrefused = 0;
	size_t max_file;
	git_oid tree_oid;
	int ret = SL_ERROR;

	memset(&x, 0, sizeof(x));
	x.repo = repo;
	x.opts = opts ? opts : &dflt;
	max_file = x.opts->max_file_bytes ? x.opts->max_file_bytes : SL_CAP_EDITED_FILE_BYTES;
	sl_apply_report_release(report);
	if (!edits->n) {
		ret = sl_err_set(err, SL_EREFUSED, "the reply contains no edit");
		goto done;
	}
	if (git_commit_lookup(&base_commit, repo, base) || git_commit_tree(&x.tree, base_commit)) {
		sl_err_set(err, SL_ERROR, "cannot read base commit: %s", sl_git_error());
		goto done;
	}
	x.items = sl_xcalloc(edits->n, sizeof(*x.items));
	x.file_of = sl_xcalloc(edits->n, sizeof(*x.file_of));
	for (size_t i = 0; i < edits->n; i++)
		if (resolve_edit(&x, edits, i, &total, err))
			goto done;
	for (size_t i = 0; i < x.nfiles; i++) {
		do_splices(&x, i, edits);
		do_hunks(&x, i, edits);
		do_replaces(&x, i, edits);
	}
	for (size_t i = 0; i < x.nfiles; i++) {
		file_state *f = &x.files[i];
		int changed = 0;

		for (size_t k = 0; k < edits->n; k++)
			if (x.file_of[k] == i && x.items[k].tier != tier_names[T_REFUSED])
				changed = 1;
		if (changed && f->content.len > max_file) {
			for (size_t k = 0; k < edits->n; k++) {
				sl_buf why = SL_BUF_INIT;

				if (x.file_of[k] != i || x.items[k].tier == tier_names[T_REFUSED])
					continue;
				sl_buf_addf(&why, "'%s' would grow to %zu bytes; the limit is %zu",
					    f->path, f->content.len, max_file);
				refuse(&x.items[k], &why);
			}
		}
	}
	/* a file the candidate creates cannot also be a directory of another path */
	for (size_t i = 0; i < x.nfiles; i++) {
		const file_state *f = &x.files[i];
		size_t n = strlen(f->path);

		if (!f->created || f->deleted)
			continue;
		for (size_t k = 0; k < edits->n; k++) {
			const char *p = x.items[k].path;
			sl_buf why = SL_BUF_INIT;

			if (!p || x.items[k].tier == tier_names[T_REFUSED] || strncmp(p, f->path, n) ||
			    p[n] != '/')
				continue;
			sl_buf_addf(&why, "refusing path '%s': '%s' is a file the candidate creates",
				    p, f->path);
			refuse(&x.items[k], &why);
		}
	}
	for (size_t i = 0; i < edits->n; i++) {
		if (!x.items[i].tier)
			x.items[i].tier = tier_names[T_REFUSED];    /* not reached: BUG guard */
		if (x.items[i].tier != tier_names[T_REFUSED])
			continue;
		if (nrefused++ < 8)
			sl_buf_addf(&msg, "%s%s %zu for '%s': %s", msg.len ? "\n" : "",
				    edits->v[i].kind == SL_EDIT_HUNK ? "hunk" : "edit", i + 1,
				    x.items[i].path, x.items[i].reason ? x.items[i].reason : "refused");
	}
	if (nrefused) {
		if (nrefused > 8)
			sl_buf_addf(&msg, "\n(%zu more refused)", nrefused - 8);
		ret = sl_err_set(err, SL_EREFUSED, "%s", msg.buf);
		goto done;
	}

	updates = sl_xcalloc(x.nfiles ? x.nfiles : 1, sizeof(*updates));
	for (size_t i = 0; i < x.nfiles; i++) {
		file_state *f = &x.files[i];
		git_tree_update *u = &updates[nupd];
		int used = 0;

		for (size_t k = 0; k < edits->n; k++)
			if (x.file_of[k] == i)
				used = 1;
		if (!used || (f->deleted && !f->existed) || (!f->existed && !f->created))
			continue;
		u->path = f->path;
		if (f->deleted) {
			u->action = GIT_TREE_UPDATE_REMOVE;
		} else {
			u->action = GIT_TREE_UPDATE_UPSERT;
			u->filemode = f->mode;
			if (git_blob_create_from_buffer(&u->id, repo, f->content.buf, f->content.len)) {
				sl_err_set(err, SL_ERROR, "cannot write blob: %s", sl_git_error());
				goto done;
			}
		}
		nupd++;
	}
	if (git_tree_create_updated(&tree_oid, repo, x.tree, nupd, updates) ||
	    git_tree_lookup(&new_tree, repo, &tree_oid)) {
		sl_err_set(err, SL_ERROR, "cannot write tree: %s", sl_git_error());
		goto done;
	}
	if (git_oid_equal(&tree_oid, git_tree_id(x.tree))) {
		ret = sl_err_set(err, SL_EREFUSED, "the edits change nothing");
		goto done;
	}
	if (signature(&sig, repo) ||
	    git_commit_create(commit_out, repo, NULL, sig, sig, NULL, message, new_tree, 1,
			      (const git_commit **)&base_commit)) {
		sl_err_set(err, SL_ERROR, "cannot write commit: %s", sl_git_error());
		goto done;
	}
	if (diff_out) {
		if (git_diff_tree_to_tree(&diff, repo, x.tree, new_tree, NULL) ||
		    git_diff_to_buf(&dbuf, diff, GIT_DIFF_FORMAT_PATCH)) {
			sl_err_set(err, SL_ERROR, "cannot diff candidate: %s", sl_git_error());
			goto done;
		}
		sl_buf_add(diff_out, dbuf.ptr, dbuf.size);
	}
	ret = SL_OK;
done:
	if (report && x.items) {
		report->v = x.items;
		report->n = report->alloc = edits->n;
		x.items = NULL;
	}
	if (x.items) {
		for (size_t i = 0; i < edits->n; i++) {
			free(x.items[i].path);
			free(x.items[i].reason);
		}
		free(x.items);
	}
	for (size_t i = 0; i < x.nfiles; i++) {
		free(x.files[i].path);
		free(x.files[i].why);
		sl_buf_release(&x.files[i].content);
	}
	free(x.files);
	free(x.file_of);
	sl_strvec_release(&x.tree_paths);
	free(updates);
	sl_buf_release(&msg);
	git_buf_dispose(&dbuf);
	git_diff_free(diff);
	git_signature_free(sig);
	git_tree_free(new_tree);
	git_tree_free(x.tree);
	git_commit_free(base_commit);
	return ret;
}

int sl_commit_from_diff(git_oid *commit_out, git_repository *repo, const git_oid *base,
			const char *diff_text, const char *message, sl_err *err)
{
	git_commit *bc = NULL;
	git_tree *bt = NULL, *nt = NULL;
	git_diff *diff = NULL;
	git_index *idx = NULL;
	git_signature *sig = NULL;
	git_oid tree_oid;
	int ret = SL_ERROR;

	if (git_commit_lookup(&bc, repo, base) || git_commit_tree(&bt, bc) ||
	    git_diff_from_buffer(&diff, diff_text, strlen(diff_text)) ||
	    git_apply_to_tree(&idx, repo, bt, diff, NULL) ||
	    git_index_write_tree_to(&tree_oid, idx, repo) ||
	    git_tree_lookup(&nt, repo, &tree_oid) || signature(&sig, repo) ||
	    git_commit_create(commit_out, repo, NULL, sig, sig, NULL, message, nt, 1,
			      (const git_commit **)&bc)) {
		sl_err_set(err, SL_ERROR, "cannot rebuild a candidate from its diff: %s",
			   sl_git_error());
		goto done;
	}
	ret = SL_OK;
done:
	git_signature_free(sig);
	git_index_free(idx);
	git_diff_free(diff);
	git_tree_free(nt);
	git_tree_free(bt);
	git_commit_free(bc);
	return ret;
}

/* ---- worktrees ------------------------------------------------------------- */

struct sl_worktree {
	git_repository *repo;       /* borrowed */
	char *name, *path;
};

static void prune_admin(git_repository *repo, const char *name)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;

	/* never GIT_WORKTREE_PRUNE_WORKING_TREE: the directory is removed by sl_rm_rf */
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
	if (!git_worktree_lookup(&wt, repo, name)) {
		git_worktree_prune(wt, &po);
		git_worktree_free(wt);
	}
}

/*
 * The absolute, normalised form of a path that may not exist yet: the
 * longest existing prefix resolved by realpath, the rest appended.
 */
static char *resolve_loose(const char *path)
{
	char *cwd = NULL, *abs, *p, *res = NULL;
	sl_buf b = SL_BUF_INIT;
	size_t cut;

	if (path[0] != '/') {
		if (!(cwd = getcwd(NULL, 0)))
			return NULL;
		abs = sl_path_join(cwd, path);
		free(cwd);
	} else {
		abs = sl_xstrdup(path);
	}
	p = sl_xstrdup(abs);
	cut = strlen(p);
	for (;;) {
		if ((res = realpath(p, NULL)))
			break;
		while (cut > 0 && p[cut - 1] != '/')
			cut--;
		if (cut <= 1) {
			res = sl_xstrdup("/");
			cut = 1;
			break;
		}
		p[--cut] = '\0';
	}
	sl_buf_adds(&b, res);
	if (abs[cut])
		sl_buf_addf(&b, "%s%s", b.len && b.buf[b.len - 1] == '/' ? "" : "/",
			    abs[cut] == '/' ? abs + cut + 1 : abs + cut);
	free(res);
	free(p);
	free(abs);
	return sl_buf_detach(&b, NULL);
}

int sl_worktree_root_check(git_repository *repo, const char *root, sl_err *err)
{
	const char *dirs[2] = { git_repository_workdir(repo), git_repository_path(repo) };
	char *r = resolve_loose(root);
	int ret = SL_OK;

	if (!r)
		return sl_err_set(err, SL_ERROR, "cannot resolve '%s': %s", root, strerror(errno));
	for (int i = 0; i < 2 && !ret; i++) {
		char *d;

		if (!dirs[i])
			continue;
		d = resolve_loose(dirs[i]);
		if (d && sl_path_is_under(r, d))
			ret = sl_err_set(err, SL_EINPUT, "scratch root '%s' is inside the repository "
					 "'%s'; choose a directory outside it", root, d);
		free(d);
	}
	free(r);
	return ret;
}

int sl_worktree_add(sl_worktree **out, git_repository *repo, const char *root,
		    const char *name, const char *branch, const git_oid *commit, sl_err *err)
{
	git_worktree_add_options opts;
	git_commit *c = NULL;
	git_reference *ref = NULL;
	git_worktree *gwt = NULL;
	sl_worktree *wt = NULL;
	int ret = SL_ERROR;

	*out = NULL;
	if ((ret = sl_worktree_root_check(repo, root, err)))
		return ret;
	ret = SL_ERROR;
	wt = sl_xcalloc(1, sizeof(*wt));
	git_worktree_add_options_init(&opts, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	wt->repo = repo;
	wt->name = sl_xstrdup(name);
	wt->path = sl_path_join(root, name);
	if (sl_mkdir_p(root, 0700, err) || sl_rm_rf(wt->path, err))
		goto done;
	prune_admin(repo, name);
	if (git_commit_lookup(&c, repo, commit) || git_branch_create(&ref, repo, branch, c, 1)) {
		sl_err_set(err, SL_ERROR, "cannot create branch '%s': %s", branch, sl_git_error());
		goto done;
	}
	opts.ref = ref;
	opts.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_worktree_add(&gwt, repo, name, wt->path, &opts)) {
		sl_err_set(err, SL_ERROR, "cannot create worktree '%s': %s", wt->path,
			   sl_git_error());
		goto done;
	}
	*out = wt;
	wt = NULL;
	ret = SL_OK;
done:
	git_worktree_free(gwt);
	git_reference_free(ref);
	git_commit_free(c);
	if (wt) {
		sl_rm_rf(wt->path, NULL);
		prune_admin(repo, wt->name);
		free(wt->name);
		free(wt->path);
		free(wt);
	}
	return ret;
}

const char *sl_worktree_path(const sl_worktree *wt)
{
	return wt->path;
}

int sl_worktree_remove(sl_worktree *wt, sl_err *err)
{
	int ret;

	if (!wt)
		return SL_OK;
	ret = sl_rm_rf(wt->path, err);
	prune_admin(wt->repo, wt->name);
	free(wt->name);
	free(wt->path);
	free(wt);
	return ret;
}

int sl_no_reflog_config(int *fd_out, char **path_out, sl_err *err)
{
	static const char text[] = "[core]\n\tlogAllRefUpdates = false\n";
	int fd = memfd_create("sluice-no-reflog", MFD_CLOEXEC);
	sl_buf b = SL_BUF_INIT;

	*fd_out = -1;
	*path_out = NULL;
	if (fd < 0 || sl_write_all(fd, text, sizeof(text) - 1)) {
		if (fd >= 0)
			close(fd);
		return sl_err_set(err, SL_ERROR, "cannot make a configuration file: %s",
				  strerror(errno));
	}
	sl_buf_addf(&b, "/proc/self/fd/%d", fd);
	*fd_out = fd;
	*path_out = sl_buf_detach(&b, NULL);
	return SL_OK;
}

int sl_repo_no_reflog(git_repository *repo, const char *cfg_path, sl_err *err)
{
	git_config *cfg = NULL;
	char *local = sl_path_join(git_repository_commondir(repo), "config");
	int ret = SL_ERROR;

	if (git_config_new(&cfg) ||
	    git_config_add_file_ondisk(cfg, local, GIT_CONFIG_LEVEL_LOCAL, repo, 0) ||
	    git_config_add_file_ondisk(cfg, cfg_path, GIT_CONFIG_LEVEL_APP, repo, 0) ||
	    git_repository_set_config(repo, cfg)) {
		sl_err_set(err, SL_ERROR, "cannot read the configuration of '%s': %s",
			   git_repository_commondir(repo), sl_git_error());
		goto done;
	}
	ret = SL_OK;
done:
	git_config_free(cfg);
	free(local);
	return ret;
}

/* The PID in a name "sl-PID-N" or "sl-base-PID" (a warm base), or 0. */
static long name_pid(const char *name)
{
	const char *s = name + 3;
	char *end;
	long pid;
	int base;

	if (strncmp(name, "sl-", 3))
		return 0;
	base = !strncmp(s, "base-", 5);
	if (base)
		s += 5;
	if (!isdigit((unsigned char)*s))
		return 0;
	pid = strtol(s, &end, 10);
	if (pid <= 0 || (base ? *end != '\0' : *end != '-' || !isdigit((unsigned char)end[1])))
		return 0;
	return pid;
}

/* A worktree of another sluice process that is still running. */
static int held_by_live_process(const char *name)
{
	long pid = name_pid(name);

	if (!pid || pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/*
 * A worktree whose admin directory a killed process left without its
 * files (HEAD.lock, no gitdir): libgit2 cannot open it, yet it keeps its
 * branch "checked out".  Remove the admin directory, and the checkout of
 * that name under the root.
 */
static void remove_half_made(git_repository *repo, const char *root)
{
	sl_buf admin = SL_BUF_INIT, path = SL_BUF_INIT;
	DIR *d;
	struct dirent *de;

	sl_buf_addf(&admin, "%sworktrees", git_repository_commondir(repo));
	if (!(d = opendir(admin.buf))) {
		sl_buf_release(&admin);
		return;
	}
	while ((de = readdir(d))) {
		git_worktree *wt = NULL;

		if (!name_pid(de->d_name) || held_by_live_process(de->d_name))
			continue;
		if (!git_worktree_lookup(&wt, repo, de->d_name)) {
			git_worktree_free(wt);       /* whole: the caller's loop removes it */
			continue;
		}
		/* another run may be sweeping it too: errors do not matter */
		sl_buf_reset(&path);
		sl_buf_addf(&path, "%s/%s", admin.buf, de->d_name);
		sl_rm_rf(path.buf, NULL);
		sl_buf_reset(&path);
		sl_buf_addf(&path, "%s/%s", root, de->d_name);
		sl_rm_rf(path.buf, NULL);
	}
	closedir(d);
	sl_buf_release(&admin);
	sl_buf_release(&path);
}

int sl_worktree_cleanup_count(git_repository *repo, const char *root, size_t *removed_out,
			      sl_err *err)
{
	git_strarray names = { 0 };
	char *rroot = resolve_loose(root);
	int ret = SL_OK;

	if (removed_out)
		*removed_out = 0;
	remove_half_made(repo, root);
	if (git_worktree_list(&names, repo)) {
		free(rroot);
		return sl_err_set(err, SL_ERROR, "cannot list worktrees: %s", sl_git_error());
	}
	for (size_t i = 0; i < names.count; i++) {
		git_worktree *wt = NULL;
		char *path = NULL, *rpath = NULL;

		/* only sluice's own worktrees: never one the user made under the root */
		if (strncmp(names.strings[i], "sl-", 3) ||
		    git_worktree_lookup(&wt, repo, names.strings[i]))
			continue;
		if (git_worktree_path(wt))
			path = sl_xstrdup(git_worktree_path(wt));
		git_worktree_free(wt);
		if (path)
			rpath = resolve_loose(path);
		if (path && (sl_path_is_under(path, root) ||
			     (rroot && rpath && sl_path_is_under(rpath, rroot))) &&
		    !held_by_live_process(names.strings[i])) {
			if (sl_rm_rf(path, err))
				ret = SL_ERROR;
			prune_admin(repo, names.strings[i]);
			if (removed_out)
				(*removed_out)++;
		}
		free(rpath);
		free(path);
	}
	git_strarray_dispose(&names);
	free(rroot);
	return ret;
}

int sl_worktree_cleanup(git_repository *repo, const char *root, sl_err *err)
{
	return sl_worktree_cleanup_count(repo, root, NULL, err);
}

static int sweep_dir(const char *dir, int depth, size_t *removed, sl_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = SL_OK;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? SL_OK :
			sl_err_set(err, SL_ERROR, "cannot read '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char *p;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = sl_path_join(dir, de->d_name);
		if (lstat(p, &st) || !S_ISDIR(st.st_mode)) {
			free(p);
			continue;
		}
		if (name_pid(de->d_name)) {
			char *gitfile = sl_path_join(p, ".git");
			struct stat gs;

			/* only checkouts we made: a "sl-PID-N" directory of a dead process */
			if (!held_by_live_process(de->d_name) && !lstat(gitfile, &gs)) {
				if (sl_rm_rf(p, err))
					ret = SL_ERROR;
				else
					(*removed)++;
			}
			free(gitfile);
		} else if (depth < 1) {
			if (sweep_dir(p, depth + 1, removed, err))
				ret = SL_ERROR;
		}
		free(p);
	}
	closedir(d);
	return ret;
}

int sl_worktree_sweep(const char *root, size_t *removed_out, sl_err *err)
{
	size_t n = 0;
	int ret = sweep_dir(root, 0, &n, err);

	if (removed_out)
		*removed_out = n;
	return ret;
}

int sl_branch_delete(git_repository *repo, const char *branch, sl_err *err)
{
	git_reference *ref = NULL;
	int rc = git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL);

	if (rc == GIT_ENOTFOUND)
		return SL_OK;
	if (rc || git_branch_delete(ref)) {
		git_reference_free(ref);
		return sl_err_set(err, SL_ERROR, "cannot delete branch '%s': %s", branch,
				  sl_git_error());
	}
	git_reference_free(ref);
	return SL_OK;
}
