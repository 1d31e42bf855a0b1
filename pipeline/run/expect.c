/*
 * expect.c - the change did what was asked: a migration's candidate
 * changes every site of its target (the campaign's query matches nowhere
 * inside the unit at a text one of the target's sites had: a site left as
 * it was), or, with `expect: {gone: Q}`, leaves no match of Q there at
 * all; with `expect: {present: Q}` it leaves at least one match of Q.  A
 * query that selects whole units (a function by its name) thus passes any
 * change of the unit, and a rule that writes what the query matches too
 * (`(call) @call` to `z()`) passes.  Judged on the candidate's commit before any tree is
 * made, recorded as the gate "expect" (pass or fail) beside "syntax", with
 * the sites left named "PATH:LINE:COL: TEXT" in its output and in the
 * feedback.
 *
 * Reads the target's file at the base and at the candidate.  The unit's
 * extent in the candidate is its base extent carried through the file's
 * diff: an offset before or after a changed stretch moves by the stretch's
 * growth; one inside it goes to the stretch's edge (the start of a unit to
 * the first changed byte, its end to the last), the stretches those of
 * sl_text_changes (rules.h): the bytes that differ.
 * Then the query runs on the candidate's file alone (sl_scope with the
 * file's path as its only path: looked up, not a walk of the tree) and its
 * sites inside that extent count.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/campaign.h"
#include "pipeline/generate/rules.h"
#include "pipeline/run/run_internal.h"

/* The changes of the target's file (sl_text_changes). */
struct file_pair {
	sl_text_change *v;
	size_t n;
};

/* Old offset o in the new file; an offset inside a change goes to its start (or end). */
static uint32_t map_offset(const struct file_pair *fp, uint32_t o, int is_end)
{
	int64_t delta = 0;

	for (size_t i = 0; i < fp->n; i++) {
		const sl_text_change *s = &fp->v[i];

		if (o < s->ob)
			break;
		if (o == s->ob) {
			/* a unit's end just before a change: the change is outside,
			   unless it only inserts there (the unit's rewrite grew) */
			if (!is_end || s->oe > s->ob)
				break;
			return s->ne;
		}
		if (o < s->oe)
			return is_end ? s->ne : s->nb;
		delta = (int64_t)s->ne - (int64_t)s->oe;
	}
	return (uint32_t)((int64_t)o + delta);
}

static int blob_at(git_blob **out, git_repository *repo, const git_oid *commit,
		   const char *path, sl_err *err)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	int ret = SL_ERROR;

	*out = NULL;
	if (git_commit_lookup(&c, repo, commit) || git_commit_tree(&tree, c)) {
		sl_err_set(err, SL_ERROR, "cannot read commit: %s", sl_git_error());
		goto done;
	}
	ret = SL_OK;
	if (git_tree_entry_bypath(&e, tree, path))
		goto done;      /* deleted: nothing of the unit is left */
	if (git_blob_lookup(out, repo, git_tree_entry_id(e)))
		ret = sl_err_set(err, SL_ERROR, "cannot read '%s': %s", path, sl_git_error());
done:
	git_tree_entry_free(e);
	git_tree_free(tree);
	git_commit_free(c);
	return ret;
}

/* The text of a site's own capture (the one that spans it), or "". */
static const char *site_text(const sl_site *s)
{
	for (size_t c = 0; c < s->ncaps; c++)
		if (s->caps[c].start_byte == s->start_byte && s->caps[c].end_byte == s->end_byte &&
		    s->caps[c].text)
			return s->caps[c].text;
	return "";
}

/*
 * 1 if a site of the candidate with this text counts: any does when
 * base is NULL; else one whose text a base site of the target had (each
 * base site counted once: base_used marks them), a site left as it was.
 */
static int counts(const sl_target *base, char *base_used, const char *text)
{
	if (!base)
		return 1;
	for (size_t i = 0; i < base->nsites; i++)
		if (!base_used[i] && !strcmp(site_text(&base->sites[i]), text)) {
			base_used[i] = 1;
			return 1;
		}
	return 0;
}

/*
 * The sites of query q in the candidate's file inside [start, end), one
 * "PATH:LINE:COL: TEXT" line each into out; *count their number.  With
 * base (the target at the base), only the sites whose text one of its
 * sites had.
 */
