"""Sequence labelling: linear-chain taggers trained by the averaged structured
perceptron (whole epochs in Cython) or the structural SVM.

A tagger scores a label sequence ``y`` for a sentence ``x`` as

    F(x, y) = sum_t w_emit . phi(x_t, y_t) + sum_t w_trans[y_{t-1}, y_t]
              + w_start[y_0] + w_stop[y_{T-1}]   (+ second-order transitions)

with ``phi(x_t, y_t) = phi(x_t) (x) e_{y_t}`` built from feature templates
(:class:`linclass.features.FeatureTemplate`), and predicts the Viterbi path.

References
----------
Collins, M. (2002). Discriminative training methods for hidden Markov models:
theory and experiments with perceptron algorithms.  EMNLP.
McDonald, R., Hall, K., Mann, G. (2010). Distributed training strategies for the
structured perceptron.  NAACL-HLT (iterative parameter mixing, ``n_jobs > 1``).
Tsochantaridis, I., Joachims, T., Hofmann, T., Altun, Y. (2005). Large margin
methods for structured and interdependent output variables.  JMLR 6.
"""
import collections
import functools
import itertools
import numbers
import operator
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from .. import _validation
from .._core import _sequence
from ..base import BaseEstimator
from ..exceptions import NotFittedError
from ._crf_kernels import dense_score_marginals

__all__ = ["SequenceTagger"]

_TRAINERS = ("perceptron", "ssvm")
_SSVM_MIN_PASSES = 50       # trainer="ssvm": fewest BCFW passes allowed by max_iter


def _check_sentences(X, name="X"):
    """``X`` as a list of sentences, each a list of tokens (returned; callers
    use it): tuples and numpy arrays (of strings, 1-D; or 2-D, one row of
    columns per token, as tuples) become lists of Python objects
    (``np.str_`` -> ``str``), so that they behave exactly like lists."""
    if isinstance(X, np.ndarray) and X.ndim >= 1:
        X = list(X)
    if isinstance(X, (str, bytes, dict)) or not hasattr(X, "__len__"):
        raise ValueError("%s must be a list of sentences (each a list of tokens), got %s"
                         % (name, type(X).__name__))
    if all(map(type.__instancecheck__, itertools.repeat(list), X)):
        return X                                       # the common case, at C speed
    out = []
    for i, sent in enumerate(X):
        if isinstance(sent, np.ndarray) and sent.ndim in (1, 2):
            sent = sent.tolist() if sent.ndim == 1 else [tuple(t) for t in sent.tolist()]
        elif isinstance(sent, (str, bytes, dict)) or not hasattr(sent, "__len__") \
                or isinstance(sent, np.ndarray):
            hint = ""
            if isinstance(sent, (str, dict)):
                hint = ("; %s looks like one sentence (a list of tokens): pass [sentence], "
                        "or use predict_single(sentence)" % name)
            raise ValueError("%s must be a list of sentences, but %s[%d] is a %s, not a list "
                             "of tokens%s" % (name, name, i, type(sent).__name__, hint))
        out.append(sent if isinstance(sent, list) else list(sent))
    return out


def _check_not_one_sentence(X, n_columns):
    """Multi-column tokens: ``X`` given as one sentence of tuples is refused clearly."""
    if n_columns < 2:
        return
    for i, sent in enumerate(X):          # the first non-empty sentence decides
        if len(sent):
            if all(isinstance(v, str) for v in sent):
                raise ValueError("X must be a list of sentences of %d-column tokens, but X[%d] "
                                 "is a tuple of strings (%r...): X looks like one sentence; "
                                 "pass [sentence], or use predict_single(sentence)"
                                 % (n_columns, i, sent[0]))
            return


def _check_features_param(features, columns):
    """``features``: None, a template string / name or a FeatureTemplate (a
    template string is parsed here, so a malformed one names the parameter);
    ``columns``: None or a sequence of column names."""
    from ..features import FeatureTemplate
    if features is not None and not isinstance(features, (str, FeatureTemplate)):
        raise ValueError("features must be None, a template string, a template name or a "
                         "FeatureTemplate, got %s" % type(features).__name__)
    if columns is not None and (isinstance(columns, (str, bytes)) or not isinstance(
            columns, (tuple, list)) or not all(isinstance(c, str) for c in columns)):
        raise ValueError("columns must be None or a tuple of column names (str), got %r"
                         % (columns,))
    if isinstance(features, str):
        cols = tuple(columns) if columns is not None else ("w", "pos")
        try:
            FeatureTemplate(template=_resolve_template(features, cols), columns=cols)._compiled()
        except ValueError as exc:
            if columns is None and "unknown column" in str(exc):
                return              # the columns are inferred from the data in fit
            raise ValueError("features=%r is not a valid template: %s" % (features, exc)) \
                from None


