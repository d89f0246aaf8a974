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

/* AVX2: 8 doubles = 2 registers of 4 */
LC_CRF_AVX2 static void lc_crf_matvec_avx2(const double *x, const double *M, double *out,
                                           ptrdiff_t K, ptrdiff_t Kp)
{
    ptrdiff_t i, j;
    for (j = 0; j < Kp; j += 8) {
        lc_v4d acc0 = {0.0, 0.0, 0.0, 0.0}, acc1 = {0.0, 0.0, 0.0, 0.0};
        const double *col = M + j;
        for (i = 0; i < K; i++) {
            const double a = x[i];
            const lc_v4d av = {a, a, a, a};
            acc0 += av * *(const lc_v4d *)(col + i * Kp);
            acc1 += av * *(const lc_v4d *)(col + i * Kp + 4);
        }
        *(lc_v4d *)(out + j) = acc0;
        *(lc_v4d *)(out + j + 4) = acc1;
    }
}

LC_CRF_AVX2 static void lc_crf_ger_avx2(double *M, const double *A, const double *U,
                                        ptrdiff_t n, ptrdiff_t K, ptrdiff_t Kp)
{
    ptrdiff_t t, i, j;
    for (i = 0; i < K; i++) {
        for (j = 0; j < Kp; j += 8) {
            lc_v4d acc0 = *(const lc_v4d *)(M + i * Kp + j);
            lc_v4d acc1 = *(const lc_v4d *)(M + i * Kp + j + 4);
            const double *u = U + j;
            for (t = 0; t < n; t++) {
                const double a = A[t * Kp + i];
                const lc_v4d av = {a, a, a, a};
                acc0 += av * *(const lc_v4d *)(u + t * Kp);
                acc1 += av * *(const lc_v4d *)(u + t * Kp + 4);
            }
            *(lc_v4d *)(M + i * Kp + j) = acc0;
            *(lc_v4d *)(M + i * Kp + j + 4) = acc1;
        }
    }
}

/* SSE2 (x86-64 baseline): 8 doubles = 4 registers of 2 */
static void lc_crf_matvec_sse2(const double *x, const double *M, double *out, ptrdiff_t K,
                               ptrdiff_t Kp)
{
    ptrdiff_t i, j;
    for (j = 0; j < Kp; j += 8) {
        lc_v2d acc0 = {0.0, 0.0}, acc1 = {0.0, 0.0}, acc2 = {0.0, 0.0}, acc3 = {0.0, 0.0};
        const double *col = M + j;
        for (i = 0; i < K; i++) {
            const double a = x[i];
            const lc_v2d av = {a, a};
            const double *r = col + i * Kp;
            acc0 += av * *(const lc_v2d *)(r);
            acc1 += av * *(const lc_v2d *)(r + 2);
            acc2 += av * *(const lc_v2d *)(r + 4);
            acc3 += av * *(const lc_v2d *)(r + 6);
        }
        *(lc_v2d *)(out + j) = acc0;
        *(lc_v2d *)(out + j + 2) = acc1;
        *(lc_v2d *)(out + j + 4) = acc2;
        *(lc_v2d *)(out + j + 6) = acc3;
    }
}

static void lc_crf_ger_sse2(double *M, const double *A, const double *U, ptrdiff_t n,
                            ptrdiff_t K, ptrdiff_t Kp)
{
    ptrdiff_t t, i, j;
    for (i = 0; i < K; i++) {
        for (j = 0; j < Kp; j += 8) {
            double *m = M + i * Kp + j;
            lc_v2d acc0 = *(const lc_v2d *)(m), acc1 = *(const lc_v2d *)(m + 2);
            lc_v2d acc2 = *(const lc_v2d *)(m + 4), acc3 = *(const lc_v2d *)(m + 6);
            const double *u = U + j;
            for (t = 0; t < n; t++) {
                const double a = A[t * Kp + i];
                const lc_v2d av = {a, a};
                const double *r = u + t * Kp;
                acc0 += av * *(const lc_v2d *)(r);
                acc1 += av * *(const lc_v2d *)(r + 2);
                acc2 += av * *(const lc_v2d *)(r + 4);
                acc3 += av * *(const lc_v2d *)(r + 6);
            }
            *(lc_v2d *)(m) = acc0;
            *(lc_v2d *)(m + 2) = acc1;
            *(lc_v2d *)(m + 4) = acc2;
            *(lc_v2d *)(m + 6) = acc3;
        }
    }
}

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
