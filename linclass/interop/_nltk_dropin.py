"""NLTK's own classifier and parser classes, answered by linclass (issue #39).

Switching from NLTK is one import::

    # from nltk.classify import MaxentClassifier, NaiveBayesClassifier
    from linclass.interop import MaxentClassifier, NaiveBayesClassifier

:class:`MaxentClassifier` and :class:`NaiveBayesClassifier` have NLTK's
signatures (``train``, ``classify``, ``classify_many``, ``prob_classify``,
``prob_classify_many``, ``labels``, ``most_informative_features``,
``show_most_informative_features``, ``explain``, ``weights``/``set_weights``)
and, when NLTK is installed, are ``nltk.classify.api.ClassifierI`` subclasses,
so ``nltk.classify.accuracy`` and every other NLTK helper takes them.

* ``MaxentClassifier.train(..., algorithm="GIS"|"IIS")`` fits
  :class:`linclass.MaxEnt` on NLTK's encoding (one indicator per
  ``(name, value, label)`` seen in training, numbered as NLTK numbers them,
  and for GIS NLTK's correction constant), so the weights after the same
  number of iterations are NLTK's (NLTK keeps them in base-2 units:
  :meth:`MaxentClassifier.weights` converts).  ``"MEGAM"``/``"TADM"`` (external
  programs) raise a ``ValueError`` that names the linclass alternative.
* ``NaiveBayesClassifier.train`` counts with numpy and reproduces NLTK's
  estimates exactly: ELE (add 0.5) by default, ``None`` for a feature missing
  from a featureset while training, a feature name never seen ignored, the
  number of values of a feature name as its bins.

:class:`NLTKParser` puts a linclass parser (:class:`linclass.parsing.PCFG`
by default) behind ``nltk.Tree`` input and output: treebank trees are read as
PARSEVAL reads them (``-NONE-`` elements and the constituents they leave
empty deleted, function tags stripped: ``NP-SBJ-1`` -> ``NP``).

This module imports NLTK (when installed) at its own import; ``import
linclass`` and ``import linclass.interop`` do not import it
(``linclass.interop`` loads this module on the first access to one of its
names).

References
----------
S. Bird, E. Klein and E. Loper, *Natural Language Processing with Python*,
O'Reilly 2009, ch. 6 (classifiers) and ch. 8 (parsing).
J. N. Darroch and D. Ratcliff, Generalized iterative scaling for log-linear
models, Annals of Mathematical Statistics 43(5), 1972.
"""
import math
import warnings
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

from ..datasets.trees import Tree
from ..exceptions import ConvergenceWarning, NotFittedError
from ..linear.maxent import MaxEnt
from ..metrics.parsing import parseval
from ..parsing import PCFG, NoParseError
from .nltk import _plain, _prob_dist, from_nltk_tree, to_nltk_tree

try:                                    # NLTK's base class and estimators when installed
    from nltk.classify.api import ClassifierI as _ClassifierI
    from nltk.parse.api import ParserI as _ParserI
    from nltk.probability import ELEProbDist, LaplaceProbDist, MLEProbDist
except ImportError:                      # pragma: no cover - the tests install nltk
    _ClassifierI = _ParserI = object

    class ELEProbDist:
        """Stand-in for ``nltk.probability.ELEProbDist`` (add 0.5) without NLTK."""

    class LaplaceProbDist:
        """Stand-in for ``nltk.probability.LaplaceProbDist`` (add 1) without NLTK."""

    class MLEProbDist:
        """Stand-in for ``nltk.probability.MLEProbDist`` (relative frequency) without NLTK."""

try:                                    # NLTK >= 3.10 prints through it (control characters)
    from nltk.termsec import safe_print as _print
except ImportError:                      # pragma: no cover
    _print = print

__all__ = ["MaxentClassifier", "NaiveBayesClassifier", "NLTKParser", "treebank_tree"]

_LN2 = math.log(2.0)
# NLTK's Lidstone-family estimators: P = (count + gamma) / (N + bins * gamma)
_GAMMA = {ELEProbDist: 0.5, LaplaceProbDist: 1.0, MLEProbDist: 0.0}


def _check_labeled(labeled_featuresets, what):
    data = list(labeled_featuresets)
    if not data:
        raise ValueError("%s needs at least one (featureset, label) pair" % what)
    for i, item in enumerate(data):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError("%s: item %d is not a (featureset, label) pair" % (what, i))
        if not isinstance(item[0], dict):
            raise TypeError("%s: item %d's featureset is a %s, expected a dict"
                            % (what, i, type(item[0]).__name__))
    return data


