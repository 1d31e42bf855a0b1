/*
 * campaign.c - loading a campaign (campaign.h): the campaign file, the
 * checks later stages would make, the repository and its base commit.
 *
 * Reads: the campaign file, the repository.  Writes: nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "pipeline/campaign.h"
#include "pipeline/generate/edit.h"
#include "pipeline/generate/prompt.h"
#include "pipeline/generate/provider.h"
#include "pipeline/generate/rules.h"
#include "scoping/context.h"
#include "scoping/lang.h"
#include "scoping/scope.h"

/*
 * The error of a check on the campaign file's text, at pos: the message
 * quotes that text, so it is shown on one line (sl_spec_show).
 */
static int fail_at(sl_err *err, const sl_spec *spec, sl_pos pos)
{
	if (err) {
		char *msg = sl_xstrdup(err->msg);

		sl_spec_show(err->msg, sizeof(err->msg), msg);
		free(msg);
	}
	if (pos.line)
		sl_err_prefix(err, "%s:%u:%u: ", spec->path, pos.line, pos.col);
	else
		sl_err_prefix(err, "%s: ", spec->path);
	if (err)
		err->code = SL_EINPUT;
	return SL_EINPUT;
}

/* The checks of a query that must (or must not) match after the change. */
static int check_expect(const sl_spec *spec, const char *q, sl_pos pos, sl_err *err)
{
	if (!q || !sl_scope_check_query(spec->language, q, NULL, NULL, err))
		return SL_OK;
	sl_err_prefix(err, "expect: ");
	return fail_at(err, spec, pos);
}

static int validate(const sl_spec *spec, sl_err *err)
{
	uint32_t off = UINT32_MAX;
	sl_rule *rules;

	if (!sl_lang_known(spec->language)) {
		sl_err_set(err, SL_EINPUT, "unknown language '%s' (known: %s)", spec->language,
			   sl_lang_names());
		return fail_at(err, spec, spec->language_pos);
	}
	for (size_t i = 0; i < spec->override_langs.n; i++)
		if (!sl_lang_known(spec->override_langs.v[i])) {
			sl_err_set(err, SL_EINPUT, "unknown language '%s' (known: %s)",
				   spec->override_langs.v[i], sl_lang_names());
			return fail_at(err, spec, spec->override_pos[i]);
		}
	if (sl_scope_check_query(spec->language, spec->query, spec->capture, &off, err))
		return fail_at(err, spec, off == UINT32_MAX ? spec->query_pos :
			       sl_spec_query_pos(spec, off));
	if (spec->prompt && sl_prompt_check(spec->prompt, err))
		return fail_at(err, spec, spec->prompt_pos);
	rules = sl_spec_rules(spec);
	for (size_t i = 0; i < spec->nrules; i++)
		if (sl_rule_check(&rules[i], spec->language, spec->query, err)) {
			free(rules);
			return fail_at(err, spec, spec->rules[i].pos);
		}
	free(rules);
	if (check_expect(spec, spec->expect_gone, spec->expect_gone_pos, err) ||
	    check_expect(spec, spec->expect_present, spec->expect_present_pos, err))
		return SL_EINPUT;
	return SL_OK;
}

int sl_campaign_check(const sl_spec *spec, sl_err *err)
{
	return validate(spec, err);
}

void sl_campaign_free(sl_campaign *c)
{
	if (!c)
		return;
	git_repository_free(c->repo);
	sl_spec_free(c->spec);
	free(c->repo_path);
	free(c);
}

int sl_campaign_load(sl_campaign **out, const char *spec_path, const char *repo_override,
		     sl_err *err)
{
	sl_campaign *c = sl_xcalloc(1, sizeof(*c));
	sl_spec_opts so = SL_SPEC_OPTS_INIT;
	git_object *obj = NULL;
	git_commit *commit = NULL;
	char *repo = NULL, sbuf[160];
	int ret;

	*out = NULL;
	so.repository = repo_override;
	if ((ret = sl_spec_load_ext(&c->spec, spec_path, &so, err)) ||
	    (ret = validate(c->spec, err)))
		goto done;
	if (repo_override)
		repo = sl_xstrdup(repo_override);
	else if (c->spec->repository[0] == '/')
		repo = sl_xstrdup(c->spec->repository);
	else
		repo = sl_path_join(c->spec->dir, c->spec->repository);
	ret = SL_EINPUT;
	if (!(c->repo_path = realpath(repo, NULL))) {
		sl_err_set(err, SL_EINPUT, "repository '%s': %s",
			   sl_spec_show(sbuf, sizeof(sbuf), repo), strerror(errno));
		goto done;
	}
	if (git_repository_open_ext(&c->repo, c->repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		sl_err_set(err, SL_EINPUT, "repository '%s': %s", c->repo_path, sl_git_error());
		goto done;
	}
	if (git_revparse_single(&obj, c->repo, c->spec->base) ||
	    git_object_peel((git_object **)&commit, obj, GIT_OBJECT_COMMIT)) {
		sl_err_set(err, SL_EINPUT, "base revision '%s' not found in '%s'",
			   sl_spec_show(sbuf, sizeof(sbuf), c->spec->base), c->repo_path);
		goto done;
	}
	git_oid_cpy(&c->base, git_commit_id(commit));
	git_oid_tostr(c->base_hex, sizeof(c->base_hex), &c->base);
	*out = c;
	c = NULL;
	ret = SL_OK;
done:
	git_commit_free(commit);
	git_object_free(obj);
	free(repo);
	sl_campaign_free(c);
	return ret;
}

sl_lang_override *sl_campaign_scope_opts(sl_scope_opts *so, const sl_campaign *c)
{
	sl_lang_override *ov = NULL;

	so->language = c->spec->language;
	so->query = c->spec->query;
	so->globs = (const char *const *)c->spec->paths.v;
	so->nglobs = c->spec->paths.n;
	so->capture = c->spec->capture;
	so->unit = c->spec->unit;
	if (c->spec->override_globs.n) {
		ov = sl_xcalloc(c->spec->override_globs.n, sizeof(*ov));
		for (size_t i = 0; i < c->spec->override_globs.n; i++) {
			ov[i].glob = c->spec->override_globs.v[i];
			ov[i].language = c->spec->override_langs.v[i];
		}
		so->overrides = ov;
		so->noverrides = c->spec->override_globs.n;
	}
	return ov;
}

int sl_campaign_scope(sl_target_list *out, const sl_campaign *c, sl_store *cache, sl_err *err)
{
	sl_scope_opts so = SL_SCOPE_OPTS_INIT;
	sl_lang_override *ov = sl_campaign_scope_opts(&so, c);
	int ret;

	so.cache = cache;
	ret = sl_scope(out, c->repo, &c->base, &so, err);
	free(ov);
	return ret;
}
