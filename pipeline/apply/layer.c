/*
 * layer.c - what a layer changed, read back as edits (warm.h,
 * sl_warm_layer_changes): the model's session writes a layer over the warm
 * base; its change against the base commit is the candidate.
 *
 * The layer's upper directory (u/) is walked through descriptors opened
 * without following links (its contents are hostile).  A regular file at a
 * path the base commit tracks, with other bytes, is a whole-file edit; an
 * overlay whiteout (a 0/0 character device) of a tracked file or directory
 * deletes it; a file at a path the base does not track is a new file unless
 * the warm base has it (a product of the prepared build) or the
 * repository's ignore rules name it.  Refused (the reasons appended to why,
 * one a line): symbolic links and files with NUL bytes at paths that would
 * count, and files over 4 MiB.  A directory a command removed and made
 * again is opaque in overlay terms (the attribute overlay.opaque "y": in the
 * user.* namespace on a layer mounted with userxattr, as the jail mounts a
 * candidate's, trusted.* otherwise): every file of the base below it that
 * the new directory does not hold is deleted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/util.h"
#include "pipeline/apply/warm.h"
#include "pipeline/generate/edit.h"

#define LAYER_FILE_MAX (4u << 20)
#define LAYER_ENTRIES_MAX 200000
#define LAYER_DEPTH_MAX 64

typedef struct layer_walk {
	git_repository *repo;
	git_tree *base;
	int lowerfd;
	sl_edit_list *out;
	sl_buf *why;
	size_t entries;
	int opaque;                 /* walking below an opaque directory */
} layer_walk;

static int read_fd(sl_buf *out, int fd)
{
	char tmp[65536];
	ssize_t n;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0) {
		if (out->len + (size_t)n > LAYER_FILE_MAX)
			return -1;
		sl_buf_add(out, tmp, (size_t)n);
	}
	return n < 0 ? -1 : 0;
}

/*
 * Every blob of the base below path (a tree) deleted; or path itself (a
 * blob).  With dirfd >= 0 (an opaque directory of the layer, at the first
 * skip bytes of path), only those the layer does not hold below it.
 */
static void delete_tracked(layer_walk *lw, const char *path, const git_tree_entry *e,
			   int dirfd, size_t skip)
{
	git_tree *sub = NULL;
	git_blob *blob = NULL;

	if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
		struct stat st;
		sl_edit *ed;

		if (dirfd >= 0 && !fstatat(dirfd, path + skip, &st, AT_SYMLINK_NOFOLLOW))
			return;     /* the walk reads what is there */
		if (git_blob_lookup(&blob, lw->repo, git_tree_entry_id(e)))
			return;
		ed = sl_edit_list_add(lw->out, SL_EDIT_HUNK, path, "", "");
		ed->delete_file = 1;
		git_blob_free(blob);
		return;
	}
	if (git_tree_entry_type(e) != GIT_OBJECT_TREE ||
	    git_tree_lookup(&sub, lw->repo, git_tree_entry_id(e)))
		return;
	for (size_t i = 0; i < git_tree_entrycount(sub); i++) {
		const git_tree_entry *c = git_tree_entry_byindex(sub, i);
		sl_buf p = SL_BUF_INIT;

		sl_buf_addf(&p, "%s/%s", path, git_tree_entry_name(c));
		delete_tracked(lw, p.buf, c, dirfd, skip);
		sl_buf_release(&p);
	}
	git_tree_free(sub);
}

/* A regular file of the layer at path (its descriptor fd). */
static void changed_file(layer_walk *lw, const char *path, int fd, const git_tree_entry *e)
{
	sl_buf data = SL_BUF_INIT;
	git_blob *blob = NULL;
	struct stat st;
	int ignored = 0;

	if (!e) {
		if (!fstatat(lw->lowerfd, path, &st, AT_SYMLINK_NOFOLLOW))
			return;     /* the prepared build's, or the build's again */
		if (!git_ignore_path_is_ignored(&ignored, lw->repo, path) && ignored)
			return;
	} else if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		sl_buf_addf(lw->why, "'%s' replaces a directory of the base with a file\n", path);
		return;
	}
	if (read_fd(&data, fd)) {
		sl_buf_addf(lw->why, "'%s' is over %u bytes or cannot be read\n", path,
			    LAYER_FILE_MAX);
		goto done;
	}
	if (memchr(data.buf, 0, data.len)) {
		if (e)
			sl_buf_addf(lw->why, "'%s' holds NUL bytes: binary files are not taken\n",
				    path);
		goto done;
	}
	if (!e) {
		sl_edit *ed = sl_edit_list_add(lw->out, SL_EDIT_HUNK, path, "", data.buf);

		ed->new_file = 1;
		goto done;
	}
	if (git_blob_lookup(&blob, lw->repo, git_tree_entry_id(e)))
		goto done;
	if ((size_t)git_blob_rawsize(blob) != data.len ||
	    memcmp(git_blob_rawcontent(blob), data.buf, data.len)) {
		sl_buf old = SL_BUF_INIT;
		sl_edit *ed;

		sl_buf_add(&old, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		if (memchr(old.buf, 0, old.len)) {
			sl_buf_addf(lw->why, "'%s' is a binary file of the base\n", path);
		} else {
			ed = sl_edit_list_add(lw->out, SL_EDIT_SPLICE, path, old.buf, data.buf);
			ed->start = 0;
			ed->end = (uint32_t)old.len;
		}
		sl_buf_release(&old);
	}
done:
	git_blob_free(blob);
	sl_buf_release(&data);
}

