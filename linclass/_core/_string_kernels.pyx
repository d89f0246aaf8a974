# String / sequence kernels for linclass.kernels.string_kernels.
#
# Sequences arrive as integer symbol ids, concatenated, with an int64 ``indptr``
# (sequence s is symbols[indptr[s]:indptr[s + 1]]).  Two kernels:
#
# * the spectrum kernel (Leslie, Eskin & Noble 2002) as the inner product of
#   sparse k-gram count vectors: each sequence is a run of sorted int64 k-gram
#   keys with their counts (built by the Python layer); one Gram entry is a
#   merge join of two sorted runs;
# * the gap-weighted subsequence kernel (Lodhi et al. 2002) by its dynamic
#   programme in O(n |s| |t|) per pair (Shawe-Taylor & Cristianini 2004,
#   section 11.3).
#
# The Python layer has checked every array (dtypes, indptr monotone and within
# bounds, keys sorted per run); this module only checks shape agreement.

from libc.stdlib cimport malloc, free

import numpy as np


cdef double _sorted_dot(const long long* ka, const double* va, Py_ssize_t na,
                        const long long* kb, const double* vb, Py_ssize_t nb) noexcept nogil:
    """sum over common keys of va * vb, both key runs sorted increasingly"""
    cdef Py_ssize_t i = 0, j = 0
    cdef double total = 0.0
    while i < na and j < nb:
        if ka[i] == kb[j]:
            total += va[i] * vb[j]
            i += 1
            j += 1
        elif ka[i] < kb[j]:
            i += 1
        else:
            j += 1
    return total


cdef void _spectrum_block(const long long[::1] a_keys, const double[::1] a_vals,
                          const long long[::1] a_indptr,
                          const long long[::1] b_keys, const double[::1] b_vals,
                          const long long[::1] b_indptr, bint symmetric,
                          double[:, ::1] out) noexcept nogil:
    """out[a, b] = <phi(A[a]), phi(B[b])>  (out: (n_a, n_b))"""
    cdef Py_ssize_t n_a = a_indptr.shape[0] - 1
    cdef Py_ssize_t n_b = b_indptr.shape[0] - 1
    cdef Py_ssize_t a, b, start_b
    cdef long long sa, ea, sb, eb
    for a in range(n_a):
        sa = a_indptr[a]
        ea = a_indptr[a + 1]
        start_b = a if symmetric else 0
        for b in range(start_b, n_b):
            sb = b_indptr[b]
            eb = b_indptr[b + 1]
            if ea == sa or eb == sb:
                out[a, b] = 0.0
            else:
                out[a, b] = _sorted_dot(&a_keys[sa], &a_vals[sa], ea - sa,
                                        &b_keys[sb], &b_vals[sb], eb - sb)
            if symmetric:
                out[b, a] = out[a, b]


def spectrum_gram(*, a_keys, a_vals, a_indptr, b_keys, b_vals, b_indptr, bint symmetric):
    """Gram matrix of sparse k-gram count vectors given as sorted key runs.

    ``*_keys`` int64 (sorted inside each run), ``*_vals`` float64 of the same
    length, ``*_indptr`` int64 run boundaries (n + 1 entries).  With
    ``symmetric`` the B side must be the A side and only the upper triangle
    is computed.
    """
    cdef const long long[::1] ak = np.ascontiguousarray(a_keys, dtype=np.int64)
    cdef const double[::1] av = np.ascontiguousarray(a_vals, dtype=np.float64)
    cdef const long long[::1] ap = np.ascontiguousarray(a_indptr, dtype=np.int64)
    cdef const long long[::1] bk = np.ascontiguousarray(b_keys, dtype=np.int64)
    cdef const double[::1] bv = np.ascontiguousarray(b_vals, dtype=np.float64)
    cdef const long long[::1] bp = np.ascontiguousarray(b_indptr, dtype=np.int64)
    if ak.shape[0] != av.shape[0] or bk.shape[0] != bv.shape[0]:
        raise ValueError("keys and values must have the same length")
    if ap.shape[0] < 1 or bp.shape[0] < 1:
        raise ValueError("indptr must have at least one entry")
    if ap[ap.shape[0] - 1] != ak.shape[0] or bp[bp.shape[0] - 1] != bk.shape[0]:
        raise ValueError("indptr must end at the number of keys")
    if symmetric and ap.shape[0] != bp.shape[0]:
        raise ValueError("a symmetric Gram matrix needs the same sequences on both sides")
    out_arr = np.zeros((ap.shape[0] - 1, bp.shape[0] - 1), dtype=np.float64)
    cdef double[:, ::1] out = out_arr
    with nogil:
        _spectrum_block(ak, av, ap, bk, bv, bp, symmetric, out)
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
    cdef const int* empty = NULL
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
