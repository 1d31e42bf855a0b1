/*
 * util.h - small helpers every stage uses: checked allocation and size
 * arithmetic, BUG(), files, directories, globs, clocks, string vectors.
 *
 * Allocation failure aborts with a message (there is no useful recovery);
 * everything that can fail because of the outside world returns an SL_E*
 * code and fills an sl_err.
 */
#ifndef SL_UTIL_H
#define SL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"

/* A state that cannot happen: print where and abort. */
#define BUG(...) sl_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void sl_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void *sl_xmalloc(size_t n);
void *sl_xcalloc(size_t nmemb, size_t size);
void *sl_xrealloc(void *p, size_t n);
char *sl_xstrdup(const char *s);
char *sl_xstrndup(const char *s, size_t n);

/*
 * Load the first of the NULL-terminated library names that dlopen finds
 * (RTLD_NOW | RTLD_LOCAL) and store the address of each of the
 * NULL-terminated symbols into the function pointer fns[i] points to.
 * Returns 0, or -1 with why (whylen bytes) saying what was missing.  For
 * libraries only some commands need (libcurl, libxml2): one not linked is
 * never mapped, nor what it pulls in.
 */
int sl_dl_load(const char *const *names, const char *const *syms, void *const *fns,
	       char *why, size_t whylen);
/* NULL-safe strdup: NULL in, NULL out. */
char *sl_xstrdup_or_null(const char *s);

/* Checked size arithmetic: abort on overflow (sizes from input are checked first). */
size_t sl_st_add(size_t a, size_t b);
size_t sl_st_mult(size_t a, size_t b);

/* Grow *v (holding *alloc elements of size elem) to hold at least n. */
#define SL_ALLOC_GROW(v, n, alloc) \
	do { if ((n) > (alloc)) { \
		size_t na_ = (alloc) ? (alloc) * 2 : 8; \
		while (na_ < (n)) na_ *= 2; \
		(v) = sl_xrealloc((v), sl_st_mult(na_, sizeof(*(v)))); \
		(alloc) = na_; } } while (0)

/* A NULL-terminated vector of owned strings. */
typedef struct sl_strvec {
	char **v;        /* v[n] == NULL once anything was pushed; may be NULL when n == 0 */
	size_t n, alloc;
} sl_strvec;
#define SL_STRVEC_INIT { .v = NULL }

/* The last libgit2 error's message on this thread, or fallback when there is none. */
const char *sl_git_error_or(const char *fallback);
/* The same, with "unknown libgit2 error" as the fallback. */
const char *sl_git_error(void);

/*
 * git_diff_tree_to_tree(out, repo, a, b, NULL) without walking what is the
 * same: only subtrees whose ids differ are read, and the diff is limited to
 * the files found there, so its cost follows the change, not the size of
 * the tree.  The same deltas as the whole diff.  *out is the caller's.
 */
struct git_diff;
struct git_repository;
struct git_tree;
int sl_diff_trees(struct git_diff **out, struct git_repository *repo, struct git_tree *a,
		  struct git_tree *b, sl_err *err);

/*
 * Look up commits a and b and diff their trees: with path NULL every
 * changed file (sl_diff_trees); else that one file only, its hunks without
 * context lines (which lines a change touches).  b_tree: when not NULL,
 * also b's tree.  *out and *b_tree are the caller's, NULL on failure.
 */
struct git_oid;
int sl_diff_commits(struct git_diff **out, struct git_tree **b_tree,
		    struct git_repository *repo, const struct git_oid *a,
		    const struct git_oid *b, const char *path, sl_err *err);

/*
 * Progress and notices from the library: one line, without its newline,
 * for the program to show (only pipeline/cli/ writes to a terminal).
 */
typedef void (*sl_notice_fn)(void *ctx, const char *line);

/* A position in a text file (the campaign file, a query). */
typedef struct sl_pos {
	uint32_t line, col;         /* 1-based; 0 when unknown */
} sl_pos;
void sl_strvec_push(sl_strvec *sv, const char *s);       /* copies s */
void sl_strvec_push_nodup(sl_strvec *sv, char *s);       /* takes s */
void sl_strvec_release(sl_strvec *sv);

/* Read a whole file into b (appending); cap 0 = unbounded. */
int sl_read_file(sl_buf *b, const char *path, size_t cap, sl_err *err);
/* Read everything from fd into b until EOF (appending). */
int sl_read_fd(sl_buf *b, int fd, sl_err *err);
/* Write len bytes atomically enough for our use: temp file + rename. */
int sl_write_file(const char *path, const void *data, size_t len, sl_err *err);
/* Write all bytes to fd, retrying on EINTR and short writes. */
int sl_write_all(int fd, const void *data, size_t len);

/* mkdir -p with mode. */
int sl_mkdir_p(const char *path, unsigned mode, sl_err *err);
/* rm -rf that never follows symlinks and never crosses into other mounts. */
int sl_rm_rf(const char *path, sl_err *err);

/* Absolute, normalised path of an existing file; caller frees. */
char *sl_realpath(const char *path, sl_err *err);
/* Join dir and name with one '/'; caller frees. */
char *sl_path_join(const char *dir, const char *name);
/* 1 if path is dir itself or below it (both absolute and normalised). */
int sl_path_is_under(const char *path, const char *dir);

/*
 * Glob match on '/'-separated paths: '*' and '?' do not cross '/', a whole
 * segment "**" matches any number of directories (so "src/ ** /x.c", without
 * the spaces, matches src/x.c and src/a/b/x.c), [...] classes as fnmatch.
 * Returns 1 on match.
 */
int sl_glob_match(const char *pattern, const char *path);

/* Monotonic milliseconds, and wall-clock seconds formatted as ISO-8601 UTC. */
int64_t sl_now_ms(void);
/*
 * Wall-clock milliseconds since the Unix epoch: for times other processes and
 * machines compare (leases, heartbeats), which a monotonic clock, private to
 * one boot of one machine, cannot give.
 */
int64_t sl_wall_ms(void);
void sl_iso8601_now(char out[32]);

/* Nearest line/column helpers on a byte buffer: 1-based line of offset. */
uint32_t sl_line_of(const char *text, size_t len, size_t offset);

/* Environment variable or default. */
const char *sl_getenv_or(const char *name, const char *dflt);

/*
 * Send one byte and, with it, the descriptor fd (SCM_RIGHTS) on the Unix
 * socket sock: 0 when sent, -1 (errno set) when not.  Async-signal-safe, so
 * a child between fork and exec may use it.
 */
int sl_send_fd(int sock, char byte, int fd);
/* sl_send_fd() with len bytes of buf as the message (one message on a SOCK_SEQPACKET socket). */
int sl_send_fd_with(int sock, const void *buf, size_t len, int fd);
/*
 * Receive one message of at most len bytes into buf, and the descriptor
 * sent with it (close-on-exec) into *fd, or -1 when none came; returns
 * what recvmsg() returned (retried on EINTR).  Async-signal-safe.
 */
ssize_t sl_recv_fd(int sock, void *buf, size_t len, int *fd);

#include "common/banned.h"

#endif
