#ifndef UI_H
#define UI_H
#include <stddef.h>
void ui_title(char *dst, size_t cap, const char *name);
#endif
