/*
 * test_merge.c - shard stores folded into one (storage/merge.h) against real
 * files in a temp directory: ids remapped, every record kept once, merging
 * again copying nothing, a store that ran on replacing what came from it,
 * mismatched campaigns and partitions refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "store_fixture.h"
#include "storage/lease.h"
#include "storage/merge.h"
#include "storage/store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-merge-XXXXXX";

static sl_store *open_new(const char *name)
{
	char *p = sl_path_join(dir, name);
	sl_store *st = NULL;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	free(p);
	return st;
}

/* A run of the campaign with the definition digest digest (lease.h). */
static void add_run(sl_store *st, int64_t camp, const char *owner, const char *digest)
{
	sl_run_rec r = { camp, owner, digest, 0, 0 };

	CHECK_INT(sl_lease_run_begin(st, &r, 1000, NULL), 0);
}

/*
 * Target key of camp, proposed after a failed first attempt: two attempts,
 * two candidates, a gate run each; the second passed with branch.
 */
static void add_proposed(sl_store *st, int64_t camp, const char *key, const char *branch)
{
	sl_attempt_rec a = { 0 };
	sl_candidate_rec c = { 0 };
	sl_gate_run_rec g = { 0 };
	int64_t t, a1, c1;

	CHECK_INT(fixture_target(st, camp, key, &t, NULL, NULL), 0);
	for (int n = 1; n <= 2; n++) {
		a.target_id = t;
		a.n = n;
		a.source = "rules";
		a.outcome = SL_A_CANDIDATE;
		CHECK_INT(sl_store_attempt_add(st, &a, &a1, NULL), 0);
		c.attempt_id = a1;
		c.target_id = t;
		c.diff = "diff --git a/x b/x\n";
		c.commit_oid = "1111111111111111111111111111111111111111";
		c.state = n == 2 ? SL_C_PASSED : SL_C_FAILED;
		c.branch = n == 2 ? (char *)branch : NULL;
		CHECK_INT(sl_store_candidate_add(st, &c, &c1, NULL), 0);
		g.candidate_id = c1;
		g.gate = "test";
		g.verdict = n == 2 ? SL_VERDICT_PASS : SL_VERDICT_FAIL;
		g.output_tail = "";
		CHECK_INT(sl_store_gate_run_add(st, &g, NULL), 0);
	}
	CHECK_INT(sl_store_target_update(st, t, SL_T_PROPOSED, 2, NULL, NULL), 0);
}

/* Targets of every campaign of st. */
static size_t count_targets(sl_store *st)
{
	sl_campaign_rec *c = NULL;
	size_t nc = 0, n = 0;

	CHECK_INT(sl_store_campaign_list(st, &c, &nc, NULL), 0);
	for (size_t i = 0; i < nc; i++) {
		sl_target_rec *t = NULL;
		size_t nt = 0;

		CHECK_INT(sl_store_targets(st, c[i].id, SL_T_ANY, &t, &nt, NULL), 0);
		n += nt;
		sl_target_list_free(t, nt);
	}
	sl_campaign_list_free(c, nc);
	return n;
}

/* The funnel of the only campaign named name in st. */
static void funnel_of(sl_store *st, const char *name, sl_funnel *f)
{
	sl_campaign_rec c = { 0 };

	CHECK_INT(sl_store_campaign_get(st, name, &c, NULL), 0);
	CHECK_INT(sl_store_funnel(st, c.id, f, NULL), 0);
	sl_campaign_rec_release(&c);
}

