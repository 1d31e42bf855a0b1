/*
 * util.c - allocation, files, directories, globs and clocks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void sl_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void *oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *sl_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	return p ? p : oom(n);
}

void *sl_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	return p ? p : oom(sl_st_mult(nmemb, size));
}

void *sl_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	return q ? q : oom(n);
}

char *sl_xstrdup(const char *s)
{
	return sl_xstrndup(s, strlen(s));
}

char *sl_xstrndup(const char *s, size_t n)
{
	char *p = sl_xmalloc(sl_st_add(n, 1));

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *sl_xstrdup_or_null(const char *s)
{
	return s ? sl_xstrdup(s) : NULL;
}

size_t sl_st_add(size_t a, size_t b)
{
	if (a > SIZE_MAX - b)
		BUG("size overflow: %zu + %zu", a, b);
	return a + b;
}

size_t sl_st_mult(size_t a, size_t b)
{
	if (b && a > SIZE_MAX / b)
		BUG("size overflow: %zu * %zu", a, b);
	return a * b;
}

void sl_strvec_push_nodup(sl_strvec *sv, char *s)
{
	SL_ALLOC_GROW(sv->v, sv->n + 2, sv->alloc);
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void sl_strvec_push(sl_strvec *sv, const char *s)
{
	sl_strvec_push_nodup(sv, sl_xstrdup(s));
}

void sl_strvec_release(sl_strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->alloc = 0;
}

int sl_read_fd(sl_buf *b, int fd, sl_err *err)
{
	for (;;) {
		ssize_t n;

		sl_buf_grow(b, 8192);
		n = read(fd, b->buf + b->len, 8192);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return sl_err_set(err, SL_ERROR, "read failed: %s", strerror(errno));
		}
		if (n == 0)
			return SL_OK;
		if (b->cap && b->len + (size_t)n > b->cap) {
			sl_buf_setlen(b, b->cap);
			b->truncated = 1;
			return SL_OK;
		}
		sl_buf_setlen(b, b->len + (size_t)n);
	}
}

int sl_read_file(sl_buf *b, const char *path, size_t cap, sl_err *err)
{
	int fd, ret;
	size_t old_cap = b->cap;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sl_err_set(err, errno == ENOENT ? SL_ENOTFOUND : SL_ERROR,
				  "cannot open '%s': %s", path, strerror(errno));
	if (cap)
		b->cap = b->len + cap;
	ret = sl_read_fd(b, fd, err);
	b->cap = old_cap;
	close(fd);
	if (ret)
		sl_err_prefix(err, "'%s': ", path);
	return ret;
}

int sl_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sl_write_file(const char *path, const void *data, size_t len, sl_err *err)
{
	sl_buf tmp = SL_BUF_INIT;
	int fd = -1, ret = SL_ERROR;

	sl_buf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		sl_err_set(err, SL_ERROR, "cannot create '%s': %s", tmp.buf, strerror(errno));
		goto done;
	}
	if (sl_write_all(fd, data, len) || close(fd)) {
		fd = -1;
		sl_err_set(err, SL_ERROR, "cannot write '%s': %s", tmp.buf, strerror(errno));
		unlink(tmp.buf);
		goto done;
	}
	fd = -1;
	if (rename(tmp.buf, path)) {
		sl_err_set(err, SL_ERROR, "cannot rename to '%s': %s", path, strerror(errno));
		unlink(tmp.buf);
		goto done;
	}
	ret = SL_OK;
done:
	if (fd >= 0)
		close(fd);
	sl_buf_release(&tmp);
	return ret;
}

int sl_mkdir_p(const char *path, unsigned mode, sl_err *err)
{
	char *p = sl_xstrdup(path);
	int ret = SL_OK;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) && errno != EEXIST) {
				ret = sl_err_set(err, SL_ERROR, "cannot create directory '%s': %s",
						 p, strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}

static int rm_rf_at(int atfd, const char *name, dev_t dev, sl_err *err)
{
	struct stat st;
	DIR *d;
	int fd;
	struct dirent *de;

	if (fstatat(atfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return SL_OK;
		return sl_err_set(err, SL_ERROR, "cannot stat '%s': %s", name, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(atfd, name, 0) && errno != ENOENT)
			return sl_err_set(err, SL_ERROR, "cannot remove '%s': %s", name, strerror(errno));
		return SL_OK;
	}
	if (st.st_dev != dev)
		return sl_err_set(err, SL_ERROR, "refusing to cross a mount at '%s'", name);
	fd = openat(atfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* a directory we cannot read: make it readable and retry once */
		if (errno != EACCES || fchmodat(atfd, name, 0700, 0) ||
		    (fd = openat(atfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return sl_err_set(err, SL_ERROR, "cannot open '%s': %s", name, strerror(errno));
	}
	if (!(d = fdopendir(fd))) {
		close(fd);
		return sl_err_set(err, SL_ERROR, "cannot read '%s': %s", name, strerror(errno));
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_rf_at(dirfd(d), de->d_name, dev, err)) {
			closedir(d);
			return err ? err->code : SL_ERROR;
		}
	}
	closedir(d);
	if (unlinkat(atfd, name, AT_REMOVEDIR) && errno != ENOENT) {
		if (errno == EACCES && !fchmodat(atfd, name, 0700, 0) &&
		    !unlinkat(atfd, name, AT_REMOVEDIR))
			return SL_OK;
		return sl_err_set(err, SL_ERROR, "cannot remove '%s': %s", name, strerror(errno));
	}
	return SL_OK;
}

