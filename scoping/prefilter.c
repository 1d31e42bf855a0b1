/*
 * prefilter.c - literals a file must contain for a query to match in it.
 *
 * Reads the predicate steps of each pattern of a compiled query (the same
 * ones predicate.c evaluates) and the capture quantifiers; owns copies of
 * the strings.  The rules are in prefilter.h; every rule errs towards
 * keeping a file, because a filtered-out file is a silently missed target.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "scoping/prefilter.h"
#include "scoping/items.h"
#include "common/util.h"

struct req {
	char **alts;          /* any one of these must occur */
	size_t *lens;
	size_t nalts;
	int word;             /* a keyword: must occur as a word (keyword_at) */
};

struct pattern {
	struct req *reqs;     /* every one must be met */
	size_t nreqs;
	unsigned seps;        /* and one '(' group must hold this many separators */
	int exact;            /* and no more commas than that */
};

struct sl_prefilter {
	struct pattern *pats;
	size_t npats;
	sl_strvec all;        /* distinct literals, for reporting */
};

static int is_regex_meta(char c)
{
	return strchr(".[]()*+?{}|^$\\", c) != NULL;
}

/* Index just past the bracket expression starting at re[i] == '['. */
static size_t skip_bracket(const char *re, size_t i)
{
	i++;
	if (re[i] == '^')
		i++;
	if (re[i] == ']')
		i++;
	while (re[i] && re[i] != ']') {
		if (re[i] == '[' && (re[i + 1] == ':' || re[i + 1] == '.' || re[i + 1] == '=')) {
			char close = re[i + 1];

			i += 2;
			while (re[i] && !(re[i] == close && re[i + 1] == ']'))
				i++;
			if (re[i])
				i += 2;
			continue;
		}
		i++;
	}
	return re[i] ? i + 1 : i;
}

/* Index just past the group starting at re[i] == '('. */
static size_t skip_group(const char *re, size_t i)
{
	int depth = 0;

	while (re[i]) {
		if (re[i] == '\\' && re[i + 1]) {
			i += 2;
			continue;
		}
		if (re[i] == '[') {
			i = skip_bracket(re, i);
			continue;
		}
		if (re[i] == '(')
			depth++;
		else if (re[i] == ')' && --depth == 0)
			return i + 1;
		i++;
	}
	return i;
}

void sl_regex_literal(const char *re, char *out, size_t cap)
{
	sl_buf run = SL_BUF_INIT;
	size_t best = 0, i = 0;

	out[0] = '\0';
	/* an alternation anywhere could make any literal optional */
	for (size_t j = 0; re[j]; j++) {
		if (re[j] == '\\' && re[j + 1] && re[j + 1] != '|') {
			j++;
			continue;
		}
		if (re[j] == '[') {
			j = skip_bracket(re, j) - 1;
			continue;
		}
		if (re[j] == '|')
			return;
	}
	while (1) {
		char c = re[i], lit;
		int is_lit = 0;

		/* only an escaped metacharacter is a literal: glibc gives \w \' \` \< ... meanings */
		if (c == '\\' && re[i + 1] && is_regex_meta(re[i + 1]) && re[i + 1] != '|') {
			lit = re[i + 1];
			is_lit = 1;
			i += 2;
		} else if (c && !is_regex_meta(c)) {
			lit = c;
			is_lit = 1;
			i++;
		}
		if (is_lit) {
			char q = re[i];

			if (q == '*' || q == '?' || q == '{') {
				/* the character is optional (or counted): the run ends before it */
			} else {
				sl_buf_add(&run, &lit, 1);
				if (q != '+')
					continue;
			}
		}
		/* the run ends here */
		if (run.len > best && run.len < cap) {
			memcpy(out, run.buf, run.len);
			out[run.len] = '\0';
			best = run.len;
		}
		sl_buf_reset(&run);
		if (!re[i])
			break;
		if (is_lit) {
			/* skip the quantifier that ended the run */
			if (re[i] == '{') {
				while (re[i] && re[i] != '}')
					i++;
				if (re[i])
					i++;
			} else if (re[i] == '*' || re[i] == '?' || re[i] == '+') {
				i++;
			}
			continue;
		}
		if (re[i] == '[')
			i = skip_bracket(re, i);
		else if (re[i] == '(')
			i = skip_group(re, i);
		else if (re[i] == '\\' && re[i + 1])
			i += 2;     /* \w, \b, \1 ...: not a literal */
		else if (re[i] == '{') {
			while (re[i] && re[i] != '}')
				i++;
			if (re[i])
				i++;
		} else
			i++;
	}
	sl_buf_release(&run);
}

