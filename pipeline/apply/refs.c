/*
 * refs.c - many candidate branches written or deleted at once, as packed refs.
 *
 * Reads the repository's packed-refs file (in the common git directory)
 * and writes it again with the branches merged in or left out, sorted by
 * name, the way git itself updates it: under packed-refs.lock (created
 * exclusively, so git, libgit2 and other sluice runs wait for each other),
 * renamed over packed-refs.  A loose ref of the same name would hide the
 * packed one, so it is removed afterwards.  One file rewritten per batch
 * instead of one loose file per branch (or one rewrite per deleted branch,
 * as libgit2 does): a campaign of 100,000 targets leaves one file, not
 * 100,000 under refs/heads, and `gc` deletes them in one rewrite.
 *
 * Every change is compare-and-swap, checked under the lock: a branch is
 * written only where it is absent or already there, deleted only where it
 * still points at the commit the caller expects (another run may have
 * taken the target over and written its own).
 *
 * Beside the lock, sluice notes who holds it (packed-refs.sluice-lock:
 * host, pid, the lock's inode), so that a lock left by a crashed sluice of
 * this host is known for one and removed; any other lock is left to its
 * owner (git may be writing it).
 *
 * Who made a branch is read from its commit: a candidate's message ends
 * with the trailer "Sluice-Store: STORE_ID/CAMPAIGN_ID" (sl_branch_holder()),
 * which survives push, fetch and clone; runs of one store move or delete
 * only branches whose commit names it.
 *
 * Calling sequence: write the commits (they must be in the object database
 * first), then sl_branches_write_packed(); sl_branches_delete_packed().
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "pipeline/apply/apply.h"
#include "common/sha256.h"
#include "common/util.h"

#define PACKED_HEADER "# pack-refs with: peeled fully-peeled sorted \n"

/* One ref of the file: its name and its lines (the ref and its "^" peel line). */
typedef struct packed_ent {
	const char *name;           /* borrowed from the text it came from */
	size_t name_len;
	const char *text;
	size_t text_len;
	int is_new;
	int drop;                   /* left out of the file written */
} packed_ent;

/*
 * The packed-refs file under its lock.  A file whose header says it is
 * sorted (git's and ours do) is never read whole: a ref is found by a
 * binary search of its lines (pread), and the file is written again by
 * merging it, a block at a time, with the entries in v, which are then
 * only the changes.  Any other file is read into text, v its entries.
 */
typedef struct packed_file {
	const char *dir;            /* the common git directory, with its final '/' */
	sl_buf path, lock, text;
	packed_ent *v;
	size_t n, alloc, nold, header_len;
	int fd, note_fd, locked;
	int rfd;                    /* the file read (sorted), or -1 */
	off_t size;                 /* its size */
} packed_file;

#define PACKED_BLOCK 65536

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

/* Split the file's text into entries; f->header_len gets the length of its "#" line. */
static int parse_packed(packed_file *f, sl_err *err)
{
	size_t pos = 0, lineno = 0;
	const sl_buf *file = &f->text;

	f->header_len = 0;
	while (pos < file->len) {
		const char *s = file->buf + pos, *nl = memchr(s, '\n', file->len - pos);
		size_t len = nl ? (size_t)(nl - s) + 1 : file->len - pos;

		lineno++;
		if (lineno == 1 && *s == '#') {
			f->header_len = len;
		} else if (*s == '^' && f->n) {
			f->v[f->n - 1].text_len += len;
		} else if (len > GIT_OID_HEXSZ + 1 && s[GIT_OID_HEXSZ] == ' ') {
			packed_ent *e;

			SL_ALLOC_GROW(f->v, f->n + 1, f->alloc);
			e = &f->v[f->n++];
			memset(e, 0, sizeof(*e));
			e->name = s + GIT_OID_HEXSZ + 1;
			e->name_len = len - GIT_OID_HEXSZ - 1 - (nl ? 1 : 0);
			e->text = s;
			e->text_len = len;
		} else {
			return sl_err_set(err, SL_ERROR, "%s:%zu: not a packed ref", f->path.buf,
					  lineno);
		}
		pos += len;
	}
	return SL_OK;
}

/*
 * The note beside the lock: "HOST PID INODE" while a sluice holds it, empty
 * otherwise.  It is written and read under an flock of its own, held only
 * around taking, breaking and giving the lock, never while the file is
 * rewritten.
 */
