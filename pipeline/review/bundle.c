/*
 * bundle.c - proposed candidates' branches as a git bundle, read back into
 * another repository, and the branches made there (bundle.h).
 *
 * A v2 bundle is a header ("# v2 git bundle", one "-OID COMMENT" line per
 * prerequisite, one "OID REFNAME" line per ref, an empty line) followed by
 * a pack.  The pack is made by libgit2's packbuilder from a walk of the
 * candidates' commits with the base hidden (so it holds what the candidates
 * add, not the repository), and read with the object database's writepack,
 * which indexes it as git index-pack would.  Reads: the store, the
 * repository; writes: the bundle file, or objects and branches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/bundle.h"
#include "pipeline/apply/apply.h"
#include "common/buf.h"
#include "common/util.h"


/* The pack of the commits in v (and what they add to base), in *pack. */
static int pack_commits(git_buf *pack, git_repository *repo, const git_oid *v, size_t n,
			const git_oid *base)
{
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	int rc;

	if ((rc = git_packbuilder_new(&pb, repo)) || (rc = git_revwalk_new(&walk, repo)))
		goto done;
	git_packbuilder_set_threads(pb, 1);
	for (size_t i = 0; !rc && i < n; i++)
		rc = git_revwalk_push(walk, &v[i]);
	if (!rc && base)
		rc = git_revwalk_hide(walk, base);
	if (!rc)
		rc = git_packbuilder_insert_walk(pb, walk);
	if (!rc)
		rc = git_packbuilder_write_buf(pack, pb);
done:
	git_revwalk_free(walk);
	git_packbuilder_free(pb);
	return rc;
}

int sl_bundle_write(sl_store *st, const sl_campaign_rec *camp, git_repository *repo,
		    const char *path, size_t *count, sl_err *err)
{
	sl_candidate_rec *c = NULL;
	size_t nc = 0, n = 0;
	git_oid *oids = NULL, base;
	git_buf pack = { 0 };
	sl_buf out = SL_BUF_INIT;
	int ret = SL_ERROR, has_base;
	git_odb *odb = NULL;

	*count = 0;
	if (sl_store_candidates(st, camp->id, SL_C_PASSED, &c, &nc, err))
		goto done;
	if (git_repository_odb(&odb, repo)) {
		sl_err_set(err, SL_ERROR, "cannot read objects: %s", sl_git_error());
		goto done;
	}
	has_base = !git_oid_fromstr(&base, camp->base_oid) && git_odb_exists(odb, &base);
	oids = sl_xcalloc(nc + 1, sizeof(*oids));
	sl_buf_adds(&out, "# v2 git bundle\n");
	if (has_base)
		sl_buf_addf(&out, "-%s base of campaign %s\n", camp->base_oid, camp->name);
	for (size_t i = 0; i < nc; i++) {
		if (!c[i].branch)
			continue;
		if (git_oid_fromstr(&oids[n], c[i].commit_oid) || !git_odb_exists(odb, &oids[n])) {
			ret = sl_err_set(err, SL_ENOTFOUND, "candidate %lld: commit %s is not in "
					 "'%s'", (long long)c[i].id, c[i].commit_oid,
					 git_repository_commondir(repo));
			goto done;
		}
		sl_buf_addf(&out, "%s refs/heads/%s\n", c[i].commit_oid, c[i].branch);
		n++;
	}
	sl_buf_addch(&out, '\n');
	if (pack_commits(&pack, repo, oids, n, has_base ? &base : NULL)) {
		sl_err_set(err, SL_ERROR, "cannot pack the candidates: %s", sl_git_error());
		goto done;
	}
	sl_buf_add(&out, pack.ptr, pack.size);
	if ((ret = sl_write_file(path, out.buf, out.len, err)))
		goto done;
	*count = n;
done:
	git_odb_free(odb);
	git_buf_dispose(&pack);
	sl_buf_release(&out);
	free(oids);
	sl_candidate_list_free(c, nc);
	return ret;
}

/* One header line into line (without its newline); 0 at the end of the file. */
static int header_line(FILE *f, sl_buf *line)
{
	int ch;

	sl_buf_reset(line);
	while ((ch = getc(f)) != EOF && ch != '\n') {
		if (line->len > 4096)
			return -1;
		sl_buf_addch(line, ch);
	}
	return ch == EOF ? 0 : 1;
}

/*
 * Read the header up to its empty line: check each prerequisite is in odb,
 * count the refs.  SL_EINPUT names what is wrong.
 */
