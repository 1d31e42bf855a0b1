/*
 * warm.c - the warm base and candidates' layers (warm.h).
 *
 * Reads the repository's objects (libgit2); writes only under the scratch
 * root: the exported base tree, its lock and ready marker, and layers.
 * Files are written through directory descriptors opened without following
 * links, so nothing planted in a layer's path (there is nothing yet: a
 * layer is written before its first gate runs) can redirect a write.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/sha256.h"
#include "common/util.h"
#include "pipeline/apply/warm.h"
#include "storage/lease.h"
#include "validators/validators.h"

#define GITDIR_NONE "gitdir: /nonexistent\n"

struct sl_warm {
	char *dir;                  /* ROOT/warm-DIGEST */
	char *tree;                 /* ROOT/warm-DIGEST/tree */
	char *root;
	git_oid base;
	int lock_fd;
	struct timespec newest;     /* the latest modification time in the prepared tree */
	pthread_mutex_t mu;
	size_t seq;
};

/* Open (or make) one path component below dirfd as a directory, never through a link. */
static int dir_at(int dirfd, const char *name, int create)
{
	struct stat st;
	int fd;

	if (create && mkdirat(dirfd, name, 0755) && errno == EEXIST &&
	    !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISCHR(st.st_mode)) {
		/* a whiteout of the file this directory replaces */
		if (unlinkat(dirfd, name, 0) || mkdirat(dirfd, name, 0755))
			return -1;
	}
	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/*
 * The directory holding path (relative to rootfd), made as needed; *base_out
 * points into path at the last component.  -1 with errno when a component is
 * not a directory (ENOTDIR: a file above hides everything below it).
 */
static int parent_of(int rootfd, const char *path, const char **base_out)
{
	char comp[256];
	const char *p = path, *slash;
	int fd = dup(rootfd), next;

	while (fd >= 0 && (slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);

		if (!n || n >= sizeof(comp)) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = dir_at(fd, comp, 1);
		close(fd);
		fd = next;
		p = slash + 1;
	}
	*base_out = p;
	return fd;
}

/* Write one blob (file, executable or link) at path below rootfd. */
static int put_blob(int rootfd, const char *rootpath, const char *path, const git_blob *blob,
		    git_filemode_t mode, const struct timespec *mtime, sl_err *err)
{
	const char *name;
	const void *data = git_blob_rawcontent(blob);
	size_t len = (size_t)git_blob_rawsize(blob);
	struct stat st;
	int dfd = parent_of(rootfd, path, &name), fd = -1, ret = SL_ERROR;

	if (dfd < 0) {
		sl_err_set(err, SL_ERROR, "cannot write '%s' under '%s': %s", path, rootpath,
			   strerror(errno));
		goto done;
	}
	if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISDIR(st.st_mode)) {
			/* made for whiteouts below a path that is a file now */
			char *full = sl_path_join(rootpath, path);
			int r = sl_rm_rf(full, err);

			free(full);
			if (r)
				goto done;
		} else if (unlinkat(dfd, name, 0)) {
			sl_err_set(err, SL_ERROR, "cannot replace '%s': %s", path, strerror(errno));
			goto done;
		}
	}
	if (mode == GIT_FILEMODE_LINK) {
		char *target = sl_xstrndup(data, len);
		int r = symlinkat(target, dfd, name);

		free(target);
		if (r) {
			sl_err_set(err, SL_ERROR, "cannot write '%s': %s", path, strerror(errno));
			goto done;
		}
		ret = SL_OK;
		goto done;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || sl_write_all(fd, data, len) ||
	    fchmod(fd, mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644) ||
	    (mtime && futimens(fd, (const struct timespec[2]){ *mtime, *mtime }))) {
		sl_err_set(err, SL_ERROR, "cannot write '%s': %s", path, strerror(errno));
		goto done;
	}
	ret = SL_OK;
done:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* A deleted file: an overlay whiteout at path below rootfd. */
static int put_whiteout(int rootfd, const char *path, sl_err *err)
{
	const char *name;
	int dfd = parent_of(rootfd, path, &name), ret = SL_OK;

	if (dfd < 0)
		/* a file written above it hides it already */
		return errno == ENOTDIR ? SL_OK :
			sl_err_set(err, SL_ERROR, "cannot delete '%s': %s", path, strerror(errno));
	if (mknodat(dfd, name, S_IFCHR | 0000, makedev(0, 0)) && errno != EEXIST)
		ret = sl_err_set(err, SL_ERROR, "cannot delete '%s' (whiteout): %s", path,
				 strerror(errno));
	close(dfd);
	return ret;
}

