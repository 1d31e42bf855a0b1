/*
 * rules.c - the campaign file's 'rules' section (capture, template, where)
 * and 'expect' in 'targets' (what a migration's candidate must leave in
 * its unit); the warnings about rules that overlap or can never apply.
 *
 * The templates, the captures they name and the conditions' regexes and
 * queries are checked against the query later, by campaign.c
 * (sl_rule_check), where the grammar is at hand.
 */
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

/* One capture's conditions: `CAPTURE: {match: RE, has: QUERY, ...}`. */
static int load_conds(struct loader *ld, const struct node *cap, const struct node *map,
		      sl_spec_rule *r)
{
	static const char *const where_keys[] = { "match", "not_match", "has", "has_not",
		"declared", "not_declared", NULL };
	static const enum sl_rule_cond_kind kinds[] = { SL_COND_MATCH, SL_COND_MATCH,
		SL_COND_HAS, SL_COND_HAS, SL_COND_DECLARED, SL_COND_DECLARED };
	const struct node *v[SL_CAP_SPEC_KEYS];
	const char *name = NULL;

	if (spec_get_word(ld, cap, "where", "rules", 1, &name) ||
	    spec_want_type(ld, map, N_MAP, name, "where") ||
	    spec_map_fields(ld, map, "where", where_keys, v))
		return SL_EINPUT;
	if (!map->nkid)
		return spec_fail(ld, map->start, "no condition for capture '%s' in 'where'", name);
	for (size_t k = 0; where_keys[k]; k++) {
		sl_rule_cond *c;
		char *text = NULL;

		if (!v[k])
			continue;
		if (spec_get_str(ld, v[k], where_keys[k], "where", 1, &text))
			return SL_EINPUT;
		r->where = sl_xrealloc(r->where, (r->nwhere + 1) * sizeof(*r->where));
		c = &r->where[r->nwhere++];
		c->capture = sl_xstrdup(name[0] == '@' ? name + 1 : name);
		c->kind = kinds[k];
		c->negate = (int)(k & 1);
		c->text = text;
	}
	return 0;
}

static int load_where(struct loader *ld, const struct node *map, sl_spec_rule *r)
{
	if (spec_want_type(ld, map, N_MAP, "where", "rules"))
		return SL_EINPUT;
	for (size_t i = 0; i + 1 < map->nkid; i += 2)
		if (load_conds(ld, map->kid[i], map->kid[i + 1], r))
			return SL_EINPUT;
	return 0;
}

/* 1 if every name of a is in b. */
static int subset(const sl_strvec *a, const sl_strvec *b)
{
	for (size_t i = 0; i < a->n; i++) {
		size_t j;

		for (j = 0; j < b->n && strcmp(a->v[i], b->v[j]); j++)
			;
		if (j == b->n)
			return 0;
	}
	return 1;
}

/* What rule i needs bound beyond the site capture (always bound). */
static void needs_of(sl_strvec *out, const sl_spec *spec, size_t i)
{
	sl_rule r = { spec->rules[i].capture, spec->rules[i].template_text,
		      spec->rules[i].cocci, spec->rules[i].where, spec->rules[i].nwhere };
	const char *site = spec->capture, *at;
	size_t len;

	sl_rule_needs(out, &r);
	if (site)
		site += site[0] == '@';
	else if (spec->query && (at = strchr(spec->query, '@')))
		site = at + 1;     /* the query's first capture */
	else
		return;
	len = strcspn(site, " \t\n\r()[]\"");
	for (size_t k = 0; k < out->n; k++)
		if (strlen(out->v[k]) == len && !strncmp(out->v[k], site, len)) {
			free(out->v[k]);
			out->v[k] = out->v[--out->n];
			break;
		}
}

/*
 * Rule j after rule i: shadowed when i has no conditions and needs no
 * capture j does not (wherever j could apply, i does first); overlapping
 * when both rewrite the same capture and i, without conditions, wins
 * wherever the match has the captures of both.
 */
static void warn_rules(struct loader *ld, sl_spec *spec, const struct node *seq)
{
	sl_strvec *needs = sl_xcalloc(spec->nrules ? spec->nrules : 1, sizeof(*needs));
	sl_buf w = SL_BUF_INIT;

	for (size_t i = 0; i < spec->nrules; i++)
		needs_of(&needs[i], spec, i);
	for (size_t j = 1; j < spec->nrules; j++) {
		size_t shadow = j, overlap = j;

		if (spec->rules[j].cocci)
			continue;
		for (size_t i = 0; i < j; i++) {
			const sl_spec_rule *a = &spec->rules[i];

			if (a->cocci)
				continue;       /* it applies only where it changes something */

			if (shadow == j && !a->nwhere && subset(&needs[i], &needs[j]))
				shadow = i;
			else if (overlap == j && !a->nwhere &&
				 !strcmp(a->capture, spec->rules[j].capture))
				overlap = i;
		}
		if (shadow == j && overlap == j)
			continue;
		sl_buf_reset(&w);
		sl_buf_addf(&w, "%s:%zu:%zu: warning: rule %zu ", ld->path,
			    seq->kid[j]->start.line + 1, seq->kid[j]->start.column + 1, j + 1);
		if (shadow < j)
			sl_buf_addf(&w, "can never apply: rule %zu (line %zu) applies first "
				    "wherever it could", shadow + 1, seq->kid[shadow]->start.line + 1);
		else
			sl_buf_addf(&w, "overlaps rule %zu (line %zu): both rewrite @%s, and where "
				    "both could apply rule %zu does (rules are tried in order)",
				    overlap + 1, seq->kid[overlap]->start.line + 1,
				    spec->rules[j].capture, overlap + 1);
		sl_strvec_push(&spec->warnings, w.buf);
	}
	for (size_t i = 0; i < spec->nrules; i++)
		sl_strvec_release(&needs[i]);
	free(needs);
	sl_buf_release(&w);
}

