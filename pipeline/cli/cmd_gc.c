/*
 * cmd_gc.c - `sluice gc`: remove the scratch worktrees crashed runs left.
 *
 *   sluice gc [--scratch DIR] [--repo PATH] [--store PATH]
 *
 * Repositories: the one named by --repo, else every campaign's repository
 * in the store.  Scratch roots: --scratch DIR, else every default root
 * ($TMPDIR, /dev/shm and /tmp, each /sluice-UID: see sl_default_scratch_root) and the `scratch:` root of each stored campaign
 * whose campaign file still loads.  For each repository, every linked
 * worktree under a root is removed with its admin files (sl_worktree_cleanup:
 * worktrees of a sluice process still running are kept); then checkouts
 * under a root that no repository knows any more and whose process is gone
 * are deleted (sl_worktree_sweep).  Never opens a worktree as a repository.
 * A linked worktree under a root that sluice did not make (its name does not
 * start with "sl-": the user's own `git worktree add`) makes gc refuse, exit
 * 2, before anything is removed.  Prints "removed N worktrees".
 *
 * Then, for each campaign of the store that no run is working on (no live
 * lease): branches under its prefix that are not the branch of a proposed
 * or accepted candidate (a crashed run's, a stopped one's, a rejected
 * candidate's, a baseline's), lock files a killed process left under that
 * prefix, and the replay file a run wrote under the campaign's scratch
 * root.  Nothing else.  Prints "removed N branches".  The branches go in
 * one rewrite of packed-refs under one lock (sl_branches_delete_packed),
 * each only if it still points where it did when listed.  A packed-refs.lock
 * that a sluice of this host left when it crashed is removed, with a
 * message; any other lock (git may be writing refs) is left, gc says so
 * and what to do, and that repository's branches wait for the next gc.
 *
 * Under each root also the warm bases no running sluice holds and the
 * candidate layers of processes that are gone (sl_warm_gc); when there were
 * any, prints "removed N warm bases, M layers".
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <git2.h>

#include "pipeline/apply/apply.h"
#include "pipeline/apply/warm.h"
#include "pipeline/cli/cmd.h"
#include "storage/lease.h"
#include "pipeline/run.h"
#include "pipeline/spec.h"
#include "common/util.h"

static void add_root(sl_strvec *roots, const char *root)
{
	for (size_t i = 0; i < roots->n; i++)
		if (!strcmp(roots->v[i], root))
			return;
	sl_strvec_push(roots, root);
}

/* SL_EINPUT if a worktree of repo that sluice did not make lies under a root. */
static int check_foreign(git_repository *repo, const sl_strvec *roots, sl_err *err)
{
	git_strarray names = { 0 };
	int ret = SL_OK;

	if (git_worktree_list(&names, repo))
		return sl_err_set(err, SL_ERROR, "cannot list worktrees: %s", sl_git_error());
	for (size_t i = 0; i < names.count && !ret; i++) {
		git_worktree *wt = NULL;
		char *path = NULL;

		if (!strncmp(names.strings[i], "sl-", 3) ||
		    git_worktree_lookup(&wt, repo, names.strings[i]))
			continue;
		if (!(path = realpath(git_worktree_path(wt), NULL)))
			path = sl_xstrdup(git_worktree_path(wt));
		for (size_t k = 0; k < roots->n && !ret; k++) {
			char *root = realpath(roots->v[k], NULL);

			if (root && sl_path_is_under(path, root))
				ret = sl_err_set(err, SL_EINPUT, "worktree '%s' at '%s' is under the "
						 "scratch root '%s' but was not made by sluice; "
						 "refusing to remove it", names.strings[i], path,
						 roots->v[k]);
			free(root);
		}
		free(path);
		git_worktree_free(wt);
	}
	git_strarray_dispose(&names);
	return ret;
}

/*
 * Clean one repository; check_only just runs check_foreign().  A repository
 * that does not open is skipped with a warning, or is an error when named.
 */
static int clean_repo(const char *path, const sl_strvec *roots, int named, int check_only,
		      size_t *removed, sl_err *err)
{
	git_repository *repo = NULL;
	int ret = SL_OK;

	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		if (named)
			return sl_err_set(err, SL_EINPUT, "repository '%s': %s", path,
					  sl_git_error());
		if (!check_only)
			fprintf(stderr, "sluice gc: skipping '%s': %s\n", path, sl_git_error());
		return SL_OK;
	}
	if (check_only) {
		ret = check_foreign(repo, roots, err);
		git_repository_free(repo);
		return ret;
	}
	for (size_t i = 0; i < roots->n && !ret; i++) {
		size_t n = 0;

		ret = sl_worktree_cleanup_count(repo, roots->v[i], &n, err);
		*removed += n;
	}
	git_repository_free(repo);
	return ret;
}

