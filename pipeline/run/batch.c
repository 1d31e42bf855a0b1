/*
 * batch.c - a run without gates writes each worker's new objects to an
 * in-memory object database and flushes them as one pack per batch, then
 * the batch's branches in one packed-refs update (run_internal.h, objbatch).
 * Each proposed candidate is first appended to the worker's journal in the
 * scratch root (named by store, campaign, process and run start:
 * journal_name); the next run of the same store restores what a crash lost
 * (run_restore_journals: the commit is rebuilt from the diff the store
 * holds).  A queued name another store wrote meanwhile is left to it: the
 * candidate goes on the store's own name (batch_rename, restore_elsewhere).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2/sys/mempack.h>
#include <git2/sys/repository.h>

#include "pipeline/run/run_internal.h"
#include "storage/lease.h"

/* The calling worker's batch, or NULL when objects go straight to disk. */
_Thread_local objbatch *run_cur_batch;

/*
 * The mempack's write, noting each object: the flush packs exactly these.
 * (git_mempack_dump would add each commit's whole tree, every blob of the
 * base included: a walk of the whole tree per candidate.)
 */
static int batch_write(git_odb_backend *be, const git_oid *oid, const void *data, size_t len,
		       git_object_t type)
{
	objbatch *b = run_cur_batch;
	int rc;

	if (!b || b->mem != be) {
		git_error_set_str(GIT_ERROR_ODB, "object written outside its worker's batch");
		return GIT_ERROR;
	}
	if (!(rc = b->mem_write(be, oid, data, len, type))) {
		SL_ALLOC_GROW(b->written, b->nwritten + 1, b->awritten);
		git_oid_cpy(&b->written[b->nwritten++], oid);
		b->bytes += len;
	}
	return rc;
}

/*
 * A batch journal's name: journal-STORE-CAMPAIGN-PID-MS-SEQ, the store's id
 * and the campaign the run writes for (only a run of that store restores
 * it), the run's process and the wall-clock time its owner name carries (a
 * reused pid is told apart, sl_lease_pid_gone), and the worker's number.
 */
static void journal_name(sl_buf *out, const run_ctx *x, long pid, size_t seq)
{
	const char *ms = strrchr(x->owner, ':');

	sl_buf_addf(out, "%s/journal-%.*s-%lld-%ld-%s-%zu", x->scratch, SL_STORE_ID_LEN,
		    x->store_tag, (long long)x->campaign_id, pid, ms ? ms + 1 : "0", seq);
}

/*
 * The worker's object database: the loose objects, each pack there is now
 * (one_pack: never refreshed), then the batch's mempack.  With the
 * repository's own, every new object's write looked for it in every pack
 * and, missing, read the pack directory again and took in the packs
 * written since: each batch's pack, so a run of 1,000,000 targets searched
 * hundreds of packs per object and kept every one's index mapped (150 MB).
 * The worker never reads what another batch wrote (a candidate's objects
 * are the base's and its own); a branch's commit written since is read by
 * sl_commit_made_by from the directory.  A candidate's new object that a
 * pack already holds (another campaign's same change) is written to the
 * mempack all the same, not found and "freshened" in that pack: read back
 * from there, it filled each old pack's cache of delta bases (libgit2 keeps
 * up to 16 MB a pack, a second campaign of 100,000 targets over the first's
 * 1,200 packs grew by 80 MB), and each write touched a pack's mtime.  NULL
 * where objects live elsewhere too (alternates, GIT_OBJECT_DIRECTORY): the
 * repository's own then.
 */
/* A pack's freshen that never finds: a write goes on to the batch's mempack. */
static int pack_not_fresh(git_odb_backend *be, const git_oid *oid)
{
	(void)be;
	(void)oid;
	return GIT_ENOTFOUND;
}

