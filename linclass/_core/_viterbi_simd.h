/* One Viterbi relaxation step over float32 scores, SSE2 on x86-64.
 *
 *   cur[k]  = max_j prev[j] + trans[j * K + k]
 *   back[k] = the smallest j attaining the max
 *
 * Predecessor-major order: for each j the k-loop runs over a contiguous row
 * of trans, four labels per instruction, with compare-and-select (SSE2 has
 * no blend instruction: and/andnot/or).  GCC does not vectorise the scalar
 * form of this loop (a float compare selecting an int counts as control
 * flow), hence the intrinsics.  SSE2 is part of the x86-64 baseline, so no
 * -march flag is needed; other targets use the scalar loop, with identical
 * results (same operations, same order, same tie-breaking).
 */
#ifndef LINCLASS_VITERBI_SIMD_H
#define LINCLASS_VITERBI_SIMD_H

#include <stddef.h>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define LINCLASS_HAVE_SSE2 1
#endif

static inline void lc_relax_f32(const float *prev, const float *trans, ptrdiff_t K,
                                float *cur, int *back)
{
    ptrdiff_t j, k = 0;
    for (k = 0; k < K; k++) {
        cur[k] = prev[0] + trans[k];
        back[k] = 0;
    }
    for (j = 1; j < K; j++) {
        const float pj = prev[j];
        const float *row = trans + j * K;
        k = 0;
#ifdef LINCLASS_HAVE_SSE2
        {
            const __m128 vpj = _mm_set1_ps(pj);
            const __m128i vj = _mm_set1_epi32((int)j);
            for (; k + 4 <= K; k += 4) {
                __m128 s = _mm_add_ps(vpj, _mm_loadu_ps(row + k));
                __m128 c = _mm_loadu_ps(cur + k);
                __m128 m = _mm_cmpgt_ps(s, c);
                __m128i mi = _mm_castps_si128(m);
                __m128i b = _mm_loadu_si128((const __m128i *)(back + k));
                _mm_storeu_ps(cur + k, _mm_or_ps(_mm_and_ps(m, s), _mm_andnot_ps(m, c)));
                _mm_storeu_si128((__m128i *)(back + k),
                                 _mm_or_si128(_mm_and_si128(mi, vj), _mm_andnot_si128(mi, b)));
            }
        }
#endif
        for (; k < K; k++) {
            float s = pj + row[k];
            if (s > cur[k]) {
                cur[k] = s;
                back[k] = (int)j;
            }
        }
    }
}

#endif
