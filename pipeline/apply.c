/*
 * apply.c - edits to a candidate commit, and scratch worktrees for gates.
 *
 * Files are read from the base commit's tree and changed in memory; the
 * result goes straight into the object database (blobs, a tree built with
 * git_tree_create_updated, a commit), so no index, no working tree and no
 * hook is involved.  See apply.h for the placement rules.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apply.h"
#include "util.h"

const char *sl_git_error(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

typedef struct file_state {
	char *path;
	int existed, deleted, created;
	unsigned mode;
	sl_buf content;
} file_state;

static int check_path(const char *path, sl_err *err)
{
	const char *p = path;

	if (!*path)
		return sl_err_set(err, SL_EREFUSED, "edit names an empty path");
	if (path[0] == '/')
		return sl_err_set(err, SL_EREFUSED, "refusing absolute path '%s'", path);
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if ((n == 2 && !strncmp(p, "..", 2)) || (n == 1 && *p == '.') || n == 0)
			return sl_err_set(err, SL_EREFUSED, "refusing path '%s': it contains '%.*s'",
					  path, (int)n, p);
		if (n == 4 && !strncasecmp(p, ".git", 4))
			return sl_err_set(err, SL_EREFUSED, "refusing path '%s': it is under .git",
					  path);
		if (!slash)
			break;
		p = slash + 1;
	}
	return SL_OK;
}

static int load_file(file_state *f, git_repository *repo, git_tree *tree, sl_err *err)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int ret = SL_ERROR;

	if (git_tree_entry_bypath(&entry, tree, f->path)) {
		f->existed = 0;
		f->mode = GIT_FILEMODE_BLOB;
		return SL_OK;
	}
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB ||
	    git_tree_entry_filemode(entry) == GIT_FILEMODE_LINK) {
		ret = sl_err_set(err, SL_EREFUSED, "refusing to edit '%s': not a regular file",
				 f->path);
		goto done;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(entry))) {
		sl_err_set(err, SL_ERROR, "cannot read '%s': %s", f->path, sl_git_error());
		goto done;
	}
	if (git_blob_is_binary(blob)) {
		ret = sl_err_set(err, SL_EREFUSED, "refusing to edit binary file '%s'", f->path);
		goto done;
	}
	f->existed = 1;
	f->mode = git_tree_entry_filemode(entry);
	sl_buf_add(&f->content, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	ret = SL_OK;
done:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return ret;
}

static void replace_range(sl_buf *b, size_t start, size_t end, const char *text)
{
	sl_buf out = SL_BUF_INIT;

	sl_buf_add(&out, b->buf, start);
	sl_buf_adds(&out, text);
	sl_buf_add(&out, b->buf + end, b->len - end);
	sl_buf_release(b);
	*b = out;
}

/* Occurrences of needle in b that start at a line start (line_aligned) or anywhere. */
static size_t find_all(const sl_buf *b, const char *needle, int line_aligned, size_t *first)
{
	size_t n = 0, nl = strlen(needle);
	const char *p = b->buf, *end = b->buf + b->len;

	if (!nl)
		return 0;
	while (p + nl <= end && (p = memmem(p, (size_t)(end - p), needle, nl))) {
		if (!line_aligned || p == b->buf || p[-1] == '\n') {
			if (!n++)
				*first = (size_t)(p - b->buf);
		}
		p++;
	}
	return n;
}

static size_t offset_of_line(const sl_buf *b, uint32_t line)
{
	size_t off = 0;

	for (uint32_t l = 1; l < line && off < b->len; off++)
		if (b->buf[off] == '\n')
			l++;
	return off;
}

static int cmp_splice_desc(const void *a, const void *b)
{
	const sl_edit *x = *(const sl_edit *const *)a, *y = *(const sl_edit *const *)b;

	return x->start < y->start ? 1 : x->start > y->start ? -1 : 0;
}

