/*
 * err.c - the error buffer: set once, prefixed by outer layers, cleared for
 * reuse.  No globals, so concurrent work can each carry its own buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"

int sl_err_set(sl_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void sl_err_prefix(sl_err *err, const char *fmt, ...)
{
	char head[512], tail[sizeof(err->msg)];
	va_list ap;

	if (!err || !err->code)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(tail, err->msg, sizeof(tail));
	{
		size_t hl = strlen(head), tl = strlen(tail);

		if (hl >= sizeof(err->msg))
			hl = sizeof(err->msg) - 1;
		if (tl > sizeof(err->msg) - 1 - hl)
			tl = sizeof(err->msg) - 1 - hl;
		memcpy(err->msg, head, hl);
		memcpy(err->msg + hl, tail, tl);
		err->msg[hl + tl] = '\0';
	}
}

void sl_err_clear(sl_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
