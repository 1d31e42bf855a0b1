/*
 * review_change.c - grouping proposed candidates into reviewable changes
 * and committing each with its templated message (review_change.h).
 *
 * A change's tree is the base tree with every candidate's stored diff
 * applied in id order (git_apply_to_tree); its message, title and body come
 * from the review templates with {{variables}} filled from the campaign,
 * the targets, the attempts (rule or model) and the gate runs.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "pipeline/apply/apply.h"
#include "pipeline/review/review_change.h"
#include "common/util.h"

#define DEFAULT_TITLE "sluice({{campaign}}): {{paths}}"
#define DEFAULT_MESSAGE "sluice({{campaign}}): {{paths}}\n\n{{produced}}\n\n{{targets}}\n"
#define DEFAULT_BODY "{{produced}}\n\n### Targets\n\n{{targets}}\n\n### Gates\n\n{{gates}}\n"

void sl_change_list_free(sl_change *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].branch);
		free(v[i].cands);
		free(v[i].title);
		free(v[i].body);
		free(v[i].paths);
	}
	free(v);
}

/* Paths and changed-line count of a diff ("diff --git a/X b/X" headers). */
static void diff_stats(const char *diff, sl_strvec *paths, size_t *lines)
{
	const char *p = diff;

	*lines = 0;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (!strncmp(p, "diff --git a/", 13)) {
			const char *b = strstr(p, " b/");

			if (b && b < p + n)
				sl_strvec_push_nodup(paths, sl_xstrndup(b + 3, (size_t)(p + n - b - 3)));
		} else if ((*p == '+' && strncmp(p, "+++ ", 4)) ||
			   (*p == '-' && strncmp(p, "--- ", 4))) {
			(*lines)++;
		}
		p = nl ? nl + 1 : NULL;
	}
}

static int has(const sl_strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return 1;
	return 0;
}

/* A ref-safe version of a group key. */
static char *ref_safe(const char *key)
{
	sl_buf b = SL_BUF_INIT;

	for (const char *p = key; *p; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '/' ||
			(c == '.' && p[1] != '.' && p[1] != '/' && p[1] && (b.len &&
			 b.buf[b.len - 1] != '/'));

		if (c == '/' && (!b.len || b.buf[b.len - 1] == '/'))
			continue;
		sl_buf_addch(&b, ok ? c : '-');
	}
	while (b.len && (b.buf[b.len - 1] == '/' || b.buf[b.len - 1] == '.'))
		sl_buf_setlen(&b, b.len - 1);
	if (!b.len)
		sl_buf_adds(&b, "change");
	return sl_buf_detach(&b, NULL);
}

typedef struct group {
	char *key;
	sl_strvec paths;
	size_t lines;
	int64_t *idx;               /* indexes into the candidate array */
	size_t n, alloc;
} group;

static group *group_for(group **v, size_t *n, size_t *alloc, const char *key)
{
	for (size_t i = 0; key && i < *n; i++)
		if (!strcmp((*v)[i].key, key))
			return &(*v)[i];
	SL_ALLOC_GROW(*v, *n + 1, *alloc);
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].key = sl_xstrdup(key ? key : "");
	return &(*v)[(*n)++];
}

static void group_add(group *g, size_t ci, const sl_strvec *paths, size_t lines)
{
	SL_ALLOC_GROW(g->idx, g->n + 1, g->alloc);
	g->idx[g->n++] = (int64_t)ci;
	for (size_t i = 0; i < paths->n; i++)
		if (!has(&g->paths, paths->v[i]))
			sl_strvec_push(&g->paths, paths->v[i]);
	g->lines += lines;
}

static void groups_free(group *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		sl_strvec_release(&v[i].paths);
		free(v[i].idx);
	}
	free(v);
}

