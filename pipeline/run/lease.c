/*
 * lease.c - the run's leases (storage/lease.h): its name in them, the
 * epoch of the lease the calling worker holds on its target (the fencing
 * token), transactions fenced by it, the keeper thread that renews the
 * leases, and a target lost to another run.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/run/run_internal.h"
#include "storage/lease.h"
#include "common/term.h"

/*
 * The epoch of the lease the calling worker holds on its target (lease.h,
 * fencing): a worker holds one target at a time.
 */
_Thread_local int64_t run_cur_epoch;

/*
 * Begin a transaction that writes for a target the worker holds:
 * SL_ELEASE (nothing begun) once another run has taken the target over.
 */
int run_begin_fenced(run_ctx *x, int64_t target_id, sl_err *err)
{
	int ret;

	if (sl_store_begin(x->st, err))
		return SL_ERROR;
	if ((ret = sl_lease_check(x->st, target_id, x->owner, run_cur_epoch, err)))
		sl_store_rollback(x->st);
	return ret;
}

/*
 * Renew this run's leases every third of their lifetime until the workers
 * are done.  A failure to renew is not fatal: the leases may then expire and
 * another run take the targets over, which the claim check makes safe.
 */
void *run_lease_keeper(void *arg)
{
	run_ctx *x = arg;

	pthread_mutex_lock(&x->lock);
	while (!x->ending) {
		struct timespec ts;
		int64_t now;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += x->lease_ttl_ms / 3000;
		ts.tv_nsec += (long)(x->lease_ttl_ms / 3 % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&x->end_cond, &x->lock, &ts);
		if (x->ending)
			break;
		x->renewing = 1;
		pthread_mutex_unlock(&x->lock);
		now = sl_wall_ms();
		sl_lease_renew(x->st, x->owner, now, now + x->lease_ttl_ms, NULL);
		pthread_mutex_lock(&x->lock);
		x->renewing = 0;
		pthread_cond_broadcast(&x->end_cond);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

/* How long the run's claims last unless renewed: --lease-ttl, the campaign's, else 60 s. */
void run_lease_ttl_set(run_ctx *x)
{
	unsigned s = x->opts->lease_ttl_s ? x->opts->lease_ttl_s : x->c->spec->lease_ttl_s;

	x->lease_ttl_ms = (int64_t)(s ? s : 60) * 1000;
}

int run_keeper_start(run_ctx *x, sl_err *err)
{
	if (pthread_create(&x->keeper, NULL, run_lease_keeper, x))
		return sl_err_set(err, SL_ERROR, "cannot start a thread");
	x->kept = 1;
	return SL_OK;
}

void run_keeper_stop(run_ctx *x)
{
	if (!x->kept)
		return;
	pthread_mutex_lock(&x->lock);
	x->ending = 1;
	pthread_cond_broadcast(&x->end_cond);
	pthread_mutex_unlock(&x->lock);
	pthread_join(x->keeper, NULL);
	x->kept = 0;
}

void run_make_owner(run_ctx *x)
{
	char host[64] = "";

	sl_lease_host(host, sizeof(host));
	snprintf(x->owner, sizeof(x->owner), "%s:%ld:%lld", host, (long)getpid(),
		 (long long)sl_wall_ms());
}

/* A target taken over by another run while this one was paused: left to it. */
void run_lease_lost(run_ctx *x, const sl_target_rec *rec, const sl_err *err)
{
	sl_buf path = SL_BUF_INIT;

	sl_term_safe(&path, rec->path, strlen(rec->path), 0);
	pthread_mutex_lock(&x->lock);
	x->lost++;
	pthread_mutex_unlock(&x->lock);
	run_notice(x, "%s:%lld: left to another run: %s", path.buf, (long long)rec->start_line,
		   err->msg);
	sl_buf_release(&path);
}