static void note_write(packed_file *f)
{
	char host[256] = "";
	struct stat sb;
	sl_buf line = SL_BUF_INIT;

	if (gethostname(host, sizeof(host) - 1) || fstat(f->fd, &sb))
		return;
	sl_buf_addf(&line, "%s %ld %llu\n", host, (long)getpid(), (unsigned long long)sb.st_ino);
	if (!ftruncate(f->note_fd, 0))
		(void)!pwrite(f->note_fd, line.buf, line.len, 0);
	sl_buf_release(&line);
}

/*
 * 1 when the lock was left by a sluice of this host that is gone: the note
 * names this host, a dead pid and the lock file's very inode (git's own lock,
 * made later, is another file).  *pid gets the pid.
 */
static int lock_is_stale(const packed_file *f, long *pid)
{
	char buf[512], host[256] = "", nhost[256];
	unsigned long long ino;
	struct stat sb;
	ssize_t len = pread(f->note_fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0 || gethostname(host, sizeof(host) - 1) || stat(f->lock.buf, &sb))
		return 0;
	buf[len] = '\0';
	if (sscanf(buf, "%255s %ld %llu", nhost, pid, &ino) != 3 || strcmp(nhost, host) ||
	    *pid <= 0 || ino != (unsigned long long)sb.st_ino)
		return 0;
	return kill((pid_t)*pid, 0) && errno == ESRCH;
}

