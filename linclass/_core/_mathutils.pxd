# Numerically careful scalar helpers.

from libc.math cimport exp, log, log1p, INFINITY


cdef inline double logsumexp(const double* a, Py_ssize_t n) noexcept nogil:
    """log(sum(exp(a[0:n]))) without overflow; -inf for n == 0 or all -inf."""
    cdef Py_ssize_t k
    cdef double m = -INFINITY, s = 0.0
    for k in range(n):
        if a[k] > m:
            m = a[k]
    if m == -INFINITY or m == INFINITY:
        return m
    for k in range(n):
        s += exp(a[k] - m)
    return m + log(s)


cdef inline double logaddexp(double a, double b) noexcept nogil:
    """log(exp(a) + exp(b))"""
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))
