/*
 * apply.c - edits to a candidate commit.
 *
 * Files are read from the base commit's tree and changed in memory; the
 * result goes straight into the object database (blobs, a tree built with
 * git_tree_create_updated, a commit), so no index, no working tree and no
 * hook is involved.  See apply.h for the placement and safety rules.
 *
 * sl_apply_edits_ext() in steps: resolve_edits() checks each edit's path
 * (syntax, parents, allowed globs, redirect of a missing file) and loads
 * its file; place_edits() has place.c place them file by file;
 * check_file_sizes() and check_created_files() refuse what grew too large
 * or collides with a created file; gather_refusals() makes the one error
 * naming them all; write_tree() writes the blobs and the tree, then the
 * commit, and write_diff() the candidate's diff against the base.  Scratch worktrees
 * and branches are in worktree.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipeline/apply/apply_internal.h"
#include "common/util.h"
#include "common/caps.h"

/* ---- the report -------------------------------------------------------- */


void sl_apply_report_release(sl_apply_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].reason);
	}
	free(r->v);
	r->v = NULL;
	r->n = r->alloc = 0;
}

static void json_str(sl_buf *out, const char *s)
{
	sl_buf_addch(out, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			sl_buf_addf(out, "\\%c", c);
		else if (c == '\n')
			sl_buf_adds(out, "\\n");
		else if (c == '\t')
			sl_buf_adds(out, "\\t");
		else if (c < 0x20)
			sl_buf_addf(out, "\\u%04x", c);
		else
			sl_buf_addch(out, c);
	}
	sl_buf_addch(out, '"');
}

void sl_apply_report_json(sl_buf *out, const sl_apply_report *r)
{
	sl_buf_addch(out, '[');
	for (size_t i = 0; r && i < r->n; i++) {
		const sl_apply_item *it = &r->v[i];

		sl_buf_addf(out, "%s{\"edit\":%zu,\"path\":", i ? "," : "", i + 1);
		json_str(out, it->path ? it->path : "");
		sl_buf_adds(out, ",\"kind\":");
		json_str(out, it->kind);
		sl_buf_adds(out, ",\"tier\":");
		json_str(out, it->tier);
		sl_buf_addf(out, ",\"line\":%u", it->line);
		if (it->reason) {
			sl_buf_adds(out, ",\"reason\":");
			json_str(out, it->reason);
		}
		sl_buf_addch(out, '}');
	}
	sl_buf_addch(out, ']');
}

/* ---- files and paths -------------------------------------------------------- */

static int component_is_git(const char *p, size_t n)
{
	/* ".git" in any case, also with trailing dots/spaces (NTFS) and its 8.3 name */
	while (n && (p[n - 1] == '.' || p[n - 1] == ' '))
		n--;
	return (n == 4 && !strncasecmp(p, ".git", 4)) || (n == 5 && !strncasecmp(p, "git~1", 5));
}

/* The path's own syntax; returns 0 or writes a reason. */
static int path_syntax(const char *path, sl_buf *why)
{
	const char *p = path;

	if (!*path) {
		sl_buf_adds(why, "the edit names an empty path");
		return -1;
	}
	if (path[0] == '/') {
		sl_buf_addf(why, "refusing absolute path '%s'", path);
		return -1;
	}
	for (const char *c = path; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			sl_buf_adds(why, "refusing a path with control characters");
			return -1;
		}
	}
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if ((n == 2 && !strncmp(p, "..", 2)) || (n == 1 && *p == '.') || n == 0) {
			sl_buf_addf(why, "refusing path '%s': it contains '%.*s'", path, (int)n, p);
			return -1;
		}
		if (component_is_git(p, n)) {
			sl_buf_addf(why, "refusing path '%s': it is under .git", path);
			return -1;
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	return 0;
}

