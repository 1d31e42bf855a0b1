/*
 * lease.h - targets claimed by runs, so that several `sluice run` processes
 * (on one machine or, sharing the store, on many) share a campaign's work.
 *
 * A run registers under an owner name (host:pid:start, unique) in the runs
 * table with its budgets and the digest of its campaign definition.  Before
 * it works on a target it claims it: the claim succeeds when the target is
 * pending or budget-stopped and nobody holds it, the run holds it already,
 * or the holder's lease has expired (its run crashed or lost the store).
 * A run renews its leases (and its heartbeat) while it works, and releases
 * them when it ends.  Only the holder of a target touches its branch and
 * worktrees.  Times are Unix milliseconds.
 *
 * Fencing: a run may be paused (SIGSTOP, a suspended machine) past its
 * lease's expiry while another run takes the target over.  Each lease has
 * an epoch, a fencing token that grows whenever a new holder claims the
 * target; the claim hands it to the run, and every write the run makes for
 * the target checks it in the same transaction (sl_lease_check), so the
 * paused run's late writes are refused with SL_ELEASE.  The campaign's
 * baseline lease has an epoch of its own, checked by every baseline row
 * written (sl_lease_baseline_check).
 *
 * Every function runs in a transaction of its own; none may be called
 * inside sl_store_begin/commit.
 */
#ifndef SL_LEASE_H
#define SL_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "storage/store.h"

typedef struct sl_run_rec {
	int64_t campaign_id;
	const char *owner, *digest;
	int64_t budget_tokens;      /* 0: none */
	double budget_cost;         /* 0: none */
} sl_run_rec;

int sl_lease_run_begin(sl_store *st, const sl_run_rec *run, int64_t now_ms, sl_err *err);
/* Mark the run ended (outcome: "done", "budget", "stopped", "failed") and release its leases. */
int sl_lease_run_end(sl_store *st, const char *owner, const char *outcome, sl_err *err);
/*
 * End the runs of this host whose process is gone (owner "HOST:PID:..." with
 * PID not alive) and release their leases at once, without waiting for them
 * to expire; a `sluice baseline` of this host that is gone lets go of the
 * baseline lease the same way.  *ended_out counts them (may be NULL).
 */
int sl_lease_reap_local(sl_store *st, const char *host, size_t *ended_out, sl_err *err);
/* This host's name as owners carry it (':' becomes '-'), in buf of size > 1. */
void sl_lease_host(char *buf, size_t size);
/*
 * 1 when owner ("HOST:PID:START", START the wall-clock milliseconds when it
 * was named) is a run of host whose process is gone: no process PID, or one
 * that started after START (the PID was reused).
 */
int sl_lease_owner_gone(const char *owner, const char *host);
/*
 * 1 when the process pid of this host is provably gone, knowing it was alive
 * at the wall-clock time alive_ms (0: unknown): no such process, or the one
 * with that number started after alive_ms (a reused pid).  Linux's
 * /proc/PID/stat and /proc/stat give the start; a process whose start cannot
 * be read is taken as alive.
 */
int sl_lease_pid_gone(long pid, int64_t alive_ms);
/*
 * Claim a target until now + ttl; *claimed 1 if this owner holds it now,
 * and then *epoch (may be NULL) is the lease's fencing token: one more than
 * the last holder's when this owner did not hold it already.
 */
int sl_lease_claim(sl_store *st, int64_t target_id, const char *owner, int64_t now_ms,
		   int64_t ttl_ms, int *claimed, int64_t *epoch, sl_err *err);
/*
 * Inside the caller's transaction, before it writes anything for the
 * target: SL_OK when owner still holds the target with this epoch, else
 * SL_ELEASE naming the target and who holds it now (the transaction must
 * then be rolled back).  An expired lease nobody took over still holds.
 */
int sl_lease_check(sl_store *st, int64_t target_id, const char *owner, int64_t epoch,
		   sl_err *err);
/*
 * The campaign's baseline is measured by one run at a time: claim it like a
 * target (*claimed 1 when this owner holds it now, and then *epoch, may be
 * NULL, its fencing token); sl_lease_run_end and sl_lease_baseline_release
 * let it go, sl_lease_renew renews it.
 */
int sl_lease_baseline_claim(sl_store *st, int64_t campaign_id, const char *owner,
			    int64_t now_ms, int64_t ttl_ms, int *claimed, int64_t *epoch,
			    sl_err *err);
/*
 * Inside the caller's transaction, before it writes a baseline row: SL_OK
 * when owner still holds the campaign's baseline with this epoch, else
 * SL_ELEASE naming who holds it now (roll back, then read that run's
 * baseline once it is released).
 */
int sl_lease_baseline_check(sl_store *st, int64_t campaign_id, const char *owner,
			    int64_t epoch, sl_err *err);
int sl_lease_baseline_release(sl_store *st, const char *owner, sl_err *err);
/* Renew every lease of the owner until expires_ms, and its heartbeat. */
int sl_lease_renew(sl_store *st, const char *owner, int64_t now_ms, int64_t expires_ms,
		   sl_err *err);

typedef struct sl_lease_holder {
	char *owner;
	int64_t targets, expires_ms; /* live leases held, and the latest expiry */
} sl_lease_holder;

/* Who holds live leases on the campaign's unfinished targets at now_ms. */
int sl_lease_holders(sl_store *st, int64_t campaign_id, int64_t now_ms,
		     sl_lease_holder **out, size_t *n, sl_err *err);
/*
 * Leases on unfinished targets that expired before now_ms and were not
 * taken over: who held them, how many, and expires_ms the latest expiry
 * (expired since then).  Their holder is paused, crashed on another machine,
 * or lost the store; the next claim takes them over.
 */
int sl_lease_expired(sl_store *st, int64_t campaign_id, int64_t now_ms,
		     sl_lease_holder **out, size_t *n, sl_err *err);
void sl_lease_holders_free(sl_lease_holder *v, size_t n);

/* The last run's budgets (0 when none or no run recorded). */
int sl_lease_last_budget(sl_store *st, int64_t campaign_id, int64_t *tokens, double *cost,
			 sl_err *err);
/* Proposed, failed or rejected targets judged under a digest other than `digest`. */
int sl_lease_stale_digest(sl_store *st, int64_t campaign_id, const char *digest,
			  int64_t *count, sl_err *err);
/*
 * Send a target back to pending with a fresh set of attempts (its earlier
 * ones stay recorded): attempt_base becomes its attempts, its lease and
 * digest are cleared.  A proposed target's candidate is rejected first,
 * with reason.  SL_EINPUT for an accepted target.  *sent 1 when it moved
 * (0 for a pending one).  In a transaction of its own.
 */
int sl_lease_send_back(sl_store *st, int64_t target_id, const char *reason, int *sent,
		       sl_err *err);
/*
 * *stale 1 when the target (proposed, failed or rejected) was judged under
 * another digest than the campaign's last run.
 */
int sl_lease_is_stale(sl_store *st, int64_t target_id, int *stale, sl_err *err);
/* Inside the caller's transaction: record the digest that judged a target. */
int sl_lease_set_digest(sl_store *st, int64_t target_id, const char *digest, sl_err *err);

#endif