static git_odb *worker_odb(git_repository *repo)
{
	sl_buf dir = SL_BUF_INIT, path = SL_BUF_INIT;
	git_odb *odb = NULL;
	git_odb_backend *be = NULL;
	DIR *d = NULL;
	struct dirent *de;
	int ok = 0;

	sl_buf_addf(&dir, "%sobjects", git_repository_commondir(repo));
	sl_buf_addf(&path, "%s/info/alternates", dir.buf);
	if (getenv("GIT_OBJECT_DIRECTORY") || getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES") ||
	    !access(path.buf, F_OK) || git_odb_new(&odb) ||
	    git_odb_backend_loose(&be, dir.buf, -1, 0, 0, 0) || git_odb_add_backend(odb, be, 1))
		goto done;
	be = NULL;
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/pack", dir.buf);
	if ((d = opendir(path.buf))) {
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);

			if (len < 5 || strcmp(de->d_name + len - 4, ".idx"))
				continue;
			sl_buf_reset(&path);
			sl_buf_addf(&path, "%s/pack/%s", dir.buf, de->d_name);
			if (git_odb_backend_one_pack(&be, path.buf))
				goto done;
			be->freshen = pack_not_fresh;
			if (git_odb_add_backend(odb, be, 2))
				goto done;
			be = NULL;
		}
	}
	ok = 1;
done:
	if (be && be->free)
		be->free(be);
	if (d)
		closedir(d);
	if (!ok) {
		git_odb_free(odb);
		odb = NULL;
	}
	sl_buf_release(&dir);
	sl_buf_release(&path);
	return odb;
}

int run_batch_open(objbatch *b, run_ctx *x, git_repository *repo, size_t seq, sl_err *err)
{
	git_odb *own;

	sl_buf path = SL_BUF_INIT;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	b->repo = repo;
	b->max = getenv("SLUICE_RUN_BATCH") && atoi(getenv("SLUICE_RUN_BATCH")) > 0 ?
		(size_t)atoi(getenv("SLUICE_RUN_BATCH")) : BATCH_MAX;
	journal_name(&path, x, (long)getpid(), seq);
	b->journal = sl_buf_detach(&path, NULL);
	if ((b->fd = open(b->journal, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
			  0600)) < 0)
		return sl_err_set(err, SL_ERROR, "cannot create '%s': %s", b->journal,
				  strerror(errno));
	if ((own = worker_odb(repo))) {
		git_repository_set_odb(repo, own);
		git_odb_free(own);
	}
	if (git_repository_odb(&b->odb, repo) || git_mempack_new(&b->mem) ||
	    git_odb_add_backend(b->odb, b->mem, 1000)) {
		if (b->mem && b->mem->free)
			b->mem->free(b->mem);
		b->mem = NULL;
		return sl_err_set(err, SL_ERROR, "cannot set up an object database in memory: %s",
				  sl_git_error());
	}
	b->mem_write = b->mem->write;
	b->mem->write = batch_write;
	return SL_OK;
}

/* Forget queued branch i: the flush will not write it. */
static void batch_forget(objbatch *b, size_t i)
{
	size_t rest = b->n - i - 1;

	free(b->branch[i]);
	memmove(b->branch + i, b->branch + i + 1, rest * sizeof(*b->branch));
	memmove(b->commit + i, b->commit + i + 1, rest * sizeof(*b->commit));
	memmove(b->target + i, b->target + i + 1, rest * sizeof(*b->target));
	memmove(b->epoch + i, b->epoch + i + 1, rest * sizeof(*b->epoch));
	b->n--;
}

/*
 * Under git_lock, before the flush writes the branches: forget those of
 * targets another run took over since they were queued (the check and the
 * write one step, as fenced_branch), so that run's branch is left alone
 * and the others are written.
 */
static int batch_drop_lost(run_ctx *x, objbatch *b, sl_err *err)
{
	for (size_t i = b->n; i-- > 0;) {
		int r = sl_lease_check(x->st, b->target[i], x->owner, b->epoch[i], err);

		if (r && r != SL_ELEASE)
			return r;
		if (!r)
			continue;
		pthread_mutex_lock(&x->lock);
		x->lost++;
		pthread_mutex_unlock(&x->lock);
		run_notice(x, "branch '%s' left to another run: %s", b->branch[i], err->msg);
		sl_err_clear(err);
		batch_forget(b, i);
	}
	return SL_OK;
}

/* Branches taken under this store's own names, and their commits. */
typedef struct renamed {
	sl_strvec branch;
	git_oid *commit;
	size_t alloc;
} renamed;

/*
 * Queued branch i, which another store (or the user) wrote since it was
 * queued: its candidate goes on this store's own name for it
 * (run_store_branch, with a notice), noted in the journal (the pack holds
 * its commit already: the source is not needed to rebuild it) and in the
 * store before the branch is written, so that a crash in between restores
 * it under that name.
 */