static int path_allowed(const apply_ctx *x, const char *path, sl_buf *why)
{
	if (!x->opts->allowed_globs || !x->opts->nglobs)
		return 0;
	for (size_t i = 0; i < x->opts->nglobs; i++)
		if (sl_glob_match(x->opts->allowed_globs[i], path))
			return 0;
	sl_buf_addf(why, "refusing path '%s': outside the campaign's allowed paths (", path);
	for (size_t i = 0; i < x->opts->nglobs && i < 5; i++)
		sl_buf_addf(why, "%s%s", i ? ", " : "", x->opts->allowed_globs[i]);
	sl_buf_adds(why, x->opts->nglobs > 5 ? ", ...)" : ")");
	return -1;
}

/* Every parent component must be a directory of the base tree (or absent). */
static int path_parents(const apply_ctx *x, const char *path, sl_buf *why)
{
	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		char *prefix = sl_xstrndup(path, (size_t)(s - path));
		git_tree_entry *e = NULL;
		int bad = 0;

		if (!git_tree_entry_bypath(&e, x->tree, prefix) &&
		    git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			bad = 1;
			sl_buf_addf(why, "refusing path '%s': '%s' is %s in the base tree", path, prefix,
				    git_tree_entry_filemode(e) == GIT_FILEMODE_LINK ?
				    "a symbolic link" : git_tree_entry_type(e) == GIT_OBJECT_COMMIT ?
				    "a submodule" : "a file");
		}
		git_tree_entry_free(e);
		free(prefix);
		if (bad)
			return -1;
	}
	return 0;
}

static int check_path(const apply_ctx *x, const char *path, sl_buf *why)
{
	return path_syntax(path, why) || path_allowed(x, path, why) || path_parents(x, path, why) ?
		-1 : 0;
}

static int load_file(apply_ctx *x, file_state *f, sl_err *err)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int ret = SL_ERROR;
	sl_buf why = SL_BUF_INIT;

	f->loaded = 1;
	if (git_tree_entry_bypath(&entry, x->tree, f->path)) {
		f->existed = 0;
		f->mode = GIT_FILEMODE_BLOB;
		return SL_OK;
	}
	if (git_tree_entry_type(entry) == GIT_OBJECT_TREE) {
		sl_buf_addf(&why, "refusing to edit '%s': it is a directory", f->path);
	} else if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
		sl_buf_addf(&why, "refusing to edit '%s': it is a submodule", f->path);
	} else if (git_tree_entry_filemode(entry) == GIT_FILEMODE_LINK) {
		sl_buf_addf(&why, "refusing to edit '%s': it is a symbolic link", f->path);
	} else if (git_blob_lookup(&blob, x->repo, git_tree_entry_id(entry))) {
		sl_err_set(err, SL_ERROR, "cannot read '%s': %s", f->path, sl_git_error());
		goto done;
	} else if (git_blob_is_binary(blob)) {
		sl_buf_addf(&why, "refusing to edit binary file '%s'", f->path);
	} else {
		f->existed = 1;
		f->mode = git_tree_entry_filemode(entry);
		sl_buf_add(&f->content, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	}
	if (why.len) {
		f->refused = 1;
		f->why = sl_buf_detach(&why, NULL);
	}
	ret = SL_OK;
done:
	sl_buf_release(&why);
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return ret;
}

