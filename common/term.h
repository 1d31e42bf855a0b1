/*
 * term.h - text from outside made safe for a terminal.
 *
 * Gate output, model replies, repository paths and anything else sluice
 * prints that came from outside may hold control characters and escape
 * sequences (window titles, clipboard writes through OSC 52, cursor or
 * status reports that make the terminal type back).  sl_term_safe() copies
 * text into a buffer with every such byte shown instead of sent: C0
 * controls but newline and tab as "^X" (ESC is "^["), DEL as "^?", the C1
 * controls U+0080-U+009F and bytes that are not UTF-8 as "\xNN".  Valid
 * UTF-8 text passes unchanged.  With SL_TERM_JSON (the text is JSON that
 * jansson wrote) each of those characters is a \u00XX escape instead, so
 * the output stays the same JSON value.  Only what is printed is filtered;
 * what is stored stays exact.
 */
#ifndef SL_TERM_H
#define SL_TERM_H

#include <stddef.h>

#include "common/buf.h"

#define SL_TERM_JSON 1u

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes, n > 0): 1 for
 * ASCII, 2-4, or 0 if invalid (overlong, a surrogate, beyond U+10FFFF,
 * truncated).
 */
size_t sl_utf8_seq(const unsigned char *s, size_t n);

/* Append text[0..len) to out, neutralised as above; flags: SL_TERM_JSON or 0. */
void sl_term_safe(sl_buf *out, const char *text, size_t len, unsigned flags);

#endif