/* The key of a candidate's group (batches are handled by the caller). */
static char *key_of(const sl_spec *spec, const sl_candidate_rec *c, const sl_strvec *paths)
{
	const char *first = paths->n ? paths->v[0] : c->path, *slash;
	size_t plen = strlen(spec->branch_prefix);
	sl_buf b = SL_BUF_INIT;

	switch (spec->review.group) {
	case SL_GROUP_FILE:
		sl_buf_addf(&b, "file/%s", first);
		return sl_buf_detach(&b, NULL);
	case SL_GROUP_DIRECTORY:
		/* "dir/a.dir" and "dir/a/b.dir" can both be refs; "dir/a" and "dir/a/b" cannot */
		slash = strrchr(first, '/');
		sl_buf_addf(&b, "dir/%.*s.dir", slash ? (int)(slash - first) : 4,
			    slash ? first : "root");
		return sl_buf_detach(&b, NULL);
	default:
		if (c->branch && !strncmp(c->branch, spec->branch_prefix, plen) &&
		    c->branch[plen] == '/')
			return sl_xstrdup(c->branch + plen + 1);
		sl_buf_addf(&b, "c%lld", (long long)c->id);
		return sl_buf_detach(&b, NULL);
	}
}

/* Replace each {{var}} of tmpl by vals[i] where names[i] == var. */
static char *render(const char *tmpl, const char *const *names, const char *const *vals)
{
	sl_buf b = SL_BUF_INIT;
	const char *p = tmpl;

	while (*p) {
		const char *open = strstr(p, "{{"), *close = open ? strstr(open + 2, "}}") : NULL;
		size_t i;

		if (!open || !close) {
			sl_buf_adds(&b, p);
			break;
		}
		sl_buf_add(&b, p, (size_t)(open - p));
		for (i = 0; names[i]; i++)
			if (strlen(names[i]) == (size_t)(close - open - 2) &&
			    !strncmp(names[i], open + 2, (size_t)(close - open - 2)))
				break;
		if (names[i])
			sl_buf_adds(&b, vals[i]);
		else
			sl_buf_add(&b, open, (size_t)(close + 2 - open));
		p = close + 2;
	}
	return sl_buf_detach(&b, NULL);
}

/* "Name <email>" into a signature at time t. */
static int ident(git_signature **out, git_repository *repo, const char *spec_ident, time_t t)
{
	git_signature *dflt = NULL;
	int ret;

	if (spec_ident) {
		const char *lt = strchr(spec_ident, '<');
		char *name = sl_xstrndup(spec_ident, (size_t)(lt - spec_ident));
		char *email = sl_xstrndup(lt + 1, strlen(lt + 1) - 1);
		size_t n = strlen(name);

		while (n && name[n - 1] == ' ')
			name[--n] = '\0';
		ret = git_signature_new(out, name, email, t, 0);
		free(name);
		free(email);
		return ret;
	}
	if (!git_signature_default(&dflt, repo)) {
		ret = git_signature_new(out, dflt->name, dflt->email, t, 0);
		git_signature_free(dflt);
		return ret;
	}
	return git_signature_new(out, "sluice", "sluice@localhost", t, 0);
}

static time_t parse_time(const char *iso)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return timegm(&tm);
}

/* The texts a template may use, for one change. */
typedef struct vars {
	sl_buf paths, targets, gates, produced, source, model, count, line;
} vars;

static void vars_release(vars *v)
{
	sl_buf_release(&v->paths);
	sl_buf_release(&v->targets);
	sl_buf_release(&v->gates);
	sl_buf_release(&v->produced);
	sl_buf_release(&v->source);
	sl_buf_release(&v->model);
	sl_buf_release(&v->count);
	sl_buf_release(&v->line);
}

static void add_word(sl_buf *b, const char *w)
{
	const char *p = b->buf;
	size_t n = strlen(w);

	while ((p = strstr(p, w))) {
		if ((p == b->buf || p[-1] == ' ') && (!p[n] || p[n] == ','))
			return;
		p += n;
	}
	sl_buf_addf(b, "%s%s", b->len ? ", " : "", w);
}