def _log(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


def _normalized(logp):
    """Row-wise probabilities from natural log-scores as NLTK's
    ``DictionaryProbDist(..., log=True, normalize=True)``: uniform where every
    score is ``-inf``."""
    logp = np.atleast_2d(np.asarray(logp, dtype=np.float64))
    top = logp.max(axis=1, keepdims=True)
    dead = ~np.isfinite(top[:, 0])
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.exp(logp - np.where(np.isfinite(top), top, 0.0))
        p /= p.sum(axis=1, keepdims=True)
    p[dead] = 1.0 / logp.shape[1]
    return p


def _nltk_argmax(proba, labels):
    """Row-wise index of ``DictionaryProbDist.max()``: the most probable label,
    the largest label among equally probable ones (``max((p, label))``)."""
    best = np.argmax(proba, axis=1)
    tied = np.flatnonzero((proba == proba[np.arange(len(proba)), best][:, None]).sum(axis=1) > 1)
    for i in tied:
        best[i] = max((p, label, k) for k, (p, label) in enumerate(zip(proba[i], labels)))[2]
    return best


# --------------------------------------------------------------------- maxent --

class _Cutoff(Exception):
    """Raised inside the iterative-scaling loop when an NLTK cutoff is met."""

    def __init__(self, lam, loglik, n_iter):
        super().__init__("cutoff")
        self.lam, self.loglik, self.n_iter = lam, loglik, n_iter


def _reached(cutoffs, value, previous, top, delta):
    """NLTK's ``CutoffChecker`` test of one measure: ``value`` at or above
    ``cutoffs[top]``, or improved by at most ``|cutoffs[delta]|`` since the
    previous check (none when ``previous`` is None or 0, as in NLTK)."""
    return (top in cutoffs and value >= cutoffs[top]) or \
        (delta in cutoffs and bool(previous) and value - previous <= abs(cutoffs[delta]))


class _Monitor:
    """NLTK's ``CutoffChecker`` and trace table over the iterates of GIS/IIS.

    Called with the weights after 0, 1, 2, ... updates; NLTK's iteration
    ``t + 1`` is the model after ``t`` updates, and ``max_iter=N`` means
    ``max(N - 1, 1)`` updates (NLTK counts the starting model)."""

    def __init__(self, trace, cutoffs, n_updates):
        self.trace = trace
        self.cutoffs = cutoffs
        self.n_updates = n_updates
        self.ll = None
        self.acc = None
        self.needs_ll = trace > 2 or any(k in cutoffs for k in
                                         ("min_ll", "min_lldelta", "max_acc", "min_accdelta"))

    def bind(self, problem, labels):
        self.F = sp.csr_matrix((problem["data"], problem["indices"], problem["indptr"]),
                               shape=(len(problem["indptr"]) - 1, problem["n_features"]))
        self.y = np.asarray(problem["y"])
        self.n_classes = problem["n_classes"]
        self.labels = labels

    def measure(self, lam):
        """NLTK's ``log_likelihood`` (log of the mean probability of the gold
        labels) and ``accuracy`` on the training data."""
        with np.errstate(invalid="ignore"):
            scores = (self.F @ lam).reshape(-1, self.n_classes)
        p = _normalized(scores)
        gold = p[np.arange(len(self.y)), self.y]
        ll = math.log(float(gold.mean())) if gold.mean() > 0 else -math.inf
        return ll, float(np.mean(_nltk_argmax(p, self.labels) == self.y))

    def __call__(self, lam, t):
        """True when training stops at the weights ``lam`` (after ``t`` updates)."""
        if not self.needs_ll or t >= self.n_updates:
            return False
        ll, acc = self.measure(lam)
        c = self.cutoffs
        if t > 0:
            if math.isnan(ll):
                return True
            if "min_ll" in c or "min_lldelta" in c:
                if _reached(c, ll, self.ll, "min_ll", "min_lldelta"):
                    return True
                self.ll = ll
            if "max_acc" in c or "min_accdelta" in c:
                if _reached(c, acc, self.acc, "max_acc", "min_accdelta"):
                    return True
                self.acc = acc
        if self.trace > 2:
            _print("     %9d    %14.5f    %9.3f" % (t + 1, ll, acc))
        return False


class _MonitoredMaxEnt(MaxEnt):
    """:class:`linclass.MaxEnt` whose GIS/IIS iterates go through ``monitor``
    (a :class:`_Monitor`) while it is set."""

    monitor = None

    def _fit_scaling(self, F, problem, empirical, inv_var):
        if self.monitor is not None:
            self.monitor.bind(problem, [_plain(c) for c in self.classes_])
        return super()._fit_scaling(F, problem, empirical, inv_var)

    def _scaling_loop(self, expectation, nf_values, empirical, inv_var, n_weights):
        monitor = self.monitor
        if monitor is None:
            return super()._scaling_loop(expectation, nf_values, empirical, inv_var, n_weights)
        calls = [0]

        def watched(lam):
            loglik, table = expectation(lam)
            if monitor(lam, calls[0]):
                raise _Cutoff(lam.copy(), loglik, calls[0])
            calls[0] += 1
            return loglik, table

        try:
            return super()._scaling_loop(watched, nf_values, empirical, inv_var, n_weights)
        except _Cutoff as stop:
            return stop.lam, stop.loglik, stop.n_iter


_CUTOFFS = ("max_iter", "min_ll", "min_lldelta", "max_acc", "min_accdelta", "count_cutoff",
            "norm", "explicit", "bernoulli")
_MARK = "1"                  # the value of every (name, value) indicator handed to MaxEnt


class _PairEncoding:
    """NLTK's ``BinaryMaxentFeatureEncoding`` / ``GISEncoding`` over a fitted
    :class:`linclass.MaxEnt`: joint feature ``fid`` is the weight index of the
    model's vocabulary, which numbers ``(name, value, label)`` in order of first
    occurrence in training, as NLTK does."""

    def __init__(self, model, C):
        self.model = model
        self.C = C
        self._labels = [_plain(c) for c in model.classes_]
        self._mapping = {(key[0][0], key[0][1], key[2]): fid
                         for key, fid in model.vocabulary_.items()}
        self._inverse = [None] * len(self._mapping)
        for info, fid in self._mapping.items():
            self._inverse[fid] = info

    def labels(self):
        return self._labels

    def length(self):
        return len(self._mapping) + (self.C is not None)

    def encode(self, featureset, label):
        out = [(self._mapping[fname, fval, label], 1) for fname, fval in featureset.items()
               if (fname, fval, label) in self._mapping]
        if self.C is not None:
            out.append((len(self._mapping), self.C - sum(v for _, v in out)))
        return out

    def describe(self, fid):
        if not isinstance(fid, (int, np.integer)):
            raise TypeError("describe() expected an int")
        if 0 <= fid < len(self._mapping):
            fname, fval, label = self._inverse[fid]
            return f"{fname}=={fval!r} and label is {label!r}"
        if self.C is not None and fid == len(self._mapping):
            return "Correction feature (%s)" % self.C
        raise ValueError("Bad feature id")

    @staticmethod
    def model_input(featuresets):
        """Featuresets for :class:`linclass.MaxEnt`: every ``(name, value)`` pair
        an indicator, whatever the value's type (NLTK's reading; MaxEnt alone
        reads numbers as real-valued features)."""
        return [{(name, value): _MARK for name, value in fs.items()} for fs in featuresets]


class _NLTKEncoding:
    """An NLTK ``MaxentFeatureEncodingI`` as :class:`linclass.MaxEnt` input: the
    vectors ``encoding.encode(fs, label)`` of every label as the candidate
    feature vectors (MaxEnt's input kind 4, one column per joint feature id)."""

    def __init__(self, encoding):
        self.encoding = encoding
        self.C = getattr(encoding, "C", None)
        self._labels = list(encoding.labels())

    def labels(self):
        return self._labels

    def length(self):
        return self.encoding.length()

    def encode(self, featureset, label):
        return self.encoding.encode(featureset, label)

    def describe(self, fid):
        return self.encoding.describe(fid)

    def model_input(self, featuresets):
        n_features = self.encoding.length()
        out = []
        for fs in featuresets:
            rows, cols, vals = [], [], []
            for k, label in enumerate(self._labels):
                for fid, value in self.encoding.encode(fs, label):
                    rows.append(k)
                    cols.append(fid)
                    vals.append(value)
            out.append(sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)),
                                     shape=(len(self._labels), n_features)))
        return out


