/* CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320) for the model file format. */
#ifndef MOE_LIB_CHECKSUM_H
#define MOE_LIB_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Continue a CRC-32 over `size` more bytes. Start with crc = 0; the value
 * returned after the last piece is the checksum (pre- and post-inversion are
 * handled inside, so pieces can be fed in any split). size 0 returns crc.
 */
uint32_t moe_crc32_update(uint32_t crc, const void *data, size_t size);

/* CRC-32 of one buffer: moe_crc32("123456789", 9) == 0xCBF43926. */
uint32_t moe_crc32(const void *data, size_t size);

#endif