static int batch_rename(run_ctx *x, objbatch *b, size_t i, renamed *out, sl_err *err)
{
	sl_target_rec rec = { 0 };
	sl_buf line = SL_BUF_INIT;
	char hex[GIT_OID_HEXSZ + 1];
	char *name = sl_xstrdup(b->branch[i]);
	int ret;

	git_oid_tostr(hex, sizeof(hex), &b->commit[i]);
	if ((ret = sl_store_target_get(x->st, b->target[i], &rec, err)) ||
	    !run_store_branch(x, &rec, &name))
		goto done;
	sl_buf_addf(&line, "%s - %s\n", hex, name);
	if (sl_write_all(b->fd, line.buf, line.len)) {
		ret = sl_err_set(err, SL_ERROR, "cannot write '%s': %s", b->journal,
				 strerror(errno));
		goto done;
	}
	if ((ret = sl_store_candidate_set_branch(x->st, b->target[i], hex, name, err)))
		goto done;
	SL_ALLOC_GROW(out->commit, out->branch.n + 1, out->alloc);
	git_oid_cpy(&out->commit[out->branch.n], &b->commit[i]);
	sl_strvec_push(&out->branch, name);
done:
	sl_target_rec_release(&rec);
	sl_buf_release(&line);
	free(name);
	return ret;
}

/*
 * The batch's branches in one packed-refs update.  Where a branch now holds
 * another commit: another store's (or the user's) is left alone and the
 * candidate goes on this store's own name; another run of this store wrote
 * it when it took the target over: that run's.
 */
static int batch_branches(run_ctx *x, objbatch *b, sl_err *err)
{
	renamed moved = { SL_STRVEC_INIT, NULL, 0 };
	int ret = sl_branches_write_packed(b->repo, b->branch, b->commit, b->n, err);

	if (ret != SL_ELEASE)
		return ret;
	sl_err_clear(err);
	ret = SL_OK;
	for (size_t i = 0; i < b->n && !ret; i++) {
		git_oid at;
		enum sl_holder h = sl_branch_holder(b->repo, b->branch[i], x->store_tags, &at);

		if (h == SL_HOLDER_OTHER)
			ret = batch_rename(x, b, i, &moved, err);
		else if (h == SL_HOLDER_MINE && !git_oid_equal(&at, &b->commit[i]))
			run_notice(x, "branch '%s' points at a commit another run wrote; left "
				   "alone", b->branch[i]);
	}
	if (!ret && moved.branch.n &&
	    (ret = sl_branches_write_packed(b->repo, moved.branch.v, moved.commit,
					    moved.branch.n, err)) == SL_ELEASE) {
		/* the store's own name taken too, by a run of this store: left to it */
		run_notice(x, "%s", err->msg);
		sl_err_clear(err);
		ret = SL_OK;
	}
	sl_strvec_release(&moved.branch);
	free(moved.commit);
	return ret;
}

/*
 * The batch's objects as one pack in the repository, through an object
 * database of its own: the worker's never takes the pack in.
 */
static int write_pack(objbatch *b, const char *objects)
{
	static int fails;
	git_buf pack = { 0 };
	git_odb_writepack *wp = NULL;
	git_odb *dir = NULL;
	git_indexer_progress prog;
	int rc;

	memset(&prog, 0, sizeof(prog));
	/* tests: the first N pack writes of the run fail (under git_lock) */
	if (getenv("SLUICE_TEST_PACK_FAILS") && fails++ < atoi(getenv("SLUICE_TEST_PACK_FAILS"))) {
		git_error_set_str(GIT_ERROR_INDEXER, "made to fail (SLUICE_TEST_PACK_FAILS)");
		return -1;
	}
	rc = sl_pack_objects(&pack, b->repo, b->written, b->nwritten) ||
		git_odb_open(&dir, objects) || git_odb_write_pack(&wp, dir, NULL, NULL) ||
		wp->append(wp, pack.ptr, pack.size, &prog) || wp->commit(wp, &prog);
	if (wp)
		wp->free(wp);
	git_odb_free(dir);
	git_buf_dispose(&pack);
	return rc;
}

