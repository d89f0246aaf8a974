"""Pairwise sequence alignment: scoring, alignment, and learning the scores.

* :class:`SubstitutionMatrix` -- an alphabet and a symmetric score matrix
  (:meth:`SubstitutionMatrix.blosum62` reads BLOSUM62 through
  :func:`linclass.datasets.load_balibase`'s data).
* :func:`align` -- global (Needleman--Wunsch) or local (Smith--Waterman)
  alignment with affine gap costs (Gotoh's DP, in Cython).
* :class:`AlignmentLearner` -- learns the substitution matrix and the gap
  costs from reference alignments with the structured perceptron or the
  structural SVM (:class:`~linclass.alignment.structure.AlignmentStructure`).
* :func:`alignment_accuracy` -- the fraction of the reference's aligned
  residue pairs that an alignment recovers (BAliBASE's "SP"/Q score for two
  sequences).

Gap costs follow BLAST's convention: a gap run of length ``L`` costs
``gap_open + L * gap_extend`` ("11/1" = ``gap_open=11, gap_extend=1``; in
Biopython's ``PairwiseAligner`` that is ``open_gap_score=-12,
extend_gap_score=-1``).  Gaps at the ends of a global alignment cost the same
as internal gaps.

References
----------
Needleman and Wunsch (1970), J. Mol. Biol. 48:443.  Smith and Waterman
(1981), J. Mol. Biol. 147:195.  Gotoh (1982), J. Mol. Biol. 162:705.
Yu, Joachims, Elber and Pillardy (2008), Support vector training of protein
alignment models. J. Comput. Biol. 15:867.
"""
import numpy as np

from .._validation import check_is_fitted, check_positive, check_random_state
from ..base import BaseEstimator
from .structure import AlignmentStructure
from ..structured.learners import StructuredPerceptron, StructuredSVM

__all__ = ["SubstitutionMatrix", "Alignment", "align", "AlignmentLearner",
           "alignment_accuracy", "partners_from_rows", "rows_from_partners"]


class SubstitutionMatrix:
    """An alphabet and a symmetric (K, K) substitution score matrix.

    Parameters
    ----------
    alphabet : str or sequence of single characters
    matrix : array of shape (K, K), symmetric, finite
    """

    def __init__(self, alphabet, matrix):
        self.alphabet = "".join(alphabet)
        if np.asarray(matrix).dtype.kind == "c":
            # asarray(dtype=float64) would drop the imaginary parts
            raise ValueError("matrix holds complex numbers; substitution scores must be "
                             "real")
        matrix = np.asarray(matrix, dtype=np.float64)
        K = len(self.alphabet)
        if matrix.shape != (K, K):
            raise ValueError("matrix must have shape (%d, %d) for an alphabet of %d symbols, "
                             "got %r" % (K, K, K, matrix.shape))
        if not np.isfinite(matrix).all():
            raise ValueError("matrix contains NaN or infinite values")
        if not np.allclose(matrix, matrix.T):
            raise ValueError("the substitution matrix must be symmetric")
        self.matrix = matrix
        self.structure = AlignmentStructure(self.alphabet)   # validates the alphabet

    @classmethod
    def blosum62(cls, *, data_home=None):
        """BLOSUM62 (24 symbols ``ARNDCQEGHILKMFPSTWYVBZX*``) from the data directory."""
        from ..datasets import load_blosum62
        alphabet, matrix = load_blosum62(data_home=data_home)
        return cls(alphabet, matrix)

    @classmethod
    def identity(cls, alphabet, *, match=1.0, mismatch=-1.0):
        """``match`` on the diagonal, ``mismatch`` elsewhere."""
        K = len(alphabet)
        return cls(alphabet, np.where(np.eye(K, dtype=bool), float(match), float(mismatch)))

    def encode(self, sequence):
        """int32 codes; ``ValueError`` naming the first character outside the alphabet."""
        return self.structure.encode(sequence)

    def weights(self, gap_open, gap_extend):
        """The :class:`AlignmentStructure` weight vector (gap costs become negative weights)."""
        return self.structure.substitution_weights(self.matrix, -float(gap_open),
                                                   -float(gap_extend))

    def __repr__(self):
        return "SubstitutionMatrix(%r, %d x %d)" % (self.alphabet, *self.matrix.shape)