static int open_note(packed_file *f, sl_err *err)
{
	sl_buf note = SL_BUF_INIT;

	sl_buf_addf(&note, "%spacked-refs.sluice-lock", f->dir);
	f->note_fd = open(note.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (f->note_fd < 0)
		sl_err_set(err, SL_ERROR, "cannot open '%s': %s", note.buf, strerror(errno));
	sl_buf_release(&note);
	return f->note_fd < 0 ? SL_ERROR : SL_OK;
}

static void note_lock(const packed_file *f, int op)
{
	while (flock(f->note_fd, op) && errno == EINTR)
		;
}

/*
 * Create the lock file, waiting (bounded: about 10 s) while another writer
 * holds it; a lock a crashed sluice of this host left is removed.
 */
static int take_lock(packed_file *f, sl_err *err)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	if (open_note(f, err))
		return SL_ERROR;
	for (int i = 0; i < 1000; i++) {
		long pid = 0;
		int fd, e;

		note_lock(f, LOCK_EX);
		fd = open(f->lock.buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		e = errno;
		if (fd >= 0) {
			f->fd = fd;
			f->locked = 1;
			note_write(f);
		} else if (e == EEXIST && lock_is_stale(f, &pid)) {
			unlink(f->lock.buf);
		}
		note_lock(f, LOCK_UN);
		if (fd >= 0)
			return SL_OK;
		if (e != EEXIST)
			return sl_err_set(err, SL_ERROR, "cannot lock '%s': %s", f->lock.buf,
					  strerror(e));
		if (!pid)           /* a stale lock broken: try again at once */
			nanosleep(&ts, NULL);
	}
	return sl_err_set(err, SL_ERROR, "cannot lock '%s': another git or sluice process is "
			  "updating refs; if none is running (a crash left the file), remove it",
			  f->lock.buf);
}

/* Let the lock go: renamed over packed-refs when commit, else removed. */
static int give_lock(packed_file *f, int commit, sl_err *err)
{
	int ret = SL_OK;

	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (!f->locked)
		return SL_OK;
	note_lock(f, LOCK_EX);
	if (commit && rename(f->lock.buf, f->path.buf))
		ret = sl_err_set(err, SL_ERROR, "cannot rename '%s': %s", f->lock.buf,
				 strerror(errno));
	if (!commit || ret)
		unlink(f->lock.buf);
	if (ftruncate(f->note_fd, 0) && !ret)
		ret = sl_err_set(err, SL_ERROR, "cannot clear the note of '%s': %s", f->lock.buf,
				 strerror(errno));
	note_lock(f, LOCK_UN);
	f->locked = 0;
	return ret;
}

static void packed_init(packed_file *f, git_repository *repo)
{
	memset(f, 0, sizeof(*f));
	f->fd = f->note_fd = f->rfd = -1;
	f->dir = git_repository_commondir(repo);
	sl_buf_init(&f->path, 0);
	sl_buf_init(&f->lock, 0);
	sl_buf_init(&f->text, 0);
	sl_buf_addf(&f->path, "%spacked-refs", f->dir);
	sl_buf_addf(&f->lock, "%spacked-refs.lock", f->dir);
}

/*
 * Open a sorted packed-refs file at path: its descriptor (-1 when it is
 * absent, not sorted or unreadable: *absent says which), its size and its
 * header's length.
 */
static int sorted_open(const char *path, off_t *size, size_t *header_len, int *absent)
{
	char head[512];
	struct stat sb;
	ssize_t len;
	char *nl;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*absent = fd < 0 && errno == ENOENT;
	if (fd < 0)
		return -1;
	len = pread(fd, head, sizeof(head) - 1, 0);
	if (len <= 0 || fstat(fd, &sb) || head[0] != '#') {
		close(fd);
		return -1;
	}
	head[len] = '\0';
	if (!(nl = strchr(head, '\n')) || !memmem(head, (size_t)(nl - head), " sorted ", 8)) {
		close(fd);
		return -1;
	}
	*size = sb.st_size;
	*header_len = (size_t)(nl - head) + 1;
	return fd;
}

/*
 * The first ref line (not a "^" peel line) that starts at or after off
 * and before end, into line (with its newline) and *at: 1, or 0 when
 * there is none, -1 when the file cannot be read.
 */
static int line_from(int fd, off_t off, off_t end, sl_buf *line, off_t *at)
{
	char buf[4096];
	int start = 0;

	sl_buf_reset(line);
	if (off > 0) {
		char c;

		if (pread(fd, &c, 1, off - 1) != 1)
			return -1;
		start = c == '\n';
	} else {
		start = 1;
	}
	while (off < end) {
		ssize_t n = pread(fd, buf, sizeof(buf), off), i = 0;

		if (n <= 0)
			return -1;
		while (i < n) {
			char *nl = memchr(buf + i, '\n', (size_t)(n - i));
			size_t len = nl ? (size_t)(nl - (buf + i)) + 1 : (size_t)(n - i);

			if (start && !line->len && buf[i] == '^')
				start = 0;          /* a peel line: the next one */
			if (start) {
				if (!line->len)
					*at = off + i;
				sl_buf_add(line, buf + i, len);
				if (nl)
					return 1;
			}
			start = nl != NULL;
			i += (ssize_t)len;
		}
		off += n;
		if (line->len)
			return 1;           /* the last line, without a newline */
		if (off >= end)
			break;
	}
	return line->len ? 1 : 0;
}

/* Compare a ref line's name with refname. */
static int line_cmp(const sl_buf *line, const char *refname)
{
	const char *name = line->buf + GIT_OID_HEXSZ + 1;
	size_t len = line->len - GIT_OID_HEXSZ - 1, rlen = strlen(refname), n;
	int c;

	while (len && (name[len - 1] == '\n' || name[len - 1] == '\r'))
		len--;
	n = len < rlen ? len : rlen;
	c = memcmp(name, refname, n);
	return c ? c : len < rlen ? -1 : len > rlen;
}

/*
 * refname's value in the sorted file fd (lines from start to end), by a
 * binary search: 1 with *oid, 0 when it is not there, -1 when the file
 * cannot be read.  It reads about 2 log2(refs) lines, never the file.
 */
static int sorted_lookup(int fd, off_t start, off_t end, const char *refname, git_oid *oid)
{
	sl_buf line = SL_BUF_INIT;
	off_t lo = start, hi = end, at = 0;
	int r = 0;

	while (lo < hi) {
		off_t mid = lo + (hi - lo) / 2;
		int c;

		if ((r = line_from(fd, mid, hi, &line, &at)) < 0)
			break;
		if (!r || at >= hi) {
			hi = mid;
			r = 0;
			continue;
		}
		if (line.len <= GIT_OID_HEXSZ + 1 || line.buf[GIT_OID_HEXSZ] != ' ') {
			r = -1;
			break;
		}
		c = line_cmp(&line, refname);
		if (!c) {
			r = git_oid_fromstrn(oid, line.buf, GIT_OID_HEXSZ) ? -1 : 1;
			break;
		}
		r = 0;
		if (c < 0)
			lo = at + (off_t)line.len;
		else
			hi = mid;
	}
	sl_buf_release(&line);
	return r;
}

/* Lock and read the repository's packed-refs: entries sorted by name. */
static int packed_open(packed_file *f, git_repository *repo, sl_err *err)
{
	sl_err rerr = SL_ERR_INIT;
	int rc, absent;

	packed_init(f, repo);
	if (take_lock(f, err))
		return SL_ERROR;
	/* read under the lock: no one changes it meanwhile */
	f->rfd = sorted_open(f->path.buf, &f->size, &f->header_len, &absent);
	if (f->rfd >= 0)
		return SL_OK;
	if ((rc = sl_read_file(&f->text, f->path.buf, 0, &rerr)) && rc != SL_ENOTFOUND)
		return sl_err_set(err, SL_ERROR, "%s", rerr.msg);
	if (parse_packed(f, err))
		return SL_ERROR;
	qsort(f->v, f->n, sizeof(*f->v), cmp_ent);
	f->nold = f->n;
	return SL_OK;
}

static void packed_release(packed_file *f)
{
	give_lock(f, 0, NULL);
	if (f->note_fd >= 0)
		close(f->note_fd);
	if (f->rfd >= 0)
		close(f->rfd);
	free(f->v);
	sl_buf_release(&f->path);
	sl_buf_release(&f->lock);
	sl_buf_release(&f->text);
}

/* The entry of refname among those read, or NULL. */
static packed_ent *packed_find(packed_file *f, const char *refname)
{
	packed_ent key = { refname, strlen(refname), NULL, 0, 0, 0 };

	return bsearch(&key, f->v, f->nold, sizeof(*f->v), cmp_ent);
}

/* refname's value in the file read: 1 with *oid, 0 when absent, -1 when it cannot be told. */
static int packed_value(packed_file *f, const char *refname, git_oid *oid)
{
	packed_ent *e;

	if (f->rfd >= 0)
		return sorted_lookup(f->rfd, (off_t)f->header_len, f->size, refname, oid);
	return (e = packed_find(f, refname)) && !git_oid_fromstrn(oid, e->text, GIT_OID_HEXSZ);
}

/* Write out's bytes to the lock file once a block has gathered (all: at the end). */
static int put_out(packed_file *f, sl_buf *out, int all)
{
	if (out->len < PACKED_BLOCK && !all)
		return SL_OK;
	if (sl_write_all(f->fd, out->buf, out->len))
		return SL_ERROR;
	sl_buf_reset(out);
	return SL_OK;
}

/*
 * The changes in v (sorted; new ones, or names dropped) from position *j
 * that sort before the ref line (NULL: all of them) go out: the new ones
 * written.  Returns the change of the line's own name, or NULL.
 */
static const packed_ent *changes_before(packed_file *f, size_t *j, const sl_buf *line,
					sl_buf *out)
{
	while (*j < f->n) {
		const packed_ent *e = &f->v[*j];
		int c = 0;

		if (line) {
			size_t len = line->len - GIT_OID_HEXSZ - 1, n;
			const char *name = line->buf + GIT_OID_HEXSZ + 1;

			while (len && (name[len - 1] == '\n' || name[len - 1] == '\r'))
				len--;
			n = len < e->name_len ? len : e->name_len;
			c = memcmp(e->name, name, n);
			if (!c)
				c = e->name_len < len ? -1 : e->name_len > len;
			if (c > 0)
				return NULL;
		}
		(*j)++;
		/* a name twice in v: its first (the new one) counts */
		if (*j > 1 && e->name_len == e[-1].name_len && !memcmp(e->name, e[-1].name, e->name_len))
			continue;
		if (!c && line)
			return e;
		if (e->is_new)
			sl_buf_add(out, e->text, e->text_len);
	}
	return NULL;
}

/* A sorted file merged with the changes in v, a block at a time, into the lock file. */
static int merge_sorted(packed_file *f)
{
	sl_buf out = SL_BUF_INIT, line = SL_BUF_INIT, block = SL_BUF_INIT;
	off_t off = 0;
	size_t j = 0;
	int skip = 0, ret = SL_ERROR;

	qsort(f->v, f->n, sizeof(*f->v), cmp_ent);
	sl_buf_grow(&block, PACKED_BLOCK);
	for (;;) {
		ssize_t n = pread(f->rfd, block.buf, PACKED_BLOCK, off);
		size_t i = 0;

		if (n < 0)
			goto done;
		if (!n && !line.len)
			break;
		/* each whole line, the last one of the file also without its newline */
		while (i < (size_t)n || (!n && line.len)) {
			char *nl = n ? memchr(block.buf + i, '\n', (size_t)n - i) : NULL;
			size_t len = nl ? (size_t)(nl - (block.buf + i)) + 1 : (size_t)n - i;
			const packed_ent *e;

			sl_buf_add(&line, block.buf + i, len);
			i += len;
			if (!nl && n)
				break;
			if (off == 0 && i == len && line.buf[0] == '#') {
				sl_buf_add(&out, line.buf, line.len);
			} else if (line.buf[0] == '^') {
				if (!skip)
					sl_buf_add(&out, line.buf, line.len);
			} else if (line.len > GIT_OID_HEXSZ + 1 && line.buf[GIT_OID_HEXSZ] == ' ') {
				e = changes_before(f, &j, &line, &out);
				skip = e != NULL;
				if (e && e->is_new)
					sl_buf_add(&out, e->text, e->text_len);
				else if (!e)
					sl_buf_add(&out, line.buf, line.len);
			} else {
				goto done;
			}
			/* the file's last line, without its newline: it is not the last now */
			if (out.len && out.buf[out.len - 1] != '\n')
				sl_buf_addch(&out, '\n');
			sl_buf_reset(&line);
			if (put_out(f, &out, 0))
				goto done;
			if (!n)
				break;
		}
		if (!n)
			break;
		off += n;
	}
	changes_before(f, &j, NULL, &out);
	ret = put_out(f, &out, 1);
done:
	sl_buf_release(&out);
	sl_buf_release(&line);
	sl_buf_release(&block);
	return ret;
}

/* Write the entries (the new ones win, dropped ones go) and rename over packed-refs. */
static int packed_commit(packed_file *f, sl_err *err)
{
	sl_buf out = SL_BUF_INIT;
	int ret = SL_ERROR;

	if (f->rfd >= 0) {
		if (merge_sorted(f) || close(f->fd)) {
			f->fd = -1;
			sl_err_set(err, SL_ERROR, "cannot write '%s': %s", f->lock.buf,
				   strerror(errno));
			goto done;
		}
		f->fd = -1;
		ret = give_lock(f, 1, err);
		goto done;
	}
	qsort(f->v, f->n, sizeof(*f->v), cmp_ent);
	if (f->header_len)
		sl_buf_add(&out, f->text.buf, f->header_len);
	else
		sl_buf_adds(&out, PACKED_HEADER);
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].drop || (i && f->v[i].name_len == f->v[i - 1].name_len &&
				     !memcmp(f->v[i].name, f->v[i - 1].name, f->v[i].name_len)))
			continue;       /* deleted, or an older line of a ref just written */
		sl_buf_add(&out, f->v[i].text, f->v[i].text_len);
	}
	if (sl_write_all(f->fd, out.buf, out.len) || close(f->fd)) {
		f->fd = -1;
		sl_err_set(err, SL_ERROR, "cannot write '%s': %s", f->lock.buf, strerror(errno));
		goto done;
	}
	f->fd = -1;
	ret = give_lock(f, 1, err);