static int apply_splices(file_state *f, const sl_edit_list *edits, sl_err *err)
{
	const sl_edit **v = NULL;
	size_t n = 0;
	int ret = SL_OK;

	for (size_t i = 0; i < edits->n; i++)
		if (edits->v[i].kind == SL_EDIT_SPLICE && !strcmp(edits->v[i].path, f->path))
			n++;
	if (!n)
		return SL_OK;
	v = sl_xcalloc(n, sizeof(*v));
	n = 0;
	for (size_t i = 0; i < edits->n; i++)
		if (edits->v[i].kind == SL_EDIT_SPLICE && !strcmp(edits->v[i].path, f->path))
			v[n++] = &edits->v[i];
	qsort(v, n, sizeof(*v), cmp_splice_desc);
	for (size_t i = 0; i < n; i++) {
		const sl_edit *e = v[i];
		size_t ol = strlen(e->old_text);

		if (e->end < e->start || e->end > f->content.len || e->end - e->start != ol ||
		    memcmp(f->content.buf + e->start, e->old_text, ol)) {
			ret = sl_err_set(err, SL_EREFUSED,
					 "'%s': the text at bytes %u-%u is not what the edit expects",
					 f->path, e->start, e->end);
			break;
		}
		if (i && e->end > v[i - 1]->start) {
			ret = sl_err_set(err, SL_EREFUSED, "'%s': edits at bytes %u and %u overlap",
					 f->path, e->start, v[i - 1]->start);
			break;
		}
		replace_range(&f->content, e->start, e->end, e->new_text);
	}
	free(v);
	return ret;
}

static int apply_replace(file_state *f, const sl_edit *e, size_t idx, sl_err *err)
{
	size_t first = 0, count;

	if (!*e->old_text) {
		if (f->existed && !f->deleted && f->content.len)
			return sl_err_set(err, SL_EREFUSED,
					  "edit %zu creates '%s', but that file already exists; "
					  "quote the lines to replace", idx, f->path);
		sl_buf_reset(&f->content);
		sl_buf_adds(&f->content, e->new_text);
		f->created = !f->existed;
		f->deleted = 0;
		return SL_OK;
	}
	if (!f->existed && !f->created)
		return sl_err_set(err, SL_EREFUSED, "edit %zu: file '%s' does not exist", idx, f->path);
	count = find_all(&f->content, e->old_text, 0, &first);
	if (count == 0)
		return sl_err_set(err, SL_EREFUSED,
				  "edit %zu: the search text was not found in '%s'; copy it exactly "
				  "from the file", idx, f->path);
	if (count > 1)
		return sl_err_set(err, SL_EREFUSED,
				  "edit %zu: the search text occurs %zu times in '%s'; include more "
				  "lines so it is unique", idx, count, f->path);
	replace_range(&f->content, first, first + strlen(e->old_text), e->new_text);
	return SL_OK;
}

static int apply_hunk(file_state *f, const sl_edit *e, size_t idx, sl_err *err)
{
	size_t ol = strlen(e->old_text), at = 0, count;

	if (e->delete_file) {
		if (!f->existed)
			return sl_err_set(err, SL_EREFUSED, "hunk %zu deletes '%s', which does not exist",
					  idx, f->path);
		if (f->content.len != ol || memcmp(f->content.buf, e->old_text, ol))
			return sl_err_set(err, SL_EREFUSED,
					  "hunk %zu deletes '%s' but its lines differ from the file",
					  idx, f->path);
		f->deleted = 1;
		sl_buf_reset(&f->content);
		return SL_OK;
	}
	if (!ol) {
		if (e->new_file || (!f->existed && !f->created)) {
			if (f->existed && f->content.len)
				return sl_err_set(err, SL_EREFUSED,
						  "hunk %zu creates '%s', which already exists", idx,
						  f->path);
			sl_buf_reset(&f->content);
			sl_buf_adds(&f->content, e->new_text);
			f->created = !f->existed;
			return SL_OK;
		}
		/* pure insertion after line old_line */
		at = offset_of_line(&f->content, e->old_line + 1);
		replace_range(&f->content, at, at, e->new_text);
		return SL_OK;
	}
	if (!f->existed && !f->created)
		return sl_err_set(err, SL_EREFUSED, "hunk %zu: file '%s' does not exist", idx, f->path);
	if (e->old_line) {
		at = offset_of_line(&f->content, e->old_line);
		if (at + ol <= f->content.len && !memcmp(f->content.buf + at, e->old_text, ol)) {
			replace_range(&f->content, at, at + ol, e->new_text);
			return SL_OK;
		}
	}
	count = find_all(&f->content, e->old_text, 1, &at);
	if (count == 0)
		return sl_err_set(err, SL_EREFUSED,
				  "hunk %zu (at line %u) does not apply to '%s': its context and "
				  "removed lines were not found in the file", idx, e->old_line, f->path);
	if (count > 1)
		return sl_err_set(err, SL_EREFUSED,
				  "hunk %zu (at line %u) matches %zu places in '%s'; include more "
				  "context lines", idx, e->old_line, count, f->path);
	replace_range(&f->content, at, at + ol, e->new_text);
	return SL_OK;
}