static int fill_vars(vars *v, sl_store *st, const sl_campaign_rec *camp,
		     const sl_candidate_rec *c, const group *g, sl_err *err)
{
	sl_strvec gnames = SL_STRVEC_INIT;
	int64_t *gpass = NULL, *gruns = NULL, attempts = 0;
	size_t alloc = 0, galloc = 0;
	int ret = SL_OK;

	for (size_t i = 0; i < g->paths.n; i++)
		sl_buf_addf(&v->paths, "%s%s", i ? ", " : "", g->paths.v[i]);
	sl_buf_addf(&v->count, "%zu", g->n);
	sl_buf_addf(&v->line, "%lld", (long long)c[g->idx[0]].start_line);
	for (size_t k = 0; k < g->n; k++) {
		const sl_candidate_rec *cd = &c[g->idx[k]];
		sl_gate_run_rec *runs = NULL;
		sl_attempt_rec *a = NULL;
		size_t nr = 0, na = 0;

		sl_buf_addf(&v->targets, "%s- `%s:%lld-%lld` (candidate %lld, attempt %lld)",
			    k ? "\n" : "", cd->path, (long long)cd->start_line,
			    (long long)cd->end_line, (long long)cd->id, (long long)cd->attempt_n);
		if ((ret = sl_store_gate_runs(st, cd->id, &runs, &nr, err)) ||
		    (ret = sl_store_attempts(st, cd->target_id, &a, &na, err))) {
			sl_gate_run_list_free(runs, nr);
			break;
		}
		attempts += (int64_t)na;
		for (size_t i = 0; i < na; i++) {
			json_t *j;
			const char *m;

			if (a[i].id != cd->attempt_id)
				continue;
			add_word(&v->source, a[i].by_rules ? "rule" : "model");
			j = a[i].request ? json_loads(a[i].request, 0, NULL) : NULL;
			m = j ? json_string_value(json_object_get(j, "model")) : NULL;
			add_word(&v->model, m ? m : a[i].source);
			json_decref(j);
		}
		for (size_t i = 0; i < nr; i++) {
			size_t gi;

			for (gi = 0; gi < gnames.n && strcmp(gnames.v[gi], runs[i].gate); gi++)
				;
			if (gi == gnames.n) {
				sl_strvec_push(&gnames, runs[i].gate);
				SL_ALLOC_GROW(gpass, gnames.n, alloc);
				SL_ALLOC_GROW(gruns, gnames.n, galloc);
				gpass[gi] = gruns[gi] = 0;
			}
			gruns[gi]++;
			gpass[gi] += runs[i].verdict == SL_VERDICT_PASS;
		}
		sl_gate_run_list_free(runs, nr);
		sl_attempt_list_free(a, na);
	}
	for (size_t i = 0; i < gnames.n; i++)
		sl_buf_addf(&v->gates, "%s- %s: %s (%lld of %lld passed)", i ? "\n" : "",
			    gnames.v[i], gpass[i] == gruns[i] ? "pass" : "see below",
			    (long long)gpass[i], (long long)gruns[i]);
	sl_buf_addf(&v->produced, "Produced by sluice campaign `%s`: %zu target%s found by a "
		    "tree-sitter query, edited by %s (%s) in %lld attempt%s, applied to base %.12s "
		    "and checked in a jail by the gates ", camp->name, g->n, g->n == 1 ? "" : "s",
		    v->source.buf, v->model.buf, (long long)attempts, attempts == 1 ? "" : "s",
		    camp->base_oid);
	for (size_t i = 0; i < gnames.n; i++)
		sl_buf_addf(&v->produced, "%s%s", i ? ", " : "", gnames.v[i]);
	sl_buf_adds(&v->produced, gnames.n ? "." : "(none).");
	sl_strvec_release(&gnames);
	free(gpass);
	free(gruns);
	return ret;
}

/* Apply the group's diffs to the base tree; *bad = index of a candidate that did not apply. */
static int build_tree(git_oid *tree_out, git_repository *repo, const git_oid *base,
		      const sl_candidate_rec *c, const group *g, int64_t *bad)
{
	git_commit *bc = NULL;
	git_tree *tree = NULL;
	int ret = -1;

	*bad = -1;
	if (git_commit_lookup(&bc, repo, base) || git_commit_tree(&tree, bc))
		goto done;
	for (size_t k = 0; k < g->n; k++) {
		const char *d = c[g->idx[k]].diff;
		git_diff *diff = NULL;
		git_index *idx = NULL;
		git_oid oid;
		git_tree *next = NULL;

		if (git_diff_from_buffer(&diff, d, strlen(d)) ||
		    git_apply_to_tree(&idx, repo, tree, diff, NULL) ||
		    git_index_write_tree_to(&oid, idx, repo) || git_tree_lookup(&next, repo, &oid)) {
			git_diff_free(diff);
			git_index_free(idx);
			*bad = g->idx[k];
			goto done;
		}
		git_diff_free(diff);
		git_index_free(idx);
		git_tree_free(tree);
		tree = next;
	}
	git_oid_cpy(tree_out, git_tree_id(tree));
	ret = 0;
done:
	git_tree_free(tree);
	git_commit_free(bc);
	return ret;
}