done:
	sl_buf_release(&out);
	return ret;
}

/*
 * What refs/heads/NAME points at now: 1 with *oid, 0 when it does not
 * exist, -1 when it cannot be told (a symbolic or unreadable loose ref).
 * A loose ref hides a packed one; *is_loose says which it is.
 */
static int ref_value(git_oid *oid, int *is_loose, packed_file *f, const char *refname)
{
	sl_buf path = SL_BUF_INIT, text = SL_BUF_INIT;
	int r;

	sl_buf_addf(&path, "%s%s", f->dir, refname);
	r = sl_read_file(&text, path.buf, 4096, NULL);
	*is_loose = r != SL_ENOTFOUND;
	if (r == SL_ENOTFOUND)
		r = packed_value(f, refname, oid);
	else if (r || text.len < GIT_OID_HEXSZ || git_oid_fromstrn(oid, text.buf, GIT_OID_HEXSZ))
		r = -1;
	else
		r = 1;
	sl_buf_release(&path);
	sl_buf_release(&text);
	return r;
}

static int valid_branch(sl_buf *refname, const char *branch, sl_err *err)
{
	int valid = 0;

	sl_buf_reset(refname);
	sl_buf_addf(refname, "refs/heads/%s", branch);
	if (git_reference_name_is_valid(&valid, refname->buf) < 0 || !valid)
		return sl_err_set(err, SL_ERROR, "cannot change branch '%s': not a valid name",
				  branch);
	return SL_OK;
}

