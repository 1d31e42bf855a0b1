/*
 * cmd_preview.c - `sluice preview`: what the campaign's rules would do,
 * site by site, before any run: the diff each site's rule makes, and the
 * sites no rule covers, which are left for the model.
 *
 *   sluice preview CAMPAIGN.yaml [--repo PATH] [--json] [--color WHEN]
 *
 * Reads the campaign file and the repository (the base commit's blobs);
 * writes nothing: no store, no branch, no commit, no gate.  Its cost is the
 * scope's plus a diff per rewritten site.  The campaign file's warnings
 * (rules that overlap or can never apply) go to stderr.
 *
 * Text: per site "PATH:LINE:COL: rule N (@CAPTURE)" and the diff of that
 * one rewrite against the base (from its "---" line, three lines of
 * context), or "PATH:LINE:COL: rule N: no change" (the rule applies and
 * leaves the text as it is, or the site is inside one rewritten before),
 * or "PATH:LINE:COL: for the model: TEXT" (its first line); then one line
 * "N sites: R rewritten by rules, U unchanged, M for the model".  --json:
 * one object per site, then {"summary": ...}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/campaign.h"
#include "pipeline/generate/rules.h"
#include "common/term.h"
#include "common/util.h"

struct preview_opts {
	const char *repo, *color;
	int json;
};

struct preview {
	const sl_campaign *c;
	const sl_rule *rules;
	size_t nrules;
	int json, color;
	size_t sites, rewritten, unchanged, model;
	sl_buf line;
};

#define RED "\033[31m"
#define GREEN "\033[32m"
#define CYAN "\033[36m"
#define BOLD "\033[1m"
#define RESET "\033[m"

/* Print text (from the repository) safely, each line coloured by its first byte. */
static void print_diff(const struct preview *p, const char *text)
{
	sl_buf safe = SL_BUF_INIT;

	while (*text) {
		size_t len = strcspn(text, "\n");
		const char *col = !p->color ? NULL : text[0] == '-' ? RED : text[0] == '+' ?
			GREEN : text[0] == '@' ? CYAN : NULL;

		sl_buf_reset(&safe);
		sl_term_safe(&safe, text, len, 0);
		printf("%s%s%s\n", col ? col : "", safe.buf, col ? RESET : "");
		text += len + (text[len] == '\n');
	}
	sl_buf_release(&safe);
}