class _DropInClassifier(_ClassifierI):
    """NLTK's ``ClassifierI`` methods over ``_log_scores(featuresets)``, the
    (n, n_labels) natural log-scores of the labels in :meth:`labels` order."""

    def prob_classify_many(self, featuresets):
        featuresets = list(featuresets)
        if not featuresets:
            return []
        proba = _normalized(self._log_scores(featuresets))
        return [_prob_dist(dict(zip(self.labels(), map(float, row)))) for row in proba]

    def prob_classify(self, featureset):
        return self.prob_classify_many([featureset])[0]

    def classify_many(self, featuresets):
        return [dist.max() for dist in self.prob_classify_many(featuresets)]

    def classify(self, featureset):
        return self.prob_classify(featureset).max()


class MaxentClassifier(_DropInClassifier):
    """NLTK's ``MaxentClassifier`` trained by :class:`linclass.MaxEnt`.

    Build one with :meth:`train`.  ``prob(label | fs)`` is proportional to
    ``2 ** (weights . encode(fs, label))`` as in NLTK (base-2 weights).

    Parameters
    ----------
    model : linclass.MaxEnt
        The fitted model.
    encoding : _PairEncoding or _NLTKEncoding

    References
    ----------
    A. Berger, S. Della Pietra and V. Della Pietra, A maximum entropy approach
    to natural language processing, Computational Linguistics 22(1), 1996.
    """

    #: The algorithm names :meth:`train` knows (NLTK's list).
    ALGORITHMS = ["GIS", "IIS", "MEGAM", "TADM"]

    def __init__(self, model, encoding):
        self._model = model
        self._encoding = encoding
        lam = model.coef_
        if model.correction_ is not None:
            lam = np.append(lam, model.correction_[1])
        # NLTK's weight vector (base 2) is the reference: weights() returns it
        # itself, as NLTK does, and the model follows its changes (_sync)
        self._weights = lam / _LN2
        self._synced = self._weights.copy()

    @classmethod
    def train(cls, train_toks, algorithm=None, trace=3, encoding=None, labels=None,
              gaussian_prior_sigma=0, **cutoffs):
        """Train on ``[(featureset, label), ...]`` (NLTK's signature).

        Parameters
        ----------
        train_toks : list of (dict, label)
        algorithm : {"GIS", "IIS"} (any case), default "IIS"
            ``"MEGAM"`` and ``"TADM"`` call external programs in NLTK; here
            they raise ``ValueError`` (use ``linclass.MaxEnt(algorithm="lbfgs")``,
            which is what MEGAM's L-BFGS computes).
        trace : int
            0 silent; > 0 the iteration budget; > 2 NLTK's table of iteration,
            log-likelihood (log of the mean probability of the gold labels) and
            training accuracy, and the final line.
        encoding : None or nltk ``MaxentFeatureEncodingI``
            None: NLTK's default binary encoding (``GISEncoding`` for GIS),
            computed by linclass; an NLTK encoding object: its vectors
            ``encoding.encode(fs, label)`` (GIS needs its ``C``).
        labels : list or None
            The possible labels; default: those seen in ``train_toks``.
        gaussian_prior_sigma : float
            NLTK ignores it for GIS and IIS; linclass honours it (a Gaussian
            prior with variance ``sigma ** 2`` on the natural-log weights).
        **cutoffs
            ``max_iter`` (default 100; NLTK counts the starting model, so
            ``max_iter=N`` runs ``N - 1`` updates), ``min_ll``, ``min_lldelta``
            as NLTK's ``CutoffChecker``; ``max_acc``, ``min_accdelta`` on the
            training accuracy (NLTK's checker compares the log-likelihood);
            ``count_cutoff``, ``norm``, ``explicit``, ``bernoulli`` are accepted
            and, as in NLTK's GIS/IIS, not used.
        """
        if algorithm is None:
            algorithm = "iis"
        for key in cutoffs:
            if key not in _CUTOFFS:
                raise TypeError("Unexpected keyword arg %r" % key)
        if not isinstance(algorithm, str):
            raise TypeError("algorithm must be a str, got %s" % type(algorithm).__name__)
        algorithm = algorithm.lower()
        if algorithm in ("megam", "tadm"):
            raise ValueError("algorithm=%r runs the external %s program in NLTK, which "
                             "linclass does not call; use 'GIS' or 'IIS' here, or "
                             "linclass.MaxEnt(algorithm='lbfgs') (the L-BFGS that MEGAM runs)"
                             % (algorithm.upper(), algorithm.upper()))
        if algorithm not in ("gis", "iis"):
            raise ValueError("Unknown algorithm %s" % algorithm)
        data = _check_labeled(train_toks, "MaxentClassifier.train")
        featuresets = [fs for fs, _ in data]
        y = [label for _, label in data]
        if labels is not None:
            known = set(labels)
            for label in y:
                if label not in known:
                    raise ValueError("Unexpected label %s" % (label,))
            classes = list(labels)
        else:
            seen = set()                    # NLTK's order: list() of the set of labels
            for label in y:
                seen.add(label)
            classes = list(seen)
        if encoding is not None:
            classes = list(encoding.labels())
        if len(classes) < 2:
            raise ValueError("MaxentClassifier.train needs at least two labels, got %r (NLTK "
                             "would answer the one label for every featureset)" % (classes,))
        if encoding is not None:
            if algorithm == "gis" and not hasattr(encoding, "C"):
                raise TypeError("The GIS algorithm requires an encoding that defines C "
                                "(e.g., GISEncoding).")
            encoding = _NLTKEncoding(encoding)
        max_iter = cutoffs.get("max_iter", 100)
        n_updates = max(int(max_iter) - 1, 1)
        C = None
        if algorithm == "gis":             # GISEncoding's constant: attribute names + 1
            C = encoding.C if encoding is not None else \
                len({name for fs in featuresets for name in fs}) + 1
        sigma = gaussian_prior_sigma
        model = _MonitoredMaxEnt(
            algorithm, max_iter=n_updates, tol=0.0,
            prior_variance=float(sigma) ** 2 if sigma else None,
            gis_constant=float(C) if C is not None else None,
            # an NLTK encoding's vectors hold GIS's correction feature already
            correction_feature=False if encoding is not None else None,
            classes=np.asarray(classes) if np.asarray(classes).dtype != object else None)
        monitor = _Monitor(trace, cutoffs, n_updates)
        model.monitor = monitor
        if trace > 0:
            _print("  ==> Training (%d iterations)" % max_iter)
        if trace > 2:
            _print()
            _print("      Iteration    Log Likelihood    Accuracy")
            _print("      ---------------------------------------")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)   # NLTK stops silently
                model.fit(_PairEncoding.model_input(featuresets) if encoding is None
                          else encoding.model_input(featuresets), y)
            if trace > 2:
                ll, acc = monitor.measure(np.append(model.coef_, model.correction_[1])
                                          if model.correction_ is not None else model.coef_)
                _print(f"         Final    {ll:14.5f}    {acc:9.3f}")
        finally:
            model.monitor = None
        if encoding is None:
            encoding = _PairEncoding(model, C)
        elif encoding.labels() != [_plain(c) for c in model.classes_]:
            raise ValueError("labels that cannot be ordered in one array are not supported "
                             "with an NLTK encoding")
        return cls(model, encoding)

    # ----------------------------------------------------------- weights --
    def labels(self):
        return self._encoding.labels()

    def weights(self):
        """The joint-feature weights in NLTK's order and base-2 units (the GIS
        correction feature's weight last)."""
        return self._weights

    def set_weights(self, new_weights):
        """Replace the weights (NLTK's order and base-2 units, as :meth:`weights`)."""
        w = np.asarray(new_weights, dtype=np.float64)
        if w.shape != (self._encoding.length(),):
            raise ValueError("set_weights needs %d weights, got %r"
                             % (self._encoding.length(), w.shape))
        self._weights = w
        self.__dict__.pop("_most_informative_features", None)

    def _sync(self):
        """The model's natural-log weights from :meth:`weights` (also after an
        in-place change of that array)."""
        if np.array_equal(self._weights, self._synced):
            return
        lam = self._weights * _LN2
        if self._model.correction_ is not None:
            self._model.correction_ = (self._model.correction_[0], float(lam[-1]))
            lam = lam[:-1]
        self._model.coef_ = lam
        self._synced = self._weights.copy()

    def _log_scores(self, featuresets):
        self._sync()
        return self._model.predict_log_proba(self._encoding.model_input(featuresets))

    # --------------------------------------------------------- inspection --
    def explain(self, featureset, columns=4):
        """Print the contribution of each feature to each label's score (NLTK's table)."""
        descr_width = 50
        template = "  %-" + str(descr_width - 2) + "s%s%8.3f"
        weights = self.weights()
        pdist = self.prob_classify(featureset)
        labels = sorted(pdist.samples(), key=pdist.prob, reverse=True)[:columns]
        _print("  Feature".ljust(descr_width)
               + "".join("%8s" % (("%s" % l)[:7]) for l in labels))
        _print("  " + "-" * (descr_width - 2 + 8 * len(labels)))
        sums = defaultdict(int)
        for i, label in enumerate(labels):
            vector = self._encoding.encode(featureset, label)
            vector.sort(key=lambda item: abs(weights[item[0]]), reverse=True)
            for fid, fval in vector:
                score = weights[fid] * fval
                descr = self._encoding.describe(fid).split(" and label is ")[0]
                descr += " (%s)" % fval
                if len(descr) > 47:
                    descr = descr[:44] + "..."
                _print(template % (descr, i * 8 * " ", score))
                sums[label] += score
        _print("  " + "-" * (descr_width - 1 + 8 * len(labels)))
        _print("  TOTAL:".ljust(descr_width) + "".join("%8.3f" % sums[l] for l in labels))
        _print("  PROBS:".ljust(descr_width)
               + "".join("%8.3f" % pdist.prob(l) for l in labels))

    def most_informative_features(self, n=10):
        """Joint-feature ids by decreasing absolute weight (NLTK's ranking)."""
        if "_most_informative_features" not in self.__dict__:
            weights = self.weights()
            self._most_informative_features = sorted(
                range(len(weights)), key=lambda fid: abs(weights[fid]), reverse=True)
        return self._most_informative_features[:n]

    def show_most_informative_features(self, n=10, show="all"):
        """Print ``weight description`` lines as NLTK does; ``show`` "all",
        "pos" (positive weights only) or "neg"."""
        weights = self.weights()
        fids = self.most_informative_features(None)
        if show == "pos":
            fids = [fid for fid in fids if weights[fid] > 0]
        elif show == "neg":
            fids = [fid for fid in fids if weights[fid] < 0]
        for fid in fids[:n]:
            _print(f"{weights[fid]:8.3f} {self._encoding.describe(fid)}")

    def __repr__(self):
        return "<ConditionalExponentialClassifier: %d labels, %d features>" % (
            len(self.labels()), self._encoding.length())