/* Remove the loose refs/heads/BRANCH[i] where keep[i]. */
static int unlink_loose(const char *dir, char *const *branch, const char *keep, size_t n,
			sl_err *err)
{
	sl_buf loose = SL_BUF_INIT;
	int ret = SL_OK;

	for (size_t i = 0; i < n && !ret; i++) {
		if (!keep[i])
			continue;
		sl_buf_reset(&loose);
		sl_buf_addf(&loose, "%srefs/heads/%s", dir, branch[i]);
		if (unlink(loose.buf) && errno != ENOENT)
			ret = sl_err_set(err, SL_ERROR, "cannot remove '%s': %s", loose.buf,
					 strerror(errno));
	}
	sl_buf_release(&loose);
	return ret;
}

int sl_branches_write_packed(git_repository *repo, char *const *branch, const git_oid *commit,
			     size_t n, sl_err *err)
{
	packed_file f;
	sl_buf names = SL_BUF_INIT, refname = SL_BUF_INIT;
	size_t *name_off = NULL;
	char *keep = NULL;
	const char *conflict = NULL;
	int ret = SL_ERROR;

	if (!n)
		return SL_OK;
	/* the new lines first, in one buffer: entries point into it */
	name_off = sl_xcalloc(n, sizeof(*name_off));
	keep = sl_xcalloc(n, 1);
	for (size_t i = 0; i < n; i++) {
		char hex[GIT_OID_HEXSZ + 1];

		if (valid_branch(&refname, branch[i], err))
			goto out;
		git_oid_tostr(hex, sizeof(hex), &commit[i]);
		name_off[i] = names.len;
		sl_buf_addf(&names, "%s %s\n", hex, refname.buf);
	}
	if (packed_open(&f, repo, err))
		goto done;
	for (size_t i = 0; i < n; i++) {
		size_t end = i + 1 < n ? name_off[i + 1] : names.len;
		packed_ent *e;
		git_oid now;
		int r, is_loose;

		sl_buf_reset(&refname);
		sl_buf_addf(&refname, "refs/heads/%s", branch[i]);
		/* only where it is absent or already there: no other run's branch is moved */
		r = ref_value(&now, &is_loose, &f, refname.buf);
		if (r < 0 || (r && !git_oid_equal(&now, &commit[i]))) {
			conflict = conflict ? conflict : branch[i];
			continue;
		}
		keep[i] = 1;
		SL_ALLOC_GROW(f.v, f.n + 1, f.alloc);
		e = &f.v[f.n++];
		memset(e, 0, sizeof(*e));
		e->text = names.buf + name_off[i];
		e->text_len = end - name_off[i];
		e->name = e->text + GIT_OID_HEXSZ + 1;
		e->name_len = e->text_len - GIT_OID_HEXSZ - 2;
		e->is_new = 1;
	}
	if (packed_commit(&f, err))
		goto done;
	/* a loose ref of the same name (at the same commit) would hide the packed one */
	if (unlink_loose(f.dir, branch, keep, n, err))
		goto done;
	ret = conflict ? sl_err_set(err, SL_ELEASE, "branch '%s' points at a commit another "
				    "run wrote; left alone", conflict) : SL_OK;
done:
	packed_release(&f);
out:
	free(name_off);
	free(keep);
	sl_buf_release(&names);
	sl_buf_release(&refname);
	return ret;
}

