"""MAP inference in pairwise Markov networks over node labels (max-sum form).

Score of a labelling y of n nodes with K labels:
    score(y) = sum_v unary[v, y_v] + sum_{edges e = (u, v)} pair[y_u, y_v]
(one K x K matrix shared by all edges; symmetric for undirected models).

Messages live on "slots": edge e gives slot 2e (message u -> v) and slot
2e + 1 (message v -> u); ``in_indptr`` / ``in_slots`` list for each node the
slots of its incoming messages (CSR), so ``s ^ 1`` is the reverse message.

* ``tree_decode``: exact max-sum on a forest (Viterbi on a tree): nodes in
  breadth-first order, one upward pass with argmax pointers, one downward pass.
* ``loopy_bp``: max-product belief propagation in log space with node-wise
  asynchronous updates, damping, message normalisation (max = 0) and a
  convergence check on the largest message change; returns the beliefs
  (exact max-marginals on a forest, up to a constant per node).
* ``icm``: iterated conditional modes (Besag, 1986) from a given labelling;
  each sweep visits nodes in order and never lowers the score.

Pearl (1988); Murphy, Weiss and Jordan (1999), Loopy belief propagation for
approximate inference; Besag (1986).  The caller (linclass.structured.graph)
validates every array: no bounds checks happen here.
"""
from libc.math cimport INFINITY, fabs
from libc.stdlib cimport malloc, free
from libc.stdint cimport int64_t

import numpy as np


cdef inline double pair_value(const double* pair, Py_ssize_t K, bint forward,
                              Py_ssize_t sender_label, Py_ssize_t receiver_label) noexcept nogil:
    # forward: the sender is the edge's first node -> pair[sender, receiver]
    if forward:
        return pair[sender_label * K + receiver_label]
    return pair[receiver_label * K + sender_label]


cdef void tree_pass(const double* unary, Py_ssize_t n, Py_ssize_t K, const double* pair,
                    const int64_t* order, const int64_t* parent, const char* child_first,
                    double* acc, int64_t* argmax_ptr, int64_t* labels) noexcept nogil:
    """acc: n x K scratch (unary + children's messages); argmax_ptr: n x K."""
    cdef Py_ssize_t t, v, p, k, l, best_l
    cdef double best, value
    for v in range(n * K):
        acc[v] = unary[v]
    for t in range(n - 1, -1, -1):          # children before parents
        v = order[t]
        p = parent[v]
        if p < 0:
            continue
        for k in range(K):                  # msg[k] = max_l acc[v, l] + pair(l, k)
            best = -INFINITY
            best_l = 0
            for l in range(K):
                value = acc[v * K + l] + pair_value(pair, K, child_first[v], l, k)
                if value > best:
                    best = value
                    best_l = l
            acc[p * K + k] += best
            argmax_ptr[v * K + k] = best_l
    for t in range(n):                      # parents before children
        v = order[t]
        p = parent[v]
        if p < 0:
            best = -INFINITY
            best_l = 0
            for l in range(K):
                if acc[v * K + l] > best:
                    best = acc[v * K + l]
                    best_l = l
            labels[v] = best_l
        else:
            labels[v] = argmax_ptr[v * K + labels[p]]


def tree_decode(*, const double[:, ::1] unary, const double[:, ::1] pair,
                const int64_t[::1] order, const int64_t[::1] parent,
                const char[::1] child_first):
    """Exact MAP labelling of a forest.

    order: every node once, each parent before its children (BFS per tree);
    parent[v]: parent node or -1 for a root; child_first[v]: 1 if the edge
    joining v to its parent is (v, parent), 0 if (parent, v).
    """
    cdef Py_ssize_t n = unary.shape[0], K = unary.shape[1]
    if pair.shape[0] != K or pair.shape[1] != K:
        raise ValueError("pair must be K x K")
    if order.shape[0] != n or parent.shape[0] != n or child_first.shape[0] != n:
        raise ValueError("order, parent and child_first must have one entry per node")
    labels_arr = np.zeros(n, dtype=np.int64)
    if n == 0 or K == 0:
        return labels_arr
    acc_arr = np.empty((n, K))
    ptr_arr = np.zeros((n, K), dtype=np.int64)
    cdef double[:, ::1] acc = acc_arr
    cdef int64_t[:, ::1] ptr = ptr_arr
    cdef int64_t[::1] labels = labels_arr
    with nogil:
        tree_pass(&unary[0, 0], n, K, &pair[0, 0], &order[0], &parent[0], &child_first[0],
                  &acc[0, 0], &ptr[0, 0], &labels[0])
    return labels_arr


