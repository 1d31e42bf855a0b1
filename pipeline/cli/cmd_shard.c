/*
 * cmd_shard.c - `sluice shard-plan` (how many targets each of N shards
 * would get) and what the other commands say of shards: the line `status`
 * prints for a shard's store, and the bundle `run --bundle` and `export
 * --bundle` write (README "Running on many machines").
 *
 * shard-plan reads the campaign file and the repository, scopes the base
 * and prints; it writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/campaign.h"
#include "pipeline/run.h"
#include "pipeline/review/bundle.h"
#include "storage/merge.h"
#include "common/util.h"

int sl_cmd_shard_status(sl_buf *out, int json, sl_store *st, const sl_campaign_rec *camp,
			sl_err *err)
{
	unsigned k, n;
	sl_funnel f;
	json_t *root;
	char *text;
	int64_t done;

	if (sl_store_shard_get(st, &k, &n, err))
		return SL_ERROR;
	if (!n)
		return SL_OK;
	if (sl_store_funnel(st, camp->id, &f, err))
		return SL_ERROR;
	done = f.targets - f.pending - f.budget;
	if (!json) {
		sl_buf_addf(out, "shard: %u/%u of base %.12s: %lld of %lld targets finished%s\n",
			    k, n, camp->base_oid, (long long)done, (long long)f.targets,
			    f.pending || f.budget ? "; `sluice run --shard` continues" : "");
	} else if ((root = json_loadb(out->buf, out->len, 0, NULL))) {
		json_object_set_new(root, "shard", json_pack("{s:i, s:i, s:s, s:I, s:I}", "index",
			(int)k, "count", (int)n, "base", camp->base_oid, "targets",
			(json_int_t)f.targets, "finished", (json_int_t)done));
		if ((text = json_dumps(root, JSON_COMPACT))) {
			sl_buf_reset(out);
			sl_buf_adds(out, text);
			free(text);
		}
		json_decref(root);
	}
	sl_funnel_release(&f);
	return SL_OK;
}

int sl_cmd_write_bundle(sl_store *st, const sl_campaign_rec *camp, const char *repo_path,
			const char *file, sl_err *err)
{
	git_repository *repo = NULL;
	size_t count = 0;
	int ret;

	if (!(ret = sl_cmd_open_repo(&repo, repo_path ? repo_path : camp->repo_path, err)) &&
	    !(ret = sl_bundle_write(st, camp, repo, file, &count, err)))
		fprintf(stderr, "sluice: %zu branch%s in bundle %s\n", count,
			count == 1 ? "" : "es", file);
	git_repository_free(repo);
	return ret;
}

struct plan_opts {
	const char *repo;
	unsigned shards;
	int json;
};

static void print_plan(const sl_campaign *c, const size_t *per, unsigned n, size_t total,
		       int json)
{
	if (json) {
		json_t *root = json_pack("{s:s, s:s, s:I, s:[]}", "campaign", c->spec->name,
					 "base", c->base_hex, "targets", (json_int_t)total,
					 "shards");
		json_t *arr = json_object_get(root, "shards");
		char *text;

		for (unsigned k = 0; k < n; k++)
			json_array_append_new(arr, json_integer((json_int_t)per[k]));
		if ((text = json_dumps(root, JSON_COMPACT))) {
			sl_cmd_print(stdout, text, 1);
			putchar('\n');
			free(text);
		}
		json_decref(root);
		return;
	}
	printf("campaign %s: %zu target%s on base %.12s in %u shard%s\n", c->spec->name, total,
	       total == 1 ? "" : "s", c->base_hex, n, n == 1 ? "" : "s");
	for (unsigned k = 0; k < n; k++)
		printf("shard %u/%u: %zu\n", k, n, per[k]);
}

static int plan_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct plan_opts *o = opts;
	sl_campaign *c = NULL;
	sl_target_list list = SL_TARGET_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	size_t *per = NULL;
	int ret;

	if (args->n != 1)
		return sl_cmd_usage(self, "expected one campaign file");
	if (!o->shards)
		return sl_cmd_usage(self, "--shards N is required (1 or more)");
	if (sl_campaign_load(&c, args->v[0], o->repo, &err) ||
	    sl_campaign_scope(&list, c, NULL, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	per = sl_xcalloc(o->shards, sizeof(*per));
	for (size_t i = 0; i < list.n; i++)
		per[sl_run_target_shard(&list.v[i], o->shards)]++;
	print_plan(c, per, o->shards, list.n, o->json);
	ret = SL_EXIT_OK;
done:
	free(per);
	sl_target_list_release(&list);
	sl_campaign_free(c);
	return ret;
}

static const sl_option plan_options[] = {
	CMD_OPT_REPO(struct plan_opts, "use this repository instead of the campaign's"),
	SL_OPT_UINT("shards", 0, "N", "the number of shards (required)", NULL, struct plan_opts,
		    shards),
	CMD_OPT_JSON(struct plan_opts, "print {campaign, base, targets, shards: [count per "
		     "shard]}"),
	SL_OPT_END(),
};

const sl_command cmd_shard_plan = {
	.name = "shard-plan",
	.summary = "print how many targets each of N shards would get",
	.usage = "usage: sluice shard-plan CAMPAIGN.yaml --shards N [--repo PATH] [--json]\n",
	.about = "Scope the campaign's base and print how many targets `sluice run --shard\n"
		"K/N` would work on for each K: a target's shard comes from a hash of its\n"
		"key (path and byte range), the same on every machine.  A fix campaign's\n"
		"targets are chosen from these by the baseline's findings, a testgen\n"
		"campaign's with coverage_below by its coverage: each shard gets fewer.\n"
		"Nothing is written.\n",
	.options = plan_options,
	.opts_size = sizeof(struct plan_opts),
	.fn = plan_main,
};
