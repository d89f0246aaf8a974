# String / sequence kernels for linclass.kernels.string_kernels.
#
# Sequences arrive as integer symbol ids, concatenated, with an int64 ``indptr``
# (sequence s is symbols[indptr[s]:indptr[s + 1]]).  Two kernels:
#
# * the spectrum kernel (Leslie, Eskin & Noble 2002) as the inner product of
#   sparse k-gram count vectors, from the postings of each k-gram (the Python
#   layer builds int64 k-gram keys, sorted, with the sequence and count of each):
#   every pair of postings of one k-gram adds count * count to one Gram entry;
# * the gap-weighted subsequence kernel (Lodhi et al. 2002) by its dynamic
#   programme in O(n |s| |t|) per pair (Shawe-Taylor & Cristianini 2004,
#   section 11.3).
#
# The Python layer has checked every array (dtypes, indptr monotone and within
# bounds, keys sorted); this module only checks shape agreement.

from libc.stdlib cimport malloc, free

import numpy as np


cdef void _postings_block(const long long[::1] keys, const int[::1] side,
                          const long long[::1] owner, const double[::1] count,
                          bint symmetric, double[:, ::1] out) noexcept nogil:
    """out[a, b] += count_a * count_b for every key shared by row a (side 0) and
    column b (side 1); keys sorted, so each key's postings are one run.  With
    ``symmetric`` every posting is side 0 and the upper triangle is mirrored."""
    cdef Py_ssize_t n = keys.shape[0]
    cdef Py_ssize_t start = 0, end, i, j
    cdef long long a, b
    while start < n:
        end = start + 1
        while end < n and keys[end] == keys[start]:
            end += 1
        for i in range(start, end):
            if side[i] != 0:
                continue
            a = owner[i]
            if symmetric:
                for j in range(i, end):
                    b = owner[j]
                    out[a, b] += count[i] * count[j]
                    if a != b:
                        out[b, a] += count[i] * count[j]
            else:
                for j in range(start, end):
                    if side[j] == 1:
                        out[a, owner[j]] += count[i] * count[j]
        start = end


def spectrum_gram_postings(*, keys, side, owner, count, Py_ssize_t n_a, Py_ssize_t n_b,
                           bint symmetric):
    """Gram matrix of sparse k-gram count vectors from their postings.

    ``keys`` int64 sorted increasingly, ``side`` int32 (0: a row of A, 1: a
    column of B), ``owner`` int64 (row / column index, in range: checked by
    the caller), ``count`` float64; one entry per (sequence, distinct k-gram).
    Cost: sum over k-grams of (postings)^2, as a sparse product.
    """
    cdef const long long[::1] k = np.ascontiguousarray(keys, dtype=np.int64)
    cdef const int[::1] sd = np.ascontiguousarray(side, dtype=np.int32)
    cdef const long long[::1] ow = np.ascontiguousarray(owner, dtype=np.int64)
    cdef const double[::1] c = np.ascontiguousarray(count, dtype=np.float64)
    if not (k.shape[0] == sd.shape[0] == ow.shape[0] == c.shape[0]):
        raise ValueError("keys, side, owner and count must have the same length")
    if symmetric and n_a != n_b:
        raise ValueError("a symmetric Gram matrix is square")
    out_arr = np.zeros((n_a, n_b), dtype=np.float64)
    cdef double[:, ::1] out = out_arr
    with nogil:
        _postings_block(k, sd, ow, c, symmetric, out)
    return out_arr


cdef double _subsequence_pair(const int* s, Py_ssize_t len_s, const int* t, Py_ssize_t len_t,
                              int n, double lam, double* prev, double* cur) noexcept nogil:
    """Gap-weighted subsequence kernel K_n(s, t) (Lodhi et al. 2002).

    prev, cur: work buffers of (len_s + 1) * (len_t + 1) doubles; entry
    [p * (len_t + 1) + q] holds K'_i(s[:p], t[:q]).
    """
    cdef Py_ssize_t width = len_t + 1
    cdef Py_ssize_t p, q, size = (len_s + 1) * (len_t + 1)
    cdef double lam2 = lam * lam
    cdef double kpp, total
    cdef double* swap
    cdef int i
    if len_s < n or len_t < n:
        return 0.0
    for p in range(size):                 # K'_0 = 1 everywhere
        prev[p] = 1.0
    for i in range(1, n):
        for q in range(width):            # K'_i(empty, t) = 0
            cur[q] = 0.0
        for p in range(1, len_s + 1):
            cur[p * width] = 0.0          # K'_i(s, empty) = 0
            kpp = 0.0                     # K''_i(s[:p], t[:q])
            for q in range(1, len_t + 1):
                kpp = lam * kpp
                if s[p - 1] == t[q - 1]:
                    kpp = kpp + lam2 * prev[(p - 1) * width + q - 1]
                cur[p * width + q] = lam * cur[(p - 1) * width + q] + kpp
        swap = prev
        prev = cur
        cur = swap
    # K_n(s, t) = sum_p sum_{q: t_q = s_p} lam^2 K'_{n-1}(s[:p-1], t[:q-1])
    total = 0.0
    for p in range(1, len_s + 1):
        for q in range(1, len_t + 1):
            if s[p - 1] == t[q - 1]:
                total += lam2 * prev[(p - 1) * width + q - 1]
    return total


