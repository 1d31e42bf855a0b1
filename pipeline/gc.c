/*
 * gc.c - sl_gc(): remove what crashed and stopped runs left (gc.h).
 *
 * Reads the store's campaigns and leases, their campaign files (for the
 * scratch roots) and their repositories; writes only by removing: linked
 * worktrees and orphan checkouts under the scratch roots, warm bases and
 * layers, the store's stale candidate branches (one packed-refs rewrite;
 * only those whose commit names the store), ref locks of killed processes,
 * replay files.  The steps, in order: gather the roots and
 * repositories, check every repository for foreign worktrees, clean each
 * repository, sweep each root, then each idle campaign's branches.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2.h>

#include "pipeline/apply/apply.h"
#include "pipeline/apply/warm.h"
#include "pipeline/gc.h"
#include "pipeline/scratch.h"
#include "pipeline/spec.h"
#include "storage/lease.h"
#include "storage/merge.h"
#include "common/buf.h"

/* What one gc works on: roots, repositories and the store's campaigns. */
struct gc {
	const sl_gc_opts *opts;
	sl_gc_result *out;
	sl_strvec roots;            /* scratch roots, each once */
	sl_strvec repos;            /* repositories to clean */
	sl_strvec camp_roots;       /* per campaign: its scratch root, or "" */
	sl_store *st;
	sl_campaign_rec *camps;
	size_t ncamps;
};