/* An empty directory at path below rootfd (made if missing), never through a link. */
static int put_dir(int rootfd, const char *path, sl_err *err)
{
	const char *name;
	int dfd = parent_of(rootfd, path, &name), fd = -1;

	if (dfd >= 0)
		fd = dir_at(dfd, name, 1);
	if (fd < 0)
		sl_err_set(err, SL_ERROR, "cannot make the directory '%s': %s", path,
			   strerror(errno));
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

struct export_ctx {
	git_repository *repo;
	int rootfd;
	const char *rootpath;
	sl_err *err;
	int failed;
};

static int export_one(const char *dir, const git_tree_entry *e, void *payload)
{
	struct export_ctx *c = payload;
	git_filemode_t mode = git_tree_entry_filemode(e);
	git_blob *blob = NULL;
	sl_buf path = SL_BUF_INIT;
	int ret = 0;

	if (mode == GIT_FILEMODE_TREE)
		return 0;       /* directories come with their files */
	sl_buf_addf(&path, "%s%s", dir, git_tree_entry_name(e));
	if (mode == GIT_FILEMODE_COMMIT) {
		/* a submodule: an empty directory, as git checkout leaves it */
		ret = put_dir(c->rootfd, path.buf, c->err);
	} else if (git_blob_lookup(&blob, c->repo, git_tree_entry_id(e))) {
		sl_err_set(c->err, SL_ERROR, "cannot read '%s': %s", path.buf, sl_git_error());
		ret = -1;
	} else if (put_blob(c->rootfd, c->rootpath, path.buf, blob, mode, NULL, c->err)) {
		ret = -1;
	}
	c->failed |= ret;
	git_blob_free(blob);
	sl_buf_release(&path);
	return ret;
}

static int export_tree(git_repository *repo, const git_oid *commit_id, const char *dir,
		       sl_err *err)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	struct export_ctx c = { repo, -1, dir, err, 0 };
	char *git = NULL;
	int ret = SL_ERROR;

	if (sl_mkdir_p(dir, 0755, err))
		return SL_ERROR;
	if ((c.rootfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		sl_err_set(err, SL_ERROR, "cannot open '%s': %s", dir, strerror(errno));
		goto done;
	}
	if (git_commit_lookup(&commit, repo, commit_id) || git_commit_tree(&tree, commit)) {
		sl_err_set(err, SL_ERROR, "cannot read the base commit: %s", sl_git_error());
		goto done;
	}
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, export_one, &c) || c.failed) {
		if (!c.failed)
			sl_err_set(err, SL_ERROR, "cannot export the base: %s", sl_git_error());
		goto done;
	}
	/*
	 * Like a worktree's pointer file, which the jail shows read-only as
	 * "gitdir: /nonexistent": gates cannot plant a .git in their tree.
	 */
	if ((git = sl_path_join(dir, ".git")) && sl_write_file(git, GITDIR_NONE,
							       strlen(GITDIR_NONE), err))
		goto done;
	ret = SL_OK;
done:
	free(git);
	if (c.rootfd >= 0)
		close(c.rootfd);
	git_tree_free(tree);
	git_commit_free(commit);
	return ret;
}

/* nftw callback: the newest modification time, in the calling thread's slot. */
static __thread struct timespec newest_seen;
static int newest_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag != FTW_NS && (st->st_mtim.tv_sec > newest_seen.tv_sec ||
			       (st->st_mtim.tv_sec == newest_seen.tv_sec &&
				st->st_mtim.tv_nsec > newest_seen.tv_nsec)))
		newest_seen = st->st_mtim;
	return 0;
}

/* "warm-" and 16 hex digits: a warm base's directory (a campaign may be named warm-x). */
static int is_warm_name(const char *name)
{
	if (strncmp(name, "warm-", 5) || strlen(name) != 21)
		return 0;
	for (name += 5; *name; name++)
		if (!strchr("0123456789abcdef", *name))
			return 0;
	return 1;
}

/*
 * The key of the warm base under root, other than self, prepared last
 * (its "ready" newest), into key; 0 if there is none.
 */
