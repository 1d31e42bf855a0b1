/*
 * lease.c - leases on targets and the runs table (lease.h).
 *
 * A claim is one conditional UPDATE: SQLite's write lock makes it atomic
 * across processes, so two runs never both hold a target.  Nothing here
 * depends on the two runs sharing a machine except sl_lease_reap_local,
 * which only shortens the wait for a crashed local run's leases.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "storage/lease.h"
#include "storage/store_internal.h"
#include "common/util.h"

/* Prepare, bind with fill, step to the end and finalize, in a transaction of its own. */
static int write_tx(sl_store *st, const char *sql, void (*fill)(sqlite3_stmt *, const void *),
		    const void *arg, int *changes, const char *what, sl_err *err)
{
	sqlite3_stmt *s = NULL;

	if (sl_store_begin(st, err))
		return SL_ERROR;
	if ((s = sl_store_prepare(st, sql, err)))
		fill(s, arg);
	if (sl_store_exec(st, s, what, err)) {
		sl_store_rollback(st);
		return SL_ERROR;
	}
	if (changes)
		*changes = sqlite3_changes(sl_store_sqlite(st));
	return sl_store_commit(st, err);
}

struct run_arg {
	const sl_run_rec *run;
	int64_t now;
};

static void fill_run(sqlite3_stmt *s, const void *p)
{
	const struct run_arg *a = p;
	char now[32];

	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, a->run->campaign_id);
	sl_store_bind_text(s, 2, a->run->owner);
	sl_store_bind_text(s, 3, a->run->digest ? a->run->digest : "");
	sqlite3_bind_int64(s, 4, a->run->budget_tokens);
	sqlite3_bind_double(s, 5, a->run->budget_cost);
	sl_store_bind_text(s, 6, now);
	sqlite3_bind_int64(s, 7, a->now);
}

int sl_lease_run_begin(sl_store *st, const sl_run_rec *run, int64_t now_ms, sl_err *err)
{
	struct run_arg a = { run, now_ms };

	return write_tx(st, "INSERT INTO runs (campaign_id, owner, digest, budget_tokens, "
			"budget_cost, started_at, heartbeat) VALUES (?, ?, ?, ?, ?, ?, ?)",
			fill_run, &a, NULL, "record run", err);
}

struct end_arg {
	const char *owner, *outcome;
};

static void fill_end(sqlite3_stmt *s, const void *p)
{
	const struct end_arg *a = p;
	char now[32];

	sl_iso8601_now(now);
	sl_store_bind_text(s, 1, now);
	sl_store_bind_text(s, 2, a->outcome);
	sl_store_bind_text(s, 3, a->owner);
}

static void fill_owner(sqlite3_stmt *s, const void *p)
{
	sl_store_bind_text(s, 1, p);
}

int sl_lease_baseline_release(sl_store *st, const char *owner, sl_err *err)
{
	return write_tx(st, "UPDATE campaigns SET baseline_owner = NULL, baseline_expires = NULL "
			"WHERE baseline_owner = ?", fill_owner, owner, NULL, "release baseline", err);
}

int sl_lease_run_end(sl_store *st, const char *owner, const char *outcome, sl_err *err)
{
	struct end_arg a = { owner, outcome };

	if (write_tx(st, "UPDATE runs SET ended_at = ?, outcome = ? WHERE owner = ? "
		     "AND ended_at IS NULL", fill_end, &a, NULL, "end run", err) ||
	    sl_lease_baseline_release(st, owner, err))
		return SL_ERROR;
	return write_tx(st, "UPDATE targets SET lease_owner = NULL, lease_expires = NULL "
			"WHERE lease_owner = ?", fill_owner, owner, NULL, "release leases", err);
}

void sl_lease_host(char *buf, size_t size)
{
	if (gethostname(buf, size - 1) || !*buf)
		snprintf(buf, size, "localhost");
	buf[size - 1] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == ':')
			*p = '-';
}

/* The wall-clock time the system booted, ms (/proc/stat btime, whole seconds); 0 unknown. */
static int64_t boot_ms(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[256];
	long long btime = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	if (f)
		fclose(f);
	return btime > 0 ? (int64_t)btime * 1000 : 0;
}

