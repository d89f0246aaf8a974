/* The per-row terms of the binary logistic loss (linclass._core._logistic,
 * binary_pass) for a block of margins t_i = y_i z_i, with run-time dispatch:
 * AVX2 when the CPU has it, else the baseline build (SSE2 on x86-64).
 *
 *   loss_i = s_i log(1 + exp(-t_i))
 *   coef_i = d loss_i / d z_i   = -s_i y_i sigmoid(-t_i)
 *   D_i    = d2 loss_i / d z_i2 =  s_i sigmoid(t_i) sigmoid(-t_i)
 *
 * One e = exp(-|t|) per row gives all three (sigmoid(|t|) = 1 / (1 + e),
 * sigmoid(-|t|) = e / (1 + e), log(1 + exp(-t)) = log1p(e) + max(-t, 0)).
 *
 * exp and log1p are our own, written branch-free so that the compiler
 * vectorises the loops (libm's are scalar calls; with them the loss terms
 * were about 40% of an evaluation of the loss and gradient on a9a):
 *   exp(x), x in [-708, 0]: x = k ln2 + r with |r| <= ln2/2 (k by the
 *     round-to-nearest shift 1.5 * 2^52, ln2 split in a 32-bit head and a
 *     tail so that k ln2_hi is exact); exp(r) = 1 + r + r^2 P(r), P a
 *     Chebyshev fit of degree 9 (below 2e-17 relative), evaluated by Estrin's
 *     scheme (a short chain of dependent operations); 2^k put in the exponent
 *     bits.  exp(x) for x < -708 is below 3.4e-308 and taken as 0.
 *   log1p(e), e in [0, 1]: u = 1 + e rounded, log1p(e) = log(u) + c with
 *     c = (e - (u - 1)) / u (what the rounding of 1 + e lost); log(u) =
 *     j ln2 + log(1 + f), j = [u > sqrt 2], f = u / 2^j - 1 exact, and with
 *     s = f / (2 + f): log(1 + f) = 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R)),
 *     R = s^2 G(s^2), G a Chebyshev fit of degree 6 (|s| <= 0.1716, below
 *     5e-18 relative); the arrangement of the last line is fdlibm's (Sun
 *     Microsystems' log), which keeps f exact and adds the small terms first.
 *   The fits: mpmath.chebyfit at 50 digits, with the coefficients rounded to
 *     double (the constants below; the comment above each gives the call).
 * Loss, coefficient and curvature are within 1.5, 2 and 2.6 units of 2^-52
 * (relative) of long-double references (tests), as libm's exp and log1p are
 * within 1.2.  exp runs as a loop of its own before the rest: two short loop
 * bodies keep more rows in flight than one long one (0.23 -> 0.15 ms for
 * 32,768 rows on AVX2; libm's scalar calls took 0.44 ms).
 *
 * Both levels compile the same C; every operation is elementwise (no sum is
 * reordered: the caller adds the loss terms in row order) and the AVX2 level
 * has no FMA target, so a*b+c is never contracted: the levels give the same
 * bits (the tests compare them), whichever CPU runs them.  The selects
 * vectorise only when the compiler may assume that comparisons have no side
 * effects: setup.py compiles this extension with -fno-trapping-math (no
 * value changes; without it the loops stay scalar and give the same bits).
 */
#ifndef LINCLASS_LOGISTIC_SIMD_H
#define LINCLASS_LOGISTIC_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_simd_level.h"

/* lc_logistic_level(), lc_logistic_set_level(): 0 baseline, 2 AVX2 (_simd_level.h) */
LC_SIMD_FAMILY(lc_logistic)

#define LC_LN2_HI 6.93147180369123816490e-01   /* 0x3fe62e42fee00000: 32 bits */
#define LC_LN2_LO 1.90821492927058770002e-10   /* ln 2 - LC_LN2_HI */
#define LC_INV_LN2 1.4426950408889634
#define LC_SHIFT 6755399441055744.0             /* 1.5 * 2^52 */
#define LC_EXP_MIN (-708.0)
#define LC_SQRT2 1.4142135623730951

/* (exp(r) - 1 - r) / r^2 on |r| <= 1.0001 ln2/2: Chebyshev fit of degree 9,
 * error below 2e-17 relative to exp(r); lowest degree first, from
 *   mp.dps = 50; a = mp.log(2) / 2 * mp.mpf('1.0001')
 *   mp.chebyfit(lambda r: (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(1) / 2,
 *               [-a, a], 10)    (mpmath gives the highest degree first) */
#define LC_EXP_P0 0.5000000000000001
#define LC_EXP_P1 0.16666666666666669
#define LC_EXP_P2 0.04166666666662413
#define LC_EXP_P3 0.008333333333330062
#define LC_EXP_P4 0.0013888888917213717
#define LC_EXP_P5 0.00019841269863053618
#define LC_EXP_P6 2.4801521295954376e-05
#define LC_EXP_P7 2.7557268459997064e-06
#define LC_EXP_P8 2.7620088445409746e-07
#define LC_EXP_P9 2.510038549551032e-08

/* G(z) = (2 atanh(s) - 2 s) / s^3, z = s^2 in [0, 1.0001 (3 - 2 sqrt 2)^2]:
 * Chebyshev fit of degree 6, error below 5e-18 relative to log(1 + f); from
 *   mp.chebyfit(lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z))
 *               / mp.sqrt(z)**3 if z else mp.mpf(2) / 3, [0, zmax], 7) */