/* The diff of one rewrite of the base file: from its "---" line on. */
static int rewrite_diff(sl_buf *out, const char *path, const char *old, size_t oldlen,
			const sl_edit *e, sl_err *err)
{
	git_patch *patch = NULL;
	git_buf buf = { 0 };
	sl_buf now = SL_BUF_INIT;
	const char *from;
	int ret = SL_ERROR;

	sl_buf_add(&now, old, e->start);
	sl_buf_adds(&now, e->new_text);
	sl_buf_add(&now, old + e->end, oldlen - e->end);
	if (git_patch_from_buffers(&patch, old, oldlen, path, now.buf, now.len, path, NULL) ||
	    git_patch_to_buf(&buf, patch)) {
		sl_err_set(err, SL_ERROR, "cannot diff '%s': %s", path, sl_git_error());
		goto done;
	}
	from = strstr(buf.ptr, "\n--- ");
	sl_buf_adds(out, from ? from + 1 : buf.ptr);
	ret = SL_OK;
done:
	git_buf_dispose(&buf);
	git_patch_free(patch);
	sl_buf_release(&now);
	return ret;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* One JSON object on a line of its own; takes o. */
static void print_json(json_t *o)
{
	char *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	sl_cmd_print(stdout, out, 1);
	putchar('\n');
	free(out);
	json_decref(o);
}

/* p->line, bold on a terminal, then the diff (if any). */
static void print_head(const struct preview *p, const char *diff)
{
	printf("%s", p->color ? BOLD : "");
	sl_cmd_print(stdout, p->line.buf, 0);
	printf("%s\n", p->color ? RESET : "");
	if (diff)
		print_diff(p, diff);
}

/* One site: its line (text or JSON) and diff. */
static void print_site(struct preview *p, const sl_target *t, const sl_site *s,
		       const sl_rule_site *rs, const char *diff)
{
	const char *what = rs->rule < 0 ? "model" : diff ? "rules" : "unchanged";
	const char *text = s->ncaps && s->caps[0].text ? s->caps[0].text : "";

	for (size_t k = 0; k < s->ncaps; k++)
		if (s->caps[k].start_byte == s->start_byte && s->caps[k].end_byte == s->end_byte)
			text = s->caps[k].text ? s->caps[k].text : "";
	if (p->json) {
		json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:s}", "path", t->path,
				      "line", (json_int_t)s->start_line,
				      "col", (json_int_t)s->start_col,
				      "end_line", (json_int_t)s->end_line,
				      "end_col", (json_int_t)s->end_col, "by", what);

		json_object_set_new(o, "rule", rs->rule < 0 ? json_null() :
				    json_integer(rs->rule + 1));
		json_object_set_new(o, "capture", rs->rule < 0 || !p->rules[rs->rule].capture ?
				    json_null() : json_string(p->rules[rs->rule].capture));
		json_object_set_new(o, "cocci", rs->rule < 0 || !p->rules[rs->rule].cocci ?
				    json_null() : json_string(p->rules[rs->rule].cocci));
		json_object_set_new(o, "text", json_string(text));
		json_object_set_new(o, "diff", diff ? json_string(diff) : json_null());
		print_json(o);
		return;
	}
	sl_buf_reset(&p->line);
	sl_buf_addf(&p->line, "%s:%u:%u: ", t->path, s->start_line, s->start_col);
	if (rs->rule < 0)
		sl_buf_addf(&p->line, "for the model: %.*s", (int)strcspn(text, "\n"), text);
	else if (!diff)
		sl_buf_addf(&p->line, "rule %d: no change", rs->rule + 1);
	else if (p->rules[rs->rule].cocci)
		sl_buf_addf(&p->line, "rule %d (%s)", rs->rule + 1,
			    base_name(p->rules[rs->rule].cocci));
	else
		sl_buf_addf(&p->line, "rule %d (@%s)", rs->rule + 1, p->rules[rs->rule].capture);
	print_head(p, diff);
}

/* A change of a semantic patch that no site's line shows. */
static void print_outside(struct preview *p, const sl_target *t, const char *diff)
{
	if (p->json) {
		print_json(json_pack("{s:s, s:s, s:s}", "path", t->path, "by", "rules", "diff",
				     diff));
		return;
	}
	sl_buf_reset(&p->line);
	sl_buf_addf(&p->line, "%s: a semantic patch's change beside the sites", t->path);
	print_head(p, diff);
}

static int read_blob(git_blob **out, git_repository *repo, const char *hex, sl_err *err)
{
	git_oid oid;

	if (git_oid_fromstr(&oid, hex) || git_blob_lookup(out, repo, &oid))
		return sl_err_set(err, SL_ERROR, "cannot read blob %s: %s", hex, sl_git_error());
	return SL_OK;
}

/* Every site of one target. */
static int preview_target(struct preview *p, const sl_target *t, sl_err *err)
{
	sl_edit_list edits = SL_EDIT_LIST_INIT;
	sl_rule_site *rs = sl_xcalloc(t->nsites ? t->nsites : 1, sizeof(*rs));
	sl_buf diff = SL_BUF_INIT;
	git_blob *blob = NULL;
	int ret = SL_ERROR;

	if (sl_rules_apply_ext(&edits, p->rules, p->nrules, t, rs, err) < 0)
		goto done;
	if (edits.n && read_blob(&blob, p->c->repo, t->blob, err))
		goto done;
	for (size_t k = 0; k < edits.n; k++) {
		/* a semantic patch's change beside the sites: shown too */
		size_t s;

		for (s = 0; s < t->nsites && rs[s].edit != (long)k; s++)
			;
		if (s < t->nsites)
			continue;
		sl_buf_reset(&diff);
		if (rewrite_diff(&diff, t->path, git_blob_rawcontent(blob),
				 (size_t)git_blob_rawsize(blob), &edits.v[k], err))
			goto done;
		print_outside(p, t, diff.buf);
	}
	for (size_t s = 0; s < t->nsites; s++) {
		p->sites++;
		sl_buf_reset(&diff);
		if (rs[s].edit >= 0 &&
		    rewrite_diff(&diff, t->path, git_blob_rawcontent(blob),
				 (size_t)git_blob_rawsize(blob), &edits.v[rs[s].edit], err))
			goto done;
		if (rs[s].rule < 0)
			p->model++;
		else if (rs[s].edit < 0)
			p->unchanged++;
		else
			p->rewritten++;
		print_site(p, t, &t->sites[s], &rs[s], rs[s].edit >= 0 ? diff.buf : NULL);
	}
	ret = SL_OK;
done:
	git_blob_free(blob);
	sl_buf_release(&diff);
	sl_edit_list_release(&edits);
	free(rs);
	return ret;
}