static int previous_key(const char *root, const char *self, sl_buf *key)
{
	DIR *d = opendir(root);
	struct dirent *de;
	struct timespec best = { 0, 0 };
	int found = 0;

	while (d && (de = readdir(d))) {
		sl_buf path = SL_BUF_INIT;
		struct stat st;

		if (!is_warm_name(de->d_name) || !strcmp(de->d_name, self))
			continue;
		sl_buf_addf(&path, "%s/%s/ready", root, de->d_name);
		if (!lstat(path.buf, &st) && (st.st_mtim.tv_sec > best.tv_sec ||
					      (st.st_mtim.tv_sec == best.tv_sec &&
					       st.st_mtim.tv_nsec > best.tv_nsec))) {
			sl_buf k = SL_BUF_INIT;

			sl_buf_reset(&path);
			sl_buf_addf(&path, "%s/%s/key", root, de->d_name);
			if (!sl_read_file(&k, path.buf, 1 << 20, NULL)) {
				sl_buf_reset(key);
				sl_buf_add(key, k.buf, k.len);
				best = st.st_mtim;
				found = 1;
			}
			sl_buf_release(&k);
		}
		sl_buf_release(&path);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * Note the store in dir/stores, one path a line, unless it is there (the
 * caller holds dir/lock shared: appends of other runs are whole lines).
 */
static int note_store(const char *dir, const char *store, sl_err *err)
{
	char *path = sl_path_join(dir, "stores"), *real = NULL;
	sl_buf have = SL_BUF_INIT, line = SL_BUF_INIT;
	int fd = -1, ret = SL_ERROR;

	if (!store) {
		ret = SL_OK;
		goto done;
	}
	if (!(real = realpath(store, NULL)))
		real = sl_xstrdup(store);
	/* "\nPATH\n", found in "\n" and what the file holds */
	sl_buf_addf(&line, "\n%s\n", real);
	sl_buf_addch(&have, '\n');
	sl_read_file(&have, path, 1 << 20, NULL);
	if (strstr(have.buf, line.buf)) {
		ret = SL_OK;
		goto done;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || sl_write_all(fd, line.buf + 1, line.len - 1)) {
		sl_err_set(err, SL_ERROR, "cannot write '%s': %s", path, strerror(errno));
		goto done;
	}
	ret = SL_OK;
done:
	if (fd >= 0)
		close(fd);
	sl_buf_release(&have);
	sl_buf_release(&line);
	free(real);
	free(path);
	return ret;
}

/* Export the base to w->tree and prepare it; the key is written first, "ready" last. */
static int build(sl_warm *w, const sl_warm_opts *o, const char *name, sl_err *err)
{
	char *ready = sl_path_join(w->dir, "ready"), *key = sl_path_join(w->dir, "key");
	sl_buf prev = SL_BUF_INIT;
	struct stat st;
	int unfinished = !lstat(w->tree, &st), ret = SL_ERROR;

	/* a run that died or was stopped while preparing left half a tree: start over */
	if (sl_rm_rf(w->tree, err) || sl_write_file(key, o->key, strlen(o->key), err) ||
	    export_tree(o->repo, o->base, w->tree, err))
		goto done;
	if ((ret = o->prepare(o->ctx, w->tree, previous_key(o->root, name, &prev) ? prev.buf : NULL,
			      unfinished, err)))
		goto done;
	ret = sl_write_file(ready, name, strlen(name), err) ? SL_ERROR : SL_OK;
done:
	sl_buf_release(&prev);
	free(ready);
	free(key);
	return ret;
}

int sl_warm_open(sl_warm **out, const sl_warm_opts *o, int *built_out, sl_err *err)
{
	sl_warm *w = sl_xcalloc(1, sizeof(*w));
	sl_buf b = SL_BUF_INIT;
	char *ready = NULL, *lock = NULL, digest[65];
	struct stat st;
	int build_fd = -1, ret = SL_ERROR;

	*out = NULL;
	if (built_out)
		*built_out = 0;
	w->lock_fd = -1;
	pthread_mutex_init(&w->mu, NULL);
	w->root = sl_xstrdup(o->root);
	git_oid_cpy(&w->base, o->base);
	sl_sha256_hex(digest, o->key, strlen(o->key));
	sl_buf_addf(&b, "warm-%.16s", digest);
	w->dir = sl_path_join(o->root, b.buf);
	w->tree = sl_path_join(w->dir, "tree");
	ready = sl_path_join(w->dir, "ready");
	lock = sl_path_join(w->dir, "lock");
	if (sl_mkdir_p(w->dir, 0700, err))
		goto done;
	/*
	 * Every run holds "lock" LOCK_SH for its life (gc removes only a base
	 * nobody holds); building takes "build.lock" LOCK_EX, and whoever gets
	 * it looks for "ready" again: another run may have built it meanwhile.
	 */
	w->lock_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_SH)) {
		sl_err_set(err, SL_ERROR, "cannot lock '%s': %s", lock, strerror(errno));
		goto done;
	}
	if (note_store(w->dir, o->store, err))
		goto done;
	if (lstat(ready, &st)) {
		free(lock);
		lock = sl_path_join(w->dir, "build.lock");
		build_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (build_fd < 0 || flock(build_fd, LOCK_EX)) {
			sl_err_set(err, SL_ERROR, "cannot lock '%s': %s", lock, strerror(errno));
			goto done;
		}
	}
	if (build_fd >= 0 && lstat(ready, &st)) {
		if ((ret = build(w, o, b.buf, err)))
			goto done;
		ret = SL_ERROR;
		if (built_out)
			*built_out = 1;
	}
	newest_seen.tv_sec = 0;
	newest_seen.tv_nsec = 0;
	nftw(w->tree, newest_one, 32, FTW_PHYS | FTW_MOUNT);
	w->newest = newest_seen;
	*out = w;
	w = NULL;
	ret = SL_OK;
done:
	if (build_fd >= 0)
		close(build_fd);
	sl_warm_free(w);
	sl_buf_release(&b);
	free(ready);
	free(lock);
	return ret;
}

