/*
 * A set of names with a value each (column names to column numbers), so a header of
 * many thousand columns is checked for duplicates and searched in linear time.
 * Open addressing over a keyed hash: the key is drawn per index, so nobody can write
 * a header whose names all land in one slot.
 */
#ifndef MOE_PROGRAMS_NAME_INDEX_H
#define MOE_PROGRAMS_NAME_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct name_index {
    const char **names; /* per slot: the name (not copied), or NULL */
    size_t *values;
    size_t slots;       /* a power of two, at least twice count */
    size_t count;
    uint64_t key[2];
} name_index;

/* An empty index with room for `expected` names; 0, or -1 when out of memory. */
int name_index_init(name_index *index, size_t expected);
void name_index_free(name_index *index);

/*
 * Add `name` (which must outlive the index) with `value`. Returns 1 when added, 0 when
 * the name is already there (its value in *existing, when not NULL), -1 when out of
 * memory.
 */
int name_index_add(name_index *index, const char *name, size_t value, size_t *existing);

/* 1 and the value in *value when `name` is in the index, else 0. */
int name_index_find(const name_index *index, const char *name, size_t *value);

#endif
