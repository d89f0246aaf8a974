# Sequential minimal optimisation for the C-SVM dual
#
#     min_a  1/2 a^T Q a - e^T a    s.t.  0 <= a_i <= C_i,  y^T a = 0,
#     Q_ij = y_i y_j k(x_i, x_j),
#
# with the second-order working-set selection of Fan, Chen & Lin (2005,
# "Working set selection using second order information for training support
# vector machines", JMLR 6, WSS 2), shrinking with gradient reconstruction and
# an LRU cache of the columns of Q -- the algorithm of LIBSVM's Solver (Chang &
# Lin, 2011, "LIBSVM: a library for support vector machines", ACM TIST 2(3),
# Sections 4.1 and 5), written here against linclass's row accessor: a binary
# sub-problem is a list of row indices into the full data matrix, the per-sample
# upper bounds C_i carry class_weight and sample_weight.

from libc.math cimport INFINITY, isfinite
from libc.stdlib cimport calloc, free, malloc

from ._rows cimport Rows
from ._kernel_rows cimport (Cache, CacheHead, Kernel, KERNEL_PRECOMPUTED, KERNEL_RBF,
                            cache_free, cache_get_data, cache_init, cache_swap_index,
                            kernel_diag, kernel_fill)

import numpy as np

# A CSR matrix with no stored entries still needs a non-NULL `indices`: the kernels
# tell a CSR row from a dense one by it (a NULL would send them into dense reads).
cdef int _NO_INDEX[1]

cdef double TAU = 1e-12    # LIBSVM: a non-positive curvature is replaced by this

cdef enum:
    LOWER_BOUND = 0
    UPPER_BOUND = 1
    FREE = 2

cdef enum:
    STATUS_OK = 0
    STATUS_MAX_ITER = 1
    STATUS_NO_MEMORY = -1
    STATUS_NOT_FINITE = -2     # a step or the gradient overflowed (NaN or infinity)


cdef struct Solver:
    int l                      # number of variables
    int active_size
    Kernel kernel
    Cache cache
    int* rows                  # (l,) position -> row of X (permuted by shrinking)
    int* active_set            # (l,) position -> original variable index
    double* y                  # (l,) +1 / -1
    double* C                  # (l,) upper bounds
    double* alpha              # (l,)
    char* alpha_status         # (l,)
    double* G                  # (l,) gradient Q a - e
    double* G_bar              # (l,) sum_{j at upper bound} C_j Q_ij
    double* QD                 # (l,) Q_ii
    double* kbuf               # (l,) kernel values of one column
    double eps
    bint unshrink
    bint failed                # out of memory in the cache


cdef inline void update_alpha_status(Solver* s, int i) noexcept nogil:
    if s.alpha[i] >= s.C[i]:
        s.alpha_status[i] = UPPER_BOUND
    elif s.alpha[i] <= 0:
        s.alpha_status[i] = LOWER_BOUND
    else:
        s.alpha_status[i] = FREE


cdef float* get_Q(Solver* s, int i, int length) noexcept nogil:
    """Column i of Q on positions [0, length) (from the cache, computed if missing)."""
    cdef float* data
    cdef int start = cache_get_data(&s.cache, i, &data, length)
    cdef int j
    cdef double yi
    if start < 0:
        s.failed = True
        return NULL
    if start < length:
        kernel_fill(&s.kernel, s.rows[i], s.rows + start, length - start, s.kbuf)
        yi = s.y[i]
        for j in range(start, length):
            data[j] = <float>(yi * s.y[j] * s.kbuf[j - start])   # y_i y_j K[i, j]
    return data


cdef inline void swap_d(double* a, int i, int j) noexcept nogil:
    cdef double t = a[i]
    a[i] = a[j]
    a[j] = t


cdef inline void swap_i(int* a, int i, int j) noexcept nogil:
    cdef int t = a[i]
    a[i] = a[j]
    a[j] = t


