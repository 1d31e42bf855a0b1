/*
 * buf.c - growable, NUL-terminated buffers with an optional hard cap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/term.h"
#include "common/util.h"

char sl_buf_empty[1];

void sl_buf_init(sl_buf *b, size_t cap)
{
	b->buf = sl_buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->truncated = 0;
}

void sl_buf_release(sl_buf *b)
{
	size_t cap = b->cap;

	if (b->alloc)
		free(b->buf);
	sl_buf_init(b, cap);
}

char *sl_buf_detach(sl_buf *b, size_t *len_out)
{
	char *ret;

	if (!b->alloc)
		sl_buf_grow(b, 0);
	ret = b->buf;
	if (len_out)
		*len_out = b->len;
	sl_buf_init(b, b->cap);
	return ret;
}

void sl_buf_reset(sl_buf *b)
{
	b->len = 0;
	b->truncated = 0;
	if (b->alloc)
		b->buf[0] = '\0';
}

void sl_buf_grow(sl_buf *b, size_t extra)
{
	size_t need = sl_st_add(sl_st_add(b->len, extra), 1);
	size_t n;
	char *p;

	if (b->alloc >= need)
		return;
	n = b->alloc ? b->alloc : 64;
	while (n < need)
		n = sl_st_mult(n, 2);
	if (b->alloc) {
		p = sl_xrealloc(b->buf, n);
	} else {
		p = sl_xmalloc(n);
		p[0] = '\0';
	}
	b->buf = p;
	b->alloc = n;
}

void sl_buf_setlen(sl_buf *b, size_t len)
{
	if (len > b->len && len >= b->alloc)
		BUG("sl_buf_setlen beyond allocation");
	b->len = len;
	if (b->alloc)
		b->buf[len] = '\0';
}

int sl_buf_add(sl_buf *b, const void *data, size_t len)
{
	int ret = SL_OK;

	if (b->cap && sl_st_add(b->len, len) > b->cap) {
		len = b->cap > b->len ? b->cap - b->len : 0;
		b->truncated = 1;
		ret = SL_EBUDGET;
	}
	if (!len) {
		if (!b->alloc)
			sl_buf_grow(b, 0);
		return ret;
	}
	sl_buf_grow(b, len);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return ret;
}

int sl_buf_adds(sl_buf *b, const char *s)
{
	return sl_buf_add(b, s, strlen(s));
}

int sl_buf_addch(sl_buf *b, int c)
{
	char ch = (char)c;

	return sl_buf_add(b, &ch, 1);
}

int sl_buf_add_uint(sl_buf *b, uintmax_t v)
{
	char digits[24];
	size_t i = sizeof(digits);

	do
		digits[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	return sl_buf_add(b, digits + i, sizeof(digits) - i);
}

int sl_buf_vaddf(sl_buf *b, const char *fmt, va_list ap)
{
	char small[256];
	va_list cp;
	int n, ret;
	char *big;

	va_copy(cp, ap);
	n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed");
	if ((size_t)n < sizeof(small))
		return sl_buf_add(b, small, (size_t)n);
	big = sl_xmalloc((size_t)n + 1);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	ret = sl_buf_add(b, big, (size_t)n);
	free(big);
	return ret;
}

int sl_buf_addf(sl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = sl_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return ret;
}

void sl_buf_rtrim(sl_buf *b)
{
	while (b->len && isspace((unsigned char)b->buf[b->len - 1]))
		b->len--;
	if (b->alloc)
		b->buf[b->len] = '\0';
}

void sl_buf_add_json_str(sl_buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	sl_buf_addch(b, '"');
	while (i < len) {
		size_t run = i, n;

		/* a run of bytes that go out as they are */
		while (run < len && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		sl_buf_add(b, s + i, run - i);
		if ((i = run) == len)
			break;
		if (u[i] >= 0x80) {
			n = sl_utf8_seq(u + i, len - i);
			if (n)
				sl_buf_add(b, s + i, n);
			else
				sl_buf_adds(b, "\\ufffd");
			i += n ? n : 1;
			continue;
		}
		switch (u[i]) {
		case '"': sl_buf_adds(b, "\\\""); break;
		case '\\': sl_buf_adds(b, "\\\\"); break;
		case '\b': sl_buf_adds(b, "\\b"); break;
		case '\f': sl_buf_adds(b, "\\f"); break;
		case '\n': sl_buf_adds(b, "\\n"); break;
		case '\r': sl_buf_adds(b, "\\r"); break;
		case '\t': sl_buf_adds(b, "\\t"); break;
		default:
			sl_buf_adds(b, "\\u00");
			sl_buf_addch(b, hex[u[i] >> 4]);
			sl_buf_addch(b, hex[u[i] & 15]);
			break;
		}
		i++;
	}
	sl_buf_addch(b, '"');
}
