/*
 * CRC-32 as used by zip, PNG and Ethernet: polynomial 0x04C11DB7 processed
 * least significant bit first (reflected constant 0xEDB88320), register
 * preset to all ones, result inverted.
 *
 * The register is advanced four bits at a time through a 16-entry table:
 * nibble_table[i] is the register change caused by shifting the four bits i
 * out of an otherwise zero register. Two lookups per byte are fast enough for
 * model files and keep the table small enough to check by eye.
 */
#include "common/checksum.h"

static const uint32_t nibble_table[16] = {
    0x00000000U, 0x1DB71064U, 0x3B6E20C8U, 0x26D930ACU,
    0x76DC4190U, 0x6B6B51F4U, 0x4DB26158U, 0x5005713CU,
    0xEDB88320U, 0xF00F9344U, 0xD6D6A3E8U, 0xCB61B38CU,
    0x9B64C2B0U, 0x86D3D2D4U, 0xA00AE278U, 0xBDBDF21CU,
};

uint32_t moe_crc32_update(uint32_t crc, const void *data, size_t size)
{
    const unsigned char *bytes = data;
    uint32_t reg = ~crc;
    for (size_t i = 0; i < size; ++i) {
        reg ^= bytes[i];
        reg = (reg >> 4) ^ nibble_table[reg & 0x0FU];
        reg = (reg >> 4) ^ nibble_table[reg & 0x0FU];
    }
    return ~reg;
}

uint32_t moe_crc32(const void *data, size_t size)
{
    return moe_crc32_update(0, data, size);
}
