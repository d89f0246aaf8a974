/* float32 kernels of the linear-chain tagger: emission scores and first-order
 * Viterbi, vectorised over labels, with run-time dispatch (AVX2 / SSE2 / scalar).
 *
 * Emission scores.  E[t, k] = sum_p data[p] * W[indices[p], k] over the CSR
 * entries p of token row t, accumulated in feature order in float32.  A row of
 * E (up to 32 labels per pass) stays in registers while the token's weight
 * rows are added to it; with binary data (every value 1.0, the template
 * features) the multiply is skipped (1.0f * w == w exactly).
 *
 * Viterbi.  The forward pass keeps only the max:
 *     D[t, k] = max_j (D[t-1, j] + trans[j, k]) + E[t, k]
 * (one add and one max per 8 labels and predecessor, the row of D in
 * registers); the back pointers are recomputed in the backtrace, for the one
 * label on the path at each step, from the stored rows D[t-1, :]:
 *     y_{t-1} = the smallest j with D[t-1, j] + trans[j, y_t] maximal.
 * The values compared are the same float32 sums the textbook recursion
 * compares, in the same order, with the same "strictly greater replaces"
 * rule (MAXPS(s, c) = s > c ? s : c, NaN included), so the path and its score
 * are bit for bit those of the scalar recursion with stored back pointers.
 *
 * Layout.  D and the padded copy of trans have rows of Kp = lc_pad8(K) floats
 * (the pad lanes hold zeros or finite garbage and are never read as labels);
 * E rows have a caller-chosen stride ldE >= K (Kp for the Viterbi below).
 *
 * Dispatch.  The AVX2 functions are compiled with a target attribute (no
 * -march flag: the extension runs on any x86-64) and chosen at run time by
 * __builtin_cpu_supports; no FMA is enabled, so no multiply-add is contracted
 * and every path gives bit-identical results.  Other compilers/targets use
 * SSE2 (x86-64 baseline) or the scalar loops.
 */
#ifndef LINCLASS_SEQUENCE_SIMD_H
#define LINCLASS_SEQUENCE_SIMD_H

#include <stddef.h>
#include <math.h>
#include <string.h>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define LC_HAVE_SSE2 1
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LC_HAVE_AVX2_DISPATCH 1
#define LC_TARGET_AVX2 __attribute__((target("avx2")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LC_INLINE static inline __attribute__((always_inline))
#define LC_PREFETCH(p) __builtin_prefetch((const void *)(p))
#else
#define LC_INLINE static __inline
#define LC_PREFETCH(p) ((void)0)
#endif

/* features ahead whose weight rows are prefetched */
#define LC_PREFETCH_AHEAD 6

static inline ptrdiff_t lc_pad8(ptrdiff_t K) { return (K + 7) & ~(ptrdiff_t)7; }

/* 0: scalar, 1: SSE2, 2: AVX2; -1 until first use */
static int lc_simd_level_ = -1;

static int lc_simd_detect(void)
{
#ifdef LC_HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        return 2;
#endif
#ifdef LC_HAVE_SSE2
    return 1;
#else
    return 0;
#endif
}

static int lc_simd_level(void)
{
    if (lc_simd_level_ < 0)
        lc_simd_level_ = lc_simd_detect();
    return lc_simd_level_;
}

/* Select a level at most the detected one (tests compare the paths); returns
 * the level in effect. */
static int lc_simd_set_level(int level)
{
    int best = lc_simd_detect();
    if (level < 0 || level > best)
        level = best;
    lc_simd_level_ = level;
    return level;
}

/* ------------------------------------------------------------- scalar -- */

static void lc_emission_scalar(const float *W, ptrdiff_t K, const int *ind,
                               const double *data, const int *indptr, ptrdiff_t row0,
                               ptrdiff_t n, int binary, float *E, ptrdiff_t ldE)
{
    ptrdiff_t t, p, k;
    for (t = 0; t < n; t++) {
        float *erow = E + t * ldE;
        for (k = 0; k < K; k++)
            erow[k] = 0.0f;
        for (p = indptr[row0 + t]; p < indptr[row0 + t + 1]; p++) {
            const float *wrow = W + (ptrdiff_t)ind[p] * K;
            if (binary) {
                for (k = 0; k < K; k++)
                    erow[k] += wrow[k];
            } else {
                const float v = (float)data[p];
                for (k = 0; k < K; k++)
                    erow[k] += v * wrow[k];
            }
        }
    }
}