/* 1 if branch (short name) is one a proposed or accepted candidate keeps. */
static int kept_branch(const sl_candidate_rec *keep, size_t n, const char *branch)
{
	for (size_t i = 0; i < n; i++)
		if (keep[i].branch && !strcmp(keep[i].branch, branch) &&
		    keep[i].decision != SL_D_REJECT)
			return 1;
	return 0;
}

/*
 * packed-refs.lock of the repository: removed with a message when a sluice
 * of this host that is gone left it; 1 when another lock stands (git may be
 * writing refs: the branches wait for the next gc), 0 otherwise.
 */
static int packed_lock_blocks(git_repository *repo, const char *name)
{
	sl_err err = SL_ERR_INIT;
	long pid = 0;

	if (sl_packed_lock_check(repo, &pid, &err)) {
		fprintf(stderr, "sluice gc: campaign '%s': %s; its branches are left alone\n",
			name, err.msg);
		return 1;
	}
	if (pid)
		fprintf(stderr, "sluice gc: removed %spacked-refs.lock, left by sluice process %ld "
			"(gone)\n", git_repository_commondir(repo), pid);
	return 0;
}

/* Delete the listed branches, each only at the commit it was listed at, in one rewrite. */
static void drop_branches(git_repository *repo, const sl_strvec *drop, const git_oid *at,
			  size_t *removed)
{
	sl_err derr = SL_ERR_INIT;
	size_t n = 0;

	if (sl_branches_delete_packed(repo, drop->v, at, drop->n, &n, &derr))
		fprintf(stderr, "sluice gc: %s\n", derr.msg);
	*removed += n;
}

/* The stale branches, ref locks and replay file of one campaign; *removed counts branches. */
static int gc_campaign(sl_store *st, const sl_campaign_rec *camp, const char *scratch_root,
		       size_t *removed, sl_err *err)
{
	git_repository *repo = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	sl_candidate_rec *keep = NULL;
	sl_lease_holder *h = NULL;
	sl_strvec drop = SL_STRVEC_INIT;
	git_oid *at = NULL;
	size_t nkeep = 0, nh = 0, aat = 0;
	sl_buf glob = SL_BUF_INIT, path = SL_BUF_INIT;
	int ret;

	if ((ret = sl_lease_holders(st, camp->id, sl_wall_ms(), &h, &nh, err)))
		goto done;
	if (nh) {
		fprintf(stderr, "sluice gc: campaign '%s': a run is working on it (%s); its "
			"branches are left alone\n", camp->name, h[0].owner);
		goto done;
	}
	if (git_repository_open_ext(&repo, camp->repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL))
		goto done;          /* clean_repo has warned */
	if (packed_lock_blocks(repo, camp->name))
		goto done;
	if ((ret = sl_store_candidates(st, camp->id, SL_C_PASSED, &keep, &nkeep, err)))
		goto done;
	sl_buf_addf(&glob, "refs/heads/%s/*", camp->branch_prefix);
	if (git_reference_iterator_glob_new(&it, repo, glob.buf)) {
		ret = sl_err_set(err, SL_ERROR, "cannot list branches: %s", sl_git_error());
		goto done;
	}
	while (!git_reference_next(&ref, it)) {
		const char *name = git_reference_name(ref) + strlen("refs/heads/");

		if (!kept_branch(keep, nkeep, name) &&
		    git_reference_type(ref) == GIT_REFERENCE_DIRECT) {
			SL_ALLOC_GROW(at, drop.n + 1, aat);
			git_oid_cpy(&at[drop.n], git_reference_target(ref));
			sl_strvec_push(&drop, name);
		}
		git_reference_free(ref);
	}
	drop_branches(repo, &drop, at, removed);
	/* ref locks of killed processes: no run holds this campaign */
	sl_buf_addf(&path, "%srefs/heads/%s", git_repository_commondir(repo), camp->branch_prefix);
	{
		DIR *d = opendir(path.buf);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			size_t len = strlen(de->d_name);
			sl_buf lock = SL_BUF_INIT;

			if (len > 5 && !strcmp(de->d_name + len - 5, ".lock")) {
				sl_buf_addf(&lock, "%s/%s", path.buf, de->d_name);
				unlink(lock.buf);
			}
			sl_buf_release(&lock);
		}
		if (d)
			closedir(d);
	}
	if (scratch_root) {
		sl_buf_reset(&path);
		sl_buf_addf(&path, "%s/replay.jsonl", scratch_root);
		unlink(path.buf);
	}
