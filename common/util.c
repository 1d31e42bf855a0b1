/*
 * util.c - allocation, files, directories, globs and clocks.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <git2.h>

#include "common/util.h"

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

/*
 * Globs are matched without recursion, in time bounded by the product of the
 * pattern's and the path's lengths: a pattern comes from a campaign file and
 * may hold any number of stars.  Within a segment '*' is a star over
 * characters, across segments "**" is a star over segments; each level keeps
 * only its last star, to which a mismatch returns (the classic two-pointer
 * wildcard match; a later star makes an earlier one's choices irrelevant).
 */

/* A bracket expression at *pp ('['); 1 if c is in it.  *pp moves past it. */
static int glob_class(const char **pp, const char *pe, unsigned char c, int *ok)
{
	static const struct { const char *name; int (*fn)(int); } classes[] = {
		{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank },
		{ "cntrl", iscntrl }, { "digit", isdigit }, { "graph", isgraph },
		{ "lower", islower }, { "print", isprint }, { "punct", ispunct },
		{ "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
	};
	const char *q = *pp + 1;
	int neg = 0, in = 0;

	if (q < pe && (*q == '!' || *q == '^')) {
		neg = 1;
		q++;
	}
	for (const char *first = q; q < pe && (*q != ']' || q == first); ) {
		unsigned char lo = (unsigned char)*q, hi;

		if (*q == '[' && q + 1 < pe && q[1] == ':') {
			const char *e = q + 2;

			while (e + 1 < pe && !(e[0] == ':' && e[1] == ']'))
				e++;
			if (e + 1 < pe) {
				for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
					if (strlen(classes[i].name) == (size_t)(e - q - 2) &&
					    !strncmp(classes[i].name, q + 2, (size_t)(e - q - 2)) &&
					    classes[i].fn(c))
						in = 1;
				q = e + 2;
				continue;
			}
		}
		if (*q == '\\' && q + 1 < pe)
			lo = (unsigned char)*++q;
		q++;
		hi = lo;
		if (q + 1 < pe && *q == '-' && q[1] != ']') {
			q++;
			if (*q == '\\' && q + 1 < pe)
				q++;
			hi = (unsigned char)*q++;
		}
		if (lo <= c && c <= hi)
			in = 1;
	}
	if (q >= pe) {              /* no closing ']': a literal '[' */
		*ok = 0;
		return 0;
	}
	*ok = 1;
	*pp = q + 1;
	return in != neg;
}

/* One token at *pp (not '*') against c; *pp moves past it. */
static int glob_token(const char **pp, const char *pe, unsigned char c, int leading_dot)
{
	const char *p = *pp;
	int ok, in;

	if (*p == '?') {
		*pp = p + 1;
		return !leading_dot;
	}
	if (*p == '[') {
		in = glob_class(pp, pe, c, &ok);
		if (ok)
			return in && !leading_dot;
	}
	if (*p == '\\' && p + 1 < pe)
		p++;
	*pp = p + 1;
	return (unsigned char)*p == c;
}

/* One segment: pattern [p, pe) against [s, se); a leading '.' needs a '.'. */
static int glob_segment(const char *p, const char *pe, const char *s, const char *se)
{
	const char *s0 = s, *star_p = NULL, *star_s = NULL;

	while (s < se) {
		if (p < pe && *p == '*') {
			if (s == s0 && *s == '.')
				return 0;
			star_p = ++p;
			star_s = s;
			continue;
		}
		if (p < pe && glob_token(&p, pe, (unsigned char)*s, s == s0 && *s == '.')) {
			s++;
			continue;
		}
		if (!star_p)
			return 0;
		p = star_p;
		s = ++star_s;
	}
	while (p < pe && *p == '*')
		p++;
	return p == pe;
}

/* The segment after the one at x, or NULL if x is the last. */
static const char *glob_next(const char *x)
{
	const char *e = strchrnul(x, '/');

	return *e ? e + 1 : NULL;
}

int sl_glob_match(const char *pattern, const char *path)
{
	const char *p = pattern, *s = path, *star_p = NULL, *star_s = NULL;

	for (;;) {
		if (p && p[0] == '*' && p[1] == '*' && (p[2] == '/' || !p[2])) {
			if (!p[2]) {        /* a final "**": one or more segments */
				if (s)
					return 1;
			} else {
				star_p = p = glob_next(p);
				star_s = s;
				continue;
			}
		} else if (!p && !s) {
			return 1;
		} else if (p && s && glob_segment(p, strchrnul(p, '/'), s, strchrnul(s, '/'))) {
			p = glob_next(p);
			s = glob_next(s);
			continue;
		}
		if (!star_p || !star_s)
			return 0;
		star_s = glob_next(star_s);     /* the last "**" takes one more segment */
		p = star_p;
		s = star_s;
	}
}

int64_t sl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sl_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
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

const char *sl_git_error_or(const char *fallback)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : fallback;
}

const char *sl_git_error(void)
{
	return sl_git_error_or("unknown libgit2 error");
}

/* Every file path under tree t (one side of an added or removed subtree). */
static int all_paths(git_repository *repo, const git_tree *t, const char *prefix,
		     sl_strvec *out)
{
	for (size_t i = 0; i < git_tree_entrycount(t); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(t, i);
		char *p = sl_path_join(prefix, git_tree_entry_name(e));
		git_tree *sub = NULL;
		int r = 0;

		if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
			if (!(r = git_tree_lookup(&sub, repo, git_tree_entry_id(e))))
				r = all_paths(repo, sub, p, out);
			git_tree_free(sub);
			free(p);
		} else {
			sl_strvec_push_nodup(out, p);
		}
		if (r)
			return r;
	}
	return 0;
}

