/*
 * place.c - where each edit goes in its file, and the file it makes.
 *
 * Reads a file's content (loaded by apply.c from the base tree) and the
 * edits aimed at it; writes the new content and, per edit, its tier and
 * reason.  Called by sl_apply_edits_ext() once per file, per kind:
 * sl_place_splices(), sl_place_hunks(), sl_place_replaces().  The tiers and
 * their rules are in apply.h.
 *
 * Placement works on lines.  A file is split into lines (terminator not
 * included, a CR before it kept), the edit's old side likewise; locate()
 * finds where the old lines are (tier by tier) and render_region() builds
 * the bytes that replace them: lines the edit keeps are copied from the file
 * (so a whitespace-tolerant match never rewrites them), new lines are
 * re-indented and given the file's line ends.  Which new lines are kept ones
 * comes from a longest-common-subsequence alignment of the edit's own old
 * and new sides.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipeline/apply/apply_internal.h"

const char *const sl_tier_names[] = { "exact", "moved", "whitespace", "refused" };

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

/* A pure insertion (no old lines) after line HINT, 0 meaning the top of an empty file. */
static int place_insertion(regions *out, const tlines *f, size_t edit, const tlines *nw,
			   uint32_t hint, uint32_t *line_out, sl_buf *why)
{
	region *g;

	if (hint > f->n) {
		sl_buf_addf(why, "it inserts after line %u, but the file has %zu lines; "
			    "include context lines", hint, f->n);
		return T_REFUSED;
	}
	if (!hint && f->n) {
		sl_buf_adds(why, "it has no old lines and no line number; include context "
			    "lines around the new ones");
		return T_REFUSED;
	}
	g = region_add(out, edit, hint, 0);
	render_region(&g->text, f, hint, NULL, 0, 1, nw->v, nw->n, nw->final_nl,
		      &(shift){ 0, "", 0 });
	*line_out = hint + 1;
	return T_EXACT;
}

/* Old lines O located whole at LOC: one region, and a note on where and how. */
static int place_located(regions *out, const tlines *f, size_t edit, const tlines *o,
			 const tlines *nw, const located *loc, uint32_t hint, uint32_t *line_out,
			 sl_buf *note)
{
	region *g = region_add(out, edit, loc->at, o->n);

	render_region(&g->text, f, loc->at, o->v, o->n, o->final_nl, nw->v, nw->n, nw->final_nl,
		      &loc->sh);
	*line_out = (uint32_t)loc->at + 1;
	if (hint && loc->at + 1 != hint)
		sl_buf_addf(note, "the edit names line %u; applied at line %zu", hint, loc->at + 1);
	if (loc->tier == T_WS && loc->sh.dir)
		sl_buf_addf(note, "%sindentation shifted by %s%zu byte%s", note->len ? "; " : "",
			    loc->sh.dir > 0 ? "+" : "-", loc->sh.len, loc->sh.len == 1 ? "" : "s");
	return loc->tier;
}

/*
 * Old lines with "..." gaps (pieces SO, new pieces SN): locate each piece in
 * order, one region per piece.  The worst tier of the pieces, or
 * T_REFUSED with the reason in WHY (the caller drops the regions added).
 */