cdef void swap_index(Solver* s, int i, int j) noexcept nogil:
    cdef char t
    cache_swap_index(&s.cache, i, j)
    swap_i(s.rows, i, j)
    swap_i(s.active_set, i, j)
    swap_d(s.y, i, j)
    swap_d(s.C, i, j)
    swap_d(s.alpha, i, j)
    swap_d(s.G, i, j)
    swap_d(s.G_bar, i, j)
    swap_d(s.QD, i, j)
    t = s.alpha_status[i]
    s.alpha_status[i] = s.alpha_status[j]
    s.alpha_status[j] = t


cdef int reconstruct_gradient(Solver* s) noexcept nogil:
    """Recompute G on the shrunk positions from G_bar and the free variables."""
    cdef int i, j, nr_free = 0, l = s.l, active = s.active_size
    cdef float* Q_i
    cdef double alpha_i
    if active == l:
        return 0
    for j in range(active, l):
        s.G[j] = s.G_bar[j] - 1.0
    for j in range(active):
        if s.alpha_status[j] == FREE:
            nr_free += 1
    if <double>nr_free * l > 2.0 * active * (l - active):
        for i in range(active, l):
            Q_i = get_Q(s, i, active)
            if Q_i == NULL:
                return -1
            for j in range(active):
                if s.alpha_status[j] == FREE:
                    s.G[i] += s.alpha[j] * Q_i[j]
    else:
        for i in range(active):
            if s.alpha_status[i] == FREE:
                Q_i = get_Q(s, i, l)
                if Q_i == NULL:
                    return -1
                alpha_i = s.alpha[i]
                for j in range(active, l):
                    s.G[j] += alpha_i * Q_i[j]
    return 0


cdef int select_working_set(Solver* s, int* out_i, int* out_j) noexcept nogil:
    """WSS 2 of Fan, Chen & Lin (2005): i maximal violating, j maximal second-order
    decrease.  Returns 1 when the KKT gap is below eps (optimal), -1 on failure."""
    cdef double Gmax = -INFINITY, Gmax2 = -INFINITY, obj_diff_min = INFINITY
    cdef double grad_diff, quad_coef, obj_diff
    cdef int Gmax_idx = -1, Gmin_idx = -1, t, j, i
    cdef float* Q_i = NULL
    for t in range(s.active_size):
        if s.y[t] > 0:
            if s.alpha_status[t] != UPPER_BOUND and -s.G[t] >= Gmax:
                Gmax = -s.G[t]
                Gmax_idx = t
        else:
            if s.alpha_status[t] != LOWER_BOUND and s.G[t] >= Gmax:
                Gmax = s.G[t]
                Gmax_idx = t
    i = Gmax_idx
    if i != -1:
        Q_i = get_Q(s, i, s.active_size)
        if Q_i == NULL:
            return -1
    for j in range(s.active_size):
        if s.y[j] > 0:
            if s.alpha_status[j] != LOWER_BOUND:
                grad_diff = Gmax + s.G[j]
                if s.G[j] >= Gmax2:
                    Gmax2 = s.G[j]
                if grad_diff > 0:
                    quad_coef = s.QD[i] + s.QD[j] - 2.0 * s.y[i] * Q_i[j]
                    if quad_coef <= 0:
                        quad_coef = TAU
                    obj_diff = -(grad_diff * grad_diff) / quad_coef
                    if obj_diff <= obj_diff_min:
                        Gmin_idx = j
                        obj_diff_min = obj_diff
        else:
            if s.alpha_status[j] != UPPER_BOUND:
                grad_diff = Gmax - s.G[j]
                if -s.G[j] >= Gmax2:
                    Gmax2 = -s.G[j]
                if grad_diff > 0:
                    quad_coef = s.QD[i] + s.QD[j] + 2.0 * s.y[i] * Q_i[j]
                    if quad_coef <= 0:
                        quad_coef = TAU
                    obj_diff = -(grad_diff * grad_diff) / quad_coef
                    if obj_diff <= obj_diff_min:
                        Gmin_idx = j
                        obj_diff_min = obj_diff
    if Gmax + Gmax2 < s.eps or Gmin_idx == -1:
        return 1
    out_i[0] = Gmax_idx
    out_j[0] = Gmin_idx
    return 0