/* Delete a loose ref through libgit2, which compares its value under the ref's own lock. */
static int delete_loose(git_repository *repo, const char *refname, const git_oid *expected,
			int *gone, sl_err *err)
{
	git_reference *ref = NULL;
	int rc = git_reference_lookup(&ref, repo, refname);

	*gone = 0;
	if (rc == GIT_ENOTFOUND)
		return SL_OK;
	if (!rc && (git_reference_type(ref) != GIT_REFERENCE_DIRECT ||
		    !git_oid_equal(git_reference_target(ref), expected))) {
		git_reference_free(ref);
		return SL_OK;       /* moved since: not this caller's any more */
	}
	if (!rc)
		rc = git_reference_delete(ref);
	git_reference_free(ref);
	if (rc == GIT_EMODIFIED)
		return SL_OK;
	if (rc)
		return sl_err_set(err, SL_ERROR, "cannot delete '%s': %s", refname, sl_git_error());
	*gone = 1;
	return SL_OK;
}

int sl_branches_delete_packed(git_repository *repo, char *const *branch, const git_oid *expected,
			      size_t n, size_t *deleted, sl_err *err)
{
	packed_file f;
	sl_buf refname = SL_BUF_INIT;
	sl_strvec drops = SL_STRVEC_INIT;   /* a sorted file's names to drop */
	git_oid *loose_at = NULL;
	char *loose = NULL;
	size_t count = 0;
	int dirty = 0, ret = SL_ERROR;

	*deleted = 0;
	if (!n)
		return SL_OK;
	loose = sl_xcalloc(n, 1);
	loose_at = sl_xcalloc(n, sizeof(*loose_at));
	if (packed_open(&f, repo, err))
		goto done;
	for (size_t i = 0; i < n; i++) {
		packed_ent *e;
		git_oid now, packed_at;
		int r, is_loose;

		if (valid_branch(&refname, branch[i], err))
			goto done;
		r = ref_value(&now, &is_loose, &f, refname.buf);
		if (r <= 0 || (expected && !git_oid_equal(&now, &expected[i])))
			continue;   /* gone already, or another run's now */
		if (f.rfd >= 0 && !is_loose) {
			/* r > 0 and not loose: it is in the file */
			sl_strvec_push(&drops, refname.buf);
			dirty = 1;
		} else if (f.rfd >= 0 && packed_value(&f, refname.buf, &packed_at) > 0) {
			sl_strvec_push(&drops, refname.buf);
			dirty = 1;
		} else if ((e = packed_find(&f, refname.buf))) {
			e->drop = 1;
			dirty = 1;
		}
		if (is_loose) {
			loose[i] = 1;
			git_oid_cpy(&loose_at[i], &now);
		} else {
			count++;
		}
	}
	for (size_t i = 0; i < drops.n; i++) {
		SL_ALLOC_GROW(f.v, f.n + 1, f.alloc);
		f.v[f.n++] = (packed_ent){ .name = drops.v[i], .name_len = strlen(drops.v[i]),
					   .drop = 1 };
	}
	if (dirty ? packed_commit(&f, err) : give_lock(&f, 0, err))
		goto done;
	/* the packed entries are gone: libgit2 deletes each loose one without a rewrite */
	for (size_t i = 0; i < n; i++) {
		int gone = 0;

		if (!loose[i])
			continue;
		sl_buf_reset(&refname);
		sl_buf_addf(&refname, "refs/heads/%s", branch[i]);
		if (delete_loose(repo, refname.buf, &loose_at[i], &gone, err))
			goto done;
		count += gone;
	}
	ret = SL_OK;
done:
	*deleted = count;
	packed_release(&f);
	sl_strvec_release(&drops);
	free(loose);
	free(loose_at);
	sl_buf_release(&refname);
	return ret;
}

