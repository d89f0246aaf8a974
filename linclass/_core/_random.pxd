# A tiny seeded PRNG for nogil loops: xorshift64* seeded through splitmix64.
# (Vigna, "An experimental exploration of Marsaglia's xorshift generators",
# 2016.)  The seed is drawn from the estimator's `random_state` in Python, so a
# fit is reproducible and independent of numpy's global state.

from libc.stdint cimport uint32_t, uint64_t


cdef struct Rng:
    uint64_t state


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += <uint64_t>0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    r.state = splitmix64(seed)
    if r.state == 0:            # xorshift must not start at 0
        r.state = <uint64_t>0x2545F4914F6CDD1DULL


cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    cdef uint64_t x = r.state
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    r.state = x
    return x * <uint64_t>0x2545F4914F6CDD1DULL


cdef inline double rng_uniform(Rng* r) noexcept nogil:
    """Uniform on [0, 1) with 53 random bits."""
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)


cdef inline Py_ssize_t rng_below(Rng* r, Py_ssize_t n) noexcept nogil:
    """Uniform integer in [0, n) without modulo bias (n >= 1)."""
    cdef uint64_t bound = <uint64_t>n
    cdef uint64_t limit = (<uint64_t>0xFFFFFFFFFFFFFFFFULL) - ((<uint64_t>0xFFFFFFFFFFFFFFFFULL) % bound)
    cdef uint64_t x = rng_next(r)
    while x >= limit:
        x = rng_next(r)
    return <Py_ssize_t>(x % bound)


cdef inline void rng_shuffle(Rng* r, int* a, Py_ssize_t n) noexcept nogil:
    """Fisher-Yates shuffle of a[0:n] in place."""
    cdef Py_ssize_t i, j
    cdef int tmp
    i = n - 1
    while i > 0:
        j = rng_below(r, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp
        i -= 1


cdef inline uint32_t rng_below32(Rng* r, uint32_t n) noexcept nogil:
    """Uniform integer in [0, n), n >= 1, by Lemire's multiply-shift with
    rejection (ACM TOMACS 2019, "Fast random integer generation in an
    interval"): exact like `rng_below` but with a division only in the rare
    rejection branch (`rng_below` pays two 64-bit divisions per draw)."""
    cdef uint32_t x = <uint32_t>(rng_next(r) >> 32)
    cdef uint64_t m = <uint64_t>x * <uint64_t>n
    cdef uint32_t low = <uint32_t>m, threshold
    if low < n:
        threshold = (<uint32_t>(0 - n)) % n
        while low < threshold:
            x = <uint32_t>(rng_next(r) >> 32)
            m = <uint64_t>x * <uint64_t>n
            low = <uint32_t>m
    return <uint32_t>(m >> 32)


cdef inline void rng_shuffle32(Rng* r, int* a, Py_ssize_t n) noexcept nogil:
    """Fisher-Yates shuffle of a[0:n] (n < 2^31) with `rng_below32` (a different
    permutation from `rng_shuffle` for the same state)."""
    cdef Py_ssize_t i = n - 1, j
    cdef int tmp
    while i > 0:
        j = rng_below32(r, <uint32_t>(i + 1))
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp
        i -= 1
