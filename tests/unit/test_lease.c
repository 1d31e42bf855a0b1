/*
 * test_lease.c - leases, runs, send-back (lease.h) and the reply journal
 * and rebuilt conversation (journal.h), against real store files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "store_fixture.h"
#include "storage/gate_store.h"
#include "storage/journal.h"
#include "storage/lease.h"
#include "storage/store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-lease-XXXXXX";

static sl_store *fresh(const char *name, int64_t *camp, int64_t *t1, int64_t *t2)
{
	char *p = sl_path_join(dir, name);
	sl_store *st = NULL;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	free(p);
	*camp = fixture_campaign(st, "x", "name: x\n");
	CHECK_INT(fixture_target(st, *camp, "src/a.c:1-2", t1, NULL, NULL), 0);
	CHECK_INT(fixture_target(st, *camp, "src/a.c:3-4", t2, NULL, NULL), 0);
	return st;
}

static void test_claims_exclude_each_other(void)
{
	int64_t camp, t1, t2;
	sl_store *st = fresh("claims.db", &camp, &t1, &t2);
	sl_lease_holder *h = NULL;
	size_t nh = 0;
	int got = -1;

	CHECK_INT(sl_lease_claim(st, t1, "a:1:1", 1000, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	CHECK_INT(sl_lease_claim(st, t1, "b:2:1", 1200, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 0);
	CHECK_INT(sl_lease_claim(st, t1, "a:1:1", 1300, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);                  /* its own: renewed */
	CHECK_INT(sl_lease_holders(st, camp, 1400, &h, &nh, NULL), 0);
	CHECK_INT(nh, 1);
	if (nh) {
		CHECK_STR(h[0].owner, "a:1:1");
		CHECK_INT(h[0].targets, 1);
		CHECK_INT(h[0].expires_ms, 1800);
	}
	sl_lease_holders_free(h, nh);
	/* renewed past the other's try; then expired and taken over */
	CHECK_INT(sl_lease_renew(st, "a:1:1", 1700, 2500, NULL), 0);
	CHECK_INT(sl_lease_claim(st, t1, "b:2:1", 2000, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 0);
	CHECK_INT(sl_lease_claim(st, t1, "b:2:1", 2501, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	/* a finished target is never claimed */
	CHECK_INT(sl_store_target_update(st, t2, SL_T_PROPOSED, 1, NULL, NULL), 0);
	CHECK_INT(sl_lease_claim(st, t2, "a:1:1", 3000, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 0);
	sl_store_free(st);
}

/* A write for a target, as a run makes it: the lease checked in the same transaction. */
static int fenced_write(sl_store *st, int64_t t, const char *owner, int64_t epoch)
{
	sl_err err = SL_ERR_INIT;
	int ret;

	CHECK_INT(sl_store_begin(st, NULL), 0);
	if ((ret = sl_lease_check(st, t, owner, epoch, &err)) ||
	    (ret = sl_store_target_update(st, t, SL_T_PENDING, 1, owner, &err))) {
		sl_store_rollback(st);
		return ret;
	}
	return sl_store_commit(st, NULL);
}

static void test_fencing(void)
{
	int64_t camp, t1, t2, ea = 0, eb = 0, again = 0;
	sl_store *st = fresh("fence.db", &camp, &t1, &t2);
	sl_lease_holder *h = NULL;
	sl_target_rec t = { 0 };
	size_t nh = 0;
	int got = 0;

	CHECK_INT(sl_lease_claim(st, t1, "a:1:1", 1000, 500, &got, &ea, NULL), 0);
	CHECK_INT(got, 1);
	CHECK(ea > 0);
	CHECK_INT(fenced_write(st, t1, "a:1:1", ea), 0);
	/* a's own renewal keeps the epoch */
	CHECK_INT(sl_lease_claim(st, t1, "a:1:1", 1100, 500, &got, &again, NULL), 0);
	CHECK_INT(again, ea);
	/* a pauses past its expiry: listed as expired, then taken over by b */
	CHECK_INT(sl_lease_expired(st, camp, 1700, &h, &nh, NULL), 0);
	CHECK_INT(nh, 1);
	if (nh) {
		CHECK_STR(h[0].owner, "a:1:1");
		CHECK_INT(h[0].expires_ms, 1600);
	}
	sl_lease_holders_free(h, nh);
	CHECK_INT(sl_lease_claim(st, t1, "b:2:1", 1700, 500, &got, &eb, NULL), 0);
	CHECK_INT(got, 1);
	CHECK(eb > ea);
	CHECK_INT(sl_lease_expired(st, camp, 1800, &h, &nh, NULL), 0);
	CHECK_INT(nh, 0);
	sl_lease_holders_free(h, nh);
	/* a wakes up: its write with its old epoch is refused, b's goes in */
	CHECK_INT(fenced_write(st, t1, "a:1:1", ea), SL_ELEASE);
	CHECK_INT(fenced_write(st, t1, "b:2:1", eb), 0);
	CHECK_INT(sl_store_target_get(st, t1, &t, NULL), 0);
	CHECK_STR(t.reason, "b:2:1");
	sl_target_rec_release(&t);
	/* nor does a's stale renewal give it the target back */
	CHECK_INT(sl_lease_renew(st, "a:1:1", 1900, 5000, NULL), 0);
	CHECK_INT(fenced_write(st, t1, "a:1:1", ea), SL_ELEASE);
	/* an expired lease nobody took over still holds */
	CHECK_INT(sl_lease_claim(st, t2, "a:1:1", 1000, 10, &got, &ea, NULL), 0);
	CHECK_INT(fenced_write(st, t2, "a:1:1", ea), 0);
	sl_store_free(st);
}

/* A baseline row of gate "check" saying who wrote it, fenced like the run's. */
static int fenced_baseline(sl_store *st, int64_t camp, const char *owner, int64_t epoch)
{
	sl_baseline_rec rec = { 0 };
	int ret;

	rec.gate = "check";
	rec.run = 1;
	rec.verdict = SL_VERDICT_PASS;
	rec.output = (char *)owner;
	rec.digest = "d1";
	if (sl_store_begin(st, NULL))
		return SL_ERROR;
	if ((ret = sl_lease_baseline_check(st, camp, owner, epoch, NULL)) ||
	    (ret = sl_store_baseline_add(st, camp, &rec, NULL))) {
		sl_store_rollback(st);
		return ret;
	}
	return sl_store_commit(st, NULL);
}

static void test_baseline_fencing(void)
{
	int64_t camp, t1, t2, ea = 0, eb = 0, again = 0;
	sl_store *st = fresh("base-fence.db", &camp, &t1, &t2);
	sl_baseline_rec *runs = NULL;
	size_t nruns = 0;
	int got = 0;

	CHECK_INT(sl_lease_baseline_claim(st, camp, "a:1:1", 1000, 500, &got, &ea, NULL), 0);
	CHECK_INT(got, 1);
	CHECK(ea > 0);
	CHECK_INT(sl_lease_baseline_check(st, camp, "a:1:1", ea, NULL), 0);
	/* its own renewal keeps the epoch */
	CHECK_INT(sl_lease_baseline_claim(st, camp, "a:1:1", 1100, 500, &got, &again, NULL), 0);
	CHECK_INT(again, ea);
	/* a pauses past its expiry while measuring; b takes the baseline over */
	CHECK_INT(sl_lease_baseline_claim(st, camp, "b:2:1", 1500, 500, &got, &eb, NULL), 0);
	CHECK_INT(got, 0);
	CHECK_INT(sl_lease_baseline_claim(st, camp, "b:2:1", 1700, 500, &got, &eb, NULL), 0);
	CHECK_INT(got, 1);
	CHECK(eb > ea);
	CHECK_INT(fenced_baseline(st, camp, "b:2:1", eb), 0);
	/* a wakes up: its row is refused, and its stale renewal changes nothing */
	CHECK_INT(sl_lease_renew(st, "a:1:1", 1800, 5000, NULL), 0);
	CHECK_INT(fenced_baseline(st, camp, "a:1:1", ea), SL_ELEASE);
	CHECK_INT(sl_lease_baseline_release(st, "b:2:1", NULL), 0);
	CHECK_INT(fenced_baseline(st, camp, "a:1:1", ea), SL_ELEASE);
	CHECK_INT(sl_store_baseline_get(st, camp, "check", "d1", &runs, &nruns, NULL), 0);
	CHECK_INT(nruns, 1);
	if (nruns)
		CHECK_STR(runs[0].output, "b:2:1");
	sl_baseline_list_free(runs, nruns);
	/* claimed again, a holds a newer epoch than both */
	CHECK_INT(sl_lease_baseline_claim(st, camp, "a:1:1", 1900, 500, &got, &again, NULL), 0);
	CHECK_INT(got, 1);
	CHECK(again > eb);
	CHECK_INT(sl_lease_baseline_check(st, camp, "a:1:1", ea, NULL), SL_ELEASE);
	CHECK_INT(sl_lease_baseline_check(st, camp, "a:1:1", again, NULL), 0);
	/* measured again from the first gate: the store's runs are forgotten first */
	CHECK_INT(sl_store_baseline_clear(st, camp, NULL), 0);
	CHECK_INT(sl_store_baseline_get(st, camp, "check", "d1", &runs, &nruns, NULL), 0);
	CHECK_INT(nruns, 0);
	sl_baseline_list_free(runs, nruns);
	sl_store_free(st);
}

static void test_run_end_releases_and_reap(void)
{
	int64_t camp, t1, t2;
	sl_store *st = fresh("runs.db", &camp, &t1, &t2);
	sl_run_rec run = { camp, "here:999999999:1", "d1", 100, 0 };
	int64_t bt = 0;
	double bc = -1;
	size_t ended = 0;
	int got = 0;
	char live[64];

	CHECK_INT(sl_lease_run_begin(st, &run, 1, NULL), 0);
	CHECK_INT(sl_lease_claim(st, t1, run.owner, 1, 1000000000000LL, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	CHECK_INT(sl_lease_last_budget(st, camp, &bt, &bc, NULL), 0);
	CHECK_INT(bt, 100);
	CHECK(bc == 0);
	/* no process 999999999 on this host: its leases go at once */
	CHECK_INT(sl_lease_reap_local(st, "here", &ended, NULL), 0);
	CHECK_INT(ended, 1);
	CHECK_INT(sl_lease_claim(st, t1, "b:2:1", 2, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	/* a live process (this one) is not reaped */
	snprintf(live, sizeof(live), "here:%ld:%lld", (long)getpid(), (long long)sl_wall_ms());
	CHECK_INT(sl_lease_claim(st, t2, live, 3, 1000000000000LL, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	CHECK_INT(sl_lease_reap_local(st, "here", &ended, NULL), 0);
	CHECK_INT(ended, 0);
	CHECK_INT(sl_lease_claim(st, t2, "b:2:1", 4, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 0);
	CHECK_INT(sl_lease_run_end(st, live, "done", NULL), 0);
	CHECK_INT(sl_lease_claim(st, t2, "b:2:1", 5, 500, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	/* the baseline claim */
	CHECK_INT(sl_lease_baseline_claim(st, camp, "a:1:1", 10, 100, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	CHECK_INT(sl_lease_baseline_claim(st, camp, "b:2:1", 20, 100, &got, NULL, NULL), 0);
	CHECK_INT(got, 0);
	CHECK_INT(sl_lease_baseline_release(st, "a:1:1", NULL), 0);
	CHECK_INT(sl_lease_baseline_claim(st, camp, "b:2:1", 30, 100, &got, NULL, NULL), 0);
	CHECK_INT(got, 1);
	CHECK_INT(sl_lease_baseline_release(st, "b:2:1", NULL), 0);
	/* a baseline holder of this host whose process is gone holds nothing */
	{
		char host[64] = "", dead[128];

		sl_lease_host(host, sizeof(host));
		snprintf(dead, sizeof(dead), "%s:999999999:1", host);
		CHECK_INT(sl_lease_baseline_claim(st, camp, dead, 40, 1000000000000LL, &got, NULL,
						  NULL), 0);
		CHECK_INT(got, 1);
		CHECK_INT(sl_lease_baseline_claim(st, camp, "b:2:1", 50, 100, &got, NULL, NULL), 0);
		CHECK_INT(got, 1);
	}
	sl_store_free(st);
}

static void test_journal_and_history(void)
{
	int64_t camp, t1, t2, aid = 0, tok = 0;
	double cost = 0;
	sl_store *st = fresh("journal.db", &camp, &t1, &t2);
	sl_reply_rec r = { 0 }, got;
	sl_attempt_rec a = { 0 };
	sl_turn *h = NULL;
	size_t nh = 0;

	r.target_id = t1;
	r.n = 1;
	r.reply = "first reply";
	r.request_key = "k1";
	r.tokens_in = 100;
	r.tokens_out = 20;
	r.cost = 0.5;
	CHECK_INT(sl_journal_reply_add(st, &r, NULL), 0);
	CHECK_INT(sl_journal_reply_get(st, t1, 1, 0, &got, NULL), 0);
	CHECK_STR(got.reply, "first reply");
	CHECK_STR(got.request_key, "k1");
	CHECK_INT(got.tokens_in, 100);
	sl_reply_rec_release(&got);
	CHECK_INT(sl_journal_reply_get(st, t1, 1, 1, &got, NULL), SL_ENOTFOUND);
	CHECK_INT(sl_journal_reply_get(st, t1, 2, 0, &got, NULL), SL_ENOTFOUND);
	/* counted until its attempt is recorded, then by the attempt only */
	CHECK_INT(sl_journal_usage(st, camp, &tok, &cost, NULL), 0);
	CHECK_INT(tok, 120);
	a.target_id = t1;
	a.n = 1;
	a.source = "openai";
	a.reply = "first reply";
	a.tokens_in = 100;
	a.tokens_out = 20;
	a.outcome = SL_A_CANDIDATE;
	CHECK_INT(sl_store_begin(st, NULL), 0);
	CHECK_INT(sl_store_attempt_add(st, &a, &aid, NULL), 0);
	CHECK_INT(sl_journal_attempt_note(st, aid, "the build failed", NULL, NULL), 0);
	CHECK_INT(sl_store_target_update(st, t1, SL_T_PENDING, 1, "the build failed", NULL), 0);
	CHECK_INT(sl_store_commit(st, NULL), 0);
	CHECK_INT(sl_journal_usage(st, camp, &tok, &cost, NULL), 0);
	CHECK_INT(tok, 0);
	CHECK_INT(sl_store_usage(st, camp, &tok, &cost, NULL), 0);
	CHECK_INT(tok, 120);
	CHECK_INT(sl_journal_history(st, t1, &h, &nh, NULL), 0);
	CHECK_INT(nh, 1);
	if (nh) {
		CHECK_STR(h[0].reply, "first reply");
		CHECK_STR(h[0].feedback, "the build failed");
	}
	sl_turn_list_free(h, nh);
	sl_store_free(st);
}

static void test_send_back(void)
{
	int64_t camp, t1, t2, aid = 0, cid = 0;
	sl_store *st = fresh("retry.db", &camp, &t1, &t2);
	sl_attempt_rec a = { 0 };
	sl_candidate_rec c = { 0 };
	sl_target_rec t = { 0 };
	sl_turn *h = NULL;
	size_t nh = 0;
	int sent = -1;

	a.target_id = t1;
	a.n = 1;
	a.source = "openai";
	a.reply = "the change";
	a.outcome = SL_A_CANDIDATE;
	CHECK_INT(sl_store_begin(st, NULL), 0);
	CHECK_INT(sl_store_attempt_add(st, &a, &aid, NULL), 0);
	c.attempt_id = aid;
	c.target_id = t1;
	c.diff = "diff";
	c.commit_oid = "0123";
	c.state = SL_C_PASSED;
	c.branch = "sluice/x/a";
	CHECK_INT(sl_store_candidate_add(st, &c, &cid, NULL), 0);
	CHECK_INT(sl_store_target_update(st, t1, SL_T_PROPOSED, 1, NULL, NULL), 0);
	CHECK_INT(sl_store_commit(st, NULL), 0);
	CHECK_INT(sl_store_decide(st, cid, SL_D_REJECT, "wrong name", NULL), 0);
	CHECK_INT(sl_lease_send_back(st, t1, "sent back", &sent, NULL), 0);
	CHECK_INT(sent, 1);
	CHECK_INT(sl_store_target_get(st, t1, &t, NULL), 0);
	CHECK_INT(t.state, SL_T_PENDING);
	CHECK_INT(t.attempt_base, 1);
	sl_target_rec_release(&t);
	CHECK_INT(sl_journal_history(st, t1, &h, &nh, NULL), 0);
	CHECK_INT(nh, 1);
	if (nh)
		CHECK_STR(h[0].feedback, "A reviewer rejected this change: wrong name");
	sl_turn_list_free(h, nh);
	/* pending: nothing to do; accepted: refused */
	CHECK_INT(sl_lease_send_back(st, t2, "x", &sent, NULL), 0);
	CHECK_INT(sent, 0);
	CHECK_INT(sl_store_target_update(st, t2, SL_T_ACCEPTED, 1, NULL, NULL), 0);
	CHECK_INT(sl_lease_send_back(st, t2, "x", &sent, NULL), SL_EINPUT);
	sl_store_free(st);
}

/* A pid is gone when no process has it, or the one that has it started later. */
static void test_pid_gone(void)
{
	char host[64] = "", owner[160];
	int64_t now = sl_wall_ms();

	CHECK_INT(sl_lease_pid_gone((long)getpid(), now), 0);
	CHECK_INT(sl_lease_pid_gone((long)getpid(), 0), 0);
	CHECK_INT(sl_lease_pid_gone(999999999L, now), 1);
	/* alive in 2001, long before this process started: that one is gone */
	CHECK_INT(sl_lease_pid_gone((long)getpid(), 1000000000000LL), 1);
	sl_lease_host(host, sizeof(host));
	snprintf(owner, sizeof(owner), "%s:%ld:%lld", host, (long)getpid(), (long long)now);
	CHECK_INT(sl_lease_owner_gone(owner, host), 0);
	snprintf(owner, sizeof(owner), "%s:%ld:1000000000000", host, (long)getpid());
	CHECK_INT(sl_lease_owner_gone(owner, host), 1);
	CHECK_INT(sl_lease_owner_gone(owner, "elsewhere"), 0);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_claims_exclude_each_other);
	RUN(test_fencing);
	RUN(test_baseline_fencing);
	RUN(test_run_end_releases_and_reap);
	RUN(test_journal_and_history);
	RUN(test_send_back);
	RUN(test_pid_gone);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
