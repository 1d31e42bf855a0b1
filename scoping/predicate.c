/*
 * predicate.c - compile and evaluate tree-sitter query predicates.
 *
 * Reads the predicate steps tree-sitter keeps for each pattern
 * (ts_query_predicates_for_pattern), checks their shape, compiles regexes
 * once, and keeps a flat array of predicates with, per pattern, the slice
 * that applies to it.  Evaluation only reads the match and the source text.
 * See predicate.h for the supported forms and their semantics.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoping/predicate.h"
#include "common/util.h"

enum pred_kind { P_EQ, P_MATCH, P_ANY_OF };

struct pred {
	enum pred_kind kind;
	int negate;            /* the not- forms */
	int any;               /* the any- forms: one node suffices */
	uint32_t cap;          /* the capture tested */
	int rhs_is_cap;        /* #eq? against another capture */
	uint32_t rhs_cap;
	const char **strs;     /* borrowed from the TSQuery; one for eq, several for any-of */
	uint32_t *lens;
	size_t nstrs;
	regex_t re;
	int has_re;
};

struct sl_preds {
	struct pred *v;
	size_t n, alloc;
	uint32_t *first;       /* per pattern: index of its first predicate in v */
	uint32_t *count;       /* per pattern: how many */
	uint32_t npatterns;
};

static const struct pred_name {
	const char *name;
	enum pred_kind kind;
	int negate, any;
} pred_names[] = {
	{ "eq?", P_EQ, 0, 0 },
	{ "not-eq?", P_EQ, 1, 0 },
	{ "any-eq?", P_EQ, 0, 1 },
	{ "any-not-eq?", P_EQ, 1, 1 },
	{ "match?", P_MATCH, 0, 0 },
	{ "not-match?", P_MATCH, 1, 0 },
	{ "any-match?", P_MATCH, 0, 1 },
	{ "any-not-match?", P_MATCH, 1, 1 },
	{ "any-of?", P_ANY_OF, 0, 0 },
	{ "not-any-of?", P_ANY_OF, 1, 0 },
};

