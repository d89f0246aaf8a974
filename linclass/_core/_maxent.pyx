"""Maximum entropy (conditional log-linear) model kernels: empirical and model
feature expectations, one pass over the data per call.

Model: P(k | x_i) = exp(s_ik) / sum_k' exp(s_ik'),  s_ik = F[i*K + k] @ lam,
where F is a CSR matrix with one row per (example, candidate class) pair: row
i*K + k is the feature vector f(x_i, k) of candidate k of example i.

    empirical[j] = sum_i w_i F[i*K + y_i, j]
    model[j]     = sum_i w_i sum_k P(k | x_i) F[i*K + k, j]
    A[j, m]      = sum_i w_i sum_{k: nf(i,k) = m} P(k | x_i) F[i*K + k, j]

A is what improved iterative scaling needs: rows grouped by the index m of
their total feature count nf(i, k) = sum_j F[i*K + k, j] (one of n_nf distinct
values).  Weights lam may be -inf (features never seen in training under GIS/
IIS without a prior); the caller removes explicit zeros from F so that
0 * -inf never happens, and guarantees that the gold candidate has a finite score.

Darroch & Ratcliff (1972), "Generalized iterative scaling for log-linear models";
Della Pietra, Della Pietra & Lafferty (1997), "Inducing features of random fields"
(IIS); Malouf (2002), "A comparison of algorithms for maximum entropy parameter
estimation".  The caller (linclass.maxent) validates every array.
"""
from libc.math cimport exp, fabs, INFINITY
from libc.stdlib cimport malloc, free

import numpy as np

from linclass._core._mathutils cimport logsumexp


cdef double expectation_pass(const double* data, const int* indices, const int* indptr,
                             Py_ssize_t n_samples, Py_ssize_t K, const int* y,
                             const double* sw, const double* lam,
                             const int* nf_index, Py_ssize_t n_nf,
                             double* out, double* s) noexcept nogil:
    """Log-likelihood; out += model expectations (n_nf == 0: out is (n_features,))
    or the IIS table A (out is (n_features, n_nf) row-major).  s: K doubles."""
    cdef Py_ssize_t i, k, p, row
    cdef double lse, pk, loglik = 0.0
    for i in range(n_samples):
        if sw[i] == 0.0:
            continue
        for k in range(K):                                  # s = F[iK:(i+1)K] @ lam
            row = i * K + k
            s[k] = 0.0
            for p in range(indptr[row], indptr[row + 1]):
                s[k] += data[p] * lam[indices[p]]
        lse = logsumexp(s, K)
        loglik += sw[i] * (s[y[i]] - lse)                   # w_i log P(y_i | x_i)
        for k in range(K):
            pk = sw[i] * exp(s[k] - lse)                    # w_i P(k | x_i)
            if pk == 0.0:
                continue
            row = i * K + k
            if n_nf == 0:
                for p in range(indptr[row], indptr[row + 1]):
                    out[indices[p]] += pk * data[p]         # model += pk * F[row]
            else:
                for p in range(indptr[row], indptr[row + 1]):
                    out[indices[p] * n_nf + nf_index[row]] += pk * data[p]
    return loglik


cdef void empirical_pass(const double* data, const int* indices, const int* indptr,
                         Py_ssize_t n_samples, Py_ssize_t K, const int* y,
                         const double* sw, double* out) noexcept nogil:
    """out += sum_i w_i F[i*K + y_i]"""
    cdef Py_ssize_t i, p, row
    for i in range(n_samples):
        row = i * K + y[i]
        for p in range(indptr[row], indptr[row + 1]):
            out[indices[p]] += sw[i] * data[p]


def _check(data, indices, indptr, y, sample_weight, n_samples, n_classes, n_features):
    if n_samples < 1 or n_classes < 1 or n_features < 1:
        raise ValueError("need n_samples, n_classes, n_features >= 1")
    if indptr.shape[0] != n_samples * n_classes + 1:
        raise ValueError("indptr must have n_samples * n_classes + 1 entries")
    if data.shape[0] < 1 or indices.shape[0] != data.shape[0]:
        raise ValueError("data and indices must have the same, non-zero length "
                         "(pad an all-empty matrix with one unread value)")
    if y.shape[0] != n_samples or sample_weight.shape[0] != n_samples:
        raise ValueError("y and sample_weight need one entry per sample")


