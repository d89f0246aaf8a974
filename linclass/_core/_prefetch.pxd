# Software prefetch of weight rows for kernels that walk sparse rows.
#
# A CSR row's stored entries address rows of a weight matrix W (n_features, K)
# at random places; when W is larger than the caches every entry waits for
# memory, and the hardware prefetcher cannot predict those addresses.  Asking
# for the row PREFETCH_AHEAD entries ahead hides most of that latency.
# (GCC/Clang's __builtin_prefetch; a no-op on other compilers.)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #else
    #define LINCLASS_PREFETCH(p) ((void)0)
    #endif
    """
    void LINCLASS_PREFETCH(const void* p) noexcept nogil


cdef enum:
    PREFETCH_AHEAD = 8


cdef inline void prefetch_row(const double* wrow, Py_ssize_t K) noexcept nogil:
    """Ask for the cache lines holding ``wrow[0:K]``."""
    cdef Py_ssize_t off = 0
    while off < K:
        LINCLASS_PREFETCH(wrow + off)
        off += 8                                   # 8 doubles = one 64-byte line
    LINCLASS_PREFETCH(wrow + K - 1)
