/*
 * pack.c - a pack of given objects, built by libgit2's packbuilder without
 * reading the repository's refs.
 *
 * The packbuilder writes the objects tags point at first, and finds them
 * with git_tag_foreach, which reads every ref: the whole packed-refs file
 * parsed at each pack and then held in the repository's refs cache.  A
 * campaign's file grows with every branch it writes, 150 bytes a branch in
 * that cache: a run of a million targets without gates grew by 100 MB and
 * slowed with the square of its branches (issue 29).  While the pack is
 * built, the repository's refs database is swapped for one that holds no
 * ref and takes none (the candidates' new objects have no tag anyway),
 * then put back.  The repository must not be used by another thread
 * meanwhile (a worker's own, in the run).
 */
#include <stdlib.h>
#include <git2.h>
#include <git2/sys/refdb_backend.h>
#include <git2/sys/repository.h>

#include "pipeline/apply/apply.h"
#include "common/util.h"

static int none(void)
{
	git_error_set_str(GIT_ERROR_REFERENCE, "no refs while a pack is built");
	return GIT_ENOTFOUND;
}

static int next_ref(git_reference **ref, git_reference_iterator *it)
{
	(void)ref;
	(void)it;
	return GIT_ITEROVER;
}

static int next_name(const char **name, git_reference_iterator *it)
{
	(void)name;
	(void)it;
	return GIT_ITEROVER;
}

static void iter_free(git_reference_iterator *it)
{
	free(it);
}

static int iter_new(git_reference_iterator **out, git_refdb_backend *be, const char *glob)
{
	git_reference_iterator *it = sl_xcalloc(1, sizeof(*it));

	(void)be;
	(void)glob;
	it->next = next_ref;
	it->next_name = next_name;
	it->free = iter_free;
	*out = it;
	return 0;
}

static int exists(int *out, git_refdb_backend *be, const char *name)
{
	(void)be;
	(void)name;
	*out = 0;
	return 0;
}

static int lookup(git_reference **out, git_refdb_backend *be, const char *name)
{
	(void)out, (void)be, (void)name;
	return none();
}

static int write_ref(git_refdb_backend *be, const git_reference *ref, int force,
		     const git_signature *who, const char *msg, const git_oid *old,
		     const char *old_target)
{
	(void)be, (void)ref, (void)force, (void)who, (void)msg, (void)old, (void)old_target;
	return none();
}

static int rename_ref(git_reference **out, git_refdb_backend *be, const char *old_name,
		      const char *new_name, int force, const git_signature *who, const char *msg)
{
	(void)out, (void)be, (void)old_name, (void)new_name, (void)force, (void)who, (void)msg;
	return none();
}

static int del(git_refdb_backend *be, const char *name, const git_oid *old_id,
	       const char *old_target)
{
	(void)be, (void)name, (void)old_id, (void)old_target;
	return none();
}

static int has_log(git_refdb_backend *be, const char *name)
{
	(void)be, (void)name;
	return 0;
}

static int ensure_log(git_refdb_backend *be, const char *name)
{
	(void)be, (void)name;
	return none();
}

static int reflog_read(git_reflog **out, git_refdb_backend *be, const char *name)
{
	(void)out, (void)be, (void)name;
	return none();
}

static int reflog_write(git_refdb_backend *be, git_reflog *reflog)
{
	(void)be, (void)reflog;
	return none();
}

static int reflog_rename(git_refdb_backend *be, const char *old_name, const char *new_name)
{
	(void)be, (void)old_name, (void)new_name;
	return none();
}

static int reflog_delete(git_refdb_backend *be, const char *name)
{
	(void)be, (void)name;
	return none();
}

static void backend_free(git_refdb_backend *be)
{
	free(be);
}

static const git_refdb_backend no_refs_backend = {
	.version = GIT_REFDB_BACKEND_VERSION,
	.exists = exists, .lookup = lookup, .iterator = iter_new, .write = write_ref,
	.rename = rename_ref, .del = del, .has_log = has_log, .ensure_log = ensure_log,
	.free = backend_free, .reflog_read = reflog_read, .reflog_write = reflog_write,
	.reflog_rename = reflog_rename, .reflog_delete = reflog_delete,
};

/* A refs database of repo that holds no ref. */
static int no_refs(git_refdb **out, git_repository *repo)
{
	git_refdb_backend *be = sl_xmalloc(sizeof(*be));
	int rc;

	*be = no_refs_backend;
	*out = NULL;
	if ((rc = git_refdb_new(out, repo))) {
		free(be);
	} else if ((rc = git_refdb_set_backend(*out, be))) {
		free(be);
		git_refdb_free(*out);
		*out = NULL;
	}
	return rc;
}

int sl_pack_objects(git_buf *pack, git_repository *repo, const git_oid *ids, size_t n)
{
	git_refdb *refs = NULL, *empty = NULL;
	git_packbuilder *pb = NULL;
	int rc;

	if ((rc = git_repository_refdb(&refs, repo)) || (rc = no_refs(&empty, repo)) ||
	    (rc = git_repository_set_refdb(repo, empty)))
		goto done;
	if (!(rc = git_packbuilder_new(&pb, repo))) {
		git_packbuilder_set_threads(pb, 1);
		for (size_t i = 0; !rc && i < n; i++)
			rc = git_packbuilder_insert(pb, &ids[i], NULL);
		if (!rc)
			rc = git_packbuilder_write_buf(pack, pb);
		git_packbuilder_free(pb);
	}
	if (git_repository_set_refdb(repo, refs) && !rc)
		rc = -1;
done:
	git_refdb_free(empty);
	git_refdb_free(refs);
	return rc;
}
