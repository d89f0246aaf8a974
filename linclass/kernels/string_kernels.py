"""String and sequence kernels: the spectrum kernel and the gap-weighted subsequence kernel.

Both take raw strings (a string is a sequence of characters) or token
sequences (lists/tuples of hashable tokens, e.g. words) and return a Gram
matrix.  They are kernel objects (:class:`~linclass.kernels.composition.Kernel`):
call them as ``kernel(A, B)``, compose them (``+``, ``*``, scaling,
normalisation), and hand them to :class:`KernelRidge`,
:class:`KernelRidgeClassifier` and :class:`KernelLogisticRegression` as
``kernel=``; for :class:`SVC` and :class:`KernelPerceptron` pass the matrix
with ``kernel="precomputed"`` (they take numeric arrays only).

``SpectrumKernel(k)``
    ``k(s, t) = sum_u count_u(s) count_u(t)`` over all contiguous k-grams
    ``u`` (Leslie, Eskin & Noble 2002): the inner product of the explicit
    k-gram count vectors (:meth:`SpectrumKernel.feature_map`).
``SubsequenceKernel(n, decay)``
    ``k(s, t) = sum_u sum_{i: s[i] = u} sum_{j: t[j] = u} decay^(l(i) + l(j))``
    over all (non-contiguous) subsequences ``u`` of length ``n``, where
    ``l(i) = i_n - i_1 + 1`` is the span of the occurrence (Lodhi et al.
    2002), by the ``O(n |s| |t|)`` dynamic programme; ``normalize=True`` (the
    default, as in the paper) divides by ``sqrt(k(s, s) k(t, t))``.

The hot loops (the k-gram postings products, the subsequence DP) are in
``linclass._core._string_kernels`` and release the GIL.

References
----------
Leslie, C., Eskin, E. & Noble, W. S. (2002). The spectrum kernel: a string
kernel for SVM protein classification. Pacific Symposium on Biocomputing 7.
Lodhi, H., Saunders, C., Shawe-Taylor, J., Cristianini, N. & Watkins, C.
(2002). Text classification using string kernels. JMLR 2, 419-444.
Shawe-Taylor, J. & Cristianini, N. (2004). *Kernel Methods for Pattern
Analysis*, Cambridge University Press, chapter 11.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .composition import Kernel

__all__ = ["SpectrumKernel", "SubsequenceKernel", "encode_sequences"]


def _check_sequences(X, name):
    if isinstance(X, (str, bytes)):
        raise ValueError("%s must be a list of sequences (strings or token lists), got a "
                         "single string; wrap it in a list" % name)
    if isinstance(X, np.ndarray) and X.dtype.kind in "fc":
        raise ValueError("%s must be a list of sequences (strings or token lists), got a "
                         "numeric array of shape %r" % (name, X.shape))
    try:
        seqs = list(X)
    except TypeError:
        raise ValueError("%s must be a list of sequences (strings or token lists), got %s"
                         % (name, type(X).__name__)) from None
    for i, s in enumerate(seqs):
        if isinstance(s, bytes):
            seqs[i] = s.decode("utf-8")
        elif isinstance(s, str):
            continue
        elif isinstance(s, np.ndarray) and s.ndim == 1:
            seqs[i] = s.tolist()
        elif not isinstance(s, (list, tuple)):
            raise ValueError("%s[%d] must be a string or a list/tuple of tokens, got %s"
                             % (name, i, type(s).__name__))
    return seqs


def encode_sequences(sequences, vocabulary):
    """Symbols ids (int32) and int64 boundaries of ``sequences``; new symbols are
    added to ``vocabulary`` (a dict symbol -> id)."""
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    indptr = np.zeros(len(sequences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    symbols = np.empty(int(indptr[len(sequences)]), dtype=np.int32)
    pos = 0
    for s in sequences:
        for tok in s:
            try:
                symbols[pos] = vocabulary[tok]
            except KeyError:
                vocabulary[tok] = symbols[pos] = len(vocabulary)
            except TypeError:
                raise ValueError("tokens must be hashable, got %s" % type(tok).__name__) \
                    from None
            pos += 1
    return symbols, indptr


def _postings_gram(ka, va, pa, kb, vb, pb, symmetric):
    """Gram matrix from the sorted k-gram runs of A and B (Cython postings loop)."""
    from .._core._string_kernels import spectrum_gram_postings
    n_a, n_b = len(pa) - 1, len(pb) - 1
    owner_a = np.repeat(np.arange(n_a, dtype=np.int64), np.diff(pa))
    if symmetric:
        keys, owner, count = ka, owner_a, va
        side = np.zeros(len(ka), dtype=np.int32)
    else:
        owner_b = np.repeat(np.arange(n_b, dtype=np.int64), np.diff(pb))
        keys = np.concatenate([ka, kb])
        owner = np.concatenate([owner_a, owner_b])
        count = np.concatenate([va, vb])
        side = np.r_[np.zeros(len(ka), np.int32), np.ones(len(kb), np.int32)]
    order = np.argsort(keys, kind="stable")
    return spectrum_gram_postings(keys=keys[order], side=side[order], owner=owner[order],
                                  count=count[order], n_a=n_a, n_b=n_b, symmetric=symmetric)


class SequenceKernel(Kernel):
    """A kernel over lists of strings or token sequences (not numeric arrays)."""

    accepts_sequences = True

    def _pair_vocabulary(self, A, B):
        A = _check_sequences(A, "X")
        B = A if B is None else _check_sequences(B, "Y")
        vocabulary = {}
        a = encode_sequences(A, vocabulary)
        b = a if B is A else encode_sequences(B, vocabulary)
        return A, B, a, b, vocabulary

    def n_samples(self, X):
        """Number of samples in ``X`` (rows of a matrix, or items of a sequence)."""
        return len(_check_sequences(X, "X"))


class SpectrumKernel(SequenceKernel):
    """The k-spectrum kernel: inner product of contiguous k-gram counts.

    Parameters
    ----------
    k : int, default=3
        Length of the k-grams (characters of a string, tokens of a token list).

    Examples
    --------
    >>> from linclass.kernels import SpectrumKernel
    >>> SpectrumKernel(k=2)(["abab", "bab"])
    array([[5., 4.],
           [4., 3.]])
    """

    def __init__(self, k=3):
        self.k = k

    def _check(self):
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise ValueError("k must be an integer >= 1, got %r" % (self.k,))
        return int(self.k)

    def _runs(self, symbols, indptr, k, base):
        """Sorted k-gram keys (int64) and counts per sequence, as CSR-like runs."""
        n = len(indptr) - 1
        total = len(symbols)
        if total >= k:
            starts = np.arange(total - k + 1, dtype=np.int64)
            # a k-gram starting at i stays inside its sequence when i + k <= end(i)
            owner = np.searchsorted(indptr, starts, side="right") - 1
            valid = starts + k <= indptr[owner + 1]
            starts, owner = starts[valid], owner[valid]
            if base ** k < 2 ** 62:
                keys = np.zeros(len(starts), dtype=np.int64)
                for j in range(k):                      # Horner: keys = keys*base + sym
                    keys = keys * base + symbols[starts + j]
            else:                                       # too many possible k-grams: ids
                grams = np.stack([symbols[starts + j] for j in range(k)], axis=1)
                _, keys = np.unique(grams, axis=0, return_inverse=True)
                keys = keys.astype(np.int64).ravel()
        else:
            owner = keys = np.zeros(0, dtype=np.int64)
        # sort by (owner, key) and collapse duplicates into counts
        order = np.lexsort((keys, owner))
        owner, keys = owner[order], keys[order]
        if len(keys):
            new = np.ones(len(keys), dtype=bool)
            new[1:] = (keys[1:] != keys[:-1]) | (owner[1:] != owner[:-1])
            first = np.flatnonzero(new)
            counts = np.diff(np.append(first, len(keys))).astype(np.float64)
            keys, owner = keys[first], owner[first]
        else:
            counts = np.zeros(0)
        run_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=n), out=run_ptr[1:])
        return keys, counts, run_ptr

    def __call__(self, X, Y=None):
        """Gram matrix ``K[a, b] = k(X[a], Y[b])`` (Y defaults to X)."""
        k = self._check()
        A, B, a, b, vocabulary = self._pair_vocabulary(X, Y)
        base = max(len(vocabulary), 1)
        ka, va, pa = self._runs(a[0], a[1], k, base)
        if B is A:
            kb, vb, pb = ka, va, pa
        else:
            if base ** k >= 2 ** 62:        # ids must be shared: encode both together
                both_sym = np.concatenate([a[0], b[0]])
                both_ptr = np.concatenate([a[1], b[1][1:] + a[1][len(a[1]) - 1]])
                keys, vals, ptr = self._runs(both_sym, both_ptr, k, base)
                na = len(A)
                cut = ptr[na]
                ka, va, pa = keys[:cut], vals[:cut], ptr[:na + 1]
                kb, vb, pb = keys[cut:], vals[cut:], ptr[na:] - cut
            else:
                kb, vb, pb = self._runs(b[0], b[1], k, base)
        return _postings_gram(ka, va, pa, kb, vb, pb, B is A)

    def diag(self, X):
        """``k(x, x)`` for each sequence of X."""
        k = self._check()
        A = _check_sequences(X, "X")
        sym, ptr = encode_sequences(A, {})
        _, counts, runs = self._runs(sym, ptr, k, int(sym.max()) + 1 if len(sym) else 1)
        owner = np.repeat(np.arange(len(A)), np.diff(runs))
        return np.bincount(owner, weights=counts ** 2, minlength=len(A)).astype(np.float64)

    def feature_map(self, X, vocabulary=None):
        """Explicit k-gram count vectors (CSR) and the k-gram vocabulary.

        ``vocabulary`` maps k-gram tuples to columns; pass the one returned for
        the training data to map new data onto the same columns (unseen k-grams
        are dropped).  ``feature_map(X)[0] @ feature_map(X)[0].T`` equals
        ``self(X)``.
        """
        k = self._check()
        A = _check_sequences(X, "X")
        grow = vocabulary is None
        vocabulary = {} if grow else vocabulary
        rows, cols = [], []
        for r, s in enumerate(A):
            for i in range(len(s) - k + 1):
                gram = tuple(s[i:i + k])
                col = vocabulary.get(gram)
                if col is None:
                    if not grow:
                        continue
                    col = vocabulary[gram] = len(vocabulary)
                rows.append(r)
                cols.append(col)
        M = sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                          shape=(len(A), len(vocabulary)))
        M.sum_duplicates()
        return M, vocabulary


class SubsequenceKernel(SequenceKernel):
    """Gap-weighted subsequence kernel (string subsequence kernel, SSK).

    Parameters
    ----------
    n : int, default=2
        Length of the subsequences compared.
    decay : float in (0, 1], default=0.5
        Weight ``lambda`` per unit of span: an occurrence spanning ``l``
        symbols weighs ``decay ** l`` (1 counts every occurrence equally, small
        values favour contiguous ones).
    normalize : bool, default=True
        Divide by ``sqrt(k(s, s) k(t, t))`` (Lodhi et al. normalise this way);
        a sequence shorter than ``n`` has the zero feature vector and gets 0.

    max_pair_size : int or None, default=400_000_000
        Largest ``|s| * |t|`` of one pair of sequences the kernel accepts
        (about 4 s of work per pair: two sequences of 20,000 symbols); a
        longer pair raises ``ValueError`` naming the lengths instead of
        running for minutes.  ``None`` removes the limit.

    Notes
    -----
    Cost ``O(n |s| |t|)`` per pair (Lodhi et al. 2002, section 3.1): keep
    sequences short (characters of a sentence, tokens of a document).
    """

    def __init__(self, n=2, decay=0.5, normalize=True, max_pair_size=400_000_000):
        self.n = n
        self.decay = decay
        self.normalize = normalize
        self.max_pair_size = max_pair_size

    def _check(self):
        if isinstance(self.n, bool) or not isinstance(self.n, numbers.Integral) or self.n < 1:
            raise ValueError("n must be an integer >= 1, got %r" % (self.n,))
        if isinstance(self.decay, bool) or not isinstance(self.decay, numbers.Real) \
                or not 0.0 < float(self.decay) <= 1.0:
            raise ValueError("decay must be a number in (0, 1], got %r" % (self.decay,))
        limit = self.max_pair_size
        if limit is not None and (isinstance(limit, bool) or not isinstance(
                limit, numbers.Real) or not limit >= 1):
            raise ValueError("max_pair_size must be a number >= 1 or None, got %r" % (limit,))
        return int(self.n), float(self.decay)

    def _check_pair_size(self, a, b):
        """Refuse a pair of sequences whose dynamic program exceeds ``max_pair_size``."""
        if self.max_pair_size is None or len(a[1]) < 2 or len(b[1]) < 2:
            return
        la, lb = int(np.diff(a[1]).max()), int(np.diff(b[1]).max())
        if la * lb > self.max_pair_size:
            raise ValueError(
                "SubsequenceKernel: sequences of %d and %d symbols make a pair of size "
                "%d > max_pair_size=%d (the cost is O(n |s| |t|) per pair, minutes at this "
                "size); shorten the sequences, use SpectrumKernel, or raise max_pair_size "
                "(None removes the limit)" % (la, lb, la * lb, self.max_pair_size))

    def _raw(self, a, b, symmetric):
        n, decay = self._check()
        self._check_pair_size(a, b)
        from .._core._string_kernels import subsequence_gram
        return subsequence_gram(a_symbols=a[0], a_indptr=a[1], b_symbols=b[0], b_indptr=b[1],
                                n=n, lam=decay, symmetric=symmetric)

    def _raw_diag(self, enc):
        sym, ptr = enc
        out = np.empty(len(ptr) - 1)
        for i in range(len(out)):
            one = (sym[ptr[i]:ptr[i + 1]], np.array([0, ptr[i + 1] - ptr[i]], dtype=np.int64))
            out[i] = self._raw(one, one, True)[0, 0]
        return out

    def __call__(self, X, Y=None):
        """Gram matrix ``K[a, b] = k(X[a], Y[b])`` (Y defaults to X)."""
        self._check()
        A, B, a, b, _ = self._pair_vocabulary(X, Y)
        K = self._raw(a, b, B is A)
        if self.normalize:
            da = np.diag(K).copy() if B is A else self._raw_diag(a)
            db = da if B is A else self._raw_diag(b)
            scale = np.sqrt(np.outer(da, db))
            K = np.divide(K, scale, out=np.zeros_like(K), where=scale > 0)
        return K

    def diag(self, X):
        """``k(x, x)`` for each sequence of X (1, or 0 below length n, when normalised)."""
        self._check()
        A = _check_sequences(X, "X")
        d = self._raw_diag(encode_sequences(A, {}))
        return (d > 0).astype(np.float64) if self.normalize else d
