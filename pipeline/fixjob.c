/*
 * fixjob.c - targets from findings (fixjob.h).
 *
 * Reads a scoped target list and a finding set (from the finding-gone
 * gates' runs on the base, or a findings file put on the base's files);
 * scopes whole the files with a finding outside every unit; writes the
 * pruned list, the findings no target holds with their reasons, and prompt
 * text.  Nothing here runs a command.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/validators.h"
#include "pipeline/campaign.h"
#include "pipeline/fixjob.h"
#include "pipeline/spec.h"
#include "common/util.h"
#include "common/caps.h"

static int encloses(const sl_target *t, const sl_finding *x)
{
	return !strcmp(t->path, x->file) && x->line >= t->start_line && x->line <= t->end_line;
}

/* The first target of path in list (sorted by path), or list->n. */
static size_t first_of(const sl_target_list *list, const char *path)
{
	size_t lo = 0, hi = list->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(list->v[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The innermost target enclosing x (list sorted by path, then start), or -1. */
static long owner_of(const sl_target_list *list, const sl_finding *x)
{
	long best = -1;

	for (size_t i = first_of(list, x->file); i < list->n && !strcmp(list->v[i].path, x->file);
	     i++) {
		const sl_target *t = &list->v[i];

		if (!encloses(t, x))
			continue;
		if (best < 0 || t->end_byte - t->start_byte <
		    list->v[best].end_byte - list->v[best].start_byte)
			best = (long)i;
	}
	return best;
}

/* Keep the targets whose keep[] is set, releasing the others. */
static void keep_only(sl_target_list *list, const unsigned char *keep)
{
	size_t w = 0;

	for (size_t i = 0; i < list->n; i++) {
		sl_target_list one = SL_TARGET_LIST_INIT;

		if (keep[i]) {
			if (w != i)
				list->v[w] = list->v[i];
			w++;
			continue;
		}
		/* a one-target list frees it the way the scoper allocated it */
		one.v = sl_xcalloc(1, sizeof(*one.v));
		one.v[0] = list->v[i];
		one.n = one.alloc = 1;
		sl_target_list_release(&one);
	}
	list->n = w;
}

void sl_unplaced_init(sl_unplaced *u)
{
	memset(u, 0, sizeof(*u));
	sl_findings_init(&u->f);
}

void sl_unplaced_release(sl_unplaced *u)
{
	sl_findings_release(&u->f);
	free(u->why);
	sl_unplaced_init(u);
}

const char *sl_unplaced_reason_name(int why)
{
	switch (why) {
	case SL_UNPLACED_UNTRACKED: return "not a tracked file of the repository";
	case SL_UNPLACED_AMBIGUOUS: return "ambiguous, several tracked files end with it";
	case SL_UNPLACED_NO_FILE: return "names no file";
	case SL_UNPLACED_NO_LINE: return "names no line";
	case SL_UNPLACED_NO_UNIT: return "outside every unit the campaign scopes";
	}
	return "unknown";
}

/* Append x to u with its reason: moved (x's strings now u's) or, copy set, copied. */
static void unplaced_add(sl_unplaced *u, const sl_finding *x, int why, int copy)
{
	if (copy) {
		sl_findings_add_copy(&u->f, x);
	} else {
		SL_ALLOC_GROW(u->f.v, u->f.n + 1, u->f.alloc);
		u->f.v[u->f.n++] = *x;
	}
	SL_ALLOC_GROW(u->why, u->f.n, u->walloc);
	u->why[u->f.n - 1] = (unsigned char)why;
}

void sl_testgen_select(sl_target_list *list, const struct sl_coverage *cov, unsigned percent)
{
	unsigned char *keep = sl_xcalloc(list->n ? list->n : 1, 1);

	for (size_t i = 0; i < list->n; i++) {
		const sl_target *t = &list->v[i];
		unsigned covered = 0, total = 0;

		keep[i] = !cov || sl_coverage_of(cov, t->path, t->start_line, t->end_line, &covered,
						 &total) || !total ||
			(uint64_t)covered * 100 < (uint64_t)percent * total;
	}
	keep_only(list, keep);
	free(keep);
}

void sl_fix_select(sl_target_list *list, const sl_findings *f, size_t *unplaced)
{
	unsigned char *keep = sl_xcalloc(list->n ? list->n : 1, 1);

	*unplaced = 0;
	for (size_t i = 0; i < f->n; i++) {
		long o = owner_of(list, &f->v[i]);

		if (o < 0)
			(*unplaced)++;
		else
			keep[o] = 1;
	}
	keep_only(list, keep);
	free(keep);
}

int sl_fix_parse_findings(sl_findings *out, int format, const char *name,
			  const char *text, size_t len, sl_err *err)
{
	size_t n = name ? strlen(name) : 0;
	/* one automake .trs file: its test is named after it */
	char *trs_name = n > 4 && !strcmp(name + n - 4, ".trs") ? sl_xstrndup(name, n - 4) : NULL;
	sl_tests t;
	int ret = SL_OK;

	if (format == SL_REPORT_GCC) {
		sl_findings_parse_gcc(out, text, len);
		goto done;
	}
	if (format == SL_REPORT_GCC_JSON) {
		sl_findings_parse_gcc_json(out, text, len);
		goto done;
	}
	if (format == SL_REPORT_SARIF) {
		ret = sl_findings_parse_sarif(out, text, len, err);
		goto done;
	}
	sl_tests_init(&t);
	if (format == SL_REPORT_JUNIT)
		ret = sl_tests_parse_junit(&t, text, len, err);
	else if (format == SL_REPORT_CTEST)
		ret = sl_tests_parse_ctest(&t, text, len, err);
	else if (format == SL_REPORT_AUTOMAKE)
		sl_tests_parse_automake(&t, text, len, trs_name);
	else
		sl_tests_parse_tap(&t, text, len);
	if (!ret)
		sl_findings_from_tests(&t, out);
	sl_tests_release(&t);
done:
	free(trs_name);
	return ret;
}

static int add_tracked(const char *root, const git_tree_entry *e, void *data)
{
	sl_buf p = SL_BUF_INIT;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	sl_buf_addf(&p, "%s%s", root, git_tree_entry_name(e));
	sl_strvec_push_nodup(data, sl_buf_detach(&p, NULL));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int sl_fix_tracked_files(sl_strvec *out, const sl_campaign *c, sl_err *err)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	int ret = SL_OK;

	if (git_commit_lookup(&commit, c->repo, &c->base) || git_commit_tree(&tree, commit) ||
	    git_tree_walk(tree, GIT_TREEWALK_PRE, add_tracked, out))
		ret = sl_err_set(err, SL_ERROR, "cannot list the files of %s: %s", c->base_hex,
				 sl_git_error());
	else
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	git_tree_free(tree);
	git_commit_free(commit);
	return ret;
}

void sl_fix_place(sl_findings *f, const sl_campaign *c, const sl_strvec *tracked,
		  sl_buf *report, unsigned char *why)
{
	const char *roots[4];
	char *real_wd = NULL, *real_repo = NULL;
	size_t nroots = 0;
	sl_err ignore = SL_ERR_INIT;

	/* the file was made on the host: its paths may start with the work tree's */
	if (git_repository_workdir(c->repo)) {
		roots[nroots++] = git_repository_workdir(c->repo);
		if ((real_wd = sl_realpath(git_repository_workdir(c->repo), &ignore)))
			roots[nroots++] = real_wd;
	}
	roots[nroots++] = c->repo_path;
	if ((real_repo = sl_realpath(c->repo_path, &ignore)))
		roots[nroots++] = real_repo;
	sl_findings_place(f, roots, nroots, tracked, report, why);
	free(real_wd);
	free(real_repo);
}

int sl_fix_load_findings(sl_findings *out, sl_unplaced *unplaced, const sl_campaign *c,
			 sl_buf *report, sl_err *err)
{
	const sl_spec *spec = c->spec;
	char *path = spec->findings_report[0] == '/' ? sl_xstrdup(spec->findings_report) :
		sl_path_join(spec->dir, spec->findings_report);
	unsigned char *why = NULL;
	size_t w = 0;
	sl_strvec tracked = SL_STRVEC_INIT;
	sl_buf text = SL_BUF_INIT;
	int ret = sl_read_file(&text, path, SL_CAP_FINDINGS_FILE, err);

	if (!ret)
		ret = sl_fix_parse_findings(out, spec->findings_format, spec->findings_report,
					    text.buf, text.len, err);
	if (ret) {
		sl_err_prefix(err, "findings: ");
		ret = SL_EINPUT;
		goto done;
	}
	if ((ret = sl_fix_tracked_files(&tracked, c, err)))
		goto done;
	why = sl_xcalloc(out->n ? out->n : 1, 1);
	sl_fix_place(out, c, &tracked, report, why);
	for (size_t i = 0; i < out->n; i++) {
		if (why[i] == SL_PLACE_UNTRACKED || why[i] == SL_PLACE_AMBIGUOUS)
			unplaced_add(unplaced, &out->v[i], why[i] == SL_PLACE_AMBIGUOUS ?
				     SL_UNPLACED_AMBIGUOUS : SL_UNPLACED_UNTRACKED, 0);
		else
			out->v[w++] = out->v[i];
	}
	out->n = w;
done:
	free(why);
	free(path);
	sl_strvec_release(&tracked);
	sl_buf_release(&text);
	return ret;
}

char *sl_fix_glob_literal(const char *path)
{
	sl_buf b = SL_BUF_INIT;

	for (const char *p = path; *p; p++) {
		if (strchr("*?[]\\", *p))
			sl_buf_addch(&b, '\\');
		sl_buf_addch(&b, *p);
	}
	return sl_buf_detach(&b, NULL);
}

int sl_fix_in_paths(const sl_spec *spec, const char *path)
{
	for (size_t i = 0; i < spec->paths.n; i++)
		if (sl_glob_match(spec->paths.v[i], path))
			return 1;
	return !spec->paths.n;
}

static int cmp_target(const void *a, const void *b)
{
	const sl_target *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (x->start_byte != y->start_byte)
		return x->start_byte < y->start_byte ? -1 : 1;
	return x->end_byte > y->end_byte ? -1 : x->end_byte < y->end_byte;   /* as sl_scope */
}

/*
 * The files of the campaign with a finding outside every unit of list:
 * scoped whole (unit file) into files.
 */
static int whole_files(sl_target_list *files, const sl_target_list *list, const sl_campaign *c,
		       struct sl_store *cache, const sl_findings *f, sl_err *err)
{
	sl_scope_opts so = SL_SCOPE_OPTS_INIT;
	sl_lang_override *ov = NULL;
	sl_strvec globs = SL_STRVEC_INIT;
	int ret = SL_OK;

	for (size_t i = 0; i < f->n; i++) {
		const sl_finding *x = &f->v[i];
		char *g;
		int seen = 0;

		if (!*x->file || !x->line || owner_of(list, x) >= 0 || !sl_fix_in_paths(c->spec, x->file))
			continue;
		g = sl_fix_glob_literal(x->file);
		for (size_t k = 0; k < globs.n && !seen; k++)
			seen = !strcmp(globs.v[k], g);
		if (seen)
			free(g);
		else
			sl_strvec_push_nodup(&globs, g);
	}
	if (!globs.n || !sl_lang_file_query(c->spec->language))
		goto done;
	ov = sl_campaign_scope_opts(&so, c);
	so.query = sl_lang_file_query(c->spec->language);
	so.capture = NULL;
	so.unit = "file";
	so.globs = (const char *const *)globs.v;
	so.nglobs = globs.n;
	so.cache = cache;
	ret = sl_scope(files, c->repo, &c->base, &so, err);
done:
	free(ov);
	sl_strvec_release(&globs);
	return ret;
}

/* Each finding of f that no target of list holds, into u with its reason. */
static void classify_unowned(sl_unplaced *u, const sl_target_list *list, const sl_spec *spec,
			     const sl_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const sl_finding *x = &f->v[i];

		if (owner_of(list, x) >= 0)
			continue;
		if (!*x->file)
			unplaced_add(u, x, SL_UNPLACED_NO_FILE, 1);
		else if (!sl_fix_in_paths(spec, x->file))
			u->outside++;
		else
			unplaced_add(u, x, x->line ? SL_UNPLACED_NO_UNIT : SL_UNPLACED_NO_LINE, 1);
	}
}

int sl_fix_targets(sl_target_list *list, const sl_campaign *c, struct sl_store *cache,
		   const sl_findings *f, sl_unplaced *unplaced, sl_buf *note, sl_err *err)
{
	sl_target_list files = SL_TARGET_LIST_INIT;
	unsigned char *keep = NULL;
	size_t nunowned, nfiles, total = f->n + unplaced->f.n;
	int ret;

	if ((ret = whole_files(&files, list, c, cache, f, err)))
		goto done;
	/* a whole file replaces its units: it holds all of the file's findings */
	keep = sl_xcalloc(list->n ? list->n : 1, 1);
	memset(keep, 1, list->n);
	for (size_t k = 0; k < files.n; k++)
		for (size_t i = first_of(list, files.v[k].path);
		     i < list->n && !strcmp(list->v[i].path, files.v[k].path); i++)
			keep[i] = 0;
	keep_only(list, keep);
	SL_ALLOC_GROW(list->v, list->n + files.n, list->alloc);
	memcpy(list->v + list->n, files.v, files.n * sizeof(*files.v));
	list->n += files.n;
	nfiles = files.n;
	files.n = 0;
	qsort(list->v, list->n, sizeof(*list->v), cmp_target);
	classify_unowned(unplaced, list, c->spec, f);
	sl_fix_select(list, f, &nunowned);
	sl_buf_addf(note, "fix: %zu findings on the base, %zu targets", total, list->n);
	if (nfiles)
		sl_buf_addf(note, " (%zu whole files: findings outside every unit of the query)",
			    nfiles);
	if (unplaced->f.n)
		sl_buf_addf(note, "; %zu findings not placed (sluice status lists them)",
			    unplaced->f.n);
	if (unplaced->outside)
		sl_buf_addf(note, "; %zu findings lie outside the campaign's files",
			    unplaced->outside);
done:
	free(keep);
	sl_target_list_release(&files);
	return ret;
}

void sl_fix_finding_text(const sl_findings *f, const sl_target *t, sl_buf *out)
{
	sl_findings mine;
	sl_unit_ref u = { t->path, t->start_line, t->end_line };

	sl_findings_init(&mine);
	if (sl_findings_in_unit(f, &u, &mine))
		sl_findings_text(&mine, out, 8192);
	sl_findings_release(&mine);
}
