# Kernel values on demand and an LRU cache of kernel columns, shared by the SMO
# solver (_smo.pyx), the kernel perceptron (_kernel_perceptron.pyx) and the
# pairwise kernel blocks (_kernels.pyx).
#
# A kernel reads the rows of ONE data matrix (dense or CSR, see _rows.pxd) by
# row index, so a binary sub-problem of a multi-class fit is just a list of row
# indices: nothing is copied.  Squared row norms are computed once (RBF).  For
# a CSR row i the row is scattered into a dense work vector of n_cols zeros and
# every other row j is dotted with it in O(nnz_j) (what LIBSVM's sparse dot does
# by merging, without the branch per entry).
#
# The cache follows the design of LIBSVM's Cache class (Chang & Lin, 2011,
# Section 5.1): column `index` holds data[0:len) (a prefix, because a shrunk
# problem only needs the active positions), least recently used columns are
# freed when the budget (counted in floats) runs out, and swapping two
# positions keeps every cached prefix consistent.

from libc.math cimport exp, tanh
from libc.stdlib cimport free, realloc

from ._rows cimport Rows, rows_get, row_dot

cdef enum:
    KERNEL_LINEAR = 0
    KERNEL_POLY = 1
    KERNEL_RBF = 2
    KERNEL_SIGMOID = 3
    KERNEL_PRECOMPUTED = 4


cdef struct Kernel:
    int kind
    double gamma
    double coef0
    int degree
    Rows X                   # the data rows (for precomputed: the Gram matrix)
    const double* sq_norms   # (X.n_rows,) squared row norms (RBF), else may be NULL
    double* dense_buf        # (X.n_cols,) zeros between calls (CSR scatter), else NULL


cdef inline double powi(double base, int times) noexcept nogil:
    """base ** times for an integer times >= 0 (square and multiply)"""
    cdef double result = 1.0
    while times > 0:
        if times & 1:
            result *= base
        base *= base
        times >>= 1
    return result


cdef inline double kernel_transform(const Kernel* k, double dot, double sq_i,
                                    double sq_j) noexcept nogil:
    """k(x, x') from the dot product x . x' (and squared norms for RBF)"""
    cdef double d2
    if k.kind == KERNEL_LINEAR:
        return dot
    if k.kind == KERNEL_POLY:
        return powi(k.gamma * dot + k.coef0, k.degree)   # (gamma x.x' + c) ** d
    if k.kind == KERNEL_RBF:
        d2 = sq_i + sq_j - 2.0 * dot                      # ||x - x'||^2
        if d2 < 0.0:
            d2 = 0.0
        return exp(-k.gamma * d2)
    return tanh(k.gamma * dot + k.coef0)


cdef inline void kernel_fill(const Kernel* k, Py_ssize_t row_i, const int* rows,
                             Py_ssize_t count, double* out) noexcept nogil:
    """out[t] = k(X[row_i], X[rows[t]]) for t < count"""
    cdef const double* vi
    cdef const int* ii
    cdef const double* vj
    cdef const int* ij
    cdef Py_ssize_t nnz_i, nnz_j, t, m
    cdef double sq_i = 0.0, dot
    if k.kind == KERNEL_PRECOMPUTED:
        for t in range(count):
            out[t] = k.X.data[row_i * k.X.n_cols + rows[t]]   # G[row_i, rows]
        return
    nnz_i = rows_get(&k.X, row_i, &vi, &ii)
    if k.sq_norms != NULL:
        sq_i = k.sq_norms[row_i]
    if ii != NULL:
        for m in range(nnz_i):                 # dense_buf[x_i.indices] = x_i.data
            k.dense_buf[ii[m]] = vi[m]
        for t in range(count):
            nnz_j = rows_get(&k.X, rows[t], &vj, &ij)
            dot = row_dot(vj, ij, nnz_j, k.dense_buf)
            out[t] = kernel_transform(k, dot,
                                      sq_i, k.sq_norms[rows[t]] if k.sq_norms != NULL else 0.0)
        for m in range(nnz_i):                 # back to zeros
            k.dense_buf[ii[m]] = 0.0
    else:
        for t in range(count):
            nnz_j = rows_get(&k.X, rows[t], &vj, &ij)
            dot = row_dot(vj, NULL, nnz_j, vi)             # X[rows[t]] @ X[row_i]
            out[t] = kernel_transform(k, dot,
                                      sq_i, k.sq_norms[rows[t]] if k.sq_norms != NULL else 0.0)


