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
#include "common/caps.h"
#include "common/util.h"

struct sl_worktree {
	git_repository *repo;      /* borrowed: the caller's, for the filter check */
	git_index *index;
	int dirfd;                 /* the work tree's top directory */
	struct stat index_st;      /* the index file when it was read */
	int sizes;                 /* compare each file's size with its blob's */
};

static int same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * What an attributes file's text asks of a checkout: 2 working-tree-encoding
 * (the size may stay while the bytes change), 1 a word of end-of-line
 * conversion or ident (the size changes: sl_worktree_read compares it),
 * 0 neither.  Substrings, so any doubt counts.
 */
static int attr_words(const char *text, size_t len)
{
	static const char *const words[] = { "text", "eol", "crlf", "ident", NULL };

	if (memmem(text, len, "working-tree-encoding", 21))
		return 2;
	for (size_t i = 0; words[i]; i++)
		if (memmem(text, len, words[i], strlen(words[i])))
			return 1;
	return 0;
}

/*
 * The greater of most and attr_words of the file at path; an absent or
 * unreadable file asks nothing, as for git.
 */
static int file_words(int most, const char *path)
{
	sl_buf text = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	int w = 0;

	if (!sl_read_file(&text, path, 1 << 20, &err))
		w = attr_words(text.buf, text.len);
	sl_buf_release(&text);
	return w > most ? w : most;
}

/*
 * The most any attribute source asks (attr_words): the index's
 * .gitattributes blobs, the work tree's .gitattributes in every directory
 * holding tracked files and their parents, $GIT_DIR/info/attributes,
 * core.attributesFile (or ~/.config/git/attributes) and /etc/gitattributes.
 */
static int attrs_ask(const sl_worktree *wt, git_repository *repo, git_config *cfg)
{
	size_t n = git_index_entrycount(wt->index), prev = 0;
	const char *prevpath = "";
	git_buf info = { 0 }, global = { 0 };
	sl_buf path = SL_BUF_INIT;
	int most = 0;

	for (size_t i = 0; i < n && most < 2; i++) {
		const git_index_entry *ie = git_index_get_byindex(wt->index, i);
		const char *slash = strrchr(ie->path, '/');
		size_t dl = slash ? (size_t)(slash - ie->path) + 1 : 0, common = 0;
		git_blob *blob = NULL;

		if (!strcmp(slash ? slash + 1 : ie->path, ".gitattributes") &&
		    !git_blob_lookup(&blob, repo, &ie->id)) {
			int w = attr_words(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));

			most = w > most ? w : most;
			git_blob_free(blob);
		}
		/* the directories not seen yet: those past the one shared with the last path */
		while (common < dl && common < prev && ie->path[common] == prevpath[common])
			common++;
		while (common && ie->path[common - 1] != '/')
			common--;
		for (size_t j = i ? common + 1 : 0; j <= dl && most < 2; j++) {
			if (j && ie->path[j - 1] != '/')
				continue;
			sl_buf_reset(&path);
			sl_buf_adds(&path, git_repository_workdir(repo));
			sl_buf_add(&path, ie->path, j);
			sl_buf_adds(&path, ".gitattributes");
			most = file_words(most, path.buf);
		}
		prevpath = ie->path;
		prev = dl;
	}
	if (most < 2 && !git_repository_item_path(&info, repo, GIT_REPOSITORY_ITEM_INFO)) {
		sl_buf_reset(&path);
		sl_buf_adds(&path, info.ptr);
		sl_buf_adds(&path, "/attributes");
		most = file_words(most, path.buf);
	}
	if (most < 2 && !git_config_get_path(&global, cfg, "core.attributesFile"))
		most = file_words(most, global.ptr);
	else if (most < 2) {
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

		sl_buf_reset(&path);
		if (xdg && *xdg)
			sl_buf_addf(&path, "%s/git/attributes", xdg);
		else if (home)
			sl_buf_addf(&path, "%s/.config/git/attributes", home);
		if (path.len)
			most = file_words(most, path.buf);
	}
	if (most < 2)
		most = file_words(most, "/etc/gitattributes");
	sl_buf_release(&path);
	git_buf_dispose(&info);
	git_buf_dispose(&global);
	return most;
}

/*
 * 1 if cfg names a filter driver that converts on checkout
 * (filter.NAME.smudge or .process), or cannot be read.  The names are
 * matched here, not by a regex iterator: libgit2 1.5 leaks a pcre2 match
 * block for every entry its regex does not match.
 */
static int has_filter_driver(git_config *cfg)
{
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	int found = 0, r;

	if (git_config_iterator_new(&it, cfg))
		return 1;
	while (!found && !(r = git_config_next(&ce, it))) {
		size_t n = strlen(ce->name);

		found = !strncmp(ce->name, "filter.", 7) &&
			((n >= 15 && !strcmp(ce->name + n - 7, ".smudge")) ||
			 (n >= 16 && !strcmp(ce->name + n - 8, ".process")));
	}
	if (!found && r != GIT_ITEROVER)
		found = 1;
	git_config_iterator_free(it);
	return found;
}

/*
 * Whether a checkout may have converted a blob without changing its size
 * (then the work tree is not used): a filter driver in the configuration
 * (its attribute is then honoured), a working-tree-encoding attribute, or
 * core.autocrlf on (a file is then too often converted to be worth a try).
 * Sets wt->sizes when an attribute may ask for end-of-line conversion or
 * ident, which change the size of what they convert.
 */
static int may_convert(sl_worktree *wt, git_repository *repo)
{
	git_config *cfg = NULL;
	int autocrlf = 0, ret = 1, asked;

	if (git_repository_config_snapshot(&cfg, repo))
		goto done;
	if (git_config_get_bool(&autocrlf, cfg, "core.autocrlf") == GIT_ENOTFOUND)
		autocrlf = 0;
	else if (git_config_get_bool(&autocrlf, cfg, "core.autocrlf"))
		autocrlf = 1;          /* "input" */
	if (autocrlf || has_filter_driver(cfg))
		goto done;
	if ((asked = attrs_ask(wt, repo, cfg)) == 2)
		goto done;
	wt->sizes = asked == 1;
	ret = 0;
done:
	git_config_free(cfg);
	return ret;
}

/* An index entry takes about this many bytes of the index file (path included). */
#define INDEX_BYTES_PER_FILE 100

int sl_worktree_open(sl_worktree **out, git_repository *repo, size_t nfiles)
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
	if (stat(path.ptr, &wt->index_st) ||
	    (uint64_t)nfiles * 8 * INDEX_BYTES_PER_FILE < (uint64_t)wt->index_st.st_size ||
	    git_index_open(&wt->index, path.ptr) ||
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
	/* too large to scope: the blob path skips it as before */
	if (st.st_size > SL_CAP_SOURCE_BYTES ||
	    (uint32_t)st.st_size != ie->file_size || (uint32_t)st.st_ino != ie->ino ||
	    !same_time(&ie->mtime, &st.st_mtim) || !same_time(&ie->ctime, &st.st_ctim))
		goto done;
	/* a conversion on checkout (end of lines, ident) would have changed the size */
	if (wt->sizes && (git_repository_odb(&odb, repo) || git_odb_read_header(&blob_size, &type, odb, &ie->id) ||
	    type != GIT_OBJECT_BLOB || blob_size != (size_t)st.st_size))
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
