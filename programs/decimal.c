#include "decimal.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    /* Significant digits gathered into a uint64_t: 19 always fit. */
    SIGNIFICAND_DIGITS = 19,
    /* Powers of ten in the table. Above POWER_MAX even a significand of 1 overflows;
       below POWER_MIN even 10^19 times the power is under half the smallest subnormal
       (2^-1075, about 2.5e-324), so the value rounds to zero. */
    POWER_MIN = -343,
    POWER_MAX = 308,
    /* A tie between two doubles has at most 767 significant digits: keeping 800 digits,
       and a final 1 standing for any nonzero rest, rounds as the whole number does. */
    FALLBACK_DIGITS = 800
};

/* The exponent of "1e<digits>" stops growing here: far past any exponent that a number
   of digits held in memory could bring back into the range of a double. */
#define EXPONENT_LIMIT 100000000000000000LL

/* 10^q as (high * 2^64 + low) * 2^binary_exponent, the 128-bit part in [2^127, 2^128)
   and rounded down; exact when 5^q fits 128 bits (0 <= q <= 55). */
typedef struct power_of_ten {
    uint64_t high, low;
    int binary_exponent;
    int exact;
} power_of_ten;

static power_of_ten powers[POWER_MAX - POWER_MIN + 1];
static atomic_int powers_state; /* 0: not built, 1: being built, 2: ready */

/* The table is computed once from exact integers rather than stored: 650 lines of
   constants cannot be checked by reading them, the computation can. */
enum { BIG_LIMBS = 28 }; /* 5^343 has 797 bits; a remainder twice it still fits 896 */

typedef struct big {
    uint32_t limb[BIG_LIMBS]; /* least significant first */
} big;

static void big_multiply_small(big *b, uint32_t factor)
{
    uint64_t carry = 0;
    for (int i = 0; i < BIG_LIMBS; ++i) {
        uint64_t product = (uint64_t)b->limb[i] * factor + carry;
        b->limb[i] = (uint32_t)product;
        carry = product >> 32;
    }
}

static int big_bit(const big *b, int position)
{
    if (position < 0 || position >= 32 * BIG_LIMBS)
        return 0;
    return (int)(b->limb[position / 32] >> (position % 32)) & 1;
}

static int big_length(const big *b)
{
    for (int position = 32 * BIG_LIMBS - 1; position >= 0; --position)
        if (big_bit(b, position))
            return position + 1;
    return 0;
}

/* The 64 bits of b from `position` up (below bit 0 reads zeros). */
static uint64_t big_window(const big *b, int position)
{
    uint64_t window = 0;
    for (int i = 63; i >= 0; --i)
        window = window << 1 | (uint64_t)big_bit(b, position + i);
    return window;
}

static void big_shift_left_one(big *b)
{
    uint32_t carry = 0;
    for (int i = 0; i < BIG_LIMBS; ++i) {
        uint32_t next = b->limb[i] >> 31;
        b->limb[i] = b->limb[i] << 1 | carry;
        carry = next;
    }
}

static int big_at_least(const big *a, const big *b)
{
    for (int i = BIG_LIMBS - 1; i >= 0; --i)
        if (a->limb[i] != b->limb[i])
            return a->limb[i] > b->limb[i];
    return 1;
}

static void big_subtract(big *a, const big *b)
{
    uint32_t borrow = 0;
    for (int i = 0; i < BIG_LIMBS; ++i) {
        uint64_t difference = (uint64_t)a->limb[i] - b->limb[i] - borrow;
        a->limb[i] = (uint32_t)difference;
        borrow = (uint32_t)(difference >> 63);
    }
}

static void build_powers(void)
{
    /* 10^q = 5^q * 2^q: the top 128 bits of 5^q. */
    big five = {{1}};
    for (int q = 0; q <= POWER_MAX; ++q) {
        if (q > 0)
            big_multiply_small(&five, 5);
        int length = big_length(&five);
        power_of_ten *p = &powers[q - POWER_MIN];
        p->high = big_window(&five, length - 64);
        p->low = big_window(&five, length - 128);
        p->binary_exponent = q + length - 128;
        p->exact = length <= 128;
    }
    /* 10^-m = 2^-m / 5^m: 128 bits of 2^(length - 1 + 128) / 5^m by long division,
       2^(length - 1) being just below 5^m. */
    big divisor = {{1}};
    for (int m = 1; m <= -POWER_MIN; ++m) {
        big_multiply_small(&divisor, 5);
        int length = big_length(&divisor);
        big remainder = {{0}};
        remainder.limb[(length - 1) / 32] = (uint32_t)1 << ((length - 1) % 32);
        uint64_t high = 0, low = 0;
        for (int bit = 0; bit < 128; ++bit) {
            big_shift_left_one(&remainder);
            int set = big_at_least(&remainder, &divisor);
            if (set)
                big_subtract(&remainder, &divisor);
            high = high << 1 | low >> 63;
            low = low << 1 | (uint64_t)set;
        }
        power_of_ten *p = &powers[-m - POWER_MIN];
        p->high = high;
        p->low = low;
        p->binary_exponent = -m - length - 127;
        p->exact = 0;
    }
}

