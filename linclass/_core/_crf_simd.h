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
 *   lc_crf_expshift: e[k] = exp(e[k] - m) (the potentials of a token), with
 *       Cephes' exp written once for scalars and once for vectors (the same
 *       operations: every level gives the same bits); libm's exp is ~50
 *       instructions a call, a fifth of the whole gradient before.
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
#include <string.h>

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

/* exp(x) for x <= 0 (Cephes' exp: x = n ln2 + r, |r| <= ln2 / 2, a (2,3)
 * Padé form for exp(r), times 2^n built in the exponent bits; relative error
 * about 2e-16); x < -708 gives 0.  Rounding of x log2(e) to n uses the
 * 1.5 * 2^52 trick, so scalar and vector code do the same operations. */
#define LC_EXP_MAGIC 6755399441055744.0            /* 1.5 * 2^52 */
#define LC_EXP_LOG2E 1.4426950408889634073599
#define LC_EXP_C1 0.693145751953125
#define LC_EXP_C2 1.42860682030941723212e-6
#define LC_EXP_P0 1.26177193074810590878e-4
#define LC_EXP_P1 3.02994407707441961300e-2
#define LC_EXP_P2 9.99999999999999999910e-1
#define LC_EXP_Q0 3.00198505138664455042e-6
#define LC_EXP_Q1 2.52448340349684104192e-3
#define LC_EXP_Q2 2.27265548208155028766e-1
#define LC_EXP_Q3 2.00000000000000000009e0
#define LC_EXP_MIN (-708.0)

static inline double lc_crf_exp1(double x)
{
    double t, n, r, rr, px, qx, y, scale;
    long long bits;
    int under = x < LC_EXP_MIN;                     /* -inf included */
    if (under)
        x = LC_EXP_MIN;
    t = x * LC_EXP_LOG2E + LC_EXP_MAGIC;
    n = t - LC_EXP_MAGIC;
    r = (x - n * LC_EXP_C1) - n * LC_EXP_C2;
    rr = r * r;
    px = r * ((LC_EXP_P0 * rr + LC_EXP_P1) * rr + LC_EXP_P2);
    qx = ((LC_EXP_Q0 * rr + LC_EXP_Q1) * rr + LC_EXP_Q2) * rr + LC_EXP_Q3;
    y = 1.0 + 2.0 * (px / (qx - px));
    memcpy(&bits, &t, sizeof bits);
    bits = (bits - 0x4338000000000000LL + 1023) << 52;
    memcpy(&scale, &bits, sizeof scale);
    return under ? 0.0 : y * scale;
}

/* e[k] = exp(e[k] - m) for k < K (e[k] - m <= 0), 0 for K <= k < Kp */
static void lc_crf_expshift_scalar(double *e, double m, ptrdiff_t K, ptrdiff_t Kp)
{
    ptrdiff_t k;
    for (k = 0; k < K; k++)
        e[k] = lc_crf_exp1(e[k] - m);
    for (; k < Kp; k++)
        e[k] = 0.0;
}

/* The sparse state features of one attribute occurrence (labels lab[q],
 * weights w[q], q0 <= q < q1; distinct labels): E[lab[q]] += w[q] and
 * G[q] += P[lab[q]], unrolled by 4 (the loop control cost as much as the
 * work); same additions in the same order as the plain loops. */
static inline void lc_crf_gather_add(double *E, const int *lab, const double *w,
                                     ptrdiff_t q0, ptrdiff_t q1)
{
    ptrdiff_t q = q0;
    for (; q + 4 <= q1; q += 4) {
        E[lab[q]] += w[q];
        E[lab[q + 1]] += w[q + 1];
        E[lab[q + 2]] += w[q + 2];
        E[lab[q + 3]] += w[q + 3];
    }
    for (; q < q1; q++)
        E[lab[q]] += w[q];
}

static inline void lc_crf_scatter_add(double *G, const int *lab, const double *P,
                                      ptrdiff_t q0, ptrdiff_t q1)
{
    ptrdiff_t q = q0;
    for (; q + 4 <= q1; q += 4) {
        G[q] += P[lab[q]];
        G[q + 1] += P[lab[q + 1]];
        G[q + 2] += P[lab[q + 2]];
        G[q + 3] += P[lab[q + 3]];
    }
    for (; q < q1; q++)
        G[q] += P[lab[q]];
}

/* -------------------------------------------------- vector extensions -- */
#ifdef LC_CRF_VEC

typedef double lc_v4d __attribute__((vector_size(32), aligned(8), may_alias));
typedef double lc_v2d __attribute__((vector_size(16), aligned(8), may_alias));
typedef long long lc_v4i __attribute__((vector_size(32)));
typedef long long lc_v2i __attribute__((vector_size(16)));

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

#define LC_CRF_DEFINE(SUFFIX, ATTR, VT, VI, W)                                \
ATTR static void lc_crf_expshift_##SUFFIX(double *e, double m, ptrdiff_t K,   \
                                          ptrdiff_t Kp)                       \
{                                                                             \
    ptrdiff_t k;                                                              \
    for (k = 0; k + W <= K; k += W) {                                         \
        VT x = *(const VT *)(e + k) - m, t, n, r, rr, px, qx, y;              \
        const VT lo = (VT){0} + LC_EXP_MIN;                                   \
        VI under = x < lo, bits;                  /* all ones where x < -708 */ \
        x = (VT)(((VI)x & ~under) | ((VI)lo & under));                        \
        t = x * LC_EXP_LOG2E + LC_EXP_MAGIC;                                  \
        n = t - LC_EXP_MAGIC;                                                 \
        r = (x - n * LC_EXP_C1) - n * LC_EXP_C2;                              \
        rr = r * r;                                                           \
        px = r * ((LC_EXP_P0 * rr + LC_EXP_P1) * rr + LC_EXP_P2);             \
        qx = ((LC_EXP_Q0 * rr + LC_EXP_Q1) * rr + LC_EXP_Q2) * rr + LC_EXP_Q3; \
        y = 1.0 + 2.0 * (px / (qx - px));                                     \
        bits = ((VI)t - 0x4338000000000000LL + 1023) << 52;                   \
        y = y * (VT)bits;                                                     \
        *(VT *)(e + k) = (VT)((VI)y & ~under);                                \
    }                                                                         \
    for (; k < K; k++)                                                        \
        e[k] = lc_crf_exp1(e[k] - m);                                         \
    for (; k < Kp; k++)                                                       \
        e[k] = 0.0;                                                           \
}                                                                             \
                                                                              \
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

LC_CRF_DEFINE(avx2, LC_CRF_AVX2, lc_v4d, lc_v4i, 4)
LC_CRF_DEFINE(sse2, , lc_v2d, lc_v2i, 2)

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

static inline void lc_crf_expshift(int level, double *e, double m, ptrdiff_t K, ptrdiff_t Kp)
{
#ifdef LC_CRF_VEC
    if (level == 2) {
        lc_crf_expshift_avx2(e, m, K, Kp);
        return;
    }
    if (level == 1) {
        lc_crf_expshift_sse2(e, m, K, Kp);
        return;
    }
#endif
    lc_crf_expshift_scalar(e, m, K, Kp);
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
