"""Viterbi-CKY for weighted context-free grammars in Chomsky normal form, with
one unary layer per span and an optional labelled-bracket loss augmentation.

Tree space (n words, N symbols, spans [i, j) with 0 <= i < j <= n):

* the *lower* node of a span: a preterminal ``T -> word_i`` when j = i + 1
  (score ``lexical[i, T]``), a binary node ``A -> B C`` over the upper nodes
  of [i, k) and [k, j) otherwise (score ``binary_score[r]``);
* the *upper* node of a span: the lower node itself, or one unary rule
  ``A -> B`` over the lower node B (score ``unary_score[u]``).  A caller that
  wants arbitrary unary chains passes the unary closure (best chain A =>+ B)
  as the unary rules, as :class:`linclass.parsing.PCFG` does;
* the root: ``root_score[X]`` over the upper node X of [0, n).

    best = max_X root_score[X] + upper[0, n, X]
    upper[i, j, A] = max(lower[i, j, A], max_{u: A -> B} unary_score[u] + lower[i, j, B] + b1)
    lower[i, j, A] = max_{k, r: A -> B C} binary_score[r] + upper[i, k, B] + upper[k, j, C] + b0
    lower[i, i+1, T] = lexical[i, T] + b0

With ``loss_augmented`` the bonuses b0/b1 are +1 for a node that is not in the
gold tree and -1 for one that is (a node is (symbol, i, j, layer)); adding the
number of gold nodes gives the symmetric difference of the node sets, the loss
of :class:`linclass.structured.GrammarStructure`.  Without it b0 = b1 = 0.

Binary rules are stored by left child (CSR: rules left_ptr[B]:left_ptr[B+1]
have left child B); unary rules by child.  Spans live in a triangular chart,
cell(i, j) = i*n - i*(i-1)/2 + (j-i-1).  Each cell keeps the list of symbols
whose upper score is finite, so the binary loop visits only live left children.
Cost O(n^3 |G|).  Ties keep the first candidate found (splits left to right,
rules in storage order).

The caller (linclass.structured.grammar) validates every array: no bounds
checks happen here.

References
----------
J. Cocke; D. Younger (1967); T. Kasami (1965).  D. Klein and C. Manning,
"A* parsing: fast exact Viterbi parse selection", NAACL 2003 (unary layer).
B. Taskar, D. Klein, M. Collins, D. Koller, C. Manning, "Max-margin parsing",
EMNLP 2004 (loss-augmented CKY).
"""
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free, calloc

import numpy as np

cdef enum:
    NODE_ROOT = 0
    NODE_UNARY = 1
    NODE_BINARY = 2
    NODE_LEXICAL = 3


cdef inline Py_ssize_t cell_of(Py_ssize_t i, Py_ssize_t j, Py_ssize_t n) noexcept nogil:
    return i * n - (i * (i - 1)) // 2 + (j - i - 1)


