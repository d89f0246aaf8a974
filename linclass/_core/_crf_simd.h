/* double-precision kernels of the linear-chain CRF's scaled forward-backward,
 * vectorised over labels, with run-time dispatch (AVX2 / SSE2 / scalar).
 *
 * All label vectors have rows of Kp = lc_crf_pad(K) doubles (a multiple of 8);
 * the pad lanes of every matrix row and vector are zero, so they stay zero
 * through the products below and never need masking.
 *
 *   lc_crf_matvec:  out[j] = sum_{i<K} x[i] * M[i, j]          (j < Kp)
 *       the forward step (M = T, x = alpha_{t-1}) and the backward step
 *       (M = T transposed, x = u_t); 8 outputs at a time stay in two vector
 *       registers while the K rows stream past, one broadcast per row.
 *   lc_crf_ger:     M[i, j] += sum_{t<n} A[t, i] * U[t, j]      (i < K, j < Kp)
 *       the edge-marginal sums: with A = alpha_{0..n-2} and U = u_{1..n-1},
 *       u_t = e_t * beta_t / c_t, the expected transition counts of a whole
 *       call are T * M (elementwise), formed once at the end instead of
 *       multiplying by T at every token.  8 entries of a row of M stay in
 *       registers across the tokens of the sentence.
 *
 * The vector paths use GCC/Clang vector extensions: 4-double registers in
 * functions compiled with target("avx2") (chosen at run time; no -march
 * flag), 2-double registers for the x86-64 baseline (SSE2).
 * No FMA is enabled (no contraction) and every output is summed over i (or
 * t) in the same order on every level, so all levels give bit-identical
 * results (the tests compare them).
 */
#ifndef LINCLASS_CRF_SIMD_H
#define LINCLASS_CRF_SIMD_H

#include <stddef.h>
#include <math.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define LC_CRF_VEC 1
#define LC_CRF_AVX2 __attribute__((target("avx2")))
#endif

static inline ptrdiff_t lc_crf_pad(ptrdiff_t K) { return (K + 7) & ~(ptrdiff_t)7; }

/* 0: scalar, 1: SSE2 (vector extensions, baseline), 2: AVX2; -1 until first use */
static int lc_crf_level_ = -1;

static int lc_crf_detect(void)
{
#ifdef LC_CRF_VEC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        return 2;
    return 1;
#else
    return 0;
#endif
}

static int lc_crf_level(void)
{
    if (lc_crf_level_ < 0)
        lc_crf_level_ = lc_crf_detect();
    return lc_crf_level_;
}

/* Select a level at most the detected one; returns the level in effect. */
static int lc_crf_set_level(int level)
{
    int best = lc_crf_detect();
    if (level < 0 || level > best)
        level = best;
    lc_crf_level_ = level;
    return level;
}

/* -------------------------------------------------------------- scalar -- */

static void lc_crf_matvec_scalar(const double *x, const double *M, double *out,
                                 ptrdiff_t K, ptrdiff_t Kp)
{
    ptrdiff_t i, j;
    for (j = 0; j < Kp; j++)
        out[j] = 0.0;
    for (i = 0; i < K; i++) {
        const double a = x[i];
        const double *row = M + i * Kp;
        for (j = 0; j < Kp; j++)
            out[j] += a * row[j];
    }
}

static void lc_crf_ger_scalar(double *M, const double *A, const double *U, ptrdiff_t n,
                              ptrdiff_t K, ptrdiff_t Kp)
{
    ptrdiff_t t, i, j;
    for (i = 0; i < K; i++) {
        double *row = M + i * Kp;
        for (t = 0; t < n; t++) {
            const double a = A[t * Kp + i];
            const double *u = U + t * Kp;
            for (j = 0; j < Kp; j++)
                row[j] += a * u[j];
        }
    }
}

/* -------------------------------------------------- vector extensions -- */
#ifdef LC_CRF_VEC

typedef double lc_v4d __attribute__((vector_size(32), aligned(8), may_alias));
typedef double lc_v2d __attribute__((vector_size(16), aligned(8), may_alias));

/* Blocks of NB = 8, 16 or 24 doubles (Kp is a multiple of 8): NB / W
 * independent accumulators of vector type VT (W lanes), so the sums over i
 * (matvec) or t (ger) run as NB / W independent chains instead of 2 --
 * the loops are bound by the add latency otherwise.  Each output is still
 * summed in the order i = 0, 1, ... (t = 0, 1, ...). */