static void lc_forward_scalar(const float *E, ptrdiff_t n, ptrdiff_t K, ptrdiff_t Kp,
                              const float *Tp, float *D)
{
    ptrdiff_t t, j, k;
    for (t = 1; t < n; t++) {
        const float *prev = D + (t - 1) * Kp;
        float *cur = D + t * Kp;
        for (k = 0; k < K; k++)
            cur[k] = prev[0] + Tp[k];
        for (j = 1; j < K; j++) {
            const float pj = prev[j];
            const float *row = Tp + j * Kp;
            for (k = 0; k < K; k++) {
                const float s = pj + row[k];
                cur[k] = s > cur[k] ? s : cur[k];
            }
        }
        for (k = 0; k < K; k++)
            cur[k] += E[t * Kp + k];
    }
}

/* --------------------------------------------------------------- SSE2 -- */
#ifdef LC_HAVE_SSE2

/* the first r (1..3) floats of p in the low lanes, zeros above */
LC_INLINE __m128 lc_load_partial_sse(const float *p, ptrdiff_t r)
{
    __m128 lo;
    if (r == 1)
        return _mm_load_ss(p);
    lo = _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)p);
    if (r == 2)
        return lo;
    return _mm_movelh_ps(lo, _mm_load_ss(p + 2));
}

LC_INLINE void lc_store_partial_sse(float *p, __m128 v, ptrdiff_t r)
{
    if (r == 1) {
        _mm_store_ss(p, v);
        return;
    }
    _mm_storel_pi((__m64 *)p, v);
    if (r == 3)
        _mm_store_ss(p + 2, _mm_movehl_ps(v, v));
}

/* labels k0 .. k0 + 4*nb - 1 of E rows (the last block holds `r` labels,
 * 1..4); nb is a compile-time constant after inlining */
LC_INLINE void lc_emission_sse_blocks(const float *W, ptrdiff_t K, const int *ind,
                                      const double *data, const int *indptr, ptrdiff_t row0,
                                      ptrdiff_t n, int binary, float *E, ptrdiff_t ldE,
                                      ptrdiff_t k0, const int nb, ptrdiff_t r)
{
    ptrdiff_t t, p, pend = indptr[row0 + n];
    int b;
    for (t = 0; t < n; t++) {
        __m128 acc[8];
        const ptrdiff_t p1 = indptr[row0 + t + 1];
        for (b = 0; b < nb; b++)
            acc[b] = _mm_setzero_ps();
        for (p = indptr[row0 + t]; p < p1; p++) {
            const float *wrow = W + (ptrdiff_t)ind[p] * K + k0;
            if (p + LC_PREFETCH_AHEAD < pend)
                LC_PREFETCH(W + (ptrdiff_t)ind[p + LC_PREFETCH_AHEAD] * K + k0);
            if (binary) {
                for (b = 0; b < nb - 1; b++)
                    acc[b] = _mm_add_ps(acc[b], _mm_loadu_ps(wrow + 4 * b));
                acc[nb - 1] = _mm_add_ps(acc[nb - 1], r == 4 ? _mm_loadu_ps(wrow + 4 * (nb - 1))
                                         : lc_load_partial_sse(wrow + 4 * (nb - 1), r));
            } else {
                const __m128 v = _mm_set1_ps((float)data[p]);
                for (b = 0; b < nb - 1; b++)
                    acc[b] = _mm_add_ps(acc[b], _mm_mul_ps(v, _mm_loadu_ps(wrow + 4 * b)));
                acc[nb - 1] = _mm_add_ps(acc[nb - 1], _mm_mul_ps(
                    v, r == 4 ? _mm_loadu_ps(wrow + 4 * (nb - 1))
                              : lc_load_partial_sse(wrow + 4 * (nb - 1), r)));
            }
        }
        {
            float *erow = E + t * ldE + k0;
            for (b = 0; b < nb - 1; b++)
                _mm_storeu_ps(erow + 4 * b, acc[b]);
            if (r == 4)
                _mm_storeu_ps(erow + 4 * (nb - 1), acc[nb - 1]);
            else
                lc_store_partial_sse(erow + 4 * (nb - 1), acc[nb - 1], r);
        }
    }
}