cdef inline double kernel_diag(const Kernel* k, Py_ssize_t row_i) noexcept nogil:
    """k(x_i, x_i)"""
    cdef const double* vi
    cdef const int* ii
    cdef Py_ssize_t nnz_i, m
    cdef double sq
    if k.kind == KERNEL_PRECOMPUTED:
        return k.X.data[row_i * k.X.n_cols + row_i]
    nnz_i = rows_get(&k.X, row_i, &vi, &ii)
    sq = 0.0
    for m in range(nnz_i):
        sq += vi[m] * vi[m]
    return kernel_transform(k, sq, sq, sq)


# -- LRU column cache ----------------------------------------------------------

cdef struct CacheHead:
    CacheHead* prev
    CacheHead* next
    float* data              # data[0:len) cached
    int len


cdef struct Cache:
    int n                    # number of columns
    long long size           # free budget, in floats
    CacheHead* head          # (n,)
    CacheHead lru_head       # sentinel of the circular list (oldest after it)


cdef inline void cache_lru_delete(CacheHead* h) noexcept nogil:
    h.prev.next = h.next
    h.next.prev = h.prev


cdef inline void cache_lru_insert(Cache* c, CacheHead* h) noexcept nogil:
    h.next = &c.lru_head
    h.prev = c.lru_head.prev
    h.prev.next = h
    h.next.prev = h


cdef inline void cache_init(Cache* c, int n, CacheHead* heads, long long budget_bytes) noexcept nogil:
    """`heads` is caller-owned zeroed memory for n CacheHead; the budget pays for them too."""
    cdef long long size = budget_bytes // sizeof(float)
    size -= n * (<long long>sizeof(CacheHead)) // sizeof(float)
    if size < 2 * <long long>n:     # room for two full columns at least (one SMO step)
        size = 2 * <long long>n
    c.n = n
    c.size = size
    c.head = heads
    c.lru_head.next = &c.lru_head
    c.lru_head.prev = &c.lru_head


cdef inline void cache_free(Cache* c) noexcept nogil:
    cdef int i
    if c.head == NULL:
        return
    for i in range(c.n):
        free(c.head[i].data)
        c.head[i].data = NULL
        c.head[i].len = 0


cdef inline int cache_get_data(Cache* c, int index, float** data, int length) noexcept nogil:
    """Point data at column `index` holding at least [0, length); return the first
    position the caller must fill (>= length: nothing), -1 when out of memory."""
    cdef CacheHead* h = &c.head[index]
    cdef CacheHead* old
    cdef int more, tmp
    cdef float* new_data
    if h.len:
        cache_lru_delete(h)
    more = length - h.len
    if more > 0:
        while c.size < more:                    # free least recently used columns
            old = c.lru_head.next
            cache_lru_delete(old)
            free(old.data)
            c.size += old.len
            old.data = NULL
            old.len = 0
        new_data = <float*>realloc(h.data, sizeof(float) * length)
        if new_data == NULL:
            if h.len:
                cache_lru_insert(c, h)
            data[0] = NULL
            return -1
        h.data = new_data
        c.size -= more
        tmp = h.len
        h.len = length
        length = tmp
    cache_lru_insert(c, h)
    data[0] = h.data
    return length


cdef inline void cache_swap_index(Cache* c, int i, int j) noexcept nogil:
    """Positions i and j trade places in every cached column."""
    cdef CacheHead* h
    cdef CacheHead* nxt
    cdef float* tmp_data
    cdef int tmp_len
    cdef float tmp_value
    if i == j:
        return
    if c.head[i].len:
        cache_lru_delete(&c.head[i])
    if c.head[j].len:
        cache_lru_delete(&c.head[j])
    tmp_data = c.head[i].data
    c.head[i].data = c.head[j].data
    c.head[j].data = tmp_data
    tmp_len = c.head[i].len
    c.head[i].len = c.head[j].len
    c.head[j].len = tmp_len
    if c.head[i].len:
        cache_lru_insert(c, &c.head[i])
    if c.head[j].len:
        cache_lru_insert(c, &c.head[j])
    if i > j:
        tmp_len = i
        i = j
        j = tmp_len
    h = c.lru_head.next
    while h != &c.lru_head:
        nxt = h.next
        if h.len > i:
            if h.len > j:
                tmp_value = h.data[i]
                h.data[i] = h.data[j]
                h.data[j] = tmp_value
            else:                               # the column covers i but not j: drop it
                cache_lru_delete(h)
                free(h.data)
                c.size += h.len
                h.data = NULL
                h.len = 0
        h = nxt