static const power_of_ten *power(int q)
{
    if (atomic_load_explicit(&powers_state, memory_order_acquire) != 2) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&powers_state, &expected, 1)) {
            build_powers();
            atomic_store_explicit(&powers_state, 2, memory_order_release);
        } else {
            /* Another thread is building it: a millisecond at most. */
            while (atomic_load_explicit(&powers_state, memory_order_acquire) != 2)
                ;
        }
    }
    return &powers[q - POWER_MIN];
}

static void multiply(uint64_t a, uint64_t b, uint64_t *high, uint64_t *low)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 wide;
    wide product = (wide)a * b;
    *high = (uint64_t)(product >> 64);
    *low = (uint64_t)product;
#else
    uint64_t a_low = a & 0xffffffffu, a_high = a >> 32;
    uint64_t b_low = b & 0xffffffffu, b_high = b >> 32;
    uint64_t low_low = a_low * b_low, high_low = a_high * b_low;
    uint64_t low_high = a_low * b_high, high_high = a_high * b_high;
    uint64_t middle = (low_low >> 32) + (high_low & 0xffffffffu) + low_high;
    *low = (middle << 32) | (low_low & 0xffffffffu);
    *high = high_high + (high_low >> 32) + (middle >> 32);
#endif
}

static int leading_zeros(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_clzll(x);
#else
    int zeros = 0;
    for (uint64_t bit = (uint64_t)1 << 63; !(x & bit); bit >>= 1)
        ++zeros;
    return zeros;
#endif
}

/*
 * w * 10^q rounded to a normal double or infinity, w > 0. The product of w and the
 * table's 128 bits has 192 bits; the table's rounding down leaves the true value in
 * [product, product + 2^65) once the top bit is at 191. Returns 0, undecided, when a
 * tie lies in that range (or exactly at the product, unless the power is exact) or the
 * result is subnormal.
 */
static int round_product(uint64_t w, const power_of_ten *p, double *out)
{
    int shift = leading_zeros(w);
    uint64_t normalized = w << shift;
    uint64_t top, middle, high_low, low_high, bottom;
    multiply(normalized, p->high, &top, &high_low);
    multiply(normalized, p->low, &low_high, &bottom);
    middle = high_low + low_high;
    top += middle < high_low;
    int exponent = p->binary_exponent - shift;
    if (!(top >> 63)) {
        top = top << 1 | middle >> 63;
        middle = middle << 1 | bottom >> 63;
        bottom <<= 1;
        exponent -= 1;
    }
    int lead = 191 + exponent; /* the binary exponent of the leading bit */
    if (lead > DBL_MAX_EXP - 1) {
        *out = HUGE_VAL;
        return 1;
    }
    if (lead < DBL_MIN_EXP - 1)
        return 0; /* subnormal: fewer bits to round to, strtod's case */
    /* 53 bits kept, 139 below; the tie is bit 138 alone: rest 0x400, nothing lower. */
    uint64_t mantissa = top >> 11, rest = top & 0x7ff;
    int up;
    if (rest > 0x400 || (rest == 0x400 && (middle | bottom) != 0))
        up = 1;
    else if (p->exact)
        up = rest == 0x400 ? (int)(mantissa & 1) : 0;
    else if (rest < 0x3ff || (rest == 0x3ff && middle <= UINT64_MAX - 2))
        up = 0; /* even 2^65 more stays below the tie */
    else
        return 0;
    mantissa += (uint64_t)up;
    if (mantissa >> 53) {
        mantissa >>= 1;
        if (++lead > DBL_MAX_EXP - 1) {
            *out = HUGE_VAL;
            return 1;
        }
    }
    uint64_t bits = (uint64_t)(lead + DBL_MAX_EXP - 1) << 52 | (mantissa & (((uint64_t)1 << 52) - 1));
    memcpy(out, &bits, sizeof bits);
    return 1;
}

/* significand * 10^q when the digits past the significand (if any: truncated) do not
   change its rounding; 0 when that cannot be decided here. */