static void lc_emission_sse(const float *W, ptrdiff_t K, const int *ind, const double *data,
                            const int *indptr, ptrdiff_t row0, ptrdiff_t n, int binary,
                            float *E, ptrdiff_t ldE)
{
    ptrdiff_t k0;
    for (k0 = 0; k0 < K; k0 += 32) {
        const ptrdiff_t width = K - k0 < 32 ? K - k0 : 32;
        const int nb = (int)((width + 3) / 4);
        const ptrdiff_t r = width - 4 * (nb - 1);
        switch (nb) {
        case 1: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 1, r); break;
        case 2: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 2, r); break;
        case 3: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 3, r); break;
        case 4: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 4, r); break;
        case 5: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 5, r); break;
        case 6: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 6, r); break;
        case 7: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 7, r); break;
        default: lc_emission_sse_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 8, r); break;
        }
    }
}

/* D[t, k0 .. k0 + 4*nb - 1] from the whole row D[t-1] (all labels of row t-1
 * are complete before row t starts: label chunks are the inner loop) */
LC_INLINE void lc_forward_sse_blocks(const float *E, ptrdiff_t t, ptrdiff_t K, ptrdiff_t Kp,
                                     const float *Tp, float *D, ptrdiff_t k0, const int nb)
{
    ptrdiff_t j;
    int b;
    __m128 acc[8];
    const float *prev = D + (t - 1) * Kp;
    const __m128 p0 = _mm_set1_ps(prev[0]);
    for (b = 0; b < nb; b++)
        acc[b] = _mm_add_ps(p0, _mm_loadu_ps(Tp + k0 + 4 * b));
    for (j = 1; j < K; j++) {
        const __m128 pj = _mm_set1_ps(prev[j]);
        const float *row = Tp + j * Kp + k0;
        for (b = 0; b < nb; b++)
            acc[b] = _mm_max_ps(_mm_add_ps(pj, _mm_loadu_ps(row + 4 * b)), acc[b]);
    }
    for (b = 0; b < nb; b++)
        _mm_storeu_ps(D + t * Kp + k0 + 4 * b,
                      _mm_add_ps(acc[b], _mm_loadu_ps(E + t * Kp + k0 + 4 * b)));
}

static void lc_forward_sse(const float *E, ptrdiff_t n, ptrdiff_t K, ptrdiff_t Kp,
                           const float *Tp, float *D)
{
    ptrdiff_t t, k0;
    for (t = 1; t < n; t++) {
        for (k0 = 0; k0 < Kp; k0 += 32) {
            const int nb = (int)((Kp - k0 < 32 ? Kp - k0 : 32) / 4);
            switch (nb) {
            case 2: lc_forward_sse_blocks(E, t, K, Kp, Tp, D, k0, 2); break;
            case 4: lc_forward_sse_blocks(E, t, K, Kp, Tp, D, k0, 4); break;
            case 6: lc_forward_sse_blocks(E, t, K, Kp, Tp, D, k0, 6); break;
            default: lc_forward_sse_blocks(E, t, K, Kp, Tp, D, k0, 8); break;
            }
        }
    }
}
#endif  /* LC_HAVE_SSE2 */

/* --------------------------------------------------------------- AVX2 -- */
#ifdef LC_HAVE_AVX2_DISPATCH

LC_INLINE LC_TARGET_AVX2 __m256i lc_tail_mask(ptrdiff_t r)
{
    /* lanes 0 .. r-1 set (r = 1..8) */
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), lanes);
}

