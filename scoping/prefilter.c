/*
 * prefilter.c - literals a file must contain for a query to match in it.
 *
 * Reads the predicate steps of each pattern of a compiled query (the same
 * ones predicate.c evaluates) and the capture quantifiers; owns copies of
 * the strings.  The rules are in prefilter.h; every rule errs towards
 * keeping a file, because a filtered-out file is a silently missed target.
 */
#include <stdlib.h>
#include <string.h>

#include "scoping/prefilter.h"
#include "common/util.h"

struct req {
	char **alts;          /* any one of these must occur */
	size_t *lens;
	size_t nalts;
};

struct pattern {
	struct req *reqs;     /* every one must be met */
	size_t nreqs;
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
			if (strlen(s) != sl)
				goto none;
			sl_regex_literal(s, lit, sizeof(lit));
			s = lit;
			sl = (uint32_t)strlen(lit);
		}
		if (!sl)
			goto none;      /* "" occurs everywhere: no requirement */
		r->alts = sl_xrealloc(r->alts, sl_st_mult(r->nalts + 1, sizeof(*r->alts)));
		r->lens = sl_xrealloc(r->lens, sl_st_mult(r->nalts + 1, sizeof(*r->lens)));
		r->alts[r->nalts] = sl_xstrndup(s, sl);
		r->lens[r->nalts++] = sl;
	}
	return 1;
none:
	req_release(r);
	memset(r, 0, sizeof(*r));
	return 0;
}

sl_prefilter *sl_prefilter_new(const TSQuery *q)
{
	sl_prefilter *f = sl_xcalloc(1, sizeof(*f));
	uint32_t npats = ts_query_pattern_count(q);

	f->pats = sl_xcalloc(npats ? npats : 1, sizeof(*f->pats));
	f->npats = npats;
	for (uint32_t pat = 0; pat < npats; pat++) {
		struct pattern *p = &f->pats[pat];
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
		if (!p->nreqs) {
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

int sl_prefilter_pass(const sl_prefilter *f, const char *text, size_t len)
{
	if (!f)
		return 1;
	for (size_t p = 0; p < f->npats; p++) {
		const struct pattern *pt = &f->pats[p];
		size_t r;

		for (r = 0; r < pt->nreqs; r++) {
			const struct req *rq = &pt->reqs[r];
			size_t a;

			for (a = 0; a < rq->nalts; a++)
				if (memmem(text, len, rq->alts[a], rq->lens[a]))
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