size_t sl_regex_alternatives(const char *re, sl_strvec *out)
{
	size_t len = strlen(re), start = 0, end = len, n = 0;
	char *body, lit[256];
	int depth = 0;

	sl_strvec_release(out);
	if (re[0] == '^')
		start = 1;
	if (end > start && re[end - 1] == '$' && (end < 2 || re[end - 2] != '\\'))
		end--;
	body = sl_xstrndup(re + start, end - start);
	len = strlen(body);
	if (body[0] == '(' && skip_group(body, 0) == len && len >= 2) {
		memmove(body, body + 1, len - 2);
		body[len - 2] = '\0';
		len -= 2;
	}
	/* split at the top-level bars; the branches' literals are the alternatives */
	for (size_t i = 0, from = 0; ; i++) {
		if (body[i] == '\\' && body[i + 1]) {
			if (body[i + 1] == '|')
				goto none;          /* \| alternates too (GNU): not followed here */
			i++;
			continue;
		}
		if (body[i] == '[') {
			i = skip_bracket(body, i) - 1;
			continue;
		}
		if (body[i] == '(')
			depth++;
		else if (body[i] == ')')
			depth--;
		if (body[i] && (body[i] != '|' || depth))
			continue;
		if (body[i] == '|')
			n++;
		if (!body[i] && !n)
			goto none;                  /* no alternation at the top */
		{
			char *branch = sl_xstrndup(body + from, i - from);

			sl_regex_literal(branch, lit, sizeof(lit));
			free(branch);
		}
		if (!lit[0])
			goto none;
		sl_strvec_push(out, lit);
		if (!body[i])
			break;
		from = i + 1;
	}
	free(body);
	return out->n;
none:
	free(body);
	sl_strvec_release(out);
	return 0;
}

static void add_all(sl_prefilter *f, const char *s)
{
	for (size_t i = 0; i < f->all.n; i++)
		if (!strcmp(f->all.v[i], s))
			return;
	sl_strvec_push(&f->all, s);
}

static void req_release(struct req *r)
{
	for (size_t i = 0; i < r->nalts; i++)
		free(r->alts[i]);
	free(r->alts);
	free(r->lens);
}

void sl_prefilter_free(sl_prefilter *f)
{
	if (!f)
		return;
	for (size_t p = 0; p < f->npats; p++) {
		for (size_t r = 0; r < f->pats[p].nreqs; r++)
			req_release(&f->pats[p].reqs[r]);
		free(f->pats[p].reqs);
	}
	free(f->pats);
	sl_strvec_release(&f->all);
	free(f);
}

/* Add the alternative s (sl bytes) to r. */
static void req_add(struct req *r, const char *s, size_t sl)
{
	r->alts = sl_xrealloc(r->alts, sl_st_mult(r->nalts + 1, sizeof(*r->alts)));
	r->lens = sl_xrealloc(r->lens, sl_st_mult(r->nalts + 1, sizeof(*r->lens)));
	r->alts[r->nalts] = sl_xstrndup(s, sl);
	r->lens[r->nalts++] = sl;
}

static int name_is(const char *name, uint32_t len, const char *want)
{
	return strlen(want) == len && !memcmp(name, want, len);
}

/* The requirement of one predicate (steps[0] its name) into *r; 0 if none. */
static int pred_req(const TSQuery *q, uint32_t pat, const TSQueryPredicateStep *steps,
		    uint32_t nargs, struct req *r)
{
	uint32_t len;
	const char *name = ts_query_string_value_for_id(q, steps[0].value_id, &len);
	const TSQueryPredicateStep *args = steps + 1;
	int is_eq = name_is(name, len, "eq?") || name_is(name, len, "any-eq?");
	int is_match = name_is(name, len, "match?") || name_is(name, len, "any-match?");
	int is_of = name_is(name, len, "any-of?");
	TSQuantifier qu;

	memset(r, 0, sizeof(*r));
	if (!(is_eq || is_match || is_of) || nargs < 2 ||
	    args[0].type != TSQueryPredicateStepTypeCapture)
		return 0;
	qu = ts_query_capture_quantifier_for_id(q, pat, args[0].value_id);
	if (qu != TSQuantifierOne && qu != TSQuantifierOneOrMore)
		return 0;
	for (uint32_t i = 1; i < nargs; i++)
		if (args[i].type != TSQueryPredicateStepTypeString)
			return 0;
	if ((is_eq || is_match) && nargs != 2)
		return 0;
	for (uint32_t i = 1; i < nargs; i++) {
		uint32_t sl;
		const char *s = ts_query_string_value_for_id(q, args[i].value_id, &sl);
		char lit[256];

		if (is_match) {
			sl_strvec alts = SL_STRVEC_INIT;

			if (strlen(s) != sl)
				goto none;
			sl_regex_literal(s, lit, sizeof(lit));
			if (!lit[0] && sl_regex_alternatives(s, &alts)) {
				/* "^(memcpy|free)$": any one of the branches' literals */
				for (size_t a = 0; a < alts.n; a++)
					req_add(r, alts.v[a], strlen(alts.v[a]));
				sl_strvec_release(&alts);
				continue;
			}
			s = lit;
			sl = (uint32_t)strlen(lit);
		}
		if (!sl)
			goto none;      /* "" occurs everywhere: no requirement */
		req_add(r, s, sl);
	}
	return 1;
none:
	req_release(r);
	memset(r, 0, sizeof(*r));
	return 0;
}

