/*
 * worktree.c - scratch worktrees for gates, and the branches sluice deletes.
 *
 * Worktrees: only the repository sluice opened (the user's) is ever used;
 * a worktree's directory is created by git_worktree_add and later removed
 * with sl_rm_rf, and its admin files (in the user's .git/worktrees) are
 * pruned by name.  Nothing here opens a worktree as a repository.
 * What a crashed run left is found by name ("sl-PID-N", "sl-base-PID"):
 * a worktree whose PID is no longer running is removed with its admin
 * files (sl_worktree_cleanup, sl_worktree_sweep).  Also here: the
 * no-reflog config for the repository handle and sl_branch_delete.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2/sys/repository.h>

#include "pipeline/apply/apply.h"
#include "common/util.h"

/* ---- worktrees ------------------------------------------------------------- */

struct sl_worktree {
	git_repository *repo;       /* borrowed */
	char *name, *path;
};

static void prune_admin(git_repository *repo, const char *name)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;

	/* never GIT_WORKTREE_PRUNE_WORKING_TREE: the directory is removed by sl_rm_rf */
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
	if (!git_worktree_lookup(&wt, repo, name)) {
		git_worktree_prune(wt, &po);
		git_worktree_free(wt);
	}
}

/*
 * The absolute, normalised form of a path that may not exist yet: the
 * longest existing prefix resolved by realpath, the rest appended.
 */
static char *resolve_loose(const char *path)
{
	char *cwd = NULL, *abs, *p, *res = NULL;
	sl_buf b = SL_BUF_INIT;
	size_t cut;

	if (path[0] != '/') {
		if (!(cwd = getcwd(NULL, 0)))
			return NULL;
		abs = sl_path_join(cwd, path);
		free(cwd);
	} else {
		abs = sl_xstrdup(path);
	}
	p = sl_xstrdup(abs);
	cut = strlen(p);
	for (;;) {
		if ((res = realpath(p, NULL)))
			break;
		while (cut > 0 && p[cut - 1] != '/')
			cut--;
		if (cut <= 1) {
			res = sl_xstrdup("/");
			cut = 1;
			break;
		}
		p[--cut] = '\0';
	}
	sl_buf_adds(&b, res);
	if (abs[cut])
		sl_buf_addf(&b, "%s%s", b.len && b.buf[b.len - 1] == '/' ? "" : "/",
			    abs[cut] == '/' ? abs + cut + 1 : abs + cut);
	free(res);
	free(p);
	free(abs);
	return sl_buf_detach(&b, NULL);
}

int sl_worktree_root_check(git_repository *repo, const char *root, sl_err *err)
{
	const char *dirs[2] = { git_repository_workdir(repo), git_repository_path(repo) };
	char *r = resolve_loose(root);
	int ret = SL_OK;

	if (!r)
		return sl_err_set(err, SL_ERROR, "cannot resolve '%s': %s", root, strerror(errno));
	for (int i = 0; i < 2 && !ret; i++) {
		char *d;

		if (!dirs[i])
			continue;
		d = resolve_loose(dirs[i]);
		if (d && sl_path_is_under(r, d))
			ret = sl_err_set(err, SL_EINPUT, "scratch root '%s' is inside the repository "
					 "'%s'; choose a directory outside it", root, d);
		free(d);
	}
	free(r);
	return ret;
}