/*
 * When process pid started, wall-clock ms, at the earliest (btime is
 * rounded down to the second); 0 when it cannot be read.
 */
static int64_t pid_start_ms(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t boot = boot_ms();
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!boot || hz <= 0 || !(f = fopen(path, "re")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command's closing parenthesis: state is field 3, starttime 22 */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
		   "%*d %*d %*d %llu", &ticks) != 1)
		return 0;
	return boot + (int64_t)(ticks * 1000 / (unsigned long long)hz);
}

int sl_lease_pid_gone(long pid, int64_t alive_ms)
{
	int64_t start;

	if (pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return 1;
	/* the start is read up to a second early; a clock stepped back by more
	   than another second could make a live process look younger */
	return alive_ms > 0 && (start = pid_start_ms(pid)) > 0 && start > alive_ms + 1000;
}

int sl_lease_owner_gone(const char *owner, const char *host)
{
	size_t hl = strlen(host);
	long pid;
	long long named;
	char *end;

	if (strncmp(owner, host, hl) || owner[hl] != ':')
		return 0;
	pid = strtol(owner + hl + 1, &end, 10);
	if (*end != ':' || pid <= 0)
		return 0;
	named = strtoll(end + 1, &end, 10);
	return sl_lease_pid_gone(pid, *end ? 0 : (int64_t)named);
}

int sl_lease_reap_local(sl_store *st, const char *host, size_t *ended_out, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	sl_strvec dead = SL_STRVEC_INIT;
	int rc, ret = SL_OK;

	if (ended_out)
		*ended_out = 0;
	if (!(s = sl_store_prepare(st, "SELECT owner FROM runs WHERE ended_at IS "
			       "NULL UNION SELECT DISTINCT lease_owner FROM targets WHERE "
			       "lease_owner IS NOT NULL UNION SELECT baseline_owner FROM "
			       "campaigns WHERE baseline_owner IS NOT NULL", err)))
		return SL_ERROR;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *o = (const char *)sqlite3_column_text(s, 0);

		if (o && sl_lease_owner_gone(o, host))
			sl_strvec_push(&dead, o);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		ret = sl_store_fail(st, err, "list runs");
	for (size_t i = 0; i < dead.n && !ret; i++)
		ret = sl_lease_run_end(st, dead.v[i], "crashed", err);
	if (!ret && ended_out)
		*ended_out = dead.n;
	sl_strvec_release(&dead);
	return ret;
}

struct claim_arg {
	int64_t id, now, expires;
	const char *owner;
	const char *gone;           /* a holder whose process is gone (?6), or NULL */
};

static void fill_claim(sqlite3_stmt *s, const void *p)
{
	const struct claim_arg *a = p;

	sl_store_bind_text(s, 1, a->owner);
	sqlite3_bind_int64(s, 2, a->expires);
	sqlite3_bind_int64(s, 3, a->id);
	sl_store_bind_text(s, 4, a->owner);
	sqlite3_bind_int64(s, 5, a->now);
	if (sqlite3_bind_parameter_count(s) >= 6)
		sl_store_bind_text(s, 6, a->gone);
}

/* The lease's epoch as owner holds it (sql: SELECT epoch WHERE id, owner): 0 when it does not. */
static int held_epoch(sl_store *st, const char *sql, int64_t id, const char *owner,
		      int64_t *epoch, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, sql, err);
	int rc;

	*epoch = 0;
	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, id);
	sl_store_bind_text(s, 2, owner);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*epoch = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "read lease");
}

/*
 * One claim, in a transaction of its own: the conditional UPDATE (bound by
 * fill_claim), then the epoch it left (held_sql, see held_epoch).
 */