static file_state *file_for(file_state **files, size_t *n, size_t *alloc, const char *path)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*files)[i].path, path))
			return &(*files)[i];
	SL_ALLOC_GROW(*files, *n + 1, *alloc);
	memset(&(*files)[*n], 0, sizeof(**files));
	(*files)[*n].path = sl_xstrdup(path);
	sl_buf_init(&(*files)[*n].content, 0);
	return &(*files)[(*n)++];
}

static int signature(git_signature **out, git_repository *repo)
{
	if (!git_signature_default(out, repo))
		return 0;
	return git_signature_now(out, "sluice", "sluice@localhost");
}

int sl_apply_edits(git_oid *commit_out, sl_buf *diff_out, git_repository *repo,
		   const git_oid *base, const sl_edit_list *edits, const char *message,
		   sl_err *err)
{
	git_commit *base_commit = NULL;
	git_tree *base_tree = NULL, *new_tree = NULL;
	git_tree_update *updates = NULL;
	git_signature *sig = NULL;
	git_diff *diff = NULL;
	git_buf dbuf = { 0 };
	file_state *files = NULL;
	size_t nfiles = 0, afiles = 0, nupd = 0;
	git_oid tree_oid;
	int ret = SL_ERROR;

	if (!edits->n) {
		ret = sl_err_set(err, SL_EREFUSED, "the reply contains no edit");
		goto done;
	}
	if (git_commit_lookup(&base_commit, repo, base) || git_commit_tree(&base_tree, base_commit)) {
		sl_err_set(err, SL_ERROR, "cannot read base commit: %s", sl_git_error());
		goto done;
	}
	for (size_t i = 0; i < edits->n; i++) {
		file_state *f;

		if ((ret = check_path(edits->v[i].path, err)))
			goto done;
		f = file_for(&files, &nfiles, &afiles, edits->v[i].path);
		if (f->content.len == 0 && !f->existed && !f->created && !f->deleted &&
		    (ret = load_file(f, repo, base_tree, err)))
			goto done;
	}
	for (size_t i = 0; i < nfiles; i++)
		if ((ret = apply_splices(&files[i], edits, err)))
			goto done;
	for (size_t i = 0; i < edits->n; i++) {
		const sl_edit *e = &edits->v[i];
		file_state *f = file_for(&files, &nfiles, &afiles, e->path);

		if (e->kind == SL_EDIT_REPLACE)
			ret = apply_replace(f, e, i + 1, err);
		else if (e->kind == SL_EDIT_HUNK)
			ret = apply_hunk(f, e, i + 1, err);
		if (ret)
			goto done;
	}

	updates = sl_xcalloc(nfiles, sizeof(*updates));
	for (size_t i = 0; i < nfiles; i++) {
		file_state *f = &files[i];
		git_tree_update *u = &updates[nupd];

		if (f->deleted && !f->existed)
			continue;
		u->path = f->path;
		if (f->deleted) {
			u->action = GIT_TREE_UPDATE_REMOVE;
		} else {
			u->action = GIT_TREE_UPDATE_UPSERT;
			u->filemode = f->mode;
			if (git_blob_create_from_buffer(&u->id, repo, f->content.buf, f->content.len)) {
				sl_err_set(err, SL_ERROR, "cannot write blob: %s", sl_git_error());
				ret = SL_ERROR;
				goto done;
			}
		}
		nupd++;
	}
	ret = SL_ERROR;
	if (git_tree_create_updated(&tree_oid, repo, base_tree, nupd, updates) ||
	    git_tree_lookup(&new_tree, repo, &tree_oid)) {
		sl_err_set(err, SL_ERROR, "cannot write tree: %s", sl_git_error());
		goto done;
	}
	if (git_oid_equal(&tree_oid, git_tree_id(base_tree))) {
		ret = sl_err_set(err, SL_EREFUSED, "the edits change nothing");
		goto done;
	}
	if (signature(&sig, repo) ||
	    git_commit_create(commit_out, repo, NULL, sig, sig, NULL, message, new_tree, 1,
			      (const git_commit **)&base_commit)) {
		sl_err_set(err, SL_ERROR, "cannot write commit: %s", sl_git_error());
		goto done;
	}
	if (diff_out) {
		if (git_diff_tree_to_tree(&diff, repo, base_tree, new_tree, NULL) ||
		    git_diff_to_buf(&dbuf, diff, GIT_DIFF_FORMAT_PATCH)) {
			sl_err_set(err, SL_ERROR, "cannot diff candidate: %s", sl_git_error());
			goto done;
		}
		sl_buf_add(diff_out, dbuf.ptr, dbuf.size);
	}
	ret = SL_OK;
done:
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].path);
		sl_buf_release(&files[i].content);
	}
	free(files);
	free(updates);
	git_buf_dispose(&dbuf);
	git_diff_free(diff);
	git_signature_free(sig);
	git_tree_free(new_tree);
	git_tree_free(base_tree);
	git_commit_free(base_commit);
	return ret;
}