def _encode_label_sequences(Y, X, classes=None, n_jobs=1):
    """Flatten Y to int32 codes into ``classes`` (sorted, or the given ones).

    One table lookup per token (in ``n_jobs`` token blocks without the GIL
    when every label is a ``str``, else one dict lookup per token); types are
    checked on the distinct labels only.
    """
    from .._core import _features
    Y = _check_sentences(Y, "Y")
    X = _check_sentences(X)
    if len(Y) != len(X):
        raise ValueError("X has %d sentences but Y has %d" % (len(X), len(Y)))
    n_labels = np.fromiter(map(len, Y), dtype=np.int64, count=len(Y))
    n_tokens = np.fromiter(map(len, X), dtype=np.int64, count=len(X))
    mismatch = np.flatnonzero(n_labels != n_tokens)
    if mismatch.size:
        i = int(mismatch[0])
        raise ValueError("sentence %d has %d tokens but %d labels"
                         % (i, n_tokens[i], n_labels[i]))
    flat = functools.reduce(operator.iadd, Y, [])       # one list (copies, not chained)
    found = _features.column_type_ids_threaded(flat, 1, [0], n_jobs) if flat else None
    if found is not None:
        index, codes = found[0][0], found[1][0].astype(np.int32)
    else:
        index = collections.defaultdict()
        index.default_factory = index.__len__        # unseen label -> next code, in C
        codes = np.fromiter(map(index.__getitem__, flat), dtype=np.int32, count=len(flat))
        index.default_factory = None
    if not index and classes is None:
        raise ValueError("Y holds no labels (all sentences are empty)")
    for label in index:
        if not isinstance(label, str):
            raise ValueError("labels must be strings, found %r (%s)"
                             % (label, type(label).__name__))
    seen = np.array(list(index), dtype=str) if index else np.zeros(0, dtype=str)
    # map first-seen codes to positions in the sorted (or given) classes
    classes, remap = _validation.encode_labels(seen, classes)
    if classes.size == 0:
        raise ValueError("Y holds no labels (all sentences are empty)")
    return classes, (remap[codes] if codes.size else codes).astype(np.int32)


def _own_template_output(features, Xf):
    """Whether ``Xf`` comes from linclass's own template pass, which builds its
    CSR matrices canonical (int32 indices sorted and distinct in every row,
    within ``n_features_``; float64 data; contiguous): the O(nnz) checks of
    ``check_array`` are skipped for them (a subclass or another extractor is
    checked)."""
    from ..features import FeatureTemplate
    return (type(features) is FeatureTemplate and features.template is not None
            and type(Xf) is sp.csr_matrix and Xf.indices.dtype == np.int32
            and Xf.indptr.dtype == np.int32 and Xf.data.dtype == np.float64)


def _token_accuracy(pred, Y, name):
    """Token accuracy of predicted label sequences against ``Y`` (1.0 without tokens)."""
    Y = _check_sentences(Y, name)
    if len(Y) != len(pred):
        raise ValueError("X has %d sentences but %s has %d" % (len(pred), name, len(Y)))
    n_pred = np.fromiter(map(len, pred), dtype=np.int64, count=len(pred))
    n_gold = np.fromiter(map(len, Y), dtype=np.int64, count=len(Y))
    bad = np.flatnonzero(n_pred != n_gold)
    if bad.size:
        i = int(bad[0])
        raise ValueError("sentence %d has %d tokens but %d labels" % (i, n_pred[i], n_gold[i]))
    n = int(n_gold.sum())
    correct = sum(map(operator.eq, itertools.chain.from_iterable(pred),
                      itertools.chain.from_iterable(Y)))
    return correct / n if n else 1.0


def _binary_flag(Xf):
    """1 when every stored value of the token features is 1.0 (template
    features), else 0: the kernels then add weight rows without multiplying
    (identical results); checked once here instead of in every epoch."""
    return int(bool(np.all(Xf.data == 1.0)))


def _resolve_template(spec, columns):
    """A template string from a predefined name ("pos", "chunking", "ner", ...)."""
    from ..features import named_template
    if isinstance(spec, str):
        named = named_template(spec, columns)
        return spec if named is None else named
    return spec


