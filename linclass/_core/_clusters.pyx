"""Word clusters by the exchange algorithm on class bigrams.

The model (Brown et al. 1992; Kneser & Ney 1993; Martin, Liermann & Ney 1998):
every word ``w`` belongs to one class ``k(w)`` and a word stream is scored as
``prod_i p(k(w_i) | k(w_{i-1})) p(w_i | k(w_i))``.  On a *circular* stream
(the last token is followed by the first) the left and right marginals of the
class-bigram counts ``M`` equal the class counts ``N``, and the log-likelihood
is, up to a constant that does not depend on the classes,

    L = sum_{a,b} f(M[a, b]) - 2 sum_a f(N[a]),      f(x) = x log x.

One exchange step takes a word out of its class and puts it into the class
that maximises ``L`` (staying where it is on ties); a pass visits the words
in the order given.  Only the rows and columns of the source and target
classes change, so the gain of every candidate class costs
``O(#classes of the word's neighbours)``.

The caller (linclass.features.clusters) validates every array: no bounds
checks here.
"""
from libc.math cimport log
from libc.stdlib cimport calloc, free

import numpy as np


# f(x) = x log x is looked up in a table for counts below this size.
cdef enum:
    MAX_TABLE_SIZE = 1 << 20


cdef inline double xlogx(const double* table, long long table_size,
                         long long x) noexcept nogil:
    if x < table_size:
        return table[x]
    return <double>x * log(<double>x)


cdef struct Work:
    long long* R          # (C,) count(w, v) summed over right neighbours v != w by class
    long long* L          # (C,) count(v, w) summed over left neighbours v != w by class
    int* r_list           # (C,) the classes with R > 0 (nr of them)
    int* l_list           # (C,) the classes with L > 0 (nl of them)
    char* r_seen
    char* l_seen
    double* gains         # (C,) gain of putting the word into each class
    Py_ssize_t nr
    Py_ssize_t nl


cdef struct Problem:
    const long long* word_count          # (V,)
    const long long* self_count          # (V,) count of the bigram (w, w)
    const long long* r_indptr            # (V + 1,) right neighbours (w, v), v != w
    const int* r_indices
    const long long* r_data
    const long long* l_indptr            # (V + 1,) left neighbours (v, w), v != w
    const int* l_indices
    const long long* l_data
    int* cls                             # (V,) class of each word
    long long* M                         # (C, C) class bigram counts
    long long* N                         # (C,) class counts
    Py_ssize_t C
    const double* table                  # (table_size,) x log x
    long long table_size


cdef void take_out(Problem* p, Work* wk, int w) noexcept nogil:
    """Gather w's neighbour counts by class and remove w from its class."""
    cdef Py_ssize_t j, c, C = p.C
    cdef int a = p.cls[w]
    wk.nr = 0
    for j in range(p.r_indptr[w], p.r_indptr[w + 1]):
        c = p.cls[p.r_indices[j]]
        if not wk.r_seen[c]:
            wk.r_seen[c] = 1
            wk.r_list[wk.nr] = <int>c
            wk.nr += 1
        wk.R[c] += p.r_data[j]
    wk.nl = 0
    for j in range(p.l_indptr[w], p.l_indptr[w + 1]):
        c = p.cls[p.l_indices[j]]
        if not wk.l_seen[c]:
            wk.l_seen[c] = 1
            wk.l_list[wk.nl] = <int>c
            wk.nl += 1
        wk.L[c] += p.l_data[j]
    for j in range(wk.nr):
        c = wk.r_list[j]
        p.M[a * C + c] -= wk.R[c]
    for j in range(wk.nl):
        c = wk.l_list[j]
        p.M[c * C + a] -= wk.L[c]
    p.M[a * C + a] -= p.self_count[w]
    p.N[a] -= p.word_count[w]


cdef void all_gains(Problem* p, Work* wk, int w) noexcept nogil:
    """gains[b] = L(w in b) - L(w removed), for every class b (after take_out)."""
    cdef Py_ssize_t j, b, c, C = p.C
    cdef long long m, x, s = p.self_count[w], n_w = p.word_count[w]
    cdef double gain
    cdef const double* t = p.table
    cdef long long ts = p.table_size
    for b in range(C):
        gain = 0.0
        for j in range(wk.nr):
            c = wk.r_list[j]
            if c != b:
                m = p.M[b * C + c]
                gain += xlogx(t, ts, m + wk.R[c]) - xlogx(t, ts, m)
        for j in range(wk.nl):
            c = wk.l_list[j]
            if c != b:
                m = p.M[c * C + b]
                gain += xlogx(t, ts, m + wk.L[c]) - xlogx(t, ts, m)
        x = wk.R[b] + wk.L[b] + s
        if x != 0:
            m = p.M[b * C + b]
            gain += xlogx(t, ts, m + x) - xlogx(t, ts, m)
        gain -= 2.0 * (xlogx(t, ts, p.N[b] + n_w) - xlogx(t, ts, p.N[b]))
        wk.gains[b] = gain