static int claim_tx(sl_store *st, const char *update_sql, const char *held_sql,
		    const struct claim_arg *a, int *claimed, int64_t *epoch, const char *what,
		    sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t got = 0;
	int changes = 0;

	*claimed = 0;
	if (epoch)
		*epoch = 0;
	if (sl_store_begin(st, err))
		return SL_ERROR;
	if ((s = sl_store_prepare(st, update_sql, err)))
		fill_claim(s, a);
	if (sl_store_exec(st, s, what, err) ||
	    ((changes = sqlite3_changes(sl_store_sqlite(st))) == 1 &&
	     held_epoch(st, held_sql, a->id, a->owner, &got, err))) {
		sl_store_rollback(st);
		return SL_ERROR;
	}
	if (sl_store_commit(st, err))
		return SL_ERROR;
	*claimed = changes == 1;
	if (epoch)
		*epoch = got;
	return SL_OK;
}

/* The epoch grows only when the holder changes: a renewal keeps it. */
int sl_lease_claim(sl_store *st, int64_t target_id, const char *owner, int64_t now_ms,
		   int64_t ttl_ms, int *claimed, int64_t *epoch, sl_err *err)
{
	struct claim_arg a = { target_id, now_ms, now_ms + ttl_ms, owner, NULL };

	return claim_tx(st, "UPDATE targets SET lease_epoch = lease_epoch + "
			"(lease_owner IS NOT ?1), lease_owner = ?1, lease_expires = ?2 "
			"WHERE id = ?3 AND state IN ('pending', 'budget') AND "
			"(lease_owner IS NULL OR lease_owner = ?4 OR lease_expires < ?5)",
			"SELECT lease_epoch FROM targets WHERE id = ? AND lease_owner = ?",
			&a, claimed, epoch, "claim target", err);
}

/*
 * SL_OK when owner holds the lease read by sql (SELECT owner, epoch WHERE
 * id) with this epoch; else SL_ELEASE, the message naming what by id.
 */
static int fence_check(sl_store *st, const char *sql, const char *what, int64_t id,
		       const char *owner, int64_t epoch, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, sql, err);
	char *holder = NULL;
	int64_t now_epoch = -1;
	int rc, ret = SL_OK;

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		holder = sl_store_col_text(s, 0);
		now_epoch = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sl_store_fail(st, err, "read lease");
	if (!holder || strcmp(holder, owner) || now_epoch != epoch)
		ret = sl_err_set(err, SL_ELEASE, "%s %lld: lease lost (epoch %lld): now held "
				 "by '%s' with epoch %lld", what, (long long)id, (long long)epoch,
				 holder ? holder : "nobody", (long long)now_epoch);
	free(holder);
	return ret;
}

int sl_lease_check(sl_store *st, int64_t target_id, const char *owner, int64_t epoch,
		   sl_err *err)
{
	return fence_check(st, "SELECT lease_owner, lease_epoch FROM targets WHERE id = ?",
			   "target", target_id, owner, epoch, err);
}

/*
 * The baseline's holder when it is a process of this host that is gone (a
 * killed run or `sluice baseline`): a new string, or NULL.
 */
static char *baseline_holder_gone(sl_store *st, int64_t campaign_id)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT baseline_owner FROM campaigns WHERE "
					   "id = ?", NULL);
	char host[64] = "", *holder = NULL;

	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, campaign_id);
	if (sqlite3_step(s) == SQLITE_ROW)
		holder = sl_store_col_text(s, 0);
	sqlite3_finalize(s);
	sl_lease_host(host, sizeof(host));
	if (holder && !sl_lease_owner_gone(holder, host)) {
		free(holder);
		holder = NULL;
	}
	return holder;
}

/*
 * A holder that is gone holds nothing: its lease is taken over at once,
 * not when it expires (the UPDATE takes it only if it still holds it).
 */
int sl_lease_baseline_claim(sl_store *st, int64_t campaign_id, const char *owner,
			    int64_t now_ms, int64_t ttl_ms, int *claimed, int64_t *epoch,
			    sl_err *err)
{
	struct claim_arg a = { campaign_id, now_ms, now_ms + ttl_ms, owner,
			       baseline_holder_gone(st, campaign_id) };
	int ret;

	ret = claim_tx(st, "UPDATE campaigns SET baseline_epoch = baseline_epoch + "
		       "(baseline_owner IS NOT ?1), baseline_owner = ?1, baseline_expires = ?2 "
		       "WHERE id = ?3 AND (baseline_owner IS NULL OR baseline_owner = ?4 OR "
		       "baseline_expires < ?5 OR baseline_owner = ?6)",
		       "SELECT baseline_epoch FROM campaigns WHERE id = ? AND baseline_owner = ?",
		       &a, claimed, epoch, "claim baseline", err);
	free((char *)a.gone);
	return ret;
}