void sl_query_pos(const char *src, size_t src_len, uint32_t offset, char out[32])
{
	uint32_t line = 1, col = 1;

	for (size_t i = 0; i < offset && i < src_len; i++) {
		if (src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(out, 32, "%u:%u", line, col);
}

static int is_name_end(char c)
{
	return !c || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		c == '(' || c == ')' || c == '"' || c == '@';
}

/*
 * Where "#name" appears in src at or after *from (the next predicate of the
 * pattern, in text order); advances *from past it.  Falls back to *from.
 */
static uint32_t find_pred_name(const char *src, size_t src_len, uint32_t *from,
			       const char *name, uint32_t name_len)
{
	for (size_t i = *from; i + 1 + name_len <= src_len; i++) {
		if (src[i] != '#' || memcmp(src + i + 1, name, name_len))
			continue;
		if (i + 1 + name_len < src_len && !is_name_end(src[i + 1 + name_len]))
			continue;
		*from = (uint32_t)(i + 1 + name_len);
		return (uint32_t)i;
	}
	return *from;
}

static void pred_release(struct pred *p)
{
	free(p->strs);
	free(p->lens);
	if (p->has_re)
		regfree(&p->re);
}

void sl_preds_free(sl_preds *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		pred_release(&p->v[i]);
	free(p->v);
	free(p->first);
	free(p->count);
	free(p);
}

/* Compile one predicate: steps[0] is its name, steps[1 .. nargs] its arguments. */
static int compile_one(sl_preds *ps, const TSQuery *q, const TSQueryPredicateStep *steps,
		       uint32_t nargs, const char *where, sl_err *err)
{
	const TSQueryPredicateStep *args = steps + 1;
	const struct pred_name *pn = NULL;
	struct pred p;
	uint32_t name_len;
	const char *name = ts_query_string_value_for_id(q, steps[0].value_id, &name_len);

	memset(&p, 0, sizeof(p));
	if (name_len == 4 && !memcmp(name, "set!", 4))
		return 0;
	for (size_t i = 0; i < sizeof(pred_names) / sizeof(pred_names[0]); i++)
		if (strlen(pred_names[i].name) == name_len &&
		    !memcmp(pred_names[i].name, name, name_len))
			pn = &pred_names[i];
	if (!pn)
		return sl_err_set(err, SL_EINPUT,
				  "invalid query at %s: unknown predicate '#%.*s' (known: #eq?, "
				  "#not-eq?, #match?, #not-match?, #any-of?, #not-any-of?, and "
				  "the #any- forms)", where, (int)name_len, name);
	p.kind = pn->kind;
	p.negate = pn->negate;
	p.any = pn->any;

	if (pn->kind == P_ANY_OF ? nargs < 2 : nargs != 2)
		return sl_err_set(err, SL_EINPUT,
				  "invalid query at %s: #%s takes %s, got %u argument%s",
				  where, pn->name,
				  pn->kind == P_ANY_OF ? "a capture and at least one string"
						       : "2 arguments",
				  nargs, nargs == 1 ? "" : "s");
	if (args[0].type != TSQueryPredicateStepTypeCapture)
		return sl_err_set(err, SL_EINPUT,
				  "invalid query at %s: the first argument of #%s must be a capture",
				  where, pn->name);
	p.cap = args[0].value_id;

	if (pn->kind == P_EQ && args[1].type == TSQueryPredicateStepTypeCapture) {
		p.rhs_is_cap = 1;
		p.rhs_cap = args[1].value_id;
	} else {
		for (uint32_t i = 1; i < nargs; i++)
			if (args[i].type != TSQueryPredicateStepTypeString)
				return sl_err_set(err, SL_EINPUT,
						  "invalid query at %s: argument %u of #%s must be a string",
						  where, i + 1, pn->name);
		p.nstrs = nargs - 1;
		p.strs = sl_xcalloc(p.nstrs, sizeof(*p.strs));
		p.lens = sl_xcalloc(p.nstrs, sizeof(*p.lens));
		for (size_t i = 0; i < p.nstrs; i++)
			p.strs[i] = ts_query_string_value_for_id(q, args[i + 1].value_id,
								 &p.lens[i]);
	}

	if (pn->kind == P_MATCH) {
		int rc;

		if (strlen(p.strs[0]) != p.lens[0]) {
			sl_err_set(err, SL_EINPUT,
				   "invalid query at %s: regex of #%s contains a NUL byte",
				   where, pn->name);
			pred_release(&p);
			return SL_EINPUT;
		}
		rc = regcomp(&p.re, p.strs[0], REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];

			regerror(rc, &p.re, msg, sizeof(msg));
			sl_err_set(err, SL_EINPUT, "invalid query at %s: bad regex '%s' in #%s: %s",
				   where, p.strs[0], pn->name, msg);
			pred_release(&p);
			return SL_EINPUT;
		}
		p.has_re = 1;
	}

	SL_ALLOC_GROW(ps->v, ps->n + 1, ps->alloc);
	ps->v[ps->n++] = p;
	return 0;
}

int sl_preds_compile(sl_preds **out, const TSQuery *q, const char *src, size_t src_len,
		     uint32_t *offset_out, sl_err *err)
{
	int ret = SL_EINPUT;
	sl_preds *ps = sl_xcalloc(1, sizeof(*ps));

	*out = NULL;
	if (offset_out)
		*offset_out = UINT32_MAX;
	ps->npatterns = ts_query_pattern_count(q);
	ps->first = sl_xcalloc(ps->npatterns ? ps->npatterns : 1, sizeof(*ps->first));
	ps->count = sl_xcalloc(ps->npatterns ? ps->npatterns : 1, sizeof(*ps->count));

	for (uint32_t pat = 0; pat < ps->npatterns; pat++) {
		uint32_t nsteps, from = ts_query_start_byte_for_pattern(q, pat);
		const TSQueryPredicateStep *steps = ts_query_predicates_for_pattern(q, pat, &nsteps);

		ps->first[pat] = (uint32_t)ps->n;
		for (uint32_t i = 0; i < nsteps; ) {
			uint32_t end = i, name_len, at;
			const char *name;
			char where[32];

			while (end < nsteps && steps[end].type != TSQueryPredicateStepTypeDone)
				end++;
			if (end == nsteps)
				BUG("predicate steps of pattern %u lack a terminator", pat);
			if (steps[i].type != TSQueryPredicateStepTypeString) {
				/* tree-sitter rejects this already; be defensive */
				at = from;
				sl_query_pos(src, src_len, at, where);
				if (offset_out)
					*offset_out = at;
				sl_err_set(err, SL_EINPUT,
					   "invalid query at %s: predicate without a name", where);
				goto done;
			}
			name = ts_query_string_value_for_id(q, steps[i].value_id, &name_len);
			at = find_pred_name(src, src_len, &from, name, name_len);
			sl_query_pos(src, src_len, at, where);
			if (compile_one(ps, q, steps + i, end - i - 1, where, err)) {
				if (offset_out)
					*offset_out = at;
				goto done;
			}
			i = end + 1;
		}
		ps->count[pat] = (uint32_t)ps->n - ps->first[pat];
	}
	*out = ps;
	ps = NULL;
	ret = 0;
done:
	sl_preds_free(ps);
	return ret;
}

static int text_eq(const char *text, size_t len, TSNode n, const char *s, uint32_t slen)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);

	if (b > len || a > b)
		return 0;
	return b - a == slen && !memcmp(text + a, s, slen);
}