/* The file paths under a subtree entry e of one side, pushed to out. */
static int entry_paths(git_repository *repo, const git_tree_entry *e, const char *path,
		       sl_strvec *out)
{
	git_tree *sub = NULL;
	int r;

	if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
		sl_strvec_push(out, path);
		return 0;
	}
	if (!(r = git_tree_lookup(&sub, repo, git_tree_entry_id(e))))
		r = all_paths(repo, sub, path, out);
	git_tree_free(sub);
	return r;
}

/* The file paths that differ between a and b, under prefix ("" at the root). */
static int changed_paths(git_repository *repo, const git_tree *a, const git_tree *b,
			 const char *prefix, sl_strvec *out)
{
	int r = 0;

	for (int side = 0; side < 2 && !r; side++) {
		const git_tree *t = side ? b : a, *o = side ? a : b;

		for (size_t i = 0; i < git_tree_entrycount(t) && !r; i++) {
			const git_tree_entry *e = git_tree_entry_byindex(t, i);
			const git_tree_entry *f = git_tree_entry_byname(o, git_tree_entry_name(e));
			git_tree *se = NULL, *sf = NULL;
			char *p;

			if (f && (side || (git_tree_entry_filemode(e) == git_tree_entry_filemode(f) &&
					   git_oid_equal(git_tree_entry_id(e), git_tree_entry_id(f)))))
				continue;       /* the same, or in both and seen from a */
			p = sl_path_join(prefix, git_tree_entry_name(e));
			if (f && git_tree_entry_type(e) == GIT_OBJECT_TREE &&
			    git_tree_entry_type(f) == GIT_OBJECT_TREE) {
				if (!(r = git_tree_lookup(&se, repo, git_tree_entry_id(e))) &&
				    !(r = git_tree_lookup(&sf, repo, git_tree_entry_id(f))))
					r = changed_paths(repo, se, sf, p, out);
				git_tree_free(se);
				git_tree_free(sf);
			} else {
				r = entry_paths(repo, e, p, out);
				if (!r && f)
					r = entry_paths(repo, f, p, out);
			}
			free(p);
		}
	}
	return r;
}

int sl_diff_trees(git_diff **out, git_repository *repo, git_tree *a, git_tree *b, sl_err *err)
{
	git_diff_options opts;
	sl_strvec paths = SL_STRVEC_INIT;
	int ret = SL_ERROR;

	*out = NULL;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (changed_paths(repo, a, b, "", &paths))
		goto fail;
	if (paths.n) {
		/* exact file paths: the tree iterators skip every other directory */
		opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
		opts.pathspec.strings = paths.v;
		opts.pathspec.count = paths.n;
	}
	if (git_diff_tree_to_tree(out, repo, a, b, &opts))
		goto fail;
	ret = SL_OK;
	goto done;
fail:
	sl_err_set(err, SL_ERROR, "cannot diff trees: %s", sl_git_error());
done:
	sl_strvec_release(&paths);
	return ret;
}

int sl_diff_commits(git_diff **out, git_tree **b_tree, git_repository *repo, const git_oid *a,
		    const git_oid *b, const char *path, sl_err *err)
{
	git_commit *ac = NULL, *bc = NULL;
	git_tree *at = NULL, *bt = NULL;
	git_diff_options opts;
	char *paths[1];
	int ret = SL_ERROR;

	*out = NULL;
	if (b_tree)
		*b_tree = NULL;
	if (git_commit_lookup(&ac, repo, a) || git_commit_lookup(&bc, repo, b) ||
	    git_commit_tree(&at, ac) || git_commit_tree(&bt, bc)) {
		sl_err_set(err, SL_ERROR, "cannot read the commits to diff: %s", sl_git_error());
		goto done;
	}
	if (!path) {
		ret = sl_diff_trees(out, repo, at, bt, err);
		goto done;
	}
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	paths[0] = (char *)path;
	opts.pathspec.strings = paths;
	opts.pathspec.count = 1;
	opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	opts.context_lines = 0;
	if (git_diff_tree_to_tree(out, repo, at, bt, &opts))
		sl_err_set(err, SL_ERROR, "cannot diff trees: %s", sl_git_error());
	else
		ret = SL_OK;
done:
	if (!ret && b_tree) {
		*b_tree = bt;
		bt = NULL;
	}
	git_tree_free(at);
	git_tree_free(bt);
	git_commit_free(ac);
	git_commit_free(bc);
	return ret;
}

int sl_dl_load(const char *const *names, const char *const *syms, void *const *fns,
	       char *why, size_t whylen)
{
	void *lib = NULL;

	for (size_t i = 0; !lib && names[i]; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, whylen, "%s", dlerror());
		return -1;
	}
	for (size_t i = 0; syms[i]; i++) {
		void *p = dlsym(lib, syms[i]);

		if (!p) {
			snprintf(why, whylen, "%s has no %s", names[0], syms[i]);
			return -1;      /* the library stays mapped */
		}
		memcpy(fns[i], &p, sizeof(p));  /* POSIX: a function's address as a void * */
	}
	return 0;
}

int sl_send_fd(int sock, char byte, int fd)
{
	return sl_send_fd_with(sock, &byte, 1, fd);
}

int sl_send_fd_with(int sock, const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)buf, len };
	struct msghdr m;
	struct cmsghdr *cm;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	memset(cbuf, 0, sizeof(cbuf));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

ssize_t sl_recv_fd(int sock, void *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, len };
	struct msghdr m;
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (cm = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return n;
}