static int place_elided(regions *out, const tlines *f, size_t edit, const tlines *o,
			const tlines *nw, const segs *so, const segs *sn, uint32_t hint,
			uint32_t *line_out, sl_buf *why, sl_buf *note)
{
	size_t prev_end = 0, n0 = out->n;
	int tier = T_EXACT;

	if (sn->n != so->n) {
		sl_buf_addf(why, "it elides lines with '...' (%zu gaps in the old lines, %zu in "
			    "the new); write the lines out in full", so->n - 1, sn->n ? sn->n - 1 : 0);
		return T_REFUSED;
	}
	for (size_t k = 0; k < so->n; k++) {
		located sl;
		region *g;
		sl_buf pw = SL_BUF_INIT;

		if (!so->len[k]) {
			if (!sn->len[k])
				continue;
			sl_buf_adds(why, "it adds lines next to a '...' gap, where they cannot "
				    "be placed; write the lines around them out in full");
			return T_REFUSED;
		}
		if (locate(&sl, f, o->v + so->start[k], so->len[k], k ? 0 : hint, &pw) ||
		    sl.at < prev_end) {
			if (!pw.len)
				sl_buf_adds(&pw, "it is out of order");
			sl_buf_addf(why, "it elides lines with '...'; its piece %zu (%zu lines): ",
				    k + 1, so->len[k]);
			sl_buf_add(why, pw.buf, pw.len);
			sl_buf_release(&pw);
			return T_REFUSED;
		}
		sl_buf_release(&pw);
		g = region_add(out, edit, sl.at, so->len[k]);
		render_region(&g->text, f, sl.at, o->v + so->start[k], so->len[k],
			      k + 1 == so->n ? o->final_nl : 1, nw->v + sn->start[k], sn->len[k],
			      k + 1 == sn->n ? nw->final_nl : 1, &sl.sh);
		prev_end = sl.at + so->len[k];
		if (out->n == n0 + 1)
			*line_out = (uint32_t)sl.at + 1;
		tier = worse(tier, sl.tier);
	}
	sl_buf_addf(note, "%selided context: %zu pieces located separately",
		    note->len ? "; " : "", out->n - n0);
	return tier;
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
	int tier;
	sl_buf first_why = SL_BUF_INIT;

	split_text(&o, old_text, strlen(old_text));
	split_text(&nw, new_text, strlen(new_text));
	*line_out = hint;

	if (!o.n) {
		tier = place_insertion(out, f, edit, &nw, hint, line_out, why);
	} else if (!locate(&loc, f, o.v, o.n, hint, &first_why)) {
		tier = place_located(out, f, edit, &o, &nw, &loc, hint, line_out, note);
	} else {
		/* elided context: locate the pieces between "..." lines one by one */
		split_elided(&so, o.v, o.n);
		split_elided(&sn, nw.v, nw.n);
		if (so.n > 1) {
			tier = place_elided(out, f, edit, &o, &nw, &so, &sn, hint, line_out, why,
					    note);
		} else {
			sl_buf_add(why, first_why.buf, first_why.len);
			tier = T_REFUSED;
		}
	}
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

void sl_apply_refuse(sl_apply_item *it, sl_buf *why)
{
	it->tier = sl_tier_names[T_REFUSED];
	free(it->reason);
	it->reason = sl_buf_detach(why, NULL);
}

void sl_apply_note(sl_apply_item *it, sl_buf *n)
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

void sl_place_splices(apply_ctx *x, size_t fi, const sl_edit_list *edits)
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
			sl_apply_refuse(it, &why);
			bad = 1;
			continue;
		}
		it->tier = sl_tier_names[T_EXACT];
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
			it->tier = sl_tier_names[T_EXACT];
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
			it->tier = sl_tier_names[T_EXACT];
			it->line = 1;
		}
	} else {
		return 0;
	}
	if (why.len)
		sl_apply_refuse(it, &why);
	return 1;
}

void sl_place_hunks(apply_ctx *x, size_t fi, const sl_edit_list *edits)
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
			if (it->tier == sl_tier_names[T_REFUSED])
				bad = 1;
			/* a later hunk works on the new content */
			tlines_release(&fl);
			split_text(&fl, f->content.buf, f->content.len);
			continue;
		}
		if ((!f->existed && !f->created) || f->deleted) {
			sl_buf_addf(&why, "file '%s' does not exist", f->path);
			sl_apply_refuse(it, &why);
			bad = 1;
			continue;
		}
		any = 1;
		tier = place(&rg, &fl, i, e->old_text, e->new_text, e->old_line, &line, &why, &nt);
		it->line = line;
		if (tier == T_REFUSED) {
			sl_apply_refuse(it, &why);
			bad = 1;
		} else {
			it->tier = sl_tier_names[tier];
			sl_apply_note(it, &nt);
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
			if (x->items[late].tier != sl_tier_names[T_REFUSED])
				sl_apply_refuse(&x->items[late], &why);
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

void sl_place_replaces(apply_ctx *x, size_t fi, const sl_edit_list *edits)
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
				sl_apply_refuse(it, &why);
			} else {
				sl_buf_reset(&f->content);
				sl_buf_adds(&f->content, e->new_text);
				f->created = !f->existed;
				f->deleted = 0;
				it->tier = sl_tier_names[T_EXACT];
				it->line = 1;
			}
			continue;
		}
		if ((!f->existed && !f->created) || f->deleted) {
			sl_buf_addf(&why, "file '%s' does not exist", f->path);
			sl_apply_refuse(it, &why);
			continue;
		}
		split_text(&fl, f->content.buf, f->content.len);
		tier = place(&rg, &fl, i, e->old_text, e->new_text, 0, &line, &why, &nt);
		it->line = line;
		if (tier == T_REFUSED) {
			sl_apply_refuse(it, &why);
		} else {
			it->tier = sl_tier_names[tier];
			sl_apply_note(it, &nt);
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