cdef inline bint be_shrunk(Solver* s, int i, double Gmax1, double Gmax2) noexcept nogil:
    if s.alpha_status[i] == UPPER_BOUND:
        if s.y[i] > 0:
            return -s.G[i] > Gmax1
        return -s.G[i] > Gmax2
    if s.alpha_status[i] == LOWER_BOUND:
        if s.y[i] > 0:
            return s.G[i] > Gmax2
        return s.G[i] > Gmax1
    return False


cdef int do_shrinking(Solver* s) noexcept nogil:
    cdef double Gmax1 = -INFINITY    # max { -y_i G_i | i in I_up }
    cdef double Gmax2 = -INFINITY    # max {  y_i G_i | i in I_low }
    cdef int i
    for i in range(s.active_size):
        if s.y[i] > 0:
            if s.alpha_status[i] != UPPER_BOUND and -s.G[i] >= Gmax1:
                Gmax1 = -s.G[i]
            if s.alpha_status[i] != LOWER_BOUND and s.G[i] >= Gmax2:
                Gmax2 = s.G[i]
        else:
            if s.alpha_status[i] != UPPER_BOUND and -s.G[i] >= Gmax2:
                Gmax2 = -s.G[i]
            if s.alpha_status[i] != LOWER_BOUND and s.G[i] >= Gmax1:
                Gmax1 = s.G[i]
    if not s.unshrink and Gmax1 + Gmax2 <= s.eps * 10:
        # close to the optimum: bring everything back once, then shrink again
        s.unshrink = True
        if reconstruct_gradient(s) < 0:
            return -1
        s.active_size = s.l
    i = 0
    while i < s.active_size:
        if be_shrunk(s, i, Gmax1, Gmax2):
            s.active_size -= 1
            while s.active_size > i:
                if not be_shrunk(s, s.active_size, Gmax1, Gmax2):
                    swap_index(s, i, s.active_size)
                    break
                s.active_size -= 1
        i += 1
    return 0


cdef double calculate_rho(Solver* s) noexcept nogil:
    cdef double ub = INFINITY, lb = -INFINITY, sum_free = 0.0, yG
    cdef int nr_free = 0, i
    for i in range(s.active_size):
        yG = s.y[i] * s.G[i]
        if s.alpha_status[i] == UPPER_BOUND:
            if s.y[i] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif s.alpha_status[i] == LOWER_BOUND:
            if s.y[i] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            nr_free += 1
            sum_free += yG
    if nr_free > 0:
        return sum_free / nr_free
    return (ub + lb) / 2