static int convert(uint64_t significand, int truncated, int q, double *out)
{
    const power_of_ten *p = power(q);
    if (!round_product(significand, p, out))
        return 0;
    if (!truncated)
        return 1;
    /* The number lies between significand and significand + 1 (times 10^q); rounding
       is monotonic, so when both ends round alike so does the number. */
    double upper;
    return round_product(significand + 1, p, &upper) && upper == *out;
}

/*
 * strtod on the digits of [digits, digits_end) (a '.' among them is skipped) times
 * 10^exponent, rewritten as "DDDDe-N": without a decimal point no locale reads it
 * differently.
 */
static double fallback(const char *digits, const char *digits_end, long long exponent)
{
    char text[FALLBACK_DIGITS + 32];
    size_t used = 0;
    long long dropped = 0;
    int sticky = 0;
    for (const char *c = digits; c < digits_end; ++c) {
        if (*c == '.' || (used == 0 && *c == '0'))
            continue;
        if (used < FALLBACK_DIGITS)
            text[used++] = *c;
        else {
            ++dropped;
            sticky |= *c != '0';
        }
    }
    if (sticky) {
        text[used++] = '1';
        --dropped;
    }
    if (used == 0)
        text[used++] = '0';
    snprintf(text + used, sizeof text - used, "e%lld", exponent + dropped);
    return strtod(text, NULL);
}

/* Digits gathered so far: the first SIGNIFICAND_DIGITS significant ones in
   `significand`, and how many came after them. */
typedef struct digits {
    uint64_t significand;
    int kept;
    int truncated;     /* a digit past the kept ones is not 0 */
    long long omitted; /* digits past the kept ones */
} digits;

/* Whether the 8 bytes at c are all digits, and their value: 8 digits in a few integer
   operations instead of 8 rounds of the loop (the bytes of a little-endian word are in
   reading order). */
static int eight_digits(const char *c, uint64_t *value)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101u;
    uint64_t word;
    memcpy(&word, c, sizeof word);
    /* '0'..'9' is 0x30..0x39: high nibble 3, and still 3 after adding 6. */
    if ((word & 0xf0 * ones) != 0x30 * ones || ((word + 6 * ones) & 0xf0 * ones) != 0x30 * ones)
        return 0;
    word -= 0x30 * ones;
    word = (word * 10 + (word >> 8)) & 0x00ff00ff00ff00ffu;       /* pairs */
    word = (word * 100 + (word >> 16)) & 0x0000ffff0000ffffu;     /* fours */
    *value = (word * 10000 + (word >> 32)) & 0xffffffffu;
    return 1;
#else
    (void)c;
    (void)value;
    return 0;
#endif
}

static const char *take_digits(const char *c, const char *end, digits *d)
{
    if (d->kept == 0)
        while (c < end && *c == '0')
            ++c; /* leading zeros are not significant */
    uint64_t eight;
    while (d->kept <= SIGNIFICAND_DIGITS - 8 && end - c >= 8 && eight_digits(c, &eight)) {
        d->significand = d->significand * 100000000 + eight;
        d->kept += 8;
        c += 8;
    }
    for (; c < end && (unsigned)(*c - '0') <= 9; ++c) {
        unsigned digit = (unsigned)(*c - '0');
        if (d->kept < SIGNIFICAND_DIGITS) {
            d->significand = d->significand * 10 + digit;
            d->kept++;
        } else {
            d->omitted++;
            d->truncated |= digit != 0;
        }
    }
    return c;
}

#if FLT_EVAL_METHOD == 0
/* Powers of ten that are exact doubles. */
static const double exact_powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#endif

#if FLT_EVAL_METHOD == 0 && defined(__GNUC__) && defined(__BYTE_ORDER__) &&                   \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SHORT_NUMBERS 1

static const uint64_t integer_powers[] = {
    1u,          10u,          100u,          1000u,          10000u,          100000u,
    1000000u,    10000000u,    100000000u,    1000000000u,    10000000000u,    100000000000u,
    1000000000000u, 10000000000000u, 100000000000000u, 1000000000000000u};

/* The digits at the start of the 8 bytes at c (all readable), at most `limit` of them:
   how many, and the number they write, in a few integer operations whatever the count. */