done:
	git_reference_iterator_free(it);
	git_repository_free(repo);
	sl_candidate_list_free(keep, nkeep);
	sl_lease_holders_free(h, nh);
	sl_strvec_release(&drop);
	free(at);
	sl_buf_release(&glob);
	sl_buf_release(&path);
	return ret;
}

int cmd_gc(int argc, char **argv)
{
	const char *scratch = NULL, *repo = NULL, *store_opt = NULL;
	sl_strvec roots = SL_STRVEC_INIT, repos = SL_STRVEC_INIT;
	sl_campaign_rec *camps = NULL;
	size_t ncamps = 0, removed = 0, swept = 0, branches = 0, warm = 0, layers = 0;
	sl_strvec camp_roots = SL_STRVEC_INIT;
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;
	char *store = NULL;
	int ret = SL_EXIT_INTERNAL;

	for (int i = 1; i < argc; i++) {
		const char **slot = !strcmp(argv[i], "--scratch") ? &scratch :
			!strcmp(argv[i], "--repo") ? &repo : !strcmp(argv[i], "--store") ? &store_opt :
			NULL;

		if (!slot)
			return sl_cmd_usage("gc", "unknown argument '%s'", argv[i]);
		if (i + 1 >= argc || !*argv[i + 1])
			return sl_cmd_usage("gc", "option '%s' needs a value", argv[i]);
		*slot = argv[++i];
	}
	if (scratch) {
		struct stat sb;

		if (!stat(scratch, &sb) && !S_ISDIR(sb.st_mode))
			return sl_cmd_usage("gc", "--scratch '%s' is not a directory", scratch);
	}
	if (scratch) {
		add_root(&roots, scratch);
	} else {
		sl_strvec dflt = SL_STRVEC_INIT;

		sl_default_scratch_roots(&dflt);
		for (size_t i = 0; i < dflt.n; i++)
			add_root(&roots, dflt.v[i]);
		sl_strvec_release(&dflt);
	}
	store = sl_default_store_path(store_opt);
	if (repo) {
		sl_strvec_push(&repos, repo);
	} else if (access(store, F_OK) == 0) {
		if (sl_store_open(&st, store, 0, &err) ||
		    sl_store_campaign_list(st, &camps, &ncamps, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		for (size_t i = 0; i < ncamps; i++) {
			sl_spec *spec = NULL;
			sl_err serr = SL_ERR_INIT;

			sl_strvec_push(&repos, camps[i].repo_path);
			if (!scratch && !sl_spec_load(&spec, camps[i].spec_path, &serr) && spec->scratch) {
				char *r = sl_path_join(spec->scratch, spec->name);

				add_root(&roots, r);
				sl_strvec_push(&camp_roots, r);
				free(r);
			} else {
				sl_strvec_push(&camp_roots, "");
			}
			sl_spec_free(spec);
		}
	} else if (!scratch) {
		ret = sl_cmd_usage("gc", "no store at '%s': name the repository with --repo or the "
				   "root with --scratch", store);
		goto done;
	}
	/* check every repository before removing anything */
	for (int check_only = 1; check_only >= 0; check_only--)
		for (size_t i = 0; i < repos.n; i++)
			if (clean_repo(repos.v[i], &roots, !!repo, check_only, &removed, &err)) {
				ret = sl_cmd_fail(&err);
				goto done;
			}
	for (size_t i = 0; i < roots.n; i++) {
		size_t n = 0;

		size_t w = 0, l = 0;

		if (sl_worktree_sweep(roots.v[i], &n, &err) || sl_warm_gc(roots.v[i], &w, &l, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		swept += n;
		warm += w;
		layers += l;
	}
	for (size_t i = 0; i < ncamps; i++)
		if (!repo && gc_campaign(st, &camps[i], *camp_roots.v[i] ? camp_roots.v[i] : NULL,
					 &branches, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
	printf("removed %zu worktree%s\n", removed + swept, removed + swept == 1 ? "" : "s");
	if (warm || layers)
		printf("removed %zu warm base%s, %zu layer%s\n", warm, warm == 1 ? "" : "s",
		       layers, layers == 1 ? "" : "s");
	if (!repo && ncamps)
		printf("removed %zu branch%s\n", branches, branches == 1 ? "" : "es");
	ret = SL_EXIT_OK;
done:
	sl_campaign_list_free(camps, ncamps);
	sl_store_free(st);
	free(store);
	sl_strvec_release(&roots);
	sl_strvec_release(&repos);
	sl_strvec_release(&camp_roots);
	return ret;
}
