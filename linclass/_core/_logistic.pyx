"""Logistic regression kernels: loss, gradient and Hessian-vector products in one
pass over the rows of a dense or CSR matrix.

Binary model (labels y_i in {-1, +1}, sample weights s_i):
    z_i   = x_i @ w + b
    loss  = sum_i s_i * log(1 + exp(-y_i z_i))
    grad  = X.T @ (s * (sigma(y z) - 1) * y)        (and its sum for b)
    D_i   = s_i * sigma(z_i) * (1 - sigma(z_i))     (the Hessian is X.T @ diag(D) @ X)

Multinomial model (K classes, W of shape (n_features, K), b of shape (K,)):
    Z     = X @ W + b
    loss  = sum_i s_i * (logsumexp(Z_i) - Z_i[y_i])
    grad  = X.T @ (s[:, None] * (softmax(Z) - onehot(y)))

The prior (penalty) is added by the caller (linclass.logistic), which also
validates every array: no bounds checks happen here.

References: Lin, Weng & Keerthi (2008), "Trust region Newton method for large-scale
logistic regression", JMLR 9; Malouf (2002), "A comparison of algorithms for
maximum entropy parameter estimation", CoNLL.
"""
from libc.math cimport exp, fabs
from libc.stdlib cimport malloc, free

import numpy as np

from linclass._core._debug cimport LINCLASS_DEBUG_CHECKS
from linclass._core._rows cimport (Rows, rows_get, row_dot, row_axpy, row_axpy_unit,
                                   row_dot_split, row_dot_split_unit, rows_unit_values)
from linclass._core._mathutils cimport logsumexp
from linclass._core._prefetch cimport PREFETCH_AHEAD, prefetch_row

cdef extern from "_logistic_simd.h" nogil:
    void lc_logistic_terms(Py_ssize_t n, const double* t, const double* sw, const double* y,
                           double* loss, double* coef, double* D)
    int lc_logistic_level()
    int lc_logistic_set_level(int level)


# ---------------------------------------------------------------- kernels --

cdef inline double binary_row_dot(const double* values, const int* indices, Py_ssize_t nnz,
                                  const double* w, bint unit) noexcept nogil:
    """x_i @ w in four partial sums (`row_dot_split`: a row's products add up in
    parallel, not in one chain of dependent additions); ``unit``: a CSR row whose
    stored values are all 1.0, read by its indices alone (the same bits)."""
    if unit:
        return row_dot_split_unit(indices, nnz, w)
    return row_dot_split(values, indices, nnz, w)


cdef inline void binary_row_axpy(double alpha, const double* values, const int* indices,
                                 Py_ssize_t nnz, double* w, bint unit) noexcept nogil:
    """w += alpha * x_i (``unit`` as in `binary_row_dot`)."""
    if unit:
        row_axpy_unit(alpha, indices, nnz, w)
    else:
        row_axpy(alpha, values, indices, nnz, w)


cdef enum:
    BLOCK_ROWS = 256        # rows per block of binary_pass (its buffers: 6 KB of stack)