def empirical_expectation(*, const double[::1] data, const int[::1] indices,
                          const int[::1] indptr, Py_ssize_t n_samples, Py_ssize_t n_classes,
                          Py_ssize_t n_features, const int[::1] y,
                          const double[::1] sample_weight):
    """sum_i w_i f(x_i, y_i), shape (n_features,)."""
    _check(data, indices, indptr, y, sample_weight, n_samples, n_classes, n_features)
    out = np.zeros(n_features)
    cdef double[::1] o = out
    with nogil:
        empirical_pass(&data[0], &indices[0], &indptr[0], n_samples, n_classes, &y[0],
                       &sample_weight[0], &o[0])
    return out


def model_expectation(*, const double[::1] data, const int[::1] indices,
                      const int[::1] indptr, Py_ssize_t n_samples, Py_ssize_t n_classes,
                      Py_ssize_t n_features, const int[::1] y,
                      const double[::1] sample_weight, const double[::1] weights,
                      const int[::1] nf_index=None, Py_ssize_t n_nf=0):
    """(log-likelihood, expectations).

    Without ``nf_index``: expectations of shape (n_features,).  With it (one
    int32 in 0..n_nf-1 per row of F): the IIS table of shape (n_features, n_nf).
    """
    _check(data, indices, indptr, y, sample_weight, n_samples, n_classes, n_features)
    if weights.shape[0] != n_features:
        raise ValueError("weights must have n_features entries")
    if nf_index is not None:
        if nf_index.shape[0] != n_samples * n_classes or n_nf < 1:
            raise ValueError("nf_index needs one entry per row of F and n_nf >= 1")
        out = np.zeros((n_features, n_nf))
    else:
        n_nf = 0
        out = np.zeros(n_features)
    cdef double[::1] o = out.reshape(-1)
    cdef const int* nfp = &nf_index[0] if nf_index is not None else NULL
    cdef double loglik = 0.0
    cdef double* s
    with nogil:
        s = <double*>malloc(n_classes * sizeof(double))
        if s != NULL:
            loglik = expectation_pass(&data[0], &indices[0], &indptr[0], n_samples,
                                      n_classes, &y[0], &sample_weight[0], &weights[0],
                                      nfp, n_nf, &o[0], s)
            free(s)
    if s == NULL:
        raise MemoryError()
    return loglik, out


# -- featureset encoding ----------------------------------------------------------------
# NLTK-style featuresets (a list of dicts name -> value) become (attribute id, value)
# pairs in one C-level walk over the dicts: no intermediate lists of names and values,
# one dict look-up per entry.

from cpython.dict cimport PyDict_Next, PyDict_GetItem, PyDict_SetItem, PyDict_Size
from cpython.object cimport PyObject
from cpython.float cimport PyFloat_CheckExact, PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_CheckExact, PyLong_AsDouble, PyLong_AsLongLong


def featureset_ids_numeric(list X, dict numbering, bint fitting):
    """``(ids, values, counts)`` of featuresets whose values are all ``int`` or
    ``float`` (not bool), the attribute of an entry being its name (looked up in
    ``numbering``; when ``fitting`` a new name gets ``len(numbering)``, otherwise
    its id is -1).  Returns None at the first example that is not a dict or value
    of another type (the caller then takes the general path); values are not
    checked for finiteness here."""
    cdef Py_ssize_t n = len(X), i, pos, total = 0, t = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef PyObject* found
    cdef object fs
    cdef double x
    for i in range(n):
        fs = X[i]
        if type(fs) is not dict:
            return None
        total += PyDict_Size(fs)
    ids = np.empty(total, dtype=np.int64)
    values = np.empty(total, dtype=np.float64)
    counts = np.empty(n, dtype=np.int64)
    cdef long long[::1] id_view = ids
    cdef double[::1] value_view = values
    cdef long long[::1] count_view = counts
    cdef long long new_id
    for i in range(n):
        fs = X[i]
        if PyDict_Size(fs) > total - t:             # a dict that grew meanwhile
            return None
        pos = 0
        count_view[i] = PyDict_Size(fs)
        while PyDict_Next(fs, &pos, &key, &value):
            if PyFloat_CheckExact(<object>value):
                value_view[t] = PyFloat_AS_DOUBLE(<object>value)
            elif PyLong_CheckExact(<object>value):
                try:
                    x = PyLong_AsDouble(<object>value)
                except OverflowError:                   # too large for a double
                    return None
                value_view[t] = x
            else:
                return None
            found = PyDict_GetItem(numbering, <object>key)
            if found != NULL:
                id_view[t] = PyLong_AsLongLong(<object>found)
            elif fitting:
                new_id = PyDict_Size(numbering)
                PyDict_SetItem(numbering, <object>key, new_id)
                id_view[t] = new_id
            else:
                id_view[t] = -1
            t += 1
    if t != total:
        return None
    return ids, values, counts


