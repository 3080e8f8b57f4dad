/*
 * The second pass of the harnesses of checksummed formats (model files, fitter states): each
 * input is also tried with its size field (a u64 at offset 16) and its trailing CRC-32 made
 * right. Random mutations almost never keep the CRC-32 valid, so without this pass the
 * fuzzer would not get past the checksum to the structure and what is done with what loads.
 */
#ifndef MOE_FUZZ_REPAIRED_H
#define MOE_FUZZ_REPAIRED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* CRC-32 (IEEE, reflected), bit by bit: the harnesses' own, not the library's. */
static inline uint32_t fuzz_crc32(const unsigned char *bytes, size_t size)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
        crc ^= bytes[i];
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* Run check on a copy of the input whose size field and checksum are right, when the input
   is at least `smallest` bytes long. */
static inline void fuzz_check_repaired(const uint8_t *data, size_t size, size_t smallest,
                                       void (*check)(const uint8_t *, size_t))
{
    enum { SIZE_FIELD = 16, CHECKSUM = 4 };
    if (size < smallest || size < SIZE_FIELD + 8 + CHECKSUM)
        return;
    unsigned char *repaired = malloc(size);
    if (repaired == NULL)
        return;
    memcpy(repaired, data, size);
    for (int b = 0; b < 8; ++b)
        repaired[SIZE_FIELD + b] = (unsigned char)((uint64_t)size >> (8 * b));
    uint32_t crc = fuzz_crc32(repaired, size - CHECKSUM);
    for (int b = 0; b < 4; ++b)
        repaired[size - CHECKSUM + (size_t)b] = (unsigned char)(crc >> (8 * b));
    check(repaired, size);
    free(repaired);
}

#endif