cdef int cky_fill(Py_ssize_t n, Py_ssize_t N,
                  const double[:, ::1] lexical,
                  const int[::1] left_ptr, const int[::1] bin_right,
                  const int[::1] bin_parent, const double[::1] bin_score,
                  const int[::1] unary_ptr, const int[::1] un_parent,
                  const double[::1] un_score,
                  bint augmented, const long long[::1] gold_ptr, const int[::1] gold_symbol,
                  bint has_span, const double[:, ::1] span_score, Py_ssize_t beam_size,
                  double[:, ::1] lower, double[:, ::1] upper,
                  int[:, ::1] bp_split, int[:, ::1] bp_rule, int[:, ::1] bp_unary,
                  int[:, ::1] active, int[::1] n_active) noexcept nogil:
    """Fill the chart bottom-up.  Returns 0, or -1 when out of memory."""
    cdef Py_ssize_t length, i, j, k, c, cl, cr, a, t, r, u, A, B, C, n_live
    cdef double sB, s, sC, threshold
    cdef double* low
    cdef double* up
    cdef signed char* mark0 = <signed char*>calloc(N, sizeof(signed char))
    cdef signed char* mark1 = <signed char*>calloc(N, sizeof(signed char))
    cdef double* work = <double*>malloc((N + 1) * sizeof(double))
    cdef long long g
    if mark0 == NULL or mark1 == NULL or work == NULL:
        free(mark0)
        free(mark1)
        free(work)
        return -1
    for length in range(1, n + 1):
        for i in range(n - length + 1):
            j = i + length
            c = cell_of(i, j, n)
            low = &lower[c, 0]
            up = &upper[c, 0]
            for A in range(N):
                low[A] = -INFINITY
                bp_split[c, A] = -1
                bp_rule[c, A] = -1
                bp_unary[c, A] = -1
            if length == 1:
                for A in range(N):
                    low[A] = lexical[i, A]           # lower[i, i+1] = lexical[i]
            else:
                for k in range(i + 1, j):
                    cl = cell_of(i, k, n)
                    cr = cell_of(k, j, n)
                    for a in range(n_active[cl]):
                        B = active[cl, a]
                        sB = upper[cl, B]
                        for r in range(left_ptr[B], left_ptr[B + 1]):
                            C = bin_right[r]
                            sC = upper[cr, C]
                            if sC == -INFINITY:
                                continue
                            s = sB + sC + bin_score[r]
                            A = bin_parent[r]
                            if s > low[A]:            # max over splits and rules
                                low[A] = s
                                bp_split[c, A] = <int>k
                                bp_rule[c, A] = <int>r
            if has_span:
                for A in range(N):
                    if low[A] != -INFINITY:
                        low[A] += span_score[c, A]    # lower[c] += span_score[c]
            if augmented:
                for g in range(gold_ptr[2 * c], gold_ptr[2 * c + 1]):
                    mark0[gold_symbol[g]] = 1
                for g in range(gold_ptr[2 * c + 1], gold_ptr[2 * c + 2]):
                    mark1[gold_symbol[g]] = 1
                for A in range(N):
                    if low[A] != -INFINITY:
                        low[A] += -1.0 if mark0[A] else 1.0
            # unary layer: identity or one rule over the lower node
            for A in range(N):
                up[A] = low[A]
            for B in range(N):
                sB = low[B]
                if sB == -INFINITY:
                    continue
                for u in range(unary_ptr[B], unary_ptr[B + 1]):
                    A = un_parent[u]
                    s = sB + un_score[u]
                    if augmented:
                        s += -1.0 if mark1[A] else 1.0
                    if s > up[A]:
                        up[A] = s
                        bp_unary[c, A] = <int>u
            if augmented:
                for g in range(gold_ptr[2 * c], gold_ptr[2 * c + 2]):
                    mark0[gold_symbol[g]] = 0
                    mark1[gold_symbol[g]] = 0
            if beam_size > 0 and length < n:
                # beam: keep the beam_size best upper nodes of the cell (ties kept)
                n_live = 0
                for A in range(N):
                    if up[A] != -INFINITY:
                        work[n_live] = up[A]
                        n_live += 1
                if n_live > beam_size:
                    threshold = kth_largest(work, n_live, beam_size)
                    for A in range(N):
                        if up[A] < threshold:         # up[up < threshold] = -inf
                            up[A] = -INFINITY
            t = 0
            for A in range(N):
                if up[A] != -INFINITY:               # active = flatnonzero(isfinite(up))
                    active[c, t] = <int>A
                    t += 1
            n_active[c] = <int>t
    free(mark0)
    free(mark1)
    free(work)
    return 0