const char *sl_warm_tree(const sl_warm *w)
{
	return w->tree;
}

const char *sl_warm_dir(const sl_warm *w)
{
	return w->dir;
}

void sl_warm_free(sl_warm *w)
{
	if (!w)
		return;
	if (w->lock_fd >= 0)
		close(w->lock_fd);
	pthread_mutex_destroy(&w->mu);
	free(w->dir);
	free(w->tree);
	free(w->root);
	free(w);
}

/*
 * The topmost directory above path that the candidate's tree ct no longer
 * has, into dir; 0 when every directory above path is still there.
 */
static int gone_dir(git_tree *ct, const char *path, sl_buf *dir)
{
	const char *slash;
	git_tree_entry *e;

	for (slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
		sl_buf_reset(dir);
		sl_buf_add(dir, path, (size_t)(slash - path));
		if (git_tree_entry_bypath(&e, ct, dir->buf))
			return 1;
		git_tree_entry_free(e);
	}
	return 0;
}

/* The candidate's changes against the base, into the layer's u/. */
static int write_changes(sl_warm *w, git_repository *repo, const git_oid *commit_id,
			 const char *upper, sl_err *err)
{
	git_tree *ct = NULL;
	git_diff *diff = NULL;
	struct timespec now;
	sl_buf dir = SL_BUF_INIT;
	int ufd = -1, ret = SL_ERROR;

	/* newer than anything in the warm base, whatever the clocks did */
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec < w->newest.tv_sec ||
	    (now.tv_sec == w->newest.tv_sec && now.tv_nsec <= w->newest.tv_nsec)) {
		/* the base has files from the future: just after the newest */
		now = w->newest;
		if (++now.tv_nsec >= 1000000000L) {
			now.tv_sec++;
			now.tv_nsec = 0;
		}
	}
	if ((ufd = open(upper, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		sl_err_set(err, SL_ERROR, "cannot open '%s': %s", upper, strerror(errno));
		goto done;
	}
	/* only the subtrees that differ: the cost follows the change, not the tree */
	if (sl_diff_commits(&diff, &ct, repo, &w->base, commit_id, NULL, err))
		goto done;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_blob *blob = NULL;
		int r;

		if (d->status == GIT_DELTA_DELETED) {
			/* a directory left empty goes too, as in a checkout of the candidate */
			if (put_whiteout(ufd, gone_dir(ct, d->old_file.path, &dir) ? dir.buf :
					 d->old_file.path, err))
				goto done;
			continue;
		}
		if (d->new_file.mode == GIT_FILEMODE_COMMIT)
			continue;
		if (git_blob_lookup(&blob, repo, &d->new_file.id)) {
			sl_err_set(err, SL_ERROR, "cannot read '%s': %s", d->new_file.path,
				   sl_git_error());
			goto done;
		}
		r = put_blob(ufd, upper, d->new_file.path, blob, d->new_file.mode, &now, err);
		git_blob_free(blob);
		if (r)
			goto done;
	}
	ret = SL_OK;
done:
	sl_buf_release(&dir);
	if (ufd >= 0)
		close(ufd);
	git_diff_free(diff);
	git_tree_free(ct);
	return ret;
}

