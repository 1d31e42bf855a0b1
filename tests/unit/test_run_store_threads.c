/*
 * test_run_store_threads.c - the store as the run's worker threads use it:
 * one thread inside a transaction while another writes the verdict cache
 * (as sl_gating_run does); a reader while another thread's transaction is
 * open; and writers in and out of transactions, with readers, all at once.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "store_fixture.h"
#include "storage/gate_store.h"
#include "storage/store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-run-store-XXXXXX";
static int stop_writer;          /* atomic */

/* Longest wait for another thread's step before the test gives up (a hang, not a margin). */
#define STEP_WAIT_S 120

static int64_t add_campaign(sl_store *st)
{
	return fixture_campaign(st, "x", "name: x\n");
}

static int add_target(sl_store *st, int64_t camp, const char *key, int64_t *id, sl_err *err)
{
	return fixture_target(st, camp, key, id, NULL, err);
}

/* Targets of the campaign whose key starts with prefix; -1 if the store fails. */
static long count_keys(sl_store *st, int64_t camp, const char *prefix)
{
	sl_target_rec *v = NULL;
	size_t n = 0;
	long hits = 0;

	if (sl_store_targets(st, camp, SL_T_ANY, &v, &n, NULL))
		hits = -1;
	for (size_t i = 0; hits >= 0 && i < n; i++)
		hits += !strncmp(v[i].key, prefix, strlen(prefix));
	sl_target_list_free(v, n);
	return hits;
}