int sl_worktree_add(sl_worktree **out, git_repository *repo, const char *root,
		    const char *name, const char *branch, const git_oid *commit, sl_err *err)
{
	git_worktree_add_options opts;
	git_commit *c = NULL;
	git_reference *ref = NULL;
	git_worktree *gwt = NULL;
	sl_worktree *wt = NULL;
	int ret = SL_ERROR;

	*out = NULL;
	if ((ret = sl_worktree_root_check(repo, root, err)))
		return ret;
	ret = SL_ERROR;
	wt = sl_xcalloc(1, sizeof(*wt));
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

int sl_no_reflog_config(int *fd_out, char **path_out, sl_err *err)
{
	static const char text[] = "[core]\n\tlogAllRefUpdates = false\n";
	int fd = memfd_create("sluice-no-reflog", MFD_CLOEXEC);
	sl_buf b = SL_BUF_INIT;

	*fd_out = -1;
	*path_out = NULL;
	if (fd < 0 || sl_write_all(fd, text, sizeof(text) - 1)) {
		if (fd >= 0)
			close(fd);
		return sl_err_set(err, SL_ERROR, "cannot make a configuration file: %s",
				  strerror(errno));
	}
	sl_buf_addf(&b, "/proc/self/fd/%d", fd);
	*fd_out = fd;
	*path_out = sl_buf_detach(&b, NULL);
	return SL_OK;
}

int sl_repo_no_reflog(git_repository *repo, const char *cfg_path, sl_err *err)
{
	git_config *cfg = NULL;
	char *local = sl_path_join(git_repository_commondir(repo), "config");
	int ret = SL_ERROR;

	if (git_config_new(&cfg) ||
	    git_config_add_file_ondisk(cfg, local, GIT_CONFIG_LEVEL_LOCAL, repo, 0) ||
	    git_config_add_file_ondisk(cfg, cfg_path, GIT_CONFIG_LEVEL_APP, repo, 0) ||
	    git_repository_set_config(repo, cfg)) {
		sl_err_set(err, SL_ERROR, "cannot read the configuration of '%s': %s",
			   git_repository_commondir(repo), sl_git_error());
		goto done;
	}
	ret = SL_OK;
done:
	git_config_free(cfg);
	free(local);
	return ret;
}

/* The PID in a name "sl-PID-N" or "sl-base-PID" (a warm base), or 0. */
static long name_pid(const char *name)
{
	const char *s = name + 3;
	char *end;
	long pid;
	int base;

	if (strncmp(name, "sl-", 3))
		return 0;
	base = !strncmp(s, "base-", 5);
	if (base)
		s += 5;
	if (!isdigit((unsigned char)*s))
		return 0;
	pid = strtol(s, &end, 10);
	if (pid <= 0 || (base ? *end != '\0' : *end != '-' || !isdigit((unsigned char)end[1])))
		return 0;
	return pid;
}

/* A worktree of another sluice process that is still running. */
static int held_by_live_process(const char *name)
{
	long pid = name_pid(name);

	if (!pid || pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/*
 * A worktree whose admin directory a killed process left without its
 * files (HEAD.lock, no gitdir): libgit2 cannot open it, yet it keeps its
 * branch "checked out".  Remove the admin directory, and the checkout of
 * that name under the root.
 */
static void remove_half_made(git_repository *repo, const char *root)
{
	sl_buf admin = SL_BUF_INIT, path = SL_BUF_INIT;
	DIR *d;
	struct dirent *de;

	sl_buf_addf(&admin, "%sworktrees", git_repository_commondir(repo));
	if (!(d = opendir(admin.buf))) {
		sl_buf_release(&admin);
		return;
	}
	while ((de = readdir(d))) {
		git_worktree *wt = NULL;

		if (!name_pid(de->d_name) || held_by_live_process(de->d_name))
			continue;
		if (!git_worktree_lookup(&wt, repo, de->d_name)) {
			git_worktree_free(wt);       /* whole: the caller's loop removes it */
			continue;
		}
		/* another run may be sweeping it too: errors do not matter */
		sl_buf_reset(&path);
		sl_buf_addf(&path, "%s/%s", admin.buf, de->d_name);
		sl_rm_rf(path.buf, NULL);
		sl_buf_reset(&path);
		sl_buf_addf(&path, "%s/%s", root, de->d_name);
		sl_rm_rf(path.buf, NULL);
	}
	closedir(d);
	sl_buf_release(&admin);
	sl_buf_release(&path);
}

int sl_worktree_cleanup_count(git_repository *repo, const char *root, size_t *removed_out,
			      sl_err *err)
{
	git_strarray names = { 0 };
	char *rroot = resolve_loose(root);
	int ret = SL_OK;

	if (removed_out)
		*removed_out = 0;
	remove_half_made(repo, root);
	if (git_worktree_list(&names, repo)) {
		free(rroot);
		return sl_err_set(err, SL_ERROR, "cannot list worktrees: %s", sl_git_error());
	}
	for (size_t i = 0; i < names.count; i++) {
		git_worktree *wt = NULL;
		char *path = NULL, *rpath = NULL;

		/* only sluice's own worktrees: never one the user made under the root */
		if (strncmp(names.strings[i], "sl-", 3) ||
		    git_worktree_lookup(&wt, repo, names.strings[i]))
			continue;
		if (git_worktree_path(wt))
			path = sl_xstrdup(git_worktree_path(wt));
		git_worktree_free(wt);
		if (path)
			rpath = resolve_loose(path);
		if (path && (sl_path_is_under(path, root) ||
			     (rroot && rpath && sl_path_is_under(rpath, rroot))) &&
		    !held_by_live_process(names.strings[i])) {
			if (sl_rm_rf(path, err))
				ret = SL_ERROR;
			prune_admin(repo, names.strings[i]);
			if (removed_out)
				(*removed_out)++;
		}
		free(rpath);
		free(path);
	}
	git_strarray_dispose(&names);
	free(rroot);
	return ret;
}

int sl_worktree_cleanup(git_repository *repo, const char *root, sl_err *err)
{
	return sl_worktree_cleanup_count(repo, root, NULL, err);
}

static int sweep_dir(const char *dir, int depth, size_t *removed, sl_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = SL_OK;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? SL_OK :
			sl_err_set(err, SL_ERROR, "cannot read '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char *p;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = sl_path_join(dir, de->d_name);
		if (lstat(p, &st) || !S_ISDIR(st.st_mode)) {
			free(p);
			continue;
		}
		if (name_pid(de->d_name)) {
			char *gitfile = sl_path_join(p, ".git");
			struct stat gs;

			/* only checkouts we made: a "sl-PID-N" directory of a dead process */
			if (!held_by_live_process(de->d_name) && !lstat(gitfile, &gs)) {
				if (sl_rm_rf(p, err))
					ret = SL_ERROR;
				else
					(*removed)++;
			}
			free(gitfile);
		} else if (depth < 1) {
			if (sweep_dir(p, depth + 1, removed, err))
				ret = SL_ERROR;
		}
		free(p);
	}
	closedir(d);
	return ret;
}

int sl_worktree_sweep(const char *root, size_t *removed_out, sl_err *err)
{
	size_t n = 0;
	int ret = sweep_dir(root, 0, &n, err);

	if (removed_out)
		*removed_out = n;
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
