/*
 * worktree.c - read a scoped blob from the work tree when the file there
 * is known to hold exactly that blob (worktree.h says when).
 *
 * Reads: the repository's index file (a fresh copy, never the one the
 * caller's handle may hold), the attributes and configuration that choose
 * checkout filters, and the files of the work tree.  Writes nothing.
 *
 * The checks are git's for a clean file (size, mtime, ctime, inode of an
 * entry that is not racy) plus no checkout filter.  Any doubt, and any
 * failure, sends the caller to the blob: this only ever saves time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scoping/worktree.h"
#include "common/buf.h"
#include "common/util.h"

struct sl_worktree {
	git_repository *repo;      /* borrowed: the caller's, for the filter check */
	git_index *index;
	int dirfd;                 /* the work tree's top directory */
	struct stat index_st;      /* the index file when it was read */
};

static int same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Whether the text of an attributes file names working-tree-encoding. */
static int names_encoding(const char *text, size_t len)
{
	static const char word[] = "working-tree-encoding";

	return memmem(text, len, word, sizeof(word) - 1) != NULL;
}

/*
 * Whether a checkout may have converted a blob without changing its size:
 * a filter driver in the configuration (its attribute is then honoured),
 * a working-tree-encoding attribute in a .gitattributes of the index or in
 * $GIT_DIR/info/attributes.  End-of-line conversion and ident always change
 * the size of what they convert (sl_worktree_read compares it); with
 * core.autocrlf on, a file is too often converted to be worth a try.
 */
static int may_convert(const sl_worktree *wt, git_repository *repo)
{
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	git_buf info = { 0 };
	int autocrlf = 0, ret = 1;
	size_t n = git_index_entrycount(wt->index);
	sl_buf text = SL_BUF_INIT;

	if (git_repository_config_snapshot(&cfg, repo))
		goto done;
	if (git_config_get_bool(&autocrlf, cfg, "core.autocrlf") == GIT_ENOTFOUND)
		autocrlf = 0;
	else if (git_config_get_bool(&autocrlf, cfg, "core.autocrlf"))
		autocrlf = 1;          /* "input" */
	if (autocrlf || git_config_iterator_glob_new(&it, cfg, "^filter\\..*\\.(smudge|process)$") ||
	    git_config_next(&ce, it) != GIT_ITEROVER)
		goto done;
	for (size_t i = 0; i < n; i++) {
		const git_index_entry *ie = git_index_get_byindex(wt->index, i);
		size_t pl = strlen(ie->path);
		git_blob *blob = NULL;
		int named;

		if (pl < 14 || strcmp(ie->path + pl - 14, ".gitattributes") ||
		    (pl > 14 && ie->path[pl - 15] != '/'))
			continue;
		if (git_blob_lookup(&blob, repo, &ie->id))
			goto done;
		named = names_encoding(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		git_blob_free(blob);
		if (named)
			goto done;
	}
	if (!git_repository_item_path(&info, repo, GIT_REPOSITORY_ITEM_INFO)) {
		sl_buf path = SL_BUF_INIT;
		sl_err err = SL_ERR_INIT;
		int named;

		sl_buf_adds(&path, info.ptr);
		sl_buf_adds(&path, "/attributes");
		/* absent or unreadable: git reads nothing from it either */
		named = !sl_read_file(&text, path.buf, 1 << 20, &err) && names_encoding(text.buf, text.len);
		sl_buf_release(&path);
		if (named)
			goto done;
	}
	ret = 0;
done:
	sl_buf_release(&text);
	git_buf_dispose(&info);
	git_config_iterator_free(it);
	git_config_free(cfg);
	return ret;
}

int sl_worktree_open(sl_worktree **out, git_repository *repo)
{
	sl_worktree *wt = NULL;
	git_buf path = { 0 };
	struct stat after;
	const char *workdir = git_repository_workdir(repo);

	*out = NULL;
	if (!workdir || git_repository_item_path(&path, repo, GIT_REPOSITORY_ITEM_INDEX))
		goto done;
	wt = sl_xcalloc(1, sizeof(*wt));
	wt->repo = repo;
	wt->dirfd = -1;
	/* the index must not change while it is read: stat it before and after */
	if (stat(path.ptr, &wt->index_st) || git_index_open(&wt->index, path.ptr) ||
	    stat(path.ptr, &after) || !same_stat(&wt->index_st, &after))
		goto done;
	if (may_convert(wt, repo) ||
	    (wt->dirfd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto done;
	*out = wt;
	wt = NULL;
done:
	sl_worktree_free(wt);
	git_buf_dispose(&path);
	return 0;
}

/* Whether a stored time matches a file's; a stored 0 ns means the writer kept none. */
static int same_time(const git_index_time *t, const struct timespec *ts)
{
	return t->seconds == (int32_t)ts->tv_sec &&
	       (!t->nanoseconds || t->nanoseconds == (uint32_t)ts->tv_nsec);
}

const git_index_entry *sl_worktree_entry(const sl_worktree *wt, const char *path,
					 const git_oid *oid)
{
	const git_index_entry *ie;

	if (!wt || !(ie = git_index_get_bypath(wt->index, path, 0)))
		return NULL;
	if (!git_oid_equal(&ie->id, oid) ||
	    (ie->mode != GIT_FILEMODE_BLOB && ie->mode != GIT_FILEMODE_BLOB_EXECUTABLE) ||
	    (ie->flags & GIT_INDEX_ENTRY_VALID) ||
	    (ie->flags_extended & (GIT_INDEX_ENTRY_SKIP_WORKTREE | GIT_INDEX_ENTRY_INTENT_TO_ADD)))
		return NULL;
	/* racy: the file may have changed in the second the index was written */
	if ((int64_t)ie->mtime.seconds >= (int64_t)wt->index_st.st_mtim.tv_sec)
		return NULL;
	return ie;
}

int sl_worktree_read(const sl_worktree *wt, git_repository *repo, const char *path,
		     const git_index_entry *ie, char **buf, size_t *len)
{
	struct stat st;
	git_odb *odb = NULL;
	git_object_t type;
	size_t blob_size;
	char *b = NULL;
	size_t got = 0;
	int fd = -1, ret = 1;

	*buf = NULL;
	*len = 0;
	if (!wt || !ie || (fd = openat(wt->dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto done;
	if ((uint32_t)st.st_size != ie->file_size || (uint32_t)st.st_ino != ie->ino ||
	    !same_time(&ie->mtime, &st.st_mtim) || !same_time(&ie->ctime, &st.st_ctim))
		goto done;
	/* a conversion on checkout (end of lines, ident) would have changed the size */
	if (git_repository_odb(&odb, repo) || git_odb_read_header(&blob_size, &type, odb, &ie->id) ||
	    type != GIT_OBJECT_BLOB || blob_size != (size_t)st.st_size)
		goto done;
	b = sl_xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto done;
		got += (size_t)n;
	}
	/* changed while read: the blob it is */
	if (fstat(fd, &st) || (uint32_t)st.st_size != ie->file_size ||
	    !same_time(&ie->mtime, &st.st_mtim) || !same_time(&ie->ctime, &st.st_ctim))
		goto done;
	b[got] = 0;
	*buf = b;
	*len = got;
	b = NULL;
	ret = 0;
done:
	free(b);
	git_odb_free(odb);
	if (fd >= 0)
		close(fd);
	return ret;
}

void sl_worktree_free(sl_worktree *wt)
{
	if (!wt)
		return;
	git_index_free(wt->index);
	if (wt->dirfd >= 0)
		close(wt->dirfd);
	free(wt);
}
