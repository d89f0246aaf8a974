"""LIBLINEAR's ``train`` and ``predict`` command lines, run by linclass.

``linclass liblinear-train`` and ``linclass liblinear-predict`` accept the
command lines of LIBLINEAR's ``train`` and ``predict`` (Fan et al., "LIBLINEAR:
A library for large linear classification", JMLR 9, 2008; its README) and
print what they print, so that scripts written for LIBLINEAR run unchanged::

    linclass liblinear-train [options] training_set_file [model_file]
    linclass liblinear-predict [options] test_file model_file output_file

    linclass liblinear-train a9a                     # writes a9a.model
    linclass liblinear-train -s 0 -c 4 -B 1 a9a
    linclass liblinear-train -v 5 -e 0.001 a9a       # Cross Validation Accuracy = 84.9%
    linclass liblinear-train -c 10 -w1 2 -w2 5 -w3 2 four_class_data_file
    linclass liblinear-predict -b 1 a9a.t a9a.model output   # Accuracy = 84.98% (13835/16281)

Each ``-s`` type is solved by the linclass estimator that minimises the same
objective:

====  =====================  ==========================================================
-s    LIBLINEAR              linclass
====  =====================  ==========================================================
0     L2R_LR                 ``LogisticRegression(penalty="l2", solver="tron")``
1     L2R_L2LOSS_SVC_DUAL    ``LinearSVC(loss="squared_hinge", dual=True)``
2     L2R_L2LOSS_SVC         ``LinearSVC(loss="squared_hinge", dual=False)`` (same optimum)
3     L2R_L1LOSS_SVC_DUAL    ``LinearSVC(loss="hinge", dual=True)``
4     MCSVM_CS               ``CrammerSingerSVC``
5     L1R_L2LOSS_SVC         ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``
6     L1R_LR                 ``LogisticRegression(penalty="l1")``
7     L2R_LR_DUAL            ``LogisticRegression(penalty="l2", solver="tron")`` (same optimum)
====  =====================  ==========================================================

The regression and one-class types (``-s 11, 12, 13, 21``) are refused:
linclass has no solver for them yet.  With more than two classes every type
but 4 is LIBLINEAR's one-vs-rest: one binary problem per class, the class's
``-w`` weight on its own examples and ``C`` on all the others (a
:class:`linclass.OneVsRestClassifier` of binary models; logistic regression is
not fitted as a multinomial model).  ``-B b`` (b > 0) appends the feature
``b`` to every example, and its weight is regularised like the others
(``intercept_scaling=b`` of the SVMs; the logistic models are fitted on the
extended rows and store ``intercept_ = b * w_b``); ``-R -B 1`` leaves the
logistic intercept unregularised (``penalize_intercept=False``), which
linclass's SVMs cannot do.  ``-e`` is translated into each estimator's own
stopping rule: the dual solvers (1, 3, 4) and ``-s 2`` use it as LIBLINEAR's
dual violation bound; ``-s 0, 5, 6, 7`` scale it by ``min(#pos, #neg) / l``
as LIBLINEAR does.  ``-C`` searches C for ``-s 0`` and ``2`` as LIBLINEAR does
(cross-validation at C = start, 2 start, ... up to 1024), but fits every C
from scratch and tries them all (LIBLINEAR warm-starts each C from the last
and stops once the weights no longer change).

Differences from LIBLINEAR, on purpose
--------------------------------------
* The model file written is a linclass model (``model.save``: ``.npz`` + JSON,
  written atomically), which also loads in ``linclass predict``; LIBLINEAR's
  text model format is not written.  ``liblinear-predict`` reads all three:
  models of ``liblinear-train``, models saved by ``linclass train`` from
  svmlight data, and the text models of LIBLINEAR's own ``train`` (the
  classification types), with LIBLINEAR's predictions.
* ``-`` as a file name is the standard input (data, or a model) or output (a
  model, or the predictions).  When the predictions go to the standard
  output, the ``Accuracy = ...`` line goes to the standard error.
* Errors are one line ``linclass liblinear-train: error: ...`` with exit status
  2 (usage or data) or 3 (a model file that cannot be read), never 1 and never a
  traceback (``--debug`` shows it).  Option values are checked strictly
  (``-c abc`` is an error, where LIBLINEAR's ``atof`` reads 0).
* A failed run leaves every existing file as it was: everything is read and
  computed before the output is written, to a temporary file renamed over the
  target; an output that names an input is refused.
* Progress: one ``optimization finished, #iter = N`` line per binary problem
  (``-q`` silences it), not LIBLINEAR's solver trace.  Cross-validation folds
  are drawn from a seeded permutation, so ``-v`` is repeatable but its folds
  are not LIBLINEAR's.

Labels are printed as LIBLINEAR prints them: ``%.17g`` of the label (``+1`` is
written ``1``, ``-1`` stays ``-1``), ``%g`` with ``-b 1``, whose header
``labels ...`` lists the classes in LIBLINEAR's order (first appearance in the
training file, except that ``+1`` comes first in a ``-1``/``+1`` problem).
"""
import io
import math
import os
import re
import sys
import tempfile
import types
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = ["CommandError", "run", "parse_train_args", "parse_predict_args", "build_estimator",
           "LiblinearTextModel"]

