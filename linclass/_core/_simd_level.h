/* The run-time vector level of the kernels with hand-dispatched AVX2 code
 * (_lbfgs_simd.h, _ridge_simd.h, _logistic_simd.h): 2 when the CPU has AVX2 (GCC or Clang on
 * x86), else 0, the baseline build.  Each kernel family keeps its own level
 * (-1 until first use; LC_SIMD_FAMILY below), which its tests can force to the
 * baseline.
 */
#ifndef LINCLASS_SIMD_LEVEL_H
#define LINCLASS_SIMD_LEVEL_H

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define LC_SIMD_X86 1
#define LC_TARGET_AVX2 __attribute__((target("avx2")))
#endif

static int lc_cpu_level(void)
{
#ifdef LC_SIMD_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 2 : 0;
#else
    return 0;
#endif
}

/* a family's level, detected on first use */
static int lc_simd_level(int* state)
{
    if (*state < 0)
        *state = lc_cpu_level();
    return *state;
}

/* tests: force a family's level (0, or anything else for the CPU's); returns the level in use */
static int lc_simd_set_level(int* state, int level)
{
    *state = level == 0 ? 0 : -1;
    return lc_simd_level(state);
}

/* A kernel family's level and its two functions:
 *   PREFIX_level()             the level in use (detected on first use)
 *   PREFIX_set_level(level)    tests: force a level (0 or the CPU's); returns it */
#define LC_SIMD_FAMILY(PREFIX)                                  \
    static int PREFIX##_level_ = -1;                            \
    static int PREFIX##_level(void)                             \
    {                                                           \
        return lc_simd_level(&PREFIX##_level_);                 \
    }                                                           \
    static int PREFIX##_set_level(int level)                    \
    {                                                           \
        return lc_simd_set_level(&PREFIX##_level_, level);      \
    }

#endif
