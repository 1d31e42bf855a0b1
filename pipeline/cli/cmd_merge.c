/*
 * cmd_merge.c - `sluice merge`: fold shard stores into one store
 * (storage/merge.h) and make the proposed candidates' branches in the
 * repository from the shards' bundles (pipeline/review/bundle.h).
 *
 * Order: open every input, check them all (a refusal writes nothing), open
 * the repository and read every bundle's objects (a bad bundle writes no
 * store), then merge each input into the output store, then write the
 * branches.  Reads the inputs and bundles; writes the output store, objects
 * and branches under the campaigns' prefixes in the repository.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/run.h"
#include "pipeline/review/bundle.h"
#include "storage/merge.h"
#include "common/util.h"

struct merge_opts {
	const char *store, *repo;
	sl_strvec bundles;
};

/* What merge_main holds; released by merge_release. */
typedef struct merge_run {
	sl_store **in, *out;
	size_t nin;
	char *out_path, *repo_path;
	git_repository *repo;
} merge_run;

static void merge_release(merge_run *m)
{
	for (size_t i = 0; i < m->nin; i++)
		sl_store_free(m->in[i]);
	free(m->in);
	sl_store_free(m->out);
	free(m->out_path);
	free(m->repo_path);
	git_repository_free(m->repo);
}

/* Open the inputs and, if it exists, the output; check they can be merged. */
static int open_and_check(merge_run *m, const struct merge_opts *o, const sl_opt_args *args,
			  sl_err *err)
{
	m->out_path = sl_default_store_path(o->store);
	m->in = sl_xcalloc((size_t)args->n, sizeof(*m->in));
	for (int i = 0; i < args->n; i++) {
		if (access(args->v[i], F_OK))
			return sl_err_set(err, SL_EINPUT, "no store at '%s'", args->v[i]);
		if (sl_store_open(&m->in[m->nin], args->v[i], 0, err))
			return err->code;
		m->nin++;
	}
	if (!access(m->out_path, F_OK) && sl_store_open(&m->out, m->out_path, 0, err))
		return err->code;
	return sl_merge_check(m->out, m->in, m->nin, err);
}

/*
 * The repository the branches go to: --repo, else the one the first
 * input's first campaign recorded; opened before anything is written.
 */
static int open_repo(merge_run *m, const struct merge_opts *o, sl_err *err)
{
	sl_campaign_rec *all = NULL;
	size_t n = 0;
	int ret;

	if (o->repo) {
		if (!(m->repo_path = realpath(o->repo, NULL)))
			return sl_err_set(err, SL_EINPUT, "--repo '%s': no such directory", o->repo);
		return sl_cmd_open_repo(&m->repo, m->repo_path, err);
	}
	if ((ret = sl_store_campaign_list(m->in[0], &all, &n, err)))
		return ret;
	if (n && (ret = sl_cmd_open_repo(&m->repo, all[0].repo_path, err)))
		sl_err_prefix(err, "the shard's ");
	sl_campaign_list_free(all, n);
	if (ret && err->code == SL_EINPUT) {
		size_t len = strlen(err->msg);

		snprintf(err->msg + len, sizeof(err->msg) - len, "; pass --repo");
	}
	return ret;
}

/* Each campaign's proposed branches, from the objects now in the repository. */
static int write_branches(merge_run *m, sl_err *err)
{
	sl_campaign_rec *all = NULL;
	size_t n = 0;
	int ret;

	if ((ret = sl_store_campaign_list(m->out, &all, &n, err)))
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		sl_bundle_branches_counts bc;

		if ((ret = sl_bundle_branches(m->out, &all[i], m->repo, &bc, err)))
			break;
		printf("%s: branches: %zu made, %zu already there, %zu at another commit (left), "
		       "%zu not in any bundle\n", all[i].name, bc.made, bc.present, bc.other,
		       bc.missing);
	}
	sl_campaign_list_free(all, n);
	return ret;
}

static int merge_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct merge_opts *o = opts;
	sl_merge_opts mo = SL_MERGE_OPTS_INIT;
	sl_merge_counts mc = { 0 };
	merge_run m = { 0 };
	sl_err err = SL_ERR_INIT;
	size_t refs = 0, nrefs;
	int ret;

	if (!args->n)
		return sl_cmd_usage(self, "expected the shard stores to merge");
	if (open_and_check(&m, o, args, &err) || open_repo(&m, o, &err))
		goto fail;
	if (o->bundles.n && !m.repo) {
		sl_err_set(&err, SL_EINPUT, "the stores name no repository for the bundles; pass "
			   "--repo");
		goto fail;
	}
	for (size_t i = 0; i < o->bundles.n; i++) {
		if (sl_bundle_read(m.repo, o->bundles.v[i], &nrefs, &err))
			goto fail;
		refs += nrefs;
	}
	if (!m.out && sl_store_open(&m.out, m.out_path, 1, &err))
		goto fail;
	mo.repo_path = m.repo_path;
	for (size_t i = 0; i < m.nin; i++)
		if (sl_store_merge(m.out, m.in[i], &mo, &mc, &err))
			goto fail;
	printf("merged %zu store%s into %s: %zu targets copied, %zu replaced, %zu already "
	       "there; %zu branches in %zu bundle%s\n", m.nin, m.nin == 1 ? "" : "s", m.out_path,
	       mc.copied, mc.replaced, mc.kept, refs, o->bundles.n,
	       o->bundles.n == 1 ? "" : "s");
	if (m.repo && write_branches(&m, &err))
		goto fail;
	ret = SL_EXIT_OK;
	goto done;
fail:
	ret = sl_cmd_fail(&err);
done:
	merge_release(&m);
	return ret;
}

static const sl_option merge_options[] = {
	SL_OPT_STRING_F("store", 0, "PATH", "the store to merge into (made if missing)",
			"$SLUICE_STORE, else $XDG_DATA_HOME/sluice/sluice.db", struct merge_opts,
			store, SL_OPTF_FILE),
	CMD_OPT_REPO(struct merge_opts, "make the branches in this repository, and record it as "
		     "the merged campaigns' (default: the one the first shard recorded)"),
	SL_OPT_LIST("bundle", 0, "FILE", "read a shard's bundle (`sluice run --bundle`); once "
		    "per bundle", struct merge_opts, bundles),
	SL_OPT_END(),
};

const sl_command cmd_merge = {
	.name = "merge",
	.summary = "fold shard stores into one store, with their branches",
	.usage = "usage: sluice merge STORE... [--store PATH] [--bundle FILE]... [--repo PATH]\n",
	.about = "Copy every campaign of each STORE (the stores of `sluice run --shard K/N`)\n"
		"into the store --store names: targets with every attempt, reply, candidate,\n"
		"gate run, decision and publication under new ids, the runs, baselines and\n"
		"verdict cache.  Then read each bundle's objects into the repository and\n"
		"point every proposed candidate's branch at its commit (a branch already\n"
		"at another commit is left).  Merging again copies only what changed in a\n"
		"STORE since: nothing is ever copied twice.\n",
	.options = merge_options,
	.notes = "Campaigns are matched by name; a STORE whose campaign of that name has\n"
		"another definition (gates, rules, prompt, model), base commit or branch\n"
		"prefix, or a shard of another partition, is refused with exit status 2\n"
		"and nothing is written; so is a --store that holds a shard.\n",
	.opts_size = sizeof(struct merge_opts),
	.fn = merge_main,
};
