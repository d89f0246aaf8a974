"""L-BFGS two-loop recursion with fused passes over float32 history.

With a million parameters an L-BFGS iteration is bound by memory traffic, not
arithmetic: the classic two-loop recursion (Nocedal 1980; Nocedal & Wright
2006, Algorithm 7.4) reads 2m history vectors twice and the work vector 4m
times.  Here each update of the work vector q also computes the dot product
the next step needs, so the recursion makes 2k + 1 passes (k pairs stored),
each reading q and two history vectors; and the pairs (s, y) are stored in
float32, which halves their traffic (the inverse-Hessian approximation stays
positive definite because rho = 1 / (s.y) is computed from the stored,
rounded values; only the search direction is affected by the rounding, and
the line search keeps every step a descent step).

The caller (linclass.linear._lbfgs) validates every array.
"""
import numpy as np


cdef void store_pair(const double* x_new, const double* x, const double* g_new,
                     const double* g, float* s, float* y, Py_ssize_t n,
                     double* sy, double* yy) noexcept nogil:
    cdef Py_ssize_t j
    cdef float a, b
    cdef double acc_sy = 0.0, acc_yy = 0.0
    for j in range(n):
        a = <float>(x_new[j] - x[j])
        b = <float>(g_new[j] - g[j])
        s[j] = a
        y[j] = b
        acc_sy += <double>a * <double>b
        acc_yy += <double>b * <double>b
    sy[0] = acc_sy
    yy[0] = acc_yy


cdef void two_loop(const double* g, const float* S, const float* Y, const double* rho,
                   const int* slots, Py_ssize_t k, Py_ssize_t n, double gamma,
                   double* q, double* alpha) noexcept nogil:
    """q = -H g, H the L-BFGS inverse Hessian of the k pairs in rows slots[0..k-1]
    of S and Y (newest first), with initial matrix gamma * I."""
    cdef Py_ssize_t j, i
    cdef const float* s
    cdef const float* yv
    cdef const float* s_next
    cdef const float* y_next
    cdef double t, a, coef
    if k == 0:
        for j in range(n):
            q[j] = -gamma * g[j]
        return
    # q = -g and the first dot s_0 . q
    s = S + slots[0] * n
    t = 0.0
    for j in range(n):
        q[j] = -g[j]
        t += s[j] * q[j]
    alpha[0] = rho[slots[0]] * t
    # first loop, newest to oldest: q -= alpha_i y_i, with s_{i+1} . q on the fly
    for i in range(k - 1):
        yv = Y + slots[i] * n
        s_next = S + slots[i + 1] * n
        a = alpha[i]
        t = 0.0
        for j in range(n):
            q[j] -= a * yv[j]
            t += s_next[j] * q[j]
        alpha[i + 1] = rho[slots[i + 1]] * t
    # last update of the first loop, times gamma, and y_oldest . q for the second loop
    yv = Y + slots[k - 1] * n
    a = alpha[k - 1]
    t = 0.0
    for j in range(n):
        q[j] = gamma * (q[j] - a * yv[j])
        t += yv[j] * q[j]
    # second loop, oldest to newest: q += (alpha_i - beta_i) s_i, with y_{i-1} . q on the fly
    i = k - 1
    while i >= 0:
        s = S + slots[i] * n
        coef = alpha[i] - rho[slots[i]] * t
        t = 0.0
        if i > 0:
            y_next = Y + slots[i - 1] * n
            for j in range(n):
                q[j] += coef * s[j]
                t += y_next[j] * q[j]
        else:
            for j in range(n):
                q[j] += coef * s[j]
        i -= 1


def lbfgs_store_pair(const double[::1] x_new, const double[::1] x, const double[::1] g_new,
                     const double[::1] g, float[:, ::1] S, float[:, ::1] Y, Py_ssize_t slot):
    """Row ``slot`` of S and Y := float32(x_new - x), float32(g_new - g);
    returns (s.y, y.y) of the stored values."""
    cdef Py_ssize_t n = x.shape[0]
    if x_new.shape[0] != n or g.shape[0] != n or g_new.shape[0] != n or S.shape[1] != n \
            or Y.shape[1] != n or S.shape[0] != Y.shape[0] or not 0 <= slot < S.shape[0] \
            or n < 1:
        raise ValueError("lbfgs_store_pair: inconsistent shapes")
    cdef double sy = 0.0, yy = 0.0
    with nogil:
        store_pair(&x_new[0], &x[0], &g_new[0], &g[0], &S[slot, 0], &Y[slot, 0], n, &sy, &yy)
    return sy, yy


def lbfgs_direction(const double[::1] g, const float[:, ::1] S, const float[:, ::1] Y,
                    const double[::1] rho, const int[::1] slots, double gamma,
                    double[::1] out):
    """``out = -H g`` for the pairs in rows ``slots`` (newest first) of S and Y."""
    cdef Py_ssize_t n = g.shape[0], k = slots.shape[0], i
    if out.shape[0] != n or S.shape[1] != n or Y.shape[1] != n or S.shape[0] != Y.shape[0] \
            or rho.shape[0] != S.shape[0] or k > S.shape[0] or n < 1:
        raise ValueError("lbfgs_direction: inconsistent shapes")
    for i in range(k):
        if not 0 <= slots[i] < S.shape[0]:
            raise ValueError("lbfgs_direction: slot out of range")
    alpha = np.zeros(max(k, 1))
    cdef double[::1] alpha_view = alpha
    with nogil:
        two_loop(&g[0], &S[0, 0], &Y[0, 0], &rho[0], &slots[0] if k else NULL, k, n, gamma,
                 &out[0], &alpha_view[0])
    return out
