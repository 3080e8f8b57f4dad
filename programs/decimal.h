/*
 * Decimal notation to double, rounded exactly as strtod rounds (to nearest, ties to
 * even), whatever the locale, and without strtod's cost on the numbers a data file
 * holds: those take one floating-point operation or two integer multiplications.
 * strtod is asked only when they cannot decide the rounding: subnormal results, and
 * numbers at or too close to a tie between two doubles (within about 2^-73 of a unit
 * in the last place; with more than 19 significant digits, within at most 1/100 of one).
 */
#ifndef MOE_PROGRAMS_DECIMAL_H
#define MOE_PROGRAMS_DECIMAL_H

/*
 * The number in decimal notation at the start of [text, end): an optional sign, digits
 * with an optional fraction, at least one digit before an optional exponent
 * ("-1.5e-3", "7.", ".5"). Returns the end of the number, or NULL when [text, end) does
 * not start with one (an exponent marker must be followed by digits). Sets *value to
 * the nearest double (infinite beyond the largest; zero or subnormal below the
 * smallest normal) and *nonzero to whether a digit of the significand is not 0.
 * Nothing is read at or past `end`.
 */
const char *decimal_parse(const char *text, const char *end, double *value, int *nonzero);

/*
 * decimal_parse, allowed to read (not use) the bytes of [end, readable) too: a reader
 * that knows more bytes follow lets short numbers be read 8 bytes at a time up to their
 * last digit. readable >= end.
 */
const char *decimal_parse_within(const char *text, const char *end, const char *readable,
                                 double *value, int *nonzero);

#endif