/*
 * Keywords a pattern implies.  The language's table pairs node types with
 * a keyword every node of that type holds (for_statement: "for"); a quoted
 * anonymous node that is one of those keywords implies itself.  Requirements
 * are bit sets over the table: a node adds its children's, a group unions
 * its items', an alternation keeps what all its branches share, '?' and
 * '*' drop an item's, predicates and MISSING nodes give none.  A query the
 * reader below does not follow gives none either.
 */
struct kparse {
	const char *s;
	size_t i, n;
	const char *const *kw;     /* pairs: node type, keyword; NULL-terminated */
	const char *const *lists;  /* types of '('-delimited lists; NULL-terminated, or NULL */
	int bad;
	int inner;                 /* top_below met a node with a child or field pattern */
};

/*
 * What a part of a pattern needs: keywords (bits over the table), and a
 * '(' group with seps separators, and when exact with at most seps commas.
 */
struct kneed {
	uint64_t bits;
	unsigned seps;
	int exact;
};

static const struct kneed kno;        /* nothing */

static int one_of(const char *name, size_t nl, const char *const *types);

static int kw_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '/';
}

/* Skip blanks and ';' comments. */
static void kw_blank(struct kparse *p)
{
	while (p->i < p->n && (isspace((unsigned char)p->s[p->i]) || p->s[p->i] == ';')) {
		if (p->s[p->i] == ';')
			while (p->i < p->n && p->s[p->i] != '\n')
				p->i++;
		else
			p->i++;
	}
}

/* The table's bits for a node type, or (anonymous) for a keyword token. */
static uint64_t kw_bits(const struct kparse *p, const char *name, size_t nl, int anonymous)
{
	uint64_t bits = 0;

	for (size_t i = 0; p->kw && p->kw[i] && p->kw[i + 1] && i / 2 < 64; i += 2) {
		const char *key = p->kw[i + anonymous];

		if (strlen(key) == nl && !memcmp(key, name, nl))
			bits |= UINT64_C(1) << (i / 2);
	}
	return bits;
}

/* Skip what is left of a parenthesised form, its closing ')' included. */
static void kw_skip_form(struct kparse *p)
{
	int depth = 1;

	while (p->i < p->n && depth) {
		char c = p->s[p->i++];

		if (c == '"') {
			while (p->i < p->n && p->s[p->i] != '"')
				p->i += p->s[p->i] == '\\' ? 2 : 1;
			p->i++;
		} else if (c == ';') {
			while (p->i < p->n && p->s[p->i] != '\n')
				p->i++;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			depth--;
		}
	}
	if (depth)
		p->bad = 1;
}

static struct kneed kw_item(struct kparse *p, int *named);

/* What a and b both need (a node's children): a separator requirement of either. */
static void need_both(struct kneed *a, struct kneed b)
{
	a->bits |= b.bits;
	if (b.seps > a->seps) {
		a->seps = b.seps;
		a->exact = b.exact;
	} else if (b.seps == a->seps) {
		a->exact |= b.exact;    /* an exact one implies the other */
	}
}

/* What a and b each need (an alternation's branches). */
static void need_either(struct kneed *a, struct kneed b)
{
	a->bits &= b.bits;
	if (b.seps < a->seps) {
		a->seps = b.seps;
		a->exact = b.exact;
	} else if (b.seps == a->seps) {
		a->exact &= b.exact;
	} else {
		a->exact = 0;
	}
}

/*
 * Items up to `close`: the union of theirs, or for an alternation what all
 * share.  *named (when not NULL) counts the items that each match a named
 * node of their own, and *exact is set when those are all the items but
 * anchors, with an anchor before each and after the last: then they are
 * all the node's named children.
 */
static struct kneed kw_items(struct kparse *p, char close, int alternation, unsigned *named,
			     int *exact)
{
	struct kneed any = kno, all = { ~UINT64_C(0), ~0u, 1 };
	size_t n = 0;
	int anchor_next = 1, ok = 1;

	for (;;) {
		struct kneed b;
		int one = 0, anchor;

		kw_blank(p);
		if (p->i >= p->n) {
			p->bad = 1;
			return kno;
		}
		if (p->s[p->i] == close) {
			p->i++;
			break;
		}
		anchor = p->s[p->i] == '.';
		b = kw_item(p, &one);
		if (p->bad)
			return kno;
		need_both(&any, b);
		need_either(&all, b);
		n++;
		if (named)
			*named += (unsigned)one;
		ok &= anchor ? anchor_next : !anchor_next && one;
		anchor_next = !anchor;
	}
	if (exact)
		*exact = ok && !anchor_next && named && *named;
	return alternation ? (n ? all : kno) : any;
}

