/*
 * UTF-8 checks for the moe tool: names and labels read from CSV files must be
 * UTF-8 (they are saved in models and written into JSON and SVG, which are
 * UTF-8 by definition).
 */
#ifndef MOE_PROGRAMS_UTF8_H
#define MOE_PROGRAMS_UTF8_H

#include <stddef.h>

/*
 * Length (1 to 4) of the well-formed UTF-8 sequence at the start of `text`, which holds
 * `available` bytes; 0 when the bytes there are not one (a stray continuation byte, an
 * overlong form, a surrogate, a code point above U+10FFFF or a sequence cut short).
 * *code_point receives the character when it is not NULL.
 */
size_t utf8_sequence(const unsigned char *text, size_t available, unsigned long *code_point);

/* Offset of the first byte of `text` (length bytes) that does not begin a well-formed
   sequence, or `length` when all of it is UTF-8. */
size_t utf8_invalid_offset(const char *text, size_t length);

#endif