/* Write the batch's objects as one pack, then its branches; empty the journal. */
int run_batch_flush(run_ctx *x, objbatch *b, sl_err *err)
{
	sl_buf objects = SL_BUF_INIT;
	int ret = SL_ERROR;

	if (!b->mem || !b->count)
		return SL_OK;
	run_git_lock_take(x);
	if (batch_drop_lost(x, b, err))
		goto done;
	sl_buf_addf(&objects, "%sobjects", git_repository_commondir(b->repo));
	/*
	 * Once, 38,000 targets into a million-target run, libgit2's indexer
	 * refused a pack its packbuilder had just made ("unexpected data at
	 * the end of the pack"; not understood, never seen in runs of 100,000):
	 * the pack is built and written once more before the run fails.
	 */
	if (write_pack(b, objects.buf)) {
		run_notice(x, "writing a pack of %zu candidates failed (%s); once more",
			   b->count, sl_git_error());
		if (write_pack(b, objects.buf)) {
			sl_err_set(err, SL_ERROR, "cannot write a pack of candidates: %s",
				   sl_git_error());
			goto done;
		}
	}
	if (batch_branches(x, b, err))
		goto done;
	git_mempack_reset(b->mem);
	b->nwritten = 0;
	if (ftruncate(b->fd, 0)) {
		sl_err_set(err, SL_ERROR, "cannot truncate '%s': %s", b->journal, strerror(errno));
		goto done;
	}
	for (size_t i = 0; i < b->n; i++)
		free(b->branch[i]);
	b->n = b->count = b->bytes = 0;
	/* the batch's objects were this worker's arena: give the pages back */
	malloc_trim(0);
	ret = SL_OK;
done:
	run_git_lock_give(x);
	sl_buf_release(&objects);
	return ret;
}

/*
 * Queue a proposed candidate's branch (for target_id, held with the
 * worker's lease epoch): journal first, then memory.
 */
int run_batch_queue(objbatch *b, int64_t target_id, const char *branch,
		    const git_oid *commit, const char *source, sl_err *err)
{
	char hex[GIT_OID_HEXSZ + 1];
	sl_buf line = SL_BUF_INIT;
	int ret = SL_OK;

	git_oid_tostr(hex, sizeof(hex), commit);
	sl_buf_addf(&line, "%s %s %s\n", hex, source, branch);
	if (sl_write_all(b->fd, line.buf, line.len))
		ret = sl_err_set(err, SL_ERROR, "cannot write '%s': %s", b->journal,
				 strerror(errno));
	sl_buf_release(&line);
	if (ret)
		return ret;
	if (b->n == b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 64;
		b->branch = sl_xrealloc(b->branch, sl_st_mult(b->alloc, sizeof(*b->branch)));
		b->commit = sl_xrealloc(b->commit, sl_st_mult(b->alloc, sizeof(*b->commit)));
		b->target = sl_xrealloc(b->target, sl_st_mult(b->alloc, sizeof(*b->target)));
		b->epoch = sl_xrealloc(b->epoch, sl_st_mult(b->alloc, sizeof(*b->epoch)));
	}
	b->branch[b->n] = sl_xstrdup(branch);
	b->target[b->n] = target_id;
	b->epoch[b->n] = run_cur_epoch;
	git_oid_cpy(&b->commit[b->n++], commit);
	return SL_OK;
}

/*
 * Forget a queued branch whose candidate the store did not record: the next
 * flush must not create it.  Its journal line stays; restore_line skips it.
 */
void run_batch_unqueue(objbatch *b, const char *branch)
{
	for (size_t i = b->n; i-- > 0;) {
		if (!strcmp(b->branch[i], branch)) {
			batch_forget(b, i);
			return;
		}
	}
}

/*
 * Tests (SLUICE_TEST_STOP_BEFORE_FLUSH): stop the whole process once every
 * worker waits to flush and the lease keeper is not writing, so that no
 * thread holds a store transaction while the test works on the store.  The
 * last worker to arrive raises SIGSTOP holding x->lock; after SIGCONT the
 * workers flush.
 */
static void stop_for_test(run_ctx *x)
{
	pthread_mutex_lock(&x->lock);
	if (++x->at_flush < x->nworkers) {
		while (x->at_flush && x->at_flush < x->nworkers)
			pthread_cond_wait(&x->end_cond, &x->lock);
		pthread_mutex_unlock(&x->lock);
		return;
	}
	while (x->renewing)
		pthread_cond_wait(&x->end_cond, &x->lock);
	raise(SIGSTOP);
	x->at_flush = 0;
	pthread_cond_broadcast(&x->end_cond);
	pthread_mutex_unlock(&x->lock);
}