class SequenceTagger(BaseEstimator):
    """Linear-chain sequence tagger (POS tagging, chunking, NER).

    Parameters
    ----------
    features : str or FeatureTemplate, default="pos"
        A template string in the mini-language of
        :mod:`linclass.features`, the name of a predefined template
        (``"pos"``, ``"chunking"``, ``"ner"``), ``None`` for
        python-crfsuite-style input (tokens are feature dicts or lists of
        attribute strings), or a :class:`~linclass.features.FeatureTemplate`.
    columns : tuple of str, optional
        Names of the token columns the template refers to.  Default:
        ``("w",)`` when tokens are strings, ``("w", "pos")`` for two columns,
        else ``("c0", "c1", ...)``.
    trainer : {"perceptron", "ssvm"}
        Averaged structured perceptron (Collins 2002) or the structural SVM
        (block-coordinate Frank--Wolfe, margin rescaling, Hamming loss).
    max_iter : int, default=10
        Epochs (perceptron) or the most passes of the structural SVM (ssvm:
        at least 50 are allowed; it stops earlier at ``tol``).
    average : bool, default=True
        Averaged perceptron weights (lazy averaging).
    order : {1, 2}, default=1
        Markov order of the label transitions.
    min_count : int, default=1
        Drop features seen fewer times in training.
    n_hash : int, optional
        Hash features into this many buckets instead of keeping a vocabulary.
    C : float, default=0.1
        Regularisation trade-off of the structural SVM (``trainer="ssvm"``):
        it minimises ``||w||^2 / 2 + C sum_i xi_i`` over all sentences.  The
        rule: C is per sentence, not divided by their number, so the data
        term grows with n and the regularisation's relative weight
        ``1 / (C n)`` shrinks as 1/n.  C=0.1 was chosen on held-out data
        (CoNLL-2000 chunking: first 7,000 training sentences, evaluated on
        sentences 7,001-8,936; CoNLL-2002 Spanish ``testa``) among 0.03-1:
        chunking F1 92.7 / 93.7 / 93.8 at C = 0.03 / 0.1 / 0.3 after 16
        averaged passes (1,000 sentences: 90.4 for every C in 0.1-1), Spanish
        75.6 / 76.0 at C = 0.1 / 0.3; C=0.1 converges fastest of the
        accurate ones.  For a corpus of very different kind, choose C on
        held-out data.
    tol : float, default=0.01
        Stopping tolerance of the structural SVM: training (block-coordinate
        Frank--Wolfe, weighted averaging) stops when the duality gap is at
        most ``tol * C * n_tokens``, i.e. when the objective is provably
        within ``tol`` hinge-loss (Hamming) units per training token of its
        minimum.  Unlike a gap relative to the objective, this does not
        depend on C or on the size of the corpus: 9-19 passes reach 0.01 on
        CoNLL-2000 and CoNLL-2002 (full training sets), where held-out F1
        has levelled off.
        ``max_iter`` counts passes and is raised to at least 50.
    shuffle : bool, default=True
        Visit sentences in a new random order each epoch.
    random_state : int, optional
    n_jobs : int, default=1
        Threads.  ``predict`` decodes batches of 128 sentences or more in
        ``n_jobs`` threads (the Viterbi kernel releases the GIL; the labels
        are identical for every ``n_jobs``).  Training with ``n_jobs > 1``
        uses iterative parameter mixing (McDonald et al. 2010): each epoch
        the shuffled sentences are cut into ``n_jobs`` shards trained in
        parallel from the same weights, then the weights are averaged (each
        shard keeps its averaging sums, scaled by ``1 / n_jobs``, over the
        fit; they are added to the model's at the end).  The model then depends on ``n_jobs`` (a
        different, equally valid perceptron run: the accuracy is close, the
        weights differ) but not on thread timing: for a fixed
        ``random_state`` it is deterministic.  ``n_jobs=1`` is the plain
        sequential perceptron.  The template features are extracted in
        ``n_jobs`` threads too (column values in token blocks, templates
        with private tables renumbered in the one-thread order: the features
        are identical for every ``n_jobs``; a
        :class:`~linclass.features.FeatureTemplate` passed as ``features``
        keeps its own ``n_jobs``), the labels meanwhile in another thread.
    verbose : int, default=0
        Print per-epoch statistics.

    Attributes
    ----------
    classes_ : ndarray of str (K,)
    features_ : FeatureTemplate (fitted)
    emission_ : ndarray (n_features, K) float32
    transitions_ : ndarray (K, K) float32, [previous, next]
    transitions2_ : ndarray (K**3,) float32 (order 2 only, else empty)
    start_, stop_ : ndarray (K,) float32
    history_ : list of dict, per epoch: sentence/token errors and seconds
    """

    def __init__(self, features="pos", columns=None, trainer="perceptron", max_iter=10,
                 average=True, order=1, min_count=1, n_hash=None, C=0.1, tol=0.01,
                 shuffle=True, random_state=None, n_jobs=1, verbose=0):
        self.features = features
        self.columns = columns
        self.trainer = trainer
        self.max_iter = max_iter
        self.average = average
        self.order = order
        self.min_count = min_count
        self.n_hash = n_hash
        self.C = C
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------ helpers --
    def _check_params(self):
        if self.trainer not in _TRAINERS:
            raise ValueError("trainer must be one of %s, got %r" % (_TRAINERS, self.trainer))
        _validation.check_positive(self.max_iter, "max_iter", integer=True)
        if self.order not in (1, 2):
            raise ValueError("order must be 1 or 2, got %r" % (self.order,))
        _validation.check_positive(self.C, "C")
        _validation.check_positive(self.tol, "tol")
        _validation.check_positive(self.n_jobs, "n_jobs", integer=True)
        _check_features_param(self.features, self.columns)

    def _make_featurizer(self, X):
        from ..features import FeatureTemplate
        if isinstance(self.features, FeatureTemplate):
            from copy import deepcopy
            return deepcopy(self.features)
        columns = self.columns
        first = next((tok for sent in X for tok in sent), None)
        if self.features is not None and columns is None:
            if first is None or isinstance(first, str):
                columns = ("w",)
            elif isinstance(first, dict):
                raise ValueError("tokens are feature dicts: pass features=None "
                                 "(python-crfsuite style input)")
            elif not isinstance(first, (tuple, list, np.ndarray)):
                raise ValueError("X[0][0]: a token must be a word string or a tuple of "
                                 "column strings, got %s %r" % (type(first).__name__, first))
            else:
                n_cols = len(first)
                columns = ("w", "pos") if n_cols == 2 else \
                    ("w",) if n_cols == 1 else tuple("c%d" % i for i in range(n_cols))
        template = _resolve_template(self.features, columns)
        return FeatureTemplate(template=template, columns=columns, min_count=self.min_count,
                               n_hash=self.n_hash, n_jobs=int(self.n_jobs))

    @staticmethod
    def _as_token_rows(X):
        """Single-column string tokens -> 1-tuples (the template's input)."""
        first = next((tok for sent in X for tok in sent), None)
        if isinstance(first, str):
            return [[(tok,) for tok in sent] for sent in X]
        return X

    def _featurize(self, X, fit, grow=False, featurizer=None):
        X = _check_sentences(X)
        features = self.features_ if featurizer is None else featurizer
        columns = getattr(features, "columns", None)
        if features.template is not None and columns is not None:
            _check_not_one_sentence(X, len(columns))
        X = self._as_token_rows(X)
        if fit:
            Xf, lengths = features.fit_transform(X)
        elif grow:
            Xf, lengths = features.partial_fit_transform(X)
        else:
            Xf, lengths = features.transform(X)
        if not _own_template_output(features, Xf):
            Xf = _validation.check_array(Xf, name="token features", allow_empty=True)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if offsets[-1] != Xf.shape[0]:
            raise RuntimeError("feature extractor returned %d rows for %d tokens"
                               % (Xf.shape[0], offsets[-1]))
        return Xf, offsets

    # --------------------------------------------------------------- fit --
    def fit(self, X, Y):
        """Train on sentences ``X`` (lists of tokens) with label sequences ``Y``."""
        self._check_params()
        X = _check_sentences(X)
        Y = _check_sentences(Y, "Y")
        if int(self.n_jobs) > 1:
            # the labels are encoded in a second thread while the template pass runs
            # its threads without the GIL: the thread starts when the GIL-bound part
            # of the pass (column types, transforms) is done, not to compete with it
            # for the GIL (the same result; a label error still wins).  One block:
            # ~12 ms of CPU beside the two template threads (about half of it on
            # the critical path) instead of the 16-24 ms measured for the
            # encoding on the main thread before the pass
            start = threading.Event()

            def encode():
                start.wait()
                return _encode_label_sequences(Y, X)
            features = None
            with ThreadPoolExecutor(1) as pool:
                labels = pool.submit(encode)
                try:
                    features = self._make_featurizer(X)
                    features._before_extract = start.set
                    Xf, offsets = self._featurize(X, fit=True, featurizer=features)
                except Exception:
                    start.set()
                    labels.result()
                    raise
                finally:
                    start.set()
                    if features is not None:
                        features.__dict__.pop("_before_extract", None)
                self.classes_, gold = labels.result()
            self.features_ = features
        else:
            self.classes_, gold = _encode_label_sequences(Y, X)
            self.features_ = self._make_featurizer(X)
            Xf, offsets = self._featurize(X, fit=True)
        self.n_features_ = Xf.shape[1]
        K = len(self.classes_)
        self._init_weights(self.n_features_, K)
        self.history_ = []
        if self.trainer == "perceptron":
            self._fit_perceptron(Xf, offsets, gold, self.max_iter)
        else:
            self._fit_ssvm(Xf, offsets, gold)
        return self

    def partial_fit(self, X, Y, max_iter=None):
        """More epochs (perceptron) on new or old data, continuing the averaging.

        The label set is that of the first fit (new labels raise
        ``ValueError``).  The feature vocabulary grows: features first seen
        here get new ids and zero weights, then train
        (:meth:`FeatureTemplate.partial_fit_transform`); ``min_count``
        filters the first fit only.  For an unbounded stream, ``n_hash``
        (e.g. ``2**22``) keeps memory fixed instead: every feature is hashed,
        nothing is stored per feature name.

        Calling ``partial_fit`` ``n`` times with ``max_iter=1`` on the data
        of the first ``fit(max_iter=1)`` and ``random_state`` a
        :class:`numpy.random.Generator` gives the same weights as one ``fit``
        with ``max_iter=n`` (the same shuffles, the same averaging).
        """
        if not hasattr(self, "classes_"):
            return self.fit(X, Y) if max_iter is None else \
                self.set_params(max_iter=max_iter).fit(X, Y)
        self._check_params()
        if self.trainer != "perceptron":
            raise ValueError("partial_fit is available with trainer='perceptron' only")
        X = _check_sentences(X)
        _, gold = _encode_label_sequences(Y, X, classes=self.classes_, n_jobs=int(self.n_jobs))
        Xf, offsets = self._featurize(X, fit=False, grow=True)
        if getattr(self, "_train_state", None) is None:
            # loaded from disk: continue from the stored (averaged) weights
            self._init_weights(self.n_features_, len(self.classes_),
                               from_fitted=True)
        self._grow_weights(Xf.shape[1])
        self._fit_perceptron(Xf, offsets, gold, max_iter or self.max_iter)
        return self

    def _init_weights(self, F, K, from_fitted=False):
        order2 = K ** 3 if self.order == 2 else 0
        if from_fitted:
            W = self.emission_.copy()
            trans = self.transitions_.copy()
            trans2 = self.transitions2_.copy()
            start, stop = self.start_.copy(), self.stop_.copy()
        else:
            W = np.zeros((F, K), np.float32)
            trans = np.zeros((K, K), np.float32)
            trans2 = np.zeros(order2, np.float32)
            start, stop = np.zeros(K, np.float32), np.zeros(K, np.float32)
        weights = [W, trans, trans2, start, stop]
        sums = [np.zeros(a.shape, np.float64) for a in weights]
        # "untouched": every weight and sum is zero (a new model before its first epoch)
        self._train_state = {"weights": weights, "sums": sums, "counter": 1.0,
                             "untouched": not from_fitted}

    def _grow_weights(self, n_features):
        """Zero rows for features added by partial_fit (weights and their sums)."""
        self._settle_sums()
        state = self._train_state
        W, U = state["weights"][0], state["sums"][0]
        if n_features > W.shape[0]:
            extra = n_features - W.shape[0]
            state["weights"][0] = np.concatenate([W, np.zeros((extra, W.shape[1]), W.dtype)])
            state["sums"][0] = np.concatenate([U, np.zeros((extra, U.shape[1]), U.dtype)])
            self.n_features_ = n_features

    def _publish_weights(self, pool=None, n_threads=1, emission=None):
        """The fitted weights: the lazy averages ``w - u / counter`` (or the
        last weights); the emission matrix in ``n_threads`` row blocks on
        ``pool``, or ``emission`` when given (computed already)."""
        state = self._train_state
        out = []
        for w, u in zip(state["weights"], state["sums"]):
            if emission is not None:
                out.append(emission)
                emission = None
            elif self.average:
                avg = np.empty_like(w)
                flat = (w.reshape(-1), u.reshape(-1), avg.reshape(-1))
                if n_threads > 1 and w.size >= 65536:
                    bounds = np.linspace(0, w.size, n_threads + 1).astype(np.int64)

                    def part(j, flat=flat, bounds=bounds):
                        a, b = bounds[j], bounds[j + 1]
                        _sequence.averaged_weights(flat[0][a:b], flat[1][a:b],
                                                   state["counter"], flat[2][a:b])
                    list(pool.map(part, range(n_threads)))
                else:
                    _sequence.averaged_weights(flat[0], flat[1], state["counter"], flat[2])
                out.append(avg)
            else:
                out.append(w.copy())
        self.emission_, self.transitions_, self.transitions2_, self.start_, self.stop_ = out

    def _fit_perceptron(self, Xf, offsets, gold, max_iter):
        self._settle_sums()
        state = self._train_state
        W, trans, trans2, start, stop = state["weights"]
        U = state["sums"]
        n_sent = len(offsets) - 1
        rng = _validation.check_random_state(self.random_state)
        order = state.get("order")
        if order is None or len(order) != n_sent:
            order = state["order"] = np.arange(n_sent, dtype=np.int32)
        converged = False
        binary = _binary_flag(Xf)
        n_shards = min(int(self.n_jobs), n_sent)
        pool = ThreadPoolExecutor(n_shards) if n_shards > 1 else None
        try:
            shards = self._shard_buffers(n_shards) if n_shards > 1 else None
            state["untouched"] = False
            for epoch in range(max_iter):
                if self.shuffle:
                    rng.shuffle(order)
                t0 = time.perf_counter()
                if n_shards <= 1:
                    c, n_sent_err, n_tok_err = _sequence.perceptron_epoch(
                        W, U[0], trans, U[1], trans2, U[2], start, U[3], stop, U[4],
                        Xf.indices, Xf.data, Xf.indptr, offsets, gold, order,
                        order=self.order, counter=state["counter"], binary=binary)
                else:
                    c, n_sent_err, n_tok_err = self._mixed_epoch(
                        pool, shards, Xf, offsets, gold, order, binary, stamp=epoch + 1)
                state["counter"] = c
                stats = {"epoch": len(self.history_) + 1, "sentence_errors": int(n_sent_err),
                         "token_errors": int(n_tok_err),
                         "token_error_rate": n_tok_err / max(1, Xf.shape[0]),
                         "seconds": time.perf_counter() - t0}
                self.history_.append(stats)
                if self.verbose:
                    print("epoch %(epoch)3d  sentence errors %(sentence_errors)6d  token "
                          "errors %(token_errors)7d (%(token_error_rate).4f)  %(seconds).2fs"
                          % stats)
                if n_sent_err == 0:
                    converged = True
                    break
            self.n_iter_ = len(self.history_)
            emission = self._fold_shard_sums(pool, shards) if shards is not None else None
            self._publish_weights(pool, n_shards, emission)
        finally:
            if pool is not None:
                pool.shutdown()
        return converged

    def _shard_buffers(self, n_shards):
        """Per shard of parameter mixing: its emission weights (shard 0: the
        model's; the others: a private copy, made here, before shard 0 starts
        updating the model's weights; on a new model before its first epoch,
        zeros calloc'd by the shard's own thread at its first epoch: measured,
        writing them first costs more than the page faults it saves), its
        overlay of emission averaging sums, kept over the fit (slot, row and
        epoch-touched lists, a pool of F rows allocated with np.empty, so that
        only the rows the shard updates take memory) and its sums of the small
        arrays (zero)."""
        state = self._train_state
        W = state["weights"][0]
        F, K = W.shape
        zero = bool(state.get("untouched", False))
        return [{"w": W if j == 0 else (None if zero else W.copy()), "zero": zero,
                 "zero_start": zero,
                 "slot": np.zeros((F, 2), np.int32), "rows": np.empty(F, np.int32),
                 "touched": np.empty(F, np.int32), "pool_u": np.empty((F, K), np.float64),
                 "n_rows": 0, "n_touched": 0,
                 "small_u": [np.zeros(u.shape, u.dtype) for u in state["sums"][1:]]}
                for j in range(n_shards)]

    def _mixed_epoch(self, pool, shards, Xf, offsets, gold, order, binary=-1, stamp=1):
        """One epoch of iterative parameter mixing (McDonald, Hall, Mann 2010).

        The shuffled visit order is cut into ``len(shards)`` contiguous shards;
        each thread runs the perceptron epoch on its shard from the current
        weights (the kernel releases the GIL), then the weights become the
        uniform mean of the shards' weights.  Shard 0 trains on the model's
        own emission weights, shards 1.. on private copies (equal to the mixed
        ones between epochs); the small arrays (transitions, start, stop) are
        private copies mixed whole.  The emission rows some shard updated in
        the epoch (``stamp``) are listed by the shards' overlays
        (:func:`_sequence.perceptron_epoch_shard`): only they are mixed, in
        every shard's weights, by the same threads right after their epochs
        (a barrier between), rows split by parity
        (:func:`_sequence.mix_shard_rows`).  Averaging stays exact for the
        mixed trajectory: every shard starts its counter at the epoch's
        counter and adds ``counter / n * update`` to its own sums (kept over
        the fit), which :meth:`_fold_shard_sums` adds to the model's sums in
        shard order at the end; the counter advances by the longest shard.
        The result depends on ``n_jobs`` (the shards) and on the seed, never
        on thread timing: every array entry is written by one thread, sums in
        a fixed order.
        """
        state = self._train_state
        weights = state["weights"]
        c0 = state["counter"]
        n_shards = len(shards)
        bounds = np.linspace(0, len(order), n_shards + 1).astype(np.int64)
        scale = 1.0 / n_shards
        small = [[w.copy() for w in weights[1:]] for _ in range(n_shards)]
        barrier = threading.Barrier(n_shards)

        def run(j):
            sh, w, u = shards[j], small[j], shards[j]["small_u"]
            try:
                if sh["zero"]:             # calloc'd in this shard's thread (_shard_buffers)
                    if j > 0:
                        sh["w"] = np.zeros_like(weights[0])
                    sh["zero"] = False
                out = _sequence.perceptron_epoch_shard(
                    sh["w"], w[0], u[0], w[1], u[1], w[2], u[2], w[3], u[3],
                    Xf.indices, Xf.data, Xf.indptr, offsets, gold,
                    np.ascontiguousarray(order[bounds[j]:bounds[j + 1]]), sh["slot"],
                    sh["rows"], sh["pool_u"], sh["n_rows"], sh["touched"], stamp,
                    order=self.order, counter=c0, binary=binary, sum_scale=scale)
                sh["n_rows"], sh["n_touched"] = out[3], out[4]
            except BaseException:
                barrier.abort()
                raise
            barrier.wait()                 # every shard's epoch done: mix
            _sequence.mix_shard_rows(j, n_shards, [sh["w"] for sh in shards],
                                     [sh["slot"] for sh in shards],
                                     [sh["touched"] for sh in shards],
                                     [sh["n_touched"] for sh in shards], stamp)
            return out[:3]

        futures = [pool.submit(run, j) for j in range(n_shards)]
        errors = [f.exception() for f in futures]
        for e in sorted((e for e in errors if e is not None),
                        key=lambda e: isinstance(e, threading.BrokenBarrierError)):
            raise e                        # the shard's own error, not the broken barrier
        results = [f.result() for f in futures]
        for a in range(1, len(weights)):          # the small arrays: whole, shard order
            mean_w = np.zeros(weights[a].shape, np.float64)
            for w in small:
                mean_w += w[a - 1]
            weights[a][...] = (mean_w / n_shards).astype(np.float32)
        counter = max(r[0] for r in results)
        return counter, sum(r[1] for r in results), sum(r[2] for r in results)

    def _fold_shard_sums(self, pool, shards):
        """The end of a parameter-mixing fit: the shards' sums of the small
        arrays are added to the model's in shard order; with ``average`` the
        averaged emission weights are computed from the model's emission sums
        plus the shards' overlays (in ``len(shards)`` row blocks on ``pool``,
        :func:`_sequence.fold_shard_sums`) and returned, written into the last
        shard's private weights (without ``average``: those weights).  The
        overlays are kept in the training state, added to its emission sums
        only when a later ``partial_fit`` needs them (:meth:`_settle_sums`):
        a fit alone never writes the dense (F, K) float64 sums."""
        state = self._train_state
        weights, sums = state["weights"], state["sums"]
        for sh in shards:
            for a in range(1, len(sums)):
                sums[a] += sh["small_u"][a - 1]
        W, U = weights[0], sums[0]
        slots = [sh["slot"] for sh in shards]
        pools = [sh["pool_u"] for sh in shards]
        zero_start = bool(shards[0].get("zero_start", False))
        state["pending_sums"] = (slots, pools, zero_start)
        # The last shard's private weights are free after the last mixing (the
        # next fit copies the model's weights again) and their pages are
        # already faulted in: the published emission matrix is written there
        # instead of in fresh memory (first touch costs 1-3 ms/MB here).
        # Without averaging they are the published weights: every shard's
        # weights equal the model's after a mixing (mix_shard_rows writes the
        # same mean into each).
        spare = shards[-1]["w"]
        shards[-1]["w"] = None
        if spare is None or spare is W:    # no epoch ran: no private weights
            spare = W.copy() if not self.average else np.empty_like(W)
        if not self.average:
            return spare
        avg = spare
        bounds = np.linspace(0, W.shape[0], len(shards) + 1).astype(np.int64)
        list(pool.map(lambda j: _sequence.fold_shard_sums(
            int(bounds[j]), int(bounds[j + 1]), W, U, slots, pools, state["counter"], avg,
            zero_start=zero_start, write_sums=False), range(len(shards))))
        return avg

    def _settle_sums(self):
        """Add the overlays a parameter-mixing fit left (:meth:`_fold_shard_sums`)
        to the training state's emission sums, in shard order."""
        state = getattr(self, "_train_state", None)
        pending = state.pop("pending_sums", None) if state is not None else None
        if pending is not None:
            slots, pools, zero_start = pending
            W, U = state["weights"][0], state["sums"][0]
            _sequence.fold_shard_sums(0, W.shape[0], W, U, slots, pools,
                                      zero_start=zero_start, write_sums=True)

    def _fit_ssvm(self, Xf, offsets, gold):
        from ..structured.chain import fit_chain_ssvm
        from .structure import SentenceBatch, SequenceStructure
        # first order: BCFW passes fused in _core._bcfw.chain_pass (order 2: the
        # generic per-sentence BCFW); weighted averaging; stop when the duality
        # gap is at most tol * C * n_tokens; max_iter counts passes and is
        # raised to at least _SSVM_MIN_PASSES
        structure = SequenceStructure(self.n_features_, len(self.classes_), order=self.order)
        sentences = SentenceBatch.from_matrix(Xf, offsets)     # batched fast path
        Ys = sentences.split(gold)
        try:
            w, history, _ = fit_chain_ssvm(structure, sentences, Ys, C=self.C, tol=self.tol,
                                           max_passes=max(self.max_iter, _SSVM_MIN_PASSES),
                                           random_state=self.random_state,
                                           verbose=self.verbose)
        except ValueError as exc:                # the solver's overflow errors name this model
            raise ValueError("SequenceTagger(trainer='ssvm'): %s" % exc) from None
        parts = structure.unpack(w)
        self.emission_, self.transitions_, self.transitions2_, self.start_, self.stop_ = (
            p.astype(np.float32) for p in parts)
        self.history_ = history
        self.objective_ = history[len(history) - 1]["objective"]
        self.n_iter_ = len(self.history_)
        self._train_state = None

    # ----------------------------------------------------------- predict --
    def _check_fitted(self):
        if not hasattr(self, "emission_"):
            raise NotFittedError("this SequenceTagger is not fitted yet; call fit() first")

    def _check_state(self):
        """The fitted arrays agree (called by :func:`linclass.load`): weights
        of shape (n_features_, K), (K, K), (K**3,) or empty, (K,), (K,);
        the featurizer's width equals ``n_features_``; ``order`` is 1 or 2."""
        super()._check_state()
        if self.order not in (1, 2):
            raise ValueError("order must be 1 or 2, got %r" % (self.order,))
        K = len(self.classes_)
        F = self.n_features_
        if isinstance(F, bool) or not isinstance(F, (int, np.integer)) or F < 0:
            raise ValueError("n_features_ must be an integer >= 0, got %r" % (F,))
        order2 = K ** 3 if self.order == 2 else 0
        expected = {"emission_": (F, K), "transitions_": (K, K), "start_": (K,),
                    "stop_": (K,)}
        for name, shape in expected.items():
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype.kind != "f":
                raise ValueError("%s must be a float array of shape %r, got %r"
                                 % (name, shape, getattr(arr, "shape", arr)))
        if not isinstance(self.transitions2_, np.ndarray) or \
                self.transitions2_.shape not in ((order2,), (0,)) or \
                (self.order == 2 and self.transitions2_.shape != (order2,)):
            raise ValueError("transitions2_ must have %d entries" % order2)
        if len({a.dtype for a in (self.emission_, self.transitions_, self.transitions2_,
                                  self.start_, self.stop_)}) != 1:
            raise ValueError("the weight arrays must share one dtype")
        features = self.features_
        check = getattr(type(features), "_check_state", None)
        if callable(check):                   # its width against its own vocabulary
            check(features)
        width = getattr(features, "n_features_", None)
        n_hash = getattr(features, "n_hash", None)
        if width != F or (n_hash is not None and n_hash != width):
            raise ValueError("the feature extractor produces %r features (n_hash=%r) but the "
                             "weights have %d rows" % (width, n_hash, F))

    def _check_decodable(self, Xf):
        """What the decoders index, checked before every decode (O(nnz), cheap
        beside Viterbi): feature ids within the rows of ``emission_`` (the
        template's own output skips ``check_array``), one weight column per
        class, and the transition arrays' shapes (for state set by hand)."""
        F, K = self.emission_.shape if getattr(self.emission_, "ndim", 0) == 2 else (-1, -1)
        if Xf.shape[1] != F:
            raise ValueError("the feature extractor produced %d features but the weights "
                             "have %d rows" % (Xf.shape[1], F))
        if Xf.nnz and (int(Xf.indices.min()) < 0 or int(Xf.indices.max()) >= F):
            raise ValueError("the feature extractor produced feature ids outside [0, %d): "
                             "the model's state is inconsistent" % F)
        if len(self.classes_) != K or self.order not in (1, 2) \
                or np.shape(self.transitions_) != (K, K) or np.shape(self.start_) != (K,) \
                or np.shape(self.stop_) != (K,) or np.shape(self.transitions2_) not in (
                    ((K ** 3,),) if self.order == 2 else ((K ** 3,), (0,))):
            raise ValueError("the fitted weights do not agree with the %d classes (order=%r):"
                             " the model's state is inconsistent" % (len(self.classes_),
                                                                      self.order))

    def _decode_codes(self, Xf, offsets):
        self._check_decodable(Xf)
        n_sent = len(offsets) - 1
        out = np.zeros(Xf.shape[0], dtype=np.int32)
        scores = np.zeros(n_sent)
        args = (self.emission_, self.transitions_, self.transitions2_, self.start_,
                self.stop_, Xf.indices, Xf.data, Xf.indptr, offsets, out, scores)
        n_jobs = min(int(self.n_jobs), max(1, n_sent // 128))
        binary = _binary_flag(Xf)
        if n_jobs <= 1:
            _sequence.viterbi_batch(*args, order=self.order, binary=binary)
        else:
            bounds = np.linspace(0, n_sent, n_jobs + 1).astype(int)
            with ThreadPoolExecutor(n_jobs) as pool:
                list(pool.map(lambda ab: _sequence.viterbi_batch(
                    *args, order=self.order, first=int(ab[0]), last=int(ab[1]),
                    binary=binary), zip(bounds[:-1], bounds[1:])))
        return out, scores

    def predict(self, X):
        """Viterbi label sequence of each sentence (a list of lists of str)."""
        self._check_fitted()
        Xf, offsets = self._featurize(X, fit=False)
        out, _ = self._decode_codes(Xf, offsets)
        labels = self.classes_.tolist()
        flat = list(map(labels.__getitem__, out.tolist()))        # one str per token
        bounds = offsets.tolist()
        return [flat[a:b] for a, b in zip(bounds, bounds[1:])]

    def predict_single(self, sentence):
        """Viterbi labels of one sentence (a list of tokens) as a list of str."""
        if isinstance(sentence, (str, bytes, dict)) or not hasattr(sentence, "__len__"):
            raise ValueError("predict_single takes one sentence (a list of tokens), got %s"
                             % type(sentence).__name__)
        return self.predict([sentence])[0]

    def predict_marginals(self, X, temperature=1.0):
        """Per-token label probabilities of the Gibbs distribution of the scores.

        The perceptron and the structural SVM learn scores, not probabilities;
        this turns them into the distribution ``p(y | x) ∝ exp(F(x, y) / T)``
        over whole label sequences (a CRF with the tagger's weights divided
        by ``T = temperature``) and returns its node marginals
        ``P(y_t = label | x)``, computed by forward-backward (Lafferty et al.
        2001), exactly, for order 1 and order 2.  They rank the alternatives
        of each token and sum to one, but they are not calibrated: choose
        ``temperature`` on held-out data (e.g. by log-loss) when the values
        matter; small ``T`` approaches the Viterbi path (a point mass), large
        ``T`` the uniform distribution.

        Parameters
        ----------
        X : list of sentences
        temperature : float > 0, default=1.0

        Returns
        -------
        list (sentences) of lists (tokens) of dicts ``{label: probability}``,
        as :meth:`linclass.sequence.CRF.predict_marginals`.
        """
        self._check_fitted()
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
                or not np.isfinite(temperature) or temperature <= 0:
            raise ValueError("temperature must be a finite number > 0, got %r" % (temperature,))
        Xf, offsets = self._featurize(X, fit=False)
        self._check_decodable(Xf)
        inv_t = 1.0 / float(temperature)
        E = np.asarray(Xf @ self.emission_.astype(np.float64), dtype=np.float64) * inv_t
        trans2 = self.transitions2_.astype(np.float64) * inv_t if self.order == 2 else None
        node, _ = dense_score_marginals(E, offsets, self.transitions_ * inv_t,
                                        self.start_ * inv_t, self.stop_ * inv_t, trans2)
        classes = self.classes_.tolist()
        rows = [dict(zip(classes, r)) for r in node.tolist()]
        return [rows[offsets[s]:offsets[s + 1]] for s in range(len(offsets) - 1)]

    def predict_marginals_single(self, sentence, temperature=1.0):
        """:meth:`predict_marginals` of one sentence (a list of dicts)."""
        if isinstance(sentence, (str, bytes, dict)) or not hasattr(sentence, "__len__"):
            raise ValueError("predict_marginals_single takes one sentence (a list of tokens), "
                             "got %s" % type(sentence).__name__)
        return self.predict_marginals([sentence], temperature)[0]

    def decision_function(self, X):
        """Score ``F(x, y*)`` of the best label sequence of each sentence."""
        self._check_fitted()
        Xf, offsets = self._featurize(X, fit=False)
        return self._decode_codes(Xf, offsets)[1]

    def score(self, X, Y):
        """Token accuracy of ``predict(X)`` against ``Y``."""
        return _token_accuracy(self.predict(X), Y, "Y")

    # -------------------------------------------------------- persistence --
    # pickled as its model file: 2.4 MB instead of 43 MB of Python objects for
    # the CoNLL-2000 chunker (the averaging state, for partial_fit, is not kept)
    _pickle_as_model_file = True

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_train_state", None)   # large; partial_fit restarts averaging
        return state
