/*
 * err.h - error codes and the error buffer passed down every call chain.
 *
 * Every fallible function returns an int: 0 (SL_OK) on success, a negative
 * SL_E* code on failure, and writes a one-line, lowercase, git-style message
 * into the caller's sl_err (which may be NULL when the caller does not care).
 * "A gate said no" is not an error: it is a result, returned in an out
 * parameter and recorded.  Errors are for bad input and broken machinery.
 *
 * The first message written wins: deeper layers set the precise cause, and
 * outer layers use sl_err_prefix() to add where (file:line:col, target...).
 */
#ifndef SL_ERR_H
#define SL_ERR_H

#include <stddef.h>

enum sl_code {
	SL_OK = 0,
	SL_ERROR = -1,    /* the machinery broke: I/O, libgit2, sqlite, fork */
	SL_EINPUT = -2,   /* bad user input: arguments, spec, query, files */
	SL_ENOTFOUND = -3,/* a named thing does not exist (id, revision, path) */
	SL_EREFUSED = -4, /* an edit or request was refused for a stated reason */
	SL_EBUDGET = -5,  /* a budget or limit was reached */
	SL_EBASE = -6,    /* a gate cannot judge: it fails on the base commit, or its
			     command is missing (126/127); the campaign stops */
	SL_ELEASE = -7,   /* the run no longer holds the target's lease (another run
			     took it over): it writes nothing more for that target */
};

typedef struct sl_err {
	int code;        /* the SL_E* code of the first error set, 0 if none */
	char msg[1024];  /* NUL-terminated; empty when code == 0 */
} sl_err;

#define SL_ERR_INIT { .code = 0 }

/* Record an error (printf-style) unless one is already recorded; returns code. */
int sl_err_set(sl_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend context ("spec.yaml:3:5: ") to the recorded message, if any. */
void sl_err_prefix(sl_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Forget the recorded error so the buffer can be reused. */
void sl_err_clear(sl_err *err);

#endif
