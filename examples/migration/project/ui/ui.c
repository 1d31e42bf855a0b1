/* ui.c - titles.  dst is a pointer: only its caller knows its size (cap). */
#include "buf.h"
#include "ui.h"

void ui_title(char *dst, size_t cap, const char *name)
{
	(void)cap;
	buf_copy(dst, name);
}
