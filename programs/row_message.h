/*
 * libmoe's messages about a row of the data in the terms of the file it was read from.
 */
#ifndef MOE_PROGRAMS_ROW_MESSAGE_H
#define MOE_PROGRAMS_ROW_MESSAGE_H

#include <stddef.h>

#include "table.h"

/*
 * A library message that names a row of the data (<moe/common.h>: "row I: ",
 * "row I, column J: ", "row I, response: ", "row I, weight: ") rewritten as the file's
 * errors are written (table.h): "PATH: line L: ...", "PATH: line L, column 'NAME': ...",
 * L the line where the row starts. Row I of the failing call is row first + I of `data`.
 * A message about the response column as a whole ("the response is constant ...") names
 * the column: "PATH: the response, column 'NAME', is constant ...". Returns `buffer` (of
 * `size` bytes) holding it, or `message` itself when it names no row of `data`.
 */
const char *row_message(const char *message, const char *path, const table *data,
                        size_t first, char *buffer, size_t size);

#endif