LC_INLINE LC_TARGET_AVX2 void lc_emission_avx_blocks(
    const float *W, ptrdiff_t K, const int *ind, const double *data, const int *indptr,
    ptrdiff_t row0, ptrdiff_t n, int binary, float *E, ptrdiff_t ldE, ptrdiff_t k0,
    const int nb, __m256i mask)
{
    ptrdiff_t t, p, pend = indptr[row0 + n];
    int b;
    for (t = 0; t < n; t++) {
        __m256 acc[4];
        const ptrdiff_t p1 = indptr[row0 + t + 1];
        for (b = 0; b < nb; b++)
            acc[b] = _mm256_setzero_ps();
        for (p = indptr[row0 + t]; p < p1; p++) {
            const float *wrow = W + (ptrdiff_t)ind[p] * K + k0;
            if (p + LC_PREFETCH_AHEAD < pend)
                LC_PREFETCH(W + (ptrdiff_t)ind[p + LC_PREFETCH_AHEAD] * K + k0);
            if (binary) {
                for (b = 0; b < nb - 1; b++)
                    acc[b] = _mm256_add_ps(acc[b], _mm256_loadu_ps(wrow + 8 * b));
                acc[nb - 1] = _mm256_add_ps(acc[nb - 1],
                                            _mm256_maskload_ps(wrow + 8 * (nb - 1), mask));
            } else {
                const __m256 v = _mm256_set1_ps((float)data[p]);
                for (b = 0; b < nb - 1; b++)
                    acc[b] = _mm256_add_ps(acc[b], _mm256_mul_ps(v, _mm256_loadu_ps(wrow + 8 * b)));
                acc[nb - 1] = _mm256_add_ps(acc[nb - 1], _mm256_mul_ps(
                    v, _mm256_maskload_ps(wrow + 8 * (nb - 1), mask)));
            }
        }
        {
            float *erow = E + t * ldE + k0;
            for (b = 0; b < nb - 1; b++)
                _mm256_storeu_ps(erow + 8 * b, acc[b]);
            _mm256_maskstore_ps(erow + 8 * (nb - 1), mask, acc[nb - 1]);
        }
    }
}

static LC_TARGET_AVX2 void lc_emission_avx2(const float *W, ptrdiff_t K, const int *ind,
                                            const double *data, const int *indptr,
                                            ptrdiff_t row0, ptrdiff_t n, int binary,
                                            float *E, ptrdiff_t ldE)
{
    ptrdiff_t k0;
    for (k0 = 0; k0 < K; k0 += 32) {
        const ptrdiff_t width = K - k0 < 32 ? K - k0 : 32;
        const int nb = (int)((width + 7) / 8);
        const __m256i mask = lc_tail_mask(width - 8 * (nb - 1));
        switch (nb) {
        case 1: lc_emission_avx_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 1, mask); break;
        case 2: lc_emission_avx_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 2, mask); break;
        case 3: lc_emission_avx_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 3, mask); break;
        default: lc_emission_avx_blocks(W, K, ind, data, indptr, row0, n, binary, E, ldE, k0, 4, mask); break;
        }
    }
}

LC_INLINE LC_TARGET_AVX2 void lc_forward_avx_blocks(const float *E, ptrdiff_t t, ptrdiff_t K,
                                                    ptrdiff_t Kp, const float *Tp, float *D,
                                                    ptrdiff_t k0, const int nb)
{
    ptrdiff_t j;
    int b;
    __m256 acc[4];
    const float *prev = D + (t - 1) * Kp;
    const __m256 p0 = _mm256_set1_ps(prev[0]);
    for (b = 0; b < nb; b++)
        acc[b] = _mm256_add_ps(p0, _mm256_loadu_ps(Tp + k0 + 8 * b));
    for (j = 1; j < K; j++) {
        const __m256 pj = _mm256_set1_ps(prev[j]);
        const float *row = Tp + j * Kp + k0;
        for (b = 0; b < nb; b++)
            acc[b] = _mm256_max_ps(_mm256_add_ps(pj, _mm256_loadu_ps(row + 8 * b)), acc[b]);
    }
    for (b = 0; b < nb; b++)
        _mm256_storeu_ps(D + t * Kp + k0 + 8 * b,
                         _mm256_add_ps(acc[b], _mm256_loadu_ps(E + t * Kp + k0 + 8 * b)));
}

static LC_TARGET_AVX2 void lc_forward_avx2(const float *E, ptrdiff_t n, ptrdiff_t K,
                                           ptrdiff_t Kp, const float *Tp, float *D)
{
    ptrdiff_t t, k0;
    for (t = 1; t < n; t++) {
        for (k0 = 0; k0 < Kp; k0 += 32) {
            const int nb = (int)((Kp - k0 < 32 ? Kp - k0 : 32) / 8);
            switch (nb) {
            case 1: lc_forward_avx_blocks(E, t, K, Kp, Tp, D, k0, 1); break;
            case 2: lc_forward_avx_blocks(E, t, K, Kp, Tp, D, k0, 2); break;
            case 3: lc_forward_avx_blocks(E, t, K, Kp, Tp, D, k0, 3); break;
            default: lc_forward_avx_blocks(E, t, K, Kp, Tp, D, k0, 4); break;
            }
        }
    }
}
#endif  /* LC_HAVE_AVX2_DISPATCH */