/* Send one formatted line to opts->notice, if any. */
static void notify(const sl_gc_opts *opts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void notify(const sl_gc_opts *opts, const char *fmt, ...)
{
	sl_buf line = SL_BUF_INIT;
	va_list ap;

	if (!opts->notice)
		return;
	va_start(ap, fmt);
	sl_buf_vaddf(&line, fmt, ap);
	va_end(ap);
	opts->notice(opts->notice_ctx, line.buf);
	sl_buf_release(&line);
}

static void add_root(sl_strvec *roots, const char *root)
{
	for (size_t i = 0; i < roots->n; i++)
		if (!strcmp(roots->v[i], root))
			return;
	sl_strvec_push(roots, root);
}

/* The scratch root asked for, or every default root. */
static void gather_roots(struct gc *g)
{
	sl_strvec dflt = SL_STRVEC_INIT;

	if (g->opts->scratch) {
		add_root(&g->roots, g->opts->scratch);
		return;
	}
	sl_default_scratch_roots(&dflt);
	for (size_t i = 0; i < dflt.n; i++)
		add_root(&g->roots, dflt.v[i]);
	sl_strvec_release(&dflt);
}

/* Each campaign's repository, and its scratch root when no root was named and its file loads. */
static void gather_campaign(struct gc *g, const sl_campaign_rec *camp)
{
	sl_spec *spec = NULL;
	sl_spec_opts so = { .repository = camp->repo_path };
	sl_err serr = SL_ERR_INIT;

	sl_strvec_push(&g->repos, camp->repo_path);
	if (!g->opts->scratch && !sl_spec_load_ext(&spec, camp->spec_path, &so, &serr) &&
	    spec->scratch) {
		char *r = sl_path_join(spec->scratch, spec->name);

		add_root(&g->roots, r);
		sl_strvec_push(&g->camp_roots, r);
		free(r);
	} else {
		sl_strvec_push(&g->camp_roots, "");
	}
	sl_spec_free(spec);
}

/* The repository asked for, else the store's campaigns (when the store exists). */
static int gather_repos(struct gc *g, sl_err *err)
{
	int ret;

	if (g->opts->repo) {
		sl_strvec_push(&g->repos, g->opts->repo);
		return SL_OK;
	}
	if (access(g->opts->store, F_OK))
		return SL_OK;
	if ((ret = sl_store_open(&g->st, g->opts->store, 0, err)) ||
	    (ret = sl_store_campaign_list(g->st, &g->camps, &g->ncamps, err)))
		return ret;
	for (size_t i = 0; i < g->ncamps; i++)
		gather_campaign(g, &g->camps[i]);
	return SL_OK;
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
 * that does not open is skipped with a notice, or is an error when named.
 */
static int clean_repo(struct gc *g, const char *path, int check_only, sl_err *err)
{
	git_repository *repo = NULL;
	int ret = SL_OK;

	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		if (g->opts->repo)
			return sl_err_set(err, SL_EINPUT, "repository '%s': %s", path,
					  sl_git_error());
		if (!check_only)
			notify(g->opts, "skipping '%s': %s", path, sl_git_error());
		return SL_OK;
	}
	if (check_only) {
		ret = check_foreign(repo, &g->roots, err);
		git_repository_free(repo);
		return ret;
	}
	for (size_t i = 0; i < g->roots.n && !ret; i++) {
		size_t n = 0;

		ret = sl_worktree_cleanup_count(repo, g->roots.v[i], &n, err);
		g->out->worktrees += n;
	}
	git_repository_free(repo);
	return ret;
}

/* Check every repository before removing anything, then clean each. */
static int clean_repos(struct gc *g, sl_err *err)
{
	int ret;

	for (int check_only = 1; check_only >= 0; check_only--)
		for (size_t i = 0; i < g->repos.n; i++)
			if ((ret = clean_repo(g, g->repos.v[i], check_only, err)))
				return ret;
	return SL_OK;
}

/*
 * Orphan checkouts, warm bases and layers under each root.  Warm bases:
 * with the store read, those it used (others' are left alone); else,
 * under a root named with --scratch, every one no run holds.
 */
static int sweep_roots(struct gc *g, sl_err *err)
{
	enum sl_warm_gc_which which = g->st ? SL_WARM_GC_STORE :
		g->opts->scratch ? SL_WARM_GC_ALL : SL_WARM_GC_NONE;
	char *store = g->st ? realpath(g->opts->store, NULL) : NULL;
	int ret = SL_OK;

	for (size_t i = 0; i < g->roots.n && !ret; i++) {
		size_t n = 0, w = 0, l = 0;

		if ((ret = sl_worktree_sweep(g->roots.v[i], &n, err)) ||
		    (ret = sl_warm_gc(g->roots.v[i], which, store ? store : g->opts->store, &w,
				      &l, err)))
			break;
		g->out->worktrees += n;
		g->out->warm += w;
		g->out->layers += l;
	}
	free(store);
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
 * packed-refs.lock of the repository: removed with a notice when a sluice
 * of this host that is gone left it; 1 when another lock stands (git may be
 * writing refs: the branches wait for the next gc), 0 otherwise.
 */
static int packed_lock_blocks(const sl_gc_opts *opts, git_repository *repo, const char *name)
{
	sl_err err = SL_ERR_INIT;
	long pid = 0;

	if (sl_packed_lock_check(repo, &pid, &err)) {
		notify(opts, "campaign '%s': %s; its branches are left alone", name, err.msg);
		return 1;
	}
	if (pid)
		notify(opts, "removed %spacked-refs.lock, left by sluice process %ld (gone)",
		       git_repository_commondir(repo), pid);
	return 0;
}

/* Delete the listed branches, each only at the commit it was listed at, in one rewrite. */
static void drop_branches(struct gc *g, git_repository *repo, const sl_strvec *drop,
			  const git_oid *at)
{
	sl_err derr = SL_ERR_INIT;
	size_t n = 0;

	if (sl_branches_delete_packed(repo, drop->v, at, drop->n, &n, &derr))
		notify(g->opts, "%s", derr.msg);
	g->out->branches += n;
}

/* What stale_branches() gathers: the branches to delete, at their commits, and the others'. */
struct stale {
	const char *tag;            /* this store's trailer tags, one a line (sl_store_tags) */
	const sl_candidate_rec *keep;
	size_t nkeep;
	sl_strvec drop;
	git_oid *at;
	size_t alloc_at;
	size_t others;              /* not made by this store: left alone */
	char *other;                /* the first of them */
};

/* The direct branches under prefix that no kept candidate owns and this store made. */
static int stale_under(git_repository *repo, const char *prefix, struct stale *s, sl_err *err)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	sl_buf glob = SL_BUF_INIT;
	int ret = SL_OK;

	sl_buf_addf(&glob, "refs/heads/%s/*", prefix);
	if (git_reference_iterator_glob_new(&it, repo, glob.buf)) {
		ret = sl_err_set(err, SL_ERROR, "cannot list branches: %s", sl_git_error());
		goto done;
	}
	while (!git_reference_next(&ref, it)) {
		const char *name = git_reference_name(ref) + strlen("refs/heads/");
		const char *rest = name + strlen(prefix) + 1;

		/*
		 * PREFIX/review/KEY are publish's branches, the heads of pull
		 * requests (candidate branches never hold a '/' past PREFIX):
		 * not gc's to remove, nor another store's.
		 */
		if (!strncmp(rest, "review/", strlen("review/")) ||
		    kept_branch(s->keep, s->nkeep, name) ||
		    git_reference_type(ref) != GIT_REFERENCE_DIRECT) {
			;
		} else if (!sl_commit_made_by(repo, git_reference_target(ref), s->tag)) {
			if (!s->others++)
				s->other = sl_xstrdup(name);
		} else {
			SL_ALLOC_GROW(s->at, s->drop.n + 1, s->alloc_at);
			git_oid_cpy(&s->at[s->drop.n], git_reference_target(ref));
			sl_strvec_push(&s->drop, name);
		}
		git_reference_free(ref);
	}
done:
	git_reference_iterator_free(it);
	sl_buf_release(&glob);
	return ret;
}

/*
 * The stale branches of camp under each of prefixes: a branch whose commit
 * does not carry this store's trailer (another store's, the user's, or
 * sluice's from before stores had an id) is never one, and a notice says
 * how many were left alone.
 */
static int stale_branches(struct gc *g, git_repository *repo, const sl_campaign_rec *camp,
			  const sl_strvec *prefixes, struct stale *s, sl_err *err)
{
	int ret = SL_OK;

	for (size_t i = 0; i < prefixes->n && !ret; i++)
		ret = stale_under(repo, prefixes->v[i], s, err);
	if (!ret && s->others)
		notify(g->opts, "campaign '%s': %zu branch%s ('%s'%s) not made by this store "
		       "(another store's, or without its Sluice-Store trailer): left alone",
		       camp->name, s->others, s->others == 1 ? "" : "es", s->other,
		       s->others == 1 ? "" : ", ...");
	return ret;
}

/* Ref locks of killed processes under prefix: no run holds this campaign. */
static void remove_ref_locks(git_repository *repo, const char *prefix)
{
	sl_buf path = SL_BUF_INIT;
	DIR *d;
	struct dirent *de;

	sl_buf_addf(&path, "%srefs/heads/%s", git_repository_commondir(repo), prefix);
	d = opendir(path.buf);
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
	sl_buf_release(&path);
}

/* The replay file a run wrote under the campaign's scratch root, if it has one. */
static void remove_replay(const char *scratch_root)
{
	sl_buf path = SL_BUF_INIT;

	if (!scratch_root)
		return;
	sl_buf_addf(&path, "%s/replay.jsonl", scratch_root);
	unlink(path.buf);
	sl_buf_release(&path);
}

/*
 * *busy = 1 (with a notice) when a live lease says a run is working on camp.
 * A holder that is a run of this host whose process is gone (crashed) holds
 * nothing, as for the next run (sl_lease_reap_local): a notice says so.
 */
static int campaign_busy(struct gc *g, const sl_campaign_rec *camp, int *busy, sl_err *err)
{
	sl_lease_holder *h = NULL;
	size_t nh = 0;
	char host[64] = "";
	int ret;

	*busy = 0;
	if ((ret = sl_lease_holders(g->st, camp->id, sl_wall_ms(), &h, &nh, err)))
		return ret;
	sl_lease_host(host, sizeof(host));
	for (size_t i = 0; i < nh && !*busy; i++) {
		if (sl_lease_owner_gone(h[i].owner, host)) {
			notify(g->opts, "campaign '%s': run %s of this host is gone; the %lld "
			       "target%s it leased %s free", camp->name, h[i].owner,
			       (long long)h[i].targets, h[i].targets == 1 ? "" : "s",
			       h[i].targets == 1 ? "is" : "are");
			continue;
		}
		notify(g->opts, "campaign '%s': a run is working on it (%s); its branches are "
		       "left alone", camp->name, h[i].owner);
		*busy = 1;
	}
	sl_lease_holders_free(h, nh);
	return SL_OK;
}

/*
 * The branch prefixes of camp in this store: the campaign's, and
 * PREFIX-ID8 where the store's runs propose when another store holds a
 * name, for this store and each store merged into it; *tag becomes the
 * store's trailer tags (sl_store_tags).
 */
static int store_prefixes(struct gc *g, const sl_campaign_rec *camp, sl_strvec *prefixes,
			  sl_buf *tag, sl_err *err)
{
	sl_buf own = SL_BUF_INIT;
	int ret;

	if ((ret = sl_store_tags(tag, g->st, camp->id, err)))
		return ret;
	sl_strvec_push(prefixes, camp->branch_prefix);
	for (const char *t = tag->buf, *e; *t; t = *e ? e + 1 : e) {
		e = strchrnul(t, '\n');
		sl_buf_reset(&own);
		sl_buf_addf(&own, "%s-%.8s", camp->branch_prefix, t);
		if (strcmp(prefixes->v[prefixes->n - 1], own.buf))
			sl_strvec_push(prefixes, own.buf);
	}
	sl_buf_release(&own);
	return SL_OK;
}

/* The stale branches, ref locks and replay file of one campaign. */
static int gc_campaign(struct gc *g, const sl_campaign_rec *camp, const char *scratch_root,
		       sl_err *err)
{
	git_repository *repo = NULL;
	sl_candidate_rec *keep = NULL;
	sl_strvec prefixes = SL_STRVEC_INIT;
	sl_buf tag = SL_BUF_INIT;
	struct stale s = { .drop = SL_STRVEC_INIT };
	size_t nkeep = 0;
	int busy = 0, ret;

	if ((ret = campaign_busy(g, camp, &busy, err)) || busy)
		goto done;
	if (git_repository_open_ext(&repo, camp->repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL))
		goto done;          /* clean_repo has warned */
	if (packed_lock_blocks(g->opts, repo, camp->name))
		goto done;
	if ((ret = store_prefixes(g, camp, &prefixes, &tag, err)) ||
	    (ret = sl_store_candidates(g->st, camp->id, SL_C_PASSED, &keep, &nkeep, err)))
		goto done;
	s.tag = tag.buf;
	s.keep = keep;
	s.nkeep = nkeep;
	if ((ret = stale_branches(g, repo, camp, &prefixes, &s, err)))
		goto done;
	drop_branches(g, repo, &s.drop, s.at);
	for (size_t i = 0; i < prefixes.n; i++)
		remove_ref_locks(repo, prefixes.v[i]);
	remove_replay(scratch_root);
done:
	git_repository_free(repo);
	sl_candidate_list_free(keep, nkeep);
	sl_strvec_release(&prefixes);
	sl_buf_release(&tag);
	sl_strvec_release(&s.drop);
	free(s.at);
	free(s.other);
	return ret;
}

/* Every stored campaign's branches, when no repository was named. */
static int gc_campaigns(struct gc *g, sl_err *err)
{
	int ret;

	if (g->opts->repo)
		return SL_OK;
	g->out->campaigns = g->ncamps > 0;
	for (size_t i = 0; i < g->ncamps; i++) {
		const char *root = g->camp_roots.v[i];

		if ((ret = gc_campaign(g, &g->camps[i], *root ? root : NULL, err)))
			return ret;
	}
	return SL_OK;
}

int sl_gc_layers(const sl_campaign_rec *camp, size_t *removed, sl_err *err)
{
	sl_spec *spec = NULL;
	sl_spec_opts so = { .repository = camp->repo_path };
	sl_err serr = SL_ERR_INIT;
	char *root;
	int ret;

	*removed = 0;
	if (sl_spec_load_ext(&spec, camp->spec_path, &so, &serr))
		return SL_OK;
	root = sl_scratch_root(spec);
	ret = sl_warm_gc(root, SL_WARM_GC_NONE, NULL, NULL, removed, err);
	free(root);
	sl_spec_free(spec);
	return ret;
}

int sl_gc(sl_gc_result *out, const sl_gc_opts *opts, sl_err *err)
{
	struct gc g = { .opts = opts, .out = out, .roots = SL_STRVEC_INIT,
			.repos = SL_STRVEC_INIT, .camp_roots = SL_STRVEC_INIT };
	int ret;

	memset(out, 0, sizeof(*out));
	gather_roots(&g);
	if (!(ret = gather_repos(&g, err)) && !(ret = clean_repos(&g, err)) &&
	    !(ret = sweep_roots(&g, err)))
		ret = gc_campaigns(&g, err);
	sl_campaign_list_free(g.camps, g.ncamps);
	sl_store_free(g.st);
	sl_strvec_release(&g.roots);
	sl_strvec_release(&g.repos);
	sl_strvec_release(&g.camp_roots);
	return ret;
}
