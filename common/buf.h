/*
 * buf.h - a growable byte buffer, always NUL-terminated, never NULL.
 *
 * After sl_buf_init() (or SL_BUF_INIT) b.buf points at a valid string, so a
 * buffer can be printed or compared without checks.  A non-zero cap bounds
 * the length for anything read from outside (model replies, subprocess
 * output, files in a worktree): an append that would pass the cap keeps what
 * fits, sets b.truncated and returns SL_EBUDGET.  Allocation failure aborts
 * (as git's xmalloc does); there is nothing sensible to recover.
 *
 * Lifecycle: sl_buf_init / SL_BUF_INIT, appends, sl_buf_release (the struct
 * is reusable afterwards) or sl_buf_detach (the caller owns the bytes).
 */
#ifndef SL_BUF_H
#define SL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern char sl_buf_empty[];

typedef struct sl_buf {
	char *buf;       /* NUL-terminated contents */
	size_t len;      /* bytes in buf, not counting the NUL */
	size_t alloc;    /* 0 while buf points at sl_buf_empty */
	size_t cap;      /* 0: unbounded; else the largest len allowed */
	int truncated;   /* set when an append was cut at cap */
} sl_buf;

#define SL_BUF_INIT { .buf = sl_buf_empty }

void sl_buf_init(sl_buf *b, size_t cap);
void sl_buf_release(sl_buf *b);
/* Hand the bytes to the caller (free() them); b is re-initialised, cap kept. */
char *sl_buf_detach(sl_buf *b, size_t *len_out);
void sl_buf_reset(sl_buf *b);
void sl_buf_grow(sl_buf *b, size_t extra);
void sl_buf_setlen(sl_buf *b, size_t len);

int sl_buf_add(sl_buf *b, const void *data, size_t len);
int sl_buf_adds(sl_buf *b, const char *s);
int sl_buf_addch(sl_buf *b, int c);
/* Append v in decimal: what "%ju" would, without a format to read. */
int sl_buf_add_uint(sl_buf *b, uintmax_t v);
int sl_buf_addf(sl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sl_buf_vaddf(sl_buf *b, const char *fmt, va_list ap);

/* Remove trailing whitespace. */
void sl_buf_rtrim(sl_buf *b);
/*
 * Append s[0..len) as a JSON string, quotes included, escaped as jansson
 * writes it ('"', '\\', \b \f \n \r \t, other controls as \u00XX; UTF-8
 * as it is); a byte of no valid UTF-8 becomes \ufffd.
 */
void sl_buf_add_json_str(sl_buf *b, const char *s, size_t len);

#endif
