/*
 * test_dash_store.c - the dashboard's reads (storage/dash_store.h) against a
 * real store file: activity over time, gates' verdicts and duration
 * histograms, targets found by state, gate, file and text, the stamp, and
 * a store opened read-only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "store_fixture.h"
#include "storage/dash_store.h"
#include "storage/store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-dash-store-XXXXXX";

/* A target at path:line with one attempt of tokens and cost; its id, *aid its attempt. */
static int64_t target(sl_store *st, int64_t camp, const char *path, int line, const char *reason,
		      enum sl_target_state state, int64_t *aid)
{
	sl_target_rec t = { 0 };
	sl_attempt_rec a = { 0 };
	char key[64];
	int64_t tid = 0;
	int ins;

	snprintf(key, sizeof(key), "%s:%d-%d", path, line, line + 1);
	t.campaign_id = camp;
	t.key = key;
	t.path = (char *)path;
	t.lang = "c";
	t.blob = "abc";
	t.unit = "capture";
	t.start_line = line;
	t.end_line = line;
	t.nsites = 1;
	CHECK_INT(sl_store_target_add(st, &t, &tid, &ins, NULL), 0);
	CHECK_INT(sl_store_target_update(st, tid, state, 1, reason, NULL), 0);
	a.target_id = tid;
	a.n = 1;
	a.source = "openai";
	a.tokens_in = 100;
	a.tokens_out = 20;
	a.cost = 0.5;
	a.outcome = SL_A_CANDIDATE;
	CHECK_INT(sl_store_attempt_add(st, &a, aid, NULL), 0);
	return tid;
}

/* A candidate of the attempt with one run of gate per verdict and time given. */
static int64_t candidate(sl_store *st, int64_t tid, int64_t aid, const char *gate,
			 sl_verdict v, int64_t ms, int cached)
{
	sl_candidate_rec c = { 0 };
	sl_gate_run_rec g = { 0 };
	int64_t cid = 0;

	c.attempt_id = aid;
	c.target_id = tid;
	c.diff = "diff --git a/x b/x\n";
	c.commit_oid = "0123456789012345678901234567890123456789";
	c.state = v == SL_VERDICT_PASS ? SL_C_PASSED : SL_C_FAILED;
	CHECK_INT(sl_store_candidate_add(st, &c, &cid, NULL), 0);
	g.candidate_id = cid;
	g.gate = (char *)gate;
	g.verdict = v;
	g.duration_ms = ms;
	g.output_tail = "";
	g.cached = cached;
	CHECK_INT(sl_store_gate_run_add(st, &g, NULL), 0);
	return cid;
}

/* The targets q finds: their count and the first one's id. */
static int64_t found(sl_store *st, int64_t camp, const sl_dash_query *q, int64_t *first)
{
	int64_t *ids = NULL, total = -1;
	size_t n = 0;

	CHECK_INT(sl_store_dash_targets(st, camp, q, &ids, &n, &total, NULL), 0);
	*first = n ? ids[0] : 0;
	CHECK(q->limit || (int64_t)n == total);
	free(ids);
	return total;
}

