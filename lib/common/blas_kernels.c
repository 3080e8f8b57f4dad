#include "common/blas_kernels.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stddef.h>

/* OpenBLAS names the kernels it chose at load time. A weak reference, so that the library
   also links and runs against a BLAS without it (the reference is then null). */
#if defined(__GNUC__) && defined(__ELF__) && defined(__x86_64__)
#define MOE_CAN_ASK_OPENBLAS 1
char *openblas_get_corename(void) __attribute__((weak));

/* OpenBLAS's kernel sets with small-matrix products (its DGEMM_SMALL kernels, 0.3.16 on):
   the AVX-512 ones. Names compared without case, since builds for one CPU spell them in
   capitals. */
static const char *const kernels_with_small_products[] = {"SkylakeX", "Cooperlake",
                                                          "SapphireRapids"};

static int same_name(const char *left, const char *right)
{
    for (; *left && *right; ++left, ++right)
        if (tolower((unsigned char)*left) != tolower((unsigned char)*right))
            return 0;
    return *left == *right;
}
#endif

static int ask_openblas(void)
{
#ifdef MOE_CAN_ASK_OPENBLAS
    if (!openblas_get_corename)
        return 0;
    const char *name = openblas_get_corename();
    if (!name || !*name || same_name(name, "Unknown"))
        return 0;
    for (size_t index = 0; index < sizeof kernels_with_small_products /
                                       sizeof kernels_with_small_products[0];
         ++index)
        if (same_name(name, kernels_with_small_products[index]))
            return 0;
    return 1;
#else
    return 0;
#endif
}

int moe_blas_lacks_small_kernels(void)
{
    /* 0 unknown, 1 no, 2 yes: asked once, then read without a lock by every thread. */
    static atomic_int answer = 0;
    int known = atomic_load_explicit(&answer, memory_order_relaxed);
    if (!known) {
        known = ask_openblas() ? 2 : 1;
        atomic_store_explicit(&answer, known, memory_order_relaxed);
    }
    return known == 2;
}