/* ----------------------------------------------------------- dispatch -- */

/* E[t, 0:K] (rows of stride ldE >= K) = token rows row0 .. row0+n-1 of the
 * CSR matrix times W (F x K); lanes K .. ldE-1 are not written. */
static void lc_emission_f32(const float *W, ptrdiff_t K, const int *ind, const double *data,
                            const int *indptr, ptrdiff_t row0, ptrdiff_t n, int binary,
                            float *E, ptrdiff_t ldE)
{
    const int level = lc_simd_level();
#ifdef LC_HAVE_AVX2_DISPATCH
    if (level >= 2) {
        lc_emission_avx2(W, K, ind, data, indptr, row0, n, binary, E, ldE);
        return;
    }
#endif
#ifdef LC_HAVE_SSE2
    if (level >= 1) {
        lc_emission_sse(W, K, ind, data, indptr, row0, n, binary, E, ldE);
        return;
    }
#endif
    (void)level;
    lc_emission_scalar(W, K, ind, data, indptr, row0, n, binary, E, ldE);
}

/* Tp (K rows of Kp floats) = trans (K x K), zero pad lanes;
 * Tt (K rows of Kp floats) = trans transposed (Tt[k, j] = trans[j, k]), pad
 * lanes -inf (never the maximum of the backtrace) */
static void lc_pad_trans(const float *trans, ptrdiff_t K, float *Tp, float *Tt)
{
    const ptrdiff_t Kp = lc_pad8(K);
    const float neg_inf = -HUGE_VALF;
    ptrdiff_t j, k;
    for (j = 0; j < K; j++) {
        memcpy(Tp + j * Kp, trans + j * K, (size_t)K * sizeof(float));
        for (k = K; k < Kp; k++)
            Tp[j * Kp + k] = 0.0f;
    }
    for (k = 0; k < K; k++) {
        for (j = 0; j < K; j++)
            Tt[k * Kp + j] = trans[j * K + k];
        for (j = K; j < Kp; j++)
            Tt[k * Kp + j] = neg_inf;
    }
}

/* Tp, Tt after trans[j, k] changed */
static inline void lc_set_trans(const float *trans, ptrdiff_t K, ptrdiff_t j, ptrdiff_t k,
                                float *Tp, float *Tt)
{
    const ptrdiff_t Kp = lc_pad8(K);
    Tp[j * Kp + k] = trans[j * K + k];
    Tt[k * Kp + j] = trans[j * K + k];
}

/* every x[p] == 1.0 (binary template features: the emission sums then skip
 * the multiply, 1.0f * w == w exactly) */
static int lc_all_ones(const double *x, ptrdiff_t n)
{
    ptrdiff_t p = 0;
    int other = 0;
#ifdef LC_HAVE_SSE2
    const __m128d one = _mm_set1_pd(1.0);
    while (p + 1024 <= n && !other) {          /* exits early at the first block */
        __m128d a = _mm_setzero_pd(), b = _mm_setzero_pd();
        const ptrdiff_t end = p + 1024;
        for (; p < end; p += 4) {
            a = _mm_or_pd(a, _mm_cmpneq_pd(_mm_loadu_pd(x + p), one));
            b = _mm_or_pd(b, _mm_cmpneq_pd(_mm_loadu_pd(x + p + 2), one));
        }
        other = _mm_movemask_pd(_mm_or_pd(a, b)) != 0;
    }
#endif
    for (; p < n && !other; p++)
        other = !(x[p] == 1.0);
    return !other;
}

/* the smallest j < K with drow[j] + trans[j, y] maximal, scanning j upwards
 * with "strictly greater replaces" (the rule of the forward pass) */
static int lc_argmax_pred_scalar(const float *drow, ptrdiff_t K, const float *trans,
                                 ptrdiff_t y)
{
    ptrdiff_t j;
    float best = drow[0] + trans[y];
    int arg = 0;
    for (j = 1; j < K; j++) {
        const float s = drow[j] + trans[j * K + y];
        if (s > best) {
            best = s;
            arg = (int)j;
        }
    }
    return arg;
}