static void print_summary(const struct preview *p)
{
	if (p->json) {
		print_json(json_pack("{s:{s:I, s:I, s:I, s:I}}", "summary",
				     "sites", (json_int_t)p->sites,
				     "rules", (json_int_t)p->rewritten,
				     "unchanged", (json_int_t)p->unchanged,
				     "model", (json_int_t)p->model));
		return;
	}
	printf("%zu site%s: %zu rewritten by rules, %zu unchanged, %zu for the model\n",
	       p->sites, p->sites == 1 ? "" : "s", p->rewritten, p->unchanged, p->model);
}

static int want_color(const sl_command *self, const char *when, int *out)
{
	if (!when || !strcmp(when, "auto"))
		*out = isatty(STDOUT_FILENO);
	else if (!strcmp(when, "always") || !strcmp(when, "never"))
		*out = !strcmp(when, "always");
	else
		return sl_cmd_usage(self, "--color wants auto, always or never, got '%s'", when);
	return 0;
}

static int preview_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct preview_opts *o = opts;
	struct preview p = { .json = o->json };
	sl_campaign *c = NULL;
	sl_target_list list = SL_TARGET_LIST_INIT;
	sl_rule *rules = NULL;
	sl_err err = SL_ERR_INIT;
	int ret;

	if (args->n != 1)
		return sl_cmd_usage(self, "expected one campaign file");
	if ((ret = want_color(self, o->color, &p.color)))
		return ret;
	p.color = p.color && !o->json;
	sl_buf_init(&p.line, 0);
	if (sl_campaign_load(&c, args->v[0], o->repo, &err))
		goto fail;
	for (size_t i = 0; i < c->spec->warnings.n; i++)
		fprintf(stderr, "sluice: %s\n", c->spec->warnings.v[i]);
	rules = sl_spec_rules(c->spec);
	p.c = c;
	p.rules = rules;
	p.nrules = c->spec->nrules;
	if (sl_campaign_scope(&list, c, NULL, &err))
		goto fail;
	for (size_t i = 0; i < list.n; i++)
		if (preview_target(&p, &list.v[i], &err))
			goto fail;
	print_summary(&p);
	ret = SL_EXIT_OK;
	goto done;
fail:
	ret = sl_cmd_fail(&err);
done:
	sl_target_list_release(&list);
	free(rules);
	sl_campaign_free(c);
	sl_buf_release(&p.line);
	return ret;
}

static const sl_option preview_options[] = {
	CMD_OPT_REPO(struct preview_opts, "the repository (instead of the campaign's)"),
	CMD_OPT_JSON(struct preview_opts, "one object per site, then a summary"),
	SL_OPT_STRING("color", 0, "WHEN", "colour the diffs: auto (on a terminal), always, "
		      "never", "auto", struct preview_opts, color),
	SL_OPT_END(),
};

const sl_command cmd_preview = {
	.name = "preview",
	.summary = "show what the campaign's rules would change, site by site",
	.usage = "usage: sluice preview CAMPAIGN.yaml [--repo PATH] [--json] [--color WHEN]\n",
	.about = "Scope the campaign's base and, for every site, print the diff its rule would\n"
		"make, or that no rule covers it and it is left for the model.  Nothing is\n"
		"stored, committed or gated.\n",
	.options = preview_options,
	.notes = "Exit status: 0, or 2 for a bad campaign file.\n",
	.opts_size = sizeof(struct preview_opts),
	.fn = preview_main,
};
