/* The middle loop of the ridge kernel-side product (linclass._core._ridge,
 * dual_apply_pass), with run-time dispatch: AVX2 when the CPU has it, else the
 * baseline build (SSE2 on x86-64).
 *
 *   out += X X^T Z = sum_j x_j (x_j^T Z),   X by columns (CSC), Z and out (n, k)
 *
 * Column by column: u = x_j^T Z (k values), then out[rows] += x_j u^T.  The rows
 * of Z and out PREFETCH entries ahead are prefetched (an (n, k) block of 20
 * classes outgrows the core's cache).  Both levels compile the same C; the
 * loops over the k columns are elementwise (no sum is reordered) and the AVX2
 * level has no FMA target, so a*b+c is never contracted: both levels give the
 * same bits (the tests compare them).
 */
#ifndef LINCLASS_RIDGE_SIMD_H
#define LINCLASS_RIDGE_SIMD_H

#include <stddef.h>

#include "_simd_level.h"

#if defined(__GNUC__) || defined(__clang__)
#define LC_RIDGE_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
#else
#define LC_RIDGE_PREFETCH(p) ((void)0)
#endif

#define LC_RIDGE_AHEAD 8

/* lc_ridge_level(), lc_ridge_set_level(): 0 baseline, 2 AVX2 (_simd_level.h) */
LC_SIMD_FAMILY(lc_ridge)

static inline void lc_ridge_prefetch_row(const double* row, ptrdiff_t k)
{
    ptrdiff_t off;
    for (off = 0; off < k; off += 8)
        LC_RIDGE_PREFETCH(row + off);
    LC_RIDGE_PREFETCH(row + k - 1);
}

#define LC_RIDGE_XXTZ_BODY                                                          \
    ptrdiff_t j, p, c, nnz = colptr[d];                                             \
    for (j = 0; j < d; j++) {                                                       \
        if (colptr[j + 1] == colptr[j])                                             \
            continue;                                                               \
        for (c = 0; c < k; c++)                                                     \
            u[c] = 0.0;                                                             \
        for (p = colptr[j]; p < colptr[j + 1]; p++) {                               \
            const double x = data[p];                                               \
            const double* zrow = Z + (ptrdiff_t)rows[p] * k;                        \
            if (p + LC_RIDGE_AHEAD < nnz) {                                         \
                lc_ridge_prefetch_row(Z + (ptrdiff_t)rows[p + LC_RIDGE_AHEAD] * k, k);   \
                lc_ridge_prefetch_row(out + (ptrdiff_t)rows[p + LC_RIDGE_AHEAD] * k, k); \
            }                                                                       \
            for (c = 0; c < k; c++)                                                 \
                u[c] += x * zrow[c];                                                \
        }                                                                           \
        for (p = colptr[j]; p < colptr[j + 1]; p++) {                               \
            const double x = data[p];                                               \
            double* orow = out + (ptrdiff_t)rows[p] * k;                            \
            for (c = 0; c < k; c++)                                                 \
                orow[c] += x * u[c];                                                \
        }                                                                           \
    }

static void lc_ridge_xxtz_c(const double* restrict data, const int* restrict rows,
                            const int* restrict colptr, ptrdiff_t d, ptrdiff_t k,
                            const double* restrict Z, double* restrict out,
                            double* restrict u)
{
    LC_RIDGE_XXTZ_BODY
}

#ifdef LC_SIMD_X86
LC_TARGET_AVX2
static void lc_ridge_xxtz_avx2(const double* restrict data, const int* restrict rows,
                               const int* restrict colptr, ptrdiff_t d, ptrdiff_t k,
                               const double* restrict Z, double* restrict out,
                               double* restrict u)
{
    LC_RIDGE_XXTZ_BODY
}
#endif

/* out += X X^T Z (out, Z: (n, k) row-major; u: k doubles of scratch) */
static void lc_ridge_xxtz(const double* data, const int* rows, const int* colptr,
                          ptrdiff_t d, ptrdiff_t k, const double* Z, double* out, double* u)
{
#ifdef LC_SIMD_X86
    if (lc_ridge_level() == 2) {
        lc_ridge_xxtz_avx2(data, rows, colptr, d, k, Z, out, u);
        return;
    }
#endif
    lc_ridge_xxtz_c(data, rows, colptr, d, k, Z, out, u);
}

#endif