cdef int solve(Solver* s, long long max_iter, bint shrinking,
               long long* n_iter) noexcept nogil:
    """Run SMO from alpha = 0.  Returns a STATUS_* code."""
    cdef int l = s.l, i, j, k, counter, r
    cdef long long it = 0
    cdef float* Q_i
    cdef float* Q_j
    cdef double C_i, C_j, old_alpha_i, old_alpha_j, quad_coef, delta, diff, total
    cdef double delta_alpha_i, delta_alpha_j
    cdef bint ui, uj
    cdef int status = STATUS_OK
    for i in range(l):
        s.alpha[i] = 0.0
        update_alpha_status(s, i)
        s.G[i] = -1.0                      # G = Q a - e at a = 0
        s.G_bar[i] = 0.0
    # (a = 0: no column contributes to G or G_bar; an upper bound C_i = 0 would,
    # but the Python layer drops samples with C_i = 0)
    counter = min(l, 1000) + 1
    while True:
        if max_iter >= 0 and it >= max_iter:
            status = STATUS_MAX_ITER
            break
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            if shrinking and do_shrinking(s) < 0:
                return STATUS_NO_MEMORY
        r = select_working_set(s, &i, &j)
        if r < 0:
            return STATUS_NO_MEMORY
        if r != 0:
            # optimal on the active set: check the whole problem
            if reconstruct_gradient(s) < 0:
                return STATUS_NO_MEMORY
            s.active_size = l
            r = select_working_set(s, &i, &j)
            if r < 0:
                return STATUS_NO_MEMORY
            if r != 0:
                break
            counter = 1                    # shrink at the next iteration
        it += 1
        Q_i = get_Q(s, i, s.active_size)
        Q_j = get_Q(s, j, s.active_size)
        if Q_i == NULL or Q_j == NULL:
            return STATUS_NO_MEMORY
        C_i = s.C[i]
        C_j = s.C[j]
        old_alpha_i = s.alpha[i]
        old_alpha_j = s.alpha[j]
        # solve the two-variable sub-problem analytically, then clip to the box
        if s.y[i] != s.y[j]:
            quad_coef = s.QD[i] + s.QD[j] + 2.0 * Q_i[j]
            if quad_coef <= 0:
                quad_coef = TAU
            delta = (-s.G[i] - s.G[j]) / quad_coef
            diff = s.alpha[i] - s.alpha[j]
            s.alpha[i] += delta
            s.alpha[j] += delta
            if diff > 0:
                if s.alpha[j] < 0:
                    s.alpha[j] = 0
                    s.alpha[i] = diff
            else:
                if s.alpha[i] < 0:
                    s.alpha[i] = 0
                    s.alpha[j] = -diff
            if diff > C_i - C_j:
                if s.alpha[i] > C_i:
                    s.alpha[i] = C_i
                    s.alpha[j] = C_i - diff
            else:
                if s.alpha[j] > C_j:
                    s.alpha[j] = C_j
                    s.alpha[i] = C_j + diff
        else:
            quad_coef = s.QD[i] + s.QD[j] - 2.0 * Q_i[j]
            if quad_coef <= 0:
                quad_coef = TAU
            delta = (s.G[i] - s.G[j]) / quad_coef
            total = s.alpha[i] + s.alpha[j]
            s.alpha[i] -= delta
            s.alpha[j] += delta
            if total > C_i:
                if s.alpha[i] > C_i:
                    s.alpha[i] = C_i
                    s.alpha[j] = total - C_i
            else:
                if s.alpha[j] < 0:
                    s.alpha[j] = 0
                    s.alpha[i] = total
            if total > C_j:
                if s.alpha[j] > C_j:
                    s.alpha[j] = C_j
                    s.alpha[i] = total - C_j
            else:
                if s.alpha[i] < 0:
                    s.alpha[i] = 0
                    s.alpha[j] = total
        delta_alpha_i = s.alpha[i] - old_alpha_i
        delta_alpha_j = s.alpha[j] - old_alpha_j
        for k in range(s.active_size):     # G += Q[:, i] da_i + Q[:, j] da_j
            s.G[k] += Q_i[k] * delta_alpha_i + Q_j[k] * delta_alpha_j
        if not (isfinite(delta_alpha_i) and isfinite(delta_alpha_j)
                and isfinite(s.G[i]) and isfinite(s.G[j])):
            n_iter[0] = it                 # NaN compares false: the loop would never end
            return STATUS_NOT_FINITE
        ui = s.alpha_status[i] == UPPER_BOUND
        uj = s.alpha_status[j] == UPPER_BOUND
        update_alpha_status(s, i)
        update_alpha_status(s, j)
        if ui != (s.alpha_status[i] == UPPER_BOUND):
            Q_i = get_Q(s, i, l)
            if Q_i == NULL:
                return STATUS_NO_MEMORY
            if ui:
                for k in range(l):
                    s.G_bar[k] -= C_i * Q_i[k]
            else:
                for k in range(l):
                    s.G_bar[k] += C_i * Q_i[k]
        if uj != (s.alpha_status[j] == UPPER_BOUND):
            Q_j = get_Q(s, j, l)
            if Q_j == NULL:
                return STATUS_NO_MEMORY
            if uj:
                for k in range(l):
                    s.G_bar[k] -= C_j * Q_j[k]
            else:
                for k in range(l):
                    s.G_bar[k] += C_j * Q_j[k]
    if status == STATUS_MAX_ITER and s.active_size < l:
        if reconstruct_gradient(s) < 0:
            return STATUS_NO_MEMORY
        s.active_size = l
    n_iter[0] = it
    return status


