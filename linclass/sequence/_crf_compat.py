"""python-crfsuite's objects around a fitted :class:`~linclass.sequence.CRF`:
the training log (``pycrfsuite._logparser.TrainLogParser``), the model dump
(``pycrfsuite.ParsedDump``) and the tagger (``pycrfsuite.Tagger``), so that
code written for sklearn-crfsuite's ``training_log_`` and ``tagger_`` runs
unchanged.  Nothing here needs python-crfsuite.
"""
import contextlib
import fractions
import math
import sys
from collections import namedtuple

import numpy as np

__all__ = ["LabelScore", "TrainingLog", "ParsedDump", "Tagger", "holdout_scores"]

#: Per-label holdout scores, as python-crfsuite's ``LabelScore``.
LabelScore = namedtuple("LabelScore", "match model ref precision recall f1")


class TrainingLog:
    """What CRFsuite logs while training, as python-crfsuite's ``TrainLogParser``.

    Attributes
    ----------
    iterations : list of dict
        One dict per iteration (epoch) with CRFsuite's keys: ``num``,
        ``scores`` (``{label: LabelScore}`` with a dev set, else empty),
        ``loss``, ``feature_norm``, ``time`` (seconds of this iteration) and,
        by algorithm, ``error_norm``, ``active_features``,
        ``linesearch_trials``, ``linesearch_step`` (lbfgs) or
        ``learning_rate`` (l2sgd); with a dev set also ``avg_precision``,
        ``avg_recall``, ``avg_f1``, ``item_accuracy`` (a Fraction),
        ``item_accuracy_float``, ``instance_accuracy``,
        ``instance_accuracy_float``.
    last_iteration : dict or None
    log : list of str
        The log as CRFsuite's text lines.
    featgen_num_features, featgen_seconds, training_seconds, storing_seconds
    """

    def __init__(self):
        self.iterations = []
        self.last_iteration = None
        self.log = []
        self.events = []
        self.featgen_percent = 100
        self.featgen_num_features = None
        self.featgen_seconds = None
        self.training_seconds = None
        self.storing_seconds = None

    @property
    def last_log(self):
        """The text of the last event (the last iteration's block)."""
        if not self.events:
            return ""
        _, start, end = self.events[-1]
        return "".join(self.log[start:end])

    def _add(self, event, lines):
        start = len(self.log)
        self.log.extend(lines)
        self.events.append((event, start, len(self.log)))

    def add_iteration(self, info, head="Iteration"):
        """Record one iteration's dict (and its CRFsuite text block)."""
        self.iterations.append(info)
        self.last_iteration = info
        lines = ["***** %s #%d *****\n" % (head, info["num"]),
                 "Loss: %f\n" % info["loss"]]
        if "feature_norm" in info:
            lines.append("Feature norm: %f\n" % info["feature_norm"])
        if "error_norm" in info:
            lines.append("Error norm: %f\n" % info["error_norm"])
        if "active_features" in info:
            lines.append("Active features: %d\n" % info["active_features"])
        if "linesearch_trials" in info:
            lines.append("Line search trials: %d\n" % info["linesearch_trials"])
            lines.append("Line search step: %f\n" % info["linesearch_step"])
        if "learning_rate" in info:
            lines.append("Learning rate (eta): %f\n" % info["learning_rate"])
        lines.append("Seconds required for this iteration: %.3f\n" % info["time"])
        if "item_accuracy" in info:
            lines.append("Performance by label (#match, #model, #ref) (precision, recall, F1):\n")
            for label, sc in info["scores"].items():
                if sc.precision is None:
                    lines.append("    %s: (0, 0, 0) (******, ******, ******)\n" % label)
                else:
                    lines.append("    %s: (%d, %d, %d) (%.4f, %.4f, %.4f)\n"
                                 % ((label,) + tuple(sc)))
            lines.append("Macro-average precision, recall, F1: (%f, %f, %f)\n"
                         % (info["avg_precision"], info["avg_recall"], info["avg_f1"]))
            ia, sa = info["item_accuracy"], info["instance_accuracy"]
            lines.append("Item accuracy: %d / %d (%.4f)\n"
                         % (ia.numerator if ia.denominator else 0, ia.denominator,
                            info["item_accuracy_float"]))
            lines.append("Instance accuracy: %d / %d (%.4f)\n"
                         % (sa.numerator, sa.denominator, info["instance_accuracy_float"]))
        lines.append("\n")
        self._add("iteration", lines)

    def finish(self, reason, training_seconds):
        self.training_seconds = training_seconds
        self._add("optimization_end", ["%s\n" % reason, "\n",
                                       "Total seconds required for training: %.3f\n"
                                       % training_seconds, "\n"])

    def __repr__(self):
        return "<TrainingLog: %d iterations>" % len(self.iterations)