int sl_warm_layer_add(char **layer_out, int *capped_out, sl_warm *w, git_repository *repo,
		      const git_oid *commit, unsigned cap_mb, sl_err *err)
{
	sl_buf name = SL_BUF_INIT, opts = SL_BUF_INIT;
	char *layer = NULL, *u = NULL, *wk = NULL;
	int ret = SL_ERROR, mounted = 0;

	*layer_out = NULL;
	*capped_out = 0;
	/* an ordinary user's tmpfs, in a user namespace of its own (validators.h) */
	if (geteuid() && !sl_jail_layer_new(&layer, cap_mb ? cap_mb : 2048, NULL)) {
		mounted = 1;
		u = sl_path_join(layer, "u");
		goto write;
	}
	pthread_mutex_lock(&w->mu);
	sl_buf_addf(&name, "layer-%ld-%zu", (long)getpid(), ++w->seq);
	pthread_mutex_unlock(&w->mu);
	layer = sl_path_join(w->root, name.buf);
	u = sl_path_join(layer, "u");
	wk = sl_path_join(layer, "w");
	if (sl_rm_rf(layer, err))
		goto done;
	if (mkdir(layer, 0755)) {
		sl_err_set(err, SL_ERROR, "cannot create '%s': %s", layer, strerror(errno));
		goto done;
	}
	/* root may give the layer a tmpfs of its own: the cap holds while gates write */
	sl_buf_addf(&opts, "mode=0755,size=%um", cap_mb ? cap_mb : 2048);
	if (!geteuid() && !mount("tmpfs", layer, "tmpfs", MS_NOSUID | MS_NODEV, opts.buf))
		mounted = 1;
	if (mkdir(u, 0755) || mkdir(wk, 0755)) {
		sl_err_set(err, SL_ERROR, "cannot create '%s': %s", u, strerror(errno));
		goto done;
	}
write:
	if (write_changes(w, repo, commit, u, err))
		goto done;
	*layer_out = layer;
	*capped_out = mounted;
	layer = NULL;
	ret = SL_OK;
done:
	if (layer)
		sl_warm_layer_remove(layer, NULL);
	sl_buf_release(&name);
	sl_buf_release(&opts);
	free(layer);
	free(u);
	free(wk);
	return ret;
}

int sl_warm_layer_remove(const char *layer, sl_err *err)
{
	struct stat st, up;
	char *parent;
	int r;

	if (!layer || sl_jail_layer_drop(layer) || lstat(layer, &st))
		return SL_OK;
	parent = sl_path_join(layer, "..");
	r = lstat(parent, &up);
	free(parent);
	/* a tmpfs of its own: dropping the mount drops everything in it */
	if (!r && st.st_dev != up.st_dev && umount2(layer, MNT_DETACH | UMOUNT_NOFOLLOW))
		return sl_err_set(err, SL_ERROR, "cannot unmount '%s': %s", layer,
				  strerror(errno));
	return sl_rm_rf(layer, err);
}


/* "layer-PID-N": a candidate's layer; *pid_out its process. */
static int is_layer_name(const char *name, long *pid_out)
{
	size_t seq;
	char tail;

	return sscanf(name, "layer-%ld-%zu%c", pid_out, &seq, &tail) == 2 && *pid_out > 0;
}

/*
 * 1 when the process that made the layer at path is gone: no process pid,
 * or one that started after the layer was last changed (its pid reused).
 */
static int layer_owner_gone(const char *path, long pid)
{
	struct stat st;

	if (lstat(path, &st))
		return 0;
	return sl_lease_pid_gone(pid, (int64_t)st.st_mtim.tv_sec * 1000 +
				 st.st_mtim.tv_nsec / 1000000);
}

/*
 * dir/stores without store's line and those of stores that are gone, into
 * keep; 1 if store was listed, or the file is missing (a warm base from
 * before sluice noted its stores: no run of this version uses it).
 */
