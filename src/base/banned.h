/* banned.h - functions the tree must not call, made compile errors (as git's banned.h): each
 * writes into a buffer whose size it cannot know. Text goes through struct buf (buf_printf,
 * buf_fmt) or snprintf with the buffer's size; a copy of a measured string is a memcpy of its
 * length. The Makefile includes this header first in every file of ours (-include), after the
 * C library's declarations of these functions, so a call reads e.g.
 * `sorry_sprintf_is_a_banned_function`. */
#ifndef BASE_BANNED_H
#define BASE_BANNED_H

#include <stdio.h>
#include <string.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)

#endif
