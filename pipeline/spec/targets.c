/*
 * targets.c - the campaign file's 'targets' section: language, query,
 * capture, unit, language_overrides, paths and expect (rules.c); and the query a fix campaign
 * defaults to when it names none.
 *
 * The language and the query are only read here; campaign.c checks them
 * against the grammars (their positions are kept for its messages).
 */
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"
#include "scoping/scope.h"

/* 1 if s is in v. */
static int has_str(const sl_strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return 1;
	return 0;
}

/* 'language_overrides' in 'targets': glob to language, each glob once. */
static int load_overrides(struct loader *ld, const struct node *m, sl_spec *spec)
{
	char sbuf[80];

	if (spec_want_type(ld, m, N_MAP, "language_overrides", "targets"))
		return SL_EINPUT;
	for (size_t i = 0; i + 1 < m->nkid; i += 2) {
		char *glob = NULL, *lang = NULL;

		if (spec_get_str(ld, m->kid[i], "language_overrides", "targets", 1, &glob) ||
		    spec_get_str(ld, m->kid[i + 1], "language_overrides", "targets", 1, &lang)) {
			free(glob);
			return SL_EINPUT;
		}
		if (has_str(&spec->override_globs, glob)) {
			spec_fail(ld, m->kid[i]->start, "duplicate key '%s' in 'language_overrides'",
				  spec_show(sbuf, sizeof(sbuf), glob, strlen(glob)));
			free(glob);
			free(lang);
			return SL_EINPUT;
		}
		sl_strvec_push_nodup(&spec->override_globs, glob);
		sl_strvec_push_nodup(&spec->override_langs, lang);
		SL_ALLOC_GROW(spec->override_pos, spec->override_langs.n, spec->override_pos_alloc);
		spec->override_pos[spec->override_langs.n - 1] = spec_text_pos(ld, m->kid[i + 1]);
	}
	return 0;
}

/* 'paths' in 'targets': one string or a sequence of strings. */
static int load_paths(struct loader *ld, const struct node *v, sl_spec *spec)
{
	char *one = NULL;

	if (v->type == N_MAP)
		return spec_fail(ld, v->start,
				 "expected a string or a sequence for 'paths' in 'targets'");
	if (v->type == N_SCALAR) {
		if (spec_get_str(ld, v, "paths", "targets", 1, &one))
			return SL_EINPUT;
		sl_strvec_push_nodup(&spec->paths, one);
		return 0;
	}
	for (size_t i = 0; i < v->nkid; i++) {
		const struct node *item = v->kid[i];

		one = NULL;
		if (item->type != N_SCALAR || spec_is_null(item))
			return spec_fail(ld, item->start, "expected a string for an entry of 'paths'");
		if (spec_get_str(ld, item, "paths", "targets", 1, &one))
			return SL_EINPUT;
		sl_strvec_push_nodup(&spec->paths, one);
	}
	return 0;
}

/* 'targets': language, query, capture, unit, overrides and paths. */
int spec_load_targets(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const targets_keys[] = { "language", "paths", "query", "capture", "unit",
		"language_overrides", "expect", NULL };
	static const char *const units[] = { "capture", "statement", "function", "class", "file",
		NULL };
	static const int unit_ix[] = { 0, 1, 2, 3, 4 };
	enum { K_LANGUAGE, K_PATHS, K_QUERY, K_CAPTURE, K_UNIT, K_OVERRIDES, K_EXPECT };
	const struct node *v[SL_CAP_SPEC_KEYS];
	int unit = 0;

	if (spec_map_fields(ld, map, "targets", targets_keys, v) ||
	    spec_get_str(ld, v[K_LANGUAGE], "language", "targets", 1, &spec->language) ||
	    spec_get_str(ld, v[K_QUERY], "query", "targets", 1, &spec->query) ||
	    spec_get_str(ld, v[K_CAPTURE], "capture", "targets", 1, &spec->capture) ||
	    spec_get_enum(ld, v[K_UNIT], "unit", "targets", units, unit_ix, &unit) ||
	    spec_need(ld, map, v[K_LANGUAGE], "language", "targets"))
		return SL_EINPUT;
	spec->language_pos = spec_text_pos(ld, v[K_LANGUAGE]);
	if (v[K_QUERY]) {
		spec->query_pos = spec_text_pos(ld, v[K_QUERY]);
		spec->query_block = v[K_QUERY]->style == YAML_LITERAL_SCALAR_STYLE ||
			v[K_QUERY]->style == YAML_FOLDED_SCALAR_STYLE;
	} else if (!v[K_UNIT]) {
		unit = 2;   /* fix's default query: the unit is the function */
	}
	spec->unit = sl_xstrdup(units[unit]);
	if (v[K_OVERRIDES] && load_overrides(ld, v[K_OVERRIDES], spec))
		return SL_EINPUT;
	if (v[K_PATHS] && load_paths(ld, v[K_PATHS], spec))
		return SL_EINPUT;
	if (v[K_EXPECT] && spec_load_expect(ld, v[K_EXPECT], spec))
		return SL_EINPUT;
	return 0;
}

/*
 * No `query` in `targets`: a fix campaign takes every function of its
 * language (scope.h, sl_lang_function_query); other kinds must name one.
 */
int spec_default_query(struct loader *ld, const struct node *targets, sl_spec *spec)
{
	const char *q = spec->job == SL_JOB_FIX ? sl_lang_function_query(spec->language) : NULL;
	char sbuf[80];

	if (q) {
		spec->query = sl_xstrdup(q);
		spec->query_default = 1;
		return 0;
	}
	if (spec->job != SL_JOB_FIX)
		return spec_need(ld, targets, NULL, "query", "targets");
	if (!sl_lang_known(spec->language))
		return spec_fail_at(ld, spec->language_pos.line, spec->language_pos.col,
				    "unknown language '%s' (known: %s)",
				    spec_show(sbuf, sizeof(sbuf), spec->language, strlen(spec->language)),
				    sl_lang_names());
	return spec_fail(ld, targets->start, "a fix campaign on %s needs a 'query' in 'targets': "
			 "the language has no functions to default to", spec->language);
}