class Alignment:
    """Result of :func:`align`.

    Attributes
    ----------
    score : float
    partners : int64 array (len(a),)
        Index of the residue of ``b`` aligned with each residue of ``a``, or -1.
    pairs : int64 array (n_aligned, 2)
        The aligned ``(i, j)`` pairs.
    rows : (str, str)
        The two gapped rows (``-`` for gaps); in local mode only the aligned
        region.
    """

    __slots__ = ("score", "partners", "pairs", "rows")

    def __init__(self, score, partners, pairs, rows):
        self.score = score
        self.partners = partners
        self.pairs = pairs
        self.rows = rows

    def __repr__(self):
        return "Alignment(score=%g)\n%s\n%s" % (self.score, self.rows[0], self.rows[1])


def _check_mode(mode):
    if mode not in ("global", "local"):
        raise ValueError("mode must be 'global' or 'local', got %r" % (mode,))


def _check_gap(value, name):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError("%s must be a number, got %r" % (name, value)) from None
    if not np.isfinite(value):
        raise ValueError("%s must be finite" % name)
    return value


def rows_from_partners(a, b, partners, *, local=False):
    """Gapped rows of an alignment given as a partner array (X-before-Y order)."""
    partners = np.asarray(partners, dtype=np.int64)
    i_idx = np.flatnonzero(partners >= 0)
    if local:
        if i_idx.size == 0:
            return "", ""
        i_lo, i_hi = i_idx[0], i_idx[-1] + 1
        j_lo, j_hi = partners[i_idx[0]], partners[i_idx[-1]] + 1
    else:
        i_lo, i_hi, j_lo, j_hi = 0, len(a), 0, len(b)
    row_a, row_b = [], []
    j = j_lo
    for i in range(i_lo, i_hi):
        p = partners[i]
        if p < 0:
            row_a.append(a[i])
            row_b.append("-")
            continue
        while j < p:
            row_a.append("-")
            row_b.append(b[j])
            j += 1
        row_a.append(a[i])
        row_b.append(b[p])
        j = p + 1
    while j < j_hi:
        row_a.append("-")
        row_b.append(b[j])
        j += 1
    return "".join(row_a), "".join(row_b)


def partners_from_rows(row_a, row_b):
    """Partner array of ``a`` from two gapped rows of equal length (``-`` or ``.`` gaps)."""
    if len(row_a) != len(row_b):
        raise ValueError("the two alignment rows have different lengths (%d and %d)"
                         % (len(row_a), len(row_b)))
    partners = []
    j = 0
    for ca, cb in zip(row_a, row_b):
        gap_a, gap_b = ca in "-.", cb in "-."
        if not gap_a:
            partners.append(-1 if gap_b else j)
        if not gap_b:
            j += 1
    return np.array(partners, dtype=np.int64)


def align(a, b, *, substitution, gap_open=11.0, gap_extend=1.0, mode="global",
          end_gap_open=None, end_gap_extend=None):
    """Best alignment of two sequences with affine gap costs.

    Parameters
    ----------
    a, b : str
    substitution : SubstitutionMatrix
    gap_open, gap_extend : float
        A gap run of length ``L`` costs ``gap_open + L * gap_extend``.
    mode : {"global", "local"}
    end_gap_open, end_gap_extend : None or float, default=None
        Global mode: the costs of the terminal gap runs (before the first and
        after the last aligned pair); None: the internal costs.

    Returns
    -------
    Alignment

    Examples
    --------
    >>> from linclass.alignment import SubstitutionMatrix, align
    >>> m = SubstitutionMatrix.identity("ACGT", match=1, mismatch=-1)
    >>> align("ACGTACGT", "ACGACGT", substitution=m, gap_open=1, gap_extend=1).rows
    ('ACGTACGT', 'ACG-ACGT')
    """
    if not isinstance(substitution, SubstitutionMatrix):
        raise ValueError("substitution must be a SubstitutionMatrix, got %s"
                         % type(substitution).__name__)
    _check_mode(mode)
    gap_open = _check_gap(gap_open, "gap_open")
    gap_extend = _check_gap(gap_extend, "gap_extend")
    end_gaps = end_gap_open is not None or end_gap_extend is not None
    if end_gaps and mode != "global":
        raise ValueError("end_gap_open / end_gap_extend apply to mode='global' only")
    end_open = gap_open if end_gap_open is None else _check_gap(end_gap_open, "end_gap_open")
    end_extend = (gap_extend if end_gap_extend is None
                  else _check_gap(end_gap_extend, "end_gap_extend"))
    structure = AlignmentStructure(substitution.alphabet, mode=mode, end_gaps=end_gaps)
    w = structure.substitution_weights(substitution.matrix, -gap_open, -gap_extend,
                                       -end_open, -end_extend)
    scores, (partners,) = structure.align(w, [(a, b)])
    i = np.flatnonzero(partners >= 0)
    return Alignment(float(scores[0]), partners, np.column_stack([i, partners[i]]),
                     rows_from_partners(a, b, partners, local=mode == "local"))