/* A Coccinelle rule: `cocci: FILE` alone (v: the entry's keys, in rules_keys' order). */
static int load_cocci(struct loader *ld, const struct node **v, sl_spec_rule *r,
		      const sl_spec *spec)
{
	char *file = NULL;

	for (size_t k = 0; k < 3; k++)
		if (v[k])
			return spec_fail(ld, v[k]->start, "a rule with 'cocci' takes no "
					 "capture, template or where (the semantic patch says all)");
	if (spec_get_str(ld, v[3], "cocci", "rules", 1, &file))
		return SL_EINPUT;
	r->cocci = file[0] == '/' ? file : sl_path_join(spec->dir, file);
	if (r->cocci != file)
		free(file);
	return 0;
}

int spec_load_rules(struct loader *ld, const struct node *seq, sl_spec *spec)
{
	static const char *const rules_keys[] = { "capture", "template", "where", "cocci", NULL };
	enum { K_CAPTURE, K_TEMPLATE, K_WHERE, K_COCCI };
	const struct node *v[SL_CAP_SPEC_KEYS];
	size_t i;

	if (spec_want_type(ld, seq, N_SEQ, "rules", NULL))
		return SL_EINPUT;
	spec->rules = sl_xcalloc(seq->nkid ? seq->nkid : 1, sizeof(*spec->rules));
	for (i = 0; i < seq->nkid; i++) {
		const struct node *item = seq->kid[i];
		sl_spec_rule *r = &spec->rules[spec->nrules];

		if (item->type != N_MAP)
			return spec_fail(ld, item->start, "expected a mapping for an entry of 'rules'");
		spec->nrules++;
		r->pos.line = (uint32_t)(item->start.line + 1);
		r->pos.col = (uint32_t)(item->start.column + 1);
		if (spec_map_fields(ld, item, "rules", rules_keys, v))
			return SL_EINPUT;
		if (v[K_COCCI] && load_cocci(ld, v, r, spec))
			return SL_EINPUT;
		if (v[K_COCCI])
			continue;
		if (spec_get_str(ld, v[K_CAPTURE], "capture", "rules", 1, &r->capture) ||
		    spec_get_str(ld, v[K_TEMPLATE], "template", "rules", 0, &r->template_text) ||
		    spec_need(ld, item, v[K_CAPTURE], "capture", "rules") ||
		    spec_need(ld, item, v[K_TEMPLATE], "template", "rules") ||
		    (v[K_WHERE] && load_where(ld, v[K_WHERE], r)))
			return SL_EINPUT;
	}
	warn_rules(ld, spec, seq);
	return 0;
}

int spec_load_expect(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const expect_keys[] = { "gone", "present", NULL };
	const struct node *v[SL_CAP_SPEC_KEYS];

	if (spec_want_type(ld, map, N_MAP, "expect", "targets") ||
	    spec_map_fields(ld, map, "expect", expect_keys, v) ||
	    spec_get_str(ld, v[0], "gone", "expect", 1, &spec->expect_gone) ||
	    spec_get_str(ld, v[1], "present", "expect", 1, &spec->expect_present))
		return SL_EINPUT;
	if (spec->expect_gone && !strcmp(spec->expect_gone, "none")) {
		free(spec->expect_gone);
		spec->expect_gone = NULL;
		spec->expect_none = 1;
	}
	if (v[0])
		spec->expect_gone_pos = spec_text_pos(ld, v[0]);
	if (v[1])
		spec->expect_present_pos = spec_text_pos(ld, v[1]);
	return 0;
}

sl_rule *sl_spec_rules(const sl_spec *spec)
{
	sl_rule *rules;

	if (!spec->nrules)
		return NULL;
	rules = sl_xcalloc(spec->nrules, sizeof(*rules));
	for (size_t i = 0; i < spec->nrules; i++) {
		rules[i].capture = spec->rules[i].capture;
		rules[i].template_text = spec->rules[i].template_text;
		rules[i].cocci = spec->rules[i].cocci;
		rules[i].where = spec->rules[i].where;
		rules[i].nwhere = spec->rules[i].nwhere;
	}
	return rules;
}