static size_t file_index(apply_ctx *x, const char *path, sl_err *err)
{
	file_state *f;

	for (size_t i = 0; i < x->nfiles; i++)
		if (!strcmp(x->files[i].path, path))
			return i;
	SL_ALLOC_GROW(x->files, x->nfiles + 1, x->afiles);
	f = &x->files[x->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = sl_xstrdup(path);
	sl_buf_init(&f->content, 0);
	x->nfiles++;
	if (load_file(x, f, err))
		return SIZE_MAX;
	return x->nfiles - 1;
}

static int collect_path(const char *root, const git_tree_entry *e, void *payload)
{
	sl_strvec *sv = payload;
	sl_buf b = SL_BUF_INIT;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	if (sv->n >= 100000)
		return -1;
	sl_buf_addf(&b, "%s%s", root, git_tree_entry_name(e));
	sl_strvec_push_nodup(sv, sl_buf_detach(&b, NULL));
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, best;

	if (la > 256 || lb > 256)
		return SIZE_MAX;
	row = sl_xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

/*
 * The path does not exist: the one base file with its base name, or NULL
 * with a reason naming the candidates (or the nearest path).
 */
static char *redirect(apply_ctx *x, const char *path, sl_buf *why)
{
	const char *bn = base_name(path), *found = NULL, *near = NULL;
	size_t nfound = 0, best = SIZE_MAX;
	sl_buf names = SL_BUF_INIT;

	if (!x->have_tree_paths) {
		git_tree_walk(x->tree, GIT_TREEWALK_PRE, collect_path, &x->tree_paths);
		x->have_tree_paths = 1;
	}
	for (size_t i = 0; i < x->tree_paths.n; i++) {
		const char *p = x->tree_paths.v[i];
		size_t d;

		if (!strcmp(base_name(p), bn)) {
			if (nfound < 5)
				sl_buf_addf(&names, "%s'%s'", nfound ? ", " : "", p);
			found = p;
			nfound++;
		}
		d = edit_distance(path, p);
		if (d < best) {
			best = d;
			near = p;
		}
	}
	if (nfound == 1) {
		sl_buf_release(&names);
		return sl_xstrdup(found);
	}
	if (nfound > 1)
		sl_buf_addf(why, "file '%s' does not exist; files named '%s': %s%s; use the full "
			    "path", path, bn, names.buf, nfound > 5 ? ", ..." : "");
	else if (near)
		sl_buf_addf(why, "file '%s' does not exist; the nearest path is '%s'", path, near);
	else
		sl_buf_addf(why, "file '%s' does not exist", path);
	sl_buf_release(&names);
	return NULL;
}

static int creates_file(const sl_edit *e)
{
	if (e->kind == SL_EDIT_HUNK)
		return e->new_file || (!*e->old_text && !e->old_line);
	if (e->kind == SL_EDIT_REPLACE)
		return !*e->old_text;
	return 0;
}

static const char *kind_name(int kind)
{
	return kind == SL_EDIT_SPLICE ? "splice" : kind == SL_EDIT_REPLACE ? "replace" : "hunk";
}

/* Resolve and check the path of edit i; sets x->file_of[i] or refuses the item. */
static int resolve_edit(apply_ctx *x, const sl_edit_list *edits, size_t i, size_t *total,
			sl_err *err)
{
	const sl_edit *e = &edits->v[i];
	sl_apply_item *it = &x->items[i];
	sl_buf why = SL_BUF_INIT, nt = SL_BUF_INIT;
	size_t fi, nl = strlen(e->new_text);
	size_t max_edit = x->opts->max_edit_bytes ? x->opts->max_edit_bytes :
		SL_CAP_EDIT_BYTES;
	size_t max_total = x->opts->max_total_bytes ? x->opts->max_total_bytes :
		SL_CAP_EDITS_TOTAL_BYTES;
	char *alt = NULL;

	x->file_of[i] = SIZE_MAX;
	it->kind = kind_name(e->kind);
	it->path = sl_xstrdup(e->path ? e->path : "");
	it->line = e->kind == SL_EDIT_HUNK ? e->old_line : 0;
	*total += nl;
	/* the written path's syntax and parents; the allowed globs on the final path */
	if (!e->path || path_syntax(e->path, &why) || path_parents(x, e->path, &why))
		goto refused;
	if (nl > max_edit) {
		sl_buf_addf(&why, "the edit's new text is %zu bytes; the limit is %zu per edit: "
			    "split it into smaller edits", nl, max_edit);
		goto refused;
	}
	if (*total > max_total) {
		sl_buf_addf(&why, "the edits' new text passes %zu bytes in all; change less at once",
			    max_total);
		goto refused;
	}
	if ((fi = file_index(x, e->path, err)) == SIZE_MAX)
		return SL_ERROR;
	if (!x->files[fi].existed && !x->files[fi].refused && !creates_file(e)) {
		int created_earlier = 0;

		for (size_t k = 0; k < i; k++)
			if (x->file_of[k] == fi && creates_file(&edits->v[k]))
				created_earlier = 1;
		if (!created_earlier) {
			if (!(alt = redirect(x, e->path, &why)))
				goto refused;
			if (check_path(x, alt, &why))
				goto refused;
			if ((fi = file_index(x, alt, err)) == SIZE_MAX) {
				free(alt);
				return SL_ERROR;
			}
			sl_buf_addf(&nt, "'%s' does not exist; applied to '%s', the only file with "
				    "that name", e->path, alt);
			free(it->path);
			it->path = alt;
			alt = NULL;
		}
	}
	if (path_allowed(x, x->files[fi].path, &why))
		goto refused;
	if (x->files[fi].refused) {
		sl_buf_adds(&why, x->files[fi].why);
		goto refused;
	}
	x->file_of[i] = fi;
	sl_apply_note(it, &nt);
	sl_buf_release(&nt);
	return SL_OK;
refused:
	free(alt);
	sl_apply_refuse(it, &why);
	sl_buf_release(&nt);
	return SL_OK;
}

static int signature(git_signature **out, git_repository *repo)
{
	if (!git_signature_default(out, repo))
		return 0;
	return git_signature_now(out, "sluice", "sluice@localhost");
}

/* Resolve every edit's path and load its file; SL_ERROR only when the machinery broke. */
static int resolve_edits(apply_ctx *x, const sl_edit_list *edits, sl_err *err)
{
	size_t total = 0;

	for (size_t i = 0; i < edits->n; i++)
		if (resolve_edit(x, edits, i, &total, err))
			return SL_ERROR;
	return SL_OK;
}

/* Place the edits file by file, each kind in the order apply.h gives. */
static void place_edits(apply_ctx *x, const sl_edit_list *edits)
{
	for (size_t i = 0; i < x->nfiles; i++) {
		sl_place_splices(x, i, edits);
		sl_place_hunks(x, i, edits);
		sl_place_replaces(x, i, edits);
	}
}

/* Refuse the placed edits of a file that grew past the limit. */
static void check_file_sizes(apply_ctx *x, const sl_edit_list *edits)
{
	size_t max_file = x->opts->max_file_bytes ? x->opts->max_file_bytes :
		SL_CAP_EDITED_FILE_BYTES;

	for (size_t i = 0; i < x->nfiles; i++) {
		file_state *f = &x->files[i];
		int changed = 0;

		for (size_t k = 0; k < edits->n; k++)
			if (x->file_of[k] == i && x->items[k].tier != sl_tier_names[T_REFUSED])
				changed = 1;
		if (changed && f->content.len > max_file) {
			for (size_t k = 0; k < edits->n; k++) {
				sl_buf why = SL_BUF_INIT;

				if (x->file_of[k] != i || x->items[k].tier == sl_tier_names[T_REFUSED])
					continue;
				sl_buf_addf(&why, "'%s' would grow to %zu bytes; the limit is %zu",
					    f->path, f->content.len, max_file);
				sl_apply_refuse(&x->items[k], &why);
			}
		}
	}
}

/* A file the candidate creates cannot also be a directory of another path. */
static void check_created_files(apply_ctx *x, const sl_edit_list *edits)
{
	for (size_t i = 0; i < x->nfiles; i++) {
		const file_state *f = &x->files[i];
		size_t n = strlen(f->path);

		if (!f->created || f->deleted)
			continue;
		for (size_t k = 0; k < edits->n; k++) {
			const char *p = x->items[k].path;
			sl_buf why = SL_BUF_INIT;

			if (!p || x->items[k].tier == sl_tier_names[T_REFUSED] ||
			    strncmp(p, f->path, n) || p[n] != '/')
				continue;
			sl_buf_addf(&why, "refusing path '%s': '%s' is a file the candidate creates",
				    p, f->path);
			sl_apply_refuse(&x->items[k], &why);
		}
	}
}

/* SL_EREFUSED with every refusal (the first 8 spelled out) in err, or SL_OK. */
static int gather_refusals(apply_ctx *x, const sl_edit_list *edits, sl_err *err)
{
	sl_buf msg = SL_BUF_INIT;
	size_t nrefused = 0;
	int ret = SL_OK;

	for (size_t i = 0; i < edits->n; i++) {
		if (!x->items[i].tier)
			x->items[i].tier = sl_tier_names[T_REFUSED];    /* not reached: BUG guard */
		if (x->items[i].tier != sl_tier_names[T_REFUSED])
			continue;
		if (nrefused++ < 8)
			sl_buf_addf(&msg, "%s%s %zu for '%s': %s", msg.len ? "\n" : "",
				    edits->v[i].kind == SL_EDIT_HUNK ? "hunk" : "edit", i + 1,
				    x->items[i].path,
				    x->items[i].reason ? x->items[i].reason : "refused");
	}
	if (nrefused) {
		if (nrefused > 8)
			sl_buf_addf(&msg, "\n(%zu more refused)", nrefused - 8);
		ret = sl_err_set(err, SL_EREFUSED, "%s", msg.buf);
	}
	sl_buf_release(&msg);
	return ret;
}

/* Write the changed files' blobs and the new tree; *tree_out is the caller's. */
static int write_tree(git_tree **tree_out, apply_ctx *x, const sl_edit_list *edits,
		      sl_err *err)
{
	git_tree_update *updates = sl_xcalloc(x->nfiles ? x->nfiles : 1, sizeof(*updates));
	size_t nupd = 0;
	git_oid tree_oid;
	int ret = SL_ERROR;

	for (size_t i = 0; i < x->nfiles; i++) {
		file_state *f = &x->files[i];
		git_tree_update *u = &updates[nupd];
		int used = 0;

		for (size_t k = 0; k < edits->n; k++)
			if (x->file_of[k] == i)
				used = 1;
		if (!used || (f->deleted && !f->existed) || (!f->existed && !f->created))
			continue;
		u->path = f->path;
		if (f->deleted) {
			u->action = GIT_TREE_UPDATE_REMOVE;
		} else {
			u->action = GIT_TREE_UPDATE_UPSERT;
			u->filemode = f->mode;
			if (git_blob_create_from_buffer(&u->id, x->repo, f->content.buf,
							f->content.len)) {
				sl_err_set(err, SL_ERROR, "cannot write blob: %s", sl_git_error());
				goto done;
			}
		}
		nupd++;
	}
	if (git_tree_create_updated(&tree_oid, x->repo, x->tree, nupd, updates) ||
	    git_tree_lookup(tree_out, x->repo, &tree_oid)) {
		sl_err_set(err, SL_ERROR, "cannot write tree: %s", sl_git_error());
		goto done;
	}
	if (git_oid_equal(&tree_oid, git_tree_id(x->tree))) {
		ret = sl_err_set(err, SL_EREFUSED, "the edits change nothing");
		goto done;
	}
	ret = SL_OK;
done:
	free(updates);
	return ret;
}

/* The candidate's diff against the base, as a patch appended to out. */
static int write_diff(sl_buf *out, git_repository *repo, git_tree *base, git_tree *tree,
		      sl_err *err)
{
	git_diff *diff = NULL;
	git_buf dbuf = { 0 };
	int ret = SL_ERROR;

	if (sl_diff_trees(&diff, repo, base, tree, err))
		goto done;
	if (git_diff_to_buf(&dbuf, diff, GIT_DIFF_FORMAT_PATCH)) {
		sl_err_set(err, SL_ERROR, "cannot diff candidate: %s", sl_git_error());
		goto done;
	}
	sl_buf_add(out, dbuf.ptr, dbuf.size);
	ret = SL_OK;
done:
	git_buf_dispose(&dbuf);
	git_diff_free(diff);
	return ret;
}

static void apply_ctx_release(apply_ctx *x, size_t nedits)
{
	if (x->items) {
		for (size_t i = 0; i < nedits; i++) {
			free(x->items[i].path);
			free(x->items[i].reason);
		}
		free(x->items);
	}
	for (size_t i = 0; i < x->nfiles; i++) {
		free(x->files[i].path);
		free(x->files[i].why);
		sl_buf_release(&x->files[i].content);
	}
	free(x->files);
	free(x->file_of);
	sl_strvec_release(&x->tree_paths);
	git_tree_free(x->tree);
}

int sl_apply_edits_ext(git_oid *commit_out, sl_buf *diff_out, git_repository *repo,
		       const git_oid *base, const sl_edit_list *edits, const char *message,
		       const sl_apply_opts *opts, sl_apply_report *report, sl_err *err)
{
	apply_ctx x;
	sl_apply_opts dflt = SL_APPLY_OPTS_INIT;
	git_commit *base_commit = NULL;
	git_tree *new_tree = NULL;
	git_signature *sig = NULL;
	int ret = SL_ERROR;

	memset(&x, 0, sizeof(x));
	x.repo = repo;
	x.opts = opts ? opts : &dflt;
	sl_apply_report_release(report);
	if (!edits->n) {
		ret = sl_err_set(err, SL_EREFUSED, "the reply contains no edit");
		goto done;
	}
	if (git_commit_lookup(&base_commit, repo, base) || git_commit_tree(&x.tree, base_commit)) {
		sl_err_set(err, SL_ERROR, "cannot read base commit: %s", sl_git_error());
		goto done;
	}
	x.items = sl_xcalloc(edits->n, sizeof(*x.items));
	x.file_of = sl_xcalloc(edits->n, sizeof(*x.file_of));
	if (resolve_edits(&x, edits, err))
		goto done;
	place_edits(&x, edits);
	check_file_sizes(&x, edits);
	check_created_files(&x, edits);
	if ((ret = gather_refusals(&x, edits, err)) || (ret = write_tree(&new_tree, &x, edits, err)))
		goto done;
	ret = SL_ERROR;
	if (signature(&sig, repo) ||
	    git_commit_create(commit_out, repo, NULL, sig, sig, NULL, message, new_tree, 1,
			      (const git_commit **)&base_commit)) {
		sl_err_set(err, SL_ERROR, "cannot write commit: %s", sl_git_error());
		goto done;
	}
	if (diff_out && write_diff(diff_out, repo, x.tree, new_tree, err))
		goto done;
	ret = SL_OK;
done:
	if (report && x.items) {
		report->v = x.items;
		report->n = report->alloc = edits->n;
		x.items = NULL;
	}
	apply_ctx_release(&x, edits->n);
	git_signature_free(sig);
	git_tree_free(new_tree);
	git_commit_free(base_commit);
	return ret;
}

int sl_commit_from_diff(git_oid *commit_out, git_repository *repo, const git_oid *base,
			const char *diff_text, const char *message, sl_err *err)
{
	git_commit *bc = NULL;
	git_tree *bt = NULL, *nt = NULL;
	git_diff *diff = NULL;
	git_index *idx = NULL;
	git_signature *sig = NULL;
	git_oid tree_oid;
	int ret = SL_ERROR;

	if (git_commit_lookup(&bc, repo, base) || git_commit_tree(&bt, bc) ||
	    git_diff_from_buffer(&diff, diff_text, strlen(diff_text)) ||
	    git_apply_to_tree(&idx, repo, bt, diff, NULL) ||
	    git_index_write_tree_to(&tree_oid, idx, repo) ||
	    git_tree_lookup(&nt, repo, &tree_oid) || signature(&sig, repo) ||
	    git_commit_create(commit_out, repo, NULL, sig, sig, NULL, message, nt, 1,
			      (const git_commit **)&bc)) {
		sl_err_set(err, SL_ERROR, "cannot rebuild a candidate from its diff: %s",
			   sl_git_error());
		goto done;
	}
	ret = SL_OK;
done:
	git_signature_free(sig);
	git_index_free(idx);
	git_diff_free(diff);
	git_tree_free(nt);
	git_tree_free(bt);
	git_commit_free(bc);
	return ret;
}