def alignment_accuracy(reference, predicted):
    """Fraction of the reference's aligned pairs found in the prediction.

    Parameters
    ----------
    reference, predicted : partner arrays of ``a`` (or lists of them: then the
        pooled fraction over all pairs of all alignments).

    Returns
    -------
    float
        ``|pairs(reference) & pairs(predicted)| / |pairs(reference)|``
        (NaN if the reference aligns nothing).
    """
    if len(reference) and not np.isscalar(reference[0]):
        if len(reference) != len(predicted):
            raise ValueError("reference and predicted have different numbers of alignments")
        correct = total = 0
        for r, p in zip(reference, predicted):
            c, t = _correct_pairs(r, p)
            correct += c
            total += t
    else:
        correct, total = _correct_pairs(reference, predicted)
    return correct / total if total else float("nan")


def _correct_pairs(reference, predicted):
    reference = np.asarray(reference, dtype=np.int64)
    predicted = np.asarray(predicted, dtype=np.int64)
    if reference.shape != predicted.shape:
        raise ValueError("alignments of sequences of different lengths (%r vs %r)"
                         % (reference.shape, predicted.shape))
    aligned = reference >= 0
    return int(np.count_nonzero(aligned & (reference == predicted))), int(aligned.sum())


class AlignmentLearner(BaseEstimator):
    """Learn a substitution matrix and gap costs from reference alignments.

    The weights of :class:`~linclass.alignment.structure.AlignmentStructure`
    (one per unordered residue pair, gap open, gap extend) are fitted by the
    averaged structured perceptron (Collins, 2002) or the 1-slack structural
    SVM (Joachims et al., 2009; for alignment: Yu et al., 2008) with the
    residue loss (wrongly aligned residues of both sequences) or the Q-score
    loss (reference pairs missed, ``loss="q"``).

    Parameters
    ----------
    alphabet : str
        Residue symbols (e.g. ``SubstitutionMatrix.blosum62().alphabet``).
    mode : {"global", "local"}, default="global"
    learner : {"perceptron", "svm"}, default="perceptron"
    init_substitution : None or array (K, K), default=None
        None: start from zero weights.  Otherwise a symmetric matrix (e.g.
        BLOSUM62) with gap costs ``init_gap_open`` / ``init_gap_extend``: the
        perceptron starts from these weights (decoding with ``w + w0``); the
        SVM gets their score as one extra feature whose weight it learns
        (so the learned model is ``w + c w0``).
    init_gap_open, init_gap_extend : float, default=11, 1
    C : float, default=1.0
        SVM only.
    max_iter : int, default=10
        Perceptron epochs, or SVM cutting-plane iterations.
    tol : float, default=1e-3
        SVM only.
    loss : {"residue", "q"}, default="residue"
        SVM only: the loss of the margin (see
        :class:`~linclass.alignment.structure.AlignmentStructure`);
        ``"q"`` is the complement of the evaluation's accuracy (Q-score).
    random_state : None or int, default=0
        Perceptron (and ``prior="center"``) example order.
    step_size : float, default=1.0
        Perceptron only: the learning rate ``eta`` of ``w <- w + eta (Phi(x, y)
        - Phi(x, y_hat))``.  Raw count updates (``eta = 1``) are far larger
        than BLOSUM62's entries and wreck a warm start (test accuracy 0.58 in
        the benchmark); ``eta`` around 0.003 keeps the learned matrix on
        BLOSUM62's scale.  Implemented by decoding with ``w + w0 / eta`` (the
        perceptron's mistakes only depend on the direction of the weights),
        so the effective weights are ``eta w + w0``.
    prior : {"feature", "center"}, default="feature"
        SVM with ``init_substitution`` only.  ``"feature"``: the start
        weights' score is one extra feature (above).  ``"center"``: a
        prior-centred structural SVM, ``w = w0 + v`` with ``w0`` the start
        weights (e.g. BLOSUM62 11/1) and ``||v||^2 / 2 + C sum_i xi_i``
        minimised, so that ``C -> 0`` gives back ``w0`` and ``C`` (chosen on
        held-out pairs) sets how far the data may move it.  The slack of a
        pair is the ramp ("hope/fear") loss ``max_y [Delta(y) + w.Phi(y)] -
        max_y [w.Phi(y) - Delta(y)]``, an upper bound of the loss of the
        predicted alignment that, unlike the hinge at the reference, does not
        ask the reference to outscore every alignment by a margin (on
        BAliBASE the references of distant homologues score far below
        BLOSUM62's optimum, and the usual hinge is smallest at ``w = 0``).  It
        is minimised by CCCP (3 rounds: fix each pair's hope alignment, then
        block-coordinate Frank--Wolfe on the convex problem, ``max_iter``
        passes at most, stopping when a pass's summed block duality gaps are
        below ``tol * C`` times the loss of aligning nothing, summed over the
        training pairs).  A round whose solution does not lower the ramp
        objective ends the loop, keeping the best iterate.
    free : {"all", "gaps"}, default="all"
        ``prior="center"`` only: which weights ``v`` may move.  ``"all"``:
        every substitution score and both gap costs; ``"gaps"``: the scale of
        ``w0``'s substitution matrix and the two gap costs (three numbers;
        fewer parameters for few training families), plus the end-gap and
        class-pair weights when ``end_gaps`` / ``residue_classes`` add them.
    end_gaps : bool, default=False
        Global mode: learn separate costs for the terminal gap runs (before
        the first and after the last aligned pair), starting from the internal
        ones (see :class:`~linclass.alignment.structure.AlignmentStructure`).
    residue_classes : None or sequence of str, default=None
        Groups of residues (e.g.
        :data:`~linclass.alignment.structure.RESIDUE_CLASSES`, 9 physico-chemical
        classes + the rest): learn one score offset per unordered class pair,
        added to the substitution matrix (starting from 0).
    gap_classes : bool, default=False
        With ``residue_classes``: learn one extra cost per class for every
        residue of that class facing a gap (residue-specific gap costs, as in
        CLUSTAL W), starting from 0.

    Attributes
    ----------
    coef_ : ndarray
        Learned weights of the structure (without the start weights).
    substitution_ : ndarray (K, K)
        Effective substitution scores.
    gap_open_, gap_extend_ : float
        Effective gap costs (positive = penalty).
    end_gap_open_, end_gap_extend_ : float
        Effective costs of the terminal gap runs (equal to the internal ones
        without ``end_gaps``).
    gap_residue_ : ndarray (K,)
        The extra cost of each symbol facing a gap (zero without
        ``gap_classes``).
    n_iter_ : int
    """

    def __init__(self, alphabet="ARNDCQEGHILKMFPSTWYVBZX*", *, mode="global",
                 learner="perceptron", init_substitution=None, init_gap_open=11.0,
                 init_gap_extend=1.0, C=1.0, max_iter=10, tol=1e-3, random_state=0,
                 step_size=1.0, loss="residue", prior="feature", free="all", end_gaps=False,
                 residue_classes=None, gap_classes=False):
        self.gap_classes = gap_classes
        self.end_gaps = end_gaps
        self.residue_classes = residue_classes
        self.prior = prior
        self.free = free
        self.step_size = step_size
        self.loss = loss
        self.alphabet = alphabet
        self.mode = mode
        self.learner = learner
        self.init_substitution = init_substitution
        self.init_gap_open = init_gap_open
        self.init_gap_extend = init_gap_extend
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _structure(self):
        _check_mode(self.mode)
        if self.learner not in ("perceptron", "svm"):
            raise ValueError("learner must be 'perceptron' or 'svm', got %r" % (self.learner,))
        if self.prior not in ("feature", "center"):
            raise ValueError("prior must be 'feature' or 'center', got %r" % (self.prior,))
        if self.free not in ("all", "gaps"):
            raise ValueError("free must be 'all' or 'gaps', got %r" % (self.free,))
        if self.prior == "center" and (self.learner != "svm" or self.init_substitution is None):
            raise ValueError("prior='center' needs learner='svm' and init_substitution "
                             "(the weights the SVM is centred on)")
        extra = dict(end_gaps=self.end_gaps, residue_classes=self.residue_classes,
                     gap_classes=self.gap_classes)
        plain = AlignmentStructure(self.alphabet, mode=self.mode, loss=self.loss, **extra)
        if self.init_substitution is None or self.prior == "center":
            return plain
        w0 = plain.substitution_weights(
            SubstitutionMatrix(self.alphabet, self.init_substitution).matrix,
            -_check_gap(self.init_gap_open, "init_gap_open"),
            -_check_gap(self.init_gap_extend, "init_gap_extend"))
        if self.learner == "perceptron":
            return AlignmentStructure(self.alphabet, mode=self.mode,
                                      base_weights=w0 / self._step(), loss=self.loss, **extra)
        return AlignmentStructure(self.alphabet, mode=self.mode, prior_weights=w0,
                                  loss=self.loss, **extra)

    def _step(self):
        step = float(self.step_size)
        if not (np.isfinite(step) and step > 0):
            raise ValueError("step_size must be a positive finite number, got %r"
                             % (self.step_size,))
        return step

    def fit(self, pairs, references):
        """Fit from ``pairs`` [(a, b), ...] and their reference alignments.

        ``references``: partner arrays, or pairs of gapped rows ``(row_a, row_b)``.
        """
        check_positive(self.max_iter, "max_iter", integer=True)
        self._step()
        structure = self._structure()
        pairs = list(pairs)
        references = [self._reference(r) for r in references]
        if self.prior == "center":
            check_positive(self.C, "C")
            check_positive(self.tol, "tol")
            w0 = structure.substitution_weights(
                SubstitutionMatrix(self.alphabet, self.init_substitution).matrix,
                -_check_gap(self.init_gap_open, "init_gap_open"),
                -_check_gap(self.init_gap_extend, "init_gap_extend"))
            model = _PriorCentredSVM(structure, w0, C=float(self.C), free=self.free,
                                     max_iter=self.max_iter, tol=float(self.tol),
                                     random_state=self.random_state)
        elif self.learner == "perceptron":
            model = StructuredPerceptron(structure, max_iter=self.max_iter,
                                         random_state=self.random_state)
        else:
            model = StructuredSVM(structure, C=self.C, max_iter=self.max_iter, tol=self.tol)
        model.fit(pairs, references)
        self.coef_ = model.coef_
        self.n_iter_ = model.n_iter_
        S, gap_open, gap_extend = structure.weights(self.coef_)
        end_open, end_extend = structure.end_weights(self.coef_)
        if end_open is None:
            end_open, end_extend = gap_open, gap_extend
        gap_residue = structure.gap_residue_weights(self.coef_)
        if gap_residue is None:
            gap_residue = np.zeros(structure.n_symbols)
        if self.learner == "perceptron":     # effective weights eta * (w + w0 / eta)
            step = self._step()
            S, gap_open, gap_extend = step * S, step * gap_open, step * gap_extend
            end_open, end_extend = step * end_open, step * end_extend
            gap_residue = step * gap_residue
        self.gap_residue_ = -gap_residue
        self.substitution_ = S
        self.gap_open_ = -gap_open
        self.gap_extend_ = -gap_extend
        self.end_gap_open_ = -end_open
        self.end_gap_extend_ = -end_extend
        return self

    @staticmethod
    def _reference(r):
        if isinstance(r, tuple) and len(r) == 2 and all(isinstance(v, str) for v in r):
            return partners_from_rows(*r)
        return np.asarray(r)

    def _fitted_structure(self):
        check_is_fitted(self, "substitution_")
        end_gaps = self._end_costs() != (self.gap_open_, self.gap_extend_)
        gap_residue = getattr(self, "gap_residue_", None)
        per_symbol = gap_residue is not None and bool(np.any(gap_residue != 0))
        # residue-specific gap costs: every symbol its own class
        structure = AlignmentStructure(
            self.alphabet, mode=self.mode, end_gaps=end_gaps,
            residue_classes=tuple(self.alphabet) if per_symbol else None,
            gap_classes=per_symbol)
        end_open, end_extend = self._end_costs()
        w = structure.substitution_weights(self.substitution_, -self.gap_open_,
                                           -self.gap_extend_, -end_open, -end_extend)
        if per_symbol:
            w[structure.gap_class_index] = -gap_residue
        return structure, w

    def _end_costs(self):
        # models saved before end gaps existed have no end_gap_* attributes
        return (getattr(self, "end_gap_open_", self.gap_open_),
                getattr(self, "end_gap_extend_", self.gap_extend_))

    def predict(self, pairs):
        """Partner arrays of the best alignments of ``pairs`` under the learned scores."""
        structure, w = self._fitted_structure()
        return structure.batch_decode(w, structure.batch_inputs(list(pairs)))

    def align(self, a, b):
        """:func:`align` with the learned scores (and gap costs)."""
        structure, w = self._fitted_structure()
        scores, (partners,) = structure.align(w, [(a, b)])
        i = np.flatnonzero(partners >= 0)
        return Alignment(float(scores[0]), partners, np.column_stack([i, partners[i]]),
                         rows_from_partners(a, b, partners, local=self.mode == "local"))

    def score(self, pairs, references):
        """Pooled :func:`alignment_accuracy` of the predictions."""
        references = [self._reference(r) for r in references]
        return alignment_accuracy(references, self.predict(pairs))