cdef double binary_pass(const Rows* X, const double* y, const double* sw,
                        const double* w, double b, int fit_intercept,
                        double* grad, double* D, bint unit) noexcept nogil:
    """Loss; grad[0:n_cols] (+ grad[n_cols] for b) and D (n_rows,) overwritten.
    ``unit``: X is CSR with every stored value 1.0 (`rows_unit_values`).

    Block by block of BLOCK_ROWS rows: the margins y_i z_i, then their loss terms,
    gradient coefficients and curvatures in one vectorised loop
    (`lc_logistic_terms`, _logistic_simd.h), then grad += coef_i x_i row by row
    (the block's rows are still in cache).  The loss adds in row order."""
    cdef Py_ssize_t i, start, m, nnz
    cdef const double* values
    cdef const int* indices
    cdef double loss = 0.0, c
    cdef double t[BLOCK_ROWS]
    cdef double lterm[BLOCK_ROWS]
    cdef double coef[BLOCK_ROWS]
    cdef Py_ssize_t n_grad = X.n_cols + (1 if fit_intercept else 0)
    for i in range(n_grad):
        grad[i] = 0.0
    start = 0
    while start < X.n_rows:
        m = min(<Py_ssize_t>BLOCK_ROWS, X.n_rows - start)
        for i in range(m):
            nnz = rows_get(X, start + i, &values, &indices)
            t[i] = y[start + i] * (binary_row_dot(values, indices, nnz, w, unit) + b)
        lc_logistic_terms(m, t, sw + start, y + start, lterm, coef, D + start)
        for i in range(m):
            loss += lterm[i]
            c = coef[i]
            if c != 0.0:
                nnz = rows_get(X, start + i, &values, &indices)
                binary_row_axpy(c, values, indices, nnz, grad, unit)   # grad += c * X[i]
                if fit_intercept:
                    grad[X.n_cols] += c
        start += m
    return loss


cdef void binary_hessp(const Rows* X, const double* D, const double* v,
                       int fit_intercept, double* out, bint unit) noexcept nogil:
    """out = X.T @ (D * (X @ v))  (the intercept as a column of ones)"""
    cdef Py_ssize_t i, j, nnz
    cdef const double* values
    cdef const int* indices
    cdef double t
    cdef double vb = v[X.n_cols] if fit_intercept else 0.0
    cdef Py_ssize_t n_out = X.n_cols + (1 if fit_intercept else 0)
    for j in range(n_out):
        out[j] = 0.0
    for i in range(X.n_rows):
        if D[i] == 0.0:
            continue
        nnz = rows_get(X, i, &values, &indices)
        t = D[i] * (binary_row_dot(values, indices, nnz, v, unit) + vb)   # D_i * (X[i] @ v)
        binary_row_axpy(t, values, indices, nnz, out, unit)               # out += t * X[i]
        if fit_intercept:
            out[X.n_cols] += t


cdef void binary_hessian_pass(const Rows* X, const double* D, int fit_intercept,
                              double* H, Py_ssize_t p) noexcept nogil:
    """Upper triangle of H (p x p, row-major, overwritten) = X.T @ diag(D) @ X, the
    intercept as a last column of ones.  Each row adds D_i x_i x_i^T over the pairs
    of its stored entries (entry (j, l) goes to H[min(j, l), max(j, l)]; repeated
    column indices in a row are counted as their sum would be)."""
    cdef Py_ssize_t i, a, c, nnz, ja, jc, col
    cdef const double* values
    cdef const int* indices
    cdef double d, t
    cdef Py_ssize_t n_cols = X.n_cols
    for a in range(p * p):
        H[a] = 0.0
    for i in range(X.n_rows):
        d = D[i]
        if d == 0.0:
            continue
        nnz = rows_get(X, i, &values, &indices)
        for a in range(nnz):
            ja = a if indices == NULL else indices[a]
            t = d * values[a]
            if t == 0.0:
                continue
            H[ja * p + ja] += t * values[a]
            for c in range(a + 1, nnz):
                jc = c if indices == NULL else indices[c]
                if ja < jc:
                    H[ja * p + jc] += t * values[c]
                elif jc < ja:
                    H[jc * p + ja] += t * values[c]
                else:                                      # repeated column: 2 v_a v_c
                    H[ja * p + ja] += 2.0 * t * values[c]
            if fit_intercept:
                H[ja * p + n_cols] += t
        if fit_intercept:
            col = n_cols
            H[col * p + col] += d