int sl_rm_rf(const char *path, sl_err *err)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? SL_OK :
			sl_err_set(err, SL_ERROR, "cannot stat '%s': %s", path, strerror(errno));
	return rm_rf_at(AT_FDCWD, path, st.st_dev, err);
}

char *sl_realpath(const char *path, sl_err *err)
{
	char *p = realpath(path, NULL);

	if (!p)
		sl_err_set(err, errno == ENOENT ? SL_ENOTFOUND : SL_ERROR,
			   "cannot resolve '%s': %s", path, strerror(errno));
	return p;
}

char *sl_path_join(const char *dir, const char *name)
{
	sl_buf b = SL_BUF_INIT;
	size_t dl = strlen(dir);

	sl_buf_add(&b, dir, dl);
	if (dl && dir[dl - 1] != '/')
		sl_buf_addch(&b, '/');
	while (*name == '/')
		name++;
	sl_buf_adds(&b, name);
	return sl_buf_detach(&b, NULL);
}

int sl_path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n))
		return 0;
	return path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/');
}

static int glob_at(const char *pat, const char *path)
{
	/* "**" as a whole segment matches zero or more directories */
	if (!strncmp(pat, "**", 2) && (pat[2] == '/' || !pat[2])) {
		const char *rest = pat[2] ? pat + 3 : pat + 2;

		if (!*rest)
			return 1;
		for (const char *p = path; ; ) {
			if (glob_at(rest, p))
				return 1;
			p = strchr(p, '/');
			if (!p)
				return 0;
			p++;
		}
	}
	{
		const char *slash = strchr(pat, '/');
		const char *pslash = strchr(path, '/');
		char seg[PATH_MAX], pseg[PATH_MAX];
		size_t sl, pl;

		if (!slash)
			return !pslash && !fnmatch(pat, path, FNM_PERIOD);
		if (!pslash)
			return 0;
		sl = (size_t)(slash - pat);
		pl = (size_t)(pslash - path);
		if (sl >= sizeof(seg) || pl >= sizeof(pseg))
			return 0;
		memcpy(seg, pat, sl);
		seg[sl] = '\0';
		memcpy(pseg, path, pl);
		pseg[pl] = '\0';
		if (fnmatch(seg, pseg, FNM_PERIOD))
			return 0;
		return glob_at(slash + 1, pslash + 1);
	}
}

int sl_glob_match(const char *pattern, const char *path)
{
	return glob_at(pattern, path);
}

int64_t sl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sl_iso8601_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

uint32_t sl_line_of(const char *text, size_t len, size_t offset)
{
	uint32_t line = 1;

	if (offset > len)
		offset = len;
	for (size_t i = 0; i < offset; i++)
		if (text[i] == '\n')
			line++;
	return line;
}

const char *sl_getenv_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}