int sl_lease_baseline_check(sl_store *st, int64_t campaign_id, const char *owner,
			    int64_t epoch, sl_err *err)
{
	return fence_check(st, "SELECT baseline_owner, baseline_epoch FROM campaigns WHERE "
			   "id = ?", "campaign baseline", campaign_id, owner, epoch, err);
}

struct renew_arg {
	const char *owner;
	int64_t now, expires;
};

static void fill_renew(sqlite3_stmt *s, const void *p)
{
	const struct renew_arg *a = p;

	sqlite3_bind_int64(s, 1, a->expires);
	sl_store_bind_text(s, 2, a->owner);
}

static void fill_beat(sqlite3_stmt *s, const void *p)
{
	const struct renew_arg *a = p;

	sqlite3_bind_int64(s, 1, a->now);
	sl_store_bind_text(s, 2, a->owner);
}

int sl_lease_renew(sl_store *st, const char *owner, int64_t now_ms, int64_t expires_ms,
		   sl_err *err)
{
	struct renew_arg a = { owner, now_ms, expires_ms };

	if (write_tx(st, "UPDATE targets SET lease_expires = ? WHERE lease_owner = ?",
		     fill_renew, &a, NULL, "renew leases", err) ||
	    write_tx(st, "UPDATE campaigns SET baseline_expires = ? WHERE baseline_owner = ?",
		     fill_renew, &a, NULL, "renew leases", err))
		return SL_ERROR;
	return write_tx(st, "UPDATE runs SET heartbeat = ? WHERE owner = ?", fill_beat, &a, NULL,
			"renew leases", err);
}

void sl_lease_holders_free(sl_lease_holder *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].owner);
	free(v);
}

static void read_holder(sqlite3_stmt *s, void *row)
{
	sl_lease_holder *h = row;

	h->owner = sl_store_col_text(s, 0);
	h->targets = sqlite3_column_int64(s, 1);
	h->expires_ms = sqlite3_column_int64(s, 2);
}

/* Leases on the campaign's unfinished targets, live ones or expired ones, by holder. */
static int list_leases(sl_store *st, int64_t campaign_id, int64_t now_ms, int expired,
		       sl_lease_holder **out, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, expired ?
			       "SELECT lease_owner, count(*), max(lease_expires) FROM targets "
			       "WHERE campaign_id = ? AND lease_owner IS NOT NULL AND "
			       "lease_expires < ? AND state IN ('pending', 'budget') "
			       "GROUP BY lease_owner ORDER BY lease_owner" :
			       "SELECT lease_owner, count(*), max(lease_expires) FROM targets "
			       "WHERE campaign_id = ? AND lease_owner IS NOT NULL AND "
			       "lease_expires >= ? AND state IN ('pending', 'budget') "
			       "GROUP BY lease_owner ORDER BY lease_owner", err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sqlite3_bind_int64(s, 2, now_ms);
	}
	return sl_store_rows(st, s, sizeof(**out), read_holder, (void **)out, n, "list leases",
			     err);
}

int sl_lease_holders(sl_store *st, int64_t campaign_id, int64_t now_ms,
		     sl_lease_holder **out, size_t *n, sl_err *err)
{
	return list_leases(st, campaign_id, now_ms, 0, out, n, err);
}

int sl_lease_expired(sl_store *st, int64_t campaign_id, int64_t now_ms,
		     sl_lease_holder **out, size_t *n, sl_err *err)
{
	return list_leases(st, campaign_id, now_ms, 1, out, n, err);
}