static void test_dash_reads(void)
{
	char *p = sl_path_join(dir, "d.db");
	sl_store *st = NULL, *ro = NULL;
	sl_dash_point *pts = NULL;
	sl_dash_gate *g = NULL;
	enum sl_dash_step step;
	sl_buf s1 = SL_BUF_INIT, s2 = SL_BUF_INIT;
	size_t n = 0, ng = 0;
	int64_t camp, other, a1, a2, a3, a4, t1, t2, t3, first;
	sl_dash_query q = { .state = SL_T_ANY };

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = fixture_campaign(st, "d", "name: d\n");
	other = fixture_campaign(st, "e", "name: e\n");
	t1 = target(st, camp, "src/a.c", 3, NULL, SL_T_PROPOSED, &a1);
	t2 = target(st, camp, "src/sub/b.c", 7, "gate 'build': Fail <here>", SL_T_FAILED, &a2);
	t3 = target(st, camp, "lib/c.h", 9, NULL, SL_T_PENDING, &a3);
	target(st, other, "src/a.c", 3, NULL, SL_T_FAILED, &a4);
	candidate(st, t1, a1, "build", SL_VERDICT_PASS, 50, 0);
	candidate(st, t2, a2, "build", SL_VERDICT_FAIL, 2000, 0);
	candidate(st, t3, a3, "build", SL_VERDICT_PASS, 1, 1);
	CHECK_INT(sl_store_dash_stamp(st, camp, &s1, NULL), 0);

	/* every attempt of this campaign falls in the one minute it ran */
	CHECK_INT(sl_store_dash_series(st, camp, &pts, &n, &step, NULL), 0);
	CHECK_INT(step, SL_DASH_MINUTE);
	CHECK(n >= 1 && n <= 2);
	if (n == 1) {
		CHECK_INT(pts[0].attempts, 3);
		CHECK_INT(pts[0].tokens, 360);
		CHECK(pts[0].cost > 1.49 && pts[0].cost < 1.51);
		CHECK_INT(strlen(pts[0].t), 16);
	}
	free(pts);

	/* verdicts count cached runs; the histogram leaves them out */
	CHECK_INT(sl_store_dash_gates(st, camp, &g, &ng, NULL), 0);
	CHECK_INT(ng, 1);
	if (ng == 1) {
		CHECK_STR(g[0].gate, "build");
		CHECK_INT(g[0].verdicts[SL_VERDICT_PASS], 2);
		CHECK_INT(g[0].verdicts[SL_VERDICT_FAIL], 1);
		CHECK_INT(g[0].cached, 1);
		CHECK_INT(g[0].runs, 2);
		CHECK_INT(g[0].le[0], 1);              /* 0.1 s: the 50 ms run */
		CHECK_INT(g[0].le[3], 2);              /* 5 s: both */
		CHECK(g[0].sum_s > 2.04 && g[0].sum_s < 2.06);
	}
	sl_dash_gate_list_free(g, ng);

	CHECK_INT(found(st, camp, &q, &first), 3);
	q.state = SL_T_FAILED;
	CHECK_INT(found(st, camp, &q, &first), 1);
	CHECK_INT(first, t2);
	q.state = SL_T_ANY;
	q.gate = "build";
	CHECK_INT(found(st, camp, &q, &first), 1);
	CHECK_INT(first, t2);
	q.gate = NULL;
	q.file = "src/";
	CHECK_INT(found(st, camp, &q, &first), 2);
	q.file = "src";
	CHECK_INT(found(st, camp, &q, &first), 2);
	q.file = "src/sub/b.c";
	CHECK_INT(found(st, camp, &q, &first), 1);
	q.file = "*.h";
	CHECK_INT(found(st, camp, &q, &first), 1);
	CHECK_INT(first, t3);
	q.file = "sr";
	CHECK_INT(found(st, camp, &q, &first), 0);
	q.file = NULL;
	q.text = "fail <HERE>";
	CHECK_INT(found(st, camp, &q, &first), 1);
	q.text = "%";
	CHECK_INT(found(st, camp, &q, &first), 0);
	q.text = NULL;
	q.limit = 1;
	q.offset = 1;
	CHECK_INT(found(st, camp, &q, &first), 3);
	CHECK_INT(first, t2);

	/* a write of this campaign changes its stamp; a store opened read-only refuses writes */
	CHECK_INT(sl_store_decide(st, 1, SL_D_ACCEPT, NULL, NULL), 0);
	CHECK_INT(sl_store_dash_stamp(st, camp, &s2, NULL), 0);
	CHECK(strcmp(s1.buf, s2.buf) != 0);
	CHECK_INT(sl_store_open_readonly(&ro, p, NULL), 0);
	sl_buf_reset(&s1);
	CHECK_INT(sl_store_dash_stamp(ro, camp, &s1, NULL), 0);
	CHECK_STR(s1.buf, s2.buf);
	CHECK(sl_store_decide(ro, 1, SL_D_REJECT, "no", NULL) != 0);
	sl_store_free(ro);
	sl_buf_release(&s1);
	sl_buf_release(&s2);
	sl_store_free(st);
	free(p);
}

static void test_readonly_missing(void)
{
	char *p = sl_path_join(dir, "none.db");
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_store_open_readonly(&st, p, &err), SL_EINPUT);
	CHECK(st == NULL);
	CHECK(strstr(err.msg, "none.db") != NULL);
	CHECK(access(p, F_OK) != 0);
	free(p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_dash_reads);
	RUN(test_readonly_missing);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