static void *cache_writer(void *arg)
{
	sl_store *st = arg;
	sl_gate_run_rec r = { 0 };
	char key[32];

	r.verdict = SL_VERDICT_PASS;
	r.output_tail = "";
	for (unsigned i = 0; !__atomic_load_n(&stop_writer, __ATOMIC_SEQ_CST) && i < 2000000; i++) {
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
	int64_t camp = 0, target = 0;
	pthread_t th;
	int wrong = 0;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = add_campaign(st);
	CHECK_INT(add_target(st, camp, "src/a.c:1-2", &target, NULL), 0);

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
	__atomic_store_n(&stop_writer, 1, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	CHECK_INT(wrong, 0);
	sl_store_free(st);
	free(p);
}

/* A step counter one thread advances and another waits on, each wait bounded. */
typedef struct step {
	pthread_mutex_t m;
	pthread_cond_t c;
	int at;
} step;

static void step_to(step *s, int at)
{
	pthread_mutex_lock(&s->m);
	s->at = at;
	pthread_cond_broadcast(&s->c);
	pthread_mutex_unlock(&s->m);
}

/* 0 once the counter reaches at, -1 if it did not within STEP_WAIT_S. */
static int step_wait(step *s, int at)
{
	struct timespec until;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STEP_WAIT_S;
	pthread_mutex_lock(&s->m);
	while (s->at < at && !ret)
		if (pthread_cond_timedwait(&s->c, &s->m, &until))
			ret = s->at < at ? -1 : 0;
	pthread_mutex_unlock(&s->m);
	return ret;
}

typedef struct open_tx {
	sl_store *st;
	int64_t camp;
	step step;
	int failed;
} open_tx;

/* Add a target in a transaction, hold it open until told, then roll it back. */
static void *tx_holder(void *arg)
{
	open_tx *o = arg;
	int64_t id;

	if (sl_store_begin(o->st, NULL) || add_target(o->st, o->camp, "uncommitted", &id, NULL)) {
		o->failed = 1;
		step_to(&o->step, 1);
		return NULL;
	}
	step_to(&o->step, 1);
	if (step_wait(&o->step, 2))
		o->failed = 1;
	sl_store_rollback(o->st);
	return NULL;
}

/*
 * Another thread's open transaction is invisible to a reader, and a reader
 * does not wait for it: a shared connection showed the uncommitted row.
 */
static void test_reader_sees_only_committed_rows(void)
{
	char *p = sl_path_join(dir, "r.db");
	open_tx o = { .step = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 } };
	pthread_t th;

	CHECK_INT(sl_store_open(&o.st, p, 1, NULL), 0);
	o.camp = add_campaign(o.st);
	CHECK_INT(pthread_create(&th, NULL, tx_holder, &o), 0);
	CHECK_INT(step_wait(&o.step, 1), 0);
	CHECK_INT(count_keys(o.st, o.camp, "uncommitted"), 0);
	step_to(&o.step, 2);
	pthread_join(th, NULL);
	CHECK_INT(o.failed, 0);
	CHECK_INT(count_keys(o.st, o.camp, "uncommitted"), 0);
	sl_store_free(o.st);
	free(p);
}

#define TX_WRITERS 3
#define LONE_WRITERS 2
#define ROUNDS 40

typedef struct mix {
	sl_store *st;
	int64_t camp;
	int who;
	int failed;             /* a call failed or returned another row's id */
	int committed;
	volatile int *writers_left;
	pthread_mutex_t *left_lock;
	int *lone_busy;         /* lone inserts in flight (atomic) */
	int *lone_left;         /* lone inserts not yet begun (atomic) */
	long reads, bad_reads;  /* reader: lists read, lists showing a rolled-back row */
} mix;

static void writer_done(mix *m)
{
	pthread_mutex_lock(m->left_lock);
	(*m->writers_left)--;
	pthread_mutex_unlock(m->left_lock);
}

/* The id an insert returned names the row with that key. */
static int id_is(sl_store *st, int64_t id, const char *key)
{
	sl_target_rec t;
	int ok = !sl_store_target_get(st, id, &t, NULL) && !strcmp(t.key, key);

	if (ok)
		sl_target_rec_release(&t);
	return ok;
}

/*
 * Before a rollback, wait for a lone insert in flight (it cannot finish
 * while the transaction is open), so that one joining the transaction
 * would be lost.  Bounded by a count of yields; the lone writers may all
 * be done already.
 */
static void let_lone_insert_begin(mix *m)
{
	for (int i = 0; i < 100000 && !__atomic_load_n(m->lone_busy, __ATOMIC_SEQ_CST) &&
	     __atomic_load_n(m->lone_left, __ATOMIC_SEQ_CST) > 0; i++)
		sched_yield();
}

/* Transactions of one insert each; every third is rolled back ("rb-" keys). */
static void *tx_writer(void *arg)
{
	mix *m = arg;
	char key[64];
	int64_t id;

	for (int i = 0; i < ROUNDS && !m->failed; i++) {
		int keep = i % 3 != 0;

		snprintf(key, sizeof(key), "%s-w%d-%d", keep ? "ok" : "rb", m->who, i);
		if (sl_store_begin(m->st, NULL)) {
			m->failed = 1;
			break;
		}
		if (add_target(m->st, m->camp, key, &id, NULL) || !id_is(m->st, id, key)) {
			m->failed = 1;
			sl_store_rollback(m->st);
			break;
		}
		if (!keep) {
			let_lone_insert_begin(m);
			sl_store_rollback(m->st);
		}
		else if (sl_store_commit(m->st, NULL))
			m->failed = 1;
		else
			m->committed++;
	}
	writer_done(m);
	return NULL;
}

/* Inserts outside any transaction ("lone-" keys): each one must last. */
static void *lone_writer(void *arg)
{
	mix *m = arg;
	char key[64];
	int64_t id;

	for (int i = 0; i < ROUNDS && !m->failed; i++) {
		snprintf(key, sizeof(key), "lone-%d-%d", m->who, i);
		__atomic_add_fetch(m->lone_busy, 1, __ATOMIC_SEQ_CST);
		__atomic_sub_fetch(m->lone_left, 1, __ATOMIC_SEQ_CST);
		if (add_target(m->st, m->camp, key, &id, NULL) || !id_is(m->st, id, key))
			m->failed = 1;
		else
			m->committed++;
		__atomic_sub_fetch(m->lone_busy, 1, __ATOMIC_SEQ_CST);
	}
	writer_done(m);
	return NULL;
}

/* Lists the targets until the writers are done: a rolled-back row never shows. */
static void *reader(void *arg)
{
	mix *m = arg;
	int left = 1;

	for (long i = 0; i < 1000000 && left; i++) {
		long rb = count_keys(m->st, m->camp, "rb-");

		if (rb < 0) {
			m->failed = 1;
			break;
		}
		m->reads++;
		m->bad_reads += rb > 0;
		pthread_mutex_lock(m->left_lock);
		left = *m->writers_left;
		pthread_mutex_unlock(m->left_lock);
	}
	return NULL;
}

/*
 * Writers in transactions (some rolled back), writers outside any and a
 * reader, at once.  Under one shared connection a lone insert joined the
 * transaction open at that moment and vanished with its rollback, and the
 * reader saw rows that were then rolled back.
 */
static void test_writers_and_readers_at_once(void)
{
	char *p = sl_path_join(dir, "m.db");
	enum { N = TX_WRITERS + LONE_WRITERS + 1 };
	volatile int writers_left = TX_WRITERS + LONE_WRITERS;
	pthread_mutex_t left_lock = PTHREAD_MUTEX_INITIALIZER;
	int lone_busy = 0, lone_left = LONE_WRITERS * ROUNDS;
	mix m[N];
	pthread_t th[N];
	sl_store *st = NULL;
	int64_t camp;
	long tx_kept = 0, lone_kept = 0;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = add_campaign(st);
	for (int i = 0; i < N; i++) {
		m[i] = (mix){ .st = st, .camp = camp, .who = i, .writers_left = &writers_left,
			      .left_lock = &left_lock, .lone_busy = &lone_busy,
			      .lone_left = &lone_left };
		CHECK_INT(pthread_create(&th[i], NULL, i < TX_WRITERS ? tx_writer :
					 i < N - 1 ? lone_writer : reader, &m[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(m[i].failed, 0);
		if (i < TX_WRITERS)
			tx_kept += m[i].committed;
		else if (i < N - 1)
			lone_kept += m[i].committed;
	}
	CHECK_INT(tx_kept, TX_WRITERS * (ROUNDS - (ROUNDS + 2) / 3));
	CHECK_INT(lone_kept, LONE_WRITERS * ROUNDS);
	CHECK_INT(count_keys(st, camp, "ok-"), tx_kept);
	CHECK_INT(count_keys(st, camp, "lone-"), lone_kept);
	CHECK_INT(count_keys(st, camp, "rb-"), 0);
	CHECK(m[N - 1].reads > 0);
	CHECK_INT(m[N - 1].bad_reads, 0);
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
	RUN(test_reader_sees_only_committed_rows);
	RUN(test_writers_and_readers_at_once);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