#ifdef LC_HAVE_AVX2_DISPATCH
/* out[t-1] for t = n-1 .. 1, as lc_argmax_pred_scalar: the maximum of the
 * sums s_j = D[t-1, j] + Tt[y, j] (pad lanes -inf) and its first lane; the
 * maximum of a set is independent of the order it is taken in, and the
 * first lane equal to it is the scalar scan's answer (+0 == -0 included).
 * A NaN among the sums falls back to the scalar scan. */
static LC_TARGET_AVX2 void lc_backtrace_avx2(const float *D, ptrdiff_t n, ptrdiff_t K,
                                             const float *trans, const float *Tt, int *out)
{
    const ptrdiff_t Kp = lc_pad8(K);
    ptrdiff_t t, b;
    for (t = n - 1; t > 0; t--) {
        const ptrdiff_t y = out[t];
        const float *drow = D + (t - 1) * Kp;
        const float *trow = Tt + y * Kp;
        __m256 s = _mm256_add_ps(_mm256_loadu_ps(drow), _mm256_loadu_ps(trow));
        __m256 m = s;
        __m256 nan = _mm256_cmp_ps(s, s, _CMP_UNORD_Q);
        int arg = -1;
        for (b = 8; b < Kp; b += 8) {
            s = _mm256_add_ps(_mm256_loadu_ps(drow + b), _mm256_loadu_ps(trow + b));
            m = _mm256_max_ps(s, m);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(s, s, _CMP_UNORD_Q));
        }
        if (_mm256_movemask_ps(nan)) {
            out[t - 1] = lc_argmax_pred_scalar(drow, K, trans, y);
            continue;
        }
        m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
        m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0x4E));
        m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0xB1));
        for (b = 0; b < Kp; b += 8) {
            const int hits = _mm256_movemask_ps(_mm256_cmp_ps(
                _mm256_add_ps(_mm256_loadu_ps(drow + b), _mm256_loadu_ps(trow + b)), m,
                _CMP_EQ_OQ));
            if (hits) {
                arg = (int)b + __builtin_ctz((unsigned)hits);
                break;
            }
        }
        out[t - 1] = arg;
    }
}
#endif

/* First-order Viterbi on padded rows: E (n x Kp, pad lanes finite), Tp and Tt
 * (lc_pad_trans) and trans itself (K x K, read by the scalar backtrace);
 * D (n x Kp) is workspace.  Writes the best path to out[0:n] and returns its
 * score (0 when n == 0). */
static float lc_viterbi1_f32(const float *E, ptrdiff_t n, ptrdiff_t K, const float *trans,
                             const float *Tp, const float *Tt, const float *start,
                             const float *stop, float *D, int *out)
{
    const ptrdiff_t Kp = lc_pad8(K);
    const int level = lc_simd_level();
    ptrdiff_t t, k;
    float best, s;
    int arg;
    const float *drow;
    if (n <= 0)
        return 0.0f;
    for (k = 0; k < K; k++)
        D[k] = start[k] + E[k];
    for (k = K; k < Kp; k++)
        D[k] = 0.0f;
#ifdef LC_HAVE_AVX2_DISPATCH
    if (level >= 2)
        lc_forward_avx2(E, n, K, Kp, Tp, D);
    else
#endif
#ifdef LC_HAVE_SSE2
    if (level >= 1)
        lc_forward_sse(E, n, K, Kp, Tp, D);
    else
#endif
        lc_forward_scalar(E, n, K, Kp, Tp, D);
    (void)level;
    drow = D + (n - 1) * Kp;
    best = drow[0] + stop[0];
    arg = 0;
    for (k = 1; k < K; k++) {
        s = drow[k] + stop[k];
        if (s > best) {
            best = s;
            arg = (int)k;
        }
    }
    out[n - 1] = arg;
#ifdef LC_HAVE_AVX2_DISPATCH
    if (level >= 2) {
        lc_backtrace_avx2(D, n, K, trans, Tt, out);
        return best;
    }
#endif
    for (t = n - 1; t > 0; t--)
        out[t - 1] = lc_argmax_pred_scalar(D + (t - 1) * Kp, K, trans, out[t]);
    return best;
}

#endif