struct sl_worktree {
	git_repository *repo;       /* borrowed */
	char *name, *path;
};

static void prune_admin(git_repository *repo, const char *name)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;

	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
	if (!git_worktree_lookup(&wt, repo, name)) {
		git_worktree_prune(wt, &po);
		git_worktree_free(wt);
	}
}

int sl_worktree_add(sl_worktree **out, git_repository *repo, const char *root,
		    const char *name, const char *branch, const git_oid *commit, sl_err *err)
{
	git_worktree_add_options opts;
	git_commit *c = NULL;
	git_reference *ref = NULL;
	git_worktree *gwt = NULL;
	sl_worktree *wt = sl_xcalloc(1, sizeof(*wt));
	int ret = SL_ERROR;

	*out = NULL;
	git_worktree_add_options_init(&opts, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	wt->repo = repo;
	wt->name = sl_xstrdup(name);
	wt->path = sl_path_join(root, name);
	if (sl_mkdir_p(root, 0700, err) || sl_rm_rf(wt->path, err))
		goto done;
	prune_admin(repo, name);
	if (git_commit_lookup(&c, repo, commit) || git_branch_create(&ref, repo, branch, c, 1)) {
		sl_err_set(err, SL_ERROR, "cannot create branch '%s': %s", branch, sl_git_error());
		goto done;
	}
	opts.ref = ref;
	opts.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_worktree_add(&gwt, repo, name, wt->path, &opts)) {
		sl_err_set(err, SL_ERROR, "cannot create worktree '%s': %s", wt->path,
			   sl_git_error());
		goto done;
	}
	*out = wt;
	wt = NULL;
	ret = SL_OK;
done:
	git_worktree_free(gwt);
	git_reference_free(ref);
	git_commit_free(c);
	if (wt) {
		sl_rm_rf(wt->path, NULL);
		prune_admin(repo, wt->name);
		free(wt->name);
		free(wt->path);
		free(wt);
	}
	return ret;
}

const char *sl_worktree_path(const sl_worktree *wt)
{
	return wt->path;
}

int sl_worktree_remove(sl_worktree *wt, sl_err *err)
{
	int ret;

	if (!wt)
		return SL_OK;
	ret = sl_rm_rf(wt->path, err);
	prune_admin(wt->repo, wt->name);
	free(wt->name);
	free(wt->path);
	free(wt);
	return ret;
}

int sl_worktree_cleanup(git_repository *repo, const char *root, sl_err *err)
{
	git_strarray names = { 0 };
	int ret = SL_OK;

	if (git_worktree_list(&names, repo))
		return sl_err_set(err, SL_ERROR, "cannot list worktrees: %s", sl_git_error());
	for (size_t i = 0; i < names.count; i++) {
		git_worktree *wt = NULL;
		char *path = NULL;

		if (git_worktree_lookup(&wt, repo, names.strings[i]))
			continue;
		if (git_worktree_path(wt))
			path = sl_xstrdup(git_worktree_path(wt));
		git_worktree_free(wt);
		if (path && sl_path_is_under(path, root)) {
			if (sl_rm_rf(path, err))
				ret = SL_ERROR;
			prune_admin(repo, names.strings[i]);
		}
		free(path);
	}
	git_strarray_dispose(&names);
	return ret;
}

int sl_branch_delete(git_repository *repo, const char *branch, sl_err *err)
{
	git_reference *ref = NULL;
	int rc = git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL);

	if (rc == GIT_ENOTFOUND)
		return SL_OK;
	if (rc || git_branch_delete(ref)) {
		git_reference_free(ref);
		return sl_err_set(err, SL_ERROR, "cannot delete branch '%s': %s", branch,
				  sl_git_error());
	}
	git_reference_free(ref);
	return SL_OK;
}