static int walk_dir(layer_walk *lw, int dirfd, const char *prefix, int depth, sl_err *err);

/* 1 if the layer's directory fd is opaque: made again where the base had one. */
static int is_opaque(int fd)
{
	static const char *const names[] = { "user.overlay.opaque", "trusted.overlay.opaque" };
	char v[4];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (fgetxattr(fd, names[i], v, sizeof(v)) == 1 && v[0] == 'y')
			return 1;
	return 0;
}

/*
 * A directory of the layer at path (its descriptor fd, which the walk
 * takes).  An opaque one hides the base's below it: those it does not
 * hold again are deleted (once: not again for an opaque one below it).
 */
static int walk_subdir(layer_walk *lw, int fd, const char *path, const git_tree_entry *e,
		       int depth, sl_err *err)
{
	int outer = lw->opaque, ret;

	if (!outer && e && git_tree_entry_type(e) == GIT_OBJECT_TREE && is_opaque(fd)) {
		delete_tracked(lw, path, e, fd, strlen(path) + 1);
		lw->opaque = 1;
	}
	ret = walk_dir(lw, fd, path, depth + 1, err);
	lw->opaque = outer;
	return ret;
}

/* One entry of a directory of the layer. */
static int walk_entry(layer_walk *lw, int dirfd, const char *name, const char *path, int depth,
		      sl_err *err)
{
	git_tree_entry *e = NULL;
	struct stat st;
	int fd = -1, ret = SL_OK;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return SL_OK;
	if (git_tree_entry_bypath(&e, lw->base, path))
		e = NULL;
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
		if (e)
			delete_tracked(lw, path, e, -1, 0);
	} else if (S_ISDIR(st.st_mode)) {
		if (e && git_tree_entry_type(e) == GIT_OBJECT_BLOB)
			delete_tracked(lw, path, e, -1, 0);
		if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			ret = walk_subdir(lw, fd, path, e, depth, err);
	} else if (S_ISREG(st.st_mode)) {
		if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) >= 0)
			changed_file(lw, path, fd, e);
		if (fd >= 0)
			close(fd);
	} else if (S_ISLNK(st.st_mode)) {
		int ignored = 0;

		if (e || (!git_ignore_path_is_ignored(&ignored, lw->repo, path) && !ignored &&
			  fstatat(lw->lowerfd, path, &st, AT_SYMLINK_NOFOLLOW)))
			sl_buf_addf(lw->why, "'%s' is a symbolic link: links are not taken\n", path);
	}
	git_tree_entry_free(e);
	return ret;
}

static int walk_dir(layer_walk *lw, int dirfd, const char *prefix, int depth, sl_err *err)
{
	DIR *d;
	struct dirent *de;
	int ret = SL_OK;

	if (depth > LAYER_DEPTH_MAX) {
		close(dirfd);
		return sl_err_set(err, SL_EREFUSED, "the layer is nested deeper than %d",
				  LAYER_DEPTH_MAX);
	}
	if (!(d = fdopendir(dirfd))) {
		close(dirfd);
		return sl_err_set(err, SL_ERROR, "cannot read layer '%s': %s", prefix,
				  strerror(errno));
	}
	while (!ret && (de = readdir(d))) {
		sl_buf path = SL_BUF_INIT;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++lw->entries > LAYER_ENTRIES_MAX) {
			ret = sl_err_set(err, SL_EREFUSED, "the layer holds more than %d entries",
					 LAYER_ENTRIES_MAX);
			break;
		}
		if (*prefix)
			sl_buf_addf(&path, "%s/%s", prefix, de->d_name);
		else
			sl_buf_adds(&path, de->d_name);
		/* what git never tracks: the layer's .git pointer, a build's own .git */
		if (!*prefix && !strcmp(de->d_name, ".git")) {
			sl_buf_release(&path);
			continue;
		}
		ret = walk_entry(lw, dirfd, de->d_name, path.buf, depth, err);
		sl_buf_release(&path);
	}
	closedir(d);
	return ret;
}

int sl_warm_layer_changes(sl_edit_list *out, sl_buf *why, sl_warm *w, git_repository *repo,
			  const git_oid *base, const char *layer, sl_err *err)
{
	layer_walk lw = { .repo = repo, .out = out, .why = why, .lowerfd = -1 };
	git_commit *c = NULL;
	sl_buf upper = SL_BUF_INIT;
	int ufd = -1, ret = SL_ERROR;

	if (git_commit_lookup(&c, repo, base) || git_commit_tree(&lw.base, c)) {
		sl_err_set(err, SL_ERROR, "cannot read the base: %s", sl_git_error());
		goto done;
	}
	sl_buf_addf(&upper, "%s/u", layer);
	if ((lw.lowerfd = open(sl_warm_tree(w), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (ufd = open(upper.buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		sl_err_set(err, SL_ERROR, "cannot open layer '%s': %s", upper.buf, strerror(errno));
		goto done;
	}
	ret = walk_dir(&lw, ufd, "", 0, err);
done:
	if (lw.lowerfd >= 0)
		close(lw.lowerfd);
	git_tree_free(lw.base);
	git_commit_free(c);
	sl_buf_release(&upper);
	return ret;
}
