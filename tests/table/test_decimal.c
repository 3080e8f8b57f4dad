/*
 * The moe tool's decimal parser (programs/decimal.c) against the C library's strtod:
 * the same double, bit for bit (signed zeros, infinities and subnormals included), on
 * hand-picked hard cases, millions of random decimal strings, and exact ties between
 * two doubles with what lies just above and below them.
 */
#include "decimal.h"

#include "support/runner.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t random_state;

static uint64_t next_random(void)
{
    /* splitmix64: every seed gives a good sequence. */
    uint64_t z = (random_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static unsigned below(unsigned bound)
{
    return (unsigned)(next_random() % bound);
}

/* What may follow a number in a file and be read (not used) by decimal_parse_within:
   digits above all, which would change the number if they were taken for its own. */
static const char *const followers[] = {"99999999999999999999", "0000000000000000000",
                                        "5,1.25", "987\n", "0",           "12345.5,3",
                                        ".5e5,1.25,3", "e+17,99", ",-1.5\n2.5,3", "\n"};

/* decimal_parse reads all of `text` and agrees with strtod bit for bit; so does
   decimal_parse_within with more bytes readable after it. */
static void expect_strtod(const char *text)
{
    size_t length = strlen(text);
    double parsed = 0.0, expected = strtod(text, NULL);
    int nonzero = -1;
    const char *end = decimal_parse(text, text + length, &parsed, &nonzero);
    /* Check's assertions record every passing one too: only failures go through it. */
    if (end != text + length)
        ck_abort_msg("'%.80s': read %td of %zu bytes", text,
                     end != NULL ? end - text : (ptrdiff_t)-1, length);
    if (memcmp(&parsed, &expected, sizeof parsed) != 0)
        ck_abort_msg("'%.80s' (%zu bytes): %a, strtod gives %a", text, length, parsed, expected);
    if (length > 200)
        return;
    char buffer[256];
    const char *follower = followers[below(sizeof followers / sizeof *followers)];
    snprintf(buffer, sizeof buffer, "%s%s", text, follower);
    int within_nonzero = -1;
    end = decimal_parse_within(buffer, buffer + length, buffer + strlen(buffer), &parsed,
                               &within_nonzero);
    if (end != buffer + length)
        ck_abort_msg("'%s' before '%s': read %td of %zu bytes", text, follower,
                     end != NULL ? end - buffer : (ptrdiff_t)-1, length);
    if (memcmp(&parsed, &expected, sizeof parsed) != 0 || within_nonzero != nonzero)
        ck_abort_msg("'%s' before '%s': %a (nonzero %d), strtod gives %a (nonzero %d)", text,
                     follower, parsed, within_nonzero, expected, nonzero);
}

START_TEST(hard_cases_round_as_strtod)
{
    static const char *cases[] = {
        /* ties and near-ties at 2^53 */
        "9007199254740993", "9007199254740993.0000000000000000001", "9007199254740992.9999999999",
        "9007199254740995", "4503599627370496.5", "4503599627370497.5", "45035996273704965e-1",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124999999999999999999",
        "1.00000000000000011102230246251565404236316680908203125000000000000000001",
        /* the smallest normal and its neighbours */
        "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
        "2.225073858507201136057409796709131975934819546351645648e-308",
        "2.2250738585072009e-308",
        /* the top of the range */
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "179769313486231580793728971405301e276", "8.98846567431158e307", "1e308", "1e309",
        "1e400", "-1e400", "1e99999999999999999999999999999",
        /* subnormals and the bottom */
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "2.47032822920623272088284396434110686182529901307162382212792841250337753635104375932"
        "649918180817996189898282347722858865463328355177969898199387398005390939063150356595"
        "155702263922908583924491051844359318028499365361525003193704576782492193656236698636"
        "584807570015857692699037063119282795585513329278343384093519780155312465972635795746"
        "227664652728272200563740064854999770965994704540208281662262378573934507363390079677"
        "619305775067401763246736009689513405355374585166611342237666786041621596804619144672"
        "918403005300575308490487653917113865916462395249126236538818796362393732804238910186"
        "723484976682350898633885879256283027559956575244555072551893136908362547791869486679"
        "949683240497058210285131854513962138377228261454376934125320985913276672363281249e-324",
        "1e-320", "1e-400", "-1e-400", "1e-99999999999999999999999999999", "0.1e-307",
        /* classic examples */
        "1e23", "8.589973e9", "0.1", "0.2", "0.3", "3.14159265358979323846264338327950288",
        "123456789012345678901234567890", "1.2345678901234567890123456789e-200",
        "7.3177701707893310e+15", "5e-324", "1448997445238699",
        /* signs, zeros and the shapes decimal notation allows */
        "0", "-0", "+0", "-0.0e-5", "0e999999999999999999999", "000000000000000000000000000001",
        "7.", ".5", "-.5e1", "+1E+2", "1e-0", "00.000e0"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i)
        expect_strtod(cases[i]);
}
END_TEST

/* Numbers far longer than the 19 digits gathered: the significand is cut, and beyond
   800 digits the rest is only known to be zero or not. */
START_TEST(long_numbers_round_as_strtod)
{
    random_state = 7;
    enum { LONGEST = 5000 };
    char *text = malloc(LONGEST + 512); /* leading zeros, point and exponent too */
    for (int round = 0; round < 2000; ++round) {
        size_t used = 0, digits = 1 + below(round < 1000 ? 900 : LONGEST);
        size_t point = below((unsigned)digits + 1), zeros = below(2) ? below(400) : 0;
        for (size_t k = 0; k < zeros; ++k)
            text[used++] = '0'; /* leading zeros, significant or not after the point */
        for (size_t k = 0; k < digits; ++k) {
            if (k == point)
                text[used++] = '.';
            /* mostly 9s or 0s after a start, the hardest to round */
            unsigned kind = below(4);
            text[used++] = (char)('0' + (kind == 0 ? below(10) : kind == 1 ? 0 : 9));
        }
        used += (size_t)sprintf(text + used, "e%d", (int)below(800) - 400 - (int)(point / 2));
        text[used] = '\0';
        expect_strtod(text);
    }
    free(text);
}
END_TEST

static void random_decimal(char *text)
{
    size_t used = 0;
    unsigned sign = below(3);
    if (sign > 0)
        text[used++] = sign == 1 ? '-' : '+';
    unsigned digits = 1 + below(25), point = below(digits + 2);
    unsigned leading = below(4) == 0 ? below(5) : 0;
    for (unsigned k = 0; k < leading; ++k)
        text[used++] = '0';
    for (unsigned k = 0; k < digits; ++k) {
        if (k == point)
            text[used++] = '.';
        text[used++] = (char)('0' + below(10));
    }
    int exponent;
    switch (below(6)) {
    case 0:
        text[used] = '\0';
        return; /* no exponent */
    case 1:
        exponent = (int)below(51) - 25; /* where exact powers of ten suffice */
        break;
    case 2:
        exponent = -300 - (int)below(45); /* subnormals and the bottom */
        break;
    case 3:
        exponent = 280 + (int)below(40); /* the top and overflow */
        break;
    default:
        exponent = (int)below(721) - 360;
        break;
    }
    sprintf(text + used, "%c%d", below(2) ? 'e' : 'E', exponent);
}

START_TEST(random_decimals_round_as_strtod)
{
    random_state = 2026;
    char text[64];
    for (int i = 0; i < 3000000; ++i) {
        random_decimal(text);
        expect_strtod(text);
    }
}
END_TEST

/* Numbers as data files write them ("%.6f", "-0.000123", "7.", ".5", up to 19 digits
   with leading zeros): the ones decimal_parse_within reads 8 bytes at a time. */
START_TEST(short_numbers_round_as_strtod)
{
    random_state = 1995;
    char text[64];
    for (int i = 0; i < 1000000; ++i) {
        size_t used = 0;
        unsigned sign = below(3);
        if (sign > 0)
            text[used++] = sign == 1 ? '-' : '+';
        unsigned whole = below(10), fraction = below(19), point = whole == 0 || below(8) > 0;
        if (whole + fraction == 0 || !point)
            fraction = 0, whole += whole == 0;
        for (unsigned k = 0; k < whole; ++k)
            text[used++] = (char)('0' + (k == 0 && below(3) == 0 ? 0 : below(10)));
        if (point)
            text[used++] = '.';
        for (unsigned k = 0; k < fraction; ++k)
            text[used++] = (char)('0' + (below(4) == 0 ? 0 : below(10)));
        text[used] = '\0';
        expect_strtod(text);
    }
}
END_TEST

#if LDBL_MANT_DIG >= 64
/* The exact decimal digits of `value`, which has at most 64 significant bits: glibc's
   printf writes them all when asked for enough. */
static void exact_digits(char *text, size_t size, long double value)
{
    snprintf(text, size, "%.780Le", value);
}

/* Doubles of random bit patterns (finite, positive), the point halfway to the next one
   (exact in a 64-bit long double), and decimal strings at it, just above it and just
   below it: the cases that only a correct rounding gets right. */
START_TEST(ties_round_as_strtod)
{
    random_state = 53;
    char exact[900], text[2000], zeros[901], nines[901];
    memset(zeros, '0', 900);
    memset(nines, '9', 900);
    zeros[900] = nines[900] = '\0';
    for (int i = 0; i < 20000; ++i) {
        uint64_t bits = next_random() & 0x7fffffffffffffffu;
        double low;
        memcpy(&low, &bits, sizeof low);
        if (!isfinite(low) || low == DBL_MAX)
            continue;
        long double tie = ((long double)low + (long double)nextafter(low, INFINITY)) / 2;
        exact_digits(exact, sizeof exact, tie);
        expect_strtod(exact);
        /* The digits up to the exponent, then cut to a random length (below the tie),
           or with a 1 appended far down (above it). */
        const char *marker = strchr(exact, 'e');
        size_t mantissa = (size_t)(marker - exact);
        size_t last = mantissa;
        while (exact[last - 1] == '0')
            --last;
        size_t cut = 3 + below((unsigned)(last > 3 ? last - 3 : 1));
        snprintf(text, sizeof text, "%.*s%s", (int)cut, exact, marker);
        expect_strtod(text);
        snprintf(text, sizeof text, "%.*s000001%s", (int)last, exact, marker);
        expect_strtod(text);
        /* and one unit below in the last digit kept, with 9s after */
        if (last > 3 && exact[last - 1] != '.') {
            snprintf(text, sizeof text, "%.*s%c99999999%s", (int)(last - 1), exact,
                     exact[last - 1] - 1, marker);
            expect_strtod(text);
        }
        /* Past the 800 digits decimal_parse keeps for strtod, only a nonzero rest tells
           above the tie from the tie. */
        snprintf(text, sizeof text, "%.*s%s1%s", (int)last, exact, zeros, marker);
        expect_strtod(text);
        if (last > 3 && exact[last - 1] != '.') {
            snprintf(text, sizeof text, "%.*s%c%s%s", (int)(last - 1), exact,
                     exact[last - 1] - 1, nines, marker);
            expect_strtod(text);
        }
    }
}
END_TEST
#endif

START_TEST(what_is_not_a_number)
{
    static const char *refused[] = {"", "+", "-", ".", "+.", "e5", ".e5", "-e1", "1e",
                                    "1e+", "1e-", "1.e", "+-1", "x1", "inf", "nan", " 1"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        double value = 0.0;
        int nonzero = 0;
        const char *text = refused[i];
        ck_assert_msg(decimal_parse(text, text + strlen(text), &value, &nonzero) == NULL,
                      "'%s' is not a number", text);
    }
    /* A number stops where decimal notation does; the rest is the caller's. */
    static const struct {
        const char *text;
        size_t length;
    } prefixes[] = {{"0x1p3", 1}, {"1.5.2", 3}, {"12e3x", 4}, {"1,2", 1}, {"-7 ", 2}};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; ++i) {
        double value = 0.0;
        int nonzero = 0;
        const char *text = prefixes[i].text;
        const char *end = decimal_parse(text, text + strlen(text), &value, &nonzero);
        ck_assert_ptr_nonnull(end);
        ck_assert_uint_eq((size_t)(end - text), prefixes[i].length);
    }
    /* Nothing at or past `end` is read: a bound inside digits cuts the number there. */
    double value = 0.0;
    int nonzero = 0;
    const char *text = "12345e67";
    ck_assert_ptr_eq(decimal_parse(text, text + 3, &value, &nonzero), text + 3);
    ck_assert(value == 123.0);
    ck_assert_ptr_null(decimal_parse(text, text + 6, &value, &nonzero)); /* "12345e" */
    ck_assert_ptr_null(decimal_parse(text, text, &value, &nonzero));
    /* The same when the bytes past `end` may be read: they are still not used. */
    const char *digits = "1234.5678901234567890";
    for (size_t cut = 1; cut <= strlen(digits); ++cut) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%.*s", (int)cut, digits);
        ck_assert_ptr_eq(decimal_parse_within(digits, digits + cut, digits + strlen(digits),
                                              &value, &nonzero),
                         digits + cut);
        ck_assert_msg(value == strtod(prefix, NULL), "'%s': %a", prefix, value);
    }
    ck_assert_ptr_null(decimal_parse_within(text, text + 6, text + 8, &value, &nonzero));
}
END_TEST

START_TEST(nonzero_tells_a_zero_significand)
{
    static const struct {
        const char *text;
        int nonzero;
    } cases[] = {{"0", 0},      {"-0.000", 0}, {"0e400", 0},  {"00.00e-9", 0},
                 {"1e-400", 1}, {"0.01", 1},   {"10e0", 1},   {"-0.0000000000000000000000001", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        double value = 0.0;
        int nonzero = -1;
        const char *text = cases[i].text;
        decimal_parse(text, text + strlen(text), &value, &nonzero);
        ck_assert_msg(nonzero == cases[i].nonzero, "'%s': nonzero %d", text, nonzero);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("decimal");
    TCase *cases = tcase_create("decimal");
    /* Millions of strtod calls; several times longer under the sanitizers. */
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, hard_cases_round_as_strtod);
    tcase_add_test(cases, long_numbers_round_as_strtod);
    tcase_add_test(cases, random_decimals_round_as_strtod);
    tcase_add_test(cases, short_numbers_round_as_strtod);
#if LDBL_MANT_DIG >= 64
    tcase_add_test(cases, ties_round_as_strtod);
#endif
    tcase_add_test(cases, what_is_not_a_number);
    tcase_add_test(cases, nonzero_tells_a_zero_significand);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