static void test_merge_two_shards(void)
{
	sl_store *a = open_new("a.db"), *b = open_new("b.db"), *out = open_new("out.db");
	sl_store *in[2] = { a, b };
	sl_merge_counts mc = { 0 };
	sl_funnel f;
	int64_t ca, cb;

	CHECK_INT(sl_store_shard_set(a, 0, 2, NULL), 0);
	CHECK_INT(sl_store_shard_set(b, 1, 2, NULL), 0);
	ca = fixture_campaign(a, "m", "name: m\n");
	cb = fixture_campaign(b, "m", "name: m\n");
	/* b's campaign gets another id than a's: ids are remapped */
	fixture_campaign(b, "other", "name: other\n");
	add_run(a, ca, "host:1", "d1");
	add_run(b, cb, "host:2", "d1");
	add_proposed(a, ca, "k1", "sluice/x/k1");
	add_proposed(a, ca, "k2", "sluice/x/k2");
	add_proposed(b, cb, "k3", "sluice/x/k3");

	CHECK_INT(sl_merge_check(out, in, 2, NULL), 0);
	CHECK_INT(sl_store_merge(out, a, NULL, &mc, NULL), 0);
	CHECK_INT(sl_store_merge(out, b, NULL, &mc, NULL), 0);
	CHECK_INT(mc.copied, 3);
	CHECK_INT(mc.kept, 0);
	CHECK_INT(count_targets(out), 3);
	funnel_of(out, "m", &f);
	CHECK_INT(f.targets, 3);
	CHECK_INT(f.proposed, 3);
	CHECK_INT(f.attempts, 6);
	CHECK_INT(f.candidates, 6);
	CHECK_INT(f.ngates, 1);
	CHECK_INT(f.gates[0].runs, 6);
	CHECK_INT(f.gates[0].passed, 3);
	sl_funnel_release(&f);

	/* again: nothing copied, nothing twice */
	memset(&mc, 0, sizeof(mc));
	CHECK_INT(sl_store_merge(out, b, NULL, &mc, NULL), 0);
	CHECK_INT(sl_store_merge(out, a, NULL, &mc, NULL), 0);
	CHECK_INT(mc.copied + mc.replaced, 0);
	CHECK_INT(mc.kept, 3);
	funnel_of(out, "m", &f);
	CHECK_INT(f.attempts, 6);
	CHECK_INT(f.gates[0].runs, 6);
	sl_funnel_release(&f);

	/* a decision made in a shard since: its target is replaced, not doubled */
	{
		sl_candidate_rec *c = NULL;
		size_t nc = 0;

		CHECK_INT(sl_store_candidates(a, ca, SL_C_PASSED, &c, &nc, NULL), 0);
		CHECK_INT(nc, 2);
		CHECK_INT(sl_store_decide(a, c[0].id, SL_D_ACCEPT, NULL, NULL), 0);
		sl_candidate_list_free(c, nc);
	}
	memset(&mc, 0, sizeof(mc));
	CHECK_INT(sl_store_merge(out, a, NULL, &mc, NULL), 0);
	CHECK_INT(mc.replaced, 1);
	CHECK_INT(mc.kept, 1);
	funnel_of(out, "m", &f);
	CHECK_INT(f.accepted, 1);
	CHECK_INT(f.attempts, 6);
	CHECK_INT(f.candidates, 6);
	sl_funnel_release(&f);

	sl_store_free(a);
	sl_store_free(b);
	sl_store_free(out);
}

static void test_merge_refused(void)
{
	sl_store *a = open_new("ra.db"), *b = open_new("rb.db"), *c = open_new("rc.db");
	sl_store *in[2] = { a, b };
	sl_err err = SL_ERR_INIT;
	int64_t ca, cb;
	unsigned k, n;

	ca = fixture_campaign(a, "m", "name: m\n");
	cb = fixture_campaign(b, "m", "name: m\n");
	add_run(a, ca, "host:1", "digest-one");
	add_run(b, cb, "host:2", "digest-two");
	CHECK_INT(sl_merge_check(NULL, in, 2, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "has another definition") != NULL);
	CHECK(strstr(err.msg, "campaign 'm'") != NULL);

	/* shards of two partitions */
	sl_err_clear(&err);
	CHECK_INT(sl_store_shard_set(a, 0, 2, NULL), 0);
	CHECK_INT(sl_store_shard_set(c, 0, 3, NULL), 0);
	in[1] = c;
	CHECK_INT(sl_merge_check(NULL, in, 2, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "holds shard 0/3") != NULL);

	/* a shard's store is no place to merge into */
	sl_err_clear(&err);
	in[1] = b;
	CHECK_INT(sl_merge_check(c, in, 1, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "cannot merge into") != NULL);

	/* a store holds one shard for good */
	sl_err_clear(&err);
	CHECK_INT(sl_store_shard_set(a, 1, 2, &err), SL_EINPUT);
	CHECK_INT(sl_store_shard_set(a, 0, 2, NULL), 0);
	CHECK_INT(sl_store_shard_get(a, &k, &n, NULL), 0);
	CHECK_INT(k, 0);
	CHECK_INT(n, 2);
	CHECK_INT(sl_store_shard_get(b, &k, &n, NULL), 0);
	CHECK_INT(n, 0);

	sl_store_free(a);
	sl_store_free(b);
	sl_store_free(c);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_merge_two_shards);
	RUN(test_merge_refused);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