/* A quoted anonymous node. */
static uint64_t kw_string(struct kparse *p)
{
	size_t start = ++p->i;
	int plain = 1;

	while (p->i < p->n && p->s[p->i] != '"') {
		if (p->s[p->i] == '\\') {
			plain = 0;
			p->i++;
		}
		p->i++;
	}
	if (p->i >= p->n) {
		p->bad = 1;
		return 0;
	}
	p->i++;
	return plain ? kw_bits(p, p->s + start, p->i - 1 - start, 1) : 0;
}

/*
 * After '(': a predicate, a group or a node with its children.  *named is
 * set when it is a node that matches a named node with text: not a group,
 * not MISSING (no text) nor ERROR (which may hold the text of several).  A
 * node of a list type (p->lists) with k children that are each such a
 * node needs k - 1 separators in its '(' group: between two named
 * children of a list comes a ',' or a comment (an extra).
 */
static struct kneed kw_paren(struct kparse *p, int *named)
{
	size_t start, nl;
	unsigned k = 0;
	int exact;
	struct kneed b;

	kw_blank(p);
	if (p->i < p->n && (p->s[p->i] == '(' || p->s[p->i] == '[' || p->s[p->i] == '"'))
		return kw_items(p, ')', 0, NULL, NULL);
	if (p->i < p->n && p->s[p->i] == '#') {
		kw_skip_form(p);
		return kno;
	}
	for (start = p->i; p->i < p->n && kw_word_char(p->s[p->i]); p->i++)
		;
	if (p->i == start) {
		p->bad = 1;
		return kno;
	}
	if (p->i - start == 7 && !memcmp(p->s + start, "MISSING", 7)) {
		/* a node error recovery inserted: no text at all */
		kw_skip_form(p);
		return kno;
	}
	nl = p->i - start;
	*named = !(nl == 5 && !memcmp(p->s + start, "ERROR", 5));
	b = kw_items(p, ')', 0, &k, &exact);
	b.bits |= kw_bits(p, p->s + start, nl, 0);
	if (p->lists && k > 1 && one_of(p->s + start, nl, p->lists)) {
		struct kneed list = { 0, k - 1, exact };

		need_both(&b, list);
	}
	return b;
}

/*
 * One item with its field name, anchor, quantifier and captures; *named
 * set when it matches one named node with text (kw_paren), not under '?'
 * or '*'.
 */
static struct kneed kw_item(struct kparse *p, int *named)
{
	struct kneed b = kno;
	size_t start = p->i;
	char c = p->s[p->i];

	*named = 0;
	if (c == '.' || c == '!') {
		/* an anchor; a negated field */
		for (p->i++; p->i < p->n && kw_word_char(p->s[p->i]); p->i++)
			;
		return kno;
	}
	if (c == '"') {
		b.bits = kw_string(p);
	} else if (c == '[') {
		p->i++;
		b = kw_items(p, ']', 1, NULL, NULL);
	} else if (c == '(') {
		p->i++;
		b = kw_paren(p, named);
	} else if (kw_word_char(c)) {
		while (p->i < p->n && kw_word_char(p->s[p->i]))
			p->i++;
		if (p->i < p->n && p->s[p->i] == ':') {
			p->i++;
			kw_blank(p);
			return p->i < p->n ? kw_item(p, named) : (p->bad = 1, kno);
		}
		if (p->i - start != 1 || c != '_')
			p->bad = 1;
	} else {
		p->bad = 1;
	}
	while (!p->bad) {
		kw_blank(p);
		if (p->i >= p->n)
			break;
		c = p->s[p->i];
		if (c == '?' || c == '*') {
			b = kno;
			*named = 0;
			p->i++;
		} else if (c == '+') {
			p->i++;
		} else if (c == '@') {
			for (p->i++; p->i < p->n && (kw_word_char(p->s[p->i]) || p->s[p->i] == '.'); p->i++)
				;
		} else {
			break;
		}
	}
	return p->bad ? kno : b;
}

/* What the pattern whose source is s[0 .. n) needs. */
static struct kneed pattern_needs(const char *s, size_t n, const char *const *kw,
				  const char *const *lists)
{
	struct kparse p = { s, 0, n, kw, lists, 0, 0 };
	struct kneed b = kno;

	for (;;) {
		struct kneed one;
		int named;

		kw_blank(&p);
		if (p.i >= p.n || p.bad)
			break;
		one = kw_item(&p, &named);
		need_both(&b, one);
	}
	return p.bad ? kno : b;
}