cdef double multinomial_pass(const Rows* X, const int* y, const double* sw,
                             const double* W, Py_ssize_t K, int fit_intercept,
                             double* grad, double* z) noexcept nogil:
    """Loss; grad (n_cols*K, + K for b) overwritten; z: K doubles of workspace.
    W and grad are (n_cols, K) row-major, the intercepts follow at n_cols*K."""
    cdef Py_ssize_t i, j, k, p, nnz
    cdef const double* values
    cdef const int* indices
    cdef const double* wrow
    cdef double* grow
    cdef double lse, v, loss = 0.0
    cdef const double* b = W + X.n_cols * K
    cdef double* gb = grad + X.n_cols * K
    cdef Py_ssize_t n_grad = X.n_cols * K + (K if fit_intercept else 0)
    for j in range(n_grad):
        grad[j] = 0.0
    for i in range(X.n_rows):
        nnz = rows_get(X, i, &values, &indices)
        for k in range(K):
            z[k] = b[k] if fit_intercept else 0.0
        if indices != NULL:
            for p in range(nnz if nnz < PREFETCH_AHEAD else PREFETCH_AHEAD):
                prefetch_row(W + indices[p] * K, K)
                prefetch_row(grad + indices[p] * K, K)
        for p in range(nnz):                               # z = X[i] @ W + b
            if indices != NULL and p + PREFETCH_AHEAD < nnz:
                prefetch_row(W + indices[p + PREFETCH_AHEAD] * K, K)
                prefetch_row(grad + indices[p + PREFETCH_AHEAD] * K, K)
            j = p if indices == NULL else indices[p]
            v = values[p]
            wrow = W + j * K
            for k in range(K):
                z[k] += v * wrow[k]
        lse = logsumexp(z, K)
        loss += sw[i] * (lse - z[y[i]])
        for k in range(K):                                 # z = s * (softmax(z) - onehot)
            z[k] = sw[i] * exp(z[k] - lse)
        z[y[i]] -= sw[i]
        for p in range(nnz):                               # grad += outer(X[i], z)
            j = p if indices == NULL else indices[p]
            v = values[p]
            grow = grad + j * K
            for k in range(K):
                grow[k] += v * z[k]
        if fit_intercept:
            for k in range(K):
                gb[k] += z[k]
    return loss


# ------------------------------------------------------------ def entries --

cdef Rows _rows(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                Py_ssize_t n_rows, Py_ssize_t n_cols, bint dense):
    cdef Rows X
    X.data = &data[0]
    X.indices = NULL if dense else &indices[0]
    X.indptr = NULL if dense else &indptr[0]
    X.n_rows = n_rows
    X.n_cols = n_cols
    return X


def simd_level(level=None):
    """The vector level of the binary loss terms (0 baseline C, 2 AVX2);
    ``level``: 0 forces the baseline, anything else the CPU's best (tests).
    Every level gives the same bits."""
    if level is not None:
        return lc_logistic_set_level(int(level))
    return lc_logistic_level()


def binary_terms(const double[::1] t, const double[::1] sample_weight, const double[::1] y):
    """(loss, coef, D) per row of the binary model from its margins t_i = y_i z_i:
    ``s_i log(1 + exp(-t_i))``, ``-s_i y_i sigmoid(-t_i)``, ``s_i sigmoid(t_i)
    sigmoid(-t_i)`` (`binary_pass`'s vectorised step; tests)."""
    cdef Py_ssize_t n = t.shape[0]
    if n < 1 or sample_weight.shape[0] != n or y.shape[0] != n:
        raise ValueError("t, sample_weight and y must have the same non-zero length")
    loss = np.empty(n)
    coef = np.empty(n)
    D = np.empty(n)
    cdef double[::1] lo = loss
    cdef double[::1] co = coef
    cdef double[::1] d = D
    with nogil:
        lc_logistic_terms(n, &t[0], &sample_weight[0], &y[0], &lo[0], &co[0], &d[0])
    return loss, coef, D


def _check_rows(data, indices, indptr, n_rows, n_cols, dense):
    if n_rows < 1 or n_cols < 1:
        raise ValueError("bad shape (%d, %d)" % (n_rows, n_cols))
    if data.shape[0] < 1 or indices.shape[0] < 1:
        raise ValueError("data and indices must hold at least one value (pad empty ones)")
    if dense:
        if data.shape[0] < n_rows * n_cols:
            raise ValueError("dense data too short for the shape")
    elif indptr.shape[0] != n_rows + 1:
        raise ValueError("indptr must have n_rows + 1 entries")