EXIT_OK, EXIT_USAGE, EXIT_MODEL = 0, 2, 3


class CommandError(Exception):
    """An error of ``liblinear-train`` / ``liblinear-predict``, reported in one
    line with its exit status ``code``: 2 for usage and data errors, 3 for a
    model file that cannot be read (the convention of :mod:`linclass.cli`)."""

    def __init__(self, message, code=EXIT_USAGE):
        super().__init__(message)
        self.code = code


def model_error(message):
    return CommandError(message, EXIT_MODEL)

#: ``-s`` types linclass solves: name, linclass estimator, LIBLINEAR's default ``-e``.
SOLVER_TYPES = {
    0: ("L2R_LR", "LogisticRegression(penalty='l2', solver='tron')", 0.01),
    1: ("L2R_L2LOSS_SVC_DUAL", "LinearSVC(loss='squared_hinge', dual=True)", 0.1),
    2: ("L2R_L2LOSS_SVC", "LinearSVC(loss='squared_hinge', dual=False)", 0.01),
    3: ("L2R_L1LOSS_SVC_DUAL", "LinearSVC(loss='hinge', dual=True)", 0.1),
    4: ("MCSVM_CS", "CrammerSingerSVC", 0.1),
    5: ("L1R_L2LOSS_SVC", "LinearSVC(penalty='l1', loss='squared_hinge', dual=False)", 0.01),
    6: ("L1R_LR", "LogisticRegression(penalty='l1')", 0.01),
    7: ("L2R_LR_DUAL", "LogisticRegression(penalty='l2', solver='tron')", 0.1),
}
#: ``-s`` types of LIBLINEAR that linclass cannot solve yet.
UNSUPPORTED_TYPES = {11: "L2R_L2LOSS_SVR", 12: "L2R_L2LOSS_SVR_DUAL",
                     13: "L2R_L1LOSS_SVR_DUAL", 21: "ONECLASS_SVM"}
LOGISTIC_TYPES = (0, 6, 7)
#: -C searches C for these types (LIBLINEAR: and -s 11).
PARAMETER_SEARCH_TYPES = (0, 2)
#: -C tries C = start, 2 start, 4 start, ... up to this (LIBLINEAR's max_C).
MAX_SEARCH_C = 1024.0
#: LIBLINEAR's -R works with these types; linclass's SVMs always regularise the bias.
UNREGULARISED_BIAS_TYPES = (0, 2, 5, 6, 11)
#: Passes of the solvers (LIBLINEAR's iteration limit of its dual and Newton solvers).
MAX_ITER = 1000

TRAIN_USAGE = """\
Usage: linclass liblinear-train [options] training_set_file [model_file]
options:
-s type : set type of solver (default 1)
  for multi-class classification
        0 -- L2-regularized logistic regression (primal)
        1 -- L2-regularized L2-loss support vector classification (dual)
        2 -- L2-regularized L2-loss support vector classification (primal)
        3 -- L2-regularized L1-loss support vector classification (dual)
        4 -- support vector classification by Crammer and Singer
        5 -- L1-regularized L2-loss support vector classification
        6 -- L1-regularized logistic regression
        7 -- L2-regularized logistic regression (dual)
  (11, 12, 13: support vector regression, 21: one-class SVM -- not in linclass yet)
-c cost : set the parameter C (default 1)
-p epsilon : set the epsilon in loss function of SVR (default 0.1)
-e epsilon : set tolerance of termination criterion
        -s 0, 2, 5 and 6: default 0.01; -s 1, 3, 4 and 7: default 0.1
-B bias : if bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1)
-R : not regularize the bias; must with -B 1 to have the bias (for -s 0 and 6)
-wi weight: weights adjust the parameter C of different classes (e.g. -w1 2 -w-1 0.5)
-v n: n-fold cross validation mode
-C : find parameters (C for -s 0 and 2)
-q : quiet mode (no outputs)
--debug : show the Python traceback of an error
A file name '-' is the standard input (training set) or output (model).
"""

PREDICT_USAGE = """\
Usage: linclass liblinear-predict [options] test_file model_file output_file
options:
-b probability_estimates: whether to output probability estimates, 0 or 1 (default 0); \
currently for logistic regression only
-q : quiet mode (no outputs)
--debug : show the Python traceback of an error
A file name '-' is the standard input (test file or model) or output (predictions).
"""


