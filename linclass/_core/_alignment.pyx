"""Pairwise sequence alignment with affine gaps: Needleman-Wunsch (global) and
Smith-Waterman (local) by Gotoh's three-state dynamic programme, with an
optional loss augmentation for the structural SVM.

Scoring (weights, not costs: a gap penalty is a negative weight)
    score = sum_{aligned (i, j)} S[a_i, b_j]
            + sum_{gap runs} (gap_open + gap_extend * run_length)
i.e. a gap run of length L adds ``gap_open + L * gap_extend`` (BLAST's
convention: "11/1" is gap_open = -11, gap_extend = -1).

States at cell (i, j) (i residues of a and j residues of b consumed):
    M  the alignment ends with the pair (a_{i-1}, b_{j-1})
    X  it ends with a_{i-1} against a gap ("gap in b")
    Y  it ends with b_{j-1} against a gap ("gap in a")
Transitions M->M,X,Y; X->M,X,Y; Y->M,Y.  Y->X is forbidden: between two
aligned pairs the unaligned residues of a come before those of b, so every
set of aligned pairs (a monotone matching) is reached by exactly one path and
the DP is an exact argmax over matchings for ANY weights (also positive gap
weights, which occur during learning).

Local mode: an alignment starts and ends with an aligned pair (or is empty,
score 0); residues outside it are unaligned and cost nothing.

End gaps (global mode, ``end_gap_open`` / ``end_gap_extend`` given): the gap
runs before the first and after the last aligned pair (of a and of b, four
runs at most; with nothing aligned, one run of a and one of b) weigh
``end_open + L * end_extend`` instead of the internal costs.  The DP then
works like the local one: M may start at (i, j) with the leading runs' weight
``end(i - 1) + end(j - 1)`` and the alignment may end at any M cell with the
trailing runs' weight ``end(m - i) + end(n - j)`` added, or be empty
(``end(m) + end(n)``); X and Y only hold internal runs.  Every monotone
matching is still reached by exactly one path.

Residue-specific gaps (``gap_residue``, K weights by residue code): every
residue facing a gap, internal or terminal (in local mode only inside the
alignment), adds its weight: in X and Y cells, in the row-0 / column-0 runs,
and through prefix sums in the end-gap start / end values.

Loss augmentation (Hamming loss over residues of both sequences, weight
``loss_weight``): given the reference partners ref_a[i] (index into b or -1)
and ref_b[j], a residue scores +loss_weight when its partner in the candidate
alignment differs from the reference; in local mode residues outside the
alignment have partner -1.

With ``q_loss`` the loss is instead the number of the reference's aligned
pairs that the candidate misses (1 - Q-score, times the number of reference
pairs): a residue a[i] with ref_a[i] >= 0 scores +loss_weight unless the
candidate aligns it with b[ref_a[i]]; nothing else costs.  The caller then
passes ref_b = -1 everywhere, so every b-side term below vanishes and only
the match term differs.

Ties are broken towards M, then X, then Y, and towards the earlier
predecessor.  Traceback pointers take one byte per cell.

Gotoh (1982), J. Mol. Biol. 162:705; Needleman and Wunsch (1970); Smith and
Waterman (1981).  The caller (linclass.structured.alignment) validates every
array: no bounds checks happen here.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint8_t, int32_t, int64_t

import numpy as np


cdef enum:
    FROM_M = 0
    FROM_X = 1
    FROM_Y = 2
    FROM_START = 3


cdef inline double end_run(Py_ssize_t length, double end_open,
                           double end_extend) noexcept nogil:
    """Weight of a terminal gap run of ``length`` residues (0 for none)."""
    if length <= 0:
        return 0.0
    return end_open + length * end_extend


cdef double align_pair(const int32_t* a, Py_ssize_t m, const int32_t* b, Py_ssize_t n,
                       const double* S, Py_ssize_t K, double gap_open, double gap_extend,
                       bint local, const int64_t* ref_a, const int64_t* ref_b,
                       double loss_weight, bint q_loss, double* rows, uint8_t* back,
                       int64_t* partner, bint end_gaps, double end_open,
                       double end_extend, const double* gap_residue) noexcept nogil:
    """Best (augmented) score; partner[i] = aligned index in b or -1.

    rows: 6 * (n + 1) doubles of workspace; back: (m + 1) * (n + 1) bytes.
    ref_a / ref_b are NULL without loss augmentation.  ``end_gaps`` (global
    only): the gap runs before the first and after the last aligned pair
    weigh ``end_open + L * end_extend`` instead (see the module docs).
    ``gap_residue`` (K weights, or NULL): added for every residue facing a gap
    (internal or terminal), by the residue's code.
    """
    cdef double* Mp = rows
    cdef double* Xp = rows + (n + 1)
    cdef double* Yp = rows + 2 * (n + 1)
    cdef double* Mc = rows + 3 * (n + 1)
    cdef double* Xc = rows + 4 * (n + 1)
    cdef double* Yc = rows + 5 * (n + 1)
    cdef double* tmp
    cdef double open_step = gap_open + gap_extend
    cdef double best, v, sub, loss_a_gap, start_value, end_value, empty_value
    cdef double best_end = -INFINITY
    cdef Py_ssize_t i, j, end_i = 0, end_j = 0
    cdef int state, end_state = FROM_M
    cdef uint8_t bp, code
    cdef bint augment = ref_a != NULL
    cdef Py_ssize_t total_ref_a = 0, total_ref_b = 0
    cdef Py_ssize_t prefix_a = 0          # aligned-in-reference residues of a[:i-1]
    cdef int64_t* prefix_b = NULL
    cdef double* gap_a = NULL             # prefix sums of gap_residue over a / over b
    cdef double* gap_b = NULL
    cdef const double* srow
    # local and end-gap alignments start and end at an aligned pair (or are empty):
    # the residues before the start and after the end are scored in closed form
    cdef bint free_ends = local or end_gaps

    if gap_residue != NULL and end_gaps:
        gap_a = <double*>malloc((m + 1) * sizeof(double))
        gap_b = <double*>malloc((n + 1) * sizeof(double))
        gap_a[0] = 0.0
        gap_b[0] = 0.0
        for i in range(m):
            gap_a[i + 1] = gap_a[i] + gap_residue[a[i]]
        for j in range(n):
            gap_b[j + 1] = gap_b[j] + gap_residue[b[j]]
    if augment and free_ends:
        prefix_b = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        prefix_b[0] = 0
        for j in range(n):
            prefix_b[j + 1] = prefix_b[j] + (ref_b[j] >= 0)   # cumsum(ref_b >= 0)
        total_ref_b = prefix_b[n]
        for i in range(m):
            total_ref_a += ref_a[i] >= 0

    # row 0
    Mp[0] = 0.0 if not free_ends else -INFINITY    # global starts in M at (0, 0)
    Xp[0] = -INFINITY
    Yp[0] = -INFINITY
    back[0] = 0
    for j in range(1, n + 1):
        Mp[j] = -INFINITY
        Xp[j] = -INFINITY
        if free_ends:
            Yp[j] = -INFINITY
            back[j] = 0
        else:
            v = gap_extend + (loss_weight if augment and ref_b[j - 1] >= 0 else 0.0)
            if gap_residue != NULL:
                v += gap_residue[b[j - 1]]
            if j == 1:
                Yp[j] = Mp[0] + open_step + v - gap_extend
                back[j] = FROM_M << 3
            else:
                Yp[j] = Yp[j - 1] + v
                back[j] = FROM_Y << 3
    for i in range(1, m + 1):
        srow = S + <Py_ssize_t>a[i - 1] * K
        # what a[i-1] facing a gap adds besides gap_extend (loss, residue weight)
        loss_a_gap = loss_weight if augment and ref_a[i - 1] >= 0 else 0.0
        if gap_residue != NULL:
            loss_a_gap += gap_residue[a[i - 1]]
        if augment and free_ends and i >= 2:
            prefix_a += ref_a[i - 2] >= 0
        # column 0: only X (global)
        Mc[0] = -INFINITY
        Yc[0] = -INFINITY
        if free_ends:
            Xc[0] = -INFINITY
            back[i * (n + 1)] = 0
        elif i == 1:
            Xc[0] = Mp[0] + open_step + loss_a_gap
            back[i * (n + 1)] = FROM_M << 2
        else:
            Xc[0] = Xp[0] + gap_extend + loss_a_gap
            back[i * (n + 1)] = 1 << 2
        for j in range(1, n + 1):
            # M: max over the diagonal predecessor's states (and a fresh start if local)
            best = Mp[j - 1]
            code = FROM_M
            if Xp[j - 1] > best:
                best = Xp[j - 1]
                code = FROM_X
            if Yp[j - 1] > best:
                best = Yp[j - 1]
                code = FROM_Y
            if free_ends:
                start_value = 0.0
                if end_gaps:   # the leading gap runs of a, then of b
                    start_value = (end_run(i - 1, end_open, end_extend)
                                   + end_run(j - 1, end_open, end_extend))
                    if gap_a != NULL:
                        start_value += gap_a[i - 1] + gap_b[j - 1]
                if augment:    # residues before the start are unaligned
                    start_value += loss_weight * (prefix_a + prefix_b[j - 1])
                if start_value > best:
                    best = start_value
                    code = FROM_START
            sub = srow[b[j - 1]]                          # S[a[i-1], b[j-1]]
            if augment:
                if q_loss:                                # a missed reference pair
                    sub += loss_weight * (ref_a[i - 1] >= 0 and ref_a[i - 1] != j - 1)
                else:
                    sub += loss_weight * ((ref_a[i - 1] != j - 1) + (ref_b[j - 1] != i - 1))
            Mc[j] = best + sub
            bp = code
            # X: a[i-1] against a gap, from (i-1, j); no Y -> X
            best = Mp[j] + open_step
            code = 0
            v = Xp[j] + gap_extend
            if v > best:
                best = v
                code = 1
            Xc[j] = best + loss_a_gap
            bp |= code << 2
            # Y: b[j-1] against a gap, from (i, j-1)
            best = Mc[j - 1] + open_step
            code = FROM_M
            v = Xc[j - 1] + open_step
            if v > best:
                best = v
                code = FROM_X
            v = Yc[j - 1] + gap_extend
            if v > best:
                best = v
                code = FROM_Y
            Yc[j] = best + (loss_weight if augment and ref_b[j - 1] >= 0 else 0.0)
            if gap_residue != NULL:
                Yc[j] += gap_residue[b[j - 1]]
            bp |= code << 3
            back[i * (n + 1) + j] = bp
            if free_ends:
                end_value = Mc[j]
                if end_gaps:   # the trailing gap runs of a, then of b
                    end_value += (end_run(m - i, end_open, end_extend)
                                  + end_run(n - j, end_open, end_extend))
                    if gap_a != NULL:
                        end_value += gap_a[m] - gap_a[i] + gap_b[n] - gap_b[j]
                if augment:    # residues after the end are unaligned
                    end_value += loss_weight * (total_ref_a - prefix_a - (ref_a[i - 1] >= 0)
                                                + total_ref_b - prefix_b[j])
                if end_value > best_end:
                    best_end = end_value
                    end_i = i
                    end_j = j
        tmp = Mp; Mp = Mc; Mc = tmp
        tmp = Xp; Xp = Xc; Xc = tmp
        tmp = Yp; Yp = Yc; Yc = tmp

    for i in range(m):
        partner[i] = -1
    if free_ends:
        empty_value = loss_weight * (total_ref_a + total_ref_b) if augment else 0.0
        if end_gaps:       # nothing aligned: one end run in each sequence
            empty_value += (end_run(m, end_open, end_extend)
                            + end_run(n, end_open, end_extend))
            if gap_a != NULL:
                empty_value += gap_a[m] + gap_b[n]
        if gap_a != NULL:
            free(gap_a)
            free(gap_b)
        if prefix_b != NULL:
            free(prefix_b)
        if not (best_end > empty_value):
            return empty_value
        i = end_i
        j = end_j
        state = FROM_M
    else:
        best_end = Mp[n]
        end_state = FROM_M
        if Xp[n] > best_end:
            best_end = Xp[n]
            end_state = FROM_X
        if Yp[n] > best_end:
            best_end = Yp[n]
            end_state = FROM_Y
        i = m
        j = n
        state = end_state
    # traceback
    while i > 0 or j > 0:
        bp = back[i * (n + 1) + j]
        if state == FROM_M:
            partner[i - 1] = j - 1
            state = bp & 3
            i -= 1
            j -= 1
            if state == FROM_START:
                break
        elif state == FROM_X:
            state = FROM_X if (bp >> 2) & 1 else FROM_M
            i -= 1
        else:
            state = (bp >> 3) & 3
            j -= 1
    return best_end


def align_batch(*, const int32_t[::1] codes_a, const int64_t[::1] offsets_a,
                const int32_t[::1] codes_b, const int64_t[::1] offsets_b,
                const double[:, ::1] substitution, double gap_open, double gap_extend,
                bint local, ref_a=None, ref_b=None, double loss_weight=1.0,
                bint q_loss=False, end_gap_open=None, end_gap_extend=None,
                gap_residue=None):
    """Align pairs (a_p, b_p) = (codes_a[offsets_a[p]:offsets_a[p+1]], ...).

    Parameters
    ----------
    codes_a, codes_b : int32 arrays of residue codes in [0, K)
    offsets_a, offsets_b : int64 arrays of length n_pairs + 1
    substitution : (K, K) float64
    gap_open, gap_extend : weights (a run of length L adds open + L * extend)
    local : Smith-Waterman instead of Needleman-Wunsch
    ref_a, ref_b : None or int64 arrays aligned with codes_a / codes_b: the
        reference partners (loss augmentation)
    loss_weight : weight of each wrongly aligned residue
    q_loss : the loss counts the reference pairs missed (ref_b must then be -1
        everywhere; see the module docs)
    end_gap_open, end_gap_extend : None, or (both) the weights of the gap runs
        before the first and after the last aligned pair (global only)
    gap_residue : None or float64 (K,): a weight added for every residue facing
        a gap, by its code

    Returns
    -------
    scores : float64 (n_pairs,) best (augmented) scores
    partners : int64 like codes_a, the aligned index in b of each residue of a, or -1
    """
    cdef Py_ssize_t n_pairs = offsets_a.shape[0] - 1
    cdef Py_ssize_t K = substitution.shape[0]
    if offsets_b.shape[0] != n_pairs + 1 or n_pairs < 0:
        raise ValueError("offsets_a and offsets_b must have the same length >= 1")
    if substitution.shape[1] != K or K == 0:
        raise ValueError("substitution must be a non-empty square matrix")
    if offsets_a[n_pairs] != codes_a.shape[0] or offsets_b[n_pairs] != codes_b.shape[0]:
        raise ValueError("offsets do not match the code arrays")
    cdef bint augment = ref_a is not None
    cdef bint end_gaps = end_gap_open is not None
    if end_gaps != (end_gap_extend is not None):
        raise ValueError("end_gap_open and end_gap_extend go together")
    if end_gaps and local:
        raise ValueError("end gap weights apply to global alignment only")
    cdef double end_open = float(end_gap_open) if end_gaps else 0.0
    cdef double end_extend = float(end_gap_extend) if end_gaps else 0.0
    cdef const double[::1] gres
    cdef const double* gres_ptr = NULL
    if gap_residue is not None:
        gres = gap_residue
        if gres.shape[0] != K:
            raise ValueError("gap_residue must have one weight per symbol (%d)" % K)
        gres_ptr = &gres[0]
    cdef const int64_t[::1] ra
    cdef const int64_t[::1] rb
    if augment:
        ra = ref_a
        rb = ref_b
        if ra.shape[0] != codes_a.shape[0] or rb.shape[0] != codes_b.shape[0]:
            raise ValueError("ref_a / ref_b must have the shapes of codes_a / codes_b")
        if q_loss and np.any(np.asarray(rb) != -1):
            raise ValueError("q_loss needs ref_b = -1 everywhere")
    scores_arr = np.zeros(n_pairs, dtype=np.float64)
    partners_arr = np.full(codes_a.shape[0], -1, dtype=np.int64)
    cdef double[::1] scores = scores_arr
    cdef int64_t[::1] partners = partners_arr
    cdef Py_ssize_t p, m, n, max_cells = 1, max_n = 1
    for p in range(n_pairs):
        m = offsets_a[p + 1] - offsets_a[p]
        n = offsets_b[p + 1] - offsets_b[p]
        if m < 0 or n < 0:
            raise ValueError("offsets must be non-decreasing")
        max_cells = max(max_cells, (m + 1) * (n + 1))
        max_n = max(max_n, n + 1)
    cdef double* rows = <double*>malloc(6 * max_n * sizeof(double))
    cdef uint8_t* back = <uint8_t*>malloc(max_cells * sizeof(uint8_t))
    if rows == NULL or back == NULL:
        free(rows)
        free(back)
        raise MemoryError("cannot allocate the alignment workspace")
    cdef const int64_t* rap
    cdef const int64_t* rbp
    cdef int32_t dummy = 0
    cdef int64_t dummy64 = 0
    try:
        with nogil:
            for p in range(n_pairs):
                m = offsets_a[p + 1] - offsets_a[p]
                n = offsets_b[p + 1] - offsets_b[p]
                rap = NULL
                rbp = NULL
                if augment:
                    rap = &ra[offsets_a[p]] if m > 0 else <const int64_t*>&dummy64
                    rbp = &rb[offsets_b[p]] if n > 0 else <const int64_t*>&dummy64
                scores[p] = align_pair(
                    &codes_a[offsets_a[p]] if m > 0 else <const int32_t*>&dummy, m,
                    &codes_b[offsets_b[p]] if n > 0 else <const int32_t*>&dummy, n,
                    &substitution[0, 0], K, gap_open, gap_extend, local,
                    rap, rbp, loss_weight, q_loss, rows, back,
                    &partners[offsets_a[p]] if m > 0 else &dummy64,
                    end_gaps, end_open, end_extend, gres_ptr)
    finally:
        free(rows)
        free(back)
    return scores_arr, partners_arr


# -- slack rescaling: the DP with a loss-count dimension ------------------------------
#
# argmax_y Delta(y) (1 + s(y) - s(y_ref)) is not decomposable, but for each loss
# count L the best score among the alignments with exactly that loss is: the
# tables below carry one value per (cell, state, L), the same transitions as
# align_pair with the cell's loss count moving L (0, 1 or 2 per cell), and the
# rescaled argmax is chosen over L at the end.  Memory and time are
# (m + 1)(n + 1)(L_max + 1) per state (L_max = m + n, or the number of
# reference pairs for the Q-score loss); the traceback recomputes the
# predecessors from the tables (no pointers).

cdef inline Py_ssize_t _tab(Py_ssize_t i, Py_ssize_t j, Py_ssize_t L, Py_ssize_t n1,
                            Py_ssize_t L1) noexcept nogil:
    return (i * n1 + j) * L1 + L


def slack_rescaled_align(const int32_t[::1] a, const int32_t[::1] b,
                         const double[:, ::1] substitution, double gap_open,
                         double gap_extend, bint local, const int64_t[::1] ref_a,
                         const int64_t[::1] ref_b, double loss_weight, bint q_loss,
                         double ref_score, Py_ssize_t max_entries=50000000):
    """Exact slack-rescaled argmax of one pair (see the comment above).

    Returns ``(value, loss count, partners)`` with value
    ``loss_weight * L * (1 + s(y) - ref_score)`` maximal (0 for the reference
    itself, L = 0).  ``ref_b`` must be -1 everywhere with ``q_loss``.  Raises
    ``ValueError`` when the tables would exceed ``max_entries`` values per state.
    """
    cdef Py_ssize_t m = a.shape[0], n = b.shape[0], K = substitution.shape[0]
    cdef Py_ssize_t i, j, L, Lmax, n1 = n + 1, L1, inc, k, best_L = 0, state, end_i = 0, end_j = 0
    cdef Py_ssize_t total_a = 0, total_b = 0, lstart, lend
    cdef double open_step = gap_open + gap_extend, v, best, sub, value, best_value = 0.0
    if substitution.shape[1] != K or K == 0:
        raise ValueError("substitution must be a non-empty square matrix")
    if ref_a.shape[0] != m or ref_b.shape[0] != n:
        raise ValueError("ref_a / ref_b must have the lengths of a / b")
    for i in range(m):
        if a[i] < 0 or a[i] >= K or ref_a[i] < -1 or ref_a[i] >= n:
            raise ValueError("a code or reference partner of a is out of range")
        total_a += ref_a[i] >= 0
    for j in range(n):
        if b[j] < 0 or b[j] >= K or ref_b[j] < -1 or ref_b[j] >= m:
            raise ValueError("a code or reference partner of b is out of range")
        total_b += ref_b[j] >= 0
    if q_loss and total_b:
        raise ValueError("q_loss needs ref_b = -1 everywhere")
    Lmax = total_a if q_loss else m + n
    L1 = Lmax + 1
    if (m + 1) * n1 * L1 > max_entries:
        raise ValueError("exact slack rescaling of a %d x %d pair needs %d table entries per "
                         "state, above max_entries=%d; use rescaling='margin'"
                         % (m, n, (m + 1) * n1 * L1, max_entries))
    cdef double[::1] TM = np.full((m + 1) * n1 * L1, -INFINITY)
    cdef double[::1] TX = np.full((m + 1) * n1 * L1, -INFINITY)
    cdef double[::1] TY = np.full((m + 1) * n1 * L1, -INFINITY)
    cdef int64_t[::1] pa = np.zeros(m + 1, dtype=np.int64)   # prefix counts of ref pairs
    cdef int64_t[::1] pb = np.zeros(n + 1, dtype=np.int64)
    for i in range(m):
        pa[i + 1] = pa[i] + (ref_a[i] >= 0)
    for j in range(n):
        pb[j + 1] = pb[j] + (ref_b[j] >= 0)
    if not local:
        TM[_tab(0, 0, 0, n1, L1)] = 0.0
    for i in range(m + 1):
        for j in range(n + 1):
            if i >= 1 and j >= 1:                       # M: pair (a[i-1], b[j-1])
                sub = substitution[a[i - 1], b[j - 1]]
                if q_loss:
                    inc = ref_a[i - 1] >= 0 and ref_a[i - 1] != j - 1
                else:
                    inc = (ref_a[i - 1] != j - 1) + (ref_b[j - 1] != i - 1)
                for L in range(inc, L1):
                    k = _tab(i - 1, j - 1, L - inc, n1, L1)
                    best = TM[k]
                    if TX[k] > best:
                        best = TX[k]
                    if TY[k] > best:
                        best = TY[k]
                    TM[_tab(i, j, L, n1, L1)] = best + sub
                if local:                               # a fresh start here
                    lstart = pa[i - 1] + pb[j - 1] + inc
                    k = _tab(i, j, lstart, n1, L1)
                    if sub > TM[k]:
                        TM[k] = sub
            if i >= 1:                                  # X: a[i-1] against a gap
                inc = ref_a[i - 1] >= 0
                for L in range(inc, L1):
                    k = _tab(i - 1, j, L - inc, n1, L1)
                    best = TM[k] + open_step
                    v = TX[k] + gap_extend
                    if v > best:
                        best = v
                    TX[_tab(i, j, L, n1, L1)] = best
            if j >= 1:                                  # Y: b[j-1] against a gap
                inc = ref_b[j - 1] >= 0
                for L in range(inc, L1):
                    k = _tab(i, j - 1, L - inc, n1, L1)
                    best = TM[k] + open_step
                    v = TX[k] + open_step
                    if v > best:
                        best = v
                    v = TY[k] + gap_extend
                    if v > best:
                        best = v
                    TY[_tab(i, j, L, n1, L1)] = best
    # the rescaled argmax over L (and over the end cell in local mode)
    state = -1                                           # -1: the reference (value 0)
    best_value = 0.0
    if local:
        lend = total_a + total_b                         # the empty alignment
        value = loss_weight * lend * (1.0 + 0.0 - ref_score)
        if lend > 0 and value > best_value:
            best_value, best_L, state = value, lend, 3
        for i in range(1, m + 1):
            for j in range(1, n + 1):
                lend = (total_a - pa[i]) + (total_b - pb[j])
                for L in range(1, L1):
                    if L < lend:
                        continue
                    v = TM[_tab(i, j, L - lend, n1, L1)]
                    if v == -INFINITY:
                        continue
                    value = loss_weight * L * (1.0 + v - ref_score)
                    if value > best_value:
                        best_value, best_L, state, end_i, end_j = value, L, 0, i, j
    else:
        for L in range(1, L1):
            k = _tab(m, n, L, n1, L1)
            for v in (TM[k], TX[k], TY[k]):
                if v == -INFINITY:
                    continue
                value = loss_weight * L * (1.0 + v - ref_score)
                if value > best_value:
                    best_value, best_L = value, L
        if best_L > 0:
            k = _tab(m, n, best_L, n1, L1)
            state = 0 if TM[k] >= TX[k] and TM[k] >= TY[k] else (1 if TX[k] >= TY[k] else 2)
            end_i, end_j = m, n
    partners = np.full(m, -1, dtype=np.int64)
    if state == -1:                                      # the reference is the argmax
        return 0.0, 0, np.asarray(ref_a).copy()
    if state == 3:                                       # the empty local alignment
        return best_value, best_L, partners
    i, j = end_i, end_j
    L = best_L - ((total_a - pa[i]) + (total_b - pb[j]) if local else 0)
    while i > 0 or j > 0:
        k = _tab(i, j, L, n1, L1)
        if state == 0:
            partners[i - 1] = j - 1
            sub = substitution[a[i - 1], b[j - 1]]
            if q_loss:
                inc = ref_a[i - 1] >= 0 and ref_a[i - 1] != j - 1
            else:
                inc = (ref_a[i - 1] != j - 1) + (ref_b[j - 1] != i - 1)
            if local and L == pa[i - 1] + pb[j - 1] + inc and TM[k] == sub:
                break                                    # the alignment starts here
            k = _tab(i - 1, j - 1, L - inc, n1, L1)
            if TM[k] + sub == TM[_tab(i, j, L, n1, L1)]:
                state = 0
            elif TX[k] + sub == TM[_tab(i, j, L, n1, L1)]:
                state = 1
            else:
                state = 2
            i -= 1
            j -= 1
            L -= inc
        elif state == 1:
            inc = ref_a[i - 1] >= 0
            k = _tab(i - 1, j, L - inc, n1, L1)
            state = 0 if TM[k] + open_step == TX[_tab(i, j, L, n1, L1)] else 1
            i -= 1
            L -= inc
        else:
            inc = ref_b[j - 1] >= 0
            k = _tab(i, j - 1, L - inc, n1, L1)
            v = TY[_tab(i, j, L, n1, L1)]
            if TM[k] + open_step == v:
                state = 0
            elif TX[k] + open_step == v:
                state = 1
            else:
                state = 2
            j -= 1
            L -= inc
    return best_value, best_L, partners