static int text_match(const char *text, size_t len, TSNode n, const regex_t *re)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	int rc;

	if (b > len || a > b)
		return 0;
#ifdef REG_STARTEND
	{
		regmatch_t m[1];

		m[0].rm_so = 0;
		m[0].rm_eo = (regoff_t)(b - a);
		rc = regexec(re, text + a, 1, m, REG_STARTEND);
	}
#else
	{
		char *copy = sl_xstrndup(text + a, b - a);

		rc = regexec(re, copy, 0, NULL, 0);
		free(copy);
	}
#endif
	return rc == 0;
}

/* Does one node pass p (before negation is folded in by the caller)? */
static int node_passes(const struct pred *p, const char *text, size_t len, TSNode n)
{
	int hit = 0;

	switch (p->kind) {
	case P_EQ:
		hit = text_eq(text, len, n, p->strs[0], p->lens[0]);
		break;
	case P_MATCH:
		hit = text_match(text, len, n, &p->re);
		break;
	case P_ANY_OF:
		for (size_t i = 0; i < p->nstrs && !hit; i++)
			hit = text_eq(text, len, n, p->strs[i], p->lens[i]);
		break;
	}
	return hit != p->negate;
}

static int first_node(const TSQueryMatch *m, uint32_t cap, TSNode *out)
{
	for (uint16_t i = 0; i < m->capture_count; i++)
		if (m->captures[i].index == cap) {
			*out = m->captures[i].node;
			return 1;
		}
	return 0;
}

static int pred_holds(const struct pred *p, const TSQueryMatch *m, const char *text, size_t len)
{
	if (p->rhs_is_cap) {
		TSNode a, b;
		uint32_t as, ae, bs, be;
		int same;

		if (!first_node(m, p->cap, &a) || !first_node(m, p->rhs_cap, &b))
			return !p->any;
		as = ts_node_start_byte(a);
		ae = ts_node_end_byte(a);
		bs = ts_node_start_byte(b);
		be = ts_node_end_byte(b);
		if (ae > len || be > len || as > ae || bs > be)
			return 0;
		same = ae - as == be - bs && !memcmp(text + as, text + bs, ae - as);
		return same != p->negate;
	}
	for (uint16_t i = 0; i < m->capture_count; i++) {
		if (m->captures[i].index != p->cap)
			continue;
		if (node_passes(p, text, len, m->captures[i].node)) {
			if (p->any)
				return 1;
		} else if (!p->any) {
			return 0;
		}
	}
	return !p->any;
}

int sl_preds_eval(const sl_preds *p, const TSQueryMatch *m, const char *text, size_t len)
{
	uint32_t first, count;

	if (m->pattern_index >= p->npatterns)
		BUG("match of pattern %u, query has %u", m->pattern_index, p->npatterns);
	first = p->first[m->pattern_index];
	count = p->count[m->pattern_index];
	for (uint32_t i = 0; i < count; i++)
		if (!pred_holds(&p->v[first + i], m, text, len))
			return 0;
	return 1;
}
