/*
 * Copies of a loop for wider SIMD lanes, chosen at run time. The library is built for the
 * baseline x86-64 (two doubles a vector) so that one binary runs everywhere; loops over a
 * block's rows (common/columns.h) run four or eight times wider where the CPU has AVX2 or
 * AVX-512. A body is an always-inline function; MOE_SIMD_FUNCTION compiles it once per
 * target and defines a dispatcher. Elsewhere (other compilers or CPUs), and in a build
 * with MOE_SIMD_COPIES=OFF (CMakeLists.txt: CI's step 8b, which so tests the baseline copy
 * on a machine that has AVX-512, and its fuzz build), only the generic copy exists.
 *
 * Whether the copies give the same bits depends on the file's contraction setting: with
 * -ffp-contract=fast the AVX2 and AVX-512 copies use fused multiply-adds and the generic
 * one does not (exp_array.c, posterior_block.c); results never depend on the thread count.
 */
#ifndef MOE_LIB_SIMD_H
#define MOE_LIB_SIMD_H

#if defined(__GNUC__) && defined(__x86_64__) && !defined(MOE_NO_SIMD_COPIES)
#define MOE_HAVE_SIMD_COPIES 1
#define MOE_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define MOE_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx2,fma")))

/* A build with MOE_SIMD_AVX512=OFF (MOE_NO_AVX512_COPIES) runs the AVX2 copies on an
   AVX-512 CPU: CI's clang build so runs the suite as an AVX2-only CPU would. */
static inline int moe_cpu_has_avx512(void)
{
#ifdef MOE_NO_AVX512_COPIES
    return 0;
#else
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#endif
}

static inline int moe_cpu_has_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* static type name params, running body args on the widest lanes available. */
#define MOE_SIMD_FUNCTION(type, name, body, params, args)                                    \
    static type name##_generic params { return body args; }                                  \
    MOE_TARGET_AVX2 static type name##_avx2 params { return body args; }                     \
    MOE_TARGET_AVX512 static type name##_avx512 params { return body args; }                 \
    static type name params                                                                  \
    {                                                                                        \
        if (moe_cpu_has_avx512())                                                            \
            return name##_avx512 args;                                                       \
        if (moe_cpu_has_avx2())                                                              \
            return name##_avx2 args;                                                         \
        return name##_generic args;                                                          \
    }
/* The same for a body without a value. */
#define MOE_SIMD_PROCEDURE(name, body, params, args)                                         \
    static void name##_generic params { body args; }                                         \
    MOE_TARGET_AVX2 static void name##_avx2 params { body args; }                            \
    MOE_TARGET_AVX512 static void name##_avx512 params { body args; }                        \
    static void name params                                                                  \
    {                                                                                        \
        if (moe_cpu_has_avx512())                                                            \
            name##_avx512 args;                                                              \
        else if (moe_cpu_has_avx2())                                                         \
            name##_avx2 args;                                                                \
        else                                                                                 \
            name##_generic args;                                                             \
    }
#else
#define MOE_SIMD_FUNCTION(type, name, body, params, args)                                    \
    static type name params { return body args; }
#define MOE_SIMD_PROCEDURE(name, body, params, args)                                         \
    static void name params { body args; }
#endif

#endif