cdef void put_in(Problem* p, Work* wk, int w, int b) noexcept nogil:
    """Put w (taken out) into class b and clear the work arrays."""
    cdef Py_ssize_t j, c, C = p.C
    for j in range(wk.nr):
        c = wk.r_list[j]
        p.M[b * C + c] += wk.R[c]
        wk.R[c] = 0
        wk.r_seen[c] = 0
    for j in range(wk.nl):
        c = wk.l_list[j]
        p.M[c * C + b] += wk.L[c]
        wk.L[c] = 0
        wk.l_seen[c] = 0
    p.M[b * C + b] += p.self_count[w]
    p.N[b] += p.word_count[w]
    p.cls[w] = b


cdef Py_ssize_t exchange_pass(Problem* p, Work* wk, const int* order, Py_ssize_t n_order,
                              double tol) noexcept nogil:
    """One exchange pass; returns the number of words that changed class.

    A word moves only when the best class gains more than ``tol`` over its
    own class (so rounding noise cannot make a pass cycle).
    """
    cdef Py_ssize_t i, b, moves = 0
    cdef int w, a, best
    cdef double best_gain
    for i in range(n_order):
        w = order[i]
        a = p.cls[w]
        take_out(p, wk, w)
        all_gains(p, wk, w)
        best = a
        best_gain = wk.gains[a] + tol
        for b in range(p.C):
            if wk.gains[b] > best_gain:
                best_gain = wk.gains[b]
                best = <int>b
        put_in(p, wk, w, best)
        if best != a:
            moves += 1
    return moves


cdef class _State:
    """The problem and work arrays of one exchange run (owns the C buffers)."""
    cdef Problem p
    cdef Work wk
    cdef double* table
    cdef object keep        # the memoryviews the Problem points into

    def __cinit__(self):
        self.table = NULL
        self.wk.R = NULL
        self.wk.L = NULL
        self.wk.r_list = NULL
        self.wk.l_list = NULL
        self.wk.r_seen = NULL
        self.wk.l_seen = NULL
        self.wk.gains = NULL

    def __dealloc__(self):
        free(self.table)
        free(self.wk.R)
        free(self.wk.L)
        free(self.wk.r_list)
        free(self.wk.l_list)
        free(self.wk.r_seen)
        free(self.wk.l_seen)
        free(self.wk.gains)


def _check_problem(word_count, self_count, r_indptr, r_indices, r_data, l_indptr, l_indices,
                   l_data, cls, M, N):
    """Shapes and index ranges of an exchange problem (the kernels index
    without checks); raises ValueError naming the array."""
    V, C = word_count.shape[0], N.shape[0]
    if C < 1 or M.shape[0] != C or M.shape[1] != C:
        raise ValueError("M must be (C, C) with C = len(N) >= 1, got %r and C=%d"
                         % (tuple(M.shape), C))
    if self_count.shape[0] != V or cls.shape[0] != V:
        raise ValueError("self_count and cls must have length V=%d" % V)
    a_cls = np.asarray(cls)
    if V and (a_cls.min() < 0 or a_cls.max() >= C):
        raise ValueError("cls must hold classes in [0, %d)" % C)
    for name, ptr, idx, dat in (("r", r_indptr, r_indices, r_data),
                                ("l", l_indptr, l_indices, l_data)):
        p, i = np.asarray(ptr), np.asarray(idx)
        if p.shape[0] != V + 1 or p[0] != 0 or np.any(np.diff(p) < 0) \
                or p[V] != i.shape[0] or dat.shape[0] != i.shape[0]:
            raise ValueError("%s_indptr/%s_indices/%s_data are not a CSR of %d rows"
                             % (name, name, name, V))
        if i.shape[0] and (i.min() < 0 or i.max() >= V):
            raise ValueError("%s_indices must hold word ids in [0, %d)" % (name, V))
    return V, C


