/*
 * The bit-identity driver's data: small sets drawn from fixed seeds by a generator of the
 * driver's own, so that the rows never depend on the library under test.
 */
#ifndef MOE_BITWISE_DATA_H
#define MOE_BITWISE_DATA_H

#include <stddef.h>

typedef enum bitwise_set {
    SET_REGRESSION,   /* Gaussian, d = 2, two experts, intercepts */
    SET_CENTRED,      /* Gaussian through the origin, d = 3, three experts (cqt's shape) */
    SET_SIGMOID,      /* responses in (0, 1): a sigmoid link's */
    SET_RELU,         /* responses >= 0 with a kink: a ReLU link's */
    SET_LOGISTIC,     /* labels 0 and 1 */
    SET_MULTINOMIAL,  /* labels 0, 1, 2 */
    SET_POISSON,      /* counts; the last of d = 3 columns is the log exposure */
    SET_HEAVY,        /* Gaussian means with Student-t (3 degrees) noise */
    SET_COUNT
} bitwise_set;

typedef struct bitwise_data {
    const char *name;
    size_t n, d;
    double *X;       /* n x d, row-major */
    double *y;       /* n */
    double *weights; /* n, positive, not all equal */
} bitwise_data;

/* Every set; 0 on success, -1 when out of memory. */
int bitwise_data_make(bitwise_data sets[SET_COUNT]);
void bitwise_data_free(bitwise_data sets[SET_COUNT]);

#endif
