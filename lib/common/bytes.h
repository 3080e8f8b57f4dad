/*
 * Little-endian, fixed-width encoding of the file formats (models, fitter states): integers
 * byte by byte, doubles as their IEEE-754 bit patterns, so the bytes are the same on every
 * platform.
 */
#ifndef MOE_LIB_BYTES_H
#define MOE_LIB_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void moe_put_u32(unsigned char *at, uint32_t value)
{
    for (int i = 0; i < 4; ++i)
        at[i] = (unsigned char)(value >> (8 * i));
}

static inline void moe_put_u64(unsigned char *at, uint64_t value)
{
    for (int i = 0; i < 8; ++i)
        at[i] = (unsigned char)(value >> (8 * i));
}

static inline void moe_put_double(unsigned char *at, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    moe_put_u64(at, bits);
}

static inline uint32_t moe_get_u32(const unsigned char *at)
{
    uint32_t value = 0;
    for (int i = 3; i >= 0; --i)
        value = (value << 8) | at[i];
    return value;
}

static inline uint64_t moe_get_u64(const unsigned char *at)
{
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i)
        value = (value << 8) | at[i];
    return value;
}

static inline double moe_get_double(const unsigned char *at)
{
    uint64_t bits = moe_get_u64(at);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The same, at a cursor that moves past what it wrote or read (a format of fields in a row). */
static inline void moe_write_u64(unsigned char **at, uint64_t value)
{
    moe_put_u64(*at, value);
    *at += 8;
}

static inline void moe_write_double(unsigned char **at, double value)
{
    moe_put_double(*at, value);
    *at += 8;
}

static inline uint64_t moe_read_u64(const unsigned char **at)
{
    uint64_t value = moe_get_u64(*at);
    *at += 8;
    return value;
}

static inline double moe_read_double(const unsigned char **at)
{
    double value = moe_get_double(*at);
    *at += 8;
    return value;
}

#endif