static int commit_change(sl_change *ch, sl_store *st, const sl_campaign_rec *camp,
			 const sl_spec *spec, git_repository *repo, const sl_candidate_rec *c,
			 const group *g, const git_oid *tree_oid, sl_err *err)
{
	static const char *const names[] = { "campaign", "paths", "path", "line", "targets",
		"count", "source", "model", "gates", "produced", "branch", "instructions", NULL };
	vars v;
	const char *vals[13];
	git_signature *author = NULL, *committer = NULL;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	git_oid base;
	char *msg = NULL;
	time_t t = 0;
	int ret;

	memset(&v, 0, sizeof(v));
	sl_buf_init(&v.paths, 0); sl_buf_init(&v.targets, 0); sl_buf_init(&v.gates, 0);
	sl_buf_init(&v.produced, 0); sl_buf_init(&v.source, 0); sl_buf_init(&v.model, 0);
	sl_buf_init(&v.count, 0); sl_buf_init(&v.line, 0);
	if ((ret = fill_vars(&v, st, camp, c, g, err)))
		goto done;
	for (size_t k = 0; k < g->n; k++) {
		time_t ct = parse_time(c[g->idx[k]].created_at);

		t = ct > t ? ct : t;
	}
	vals[0] = camp->name; vals[1] = v.paths.buf; vals[2] = g->paths.n ? g->paths.v[0] : "";
	vals[3] = v.line.buf; vals[4] = v.targets.buf; vals[5] = v.count.buf;
	vals[6] = v.source.buf; vals[7] = v.model.buf; vals[8] = v.gates.buf;
	vals[9] = v.produced.buf; vals[10] = ch->branch;
	vals[11] = spec->instructions ? spec->instructions : ""; vals[12] = NULL;
	ch->title = render(spec->review.title ? spec->review.title : DEFAULT_TITLE, names, vals);
	ch->body = render(spec->review.body ? spec->review.body : DEFAULT_BODY, names, vals);
	msg = render(spec->review.commit_message ? spec->review.commit_message : DEFAULT_MESSAGE,
		     names, vals);
	ret = SL_ERROR;
	if (git_oid_fromstr(&base, camp->base_oid) || git_commit_lookup(&parent, repo, &base) ||
	    git_tree_lookup(&tree, repo, tree_oid) ||
	    ident(&author, repo, spec->review.author, t) ||
	    ident(&committer, repo, spec->review.committer ? spec->review.committer :
		  spec->review.author, t) ||
	    git_commit_create_v(&ch->commit, repo, NULL, author, committer, NULL, msg, tree, 1,
				parent)) {
		sl_err_set(err, SL_ERROR, "change '%s': cannot commit: %s", ch->key, sl_git_error());
		goto done;
	}
	ret = SL_OK;
done:
	free(msg);
	git_signature_free(author);
	git_signature_free(committer);
	git_commit_free(parent);
	git_tree_free(tree);
	vars_release(&v);
	return ret;
}

/* The open batch if the candidate's paths and lines still fit it, else a new batch. */
static group *batch_group(group **g, size_t *ng, size_t *galloc, const sl_spec *spec,
			  const sl_strvec *paths, size_t lines)
{
	group *gr = *ng ? &(*g)[*ng - 1] : NULL;
	sl_buf b = SL_BUF_INIT;

	if (gr) {
		size_t files = gr->paths.n;

		for (size_t k = 0; k < paths->n; k++)
			files += !has(&gr->paths, paths->v[k]);
		if (files <= spec->review.batch_files &&
		    gr->lines + lines <= spec->review.batch_lines)
			return gr;
	}
	/* in batch mode every group so far is a batch: this is batch ng + 1 */
	sl_buf_addf(&b, "batch-%zu", *ng + 1);
	gr = group_for(g, ng, galloc, NULL);
	free(gr->key);
	gr->key = sl_buf_detach(&b, NULL);
	return gr;
}