static int read_header(FILE *f, git_odb *odb, const char *path, size_t *refs, sl_err *err)
{
	sl_buf line = SL_BUF_INIT;
	git_oid oid;
	int ret = SL_EINPUT, r;

	*refs = 0;
	if (header_line(f, &line) <= 0 || (strcmp(line.buf, "# v2 git bundle") &&
					  strcmp(line.buf, "# v3 git bundle"))) {
		sl_err_set(err, SL_EINPUT, "'%s' is not a git bundle", path);
		goto done;
	}
	while ((r = header_line(f, &line)) > 0 && line.len) {
		if (line.buf[0] == '@') {
			if (strcmp(line.buf, "@object-format=sha1")) {
				sl_err_set(err, SL_EINPUT, "bundle '%s': unsupported '%s'", path,
					   line.buf);
				goto done;
			}
			continue;
		}
		if (line.len < GIT_OID_HEXSZ + (line.buf[0] == '-') ||
		    git_oid_fromstrn(&oid, line.buf + (line.buf[0] == '-'), GIT_OID_HEXSZ)) {
			sl_err_set(err, SL_EINPUT, "bundle '%s': bad line '%.80s'", path, line.buf);
			goto done;
		}
		if (line.buf[0] != '-') {
			(*refs)++;
			continue;
		}
		if (!git_odb_exists(odb, &oid)) {
			sl_err_set(err, SL_EINPUT, "bundle '%s' needs commit %.12s, which the "
				   "repository lacks (the shard scoped another base?)", path,
				   line.buf + 1);
			goto done;
		}
	}
	if (r <= 0) {
		sl_err_set(err, SL_EINPUT, "bundle '%s' ends in its header", path);
		goto done;
	}
	ret = SL_OK;
done:
	sl_buf_release(&line);
	return ret;
}

/* The rest of f, a pack, into odb. */
static int read_pack(FILE *f, git_odb *odb, const char *path, sl_err *err)
{
	git_odb_writepack *wp = NULL;
	git_indexer_progress prog;
	char buf[65536];
	size_t got;
	int ret = SL_ERROR;

	memset(&prog, 0, sizeof(prog));
	if (git_odb_write_pack(&wp, odb, NULL, NULL))
		goto fail;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		if (wp->append(wp, buf, got, &prog))
			goto fail;
	if (ferror(f)) {
		sl_err_set(err, SL_ERROR, "cannot read '%s': %s", path, strerror(errno));
		goto done;
	}
	if (wp->commit(wp, &prog))
		goto fail;
	ret = SL_OK;
	goto done;
fail:
	ret = sl_err_set(err, SL_EINPUT, "bundle '%s': bad pack: %s", path, sl_git_error());
done:
	if (wp)
		wp->free(wp);
	return ret;
}

int sl_bundle_read(git_repository *repo, const char *path, size_t *refs, sl_err *err)
{
	FILE *f = fopen(path, "rb");
	git_odb *odb = NULL;
	int ret = SL_ERROR;

	*refs = 0;
	if (!f)
		return sl_err_set(err, SL_EINPUT, "cannot open bundle '%s': %s", path,
				  strerror(errno));
	if (git_repository_odb(&odb, repo)) {
		sl_err_set(err, SL_ERROR, "cannot read objects: %s", sl_git_error());
		goto done;
	}
	if ((ret = read_header(f, odb, path, refs, err)))
		goto done;
	/* a bundle with no branch carries an empty pack: nothing to add */
	ret = *refs ? read_pack(f, odb, path, err) : SL_OK;
done:
	git_odb_free(odb);
	fclose(f);
	return ret;
}

/* Where branch stands in repo: 0 absent, 1 at oid, 2 elsewhere; -1 on error. */
static int branch_state(git_repository *repo, const char *branch, const git_oid *oid)
{
	git_reference *ref = NULL, *res = NULL;
	sl_buf name = SL_BUF_INIT;
	int rc, state = -1;

	sl_buf_addf(&name, "refs/heads/%s", branch);
	rc = git_reference_lookup(&ref, repo, name.buf);
	if (rc == GIT_ENOTFOUND)
		state = 0;
	else if (!rc && !git_reference_resolve(&res, ref))
		state = git_oid_equal(git_reference_target(res), oid) ? 1 : 2;
	git_reference_free(res);
	git_reference_free(ref);
	sl_buf_release(&name);
	return state;
}

int sl_bundle_branches(sl_store *st, const sl_campaign_rec *camp, git_repository *repo,
		       sl_bundle_branches_counts *counts, sl_err *err)
{
	sl_candidate_rec *c = NULL;
	size_t nc = 0, n = 0;
	char **names = NULL;
	git_oid *oids = NULL;
	git_odb *odb = NULL;
	int ret = SL_ERROR;

	memset(counts, 0, sizeof(*counts));
	if (sl_store_candidates(st, camp->id, SL_C_PASSED, &c, &nc, err))
		goto done;
	if (git_repository_odb(&odb, repo)) {
		sl_err_set(err, SL_ERROR, "cannot read objects: %s", sl_git_error());
		goto done;
	}
	names = sl_xcalloc(nc + 1, sizeof(*names));
	oids = sl_xcalloc(nc + 1, sizeof(*oids));
	for (size_t i = 0; i < nc; i++) {
		int state;

		if (!c[i].branch || git_oid_fromstr(&oids[n], c[i].commit_oid))
			continue;
		if (!git_odb_exists(odb, &oids[n])) {
			counts->missing++;
			continue;
		}
		if ((state = branch_state(repo, c[i].branch, &oids[n])) < 0) {
			sl_err_set(err, SL_ERROR, "cannot read branch '%s': %s", c[i].branch,
				   sl_git_error());
			goto done;
		}
		if (state) {
			counts->present += state == 1;
			counts->other += state == 2;
			continue;
		}
		names[n++] = c[i].branch;
	}
	if (n && (ret = sl_branches_write_packed(repo, names, oids, n, err)))
		goto done;
	counts->made = n;
	ret = SL_OK;
done:
	git_odb_free(odb);
	free(names);
	free(oids);
	sl_candidate_list_free(c, nc);
	return ret;
}
