/*
 * refs.c - many candidate branches written at once, as packed refs.
 *
 * Reads the repository's packed-refs file (in the common git directory)
 * and writes it again with the new branches merged in, sorted by name, the
 * way git itself updates it: under packed-refs.lock (created exclusively,
 * so git, libgit2 and other sluice runs wait for each other), renamed over
 * packed-refs.  A loose ref of the same name would hide the packed one, so
 * it is removed afterwards.  One file rewritten per batch instead of one
 * loose file per branch: a campaign of 100,000 targets leaves one file,
 * not 100,000 under refs/heads.
 *
 * Calling sequence: write the commits (they must be in the object database
 * first), then sl_branches_write_packed().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/apply/apply.h"
#include "common/util.h"

#define PACKED_HEADER "# pack-refs with: peeled fully-peeled sorted \n"

/* One ref of the file: its name and its lines (the ref and its "^" peel line). */
typedef struct packed_ent {
	const char *name;           /* borrowed from the text it came from */
	size_t name_len;
	const char *text;
	size_t text_len;
	int is_new;
} packed_ent;

static int cmp_ent(const void *a, const void *b)
{
	const packed_ent *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return y->is_new - x->is_new;           /* the new one first: it wins */
}

/* Split the file's text into entries; *header_len gets the length of its "#" line. */
static int parse_packed(packed_ent **v, size_t *n, size_t *alloc, const sl_buf *file,
			size_t *header_len, const char *path, sl_err *err)
{
	size_t pos = 0, lineno = 0;

	*header_len = 0;
	while (pos < file->len) {
		const char *s = file->buf + pos, *nl = memchr(s, '\n', file->len - pos);
		size_t len = nl ? (size_t)(nl - s) + 1 : file->len - pos;

		lineno++;
		if (lineno == 1 && *s == '#') {
			*header_len = len;
		} else if (*s == '^' && *n) {
			(*v)[*n - 1].text_len += len;
		} else if (len > GIT_OID_HEXSZ + 1 && s[GIT_OID_HEXSZ] == ' ') {
			packed_ent *e;

			SL_ALLOC_GROW(*v, *n + 1, *alloc);
			e = &(*v)[(*n)++];
			e->name = s + GIT_OID_HEXSZ + 1;
			e->name_len = len - GIT_OID_HEXSZ - 1 - (nl ? 1 : 0);
			e->text = s;
			e->text_len = len;
			e->is_new = 0;
		} else {
			return sl_err_set(err, SL_ERROR, "%s:%zu: not a packed ref", path, lineno);
		}
		pos += len;
	}
	return SL_OK;
}

/* Create the lock file, waiting (bounded: about 10 s) while another writer holds it. */
static int take_lock(int *fd_out, const char *lock, sl_err *err)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 1000; i++) {
		int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);

		if (fd >= 0) {
			*fd_out = fd;
			return SL_OK;
		}
		if (errno != EEXIST)
			break;
		nanosleep(&ts, NULL);
	}
	return sl_err_set(err, SL_ERROR, "cannot lock '%s': %s", lock, strerror(errno));
}

int sl_branches_write_packed(git_repository *repo, char *const *branch, const git_oid *commit,
			     size_t n, sl_err *err)
{
	const char *dir = git_repository_commondir(repo);
	sl_buf path = SL_BUF_INIT, lock = SL_BUF_INIT, file = SL_BUF_INIT, names = SL_BUF_INIT;
	sl_buf out = SL_BUF_INIT, loose = SL_BUF_INIT;
	packed_ent *v = NULL;
	size_t nv = 0, av = 0, header_len = 0, *name_off = NULL;
	sl_err rerr = SL_ERR_INIT;
	int fd = -1, locked = 0, rc, ret = SL_ERROR;

	if (!n)
		return SL_OK;
	sl_buf_addf(&path, "%spacked-refs", dir);
	sl_buf_addf(&lock, "%spacked-refs.lock", dir);
	/* the new lines first, in one buffer: entries point into it */
	name_off = sl_xcalloc(n, sizeof(*name_off));
	for (size_t i = 0; i < n; i++) {
		char hex[GIT_OID_HEXSZ + 1];
		int valid = 0;

		sl_buf_reset(&loose);
		sl_buf_addf(&loose, "refs/heads/%s", branch[i]);
		if (git_reference_name_is_valid(&valid, loose.buf) < 0 || !valid) {
			sl_err_set(err, SL_ERROR, "cannot create branch '%s': not a valid name",
				   branch[i]);
			goto done;
		}
		git_oid_tostr(hex, sizeof(hex), &commit[i]);
		name_off[i] = names.len;
		sl_buf_addf(&names, "%s %s\n", hex, loose.buf);
	}
	if (take_lock(&fd, lock.buf, err))
		goto done;
	locked = 1;
	if ((rc = sl_read_file(&file, path.buf, 0, &rerr)) && rc != SL_ENOTFOUND) {
		sl_err_set(err, SL_ERROR, "%s", rerr.msg);
		goto done;
	}
	if (parse_packed(&v, &nv, &av, &file, &header_len, path.buf, err))
		goto done;
	for (size_t i = 0; i < n; i++) {
		packed_ent *e;
		size_t end = i + 1 < n ? name_off[i + 1] : names.len;

		SL_ALLOC_GROW(v, nv + 1, av);
		e = &v[nv++];
		e->text = names.buf + name_off[i];
		e->text_len = end - name_off[i];
		e->name = e->text + GIT_OID_HEXSZ + 1;
		e->name_len = e->text_len - GIT_OID_HEXSZ - 2;
		e->is_new = 1;
	}
	qsort(v, nv, sizeof(*v), cmp_ent);
	if (header_len)
		sl_buf_add(&out, file.buf, header_len);
	else
		sl_buf_adds(&out, PACKED_HEADER);
	for (size_t i = 0; i < nv; i++) {
		if (i && v[i].name_len == v[i - 1].name_len &&
		    !memcmp(v[i].name, v[i - 1].name, v[i].name_len))
			continue;       /* an older line of a ref just written */
		sl_buf_add(&out, v[i].text, v[i].text_len);
	}
	if (sl_write_all(fd, out.buf, out.len) || close(fd)) {
		fd = -1;
		sl_err_set(err, SL_ERROR, "cannot write '%s': %s", lock.buf, strerror(errno));
		goto done;
	}
	fd = -1;
	if (rename(lock.buf, path.buf)) {
		sl_err_set(err, SL_ERROR, "cannot rename '%s': %s", lock.buf, strerror(errno));
		goto done;
	}
	locked = 0;
	/* a loose ref of the same name (an earlier run's) would hide the packed one */
	for (size_t i = 0; i < n; i++) {
		sl_buf_reset(&loose);
		sl_buf_addf(&loose, "%srefs/heads/%s", dir, branch[i]);
		if (unlink(loose.buf) && errno != ENOENT) {
			sl_err_set(err, SL_ERROR, "cannot remove '%s': %s", loose.buf,
				   strerror(errno));
			goto done;
		}
	}
	ret = SL_OK;
done:
	if (fd >= 0)
		close(fd);
	if (locked)
		unlink(lock.buf);
	free(v);
	free(name_off);
	sl_buf_release(&path);
	sl_buf_release(&lock);
	sl_buf_release(&file);
	sl_buf_release(&names);
	sl_buf_release(&out);
	sl_buf_release(&loose);
	return ret;
}
