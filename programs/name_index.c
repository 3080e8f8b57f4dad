#define _POSIX_C_SOURCE 200809L /* getpid */

#include "name_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rotate(uint64_t x, unsigned bits)
{
    return (x << bits) | (x >> (64 - bits));
}

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

static void sip_round(sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = rotate(s->v1, 13) ^ s->v0;
    s->v0 = rotate(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotate(s->v3, 16) ^ s->v2;
    s->v0 += s->v3;
    s->v3 = rotate(s->v3, 21) ^ s->v0;
    s->v2 += s->v1;
    s->v1 = rotate(s->v1, 17) ^ s->v2;
    s->v2 = rotate(s->v2, 32);
}

static void sip_absorb(sip_state *s, uint64_t word)
{
    s->v3 ^= word;
    sip_round(s);
    sip_round(s);
    s->v0 ^= word;
}

/* SipHash-2-4 (Aumasson and Bernstein): a keyed hash made for hash tables fed by
   untrusted input; without the key, colliding names cannot be computed in advance. */
static uint64_t keyed_hash(const uint64_t key[2], const char *text, size_t length)
{
    sip_state s = {key[0] ^ 0x736f6d6570736575u, key[1] ^ 0x646f72616e646f6du,
                   key[0] ^ 0x6c7967656e657261u, key[1] ^ 0x7465646279746573u};
    const unsigned char *bytes = (const unsigned char *)text;
    size_t whole = length - length % 8;
    for (size_t at = 0; at < whole; at += 8) {
        uint64_t word = 0;
        for (unsigned b = 0; b < 8; ++b)
            word |= (uint64_t)bytes[at + b] << (8 * b);
        sip_absorb(&s, word);
    }
    uint64_t last = (uint64_t)(length & 0xff) << 56;
    for (size_t b = 0; whole + b < length; ++b)
        last |= (uint64_t)bytes[whole + b] << (8 * b);
    sip_absorb(&s, last);
    s.v2 ^= 0xff;
    for (int r = 0; r < 4; ++r)
        sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* A key nobody can predict: the kernel's random bytes, else the clock, the process
   and the address layout mixed. */
static void draw_key(uint64_t key[2])
{
    FILE *random = fopen("/dev/urandom", "rb");
    size_t got = random != NULL ? fread(key, sizeof(uint64_t), 2, random) : 0;
    if (random != NULL)
        fclose(random);
    if (got == 2)
        return;
    struct timespec now = {0, 0};
    clock_gettime(CLOCK_REALTIME, &now);
    key[0] = ((uint64_t)now.tv_sec << 30) ^ (uint64_t)now.tv_nsec ^ (uint64_t)(uintptr_t)key;
    key[1] = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&draw_key ^ (uint64_t)clock();
}

static int allocate(name_index *index, size_t slots)
{
    index->names = calloc(slots, sizeof(const char *));
    index->values = malloc(slots * sizeof(size_t));
    if (index->names == NULL || index->values == NULL) {
        free(index->names);
        free(index->values);
        index->names = NULL;
        index->values = NULL;
        return -1;
    }
    index->slots = slots;
    return 0;
}

int name_index_init(name_index *index, size_t expected)
{
    memset(index, 0, sizeof *index);
    size_t slots = 16;
    while (slots / 2 < expected) {
        if (slots > SIZE_MAX / 4)
            return -1;
        slots *= 2;
    }
    draw_key(index->key);
    return allocate(index, slots);
}

void name_index_free(name_index *index)
{
    free(index->names);
    free(index->values);
    memset(index, 0, sizeof *index);
}

/* The slot holding `name`, or the empty slot where it would go. */
static size_t slot_of(const name_index *index, const char *name)
{
    size_t mask = index->slots - 1;
    size_t slot = (size_t)keyed_hash(index->key, name, strlen(name)) & mask;
    while (index->names[slot] != NULL && strcmp(index->names[slot], name) != 0)
        slot = (slot + 1) & mask;
    return slot;
}

static int grow(name_index *index)
{
    if (index->slots > SIZE_MAX / 4)
        return -1;
    name_index bigger = *index;
    if (allocate(&bigger, 2 * index->slots) != 0)
        return -1;
    for (size_t s = 0; s < index->slots; ++s)
        if (index->names[s] != NULL) {
            size_t slot = slot_of(&bigger, index->names[s]);
            bigger.names[slot] = index->names[s];
            bigger.values[slot] = index->values[s];
        }
    free(index->names);
    free(index->values);
    *index = bigger;
    return 0;
}

int name_index_add(name_index *index, const char *name, size_t value, size_t *existing)
{
    size_t slot = slot_of(index, name);
    if (index->names[slot] != NULL) {
        if (existing != NULL)
            *existing = index->values[slot];
        return 0;
    }
    /* At most half full, so probe runs stay short. */
    if (2 * (index->count + 1) > index->slots) {
        if (grow(index) != 0)
            return -1;
        slot = slot_of(index, name);
    }
    index->names[slot] = name;
    index->values[slot] = value;
    index->count++;
    return 1;
}

int name_index_find(const name_index *index, const char *name, size_t *value)
{
    if (index->slots == 0)
        return 0;
    size_t slot = slot_of(index, name);
    if (index->names[slot] == NULL)
        return 0;
    *value = index->values[slot];
    return 1;
}
