/* Validation of caller data: each problem gets its own status and a message naming the place. */
#ifndef MOE_LIB_CHECK_H
#define MOE_LIB_CHECK_H

#include <stddef.h>
#include "moe/common.h"

/* X: n rows, n_features used columns, leading dimension ldx. X may be NULL when n_features is 0.
   Checks, before reading anything, that n doubles and X's last row are addressable. */
moe_status moe_check_design(char *message, size_t n, const double *X, size_t ldx,
                            size_t n_features);
/* y: n finite values. */
moe_status moe_check_response_values(char *message, size_t n, const double *y);
/* weights: NULL, or n finite values >= 0 with a positive sum. */
moe_status moe_check_weights(char *message, size_t n, const double *weights);
/* out buffer of `length` doubles must hold rows * width (width >= 1), checked for overflow. */
moe_status moe_check_output(char *message, const double *out, size_t length, size_t rows,
                            size_t width);
/* y: class labels of `family` (its name for the message), each an integral value in
   0 .. n_classes - 1; MOE_ERR_INVALID_LABEL naming the first bad row. */
moe_status moe_check_class_labels(char *message, size_t n, const double *y, size_t n_classes,
                                  const char *family);
/* A versioned struct's version field: 1 .. newest, the versions this build knows, else
   MOE_ERR_UNSUPPORTED naming the struct. One rule and one message for every init function and
   every call that takes a versioned struct. */
moe_status moe_check_struct_version(char *message, const char *struct_name,
                                    unsigned int version, unsigned int newest);

#endif