def joint_rows(const long long[::1] ids, const double[::1] values,
               const long long[::1] counts, const long long[:, ::1] table):
    """CSR arrays ``(data, indices, indptr)`` of the joint features: row ``e * K + k``
    holds, for each attribute ``ids[j]`` of example ``e`` (``counts[e]`` consecutive
    entries each), the column ``table[ids[j], k]`` when >= 0 with value
    ``values[j]``; zero values are left out and each row's columns are sorted (the
    columns of one row are distinct when the attributes of an example are)."""
    cdef Py_ssize_t n_examples = counts.shape[0], K = table.shape[1]
    cdef Py_ssize_t n_attr = table.shape[0], e, k, j, start, stop, out, a, row_start
    cdef long long total = 0, col
    cdef int ci
    cdef double v
    if ids.shape[0] != values.shape[0]:
        raise ValueError("joint_rows: ids and values differ in length")
    for e in range(n_examples):
        if counts[e] < 0:
            raise ValueError("joint_rows: negative count")
        total += counts[e]
    if total != ids.shape[0]:
        raise ValueError("joint_rows: counts do not add up to the number of entries")
    for j in range(ids.shape[0]):
        if not 0 <= ids[j] < n_attr:
            raise ValueError("joint_rows: attribute id out of range")
    if total * K > 2147483647:
        raise ValueError("joint_rows: more than 2**31 - 1 joint entries")
    data = np.empty(max(total * K, 1))
    indices = np.empty(max(total * K, 1), dtype=np.int32)
    indptr = np.empty(n_examples * K + 1, dtype=np.int32)
    cdef double[::1] d = data
    cdef int[::1] ind = indices
    cdef int[::1] ptr = indptr
    with nogil:
        out = 0
        start = 0
        ptr[0] = 0
        for e in range(n_examples):
            stop = start + counts[e]
            for k in range(K):
                row_start = out
                for j in range(start, stop):
                    col = table[ids[j], k]
                    v = values[j]
                    if col < 0 or v == 0.0:
                        continue
                    # insertion into the sorted row
                    ci = <int>col
                    a = out
                    while a > row_start and ind[a - 1] > ci:
                        ind[a] = ind[a - 1]
                        d[a] = d[a - 1]
                        a -= 1
                    ind[a] = ci
                    d[a] = v
                    out += 1
                ptr[e * K + k + 1] = <int>out
            start = stop
    return data[:out], indices[:out], indptr


def iis_newton(const double[:, ::1] A, const double[::1] nf_values,
               const double[::1] target, const double[::1] base, double inv_var,
               double limit):
    """The improved-iterative-scaling update of each feature j: the root ``d_j`` of
    ``sum_m A[j, m] exp(d nf_m) + inv_var (base_j + d) - target_j`` by Newton's
    method from 0, each step clipped to ``[-limit, limit]``, at most 100 steps,
    stopping when a step changes d by <= 1e-12 (1 + |d|)."""
    cdef Py_ssize_t n = A.shape[0], n_nf = A.shape[1], j, m, it
    if nf_values.shape[0] != n_nf or target.shape[0] != n or base.shape[0] != n:
        raise ValueError("iis_newton: inconsistent shapes")
    out = np.zeros(n)
    cdef double[::1] d_out = out
    cdef double d, d_new, g, dg, term, step
    with nogil:
        for j in range(n):
            d = 0.0
            for it in range(100):
                g = inv_var * (base[j] + d) - target[j]
                dg = inv_var
                for m in range(n_nf):
                    term = A[j, m] * exp(d * nf_values[m])
                    g += term
                    dg += term * nf_values[m]
                step = g / (dg if dg > 1e-300 else 1e-300) if dg > 0 else 0.0
                d_new = d - step
                if d_new > limit:
                    d_new = limit
                elif d_new < -limit:
                    d_new = -limit
                if fabs(d_new - d) <= 1e-12 * (1.0 + fabs(d)):
                    d = d_new
                    break
                d = d_new
            d_out[j] = d
    return out