/*
 * Add to pattern p a word requirement for each keyword of bits: one of the
 * words the pair joins with '|'.
 */
static void add_keyword_reqs(sl_prefilter *f, struct pattern *p, uint64_t bits,
			     const char *const *kw)
{
	for (unsigned b = 0; b < 64; b++) {
		const char *w = kw[2 * b + 1], *bar;
		struct req r;

		if (!(bits & (UINT64_C(1) << b)))
			continue;
		memset(&r, 0, sizeof(r));
		r.word = 1;
		for (;; w = bar + 1) {
			size_t n = (bar = strchr(w, '|')) ? (size_t)(bar - w) : strlen(w);

			r.alts = sl_xrealloc(r.alts, sl_st_mult(r.nalts + 1, sizeof(*r.alts)));
			r.lens = sl_xrealloc(r.lens, sl_st_mult(r.nalts + 1, sizeof(*r.lens)));
			r.alts[r.nalts] = sl_xstrndup(w, n);
			r.lens[r.nalts] = n;
			add_all(f, r.alts[r.nalts++]);
			if (!bar)
				break;
		}
		p->reqs = sl_xrealloc(p->reqs, sl_st_mult(p->nreqs + 1, sizeof(*p->reqs)));
		p->reqs[p->nreqs++] = r;
	}
}

/*
 * The pairs of keyword_nodes whose node type or keywords occur in the
 * query's source (len bytes), at most 64 (the bits of struct kneed), into
 * out (129 entries); the others cannot be named by it.
 */
static void keyword_pairs_named(const char **out, const char *const *kw, const char *src,
				size_t len)
{
	size_t n = 0;

	for (size_t i = 0; kw[i] && kw[i + 1] && n < 128; i += 2)
		if (memmem(src, len, kw[i], strlen(kw[i])) ||
		    memmem(src, len, kw[i + 1], strlen(kw[i + 1]))) {
			out[n++] = kw[i];
			out[n++] = kw[i + 1];
		}
	out[n] = NULL;
}

/*
 * An occurrence of keyword kw at text[at] the C-family lexers could see as
 * the keyword: not inside a longer identifier.  Kept (returns 1) whenever
 * in doubt: after a digit run (a number's suffix may end there), a
 * non-ASCII byte, '\\', '$' or a '#' directive.
 */
static int keyword_at(const char *text, size_t len, size_t at, size_t kwlen)
{
	size_t j = at, k;
	unsigned char after = at + kwlen < len ? (unsigned char)text[at + kwlen] : ' ';

	if (isalnum(after) || after == '_')
		return 0;
	while (j && (isalnum((unsigned char)text[j - 1]) || text[j - 1] == '_'))
		j--;
	if (j == at || isdigit((unsigned char)text[j]))
		return 1;
	/* an identifier runs into the keyword, unless what comes before it joins it */
	for (k = j; k && (text[k - 1] == ' ' || text[k - 1] == '\t'); k--)
		;
	if (k && text[k - 1] == '#')
		return 1;
	return j && ((unsigned char)text[j - 1] >= 0x80 || text[j - 1] == '\\' || text[j - 1] == '$');
}

/*
 * The bytes of C-family source from the most to the least frequent (git
 * and curl's .c and .h files); a byte not listed is rarer than all.
 */
static const char common_bytes[] = " etrsi\nan_oc\tldu*fph,)(m;gbE-\"=RTLCSy/.>vNO0UxwA";

static size_t byte_rank(unsigned char c)
{
	const char *p = c ? memchr(common_bytes, c, sizeof(common_bytes) - 1) : NULL;

	return p ? (size_t)(p - common_bytes) : sizeof(common_bytes);
}

/*
 * The first occurrence of needle (n >= 1 bytes) in text, as memmem.  With
 * SSE2, 16 positions at a time are tested on the needle's two rarest
 * bytes, and only the positions where both sit are compared whole: most
 * files hold no occurrence, and few places hold even those two bytes.
 */