def _count_fraction(num, den):
    """A Fraction that keeps its denominator for the log (0 / 0 becomes 0 / 1)."""
    return fractions.Fraction(num, den) if den else fractions.Fraction(0, 1)


def holdout_scores(pred, gold, offsets, classes):
    """CRFsuite's holdout evaluation: per-label (match, model, ref, precision,
    recall, F1), their macro average over the labels that occur in ``gold``,
    item and instance accuracy.  ``pred``, ``gold``: label codes per token."""
    K = len(classes)
    pred = np.asarray(pred)
    gold = np.asarray(gold)
    match = np.bincount(gold[pred == gold], minlength=K)
    model = np.bincount(pred, minlength=K)
    ref = np.bincount(gold, minlength=K)
    scores = {}
    sums = [0.0, 0.0, 0.0]
    n_eval = 0
    for k, label in enumerate(classes):
        if ref[k] == 0 and model[k] == 0:
            scores[label] = LabelScore(0, 0, 0, None, None, None)
            continue
        p = match[k] / model[k] if model[k] else 0.0
        r = match[k] / ref[k] if ref[k] else 0.0
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
        scores[label] = LabelScore(int(match[k]), int(model[k]), int(ref[k]), p, r, f)
        if ref[k]:
            n_eval += 1
            sums[0] += p
            sums[1] += r
            sums[2] += f
    n_eval = max(n_eval, 1)
    correct = pred == gold
    n_sent = len(offsets) - 1
    whole = sum(bool(correct[offsets[s]:offsets[s + 1]].all()) for s in range(n_sent))
    item = _count_fraction(int(correct.sum()), len(gold))
    inst = _count_fraction(whole, n_sent)
    return {"scores": scores, "avg_precision": sums[0] / n_eval,
            "avg_recall": sums[1] / n_eval, "avg_f1": sums[2] / n_eval,
            "item_accuracy": item, "item_accuracy_float": float(item),
            "instance_accuracy": inst, "instance_accuracy_float": float(inst)}


class ParsedDump:
    """The content of a model, as python-crfsuite's ``Tagger.info()``.

    Attributes
    ----------
    header : dict of str
        ``magic``, ``size`` (bytes of the saved model), ``type``,
        ``num_features``, ``num_labels``, ``num_attrs`` (CRFsuite's keys; values
        are strings as there).
    labels : dict {name: id (str)}
    attributes : dict {name: id (str)}
        The attributes with at least one non-zero state feature.
    transitions : dict {(label_from, label_to): weight}
    state_features : dict {(attribute, label): weight}
    """

    def __init__(self):
        self.header = {}
        self.labels = {}
        self.attributes = {}
        self.transitions = {}
        self.state_features = {}