#: NLTK's alias.
ConditionalExponentialClassifier = MaxentClassifier


# ----------------------------------------------------------------- naive Bayes --

_UNSEEN = object()              # a value no distribution has seen


class NaiveBayesClassifier(_DropInClassifier):
    """NLTK's ``NaiveBayesClassifier`` with its tables in numpy arrays.

    ``P(label | fs)`` is proportional to ``P(label) * prod P(fname=fval | label)``
    over the featureset's items whose name was seen in training.

    Parameters
    ----------
    label_probdist : nltk ``ProbDistI``
        ``P(label)``.
    feature_probdist : dict
        ``(label, fname) -> ProbDistI`` over the values (NLTK's constructor).
        :meth:`train` builds the tables directly.
    """

    def __init__(self, label_probdist, feature_probdist):
        labels = list(label_probdist.samples())
        prior = np.array([label_probdist.prob(l) for l in labels], dtype=np.float64)
        pairs, names, values = {}, {}, defaultdict(dict)
        for (label, fname), dist in feature_probdist.items():
            names.setdefault(fname, len(names))
            for fval in dist.samples():
                j = pairs.setdefault((fname, fval), len(pairs))
                values[fname][fval] = j
        k_of = {l: k for k, l in enumerate(labels)}
        prob = np.zeros((len(labels), len(pairs)))
        seen = np.zeros((len(labels), len(pairs)), dtype=bool)
        unseen = np.zeros((len(labels), len(names)))
        has = np.zeros((len(labels), len(names)), dtype=bool)
        for (label, fname), dist in feature_probdist.items():
            k, f = k_of[label], names[fname]
            has[k, f] = True
            unseen[k, f] = dist.prob(_UNSEEN)
            samples = set(dist.samples())
            for fval, j in values[fname].items():
                prob[k, j] = dist.prob(fval)
                seen[k, j] = fval in samples
        # a (label, fname) without distribution: probability 0 for every value
        self._set_tables(labels, prior, pairs, names, prob, seen, unseen, has)

    def _set_tables(self, labels, prior, pairs, names, prob, seen, unseen, has):
        self._labels = labels
        self._prior = prior                 # P(label)                (n_labels,)
        self._pairs = pairs                 # (fname, fval) -> column
        self._names = names                 # fname -> id
        self._prob = prob                   # P(fval | label, fname)  (n_labels, n_pairs)
        self._seen = seen                   # fval among the samples  (n_labels, n_pairs)
        self._has = has                     # (label, fname) has a distribution
        self._pair_name = np.array([names[fname] for fname, _ in pairs], dtype=np.int64)
        self._log_prior = _log(prior)
        self._log_prob = _log(prob)
        self._log_unseen = np.where(has, _log(unseen), -np.inf)

    @classmethod
    def train(cls, labeled_featuresets, estimator=ELEProbDist):
        """Count ``[(featureset, label), ...]`` (NLTK's signature).

        ``estimator``: NLTK's ``ELEProbDist`` (default), ``LaplaceProbDist``
        or ``MLEProbDist`` are computed here; any other NLTK estimator (called
        as ``estimator(freqdist, bins=...)``) goes through NLTK's ``FreqDist``.
        """
        data = _check_labeled(labeled_featuresets, "NaiveBayesClassifier.train")
        gamma = _GAMMA.get(estimator)
        if gamma is None:
            return cls._train_with_nltk(data, estimator)
        labels, codes = {}, []
        pairs, names = {}, {}
        item_label, item_pair = [], []
        for featureset, label in data:
            k = labels.setdefault(label, len(labels))
            codes.append(k)
            for fname, fval in featureset.items():
                names.setdefault(fname, len(names))
                item_label.append(k)
                item_pair.append(pairs.setdefault((fname, fval), len(pairs)))
        n_labels = len(labels)
        n_per_label = np.bincount(codes, minlength=n_labels)
        pair_name = np.array([names[fname] for fname, _ in pairs], dtype=np.int64)
        item_label = np.asarray(item_label, dtype=np.int64)
        item_pair = np.asarray(item_pair, dtype=np.int64)
        present = np.bincount(item_label * len(names) + pair_name[item_pair],
                              minlength=n_labels * len(names)).reshape(n_labels, len(names))
        missing = n_per_label[:, None] - present          # implicit value None
        name_list = list(names)
        sometimes_missing = np.flatnonzero((missing > 0).any(axis=0))
        for f in sometimes_missing:
            pairs.setdefault((name_list[f], None), len(pairs))
        pair_name = np.array([names[fname] for fname, _ in pairs], dtype=np.int64)
        count = np.bincount(item_label * len(pairs) + item_pair,
                            minlength=n_labels * len(pairs)).reshape(n_labels, len(pairs))
        for f in sometimes_missing:
            count[:, pairs[name_list[f], None]] += missing[:, f]
        bins = np.bincount(pair_name, minlength=len(names))
        # LidstoneProbDist: (c + gamma) / (N + bins * gamma); N = the label's count
        divisor = n_per_label[:, None] + bins[None, :] * gamma          # (labels, names)
        prob = (count + gamma) / divisor[:, pair_name]
        unseen = gamma / divisor
        prior = (n_per_label + gamma) / (len(data) + n_labels * gamma)
        obj = cls.__new__(cls)
        obj._set_tables(list(labels), prior, pairs, names, prob, count > 0, unseen,
                        np.ones((n_labels, len(names)), dtype=bool))
        return obj

    @classmethod
    def _train_with_nltk(cls, data, estimator):
        from nltk.probability import FreqDist
        label_freqdist = FreqDist()
        feature_freqdist = defaultdict(FreqDist)
        feature_values = defaultdict(set)
        fnames = set()
        for featureset, label in data:
            label_freqdist[label] += 1
            for fname, fval in featureset.items():
                feature_freqdist[label, fname][fval] += 1
                feature_values[fname].add(fval)
                fnames.add(fname)
        for label in label_freqdist:
            for fname in fnames:
                missing = label_freqdist[label] - feature_freqdist[label, fname].N()
                if missing > 0:
                    feature_freqdist[label, fname][None] += missing
                    feature_values[fname].add(None)
        feature_probdist = {key: estimator(freqdist, bins=len(feature_values[key[1]]))
                            for key, freqdist in feature_freqdist.items()}
        return cls(estimator(label_freqdist), feature_probdist)

    def labels(self):
        return self._labels

    def _log_scores(self, featuresets):
        """Natural log of ``P(label) * prod P(fval | label, fname)``, (n, n_labels)."""
        pairs, names = self._pairs, self._names
        rows_p, cols_p, rows_u, cols_u = [], [], [], []
        for i, featureset in enumerate(featuresets):
            if not isinstance(featureset, dict):
                raise TypeError("featureset %d is a %s, expected a dict"
                                % (i, type(featureset).__name__))
            for fname, fval in featureset.items():
                f = names.get(fname)
                if f is None:                  # never seen: ignored, as NLTK does
                    continue
                try:
                    j = pairs.get((fname, fval))
                except TypeError:              # unhashable value: never seen
                    j = None
                if j is None:
                    rows_u.append(i)
                    cols_u.append(f)
                else:
                    rows_p.append(i)
                    cols_p.append(j)
        n = len(featuresets)
        X = sp.csr_matrix((np.ones(len(rows_p)), (rows_p, cols_p)), shape=(n, len(pairs)))
        U = sp.csr_matrix((np.ones(len(rows_u)), (rows_u, cols_u)), shape=(n, len(names)))
        # sparse products touch stored entries only: no 0 * -inf
        scores = np.tile(self._log_prior, (n, 1))
        scores += _sparse_dot(X, self._log_prob.T) + _sparse_dot(U, self._log_unseen.T)
        return scores

    def most_informative_features(self, n=100):
        """``(fname, fval)`` pairs by decreasing ``max_l P / min_l P`` over the
        labels that saw the value (NLTK's ranking and tie order)."""
        if "_most_informative_features" not in self.__dict__:
            prob = np.where(self._seen, self._prob, np.nan)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)     # all-NaN columns
                low, high = np.nanmin(prob, axis=0), np.nanmax(prob, axis=0)
            keep = self._seen.any(axis=0) & (low > 0)
            ratio = {pair: float(low[j]) / float(high[j]) for pair, j in self._pairs.items()
                     if keep[j]}
            self._most_informative_features = sorted(
                ratio, key=lambda pair: (ratio[pair], pair[0], pair[1] in [None, False, True],
                                         str(pair[1]).lower()))
        return self._most_informative_features[:n]

    def show_most_informative_features(self, n=10):
        """Print NLTK's ``Most Informative Features`` table."""
        _print("Most Informative Features")
        for fname, fval in self.most_informative_features(n):
            j = self._pairs[fname, fval]

            def labelprob(k):
                return self._prob[k, j]

            ks = sorted((k for k in range(len(self._labels)) if self._seen[k, j]),
                        key=lambda k: (-labelprob(k), self._labels[k]), reverse=True)
            if len(ks) == 1:
                continue
            l0, l1 = ks[0], ks[-1]
            if self._prob[l0, j] == 0:
                ratio = "INF"
            else:
                ratio = "%8.1f" % (float(self._prob[l1, j]) / float(self._prob[l0, j]))
            _print("%24s = %-14r %6s : %-6s = %s : 1.0"
                   % (fname, fval, ("%s" % self._labels[l1])[:6],
                      ("%s" % self._labels[l0])[:6], ratio))