int sl_lease_last_budget(sl_store *st, int64_t campaign_id, int64_t *tokens, double *cost,
			 sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*tokens = 0;
	*cost = 0;
	if (!(s = sl_store_prepare(st, "SELECT budget_tokens, budget_cost FROM runs "
			       "WHERE campaign_id = ? ORDER BY id DESC LIMIT 1", err)))
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*tokens = sqlite3_column_int64(s, 0);
		*cost = sqlite3_column_double(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "read runs");
}

int sl_lease_stale_digest(sl_store *st, int64_t campaign_id, const char *digest,
			  int64_t *count, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*count = 0;
	if (!(s = sl_store_prepare(st, "SELECT count(*) FROM targets WHERE "
			       "campaign_id = ? AND digest IS NOT NULL AND digest <> ? AND state "
			       "IN ('proposed', 'failed', 'rejected')", err)))
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	sl_store_bind_text(s, 2, digest);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*count = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "count digests");
}

int sl_lease_set_digest(sl_store *st, int64_t target_id, const char *digest, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "UPDATE targets SET digest = ? WHERE id = ?", err);

	if (s) {
		sl_store_bind_text(s, 1, digest);
		sqlite3_bind_int64(s, 2, target_id);
	}
	return sl_store_exec(st, s, "record digest", err);
}

/* One statement of a send-back, bound to (reason, time, target). */
static int send_back_step(sl_store *st, const char *sql, const char *reason, const char *now,
			  int64_t target_id, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, sql, err);

	if (s) {
		sl_store_bind_text(s, 1, reason);
		sl_store_bind_text(s, 2, now);
		sqlite3_bind_int64(s, 3, target_id);
	}
	return sl_store_exec(st, s, "send back", err);
}

int sl_lease_send_back(sl_store *st, int64_t target_id, const char *reason, int *sent,
		       sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char now[32];
	int ret = SL_ERROR, found = 0, state = SL_T_ANY;

	*sent = 0;
	sl_iso8601_now(now);
	if (sl_store_begin(st, err))
		return SL_ERROR;
	if (!(s = sl_store_prepare(st, "SELECT state FROM targets WHERE id = ?", err)))
		goto done;
	sqlite3_bind_int64(s, 1, target_id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		found = 1;
		state = sl_target_state_parse((const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	if (!found) {
		ret = sl_err_set(err, SL_ENOTFOUND, "no target %lld", (long long)target_id);
		goto done;
	}
	if (state == SL_T_ACCEPTED) {
		ret = sl_err_set(err, SL_EINPUT, "target %lld was accepted; reject its candidate "
				 "first", (long long)target_id);
		goto done;
	}
	if (state == SL_T_PENDING) {
		ret = sl_store_commit(st, err);
		goto out;
	}
	if (state == SL_T_PROPOSED &&
	    send_back_step(st, "INSERT INTO decisions (candidate_id, decision, reason, decided_at) "
			   "SELECT id, 'reject', ?, ? FROM candidates WHERE target_id = ? AND "
			   "state = 'passed'", reason, now, target_id, err))
		goto done;
	if (send_back_step(st, "UPDATE targets SET state = 'pending', attempt_base = attempts, "
			   "reason = ?, lease_owner = NULL, lease_expires = NULL, digest = NULL, "
			   "updated_at = ? WHERE id = ?", reason, now, target_id, err))
		goto done;
	if ((ret = sl_store_commit(st, err)))
		goto out;
	*sent = 1;
	goto out;
done:
	sl_store_rollback(st);
out:
	return ret;
}

int sl_lease_is_stale(sl_store *st, int64_t target_id, int *stale, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*stale = 0;
	if (!(s = sl_store_prepare(st, "SELECT t.digest IS NOT NULL AND t.digest <> (SELECT "
				   "r.digest FROM runs r WHERE r.campaign_id = t.campaign_id ORDER BY "
				   "r.id DESC LIMIT 1) AND t.state IN ('proposed', 'failed', "
				   "'rejected') FROM targets t WHERE t.id = ?", err)))
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, target_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*stale = sqlite3_column_int(s, 0) == 1;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "read digest");
}