# -------------------------------------------------------------- parsing ---

def _number(option, text, kind=float):
    """The value of ``option`` as a finite ``kind``; anything else is a usage error."""
    try:
        value = kind(text)
    except ValueError:
        raise CommandError("option %s expects %s, got %r"
                           % (option, "an integer" if kind is int else "a number", text)) from None
    if kind is float and not math.isfinite(value):
        raise CommandError("option %s expects a finite number, got %r" % (option, text))
    return value


def _split_options(argv, args, flags, valued, usage):
    """LIBLINEAR's ``parse_command_line``: options come first, each ``-x`` with
    its value in the next argument (whatever it looks like, so ``-B -1``
    works); ``-wLABEL VALUE`` carries its label in the option itself; the first
    argument that does not start with ``-`` (or is ``-`` itself) ends them.
    Returns ([(option, value or None)], [file names])."""
    options, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg == "-":
            break
        if arg in ("-h", "--help"):
            sys.stdout.write(usage)
            raise SystemExit(EXIT_OK)
        if arg == "--debug":
            args.debug = True
            i += 1
            continue
        letter = arg[1:2]
        if letter in flags and len(arg) == 2:
            options.append((arg, None))
            i += 1
            continue
        if letter not in valued or (letter != "w" and len(arg) != 2):
            if letter in valued:
                raise CommandError("option %s: write its value as a separate argument (%s %s)"
                                   % (arg, arg[:2], arg[2:]))
            raise CommandError("unknown option: %s (see 'linclass %s --help')"
                               % (arg, args.command))
        if i + 1 >= len(argv):
            raise CommandError("option %s needs a value (see 'linclass %s --help')"
                               % (arg, args.command))
        options.append((arg, argv[i + 1]))
        i += 2
    return options, list(argv[i:])


class TrainOptions:
    """The parsed ``liblinear-train`` command line (LIBLINEAR's defaults)."""

    def __init__(self):
        self.solver_type = 1
        self.C = 1.0
        self.C_given = False
        self.p = 0.1
        self.nu = 0.5
        self.eps = None                    # LIBLINEAR's default of the solver type
        self.bias = -1.0
        self.regularize_bias = True
        self.weights = []                  # [(label, weight)] in command-line order
        self.n_folds = None
        self.find_C = False
        self.solver_defaulted = False
        self.quiet = False
        self.train_file = None
        self.model_file = None


def parse_train_args(argv, args):
    """:class:`TrainOptions` of a ``liblinear-train`` command line (usage errors
    as :class:`linclass.cli.CLIError`)."""
    opts = TrainOptions()
    options, files = _split_options(argv, args, flags="qCR", valued="scpneBwv",
                                    usage=TRAIN_USAGE)
    for option, value in options:
        letter = option[1]
        if letter == "s":
            opts.solver_type = _number(option, value, int)
        elif letter in "cpneB":
            attribute = {"c": "C", "p": "p", "n": "nu", "e": "eps", "B": "bias"}[letter]
            setattr(opts, attribute, _number(option, value))
            opts.C_given = opts.C_given or letter == "c"
        elif letter == "w":
            label = _number(option, option[2:], int) if option[2:] else None
            if label is None:
                raise CommandError("option -w needs the class label in it: -wLABEL WEIGHT "
                                   "(e.g. -w1 2 or -w-1 0.5)")
            opts.weights.append((label, _number(option, value)))
        elif letter == "v":
            opts.n_folds = _number(option, value, int)
            if opts.n_folds < 2:
                raise CommandError("n-fold cross validation: n must >= 2 (got -v %s)" % value)
        elif letter == "q":
            opts.quiet = True
        elif letter == "C":
            opts.find_C = True
        elif letter == "R":
            opts.regularize_bias = False
    if opts.find_C and not any(option == "-s" for option, _ in options):
        opts.solver_type = 2              # LIBLINEAR's default for the search
        opts.solver_defaulted = True
    if not files:
        raise CommandError("no training_set_file given (usage: linclass liblinear-train "
                           "[options] training_set_file [model_file]; see --help)")
    if len(files) > 2:
        raise CommandError("too many file names: %s (expected training_set_file "
                           "[model_file])" % " ".join(files))
    opts.train_file = files[0]
    if len(files) == 2:
        opts.model_file = files[1]
    elif opts.train_file == "-":
        opts.model_file = None            # checked below unless -v
    else:
        opts.model_file = os.path.basename(opts.train_file.rstrip("/")) + ".model"
    _check_train_options(opts)
    return opts