/* The group of fg that already holds one of paths, or a new one. */
static group *file_group(group **fg, size_t *nf, size_t *falloc, const sl_strvec *paths)
{
	for (size_t i = 0; i < *nf; i++)
		for (size_t k = 0; k < paths->n; k++)
			if (has(&(*fg)[i].paths, paths->v[k]))
				return &(*fg)[i];
	return group_for(fg, nf, falloc, NULL);
}

static int cmp_idx(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Batches of whole files: the candidates are first gathered by the files
 * they change (in order of first appearance), then each file's set goes
 * into the open batch if it fits, else into a new one; a file over the
 * bounds alone is a batch of its own, as a file never spans two batches.
 */
static void batch_candidates(group **g, size_t *ng, size_t *galloc, const sl_spec *spec,
			     const sl_candidate_rec *c, size_t nc)
{
	group *fg = NULL;
	size_t nf = 0, falloc = 0;

	for (size_t i = 0; i < nc; i++) {
		sl_strvec paths = SL_STRVEC_INIT;
		size_t lines;

		if (c[i].decision == SL_D_REJECT)
			continue;
		diff_stats(c[i].diff, &paths, &lines);
		group_add(file_group(&fg, &nf, &falloc, &paths), i, &paths, lines);
		sl_strvec_release(&paths);
	}
	for (size_t f = 0; f < nf; f++) {
		group *gr = batch_group(g, ng, galloc, spec, &fg[f].paths, fg[f].lines);

		for (size_t k = 0; k < fg[f].n; k++)
			group_add(gr, (size_t)fg[f].idx[k], &fg[f].paths, 0);
		gr->lines += fg[f].lines;
		/* a change applies its candidates in id order */
		qsort(gr->idx, gr->n, sizeof(*gr->idx), cmp_idx);
	}
	groups_free(fg, nf);
}

/* Every candidate not rejected into its group: by key, or in batches of bounded size. */
static void group_candidates(group **g, size_t *ng, size_t *galloc, const sl_spec *spec,
			     const sl_candidate_rec *c, size_t nc)
{
	if (spec->review.group == SL_GROUP_BATCH) {
		batch_candidates(g, ng, galloc, spec, c, nc);
		return;
	}
	for (size_t i = 0; i < nc; i++) {
		sl_strvec paths = SL_STRVEC_INIT;
		size_t lines;
		group *gr;
		char *key;

		if (c[i].decision == SL_D_REJECT)
			continue;
		diff_stats(c[i].diff, &paths, &lines);
		key = key_of(spec, &c[i], &paths);
		gr = group_for(g, ng, galloc, key);
		free(key);
		group_add(gr, i, &paths, lines);
		sl_strvec_release(&paths);
	}
}

/* Take candidate bad out of group i into a change of its own, KEY-cID, at the end of g. */
static void split_out(group **g, size_t *ng, size_t *galloc, size_t i,
		      const sl_candidate_rec *c, int64_t bad)
{
	group *gi = &(*g)[i];
	sl_buf k = SL_BUF_INIT;
	sl_strvec paths = SL_STRVEC_INIT;
	size_t lines;

	for (size_t k2 = 0; k2 < gi->n; k2++)
		if (gi->idx[k2] == bad) {
			memmove(&gi->idx[k2], &gi->idx[k2 + 1], (gi->n - k2 - 1) * sizeof(*gi->idx));
			gi->n--;
			break;
		}
	sl_buf_addf(&k, "%s-c%lld", gi->key, (long long)c[bad].id);
	diff_stats(c[bad].diff, &paths, &lines);
	group_add(group_for(g, ng, galloc, k.buf), (size_t)bad, &paths, lines);
	sl_strvec_release(&paths);
	sl_buf_release(&k);
}

/* Fill ch from group gr: key, review branch, candidate ids and paths. */
static void change_of_group(sl_change *ch, const group *gr, const sl_candidate_rec *c,
			    const sl_spec *spec)
{
	sl_buf b = SL_BUF_INIT;
	char *safe = ref_safe(gr->key);
	size_t from;

	memset(ch, 0, sizeof(*ch));
	ch->key = sl_xstrdup(gr->key);
	sl_buf_addf(&b, "%s/review/", spec->branch_prefix);
	from = b.len;
	sl_buf_adds(&b, safe);
	free(safe);
	sl_ref_name_bound(&b, from, SL_REF_NAME_MAX, gr->key);
	ch->branch = sl_buf_detach(&b, NULL);
	ch->ncands = gr->n;
	ch->cands = sl_xcalloc(gr->n, sizeof(*ch->cands));
	for (size_t k = 0; k < gr->n; k++)
		ch->cands[k] = c[gr->idx[k]].id;
	for (size_t k = 0; k < gr->paths.n; k++)
		sl_buf_addf(&b, "%s\n", gr->paths.v[k]);
	ch->paths = sl_buf_detach(&b, NULL);
}

int sl_changes_build(sl_change **out, size_t *n, sl_store *st, const sl_campaign_rec *camp,
		     const sl_spec *spec, git_repository *repo, sl_err *err)
{
	sl_candidate_rec *c = NULL;
	group *g = NULL;
	size_t nc = 0, ng = 0, galloc = 0, oalloc = 0;
	git_oid base;
	int ret;

	*out = NULL;
	*n = 0;
	if (git_oid_fromstr(&base, camp->base_oid))
		return sl_err_set(err, SL_EINPUT, "campaign '%s': bad base '%s'", camp->name,
				  camp->base_oid);
	if ((ret = sl_store_candidates(st, camp->id, SL_C_PASSED, &c, &nc, err)))
		return ret;
	group_candidates(&g, &ng, &galloc, spec, c, nc);
	for (size_t i = 0; i < ng; i++) {
		git_oid tree;
		int64_t bad;

		if (build_tree(&tree, repo, &base, c, &g[i], &bad)) {
			if (bad < 0 || g[i].n == 1) {
				ret = sl_err_set(err, SL_ERROR, "change '%s': cannot apply: %s",
						 g[i].key, sl_git_error());
				goto done;
			}
			/* the candidate that does not fit goes on its own; retry the rest */
			split_out(&g, &ng, &galloc, i, c, bad);
			i--;
			continue;
		}
		SL_ALLOC_GROW(*out, *n + 1, oalloc);
		change_of_group(&(*out)[(*n)++], &g[i], c, spec);
		if ((ret = commit_change(&(*out)[*n - 1], st, camp, spec, repo, c, &g[i], &tree,
					 err)))
			goto done;
	}
	ret = SL_OK;
done:
	if (ret) {
		sl_change_list_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	groups_free(g, ng);
	sl_candidate_list_free(c, nc);
	return ret;
}

int sl_changes_export(sl_store *st, const sl_campaign_rec *camp, const sl_spec *spec,
		      git_repository *repo, const char *outdir, size_t *count_out, sl_err *err)
{
	sl_change *ch = NULL;
	size_t n = 0;
	char *dir = sl_path_join(outdir, "changes");
	int ret;

	*count_out = 0;
	if ((ret = sl_changes_build(&ch, &n, st, camp, spec, repo, err)) ||
	    (ret = sl_rm_rf(dir, err)) || (ret = sl_mkdir_p(dir, 0755, err)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		git_email_create_options eo;
		git_commit *commit = NULL;
		git_buf mail = { 0 };
		sl_buf name = SL_BUF_INIT;
		char *path;

		memset(&eo, 0, sizeof(eo));
		eo.version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
		git_diff_options_init(&eo.diff_opts, GIT_DIFF_OPTIONS_VERSION);
		git_diff_find_options_init(&eo.diff_find_opts, GIT_DIFF_FIND_OPTIONS_VERSION);
		sl_buf_addf(&name, "%04zu-", i + 1);
		for (const char *k = ch[i].key; *k; k++)
			sl_buf_addch(&name, *k == '/' ? '-' : *k);
		sl_buf_adds(&name, ".patch");
		path = sl_path_join(dir, name.buf);
		if (git_commit_lookup(&commit, repo, &ch[i].commit) ||
		    git_email_create_from_commit(&mail, commit, &eo))
			ret = sl_err_set(err, SL_ERROR, "change '%s': cannot format patch: %s",
					 ch[i].key, sl_git_error());
		else
			ret = sl_write_file(path, mail.ptr, mail.size, err);
		git_buf_dispose(&mail);
		git_commit_free(commit);
		sl_buf_release(&name);
		free(path);
		if (ret)
			goto done;
	}
	*count_out = n;
done:
	sl_change_list_free(ch, n);
	free(dir);
	return ret;
}