int sl_branch_delete_matching(git_repository *repo, const char *branch, const git_oid *expected,
			      sl_err *err)
{
	sl_buf refname = SL_BUF_INIT;
	int gone = 0, ret;

	sl_buf_addf(&refname, "refs/heads/%s", branch);
	ret = delete_loose(repo, refname.buf, expected, &gone, err);
	sl_buf_release(&refname);
	return ret;
}

/* Whether the line at p is "Sluice-Store: T" for one of the lines T of tags. */
static int trailer_names(const char *p, const char *tags)
{
	size_t tlen = strlen(SL_STORE_TRAILER);

	if (!tags || strncmp(p, SL_STORE_TRAILER, tlen))
		return 0;
	p += tlen;
	for (const char *t = tags, *e; *t; t = *e ? e + 1 : e) {
		size_t len = (size_t)((e = strchrnul(t, '\n')) - t);

		if (len && !strncmp(p, t, len) && (p[len] == '\n' || !p[len]))
			return 1;
	}
	return 0;
}

int sl_commit_made_by(git_repository *repo, const git_oid *commit, const char *tag)
{
	git_commit *c = NULL;
	git_odb *dir = NULL;
	git_odb_object *raw = NULL;
	sl_buf objects = SL_BUF_INIT;
	const char *msg = NULL, *p;
	int mine = 0;

	if (!git_commit_lookup(&c, repo, commit)) {
		msg = git_commit_message(c);
	} else {
		/* a pack the repository's object database does not take in (a run's
		   worker: run_batch_open) may hold it: the directory's then */
		sl_buf_addf(&objects, "%sobjects", git_repository_commondir(repo));
		if (!git_odb_open(&dir, objects.buf) && !git_odb_read(&raw, dir, commit) &&
		    git_odb_object_type(raw) == GIT_OBJECT_COMMIT) {
			/* NUL-terminated here: the header's end, then the message */
			sl_buf_reset(&objects);
			sl_buf_add(&objects, git_odb_object_data(raw), git_odb_object_size(raw));
			if ((msg = strstr(objects.buf, "\n\n")))
				msg += 2;
		}
	}
	/* the trailer is a whole line: "Sluice-Store: TAG" */
	for (p = msg; p && *p && !mine; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		mine = trailer_names(p, tag);
	git_commit_free(c);
	git_odb_object_free(raw);
	git_odb_free(dir);
	sl_buf_release(&objects);
	return mine;
}

/*
 * The branch's commit read as git would, without libgit2's reading of
 * packed-refs (it maps the whole file, and a campaign's file grows with
 * every branch): 1 with *oid, 0 when it does not exist, -1 when libgit2
 * must tell (a symbolic or odd loose ref, a packed-refs not sorted).
 */
static int branch_value(git_repository *repo, const char *refname, git_oid *oid)
{
	packed_file f;
	int r = -1, is_loose, absent;

	packed_init(&f, repo);
	f.rfd = sorted_open(f.path.buf, &f.size, &f.header_len, &absent);
	if (f.rfd >= 0 || absent)
		r = ref_value(oid, &is_loose, &f, refname);
	packed_release(&f);
	return r;
}

int sl_branch_target(git_oid *oid, git_repository *repo, const char *branch)
{
	sl_buf refname = SL_BUF_INIT;
	int valid = 0, r = -1, rc;

	sl_buf_addf(&refname, "refs/heads/%s", branch);
	if (!git_reference_name_is_valid(&valid, refname.buf) && valid)
		r = branch_value(repo, refname.buf, oid);
	rc = r > 0 ? 0 : !r ? GIT_ENOTFOUND : git_reference_name_to_id(oid, repo, refname.buf);
	sl_buf_release(&refname);
	return rc;
}

enum sl_holder sl_branch_holder(git_repository *repo, const char *branch, const char *tag,
				git_oid *at)
{
	git_oid oid;
	int rc = sl_branch_target(&oid, repo, branch);

	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
		return SL_HOLDER_NONE;
	if (rc)
		return SL_HOLDER_OTHER;
	if (at)
		git_oid_cpy(at, &oid);
	return sl_commit_made_by(repo, &oid, tag) ? SL_HOLDER_MINE : SL_HOLDER_OTHER;
}

int sl_packed_lock_check(git_repository *repo, long *stale_pid, sl_err *err)
{
	packed_file f;
	struct stat sb;
	int ret = SL_OK;

	*stale_pid = 0;
	packed_init(&f, repo);
	if (stat(f.lock.buf, &sb))
		goto done;
	if (open_note(&f, err)) {
		ret = SL_ERROR;
		goto done;
	}
	note_lock(&f, LOCK_EX);
	if (lock_is_stale(&f, stale_pid) && !unlink(f.lock.buf))
		(void)!ftruncate(f.note_fd, 0);
	else
		ret = sl_err_set(err, SL_EREFUSED, "'%s' exists: a git or sluice process may be "
				 "updating refs; if none is running on this repository (a crash "
				 "left it), remove the file", f.lock.buf);
	note_lock(&f, LOCK_UN);
done:
	packed_release(&f);
	return ret;
}

#define REF_HASH_HEX 12

/* At most len bytes of s, not ending inside a UTF-8 sequence. */
static size_t utf8_head(const char *s, size_t len)
{
	while (len && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--;
	return len;
}

/* Cut b to its first len bytes (at least from), then append "-HASH". */
static void ref_cut(sl_buf *b, size_t from, size_t len, const char *hex)
{
	len = from + utf8_head(b->buf + from, len - from);
	while (len > from && (b->buf[len - 1] == '/' || b->buf[len - 1] == '.'))
		len--;
	sl_buf_setlen(b, len);
	sl_buf_addf(b, "-%s", hex);
}

void sl_ref_name_bound(sl_buf *b, size_t from, size_t max, const char *key)
{
	sl_buf out = SL_BUF_INIT;
	char hex[65];
	const char *p, *end;

	if (max < from + 1 + REF_HASH_HEX)
		max = from + 1 + REF_HASH_HEX;
	sl_sha256_hex(hex, key, strlen(key));
	hex[REF_HASH_HEX] = '\0';
	sl_buf_add(&out, b->buf, from);
	for (p = b->buf + from;; p = end + 1) {
		size_t len, at = out.len, room = max > at ? max - at : 0;

		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		sl_buf_add(&out, p, len);
		if (len > room) {
			/* the name as a whole is at its bound: the rest is in the hash */
			ref_cut(&out, from, max - 1 - REF_HASH_HEX, hex);
			break;
		}
		if (len > SL_REF_COMPONENT_MAX)
			ref_cut(&out, at, at + SL_REF_COMPONENT_MAX - 1 - REF_HASH_HEX, hex);
		if (!*end)
			break;
		sl_buf_addch(&out, '/');
	}
	sl_buf_release(b);
	*b = out;
}