class Tagger:
    """A fitted CRF's tagger with python-crfsuite's ``Tagger`` interface:
    ``set(xseq)``, then ``tag()``, ``probability(yseq)``, ``marginal(y, t)``;
    also ``labels()``, ``info()``, ``dump()``, ``open(path)``, ``close()``.

    ``open`` reads a model file written by ``CRF.save`` or by CRFsuite.
    """

    #: ``read(name) -> CRF`` for :meth:`open`; :mod:`linclass.sequence.crf`
    #: sets it to its ``read_model_file`` (this module cannot import crf.py,
    #: which imports it)
    read_model = None

    def __init__(self, crf=None):
        self._crf = crf
        self._clear()

    def _clear(self):
        self._xseq = None
        self._batch = None
        self._node = None
        self._log_z = None

    def _model(self):
        if self._crf is None:
            raise ValueError("the tagger has no model: open() one first")
        return self._crf

    def open(self, name):
        """Load the model file ``name`` (``CRF.save``'s format or CRFsuite's);
        returns a closing context manager, as python-crfsuite."""
        self._crf = type(self).read_model(name)
        self._clear()
        return contextlib.closing(self)

    def close(self):
        """Forget the current sequence (the model stays usable)."""
        self._clear()

    def labels(self):
        """The model's labels (list of str)."""
        return list(self._model().classes_)

    def set(self, xseq):
        """Make ``xseq`` (one sentence of token features) the current sequence."""
        crf = self._model()
        from .tagger import _check_sentences
        _check_sentences([xseq], "xseq")
        batch = crf._batch([xseq])
        self._clear()
        self._xseq = xseq
        self._batch = batch

    def _current(self):
        if self._batch is None:
            raise ValueError("no sequence: call set(xseq) or tag(xseq) first")
        return self._batch

    def _forward_backward(self):
        if self._node is None:
            crf = self._model()
            from . import _crf_kernels as kernels
            self._node, self._log_z, _ = kernels.node_marginals(
                crf._state_table(), self._current(), crf.coef_, crf.transitions_,
                crf._zeros(), crf._zeros())
        return self._node, self._log_z

    def tag(self, xseq=None):
        """The best label sequence of ``xseq`` (or of the current sequence)."""
        if xseq is not None:
            self.set(xseq)
        crf = self._model()
        from . import _crf_kernels as kernels
        codes, _ = kernels.viterbi(crf._state_table(), self._current(), crf.coef_,
                                   crf.transitions_, crf._zeros(), crf._zeros())
        return [crf.classes_[c] for c in codes.tolist()]

    def _label_index(self, y):
        try:
            return self._model().classes_.index(y)
        except ValueError:
            raise ValueError("unknown label %r (the model's labels: %s)"
                             % (y, ", ".join(self._model().classes_))) from None

    def marginal(self, y, pos):
        """P(y_pos = y | x) for the current sequence."""
        node, _ = self._forward_backward()
        k = self._label_index(y)
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) \
                or not 0 <= pos < node.shape[0]:
            raise ValueError("position %r outside the sequence of %d items"
                             % (pos, node.shape[0]))
        return float(node[int(pos), k])

    def probability(self, yseq):
        """P(yseq | x) for the current sequence."""
        batch = self._current()
        yseq = list(yseq)
        if len(yseq) != batch.n_tokens:
            raise ValueError("yseq has %d labels for a sequence of %d items"
                             % (len(yseq), batch.n_tokens))
        for y in yseq:
            self._label_index(y)
        _, log_z = self._forward_backward()
        crf = self._model()
        score = crf._path_scores(batch, [self._xseq], [yseq])[0]
        return float(math.exp(score - log_z[0]))

    def info(self):
        """The model's labels, attributes and weights (a :class:`ParsedDump`)."""
        return self._model()._parsed_dump()

    def dump(self, filename=None):
        """Write the model as CRFsuite's text dump (to stdout by default)."""
        info = self.info()
        lines = ["FILEHEADER = {\n"]
        lines += ["  %s: %s\n" % kv for kv in info.header.items()]
        lines.append("}\n\nLABELS = {\n")
        lines += ["  %5s: %s\n" % (i, name) for name, i in info.labels.items()]
        lines.append("}\n\nATTRIBUTES = {\n")
        lines += ["  %5s: %s\n" % (i, name) for name, i in info.attributes.items()]
        lines.append("}\n\nTRANSITIONS = {\n")
        lines += ["  (1) %s --> %s: %f\n" % (a, b, v) for (a, b), v in info.transitions.items()]
        lines.append("}\n\nSTATE_FEATURES = {\n")
        lines += ["  (0) %s --> %s: %f\n" % (a, b, v)
                  for (a, b), v in info.state_features.items()]
        lines.append("}\n\n")
        text = "".join(lines)
        if filename is None:
            sys.stdout.write(text)
        else:
            from .._atomic import atomic_output
            with atomic_output(filename, "w") as fh:
                fh.write(text)