static int leading_digits(const char *c, ptrdiff_t limit, uint64_t *value)
{
    const uint64_t ones = 0x0101010101010101u;
    uint64_t word;
    memcpy(&word, c, sizeof word);
    /* A byte that is not '0'..'9' sets a bit of its own byte here; a carry of the
       addition only reaches bytes after such a byte, which are not counted. */
    uint64_t other = ((word & 0xf0 * ones) ^ 0x30 * ones) |
                     (((word + 6 * ones) & 0xf0 * ones) ^ 0x30 * ones);
    ptrdiff_t count = other != 0 ? __builtin_ctzll(other) / 8 : 8;
    if (count > limit)
        count = limit;
    if (count <= 0) {
        *value = 0;
        return 0;
    }
    /* The digits moved to the top bytes (the last in reading order); the bytes shifted
       in below read as leading zeros. */
    int shift = 64 - 8 * (int)count;
    word = (word << shift) - ((0x30 * ones) << shift);
    word = (word * 10 + (word >> 8)) & 0x00ff00ff00ff00ffu;
    word = (word * 100 + (word >> 16)) & 0x0000ffff0000ffffu;
    *value = (word * 10000 + (word >> 32)) & 0xffffffffu;
    return (int)count;
}

/*
 * The unsigned number at c when it is short: at most 7 digits before an optional point,
 * at most 15 after it, no exponent, a significand of at most 2^53 (with its leading
 * zeros, 19 digits at most), and 8 bytes readable wherever digits are looked for. Both
 * the significand and the power of ten are then exact doubles, and one division rounds
 * the number (Clinger). Returns its end, or NULL for decimal_parse's general way.
 */
static const char *parse_short(const char *c, const char *end, const char *readable,
                               double *value, int *nonzero)
{
    if (readable - c < 8)
        return NULL;
    uint64_t significand = 0, part = 0;
    int whole = leading_digits(c, end - c, &significand);
    if (whole == 8)
        return NULL;
    c += whole;
    int fraction = 0;
    if (c < end && *c == '.') {
        ++c;
        if (readable - c < 16)
            return NULL;
        fraction = leading_digits(c, end - c, &part);
        if (fraction == 8) {
            uint64_t rest = 0;
            int more = leading_digits(c + 8, end - c - 8, &rest);
            if (more == 8)
                return NULL;
            part = part * integer_powers[more] + rest;
            fraction += more;
        }
        c += fraction;
        if (whole + fraction > 19)
            return NULL;
        significand = significand * integer_powers[fraction] + part;
    }
    if (whole + fraction == 0 || significand > (uint64_t)1 << 53 ||
        (c < end && (*c == 'e' || *c == 'E')))
        return NULL;
    *nonzero = significand != 0;
    *value = (double)significand / exact_powers[fraction];
    return c;
}
#endif

const char *decimal_parse(const char *text, const char *end, double *value, int *nonzero)
{
    return decimal_parse_within(text, end, end, value, nonzero);
}

const char *decimal_parse_within(const char *text, const char *end, const char *readable,
                                 double *value, int *nonzero)
{
    const char *c = text;
    int negative = 0;
    if (c < end && (*c == '+' || *c == '-'))
        negative = *c++ == '-';
#ifdef SHORT_NUMBERS
    const char *short_end = parse_short(c, end, readable, value, nonzero);
    if (short_end != NULL) {
        if (negative)
            *value = -*value;
        return short_end;
    }
#else
    (void)readable;
#endif
    const char *first = c;
    digits d = {0, 0, 0, 0};
    c = take_digits(c, end, &d);
    long long count = c - first, fraction = 0;
    if (c < end && *c == '.') {
        const char *fraction_start = ++c;
        c = take_digits(c, end, &d);
        fraction = c - fraction_start;
        count += fraction;
    }
    if (count == 0)
        return NULL;
    const char *digits_end = c;
    long long exponent = 0;
    if (c < end && (*c == 'e' || *c == 'E')) {
        ++c;
        int negative_exponent = 0;
        if (c < end && (*c == '+' || *c == '-'))
            negative_exponent = *c++ == '-';
        if (!(c < end && (unsigned)(*c - '0') <= 9))
            return NULL;
        for (; c < end && (unsigned)(*c - '0') <= 9; ++c)
            if (exponent < EXPONENT_LIMIT)
                exponent = exponent * 10 + (*c - '0');
        if (negative_exponent)
            exponent = -exponent;
    }
    *nonzero = d.kept > 0;
    long long q = exponent - fraction + d.omitted;
    double result;
    if (d.kept == 0)
        result = 0.0;
#if FLT_EVAL_METHOD == 0
    /* Both operands exact doubles: one correctly rounded operation (Clinger). */
    else if (!d.truncated && d.significand <= (uint64_t)1 << 53 && q >= -22 && q <= 22)
        result = q < 0 ? (double)d.significand / exact_powers[-q]
                       : (double)d.significand * exact_powers[q];
#endif
    else if (q > POWER_MAX)
        result = HUGE_VAL;
    else if (q < POWER_MIN)
        result = 0.0;
    else if (!convert(d.significand, d.truncated, (int)q, &result))
        result = fallback(first, digits_end, exponent - fraction);
    *value = negative ? -result : result;
    return c;
}