static int sites_inside(sl_buf *out, size_t *count, run_attempt *a, const char *q,
			const char *capture, const sl_target *base, uint32_t start, uint32_t end,
			sl_err *err)
{
	char *used = sl_xcalloc(base && base->nsites ? base->nsites : 1, 1);
	sl_scope_opts so = SL_SCOPE_OPTS_INIT;
	sl_target_list list = SL_TARGET_LIST_INIT;
	sl_lang_override *ov = sl_campaign_scope_opts(&so, a->x->c);
	int ret;

	*count = 0;
	so.query = q;
	so.capture = capture;
	so.unit = "capture";
	so.paths = (const char *const *)&a->t->path;
	so.npaths = 1;
	so.threads = 1;
	if (!(ret = sl_scope(&list, a->repo, &a->commit, &so, err))) {
		for (size_t i = 0; i < list.n; i++)
			for (size_t k = 0; k < list.v[i].nsites; k++) {
				const sl_site *s = &list.v[i].sites[k];
				const char *text = site_text(s);

				if (s->start_byte < start || s->end_byte > end ||
				    !counts(base, used, text))
					continue;
				(*count)++;
				sl_buf_addf(out, "  %s:%u:%u: %.*s\n", a->t->path, s->start_line,
					    s->start_col, (int)strcspn(text, "\n"), text);
			}
	}
	sl_target_list_release(&list);
	free(used);
	free(ov);
	return ret;
}

/* The unit's extent in the candidate's file; 0 if the file is gone. */
static int unit_extent(run_attempt *a, uint32_t *start, uint32_t *end, sl_err *err)
{
	git_blob *old = NULL, *now = NULL;
	struct file_pair fp = { 0 };
	int ret;

	if ((ret = blob_at(&old, a->repo, &a->x->c->base, a->t->path, err)) ||
	    (ret = blob_at(&now, a->repo, &a->commit, a->t->path, err)) || !old || !now)
		goto done;
	if ((ret = sl_text_changes(&fp.v, &fp.n, git_blob_rawcontent(old),
				   (size_t)git_blob_rawsize(old), git_blob_rawcontent(now),
				   (size_t)git_blob_rawsize(now), err)))
		goto done;
	*start = map_offset(&fp, a->t->start_byte, 0);
	*end = map_offset(&fp, a->t->end_byte, 1);
	ret = 1;
done:
	free(fp.v);
	git_blob_free(old);
	git_blob_free(now);
	return ret;
}

static void add_rec(run_attempt *a, int ok, const char *out, int64_t ms)
{
	sl_gate_outcome *g = &a->gates;
	sl_gate_run_rec *rec;

	SL_ALLOC_GROW(g->v, g->n + 1, g->alloc);
	rec = &g->v[g->n++];
	memset(rec, 0, sizeof(*rec));
	rec->gate = sl_xstrdup("expect");
	rec->verdict = ok ? SL_VERDICT_PASS : SL_VERDICT_FAIL;
	rec->exit_status = ok ? 0 : 1;
	rec->duration_ms = ms;
	rec->output_bytes = (int64_t)strlen(out);
	rec->output_tail = sl_xstrdup(out);
}

int run_expect_check(run_attempt *a, int *ok, sl_err *err)
{
	const sl_spec *spec = a->x->c->spec;
	const char *gone = spec->expect_gone ? spec->expect_gone : spec->query;
	sl_buf left = SL_BUF_INIT, out = SL_BUF_INIT;
	int64_t t0 = sl_now_ms();
	uint32_t start = 0, end = 0;
	size_t nleft = 0, npresent = 0;
	int r, ret = SL_ERROR;

	*ok = 1;
	if (spec->job != SL_JOB_MIGRATION || (spec->expect_none && !spec->expect_present))
		return SL_OK;
	if ((r = unit_extent(a, &start, &end, err)) < 0)
		goto done;
	if (r && !spec->expect_none &&
	    sites_inside(&left, &nleft, a, gone, spec->expect_gone ? NULL : spec->capture,
			 spec->expect_gone ? NULL : a->t, start, end, err))
		goto done;
	if (r && spec->expect_present &&
	    sites_inside(&out, &npresent, a, spec->expect_present, NULL, NULL, start, end,
			 err))
		goto done;
	sl_buf_reset(&out);
	if (nleft)
		sl_buf_addf(&out, "The change does not do all that was asked: %s still matches "
			    "%zu time%s inside the target (%s:%u-%u)%s:\n%s",
			    spec->expect_gone ? "the query of 'expect: gone'" : "the campaign's query",
			    nleft, nleft == 1 ? "" : "s", a->t->path, a->t->start_line,
			    a->t->end_line, spec->expect_gone ? "" : " where it matched before",
			    left.buf);
	if (spec->expect_present && !npresent)
		sl_buf_addf(&out, "The change does not do what was asked: the query of 'expect: "
			    "present' does not match inside the target (%s:%u-%u).\n", a->t->path,
			    a->t->start_line, a->t->end_line);
	*ok = !out.len;
	add_rec(a, *ok, out.buf, sl_now_ms() - t0);
	if (!*ok)
		sl_buf_addf(&a->s.feedback, "%s%s", out.buf, nleft ? "Change each of those "
			    "sites as well.\n" : "");
	ret = SL_OK;
done:
	sl_buf_release(&left);
	sl_buf_release(&out);
	return ret;
}