def _check_train_options(opts):
    """LIBLINEAR's ``check_parameter``, plus what linclass cannot do."""
    if opts.solver_type in UNSUPPORTED_TYPES:
        raise CommandError("-s %d (%s): linclass has no solver for it yet"
                           % (opts.solver_type, UNSUPPORTED_TYPES[opts.solver_type]))
    if opts.solver_type not in SOLVER_TYPES:
        raise CommandError("unknown solver type -s %d (known: %s)"
                           % (opts.solver_type, ", ".join(map(str, SOLVER_TYPES))))
    if opts.C <= 0:
        raise CommandError("C <= 0 (-c %g)" % opts.C)
    if opts.eps is None:
        opts.eps = SOLVER_TYPES[opts.solver_type][2]
    elif opts.eps <= 0:
        raise CommandError("eps <= 0 (-e %g)" % opts.eps)
    if opts.p < 0:
        raise CommandError("p < 0 (-p %g)" % opts.p)
    for label, weight in opts.weights:
        if weight < 0:
            raise CommandError("-w%d %g: a class weight must be >= 0" % (label, weight))
    if not opts.regularize_bias:
        if opts.bias != 1.0:
            raise CommandError("To not regularize bias, must specify -B 1 along with -R")
        if opts.solver_type not in UNREGULARISED_BIAS_TYPES:
            raise CommandError("-R option supported only for solver L2R_LR, L2R_L2LOSS_SVC, "
                               "L1R_L2LOSS_SVC, L1R_LR, and L2R_L2LOSS_SVR")
        if opts.solver_type not in LOGISTIC_TYPES:
            raise CommandError("-R with -s %d: linclass's SVM solvers always regularise the "
                               "bias; -R is available for -s 0 and 6" % opts.solver_type)
    if opts.find_C and opts.solver_type not in PARAMETER_SEARCH_TYPES:
        raise CommandError("-C (parameter search) is available for -s 0 and -s 2 (LIBLINEAR "
                           "also offers it for -s 11), not -s %d" % opts.solver_type)
    if opts.model_file is None and opts.n_folds is None and not opts.find_C:
        raise CommandError("give the model_file when the training set is the standard input "
                           "(use '-' to write the model to the standard output)")


class PredictOptions:
    """The parsed ``liblinear-predict`` command line."""

    def __init__(self):
        self.probability = False
        self.quiet = False
        self.test_file = self.model_file = self.output_file = None


def parse_predict_args(argv, args):
    """:class:`PredictOptions` of a ``liblinear-predict`` command line."""
    opts = PredictOptions()
    options, files = _split_options(argv, args, flags="q", valued="b", usage=PREDICT_USAGE)
    for option, value in options:
        if option == "-q":
            opts.quiet = True
        elif value not in ("0", "1"):
            raise CommandError("-b expects 0 or 1 (probability estimates), got %r" % value)
        else:
            opts.probability = value == "1"
    if len(files) != 3:
        raise CommandError("expected test_file model_file output_file, got %d file name(s) "
                           "(see 'linclass liblinear-predict --help')" % len(files))
    opts.test_file, opts.model_file, opts.output_file = files
    if opts.test_file == "-" and opts.model_file == "-":
        raise CommandError("the test file and the model cannot both be the standard input")
    return opts


# ----------------------------------------------------------------- data ---

def read_problem(path, files, n_features=None):
    """(X, y) of a LIBLINEAR data file (1-based svmlight; ``-``: standard input).

    With ``n_features``, features beyond it are dropped (LIBLINEAR's predict
    ignores indices larger than the training maximum) and missing ones padded."""
    from ..datasets import load_svmlight_file
    files.check_inputs(None if path == "-" else path)
    source = io.BytesIO(sys.stdin.buffer.read()) if path == "-" else path
    X, y = load_svmlight_file(source, zero_based=False)
    name = "the standard input" if path == "-" else path
    if X.shape[0] == 0:
        raise CommandError("%s holds no examples" % name)
    if n_features is not None and X.shape[1] != n_features:
        if X.shape[1] > n_features:
            X = X[:, :n_features].tocsr()
        else:
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X, y


def label_order(y):
    """LIBLINEAR's class order: first appearance in ``y``, but ``+1`` before
    ``-1`` in a two-class -1/+1 problem."""
    _, first = np.unique(y, return_index=True)
    order = [float(v) for v in y[np.sort(first)]]
    if order == [-1.0, 1.0]:
        order.reverse()
    return order


# ------------------------------------------------------------- training ---

def _class_weights(opts, classes, warn):
    """{label: weight} from the -w options (repeated labels multiply, as in
    LIBLINEAR); labels not in the data are warned about and ignored."""
    weights = {}
    present = set(classes.tolist())
    for label, weight in opts.weights:
        if float(label) not in present:
            warn("class label %d specified in weight is not found" % label)
            continue
        weights[float(label)] = weights.get(float(label), 1.0) * weight
    return weights


