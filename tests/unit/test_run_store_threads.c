/*
 * test_run_store_threads.c - the store as the run's worker threads use it:
 * one connection, one thread inside a transaction while another writes the
 * verdict cache (as sl_gating_run does, outside any transaction).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "storage/gate_store.h"
#include "storage/store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-run-store-XXXXXX";
static volatile int stop_writer;

static void *cache_writer(void *arg)
{
	sl_store *st = arg;
	sl_gate_run_rec r = { 0 };
	char key[32];

	r.verdict = SL_VERDICT_PASS;
	r.output_tail = "";
	for (unsigned i = 0; !stop_writer && i < 2000000; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		sl_store_cache_put(st, key, &r, NULL, NULL);
	}
	return NULL;
}

/* The id an insert returns is the id of the row it inserted, not another thread's. */
static void test_insert_ids_under_concurrent_cache_writes(void)
{
	char *p = sl_path_join(dir, "t.db");
	sl_store *st = NULL;
	sl_campaign_rec c = { 0 };
	sl_target_rec t = { 0 };
	int64_t camp = 0, target = 0;
	pthread_t th;
	int wrong = 0;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	c.name = "x";
	c.spec_path = "c.yaml";
	c.spec_text = "name: x\n";
	c.repo_path = "/repo";
	c.base_rev = "HEAD";
	c.base_oid = "0123456789012345678901234567890123456789";
	c.branch_prefix = "sluice/x";
	CHECK_INT(sl_store_campaign_add(st, &c, &camp, NULL), 0);
	t.campaign_id = camp;
	t.key = "src/a.c:1-2";
	t.path = "src/a.c";
	t.lang = "c";
	t.blob = "abc";
	t.unit = "capture";
	CHECK_INT(sl_store_target_add(st, &t, &target, NULL, NULL), 0);

	CHECK_INT(pthread_create(&th, NULL, cache_writer, st), 0);
	for (int i = 1; i <= 600 && !wrong; i++) {
		sl_attempt_rec a = { 0 }, *got = NULL;
		sl_candidate_rec cand = { 0 }, back;
		int64_t aid = 0, cid = 0;
		size_t n = 0;
		sl_err err = SL_ERR_INIT;

		a.target_id = target;
		a.n = i;
		a.source = "rules";
		a.outcome = SL_A_CANDIDATE;
		CHECK_INT(sl_store_begin(st, &err), 0);
		CHECK_INT(sl_store_attempt_add(st, &a, &aid, &err), 0);
		cand.attempt_id = aid;
		cand.target_id = target;
		cand.diff = "";
		cand.commit_oid = "0123456789012345678901234567890123456789";
		cand.state = SL_C_FAILED;
		if (sl_store_candidate_add(st, &cand, &cid, &err)) {
			wrong = 1;
			fprintf(stderr, "candidate_add: %s\n", err.msg);
			sl_store_rollback(st);
			break;
		}
		CHECK_INT(sl_store_commit(st, &err), 0);
		CHECK_INT(sl_store_attempts(st, target, &got, &n, NULL), 0);
		if (!n || got[n - 1].id != aid) {
			wrong = 1;
			fprintf(stderr, "attempt %d: got id %lld, the row has %lld\n", i,
				(long long)aid, n ? (long long)got[n - 1].id : -1LL);
		}
		sl_attempt_list_free(got, n);
		if (!wrong && (sl_store_candidate_get(st, cid, &back, NULL) ||
			       back.attempt_id != aid)) {
			wrong = 1;
			fprintf(stderr, "candidate %lld is not the one just added\n", (long long)cid);
		}
		if (!wrong)
			sl_candidate_rec_release(&back);
	}
	stop_writer = 1;
	pthread_join(th, NULL);
	CHECK_INT(wrong, 0);
	sl_store_free(st);
	free(p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_insert_ids_under_concurrent_cache_writes);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
