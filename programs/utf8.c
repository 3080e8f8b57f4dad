#include "utf8.h"

size_t utf8_sequence(const unsigned char *text, size_t available, unsigned long *code_point)
{
    if (available == 0)
        return 0;
    unsigned char lead = text[0];
    size_t length;
    unsigned long value, smallest;
    if (lead < 0x80) {
        length = 1;
        value = lead;
        smallest = 0;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        value = lead & 0x1fu;
        smallest = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        value = lead & 0x0fu;
        smallest = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        value = lead & 0x07u;
        smallest = 0x10000;
    } else {
        return 0; /* a continuation byte, 0xc0/0xc1 (always overlong) or 0xf5 and above */
    }
    if (available < length)
        return 0;
    for (size_t i = 1; i < length; ++i) {
        if ((text[i] & 0xc0u) != 0x80u)
            return 0;
        value = (value << 6) | (text[i] & 0x3fu);
    }
    /* Overlong forms would give one character two spellings; surrogates are UTF-16's. */
    if (value < smallest || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff))
        return 0;
    if (code_point != NULL)
        *code_point = value;
    return length;
}

size_t utf8_invalid_offset(const char *text, size_t length)
{
    const unsigned char *bytes = (const unsigned char *)text;
    size_t at = 0;
    while (at < length) {
        if (bytes[at] < 0x80) { /* the common case, without a call */
            ++at;
            continue;
        }
        size_t step = utf8_sequence(bytes + at, length - at, NULL);
        if (step == 0)
            return at;
        at += step;
    }
    return length;
}