def _relative_tol(opts, y_binary):
    """LIBLINEAR's primal tolerance ``eps * min(#pos, #neg) / l``."""
    n_pos = int(np.count_nonzero(y_binary == y_binary.max()))
    return opts.eps * max(min(n_pos, len(y_binary) - n_pos), 1) / len(y_binary)


def _l1_logistic_tol(opts, X, y_binary, cost):
    """The L-BFGS-B tolerance (largest projected-gradient entry of the loss
    divided by the sum of weights) standing for LIBLINEAR's ``-s 6`` rule
    ``|f'(w)| <= eps * min(#pos, #neg) / l * |f'(0)|``."""
    target = (y_binary == y_binary.max()).astype(np.float64)
    g0 = np.abs(np.asarray(X.T @ (cost * (0.5 - target))).ravel()).max()
    return max(_relative_tol(opts, y_binary) * g0 / cost.sum(), 1e-12)


def build_estimator(opts, X, y, class_weight):
    """The unfitted linclass estimator of ``opts.solver_type`` for a binary
    problem ``(X, y)`` with ``class_weight`` ({label: weight} or None), and
    the rows to fit it on (logistic models with a regularised bias get the
    bias column appended; see :func:`_fold_bias`)."""
    from .. import LinearSVC, LogisticRegression
    s, C, bias = opts.solver_type, float(opts.C), float(opts.bias)
    if s in LOGISTIC_TYPES:
        unpenalised = not opts.regularize_bias
        if bias > 0 and not unpenalised:
            X = sp.hstack([X, np.full((X.shape[0], 1), bias)], format="csr")
        if s == 6:
            codes = np.searchsorted(np.unique(y), y)
            weights = np.ones(2) if not class_weight else np.array(
                [class_weight.get(float(v), 1.0) for v in np.unique(y)])
            tol = _l1_logistic_tol(opts, X, y, weights[codes])
            estimator = LogisticRegression(penalty="l1", C=C, solver="lbfgs", tol=tol)
        else:   # -s 7's dual violation bound, 10 times -s 0's default, at its scale
            eps_scale = 0.1 if s == 7 else 1.0
            estimator = LogisticRegression(penalty="l2", C=C, solver="tron",
                                           tol=eps_scale * _relative_tol(opts, y))
        estimator.set_params(fit_intercept=unpenalised, class_weight=class_weight or None,
                             max_iter=MAX_ITER)
        return estimator, X
    svc = {1: dict(loss="squared_hinge", dual=True, tol=opts.eps),
           2: dict(loss="squared_hinge", dual=False, tol=opts.eps),
           3: dict(loss="hinge", dual=True, tol=opts.eps),
           5: dict(penalty="l1", loss="squared_hinge", dual=False,
                   tol=_relative_tol(opts, y))}[s]
    estimator = LinearSVC(C=C, fit_intercept=bias > 0, intercept_scaling=bias if bias > 0
                          else 1.0, class_weight=class_weight or None, max_iter=MAX_ITER,
                          random_state=0, **svc)
    return estimator, X


def _fold_bias(estimator, n_features, bias):
    """A logistic model fitted on rows extended by the bias feature becomes the
    same model on the original rows, ``intercept_ = bias * w_b``."""
    coef = estimator.coef_
    if coef.shape[1] == n_features:
        return estimator
    estimator.coef_ = np.ascontiguousarray(coef[:, :n_features])
    estimator.intercept_ = coef[:, n_features] * bias
    estimator.n_features_in_ = n_features
    estimator.set_params(fit_intercept=True)
    return estimator


def _fit_binary(opts, X, y, class_weight):
    estimator, rows = build_estimator(opts, X, y, class_weight)
    estimator.fit(rows, y)
    return _fold_bias(estimator, X.shape[1], float(opts.bias))


def fit(opts, X, y, warn):
    """The linclass model of LIBLINEAR's ``train`` with ``opts`` on ``(X, y)``."""
    from .. import CrammerSingerSVC, OneVsRestClassifier
    classes = np.unique(y)
    if len(classes) < 2:
        raise CommandError("the training set holds one class (%g); a classifier needs two or "
                           "more" % classes[0])
    weights = _class_weights(opts, classes, warn)
    if opts.solver_type == 4:
        bias = float(opts.bias)
        model = CrammerSingerSVC(C=float(opts.C), tol=opts.eps, max_iter=100 * MAX_ITER,
                                 fit_intercept=bias > 0,
                                 intercept_scaling=bias if bias > 0 else 1.0,
                                 class_weight=weights or None, random_state=0)
        return model.fit(X, y)
    if len(classes) == 2:
        return _fit_binary(opts, X, y, weights)
    # LIBLINEAR's one-vs-rest: class k's weight on its examples, C on the rest
    problems = []
    for label in classes:
        target = (y == label).astype(np.int32)
        problems.append(_fit_binary(opts, X, target, {1: weights.get(float(label), 1.0),
                                                      0: 1.0}))
    model = OneVsRestClassifier(type(problems[0])(**problems[0].get_params()))
    model.estimators_ = problems
    model.classes_ = classes
    model.n_features_in_ = X.shape[1]
    model.n_iter_ = int(max(np.max(e.n_iter_) for e in problems))
    model.coef_ = np.vstack([e.coef_ for e in problems])
    model.intercept_ = np.concatenate([np.ravel(e.intercept_) for e in problems])
    return model