cdef double bp_sweep(const double* unary, Py_ssize_t n, Py_ssize_t K, const double* pair,
                     const int64_t* in_indptr, const int64_t* in_slots, double damping,
                     double* msg, double* belief, double* new_msg) noexcept nogil:
    """One asynchronous sweep over the nodes; returns the largest message change."""
    cdef Py_ssize_t v, q, s, out, k, l
    cdef double best, value, change, max_change = 0.0, top
    cdef bint forward
    for v in range(n):
        for k in range(K):                              # belief = unary + sum of incoming
            belief[v * K + k] = unary[v * K + k]
        for q in range(in_indptr[v], in_indptr[v + 1]):
            s = in_slots[q]
            for k in range(K):
                belief[v * K + k] += msg[s * K + k]
        for q in range(in_indptr[v], in_indptr[v + 1]):
            s = in_slots[q]
            out = s ^ 1
            # out is even: v is the edge's first node, sending forward
            forward = (out & 1) == 0
            top = -INFINITY
            for k in range(K):      # new[k] = max_l (belief - msg_in)[l] + pair(l, k)
                best = -INFINITY
                for l in range(K):
                    value = belief[v * K + l] - msg[s * K + l] + pair_value(pair, K, forward, l, k)
                    if value > best:
                        best = value
                new_msg[k] = best
                if best > top:
                    top = best
            for k in range(K):
                value = (1.0 - damping) * (new_msg[k] - top) + damping * msg[out * K + k]
                change = fabs(value - msg[out * K + k])
                if change > max_change:
                    max_change = change
                msg[out * K + k] = value
    return max_change


cdef void final_beliefs(const double* unary, Py_ssize_t n, Py_ssize_t K,
                       const int64_t* in_indptr, const int64_t* in_slots, const double* msg,
                       double* belief) noexcept nogil:
    cdef Py_ssize_t v, q, k
    for v in range(n):
        for k in range(K):
            belief[v * K + k] = unary[v * K + k]    # unary + sum of incoming messages
        for q in range(in_indptr[v], in_indptr[v + 1]):
            for k in range(K):
                belief[v * K + k] += msg[in_slots[q] * K + k]


def loopy_bp(*, const double[:, ::1] unary, const double[:, ::1] pair,
             const int64_t[::1] in_indptr, const int64_t[::1] in_slots, Py_ssize_t n_slots,
             Py_ssize_t max_iter, double damping, double tol):
    """Max-product BP; returns (beliefs (n, K), n_sweeps, converged)."""
    cdef Py_ssize_t n = unary.shape[0], K = unary.shape[1]
    if pair.shape[0] != K or pair.shape[1] != K:
        raise ValueError("pair must be K x K")
    if in_indptr.shape[0] != n + 1 or in_slots.shape[0] != n_slots:
        raise ValueError("in_indptr must have n + 1 entries and in_slots n_slots")
    if not (0.0 <= damping < 1.0):
        raise ValueError("damping must be in [0, 1)")
    belief_arr = np.array(unary, dtype=np.float64, copy=True)
    if n == 0 or K == 0:
        return belief_arr, 0, True
    msg_arr = np.zeros((max(n_slots, 1), K))
    cdef double[:, ::1] msg = msg_arr
    cdef double[:, ::1] belief = belief_arr
    cdef double* new_msg = <double*>malloc(K * sizeof(double))
    if new_msg == NULL:
        raise MemoryError()
    cdef Py_ssize_t it = 0
    cdef double change = INFINITY
    cdef const int64_t* slots_ptr = &in_slots[0] if n_slots > 0 else NULL
    try:
        with nogil:
            while it < max_iter and change > tol:
                change = bp_sweep(&unary[0, 0], n, K, &pair[0, 0], &in_indptr[0], slots_ptr,
                                  damping, &msg[0, 0], &belief[0, 0], new_msg)
                it += 1
            final_beliefs(&unary[0, 0], n, K, &in_indptr[0], slots_ptr, &msg[0, 0],
                          &belief[0, 0])
    finally:
        free(new_msg)
    return belief_arr, int(it), bool(change <= tol)


def icm(*, const double[:, ::1] unary, const double[:, ::1] pair,
        const int64_t[::1] in_indptr, const int64_t[::1] in_slots,
        const int64_t[::1] neighbor, int64_t[::1] labels, Py_ssize_t max_iter):
    """Iterated conditional modes in place on ``labels``; returns (sweeps, converged).

    neighbor[s]: the node that sends on slot s.
    """
    cdef Py_ssize_t n = unary.shape[0], K = unary.shape[1]
    if pair.shape[0] != K or pair.shape[1] != K:
        raise ValueError("pair must be K x K")
    if in_indptr.shape[0] != n + 1 or labels.shape[0] != n:
        raise ValueError("in_indptr must have n + 1 entries and labels n")
    if n == 0 or K == 0:
        return 0, True
    cdef Py_ssize_t it = 0, v, q, s, k, best_k
    cdef bint changed = True, forward
    cdef double best, value
    with nogil:
        while changed and it < max_iter:
            changed = False
            for v in range(n):
                best = -INFINITY
                best_k = labels[v]
                for k in range(K):
                    value = unary[v, k]         # unary[v, k] + sum_nb pair(k, y_nb)
                    for q in range(in_indptr[v], in_indptr[v + 1]):
                        s = in_slots[q]
                        # v sends on s ^ 1; forward when that slot is even
                        forward = ((s ^ 1) & 1) == 0
                        value = value + pair_value(&pair[0, 0], K, forward, k,
                                                   labels[neighbor[s]])
                    if value > best or (value == best and k == labels[v]):
                        best = value
                        best_k = k
                if best_k != labels[v]:
                    labels[v] = best_k
                    changed = True
            it += 1
    return int(it), not changed
