/*
 * term.c - sl_term_safe(): control characters and escape sequences shown,
 * never sent to the terminal.  Reads only its argument.
 */
#include <stdint.h>

#include "common/term.h"

size_t sl_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* sl_utf8_seq(), but a C1 control (CSI U+009B, OSC U+009D, ...) is invalid too */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = sl_utf8_seq(s, n);

	if (len == 2 && s[0] == 0xc2 && s[1] <= 0x9f)
		return 0;
	return len;
}

void sl_term_safe(sl_buf *out, const char *text, size_t len, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		size_t n = utf8_len(s + i, len - i);

		if (n > 1) {
			sl_buf_add(out, s + i, n);
			i += n;
			continue;
		}
		if (n == 1 && (s[i] >= 0x20 || s[i] == '\n' || s[i] == '\t') && s[i] != 0x7f) {
			sl_buf_addch(out, s[i]);
		} else if (flags & SL_TERM_JSON) {
			/* a C1 control is two bytes (U+0080-U+009F); anything else one */
			unsigned cp = s[i] == 0xc2 && i + 1 < len ? s[++i] : s[i];

			sl_buf_addf(out, "\\u%04x", cp);
		} else if (n == 1) {
			sl_buf_addch(out, '^');
			sl_buf_addch(out, s[i] == 0x7f ? '?' : s[i] + 0x40);
		} else {
			/* one byte of a C1 control or of no valid UTF-8 */
			sl_buf_addch(out, '\\');
			sl_buf_addch(out, 'x');
			sl_buf_addch(out, hex[s[i] >> 4]);
			sl_buf_addch(out, hex[s[i] & 15]);
		}
		i++;
	}
}
