/* buf.h - string buffers: the library's public API. */
#ifndef BUF_H
#define BUF_H

#include <stddef.h>

/* Deprecated: copies src into dst without knowing dst's size. */
void buf_copy(char *dst, const char *src);

/* Copy src into dst (size bytes), truncating; returns the length src needed. */
size_t buf_copy_n(char *dst, size_t size, const char *src);

#endif