cdef int _check_unit_claim(const Rows* X, bint unit_x) except -1:
    """The debug build checks a caller's ``unit_x`` claim (the release build trusts
    it: the Python layer computes it once per fit)."""
    if LINCLASS_DEBUG_CHECKS and unit_x and not rows_unit_values(X):
        raise ValueError("unit_x=True but X is not CSR with every stored value 1.0")
    return 0


def binary_loss_grad(*, const double[::1] data, const int[::1] indices,
                     const int[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                     bint dense, const double[::1] y, const double[::1] sample_weight,
                     const double[::1] params, bint fit_intercept, bint unit_x=False):
    """(loss, grad, D) of the binary model; ``params`` = w (+ b last).  ``unit_x``:
    the caller's claim that X is CSR with every stored value 1.0
    (`linclass._core._checks.csr_unit_values`; the debug build verifies it)."""
    _check_rows(data, indices, indptr, n_rows, n_cols, dense)
    cdef Py_ssize_t n_params = n_cols + (1 if fit_intercept else 0)
    if params.shape[0] != n_params or y.shape[0] != n_rows or sample_weight.shape[0] != n_rows:
        raise ValueError("params, y or sample_weight has the wrong length")
    grad = np.empty(n_params)
    D = np.empty(max(n_rows, 1))
    cdef double[::1] g = grad
    cdef double[::1] d = D
    cdef Rows X = _rows(data, indices, indptr, n_rows, n_cols, dense)
    _check_unit_claim(&X, unit_x)
    cdef double b = params[n_cols] if fit_intercept else 0.0
    cdef double loss
    with nogil:
        loss = binary_pass(&X, &y[0], &sample_weight[0], &params[0], b, fit_intercept,
                           &g[0], &d[0], unit_x)
    return loss, grad, D[:n_rows]


def binary_hessian_diag(*, const double[::1] data, const int[::1] indices,
                        const int[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                        bint dense, const double[::1] D, bint fit_intercept,
                        bint unit_x=False):
    """The diagonal of ``X.T @ diag(D) @ X`` (the intercept as a last column of
    ones): ``sum_i D_i x_ij^2``, one pass (``unit_x`` as in `binary_loss_grad`:
    then ``sum_i D_i`` over the rows that hold j)."""
    _check_rows(data, indices, indptr, n_rows, n_cols, dense)
    if D.shape[0] != n_rows or n_rows < 1:
        raise ValueError("D has the wrong length")
    out = np.zeros(n_cols + (1 if fit_intercept else 0))
    cdef double[::1] o = out
    cdef Rows X = _rows(data, indices, indptr, n_rows, n_cols, dense)
    _check_unit_claim(&X, unit_x)
    cdef Py_ssize_t i, k, nnz
    cdef const double* values
    cdef const int* ind
    cdef double d, total = 0.0
    with nogil:
        for i in range(n_rows):
            d = D[i]
            if d == 0.0:
                continue
            total += d
            nnz = rows_get(&X, i, &values, &ind)
            if ind == NULL:
                for k in range(nnz):
                    o[k] += d * values[k] * values[k]
            elif unit_x:
                for k in range(nnz):
                    o[ind[k]] += d
            else:
                for k in range(nnz):
                    o[ind[k]] += d * values[k] * values[k]
        if fit_intercept:
            o[n_cols] = total
    return out


def binary_hess_vec(*, const double[::1] data, const int[::1] indices,
                    const int[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                    bint dense, const double[::1] D, const double[::1] v,
                    bint fit_intercept, bint unit_x=False):
    """X.T @ (D * (X @ v)), with the intercept as a last column of ones
    (``unit_x`` as in `binary_loss_grad`)."""
    _check_rows(data, indices, indptr, n_rows, n_cols, dense)
    cdef Py_ssize_t n_params = n_cols + (1 if fit_intercept else 0)
    if v.shape[0] != n_params or D.shape[0] != n_rows or n_rows < 1:
        raise ValueError("v or D has the wrong length")
    out = np.empty(n_params)
    cdef double[::1] o = out
    cdef Rows X = _rows(data, indices, indptr, n_rows, n_cols, dense)
    _check_unit_claim(&X, unit_x)
    with nogil:
        binary_hessp(&X, &D[0], &v[0], fit_intercept, &o[0], unit_x)
    return out


def multinomial_loss_grad(*, const double[::1] data, const int[::1] indices,
                          const int[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                          bint dense, const int[::1] y, const double[::1] sample_weight,
                          const double[::1] params, Py_ssize_t n_classes,
                          bint fit_intercept):
    """(loss, grad) of the softmax model; ``params`` = W (n_cols, K) row-major,
    then b (K,) if ``fit_intercept``.  Labels must lie in 0..K-1 (unchecked)."""
    _check_rows(data, indices, indptr, n_rows, n_cols, dense)
    if n_classes < 2:
        raise ValueError("n_classes must be >= 2")
    cdef Py_ssize_t n_params = (n_cols + (1 if fit_intercept else 0)) * n_classes
    if params.shape[0] != n_params or y.shape[0] != n_rows or sample_weight.shape[0] != n_rows:
        raise ValueError("params, y or sample_weight has the wrong length")
    grad = np.empty(n_params)
    cdef double[::1] g = grad
    cdef Rows X = _rows(data, indices, indptr, n_rows, n_cols, dense)
    cdef double loss = 0.0
    cdef double* z
    with nogil:
        z = <double*>malloc(n_classes * sizeof(double))
        if z != NULL:
            loss = multinomial_pass(&X, &y[0], &sample_weight[0], &params[0], n_classes, fit_intercept,
                                    &g[0], z)
            free(z)
    if z == NULL:
        raise MemoryError()
    return loss, grad


def binary_hessian(*, const double[::1] data, const int[::1] indices,
                   const int[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                   bint dense, const double[::1] D, bint fit_intercept):
    """Upper triangle of X.T @ diag(D) @ X (the intercept as a last column of ones),
    a (p, p) float64 array with p = n_cols + fit_intercept; the strict lower
    triangle is zero."""
    _check_rows(data, indices, indptr, n_rows, n_cols, dense)
    cdef Py_ssize_t p = n_cols + (1 if fit_intercept else 0)
    if D.shape[0] != n_rows:
        raise ValueError("D has the wrong length")
    H = np.empty((p, p))
    cdef double[:, ::1] h = H
    cdef Rows X = _rows(data, indices, indptr, n_rows, n_cols, dense)
    with nogil:
        binary_hessian_pass(&X, &D[0], fit_intercept, &h[0, 0], p)
    return H


# ------------------------------------------- multinomial in two phases (CSR) --
# The one-pass kernel above adds outer(X[i], r_i) into a gradient of
# n_cols * K doubles at the columns of row i: a read-modify-write at random
# places of an array larger than the caches, and with row blocks on threads one
# such array per thread, zeroed every evaluation and added afterwards.  In two
# phases the residuals r_i = s_i (softmax(z_i) - onehot(y_i)) of all rows
# (n_rows * K doubles: a few MB, cache-resident) are formed first, over row
# blocks; then the gradient row of each feature j is X[:, j] @ R over the rows
# of column j (X transposed, kept for the fit), written once, in order, with the
# prior and the scaling of the objective added in the same pass and max |g|
# taken on the way.  Column blocks share no output, so threads need no
# reduction, and every gradient entry is the same sum whatever the blocks are.

cdef void multinomial_rows(const Rows* X, const int* y, const double* sw, const double* W,
                           Py_ssize_t K, int fit_intercept, Py_ssize_t lo, Py_ssize_t hi,
                           double* R, double* row_loss) noexcept nogil:
    """R[i] = s_i (softmax(X[i] W + b) - onehot(y_i)), row_loss[i] = s_i (lse - z_yi),
    for rows lo <= i < hi."""
    cdef Py_ssize_t i, j, k, p, nnz
    cdef const double* values
    cdef const int* indices
    cdef const double* wrow
    cdef double* z
    cdef double lse, v, s
    cdef const double* b = W + X.n_cols * K
    for i in range(lo, hi):
        nnz = rows_get(X, i, &values, &indices)
        z = R + i * K
        for k in range(K):
            z[k] = b[k] if fit_intercept else 0.0
        if indices != NULL:
            for p in range(nnz if nnz < PREFETCH_AHEAD else PREFETCH_AHEAD):
                prefetch_row(W + indices[p] * K, K)
        for p in range(nnz):                               # z = X[i] @ W + b
            if indices != NULL and p + PREFETCH_AHEAD < nnz:
                prefetch_row(W + indices[p + PREFETCH_AHEAD] * K, K)
            j = p if indices == NULL else indices[p]
            v = values[p]
            wrow = W + j * K
            for k in range(K):
                z[k] += v * wrow[k]
        lse = logsumexp(z, K)
        s = sw[i]
        row_loss[i] = s * (lse - z[y[i]])
        for k in range(K):
            z[k] = s * exp(z[k] - lse)
        z[y[i]] -= s


cdef void multinomial_cols(const double* tdata, const int* tindices, const int* tindptr,
                           Py_ssize_t n_rows, Py_ssize_t n_cols, const double* R,
                           const double* W, const double* row_inv_var, double scale,
                           Py_ssize_t K, int fit_intercept, Py_ssize_t lo, Py_ssize_t hi,
                           double* grad, double* acc, double* out,
                           double* row_quad) noexcept nogil:
    """Parameter rows lo <= j < hi (j == n_cols: the intercepts) of
    grad = (X.T @ R + inv_var * W) / scale; out[0] += sum inv_var W**2 over those rows,
    out[1] = max(out[1], max |grad|); ``row_quad`` (or NULL): row_quad[j] = inv_var[j]
    ||W[j]||**2 (a sum that does not depend on the blocks)."""
    cdef Py_ssize_t i, j, k, p, p0, p1
    cdef const double* r
    cdef const double* wrow
    cdef double* grow
    cdef double v, iv, t, pen, g, quad = 0.0, gmax = out[1], rq
    for j in range(lo, hi):
        for k in range(K):
            acc[k] = 0.0
        if j < n_cols:
            p0 = tindptr[j]
            p1 = tindptr[j + 1]
            for p in range(p0, p1 if p1 - p0 < PREFETCH_AHEAD else p0 + PREFETCH_AHEAD):
                prefetch_row(R + tindices[p] * K, K)
            for p in range(p0, p1):
                if p + PREFETCH_AHEAD < p1:
                    prefetch_row(R + tindices[p + PREFETCH_AHEAD] * K, K)
                v = tdata[p]
                r = R + tindices[p] * K
                for k in range(K):
                    acc[k] += v * r[k]
        elif fit_intercept:
            for i in range(n_rows):
                r = R + i * K
                for k in range(K):
                    acc[k] += r[k]
        iv = row_inv_var[j]
        wrow = W + j * K
        grow = grad + j * K
        rq = 0.0
        for k in range(K):
            t = wrow[k]
            pen = iv * t
            rq += t * pen
            g = (acc[k] + pen) / scale
            grow[k] = g
            if fabs(g) > gmax:
                gmax = fabs(g)
        quad += rq
        if row_quad != NULL:
            row_quad[j] = rq
    out[0] += quad
    out[1] = gmax


def multinomial_residuals(*, const double[::1] data, const int[::1] indices,
                          const int[::1] indptr, Py_ssize_t n_rows, Py_ssize_t n_cols,
                          bint dense, const int[::1] y, const double[::1] sample_weight,
                          const double[::1] params, Py_ssize_t n_classes, bint fit_intercept,
                          double[:, ::1] R, double[::1] row_loss, Py_ssize_t lo, Py_ssize_t hi):
    """Phase 1 over rows [lo, hi): ``R[i] = s_i (softmax(z_i) - onehot(y_i))`` and
    ``row_loss[i] = s_i (logsumexp(z_i) - z_i[y_i])``, ``z_i = X[i] @ W + b``
    (``params`` as in :func:`multinomial_loss_grad`; labels in 0..K-1, unchecked)."""
    _check_rows(data, indices, indptr, n_rows, n_cols, dense)
    if n_classes < 2:
        raise ValueError("n_classes must be >= 2")
    cdef Py_ssize_t n_params = (n_cols + (1 if fit_intercept else 0)) * n_classes
    if params.shape[0] != n_params or y.shape[0] != n_rows or sample_weight.shape[0] != n_rows \
            or R.shape[0] != n_rows or R.shape[1] != n_classes or row_loss.shape[0] != n_rows \
            or not 0 <= lo <= hi <= n_rows:
        raise ValueError("multinomial_residuals: inconsistent shapes")
    cdef Rows X = _rows(data, indices, indptr, n_rows, n_cols, dense)
    if hi > lo:
        with nogil:
            multinomial_rows(&X, &y[0], &sample_weight[0], &params[0], n_classes,
                             fit_intercept, lo, hi, &R[0, 0], &row_loss[0])


def multinomial_gradient_columns(*, const double[::1] t_data, const int[::1] t_indices,
                                 const int[::1] t_indptr, Py_ssize_t n_rows,
                                 Py_ssize_t n_cols, const double[:, ::1] R,
                                 const double[::1] params, const double[::1] row_inv_var,
                                 double scale, Py_ssize_t n_classes, bint fit_intercept,
                                 double[::1] grad, Py_ssize_t lo, Py_ssize_t hi,
                                 double[::1] row_quad=None):
    """Phase 2 over parameter rows [lo, hi) (row ``n_cols`` = the intercepts):
    ``grad[j] = (X[:, j] @ R + row_inv_var[j] * W[j]) / scale`` with X given
    transposed (``t_*``: CSR of X.T, column indices < n_rows).  Returns
    ``(sum_j row_inv_var[j] * ||W[j]||**2, max |grad[j]|)`` over the range;
    ``row_quad`` (length n_cols + fit_intercept): also each row's term of that sum,
    in ``row_quad[j]``, for a total that does not depend on the ranges."""
    cdef Py_ssize_t n_param_rows = n_cols + (1 if fit_intercept else 0)
    if n_classes < 2 or n_rows < 1 or n_cols < 1 or t_indptr.shape[0] != n_cols + 1 \
            or R.shape[0] != n_rows or R.shape[1] != n_classes \
            or params.shape[0] != n_param_rows * n_classes or grad.shape[0] != params.shape[0] \
            or row_inv_var.shape[0] != n_param_rows or not 0 <= lo <= hi <= n_param_rows \
            or t_data.shape[0] < t_indptr[n_cols] or t_indices.shape[0] < t_indptr[n_cols] \
            or not scale > 0:
        raise ValueError("multinomial_gradient_columns: inconsistent shapes")
    if row_quad is not None and row_quad.shape[0] != n_param_rows:
        raise ValueError("multinomial_gradient_columns: row_quad needs one entry per "
                         "parameter row")
    cdef double* rq = &row_quad[0] if row_quad is not None else NULL
    cdef double out[2]
    out[0] = 0.0
    out[1] = 0.0
    if hi <= lo:
        return 0.0, 0.0
    cdef double* acc = <double*>malloc(n_classes * sizeof(double))
    if acc == NULL:
        raise MemoryError()
    with nogil:
        multinomial_cols(&t_data[0], &t_indices[0], &t_indptr[0], n_rows, n_cols, &R[0, 0],
                         &params[0], &row_inv_var[0], scale, n_classes, fit_intercept, lo,
                         hi, &grad[0], acc, out, rq)
    free(acc)
    return out[0], out[1]
