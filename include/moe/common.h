/*
 * libmoe: status codes, version, error messages.
 *
 * Every libmoe function that can fail returns a moe_status. MOE_OK is zero;
 * the other values are pinned and will never be renumbered.
 *
 * Two promises hold for every function:
 *   - MOE_OK means every number written to an output is finite. A result
 *     that would overflow or be undefined (gate logits or expert predictors
 *     beyond the largest double, a sum over rows that overflows) is
 *     MOE_ERR_NUMERICAL, with a message naming the row where there is one;
 *     the output buffer's contents are then unspecified.
 *   - Sizes are checked before any caller array is read or written: n rows
 *     of leading dimension ldx, n values of y or weights and rows x width
 *     output values must be addressable (their byte counts fit a size_t),
 *     else MOE_ERR_DIMENSION.
 *
 * A message about one row of the caller's data starts with one of these
 * prefixes, and no other message starts with "row ":
 *   "row I: "             the row as a whole (its likelihood, its prediction);
 *   "row I, column J: "   the value X[I][J] (J counts X's columns, not the
 *                         intercept);
 *   "row I, response: "   y[I];
 *   "row I, weight: "     weights[I].
 * I and J count from 0 and name the row and column of the arrays passed to
 * the failing call, so a program or binding can rewrite the prefix in its
 * own terms (a file's line and column name, rows counted from 1).
 */
#ifndef MOE_COMMON_H
#define MOE_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MOE_STATIC_DEFINE)
#  define MOE_API
#elif defined(_WIN32)
#  ifdef MOE_BUILDING_LIBRARY
#    define MOE_API __declspec(dllexport)
#  else
#    define MOE_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define MOE_API __attribute__((visibility("default")))
#else
#  define MOE_API
#endif

#define MOE_VERSION_MAJOR 1
#define MOE_VERSION_MINOR 2
#define MOE_VERSION_PATCH 0
#define MOE_VERSION_STRING "1.2.0"
/* One number that grows with every release: 10000*major + 100*minor + patch. */
#define MOE_VERSION_NUMBER \
    (MOE_VERSION_MAJOR * 10000 + MOE_VERSION_MINOR * 100 + MOE_VERSION_PATCH)

/* Status codes. Values are part of the ABI. */
typedef enum moe_status {
    MOE_OK = 0,
    MOE_ERR_INVALID_ARGUMENT = 1,  /* a value out of its documented range, or a handle not
                                      ready for the call (a fit report before any fit) */
    MOE_ERR_NULL_POINTER = 2,      /* a required pointer argument was NULL */
    MOE_ERR_EMPTY_INPUT = 3,       /* a size that must be positive was zero */
    MOE_ERR_DIMENSION = 4,         /* sizes disagree (ldx < n_features, buffer length, ...) */
    MOE_ERR_NON_FINITE = 5,        /* NaN or Inf in an input */
    MOE_ERR_NEGATIVE_WEIGHT = 6,   /* a sample weight below zero */
    MOE_ERR_TOO_FEW_SAMPLES = 7,   /* fewer samples than free parameters */
    MOE_ERR_OUT_OF_MEMORY = 8,
    MOE_ERR_NUMERICAL = 9,         /* breakdown that safeguards could not repair */
    MOE_ERR_UNSUPPORTED = 10,      /* not available for this family/estimator */
    MOE_ERR_IO = 11,               /* file could not be opened, read or written */
    MOE_ERR_FORMAT = 12,           /* bytes are not a valid saved model */
    MOE_ERR_CANCELLED = 13,        /* the progress callback asked to stop */
    MOE_ERR_NOT_FOUND = 14,        /* unknown estimator or option name */
    MOE_ERR_BUFFER_TOO_SMALL = 15, /* caller buffer too small; required size reported (below) */
    MOE_ERR_INVALID_LABEL = 16,    /* a response value the family cannot take */
    MOE_ERR_INTERNAL = 99          /* a libmoe bug; please report it */
} moe_status;

/*
 * Results of variable size (moe_model_save_buffer, moe_fitter_get_trace) go
 * into a caller's buffer that holds `capacity` elements (bytes, values), and
 * their size is stored through an out-pointer that must not be NULL. Every
 * such function follows one convention:
 *   - buffer NULL and capacity 0 ask for the size: it is stored and the call
 *     returns MOE_OK (after the checks a real call makes, so a result that
 *     cannot be produced still fails);
 *   - buffer NULL with a capacity above 0 is MOE_ERR_NULL_POINTER (an
 *     allocation that failed unnoticed);
 *   - a capacity below the size is MOE_ERR_BUFFER_TOO_SMALL: the size is
 *     stored and nothing is written to the buffer;
 *   - otherwise the result is written, its size stored, and MOE_OK returned.
 * On any other error the stored size is 0.
 */

/* Library version at run time, e.g. "1.0.0". */
MOE_API const char *moe_version_string(void);
/* MOE_VERSION_NUMBER of the library actually loaded. */
MOE_API int moe_version_number(void);

/* Static description of a status code; never NULL. */
MOE_API const char *moe_strerror(moe_status status);

/*
 * Detailed message of the last failing libmoe call made by the calling
 * thread ("row 17, column 3: the value is NaN"). Empty string if none. Valid until
 * the next failing call on the same thread. Calls that take a mutable handle
 * also keep their message in the handle (moe_model_last_error,
 * moe_fitter_last_error), so it survives calls on other handles.
 */
MOE_API const char *moe_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MOE_COMMON_H */