def _sparse_dot(X, dense):
    """``X @ dense`` for CSR ``X`` with 0/1 entries and a dense matrix that may
    hold ``-inf``: only the stored entries of X contribute."""
    out = np.zeros((X.shape[0], dense.shape[1]))
    if X.nnz:
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        np.add.at(out, rows, dense[X.indices])
    return out


# --------------------------------------------------------------------- parsing --

def treebank_tree(tree):
    """An ``nltk.Tree`` (or linclass Tree) read as PARSEVAL reads treebank trees:
    a linclass :class:`~linclass.datasets.Tree` without ``-NONE-`` elements and the
    constituents they leave empty, function tags and indices stripped
    (``NP-SBJ-1`` -> ``NP``), and the PTB's unlabelled outer bracket removed.

    Raises ``ValueError`` for a tree that holds only empty elements."""
    ours = from_nltk_tree(tree)
    cleaned = ours.strip_function_tags().remove_empty_elements()
    if cleaned is None:
        raise ValueError("the tree %s holds only empty (-NONE-) elements" % str(ours)[:70])
    while cleaned.label == "" and len(cleaned.children) == 1 \
            and isinstance(cleaned.children[0], Tree):
        cleaned = cleaned.children[0]
    return cleaned


def _sentence(x):
    """The words of a sentence given as a list of words or as a (treebank) tree."""
    if isinstance(x, Tree) or callable(getattr(x, "label", None)):
        return treebank_tree(x).leaves()
    if isinstance(x, str):
        raise TypeError("a sentence is a list of words, got the str %r" % x[:40])
    return list(x)