static int stores_left(const char *dir, const char *store, sl_buf *keep)
{
	char *path = sl_path_join(dir, "stores");
	sl_buf have = SL_BUF_INIT;
	int listed = 0;

	if (sl_read_file(&have, path, 1 << 20, NULL)) {
		listed = 1;
		goto done;
	}
	for (char *l = have.buf; *l; ) {
		size_t n = strcspn(l, "\n");
		char end = l[n];

		l[n] = '\0';
		if (!strcmp(l, store))
			listed = 1;
		else if (*l && !access(l, F_OK))
			sl_buf_addf(keep, "%s\n", l);
		l += n + (end == '\n');
	}
done:
	sl_buf_release(&have);
	free(path);
	return listed;
}

/*
 * Remove the warm base at path if no process holds it and it is gc's to
 * remove (which, store: sl_warm_gc); with a store, its line goes and the
 * warm base only once no store that exists is listed.  *removed 1 if gone.
 */
static int gc_warm(const char *path, enum sl_warm_gc_which which, const char *store,
		   int *removed, sl_err *err)
{
	char *lock = sl_path_join(path, "lock"), *stores = sl_path_join(path, "stores");
	sl_buf keep = SL_BUF_INIT, tmp = SL_BUF_INIT;
	int fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC), ret = SL_OK;

	*removed = 0;
	/* in use by a run: keep; no lock file: not ours to judge */
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) ||
	    (which == SL_WARM_GC_STORE && !stores_left(path, store, &keep)))
		goto done;
	if (keep.len) {
		/* other stores use it: only this store's line goes, whole files only */
		sl_buf_addf(&tmp, "%s.%ld", stores, (long)getpid());
		if (sl_write_file(tmp.buf, keep.buf, keep.len, err))
			ret = SL_ERROR;
		else if (rename(tmp.buf, stores))
			ret = sl_err_set(err, SL_ERROR, "cannot write '%s': %s", stores,
					 strerror(errno));
		if (ret)
			unlink(tmp.buf);
		goto done;
	}
	ret = sl_rm_rf(path, err);
	*removed = !ret;
done:
	if (fd >= 0)
		close(fd);
	sl_buf_release(&keep);
	sl_buf_release(&tmp);
	free(lock);
	free(stores);
	return ret;
}

/* Remove the entries of one campaign's scratch root that nobody uses. */
static int gc_dir(const char *dir, enum sl_warm_gc_which which, const char *store,
		  size_t *warm, size_t *layers, sl_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = SL_OK;

	if (!d)
		return SL_OK;
	while (!ret && (de = readdir(d))) {
		char *path;
		long pid;
		int removed;

		if (is_warm_name(de->d_name) && which != SL_WARM_GC_NONE) {
			path = sl_path_join(dir, de->d_name);
			ret = gc_warm(path, which, store, &removed, err);
			*warm += (size_t)removed;
			free(path);
		} else if (is_layer_name(de->d_name, &pid) && pid != (long)getpid()) {
			path = sl_path_join(dir, de->d_name);
			if (layer_owner_gone(path, pid)) {
				ret = sl_warm_layer_remove(path, err);
				*layers += !ret;
			}
			free(path);
		}
	}
	closedir(d);
	return ret;
}

int sl_warm_sweep_layers(const char *root, sl_err *err)
{
	size_t warm = 0, layers = 0;

	return gc_dir(root, SL_WARM_GC_NONE, NULL, &warm, &layers, err);
}

int sl_warm_gc(const char *root, enum sl_warm_gc_which which, const char *store,
	       size_t *warm_out, size_t *layers_out, sl_err *err)
{
	DIR *d;
	struct dirent *de;
	size_t warm = 0, layers = 0;
	int ret;

	/* root itself may be one campaign's, or hold one directory per campaign */
	ret = gc_dir(root, which, store, &warm, &layers, err);
	if (!ret && (d = opendir(root))) {
		while (!ret && (de = readdir(d))) {
			struct stat st;
			char *path;
			long pid;

			if (de->d_name[0] == '.' || is_warm_name(de->d_name) ||
			    is_layer_name(de->d_name, &pid))
				continue;
			path = sl_path_join(root, de->d_name);
			if (!lstat(path, &st) && S_ISDIR(st.st_mode))
				ret = gc_dir(path, which, store, &warm, &layers, err);
			free(path);
		}
		closedir(d);
	}
	if (warm_out)
		*warm_out = warm;
	if (layers_out)
		*layers_out = layers;
	return ret;
}