static const char *find(const char *text, size_t len, const char *needle, size_t n)
{
#ifdef __SSE2__
	size_t i1 = 0, i2 = 0, p = 0;

	if (n < 2 || len < n + 16)
		return memmem(text, len, needle, n);
	for (size_t i = 1; i < n; i++)
		if (byte_rank((unsigned char)needle[i]) > byte_rank((unsigned char)needle[i1]))
			i1 = i;
	i2 = i1 ? 0 : 1;
	for (size_t i = 0; i < n; i++)
		if (i != i1 && byte_rank((unsigned char)needle[i]) > byte_rank((unsigned char)needle[i2]))
			i2 = i;
	{
		const __m128i b1 = _mm_set1_epi8(needle[i1]), b2 = _mm_set1_epi8(needle[i2]);

		/* positions p .. p + 15 start a candidate; the loads stay inside text */
		for (; p + 16 + n - 1 <= len; p += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(text + p + i1));
			__m128i y = _mm_loadu_si128((const __m128i *)(text + p + i2));
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, b1),
									      _mm_cmpeq_epi8(y, b2)));

			while (m) {
				unsigned bit = (unsigned)__builtin_ctz(m);

				if (!memcmp(text + p + bit, needle, n))
					return text + p + bit;
				m &= m - 1;
			}
		}
	}
	return memmem(text + p, len - p, needle, n);
#else
	return memmem(text, len, needle, n);
#endif
}

/* 1 if kw occurs in text as a word the lexer could take for the keyword. */
static int has_keyword(const char *text, size_t len, const char *kw, size_t kwlen)
{
	const char *s = text, *hit;

	while ((hit = find(s, len - (size_t)(s - text), kw, kwlen))) {
		if (keyword_at(text, len, (size_t)(hit - text), kwlen))
			return 1;
		s = hit + 1;
	}
	return 0;
}

/* The end of pattern pat's source: the next pattern's start, or len. */
static size_t pattern_end(const TSQuery *q, uint32_t pat, uint32_t npats, size_t len)
{
	uint32_t start = ts_query_start_byte_for_pattern(q, pat);

	for (uint32_t i = pat + 1; i < npats; i++) {
		uint32_t b = ts_query_start_byte_for_pattern(q, i);

		if (b > start && b <= len)
			return b;
	}
	return len;
}

/* The predicates' requirements of pattern pat into p. */
static void add_pred_reqs(sl_prefilter *f, struct pattern *p, const TSQuery *q, uint32_t pat)
{
	uint32_t nsteps;
	const TSQueryPredicateStep *steps = ts_query_predicates_for_pattern(q, pat, &nsteps);

	for (uint32_t i = 0; i < nsteps; ) {
		uint32_t end = i;
		struct req r;

		while (end < nsteps && steps[end].type != TSQueryPredicateStepTypeDone)
			end++;
		if (end == nsteps)
			break;
		if (steps[i].type == TSQueryPredicateStepTypeString &&
		    pred_req(q, pat, steps + i, end - i - 1, &r)) {
			p->reqs = sl_xrealloc(p->reqs, sl_st_mult(p->nreqs + 1, sizeof(*p->reqs)));
			p->reqs[p->nreqs++] = r;
			for (size_t a = 0; a < r.nalts; a++)
				add_all(f, r.alts[a]);
		}
		i = end + 1;
	}
}

/*
 * Item by item (sl_prefilter_below_root): a pattern's top level never
 * matches the root node when it is one named node other than `_`, the
 * root's type and ERROR, a quoted anonymous node, a group holding exactly
 * one such (and predicates), or an alternation of such; a quantifier or a
 * second sibling at the top level spans siblings, so it does not qualify.
 */
static int at_predicate(const struct kparse *p)
{
	size_t j = p->i + 1;

	while (j < p->n && isspace((unsigned char)p->s[j]))
		j++;
	return p->s[p->i] == '(' && j < p->n && p->s[j] == '#';
}

/*
 * 1 if name (nl bytes) is one of the NULL-terminated types, where a type
 * "*_x" stands for every name ending in "_x" and "x_*" for every one
 * beginning with "x_".
 */
static int one_of(const char *name, size_t nl, const char *const *types)
{
	for (size_t i = 0; types[i]; i++) {
		const char *t = types[i];
		size_t tl = strlen(t);

		if (tl > 1 && t[0] == '*' && nl >= tl && !memcmp(name + nl - (tl - 1), t + 1, tl - 1))
			return 1;
		if (tl > 1 && t[tl - 1] == '*' && nl >= tl && !memcmp(name, t, tl - 1))
			return 1;
		if (tl == nl && !memcmp(t, name, nl))
			return 1;
	}
	return 0;
}