class NLTKParser(_ParserI):
    """A linclass constituency parser behind ``nltk.Tree`` input and output.

    Parameters
    ----------
    parser : None, linclass.parsing.PCFG or linclass.parsing.DiscriminativeParser
        Unfitted estimator (``DiscriminativeParser``) or None: :meth:`fit`
        estimates a treebank :class:`~linclass.parsing.PCFG`
        (``PCFG.from_treebank(trees, **pcfg_options)``).  A PCFG (already
        estimated) is used as it is.
    **pcfg_options
        Options of ``PCFG.from_treebank`` when ``parser`` is None.

    ``fit(trees)`` takes treebank trees (``nltk.Tree``, with traces and function
    tags: see :func:`treebank_tree`); ``parse(words)`` yields the best tree (an
    ``nltk.Tree``) as NLTK's ``ViterbiParser`` does, ``parse_one`` returns it
    (None when there is no parse); ``predict(sentences)`` returns a list of
    ``nltk.Tree`` or None (``parse`` of a PCFG yields an ``nltk.ProbabilisticTree``
    with the parse's probability, as ``ViterbiParser``); ``score(X, trees)`` is
    the PARSEVAL labelled F1, where
    ``X`` are sentences or the trees themselves (their words after deletion).
    """

    def __init__(self, parser=None, **pcfg_options):
        self.parser = parser
        self.pcfg_options = pcfg_options

    def fit(self, trees, sentences=None):
        cleaned = []
        for k, tree in enumerate(trees):
            try:
                cleaned.append(treebank_tree(tree))
            except (TypeError, ValueError) as exc:
                raise type(exc)("tree %d: %s" % (k, exc)) from None
        if not cleaned:
            raise ValueError("fit needs at least one tree")
        if self.parser is None:
            self.parser_ = PCFG.from_treebank(cleaned, **self.pcfg_options)
        elif isinstance(self.parser, PCFG):
            raise ValueError("the PCFG is already estimated: use it without fit")
        else:
            words = [t.leaves() for t in cleaned] if sentences is None else \
                [_sentence(s) for s in sentences]
            self.parser_ = self.parser.fit(words, cleaned)
        return self

    def _fitted(self):
        if isinstance(self.parser, PCFG):
            return self.parser
        parser = getattr(self, "parser_", None)
        if parser is None:
            raise NotFittedError("this NLTKParser is not fitted yet; call fit(trees) first")
        return parser

    def _best(self, sentences):
        """(linclass tree or None, natural log-probability or None) per sentence."""
        parser = self._fitted()
        sentences = [_sentence(x) for x in sentences]
        if not isinstance(parser, PCFG):
            return [(tree, None) for tree in parser.predict(sentences)]
        out = []
        for words in sentences:
            try:
                out.append(parser.parse(words, return_log_prob=True))
            except NoParseError:           # a word that no rule covers
                out.append((None, None))
        return out

    def predict(self, X):
        """The best tree of each sentence (words, or a tree whose words are
        parsed) as an ``nltk.Tree``; None where the grammar has no parse."""
        return [None if tree is None else to_nltk_tree(tree) for tree, _ in self._best(X)]

    def parse_sents(self, sents, *args, **kwargs):
        """An iterator per sentence over its best parse (none when there is no
        parse), as ``nltk.ViterbiParser``: with a PCFG an
        ``nltk.ProbabilisticTree`` carrying the parse's probability."""
        from nltk import ProbabilisticTree
        for tree, log_prob in self._best(sents):
            if tree is None:
                yield iter(())
                continue
            tree = to_nltk_tree(tree)
            if log_prob is not None:
                tree = ProbabilisticTree(tree.label(), list(tree), prob=math.exp(log_prob))
            yield iter((tree,))

    def parse(self, sent, *args, **kwargs):
        return next(self.parse_sents([sent]))

    def parse_one(self, sent, *args, **kwargs):
        return next(self.parse(sent), None)

    def grammar(self):
        """The grammar as an ``nltk.PCFG`` (PCFG parsers)."""
        return self._fitted().to_nltk()

    def score(self, X, trees):
        """PARSEVAL labelled F1 (evalb's COLLINS conventions) of the parses of
        ``X`` against ``trees`` (``nltk.Tree`` or linclass trees)."""
        gold = [treebank_tree(t) for t in trees]
        predicted = [None if t is None else from_nltk_tree(t) for t in self.predict(X)]
        return parseval(gold, predicted)["f1"]