cdef int _subsequence_block(const int[::1] a_sym, const long long[::1] a_indptr,
                            const int[::1] b_sym, const long long[::1] b_indptr,
                            int n, double lam, bint symmetric, Py_ssize_t max_a,
                            Py_ssize_t max_b, double[:, ::1] out) noexcept nogil:
    """out[a, b] = K_n(A[a], B[b]); returns -1 when the work buffers cannot be allocated"""
    cdef Py_ssize_t n_a = a_indptr.shape[0] - 1
    cdef Py_ssize_t n_b = b_indptr.shape[0] - 1
    cdef Py_ssize_t a, b, start_b, la, lb
    cdef Py_ssize_t size = (max_a + 1) * (max_b + 1)
    cdef double* prev = <double*> malloc(size * sizeof(double))
    cdef double* cur = <double*> malloc(size * sizeof(double))
    if prev == NULL or cur == NULL:
        free(prev)
        free(cur)
        return -1
    for a in range(n_a):
        la = a_indptr[a + 1] - a_indptr[a]
        start_b = a if symmetric else 0
        for b in range(start_b, n_b):
            lb = b_indptr[b + 1] - b_indptr[b]
            if la < n or lb < n:
                out[a, b] = 0.0
            else:
                out[a, b] = _subsequence_pair(&a_sym[a_indptr[a]], la, &b_sym[b_indptr[b]], lb,
                                              n, lam, prev, cur)
            if symmetric:
                out[b, a] = out[a, b]
    free(prev)
    free(cur)
    return 0


def subsequence_gram(*, a_symbols, a_indptr, b_symbols, b_indptr, int n, double lam,
                     bint symmetric):
    """Gram matrix of the gap-weighted subsequence kernel of order ``n``, decay ``lam``.

    ``*_symbols`` int32 symbol ids of the concatenated sequences, ``*_indptr``
    int64 boundaries (n_sequences + 1 entries, monotone, checked by the caller).
    """
    cdef const int[::1] asym = np.ascontiguousarray(a_symbols, dtype=np.int32)
    cdef const long long[::1] ap = np.ascontiguousarray(a_indptr, dtype=np.int64)
    cdef const int[::1] bsym = np.ascontiguousarray(b_symbols, dtype=np.int32)
    cdef const long long[::1] bp = np.ascontiguousarray(b_indptr, dtype=np.int64)
    cdef int status
    if n < 1:
        raise ValueError("n must be >= 1")
    if ap.shape[0] < 1 or bp.shape[0] < 1:
        raise ValueError("indptr must have at least one entry")
    if ap[ap.shape[0] - 1] != asym.shape[0] or bp[bp.shape[0] - 1] != bsym.shape[0]:
        raise ValueError("indptr must end at the number of symbols")
    if symmetric and ap.shape[0] != bp.shape[0]:
        raise ValueError("a symmetric Gram matrix needs the same sequences on both sides")
    cdef Py_ssize_t max_a = int(np.diff(a_indptr).max()) if ap.shape[0] > 1 else 0
    cdef Py_ssize_t max_b = int(np.diff(b_indptr).max()) if bp.shape[0] > 1 else 0
    out_arr = np.zeros((ap.shape[0] - 1, bp.shape[0] - 1), dtype=np.float64)
    cdef double[:, ::1] out = out_arr
    with nogil:
        status = _subsequence_block(asym, ap, bsym, bp, n, lam, symmetric, max_a, max_b, out)
    if status != 0:
        raise MemoryError("subsequence kernel: cannot allocate work buffers for sequences "
                          "of length %d x %d" % (max_a, max_b))
    return out_arr