static int top_below(struct kparse *p, const char *const *holders)
{
	size_t start;
	int n = 0;

	kw_blank(p);
	if (p->i >= p->n)
		return 0;
	if (p->s[p->i] == '"') {
		if (one_of("\"", 1, holders))
			return 0;       /* a keyword token may stand between two statements */
		kw_string(p);
	} else if (p->s[p->i] == '[') {
		for (p->i++;; n++) {
			kw_blank(p);
			if (p->i >= p->n)
				return 0;
			if (p->s[p->i] == ']')
				break;
			if (!top_below(p, holders))
				return 0;
		}
		p->i++;
		if (!n)
			return 0;
	} else if (p->s[p->i] == '(') {
		p->i++;
		kw_blank(p);
		if (p->i < p->n && (p->s[p->i] == '(' || p->s[p->i] == '[' || p->s[p->i] == '"')) {
			/* a group: one pattern and its predicates */
			for (;;) {
				kw_blank(p);
				if (p->i >= p->n)
					return 0;
				if (p->s[p->i] == ')')
					break;
				if (at_predicate(p)) {
					p->i++;
					kw_skip_form(p);
				} else if (n++ || !top_below(p, holders)) {
					return 0;
				}
			}
			p->i++;
			if (n != 1)
				return 0;
		} else {
			for (start = p->i; p->i < p->n && kw_word_char(p->s[p->i]); p->i++)
				;
			if (p->i == start ||
			    (p->i - start == 1 && p->s[start] == '_') ||
			    one_of(p->s + start, p->i - start, holders) ||
			    (p->i - start == 5 && !memcmp(p->s + start, "ERROR", 5)))
				return 0;
			kw_blank(p);
			p->inner |= p->i < p->n && p->s[p->i] != ')';
			kw_skip_form(p);
		}
	} else {
		return 0;
	}
	for (;;) {
		kw_blank(p);
		if (p->i >= p->n || p->s[p->i] != '@')
			break;
		for (p->i++; p->i < p->n && (kw_word_char(p->s[p->i]) || p->s[p->i] == '.'); p->i++)
			;
	}
	if (p->i < p->n && (p->s[p->i] == '?' || p->s[p->i] == '*' || p->s[p->i] == '+'))
		return 0;
	return !p->bad;
}

/* Past the predicates at p->i, up to the end or a ')' (then past it, when group): 1, or 0. */
static int kw_predicates(struct kparse *p, int group)
{
	for (;;) {
		kw_blank(p);
		if (p->i >= p->n)
			return !group && !p->bad;
		if (group && p->s[p->i] == ')') {
			p->i++;
			return !p->bad;
		}
		if (!at_predicate(p))
			return 0;
		p->i++;
		kw_skip_form(p);
		if (p->bad)
			return 0;
	}
}

/* Past w at p->i (after blanks): 1, or 0 when something else is there. */
static int kw_expect(struct kparse *p, const char *w)
{
	size_t wl = strlen(w);

	kw_blank(p);
	if (p->n - p->i < wl || memcmp(p->s + p->i, w, wl) ||
	    (kw_word_char(w[wl - 1]) && p->i + wl < p->n && kw_word_char(p->s[p->i + wl])))
		return 0;
	p->i += wl;
	return 1;
}

/*
 * (function_definition body: (compound_statement X)) at p->i, perhaps in
 * a group with predicates, X as top_below reads it (sl_prefilter_body_child).
 */
static int body_child(struct kparse *p, const char *const *holders)
{
	struct kparse ahead;
	int group;

	if (!kw_expect(p, "("))
		return 0;
	ahead = *p;
	if ((group = kw_expect(&ahead, "(")))
		*p = ahead;
	if (!kw_expect(p, "function_definition"))
		return 0;
	ahead = *p;
	if (kw_expect(&ahead, "body") && kw_expect(&ahead, ":"))
		*p = ahead;        /* the only compound_statement child is the body */
	return kw_expect(p, "(") && kw_expect(p, "compound_statement") && top_below(p, holders) &&
	       kw_expect(p, ")") && kw_expect(p, ")") && (!group || kw_predicates(p, 1));
}

/*
 * 1 if every pattern of q is of the shape, followed by predicates only;
 * 2 if besides, no node top_below read has a child or field pattern.
 */
static int each_pattern(const TSQuery *q, const char *src, size_t len, const char *const *holders,
			int (*shape)(struct kparse *, const char *const *))
{
	uint32_t npats = ts_query_pattern_count(q);
	int inner = 0;

	if (!src || !holders || !npats)
		return 0;
	for (uint32_t pat = 0; pat < npats; pat++) {
		size_t start = ts_query_start_byte_for_pattern(q, pat);
		struct kparse p = { src, start, pattern_end(q, pat, npats, len), NULL, NULL, 0, 0 };

		if (start >= p.n || !shape(&p, holders) || !kw_predicates(&p, 0))
			return 0;
		inner |= p.inner;
	}
	return inner ? 1 : 2;
}

int sl_prefilter_below_root(const TSQuery *q, const char *src, size_t len,
			    const char *const *holders)
{
	return !!each_pattern(q, src, len, holders, top_below);
}

int sl_prefilter_body_child(const TSQuery *q, const char *src, size_t len,
			    const char *const *holders)
{
	return each_pattern(q, src, len, holders, body_child);
}

