/*
 * bench/store.c - the store's write transactions from several threads at
 * once, against one thread, same run.
 *
 *   sh bench/store.sh [K]       (builds this against build/libsluice.a)
 *
 * For 1, 2, 4 and 8 threads, each thread runs K transactions (default 500)
 * of what a worker writes when it finishes a target (sl_store_begin, a
 * target row, its state, sl_store_commit) on its own connection, while one
 * more thread lists the targets over and over (a reader never waits in WAL
 * mode).  Prints microseconds per transaction and the ratio to one thread
 * (the anchor): above 1 is what the writers' turns on SQLite's lock cost.
 * Writes only a store in a temporary directory.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/store.h"
#include "common/util.h"

struct bench {
	sl_store *st;
	int64_t camp;
	int k;
	int writers_left;           /* atomic */
	int failed;                 /* atomic */
};

struct writer {
	struct bench *b;
	long who;
};

static void *write_targets(void *arg)
{
	struct writer *w = arg;
	char key[64];

	for (int i = 0; i < w->b->k && !__atomic_load_n(&w->b->failed, __ATOMIC_SEQ_CST); i++) {
		sl_target_rec t = { 0 };
		sl_err err = SL_ERR_INIT;
		int64_t id;

		snprintf(key, sizeof(key), "k%ld-%d", w->who, i);
		t.campaign_id = w->b->camp;
		t.key = key;
		t.path = "src/a.c";
		t.lang = "c";
		t.blob = "abc";
		t.unit = "function";
		if (sl_store_begin(w->b->st, &err) ||
		    sl_store_target_add(w->b->st, &t, &id, NULL, &err) ||
		    sl_store_target_update(w->b->st, id, SL_T_PROPOSED, 1, NULL, &err) ||
		    sl_store_commit(w->b->st, &err)) {
			sl_store_rollback(w->b->st);
			fprintf(stderr, "bench/store: %s\n", err.msg);
			__atomic_store_n(&w->b->failed, 1, __ATOMIC_SEQ_CST);
		}
	}
	__atomic_sub_fetch(&w->b->writers_left, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *read_targets(void *arg)
{
	struct bench *b = arg;

	for (long i = 0; i < 10000000 && __atomic_load_n(&b->writers_left, __ATOMIC_SEQ_CST); i++) {
		sl_target_rec *v = NULL;
		size_t n = 0;

		sl_store_targets(b->st, b->camp, SL_T_ANY, &v, &n, NULL);
		sl_target_list_free(v, n);
	}
	return NULL;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Microseconds per transaction with n writer threads (and one reader); < 0 on failure. */
static double run(const char *dir, int n, int k)
{
	struct bench b = { .k = k, .writers_left = n };
	struct writer w[8];
	pthread_t th[8], reader;
	sl_campaign_rec c = { 0 };
	char name[32];
	char *path;
	double t0, t1;

	snprintf(name, sizeof(name), "s%d.db", n);
	path = sl_path_join(dir, name);
	if (sl_store_open(&b.st, path, 1, NULL)) {
		free(path);
		return -1;
	}
	c.name = "bench";
	c.spec_path = "c.yaml";
	c.spec_text = "name: bench\n";
	c.repo_path = "/repo";
	c.base_rev = "HEAD";
	c.base_oid = "0123456789012345678901234567890123456789";
	c.branch_prefix = "sluice/bench";
	if (sl_store_campaign_add(b.st, &c, &b.camp, NULL))
		b.failed = 1;
	t0 = now_us();
	pthread_create(&reader, NULL, read_targets, &b);
	for (int i = 0; i < n; i++) {
		w[i] = (struct writer){ .b = &b, .who = i };
		pthread_create(&th[i], NULL, write_targets, &w[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t1 = now_us();
	pthread_join(reader, NULL);
	sl_store_free(b.st);
	free(path);
	return b.failed ? -1 : (t1 - t0) / (n * k);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/sluice-bench-store-XXXXXX";
	static const int threads[] = { 1, 2, 4, 8 };
	int k = argc > 1 ? atoi(argv[1]) : 500;
	double anchor = 0;
	int ret = 0;

	if (k <= 0 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: bench/store.sh [K > 0]\n");
		return 2;
	}
	printf("%-8s %12s %8s\n", "writers", "us/tx", "ratio");
	for (size_t i = 0; i < sizeof(threads) / sizeof(*threads) && !ret; i++) {
		double us = run(dir, threads[i], k);

		if (us < 0) {
			ret = 1;
			break;
		}
		if (!anchor)
			anchor = us;
		printf("%-8d %12.1f %7.2fx\n", threads[i], us, us / anchor);
	}
	sl_rm_rf(dir, NULL);
	return ret;
}