/* Flush what is left; the journal goes once everything it holds is on disk. */
int run_batch_close(run_ctx *x, objbatch *b, sl_err *err)
{
	int ret = SL_OK;

	if (b->mem && getenv("SLUICE_TEST_KILL_BEFORE_FLUSH"))
		raise(SIGKILL);
	if (b->mem && getenv("SLUICE_TEST_STOP_BEFORE_FLUSH"))
		stop_for_test(x);
	if (b->mem)
		ret = run_batch_flush(x, b, err);
	if (b->fd >= 0)
		close(b->fd);
	if (!ret && b->journal)
		unlink(b->journal);
	for (size_t i = 0; i < b->n; i++)
		free(b->branch[i]);
	free(b->branch);
	free(b->commit);
	free(b->target);
	free(b->epoch);
	free(b->written);
	free(b->journal);
	git_odb_free(b->odb);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	return ret;
}

/*
 * 1 if the journal called name is this store's and campaign's and the run
 * that wrote it is gone: its pid free, or reused since the run named itself
 * (this very process, say, in a container that gives each run the same
 * pid).  A journal of the form journal-PID-SEQ (a sluice from before
 * journals named their store) is restored by the first run that finds PID
 * gone, whatever its store, as then.
 */
static int journal_orphaned(const run_ctx *x, const char *name)
{
	char id[SL_STORE_ID_LEN + 1], tail;
	long long camp, ms;
	long pid;
	size_t seq;

	if (sscanf(name, "journal-%16[0-9a-f]-%lld-%ld-%lld-%zu%c", id, &camp, &pid, &ms, &seq,
		   &tail) == 5)
		return strlen(id) == SL_STORE_ID_LEN &&
			!strncmp(id, x->store_tag, SL_STORE_ID_LEN) && camp == x->campaign_id &&
			sl_lease_pid_gone(pid, ms);
	if (sscanf(name, "journal-%ld-%zu%c", &pid, &seq, &tail) != 2 || pid <= 0 ||
	    pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* The branches a journal gives back, written as one packed-refs update. */
typedef struct restored {
	sl_strvec branch;
	git_oid *commit;
	size_t alloc;
} restored;

/*
 * The branch of candidate cr holds a commit another store (or the user)
 * wrote since the crash: the candidate goes on this store's own name for
 * it (PREFIX-ID8/..., as run_store_branch() names it), recorded so; *branch
 * NULL when there is none to take (that one exists too).
 */
static int restore_elsewhere(run_ctx *x, sl_candidate_rec *cr, char **branch, sl_err *err)
{
	const char *prefix = x->c->spec->branch_prefix;
	size_t plen = strlen(prefix);
	sl_buf own = SL_BUF_INIT;
	int ret = SL_OK;

	if (strncmp(*branch, prefix, plen) || (*branch)[plen] != '/') {
		*branch = NULL;
		return SL_OK;
	}
	sl_buf_addf(&own, "%s-%.8s%s", prefix, x->store_tag, *branch + plen);
	if (sl_branch_holder(x->c->repo, own.buf, x->store_tag, NULL) != SL_HOLDER_NONE) {
		*branch = NULL;
		goto done;
	}
	run_notice(x, "branch '%s' is held by another store (its commit does not name this "
		   "one): left alone; this store's candidate %lld goes on branch '%s'", *branch,
		   (long long)cr->id, own.buf);
	if ((ret = sl_store_candidate_set_branch(x->st, cr->target_id, cr->commit_oid, own.buf,
						 err)))
		goto done;
	free(cr->branch);
	cr->branch = sl_buf_detach(&own, NULL);
	*branch = cr->branch;
done:
	sl_buf_release(&own);
	return ret;
}

/* Restore one journal line "COMMIT SOURCE BRANCH" of a crashed run (its branch into out). */
static int restore_line(run_ctx *x, char *line, sl_candidate_rec *cands, size_t ncands,
			restored *out, sl_err *err)
{
	git_repository *repo = x->c->repo;
	char *src = strchr(line, ' '), *branch = src ? strchr(src + 1, ' ') : NULL;
	git_reference *ref = NULL;
	git_commit *c = NULL;
	sl_candidate_rec *cr = NULL;
	git_oid oid;
	sl_buf name = SL_BUF_INIT, msg = SL_BUF_INIT;
	int ret = SL_OK, exists;

	if (!branch)
		return SL_OK;
	*src++ = '\0';
	*branch++ = '\0';
	if (git_oid_fromstr(&oid, line))
		goto done;
	/* written by the crashed run's flush, or by another run of this store */
	sl_buf_addf(&name, "refs/heads/%s", branch);
	exists = !git_reference_lookup(&ref, repo, name.buf);
	if (exists && sl_branch_holder(repo, branch, x->store_tags, NULL) != SL_HOLDER_OTHER)
		goto done;
	for (size_t i = 0; i < ncands && !cr; i++)
		if (cands[i].commit_oid && !strcmp(cands[i].commit_oid, line) &&
		    cands[i].branch && !strcmp(cands[i].branch, branch))
			cr = &cands[i];
	/* never recorded (the store failed, or the kill came first): its commit
	   may be in a pack all the same, but nothing was proposed */
	if (!cr || (exists && (ret = restore_elsewhere(x, cr, &branch, err))) || !branch)
		goto done;
	if (git_commit_lookup(&c, repo, &oid)) {
		/* its pack was never written: rebuild it from the stored diff */
		char hex[GIT_OID_HEXSZ + 1];

		if (!cr->diff)
			goto done;
		run_candidate_message(&msg, x, cr->path, (long long)cr->start_line,
				      (long long)cr->end_line, (long long)cr->attempt_n, src);
		if ((ret = sl_commit_from_diff(&oid, repo, &x->c->base, cr->diff, msg.buf, err)))
			goto done;
		git_oid_tostr(hex, sizeof(hex), &oid);
		if ((ret = sl_store_candidate_set_commit(x->st, cr->id, hex, err)))
			goto done;
	}
	SL_ALLOC_GROW(out->commit, out->branch.n + 1, out->alloc);
	git_oid_cpy(&out->commit[out->branch.n], &oid);
	sl_strvec_push(&out->branch, branch);
done:
	git_commit_free(c);
	git_reference_free(ref);
	sl_buf_release(&name);
	sl_buf_release(&msg);
	return ret;
}

/* Read one orphaned journal's lines into got. */
static int restore_journal(run_ctx *x, const char *path, sl_candidate_rec *cands,
			   size_t ncands, restored *got, sl_err *err)
{
	sl_buf text = SL_BUF_INIT;
	char *line, *next;
	int ret;

	if ((ret = sl_read_file(&text, path, 0, err)))
		goto done;
	for (line = text.buf; !ret && line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		ret = restore_line(x, line, cands, ncands, got, err);
	}
done:
	sl_buf_release(&text);
	return ret;
}

/*
 * Give the candidates crashed runs proposed without flushing them their
 * commits and branches: every orphaned journal read, the branches written
 * in one packed-refs update, then the journals removed.  Under git_lock:
 * other runs starting now see the same journals; one restores them and the
 * others find them gone.
 */
int run_restore_journals(run_ctx *x, sl_err *err)
{
	DIR *d = opendir(x->scratch);
	struct dirent *de;
	sl_candidate_rec *cands = NULL;
	sl_strvec done = SL_STRVEC_INIT;
	restored got = { SL_STRVEC_INIT, NULL, 0 };
	size_t ncands = 0;
	int loaded = 0, ret = SL_OK;

	if (!d)
		return SL_OK;
	run_git_lock_take(x);
	while (!ret && (de = readdir(d))) {
		char *path;

		if (strncmp(de->d_name, "journal-", 8) || !journal_orphaned(x, de->d_name))
			continue;
		path = sl_path_join(x->scratch, de->d_name);
		if (!loaded)
			ret = sl_store_candidates(x->st, x->campaign_id, SL_C_PASSED, &cands,
						  &ncands, err);
		loaded = 1;
		if (!ret && !(access(path, F_OK) && errno == ENOENT) &&
		    !(ret = restore_journal(x, path, cands, ncands, &got, err)))
			sl_strvec_push(&done, path);
		free(path);
	}
	if (!ret)
		ret = sl_branches_write_packed(x->c->repo, got.branch.v, got.commit, got.branch.n,
					       err);
	for (size_t i = 0; !ret && i < done.n; i++)
		unlink(done.v[i]);
	run_git_lock_give(x);
	closedir(d);
	sl_strvec_release(&done);
	sl_strvec_release(&got.branch);
	free(got.commit);
	sl_candidate_list_free(cands, ncands);
	return ret;
}