def _iterations(model):
    """Passes or iterations of each binary problem of a fitted model."""
    parts = getattr(model, "estimators_", [model])
    return [int(np.max(getattr(e, "n_iter_", 0))) for e in parts]


def _cross_validation(opts, X, y, warn):
    """LIBLINEAR's ``-v n``: folds of a (seeded) random permutation, each
    predicted by a model trained on the others; returns the accuracy in %."""
    n = X.shape[0]
    n_folds = opts.n_folds
    if n_folds > n:
        warn("# folds > # data. Will use # folds = # data instead (i.e., leave-one-out "
             "cross validation)")
        n_folds = n
    permutation = np.random.default_rng(0).permutation(n)
    starts = [k * n // n_folds for k in range(n_folds + 1)]
    predicted = np.empty_like(y)
    for k in range(n_folds):
        test = permutation[starts[k]:starts[k + 1]]
        train = np.concatenate([permutation[:starts[k]], permutation[starts[k + 1]:]])
        if len(np.unique(y[train])) == 1:          # LIBLINEAR predicts the only class
            predicted[test] = y[train[0]]
            continue
        predicted[test] = fit(opts, X[train], y[train], warn).predict(X[test])
    return 100.0 * np.count_nonzero(predicted == y) / n


def _start_C(opts, X):
    """LIBLINEAR's first C of the search: the power of 2 below ``1 / (l max_i
    ||x_i||^2)`` (logistic) or ``1 / (2 l max_i ||x_i||^2)`` (squared hinge),
    the bias feature counted in ``x_i``."""
    sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    if opts.bias >= 0:
        sq_norms = sq_norms + opts.bias ** 2
    smallest = 1.0 / (X.shape[0] * max(sq_norms.max(), 1e-300))
    if opts.solver_type == 2:
        smallest /= 2.0
    return 2.0 ** math.floor(math.log2(smallest))


def _find_C(opts, X, y, messages):
    """LIBLINEAR's ``-C``: cross-validation accuracy for C = start, 2 start, ...
    up to 1024 (start: ``-c`` when given, else :func:`_start_C`); the best C
    (the smallest one of the best accuracy).  Every C is fitted from scratch
    (LIBLINEAR warm-starts each from the previous one, and stops early once the
    weights stop changing)."""
    if opts.n_folds is None:
        opts.n_folds = 5
    print("Doing parameter search with %d-fold cross validation." % opts.n_folds)
    C = opts.C if opts.C_given else _start_C(opts, X)
    best_C, best_rate = C, -1.0
    while C <= MAX_SEARCH_C:
        opts.C = C
        rate = _cross_validation(opts, X, y, messages.warn)
        messages.info("log2c=%7.2f\trate=%g" % (math.log2(C), rate))
        if rate > best_rate:
            best_C, best_rate = C, rate
        C *= 2.0
    print("Best C = %g  CV accuracy = %g%%" % (best_C, best_rate))


def _save(model, path):
    """``model.save`` (atomic) to ``path``, or its bytes to the standard output."""
    if path != "-":
        model.save(path)
        return
    with tempfile.TemporaryDirectory() as directory:
        target = os.path.join(directory, "model.npz")
        model.save(target)
        with open(target, "rb") as fh:
            data = fh.read()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


class _Messages:
    """LIBLINEAR's ``info``: progress and warnings on one line each, none with -q."""

    def __init__(self, args, quiet):
        self.command, self.quiet = args.command, quiet
        self.seen = set()

    def warn(self, message):
        message = " ".join(str(message).split())
        if not self.quiet and message not in self.seen:
            self.seen.add(message)
            print("linclass %s: warning: %s" % (self.command, message), file=sys.stderr,
                  flush=True)

    def info(self, message):
        if not self.quiet:
            print(message, flush=True)

    def replay(self, caught):
        """The solvers' warnings, one line for each kind (numbers aside) with its count."""
        kinds = {}
        for w in caught:
            text = " ".join(str(w.message).split())
            kinds.setdefault(re.sub(r"[-+.0-9e]+", "#", text), []).append(text)
        for texts in kinds.values():
            self.warn(texts[0] + ("" if len(texts) == 1 else
                                  " (and %d more like it)" % (len(texts) - 1)))


def train_command(args, files):
    """``linclass liblinear-train`` (``files``: see :func:`run`)."""
    opts = parse_train_args(args.liblinear_args, args)
    messages = _Messages(args, opts.quiet)
    if opts.solver_defaulted:
        messages.warn("Solver not specified. Using -s 2")
    if opts.n_folds is None and not opts.find_C:
        files.check_outputs([("model_file", opts.model_file)], [opts.train_file])
    X, y = read_problem(opts.train_file, files)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if opts.find_C:
            _find_C(opts, X, y, messages)
        elif opts.n_folds is not None:
            accuracy = _cross_validation(opts, X, y, messages.warn)
        else:
            model = fit(opts, X, y, messages.warn)
    messages.replay(caught)
    if opts.find_C:
        return EXIT_OK
    if opts.n_folds is not None:
        print("Cross Validation Accuracy = %g%%" % accuracy)    # printed even with -q
        return EXIT_OK
    name = SOLVER_TYPES[opts.solver_type][0]
    model.input_spec_ = {
        "format": "svmlight", "n_features": X.shape[1],
        "label_tokens": ["%.17g" % v for v in np.unique(y)],
        "liblinear": {"solver_type": opts.solver_type, "solver_name": name,
                      "C": opts.C, "eps": opts.eps, "bias": opts.bias,
                      "regularize_bias": opts.regularize_bias,
                      "weights": [[label, w] for label, w in opts.weights],
                      "labels": label_order(y)}}
    _save(model, opts.model_file)
    if not opts.quiet:
        out = sys.stderr if opts.model_file == "-" else sys.stdout
        for n_iter in _iterations(model):
            print("optimization finished, #iter = %d" % n_iter, file=out)
    return EXIT_OK


# ----------------------------------------------------------- prediction ---

class LiblinearTextModel:
    """A model file written by LIBLINEAR's ``train`` (its text format), for
    ``liblinear-predict``: ``solver_type``, ``nr_class``, ``label``,
    ``nr_feature``, ``bias`` then ``w``, one line per feature (and the bias),
    one column per class (one for two classes, except Crammer-Singer's)."""

    def __init__(self, text, name):
        header, sep, body = text.partition("\nw\n")
        fields = {}
        for line in header.splitlines():
            key, _, value = line.strip().partition(" ")
            fields[key] = value.split()
        try:
            solver = fields["solver_type"][0]
            self.n_classes = int(fields["nr_class"][0])
            self.n_features = int(fields["nr_feature"][0])
            self.bias = float(fields["bias"][0])
            labels = [float(int(v)) for v in fields.get("label", [])]
        except (KeyError, IndexError, ValueError) as exc:
            raise model_error("%s: not a LIBLINEAR model (its header lacks or misstates %s)"
                              % (name, exc))
        names = {v[0]: k for k, v in SOLVER_TYPES.items()}
        if solver not in names:
            raise model_error("%s: a LIBLINEAR %s model; linclass predicts with the "
                              "classification types only (%s)"
                              % (name, solver, ", ".join(sorted(names))))
        self.solver_type = names[solver]
        self.labels = labels
        n_w = 1 if self.n_classes == 2 and self.solver_type != 4 else self.n_classes
        size = self.n_features + (self.bias >= 0)
        try:
            w = np.array(body.split(), dtype=np.float64)
        except ValueError:
            w = np.zeros(0)
        if not sep or len(labels) != self.n_classes or self.n_classes < 1 \
                or w.size != size * n_w or not np.all(np.isfinite(w)):
            raise model_error("%s: a damaged LIBLINEAR model (expected %d labels and %d x %d "
                              "finite weights)" % (name, self.n_classes, size, n_w))
        self.w = w.reshape(size, n_w)

    def decision_values(self, X):
        """LIBLINEAR's ``predict_values``: (n_samples, nr_w), classes in label order."""
        scores = np.asarray(X @ self.w[:self.n_features])
        if self.bias >= 0:
            scores = scores + self.bias * self.w[self.n_features]
        return scores

    def predict(self, X):
        scores = self.decision_values(X)
        labels = np.asarray(self.labels)
        if scores.shape[1] == 1:
            return np.where(scores[:, 0] > 0, labels[0], labels[-1])
        return labels[np.argmax(scores, axis=1)]


def _read_model_bytes(path):
    """The bytes of a model file (``-``: standard input), at most linclass's
    model size limit (so that ``/dev/zero`` is refused, not read for ever)."""
    from ..persistence import MAX_BYTES
    if path != "-" and not os.path.exists(path):
        raise model_error("no model file %s" % path)
    if os.path.isdir(path):
        raise model_error("%s is a directory, not a model file" % path)
    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise model_error("%s is larger than a model file may be (%d bytes)"
                          % ("the standard input" if path == "-" else path, MAX_BYTES))
    return data


def _load_model(path):
    """(model, input description) of a linclass model file, or of a LIBLINEAR
    text model (``-``: standard input)."""
    from ..exceptions import ModelFormatError
    from ..persistence import load
    name = "the standard input" if path == "-" else path
    data = _read_model_bytes(path)
    if data.startswith(b"solver_type "):
        model = LiblinearTextModel(data.decode("ascii", "replace"), name)
        return model, {"n_features": model.n_features,
                       "liblinear": {"solver_type": model.solver_type,
                                     "labels": model.labels}}
    try:
        model = load(io.BytesIO(data))
    except (ModelFormatError, ValueError, KeyError, OSError) as exc:
        raise model_error("%s is not a readable linclass or LIBLINEAR model: %s"
                          % (name, exc))
    spec = dict(getattr(model, "input_spec_", None) or {})
    if spec.get("format") != "svmlight" or spec.get("task") is not None \
            or not hasattr(model, "classes_"):
        raise model_error("%s is not a model of svmlight data (train it with 'linclass "
                          "liblinear-train' or 'linclass train' on an svmlight file)" % name)
    return model, spec


def _label_order_scores(model, labels, X):
    """Decision values with LIBLINEAR's layout: one column, the score of
    ``labels[0]``, for two classes; else one column per label, in ``labels``' order."""
    if isinstance(model, LiblinearTextModel):
        return model.decision_values(X)
    classes = [float(c) for c in model.classes_]
    scores = np.asarray(model.decision_function(X), dtype=np.float64)
    if scores.ndim == 1:                    # linclass: the score of classes_[1]
        return (scores if labels[0] == classes[1] else -scores)[:, None]
    return scores[:, [classes.index(label) for label in labels]]


def _probabilities(model, spec, X):
    """LIBLINEAR's ``predict_probability`` of a logistic model: the logistic
    function of each one-vs-rest score, normalised to sum 1 (for two classes,
    ``p`` and ``1 - p``); columns in LIBLINEAR's class order."""
    liblinear = spec.get("liblinear")
    if liblinear is not None and liblinear["solver_type"] not in LOGISTIC_TYPES \
            or liblinear is None and not hasattr(model, "predict_proba"):
        raise CommandError("probability output is only supported for logistic regression")
    if liblinear is None:                   # a 'linclass train' model: its own probabilities
        return np.asarray(model.predict_proba(X)), [float(c) for c in model.classes_]
    labels = list(liblinear["labels"])
    with np.errstate(over="ignore"):
        prob = 1.0 / (1.0 + np.exp(-_label_order_scores(model, labels, X)))
    if prob.shape[1] == 1:
        return np.column_stack([prob[:, 0], 1.0 - prob[:, 0]]), labels
    return prob / prob.sum(axis=1, keepdims=True), labels


def predict_command(args, files):
    """``linclass liblinear-predict`` (``files``: see :func:`run`)."""
    opts = parse_predict_args(args.liblinear_args, args)
    files.check_outputs([("output_file", opts.output_file)],
                        [opts.test_file, opts.model_file])
    model, spec = _load_model(opts.model_file)
    X, y = read_problem(opts.test_file, files, int(spec["n_features"]))
    out = io.StringIO()                # everything is computed before the output is touched
    predicted = np.asarray(model.predict(X), dtype=np.float64)
    if opts.probability:
        prob, labels = _probabilities(model, spec, X)
        out.write("labels%s\n" % "".join(" %d" % v for v in labels))
        for label, row in zip(predicted, prob):
            out.write("%g%s\n" % (label, "".join(" %g" % v for v in row)))
    else:
        out.writelines("%.17g\n" % label for label in predicted)
    files.emit(opts.output_file, out.getvalue())
    if not opts.quiet:
        correct = int(np.count_nonzero(predicted == y))
        print("Accuracy = %g%% (%d/%d)" % (100.0 * correct / len(y), correct, len(y)),
              file=sys.stderr if opts.output_file == "-" else sys.stdout)
    return EXIT_OK


def run(args, *, check_inputs, check_outputs, emit):
    """Run ``args.command`` (``liblinear-train`` or ``liblinear-predict``) on
    ``args.liblinear_args``; returns the exit status or raises :class:`CommandError`.

    The ``linclass`` command's own file handling is passed in by
    :mod:`linclass.cli` (this module imports nothing from it):
    ``check_inputs(path)`` refuses a device as a data file,
    ``check_outputs([(option, path)], inputs)`` refuses, before anything is
    read, an output that names an input or cannot be written, and
    ``emit(path, text)`` writes text atomically (``-``: standard output).
    """
    files = types.SimpleNamespace(check_inputs=check_inputs, check_outputs=check_outputs,
                                  emit=emit)
    if args.command == "liblinear-train":
        return train_command(args, files)
    return predict_command(args, files)