sl_prefilter *sl_prefilter_new(const TSQuery *q)
{
	return sl_prefilter_new_ex(q, NULL, 0, NULL, NULL);
}

sl_prefilter *sl_prefilter_new_ex(const TSQuery *q, const char *src, size_t len,
				  const char *const *keyword_nodes, const char *const *list_nodes)
{
	sl_prefilter *f = sl_xcalloc(1, sizeof(*f));
	uint32_t npats = ts_query_pattern_count(q);

	f->pats = sl_xcalloc(npats ? npats : 1, sizeof(*f->pats));
	f->npats = npats;
	for (uint32_t pat = 0; pat < npats; pat++) {
		struct pattern *p = &f->pats[pat];

		add_pred_reqs(f, p, q, pat);
		if (src && (keyword_nodes || list_nodes)) {
			const char *kw[129] = { NULL };
			size_t start = ts_query_start_byte_for_pattern(q, pat);
			size_t end = pattern_end(q, pat, npats, len);
			struct kneed need = kno;

			if (keyword_nodes)
				keyword_pairs_named(kw, keyword_nodes, src, len);
			if (start < end)
				need = pattern_needs(src + start, end - start, kw, list_nodes);
			add_keyword_reqs(f, p, need.bits, kw);
			p->seps = need.seps;
			p->exact = need.exact;
		}
		if (!p->nreqs && !p->seps) {
			/* this pattern can match anywhere: filtering would lose it */
			sl_prefilter_free(f);
			return NULL;
		}
	}
	if (!npats) {
		sl_prefilter_free(f);
		return NULL;
	}
	return f;
}

/*
 * 1 if some '(' group of code holds n separators at its own level: ','
 * or '/' (what is left of a comment; a division counts too, which only
 * keeps more), and when exact, at most n ','.  A function definition's
 * parameters (SL_ITEMS_PARAMS) are no such group.
 */
/* the bytes has_separators looks at: brackets, separators, the parameters' mark */
static const unsigned char separator_byte[256] = {
	['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1, [']'] = 1, ['}'] = 1,
	[','] = 1, ['/'] = 1, [(unsigned char)SL_ITEMS_PARAMS] = 1,
};

static int has_separators(const char *code, size_t len, unsigned n, int exact)
{
	struct { unsigned commas, seps; int paren; } g[64];
	size_t depth = 0, all = 0;

	/* most pieces hold fewer separators in all than one group needs */
	for (const char *sep = ",/"; *sep && all < n; sep++)
		for (const char *p = code; all < n && (p = memchr(p, *sep, len - (size_t)(p - code))); p++)
			all++;
	if (all < n)
		return 0;
	for (size_t i = 0; i <= len; i++) {
		char c;

		while (i < len && !separator_byte[(unsigned char)code[i]])
			i++;
		c = i < len ? code[i] : 0;
		if (c == '(' || c == '[' || c == '{' || c == SL_ITEMS_PARAMS) {
			if (depth == 64)
				return 1;
			g[depth].paren = c == '(';
			g[depth].commas = g[depth].seps = 0;
			depth++;
		} else if (c == ')' || c == ']' || c == '}' || i == len) {
			/* a group ends: the text's end ends them all */
			while (depth) {
				depth--;
				if (g[depth].paren && g[depth].seps >= n && (!exact || g[depth].commas <= n))
					return 1;
				if (i < len)
					break;
			}
		} else if ((c == ',' || c == '/') && depth && g[depth - 1].paren) {
			g[depth - 1].seps++;
			g[depth - 1].commas += c == ',';
			if (!exact && g[depth - 1].seps >= n)
				return 1;
		}
	}
	return 0;
}

int sl_prefilter_pass(const sl_prefilter *f, const char *text, size_t len)
{
	return sl_prefilter_pass_code(f, text, NULL, len);
}

int sl_prefilter_pass_code(const sl_prefilter *f, const char *text, const char *code, size_t len)
{
	if (!f)
		return 1;
	for (size_t p = 0; p < f->npats; p++) {
		const struct pattern *pt = &f->pats[p];
		size_t r;

		/* separators are counted only where literals and comments are blanked */
		if (pt->seps && code && !has_separators(code, len, pt->seps, pt->exact))
			continue;
		for (r = 0; r < pt->nreqs; r++) {
			const struct req *rq = &pt->reqs[r];
			size_t a;

			for (a = 0; a < rq->nalts; a++)
				if (rq->word ? has_keyword(code ? code : text, len, rq->alts[a], rq->lens[a]) :
				    find(text, len, rq->alts[a], rq->lens[a]) != NULL)
					break;
			if (a == rq->nalts)
				break;
		}
		if (r == pt->nreqs)
			return 1;
	}
	return 0;
}

size_t sl_prefilter_count(const sl_prefilter *f)
{
	return f ? f->all.n : 0;
}
