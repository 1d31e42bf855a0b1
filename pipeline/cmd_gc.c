/*
 * cmd_gc.c - `sluice gc`: remove the scratch worktrees crashed runs left.
 *
 *   sluice gc [--scratch DIR] [--repo PATH] [--store PATH]
 *
 * Repositories: the one named by --repo, else every campaign's repository
 * in the store.  Scratch roots: --scratch DIR, else the default root
 * ($TMPDIR/sluice-UID) and the `scratch:` root of each stored campaign
 * whose campaign file still loads.  For each repository, every linked
 * worktree under a root is removed with its admin files (sl_worktree_cleanup:
 * worktrees of a sluice process still running are kept); then checkouts
 * under a root that no repository knows any more and whose process is gone
 * are deleted (sl_worktree_sweep).  Never opens a worktree as a repository.
 * Prints "removed N worktrees".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2.h>

#include "apply.h"
#include "cmd.h"
#include "run.h"
#include "spec.h"
#include "util.h"

static void add_root(sl_strvec *roots, const char *root)
{
	for (size_t i = 0; i < roots->n; i++)
		if (!strcmp(roots->v[i], root))
			return;
	sl_strvec_push(roots, root);
}

static int clean_repo(const char *path, const sl_strvec *roots, size_t *removed, sl_err *err)
{
	git_repository *repo = NULL;
	int ret = SL_OK;

	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		fprintf(stderr, "sluice gc: skipping '%s': %s\n", path, sl_git_error());
		return SL_OK;
	}
	for (size_t i = 0; i < roots->n && !ret; i++) {
		size_t n = 0;

		ret = sl_worktree_cleanup_count(repo, roots->v[i], &n, err);
		*removed += n;
	}
	git_repository_free(repo);
	return ret;
}

int cmd_gc(int argc, char **argv)
{
	const char *scratch = NULL, *repo = NULL, *store_opt = NULL;
	sl_strvec roots = SL_STRVEC_INIT, repos = SL_STRVEC_INIT;
	sl_campaign_rec *camps = NULL;
	size_t ncamps = 0, removed = 0, swept = 0;
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
		if (i + 1 >= argc)
			return sl_cmd_usage("gc", "option '%s' needs a value", argv[i]);
		*slot = argv[++i];
	}
	if (scratch) {
		add_root(&roots, scratch);
	} else {
		sl_buf b = SL_BUF_INIT;

		sl_buf_addf(&b, "%s/sluice-%ld", sl_getenv_or("TMPDIR", "/tmp"), (long)getuid());
		add_root(&roots, b.buf);
		sl_buf_release(&b);
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
				free(r);
			}
			sl_spec_free(spec);
		}
	} else if (!scratch) {
		ret = sl_cmd_usage("gc", "no store at '%s': name the repository with --repo or the "
				   "root with --scratch", store);
		goto done;
	}
	for (size_t i = 0; i < repos.n; i++)
		if (clean_repo(repos.v[i], &roots, &removed, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
	for (size_t i = 0; i < roots.n; i++) {
		size_t n = 0;

		if (sl_worktree_sweep(roots.v[i], &n, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		swept += n;
	}
	printf("removed %zu worktree%s\n", removed + swept, removed + swept == 1 ? "" : "s");
	ret = SL_EXIT_OK;
done:
	sl_campaign_list_free(camps, ncamps);
	sl_store_free(st);
	free(store);
	sl_strvec_release(&roots);
	sl_strvec_release(&repos);
	return ret;
}
