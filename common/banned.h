/*
 * banned.h - string functions sluice never calls.
 *
 * Included last by common/util.h so every translation unit that uses the
 * project's helpers gets it.  Each banned name expands to a call of an
 * undeclared function, so a use fails to compile with a clear name.  Use the
 * bounded forms instead: sl_buf_addf, snprintf, memcpy with a checked length.
 */
#ifndef SL_BANNED_H
#define SL_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)

#endif