_CCCP_ROUNDS = 3        # prior="center": rounds of (fix the hope alignments, solve)


class _PriorCentredSVM:
    """The prior-centred ramp-loss structural SVM of ``AlignmentLearner(prior="center")``.

    Minimises ``||v||^2 / 2 + C sum_i [max_y (Delta_i(y) + w.Phi_i(y))
    - max_y (w.Phi_i(y) - Delta_i(y))]`` over ``w = w0 + B v`` (``B`` the
    identity, or for ``free="gaps"`` the columns ``(w0's substitution part,
    e_open, e_extend, ...)``, a unit vector for every non-pair weight) by
    CCCP: each round fixes the hope alignments
    ``h_i = argmax_y w.Phi_i(y) - Delta_i(y)`` at the current ``w`` and solves
    the convex structural SVM whose "correct" outputs are the ``h_i`` by
    block-coordinate Frank--Wolfe (Lacoste-Julien et al., 2013) started at
    ``v = 0``: a block's corner is ``C B^T (Phi(h_i) - Phi(y*))`` with linear
    part ``C (Delta(y*) - Delta(h_i) - w0 . (Phi(h_i) - Phi(y*)))`` (the
    offset ``w0`` moves into the loss).  Rounds whose hope alignments stop
    changing end the loop early, and so does a round whose (inexact, at most
    ``max_iter`` passes) solution does not lower the ramp objective: the
    best iterate is kept, so the result is never worse than ``w0`` on the
    training objective (``objective_``).
    """

    def __init__(self, structure, w0, *, C, free, max_iter, tol, random_state):
        self.structure, self.w0, self.C = structure, np.asarray(w0, dtype=np.float64), C
        self.free, self.max_iter, self.tol = free, max_iter, tol
        self.random_state = random_state

    def _basis(self):
        s = self.structure
        if self.free == "all":
            return None
        # the matrix's scale, then every non-pair weight (gaps, end gaps, class pairs)
        B = np.zeros((s.n_features, 1 + s.n_features - s.n_pairs))
        B[:s.n_pairs, 0] = self.w0[:s.n_pairs]
        B[s.n_pairs:, 1:] = np.eye(s.n_features - s.n_pairs)
        return B

    def _phi(self, x, y, B):
        idx, val = self.structure.joint_feature(x, y)
        out = np.bincount(idx, weights=val, minlength=self.structure.n_features)
        return out if B is None else B.T @ out

    def fit(self, pairs, references):
        s, C = self.structure, self.C
        X = s.batch_inputs(pairs)
        if len(X) == 0:
            raise ValueError("at least one pair is required")
        if len(references) != len(X):
            raise ValueError("%d pairs but %d references" % (len(X), len(references)))
        Y = []
        for p, (x, r) in enumerate(zip(X, references)):
            try:
                Y.append(s._partners(x, r))
            except ValueError as exc:
                raise ValueError("reference %d: %s" % (p, exc)) from None
        B = self._basis()
        rank = s.n_features if B is None else B.shape[1]
        full = (lambda u: u) if B is None else (lambda u: B @ u)
        units = sum(s.loss(y, np.full(y.size, -1, np.int64)) for y in Y) or 1.0
        rng = check_random_state(self.random_state)
        n = len(X)
        v = np.zeros(rank)
        hopes = None
        self.n_iter_ = 0

        def objective(v):
            """The ramp-loss objective (what CCCP minimises) at ``w0 + B v``."""
            w = self.w0 + full(v)
            fear = s.batch_loss_augmented_decode(w, X, Y)
            hope = s.batch_loss_diminished_decode(w, X, Y)
            ramp = sum(s.score(w, x, f) + s.loss(y, f) - s.score(w, x, h) + s.loss(y, h)
                       for x, y, f, h in zip(X, Y, fear, hope))
            return 0.5 * float(v @ v) + C * ramp

        best_v, best_objective = v.copy(), objective(v)
        self.objective_ = best_objective
        for _ in range(_CCCP_ROUNDS):
            new = s.batch_loss_diminished_decode(self.w0 + full(best_v), X, Y)
            if hopes is not None and all(np.array_equal(a, b) for a, b in zip(hopes, new)):
                break
            hopes = new
            hope_phi = [self._phi(x, h, B) for x, h in zip(X, hopes)]
            hope_loss = np.array([s.loss(y, h) for y, h in zip(Y, hopes)])
            hope_base = np.array([s.score(self.w0, x, h) for x, h in zip(X, hopes)])
            v = np.zeros(rank)
            blocks = np.zeros((n, rank))
            lin = np.zeros(n)
            for _ in range(self.max_iter):
                self.n_iter_ += 1
                gap = 0.0
                for i in rng.permutation(n):
                    w = self.w0 + full(v)
                    y_star = s.loss_augmented_decode(w, X[i], Y[i])
                    psi = hope_phi[i] - self._phi(X[i], y_star, B)
                    offset = hope_base[i] - s.score(self.w0, X[i], y_star)
                    ls = C * (s.loss(Y[i], y_star) - hope_loss[i] - offset)
                    d = C * psi - blocks[i]
                    g = ls - lin[i] - float(v @ d)
                    gap += g
                    q = float(d @ d)
                    if g <= 0.0 or q <= 0.0:
                        continue
                    gamma = min(1.0, g / q)
                    blocks[i] += gamma * d
                    v += gamma * d
                    lin[i] += gamma * (ls - lin[i])
                if gap <= self.tol * C * units:
                    break
            # safeguard: the inner solve is inexact (at most max_iter passes), so a
            # round may end above the objective it started from; keep the best
            # iterate and stop there (CCCP with exact solves never goes up)
            value = objective(v)
            if not value < best_objective:
                break
            best_v, best_objective = v.copy(), value
        self.objective_ = best_objective
        self.coef_ = self.w0 + full(best_v)
        return self