cdef _State make_state(const long long[::1] word_count, const long long[::1] self_count,
                       const long long[::1] r_indptr, const int[::1] r_indices,
                       const long long[::1] r_data,
                       const long long[::1] l_indptr, const int[::1] l_indices,
                       const long long[::1] l_data,
                       int[::1] cls, long long[:, ::1] M, long long[::1] N):
    cdef _State st = _State()
    cdef Py_ssize_t C = N.shape[0], x, n_total = 0
    for x in range(C):
        n_total += N[x]
    cdef Py_ssize_t table_size = min(<Py_ssize_t>MAX_TABLE_SIZE, n_total + 1)
    st.keep = (word_count, self_count, r_indptr, r_indices, r_data, l_indptr, l_indices,
               l_data, cls, M, N)
    st.table = <double*>calloc(table_size, sizeof(double))
    st.wk.R = <long long*>calloc(C, sizeof(long long))
    st.wk.L = <long long*>calloc(C, sizeof(long long))
    st.wk.r_list = <int*>calloc(C, sizeof(int))
    st.wk.l_list = <int*>calloc(C, sizeof(int))
    st.wk.r_seen = <char*>calloc(C, sizeof(char))
    st.wk.l_seen = <char*>calloc(C, sizeof(char))
    st.wk.gains = <double*>calloc(C, sizeof(double))
    if (st.table == NULL or st.wk.R == NULL or st.wk.L == NULL or st.wk.r_list == NULL
            or st.wk.l_list == NULL or st.wk.r_seen == NULL or st.wk.l_seen == NULL
            or st.wk.gains == NULL):
        raise MemoryError("exchange: cannot allocate work arrays")
    with nogil:
        for x in range(1, table_size):
            st.table[x] = <double>x * log(<double>x)
    st.p.word_count = &word_count[0]
    st.p.self_count = &self_count[0]
    st.p.r_indptr = &r_indptr[0]
    st.p.r_indices = &r_indices[0] if r_indices.shape[0] else NULL
    st.p.r_data = &r_data[0] if r_data.shape[0] else NULL
    st.p.l_indptr = &l_indptr[0]
    st.p.l_indices = &l_indices[0] if l_indices.shape[0] else NULL
    st.p.l_data = &l_data[0] if l_data.shape[0] else NULL
    st.p.cls = &cls[0]
    st.p.M = &M[0, 0]
    st.p.N = &N[0]
    st.p.C = C
    st.p.table = st.table
    st.p.table_size = table_size
    return st


def exchange_passes(*, const long long[::1] word_count, const long long[::1] self_count,
                    const long long[::1] r_indptr, const int[::1] r_indices,
                    const long long[::1] r_data,
                    const long long[::1] l_indptr, const int[::1] l_indices,
                    const long long[::1] l_data,
                    const int[::1] order, int[::1] cls, long long[:, ::1] M,
                    long long[::1] N, int max_iter, double tol=1e-4):
    """Run up to ``max_iter`` exchange passes over the words ``order`` (in place).

    ``cls`` (V,), ``M`` (C, C) (class bigram counts of the circular stream)
    and ``N`` (C,) (class counts) are updated.  Neighbour lists are CSR rows
    per word, without the self bigram (``self_count``).  Returns the list of
    moves per pass; stops after the first pass without a move.  The caller
    guarantees ``0 <= cls < C``, neighbour indices and ``order`` in
    ``[0, V)``, and ``M``/``N`` consistent with ``cls`` (shapes and index
    ranges are checked here; the consistency of the counts is not).
    """
    cdef Py_ssize_t n_order = order.shape[0], moves
    cdef int k
    V, C = _check_problem(word_count, self_count, r_indptr, r_indices, r_data, l_indptr,
                          l_indices, l_data, cls, M, N)
    if V == 0 or n_order == 0:
        return []
    if np.asarray(order).min() < 0 or np.asarray(order).max() >= V:
        raise ValueError("order must hold word ids in [0, %d)" % V)
    cdef _State st = make_state(word_count, self_count, r_indptr, r_indices, r_data,
                                l_indptr, l_indices, l_data, cls, M, N)
    history = []
    for k in range(max_iter):
        with nogil:
            moves = exchange_pass(&st.p, &st.wk, &order[0], n_order, tol)
        history.append(int(moves))
        if moves == 0:
            break
    return history


def move_gains(*, const long long[::1] word_count, const long long[::1] self_count,
               const long long[::1] r_indptr, const int[::1] r_indices,
               const long long[::1] r_data,
               const long long[::1] l_indptr, const int[::1] l_indices,
               const long long[::1] l_data,
               int[::1] cls, long long[:, ::1] M, long long[::1] N, int word):
    """The gain in ``L`` of moving ``word`` into each class, relative to its
    removal (test shim of the kernel; ``cls``, ``M`` and ``N`` are left as
    they were).  Same contract as :func:`exchange_passes`."""
    V, C = _check_problem(word_count, self_count, r_indptr, r_indices, r_data, l_indptr,
                          l_indices, l_data, cls, M, N)
    if not 0 <= word < V:
        raise ValueError("word must be in [0, %d), got %d" % (V, word))
    cdef _State st = make_state(word_count, self_count, r_indptr, r_indices, r_data,
                                l_indptr, l_indices, l_data, cls, M, N)
    cdef Py_ssize_t b
    cdef int a = cls[word]
    gains = np.empty(C, dtype=np.float64)
    cdef double[::1] g = gains
    take_out(&st.p, &st.wk, word)
    all_gains(&st.p, &st.wk, word)
    for b in range(C):
        g[b] = st.wk.gains[b]
    put_in(&st.p, &st.wk, word, a)
    return gains