cdef double kth_largest(double* values, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th largest of values[0:n] (1 <= k <= n), by quickselect; reorders values."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, store, target = k - 1
    cdef double pivot, tmp
    while lo < hi:
        pivot = values[(lo + hi) // 2]
        # three-way partition of values[lo:hi+1]: > pivot, == pivot, < pivot
        i = lo
        store = lo
        while i <= hi:
            if values[i] > pivot:
                tmp = values[i]
                values[i] = values[store]
                values[store] = tmp
                store += 1
            i += 1
        # values[lo:store] > pivot
        if target < store:
            hi = store - 1
            continue
        i = store
        while i <= hi:
            if values[i] == pivot:
                tmp = values[i]
                values[i] = values[store]
                values[store] = tmp
                store += 1
            i += 1
        # values[old store:store] == pivot
        if target < store:
            return pivot
        lo = store
    return values[lo]


cdef Py_ssize_t cky_extract(Py_ssize_t n, Py_ssize_t root_symbol,
                            const int[::1] bin_right, const int[::1] bin_parent,
                            const int[::1] left_child_of_rule, const int[::1] un_parent,
                            const int[::1] un_child,
                            int[:, ::1] bp_split, int[:, ::1] bp_rule, int[:, ::1] bp_unary,
                            long long[:, ::1] nodes, long long* stack) noexcept nogil:
    """Write the best tree in pre-order: rows (kind, symbol, start, end, rule).

    The stack holds (layer, symbol, start, end) quadruples; layer 1 = upper node.
    Returns the number of rows.
    """
    cdef Py_ssize_t top = 0, m = 0, c, i, j, A, layer, k, r, u
    nodes[m, 0] = NODE_ROOT
    nodes[m, 1] = -1
    nodes[m, 2] = 0
    nodes[m, 3] = n
    nodes[m, 4] = -1
    m += 1
    stack[0] = 1
    stack[1] = root_symbol
    stack[2] = 0
    stack[3] = n
    top = 1
    while top > 0:
        top -= 1
        layer = stack[4 * top]
        A = stack[4 * top + 1]
        i = stack[4 * top + 2]
        j = stack[4 * top + 3]
        c = cell_of(i, j, n)
        if layer == 1:
            u = bp_unary[c, A]
            if u >= 0:
                nodes[m, 0] = NODE_UNARY
                nodes[m, 1] = A
                nodes[m, 2] = i
                nodes[m, 3] = j
                nodes[m, 4] = u
                m += 1
                A = un_child[u]
            # continue with the lower node of the same span
            stack[4 * top] = 0
            stack[4 * top + 1] = A
            stack[4 * top + 2] = i
            stack[4 * top + 3] = j
            top += 1
            continue
        if j == i + 1:
            nodes[m, 0] = NODE_LEXICAL
            nodes[m, 1] = A
            nodes[m, 2] = i
            nodes[m, 3] = j
            nodes[m, 4] = -1
            m += 1
            continue
        r = bp_rule[c, A]
        k = bp_split[c, A]
        nodes[m, 0] = NODE_BINARY
        nodes[m, 1] = A
        nodes[m, 2] = i
        nodes[m, 3] = j
        nodes[m, 4] = r
        m += 1
        # push the right child first so that the left one comes out first
        stack[4 * top] = 1
        stack[4 * top + 1] = bin_right[r]
        stack[4 * top + 2] = k
        stack[4 * top + 3] = j
        top += 1
        stack[4 * top] = 1
        stack[4 * top + 1] = left_child_of_rule[r]
        stack[4 * top + 2] = i
        stack[4 * top + 3] = k
        top += 1
    return m


def cky_viterbi(*, const double[:, ::1] lexical,
                const int[::1] binary_left_ptr, const int[::1] binary_left,
                const int[::1] binary_right, const int[::1] binary_parent,
                const double[::1] binary_score,
                const int[::1] unary_child_ptr, const int[::1] unary_child,
                const int[::1] unary_parent, const double[::1] unary_score,
                const double[::1] root_score,
                bint loss_augmented=False, gold_ptr=None, gold_symbol=None,
                span_score=None, Py_ssize_t beam_size=0):
    """Best tree under the weighted grammar (see the module docs).

    Parameters (all validated by the caller)
    ----------------------------------------
    lexical : (n, N) float64, -inf where symbol T cannot cover word i.
    binary_left_ptr : (N + 1,) int32 CSR over the left child; binary_left,
        binary_right, binary_parent : (R,) int32; binary_score : (R,) float64.
    unary_child_ptr : (N + 1,) int32 CSR over the child; unary_child,
        unary_parent : (U,) int32; unary_score : (U,) float64.
    root_score : (N,) float64, -inf for symbols that cannot be the root's child.
    loss_augmented : bool
    gold_ptr : (2 * n_cells + 1,) int64, gold_symbol : int32
        Gold nodes of cell c, layer l (0 lower, 1 upper) are
        ``gold_symbol[gold_ptr[2c + l]:gold_ptr[2c + l + 1]]``.
    span_score : None or (n_cells, N) float64, finite
        Added to the score of the lower node of symbol A over the span of
        cell c (span features; Hall, Durrett and Klein, 2014).
    beam_size : int >= 0
        0: exact search.  Otherwise each cell below the root keeps only its
        ``beam_size`` best upper nodes (ties at the threshold kept): beam
        pruning, approximate.

    Returns
    -------
    score : float
        ``-inf`` when no tree covers the sentence (nodes is then empty).
    nodes : (m, 5) int64
        Pre-order rows (kind, symbol, start, end, rule): kind 0 root (symbol
        -1), 1 unary (rule = index into the unary arrays), 2 binary (rule =
        index into the binary arrays), 3 lexical (rule -1).
    """
    cdef Py_ssize_t n = lexical.shape[0]
    cdef Py_ssize_t N = lexical.shape[1]
    cdef Py_ssize_t n_cells = n * (n + 1) // 2
    cdef Py_ssize_t X, best_X = -1, m = 0, c_root
    cdef double best = -INFINITY, s
    cdef int status
    if n < 1 or N < 1:
        raise ValueError("cky_viterbi: empty sentence or grammar")
    if binary_left_ptr.shape[0] != N + 1 or unary_child_ptr.shape[0] != N + 1 \
            or root_score.shape[0] != N:
        raise ValueError("cky_viterbi: pointer / root arrays do not match N=%d" % N)
    if not (binary_left.shape[0] == binary_right.shape[0] == binary_parent.shape[0]
            == binary_score.shape[0]):
        raise ValueError("cky_viterbi: binary rule arrays differ in length")
    if not (unary_child.shape[0] == unary_parent.shape[0] == unary_score.shape[0]):
        raise ValueError("cky_viterbi: unary rule arrays differ in length")
    cdef long long[::1] g_ptr
    cdef int[::1] g_sym
    if loss_augmented:
        g_ptr = np.ascontiguousarray(gold_ptr, dtype=np.int64)
        g_sym = np.ascontiguousarray(gold_symbol, dtype=np.int32)
        if g_ptr.shape[0] != 2 * n_cells + 1:
            raise ValueError("cky_viterbi: gold_ptr must have 2 * n_cells + 1 entries")
    else:
        g_ptr = np.zeros(1, dtype=np.int64)
        g_sym = np.zeros(1, dtype=np.int32)
    cdef const double[:, ::1] spans
    cdef bint has_span = span_score is not None
    if has_span:
        spans = span_score
        if spans.shape[0] != n_cells or spans.shape[1] != N:
            raise ValueError("cky_viterbi: span_score must have shape (n_cells, N)")
    else:
        spans = np.zeros((1, 1), dtype=np.float64)
    if beam_size < 0:
        raise ValueError("cky_viterbi: beam_size must be >= 0")
    lower_arr = np.empty((n_cells, N), dtype=np.float64)
    upper_arr = np.empty((n_cells, N), dtype=np.float64)
    split_arr = np.empty((n_cells, N), dtype=np.int32)
    rule_arr = np.empty((n_cells, N), dtype=np.int32)
    unary_arr = np.empty((n_cells, N), dtype=np.int32)
    active_arr = np.empty((n_cells, N), dtype=np.int32)
    n_active_arr = np.zeros(n_cells, dtype=np.int32)
    nodes_arr = np.empty((4 * n + 2, 5), dtype=np.int64)
    cdef double[:, ::1] lower = lower_arr
    cdef double[:, ::1] upper = upper_arr
    cdef int[:, ::1] bp_split = split_arr
    cdef int[:, ::1] bp_rule = rule_arr
    cdef int[:, ::1] bp_unary = unary_arr
    cdef int[:, ::1] active = active_arr
    cdef int[::1] n_active = n_active_arr
    cdef long long[:, ::1] nodes = nodes_arr
    cdef long long* stack = <long long*>malloc(4 * (4 * n + 2) * sizeof(long long))
    if stack == NULL:
        raise MemoryError()
    try:
        with nogil:
            status = cky_fill(n, N, lexical, binary_left_ptr, binary_right, binary_parent,
                              binary_score, unary_child_ptr, unary_parent, unary_score,
                              loss_augmented, g_ptr, g_sym, has_span, spans, beam_size,
                              lower, upper,
                              bp_split, bp_rule, bp_unary, active, n_active)
            if status == 0:
                c_root = cell_of(0, n, n)
                for X in range(N):
                    s = upper[c_root, X] + root_score[X]   # argmax(upper[root] + root_score)
                    if s > best:
                        best = s
                        best_X = X
                if best_X >= 0:
                    m = cky_extract(n, best_X, binary_right, binary_parent, binary_left,
                                    unary_parent, unary_child, bp_split, bp_rule, bp_unary,
                                    nodes, stack)
    finally:
        free(stack)
    if status != 0:
        raise MemoryError("cky_viterbi: out of memory")
    if best_X < 0:
        return -INFINITY, nodes_arr[:0].copy()
    return float(best), nodes_arr[:m].copy()