#define LC_LOG_G0 0.666666666666667
#define LC_LOG_G1 0.39999999999899444
#define LC_LOG_G2 0.2857142862600327
#define LC_LOG_G3 0.22222211130259878
#define LC_LOG_G4 0.18182889455674947
#define LC_LOG_G5 0.15331710618210773
#define LC_LOG_G6 0.14616585424888623

static inline uint64_t lc_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double lc_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* exp(x) for x <= 0 (NaN stays NaN) */
static inline double lc_exp_nonpositive(double x)
{
    const double xc = x < LC_EXP_MIN ? LC_EXP_MIN : x;
    double kd = xc * LC_INV_LN2 + LC_SHIFT;
    const uint64_t kbits = lc_bits(kd);
    kd = kd - LC_SHIFT;                                   /* round(xc / ln 2) */
    const double r = (xc - kd * LC_LN2_HI) - kd * LC_LN2_LO;
    /* exp(r) = 1 + r + r^2 P(r), P of degree 9 by Estrin's scheme */
    const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const double p01 = LC_EXP_P0 + LC_EXP_P1 * r, p23 = LC_EXP_P2 + LC_EXP_P3 * r;
    const double p45 = LC_EXP_P4 + LC_EXP_P5 * r, p67 = LC_EXP_P6 + LC_EXP_P7 * r;
    const double p89 = LC_EXP_P8 + LC_EXP_P9 * r;
    const double poly = ((p01 + p23 * r2) + (p45 + p67 * r2) * r4) + p89 * r8;
    const double er = 1.0 + (r + r2 * poly);             /* exp(r) */
    /* 2^k: k = kbits - bits(SHIFT) in [-1021, 0], a normal number */
    const double scale = lc_from_bits((kbits - lc_bits(LC_SHIFT) + 1023u) << 52);
    const double e = er * scale;
    return x < LC_EXP_MIN ? 0.0 : e;
}

/* log1p(e) for e in [0, 1], given u = 1 + e and ru = 1 / u */
static inline double lc_log1p_unit(double e, double u, double ru)
{
    const double c = (e - (u - 1.0)) * ru;
    const int big = u > LC_SQRT2;
    const double j = big ? 1.0 : 0.0;
    const double f = big ? 0.5 * u - 1.0 : u - 1.0;
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double z2 = z * z, z4 = z2 * z2;            /* R = z G(z), G of degree 6 */
    const double R = z * (((LC_LOG_G0 + LC_LOG_G1 * z) + (LC_LOG_G2 + LC_LOG_G3 * z) * z2)
                          + ((LC_LOG_G4 + LC_LOG_G5 * z) + LC_LOG_G6 * z2) * z4);
    const double hfsq = 0.5 * f * f;
    return j * LC_LN2_HI + (f - (hfsq - (s * (hfsq + R) + (j * LC_LN2_LO + c))));
}

/* inlined into each level's function, so that each compiles it for its target */
#if defined(__GNUC__) || defined(__clang__)
#define LC_LOGISTIC_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define LC_LOGISTIC_INLINE static __forceinline
#else
#define LC_LOGISTIC_INLINE static inline
#endif

LC_LOGISTIC_INLINE void
lc_logistic_terms_body(ptrdiff_t n, const double* restrict t, const double* restrict sw,
                       const double* restrict y, double* restrict loss,
                       double* restrict coef, double* restrict D)
{
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        D[i] = lc_exp_nonpositive(-fabs(t[i]));
    for (i = 0; i < n; i++) {
        const double ti = t[i];
        const double e = D[i];
        const double u = 1.0 + e;
        const double ru = 1.0 / u;                         /* sigmoid(|t|) */
        const double eru = e * ru;                         /* sigmoid(-|t|) */
        const double lg = lc_log1p_unit(e, u, ru);
        const int pos = ti >= 0.0;
        const double p = pos ? ru : eru;                   /* sigmoid(t) */
        const double q = pos ? eru : ru;                   /* sigmoid(-t) = 1 - p */
        const double si = sw[i];
        loss[i] = si * (pos ? lg : lg - ti);
        coef[i] = -(si * q) * y[i];
        D[i] = (si * p) * q;
    }
}

static void lc_logistic_terms_c(ptrdiff_t n, const double* restrict t,
                                const double* restrict sw, const double* restrict y,
                                double* restrict loss, double* restrict coef,
                                double* restrict D)
{
    lc_logistic_terms_body(n, t, sw, y, loss, coef, D);
}

#ifdef LC_SIMD_X86
LC_TARGET_AVX2
static void lc_logistic_terms_avx2(ptrdiff_t n, const double* restrict t,
                                   const double* restrict sw, const double* restrict y,
                                   double* restrict loss, double* restrict coef,
                                   double* restrict D)
{
    lc_logistic_terms_body(n, t, sw, y, loss, coef, D);
}
#endif

/* the terms of rows 0..n-1 (t: margins y_i z_i; see the top of this file) */
static void lc_logistic_terms(ptrdiff_t n, const double* t, const double* sw,
                              const double* y, double* loss, double* coef, double* D)
{
#ifdef LC_SIMD_X86
    if (lc_logistic_level() == 2) {
        lc_logistic_terms_avx2(n, t, sw, y, loss, coef, D);
        return;
    }
#endif
    lc_logistic_terms_c(n, t, sw, y, loss, coef, D);
}

#endif