def smo_solve(*, data, indices, indptr, Py_ssize_t n_rows, Py_ssize_t n_cols, bint sparse,
              sq_norms, rows, y, C, int kind, double gamma, double coef0, int degree,
              double tol, double cache_bytes, bint shrinking, long long max_iter):
    """Solve one binary C-SVM dual by SMO.

    Parameters (keyword-only; the Python layer has validated all of them)
    ----------
    data, indices, indptr : the data matrix (CSR arrays, or for dense input the
        C-ordered flat values with indices/indptr ignored; for a precomputed
        kernel the (n_rows, n_rows) Gram matrix, dense)
    sq_norms : (n_rows,) squared row norms, or None (needed by RBF)
    rows : (l,) int32 rows of the sub-problem
    y : (l,) float64 labels +1/-1
    C : (l,) float64 upper bounds, > 0
    kind, gamma, coef0, degree : kernel (codes of _kernel_rows.pxd)
    tol : KKT stopping tolerance (LIBSVM's eps)
    cache_bytes : budget of the column cache in bytes
    max_iter : -1 for no limit (the Python layer always passes a finite budget)

    Returns
    -------
    alpha : (l,) ndarray, rho : float, objective : float (the dual
    1/2 a^T Q a - e^T a at the solution), n_iter : int, status : int
    (0 optimal, 1 max_iter reached); FloatingPointError when a step
    or the gradient overflows (NaN or infinity), MemoryError when out of memory
    """
    cdef const double[::1] d = np.ascontiguousarray(data, dtype=np.float64)
    cdef const int[::1] ind = np.ascontiguousarray(indices, dtype=np.int32)
    cdef const int[::1] ptr = np.ascontiguousarray(indptr, dtype=np.int32)
    cdef const int[::1] row_view = np.ascontiguousarray(rows, dtype=np.int32)
    cdef const double[::1] y_view = np.ascontiguousarray(y, dtype=np.float64)
    cdef const double[::1] C_view = np.ascontiguousarray(C, dtype=np.float64)
    cdef const double[::1] sq_view
    cdef int l = row_view.shape[0]
    if y_view.shape[0] != l or C_view.shape[0] != l:
        raise ValueError("rows, y and C must have the same length")
    if l < 2:
        raise ValueError("a sub-problem needs at least two samples")
    if sparse and ptr.shape[0] != n_rows + 1:
        raise ValueError("indptr must have n_rows + 1 entries")
    if not sparse and d.shape[0] != n_rows * n_cols:
        raise ValueError("dense data must hold n_rows * n_cols values")
    if kind == KERNEL_PRECOMPUTED and n_cols != n_rows:
        raise ValueError("a precomputed kernel needs a square Gram matrix")
    if kind == KERNEL_RBF and sq_norms is None:
        raise ValueError("the RBF kernel needs sq_norms")
    if np.any(np.asarray(row_view) < 0) or np.any(np.asarray(row_view) >= n_rows):
        raise ValueError("rows out of range")
    if cache_bytes <= 0:
        raise ValueError("cache_bytes must be > 0")

    cdef Solver s
    s.l = l
    s.active_size = l
    s.eps = tol
    s.unshrink = False
    s.failed = False
    s.kernel.kind = kind
    s.kernel.gamma = gamma
    s.kernel.coef0 = coef0
    s.kernel.degree = degree
    s.kernel.X.data = &d[0] if d.shape[0] else NULL
    s.kernel.X.indices = (&ind[0] if ind.shape[0] else &_NO_INDEX[0]) if sparse else NULL
    s.kernel.X.indptr = &ptr[0] if sparse else NULL
    s.kernel.X.n_rows = n_rows
    s.kernel.X.n_cols = n_cols
    s.kernel.sq_norms = NULL
    if sq_norms is not None:
        sq_view = np.ascontiguousarray(sq_norms, dtype=np.float64)
        if sq_view.shape[0] != n_rows:
            raise ValueError("sq_norms must have n_rows entries")
        s.kernel.sq_norms = &sq_view[0]

    alpha_out = np.zeros(l, dtype=np.float64)
    cdef double[::1] alpha_view = alpha_out
    # every buffer below is freed in the finally clause
    s.kernel.dense_buf = <double*>calloc(max(n_cols, 1), sizeof(double)) if sparse else NULL
    s.rows = <int*>malloc(l * sizeof(int))
    s.active_set = <int*>malloc(l * sizeof(int))
    s.y = <double*>malloc(l * sizeof(double))
    s.C = <double*>malloc(l * sizeof(double))
    s.alpha = <double*>malloc(l * sizeof(double))
    s.alpha_status = <char*>malloc(l * sizeof(char))
    s.G = <double*>malloc(l * sizeof(double))
    s.G_bar = <double*>malloc(l * sizeof(double))
    s.QD = <double*>malloc(l * sizeof(double))
    s.kbuf = <double*>malloc(l * sizeof(double))
    cdef CacheHead* heads = <CacheHead*>calloc(l, sizeof(CacheHead))
    s.cache.head = NULL
    cdef long long n_iter = 0
    cdef int status = STATUS_OK, i
    cdef double rho = 0.0, obj = 0.0
    try:
        if (s.rows == NULL or s.active_set == NULL or s.y == NULL or s.C == NULL
                or s.alpha == NULL or s.alpha_status == NULL or s.G == NULL
                or s.G_bar == NULL or s.QD == NULL or s.kbuf == NULL or heads == NULL
                or (sparse and s.kernel.dense_buf == NULL)):
            raise MemoryError("SMO: cannot allocate the solver's arrays for %d samples" % l)
        with nogil:
            cache_init(&s.cache, l, heads, <long long>cache_bytes)
            for i in range(l):
                s.rows[i] = row_view[i]
                s.active_set[i] = i
                s.y[i] = y_view[i]
                s.C[i] = C_view[i]
                s.QD[i] = kernel_diag(&s.kernel, s.rows[i])     # K[i, i]
            status = solve(&s, max_iter, shrinking, &n_iter)
            if status >= 0:
                for i in range(l):                 # a gradient entry off the working set
                    if not (isfinite(s.G[i]) and isfinite(s.alpha[i])):
                        status = STATUS_NOT_FINITE
                        break
            if status >= 0:
                rho = calculate_rho(&s)
                obj = 0.0
                for i in range(l):                 # 1/2 a^T Q a - e^T a = 1/2 a^T (G - e)
                    obj += s.alpha[i] * (s.G[i] - 1.0)
                obj /= 2.0
                for i in range(l):
                    alpha_view[s.active_set[i]] = s.alpha[i]
    finally:
        cache_free(&s.cache)
        free(heads)
        free(s.kernel.dense_buf)
        free(s.rows)
        free(s.active_set)
        free(s.y)
        free(s.C)
        free(s.alpha)
        free(s.alpha_status)
        free(s.G)
        free(s.G_bar)
        free(s.QD)
        free(s.kbuf)
    if status == STATUS_NO_MEMORY:
        raise MemoryError("SMO: out of memory while filling the kernel cache")
    if status == STATUS_NOT_FINITE or not (np.isfinite(rho) and np.isfinite(obj)):
        raise FloatingPointError("SMO: the gradient became non-finite (overflow) after %d "
                                 "iterations" % n_iter)
    return alpha_out, rho, obj, int(n_iter), status