#define LC_CRF_MATVEC_BLOCK(VT, W, NB)                                        \
    {                                                                         \
        VT acc[NB / W];                                                       \
        int v;                                                                \
        const double *col = M + j;                                            \
        for (v = 0; v < NB / W; v++)                                          \
            acc[v] = (VT){0};                                                 \
        for (i = 0; i < K; i++) {                                             \
            const double a = x[i];                                            \
            const double *r = col + i * Kp;                                   \
            for (v = 0; v < NB / W; v++)                                      \
                acc[v] += a * *(const VT *)(r + v * W);                       \
        }                                                                     \
        for (v = 0; v < NB / W; v++)                                          \
            *(VT *)(out + j + v * W) = acc[v];                                \
    }

#define LC_CRF_GER_BLOCK(VT, W, NB)                                           \
    {                                                                         \
        VT acc[NB / W];                                                       \
        int v;                                                                \
        double *m = M + i * Kp + j;                                           \
        const double *u = U + j;                                              \
        for (v = 0; v < NB / W; v++)                                          \
            acc[v] = *(const VT *)(m + v * W);                                \
        for (t = 0; t < n; t++) {                                             \
            const double a = A[t * Kp + i];                                   \
            const double *r = u + t * Kp;                                     \
            for (v = 0; v < NB / W; v++)                                      \
                acc[v] += a * *(const VT *)(r + v * W);                       \
        }                                                                     \
        for (v = 0; v < NB / W; v++)                                          \
            *(VT *)(m + v * W) = acc[v];                                      \
    }

#define LC_CRF_DEFINE(SUFFIX, ATTR, VT, W)                                    \
ATTR static void lc_crf_matvec_##SUFFIX(const double *x, const double *M,     \
                                        double *out, ptrdiff_t K, ptrdiff_t Kp) \
{                                                                             \
    ptrdiff_t i, j = 0;                                                       \
    for (; Kp - j >= 24; j += 24)                                             \
        LC_CRF_MATVEC_BLOCK(VT, W, 24)                                        \
    if (Kp - j == 16)                                                         \
        LC_CRF_MATVEC_BLOCK(VT, W, 16)                                        \
    else if (Kp - j == 8)                                                     \
        LC_CRF_MATVEC_BLOCK(VT, W, 8)                                         \
}                                                                             \
                                                                              \
ATTR static void lc_crf_ger_##SUFFIX(double *M, const double *A, const double *U, \
                                     ptrdiff_t n, ptrdiff_t K, ptrdiff_t Kp)  \
{                                                                             \
    ptrdiff_t t, i, j;                                                        \
    for (i = 0; i < K; i++) {                                                 \
        for (j = 0; Kp - j >= 24; j += 24)                                    \
            LC_CRF_GER_BLOCK(VT, W, 24)                                       \
        if (Kp - j == 16)                                                     \
            LC_CRF_GER_BLOCK(VT, W, 16)                                       \
        else if (Kp - j == 8)                                                 \
            LC_CRF_GER_BLOCK(VT, W, 8)                                        \
    }                                                                         \
}

LC_CRF_DEFINE(avx2, LC_CRF_AVX2, lc_v4d, 4)
LC_CRF_DEFINE(sse2, , lc_v2d, 2)

#endif

/* ------------------------------------------------------------ dispatch -- */

static inline void lc_crf_matvec(int level, const double *x, const double *M, double *out,
                                 ptrdiff_t K, ptrdiff_t Kp)
{
#ifdef LC_CRF_VEC
    if (level == 2) {
        lc_crf_matvec_avx2(x, M, out, K, Kp);
        return;
    }
    if (level == 1) {
        lc_crf_matvec_sse2(x, M, out, K, Kp);
        return;
    }
#endif
    lc_crf_matvec_scalar(x, M, out, K, Kp);
}

static inline void lc_crf_ger(int level, double *M, const double *A, const double *U,
                              ptrdiff_t n, ptrdiff_t K, ptrdiff_t Kp)
{
#ifdef LC_CRF_VEC
    if (level == 2) {
        lc_crf_ger_avx2(M, A, U, n, K, Kp);
        return;
    }
    if (level == 1) {
        lc_crf_ger_sse2(M, A, U, n, K, Kp);
        return;
    }
#endif
    lc_crf_ger_scalar(M, A, U, n, K, Kp);
}

#endif
