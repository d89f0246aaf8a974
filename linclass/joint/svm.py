"""Flat multi-class SVM with a choice of class representation (scikit-learn API).

:class:`MultiClassSVM` trains a :class:`~linclass.structured.StructuredSVM`
on a multi-class structure:

* ``structure="onehot"`` -- the Crammer--Singer multi-class SVM (one weight
  vector per class); the same objective as
  ``sklearn.svm.LinearSVC(multi_class="crammer_singer")`` at the same ``C``;
* ``structure="description"`` -- ``Phi(x, y) = x (x) Lambda(y)`` with
  ``Lambda(y)`` the attribute vector of class ``y`` (``class_descriptions``),
  so classes with similar descriptions share weights and a class without
  training examples can be predicted;
* ``structure="taxonomy"`` -- classes are leaves of a tree (``taxonomy`` maps
  each label to its root-to-leaf path), ``Lambda(y)`` marks the nodes on the
  path and the loss is the tree distance.

Training uses the batched fast path of
:class:`~linclass.structured.MultiClassStructure` (every class of every
example scored by one sparse matrix product per cutting-plane iteration).

References
----------
K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
kernel-based vector machines. JMLR 2, 2001.
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods
for structured and interdependent output variables. JMLR 6, 2005.
L. Cai, T. Hofmann. Hierarchical document categorization with support vector
machines. CIKM 2004.
"""
import numpy as np
import scipy.sparse as sp

from .._validation import (check_array, check_classification_target, check_finite_fit,
                           check_finite_output, check_no_overflow,
                           check_is_fitted, check_n_features, check_positive,
                           check_sample_weight, check_target, encode_labels)
from ..base import BaseEstimator, ClassifierMixin, binary_decision
from ..structured.learners import StructuredSVM
from .structure import MultiClassStructure
from .taxonomy import TaxonomyStructure

__all__ = ["MultiClassSVM", "class_structure"]


def class_structure(kind, y, n_features, *, class_descriptions=None, classes=None,
                    taxonomy=None, loss_matrix=None, ancestor_weight=1.0):
    """(classes, codes, Structure) of labels ``y`` for a class representation.

    ``kind`` is ``"onehot"``, ``"description"`` (``class_descriptions`` rows,
    named by ``classes``, default the sorted labels) or ``"taxonomy"``
    (``taxonomy``: label -> root-to-leaf path); ``n_features`` is the input
    dimension of the structure.  Shared by :class:`MultiClassSVM` and the
    kernelised :class:`~linclass.kernels.KernelMultiClassSVM`.
    """
    if kind == "onehot":
        classes, codes = encode_labels(y)
        return classes, codes, MultiClassStructure(
            n_features, len(classes), loss_matrix=loss_matrix)
    if kind == "description":
        if class_descriptions is None:
            raise ValueError("structure='description' needs class_descriptions")
        D = np.asarray(class_descriptions, dtype=np.float64)
        if D.ndim != 2:
            raise ValueError("class_descriptions must be 2-D (n_classes, n_attributes)")
        labels = (np.unique(y) if classes is None else np.asarray(classes))
        if labels.ndim != 1 or len(labels) != D.shape[0]:
            raise ValueError("class_descriptions has %d rows but there are %d classes; "
                             "every class needs exactly one description row (pass "
                             "classes= to name the rows)" % (D.shape[0], len(labels)))
        if len(np.unique(labels)) != len(labels):
            raise ValueError("classes contains duplicates")
        order = np.argsort(labels, kind="stable")
        classes = labels[order]
        try:
            _, codes = encode_labels(y, classes)
        except ValueError as exc:
            raise ValueError("%s (a class with no description row)" % exc) from None
        return classes, codes, MultiClassStructure(
            n_features, class_descriptions=D[order], loss_matrix=loss_matrix)
    if kind == "taxonomy":
        if not isinstance(taxonomy, dict) or not taxonomy:
            raise ValueError("structure='taxonomy' needs taxonomy: a non-empty dict "
                             "label -> path tuple")
        classes = np.asarray(sorted(taxonomy))
        try:
            _, codes = encode_labels(y, classes)
        except ValueError as exc:
            raise ValueError("%s (a label that is not a leaf of the taxonomy)"
                             % exc) from None
        paths = [taxonomy[c.item() if hasattr(c, "item") else c] for c in classes]
        return classes, codes, TaxonomyStructure(n_features, paths,
                                                 loss_matrix=loss_matrix,
                                                 ancestor_weight=ancestor_weight)
    raise ValueError("structure must be 'onehot', 'description' or 'taxonomy', got %r"
                     % (kind,))


class MultiClassSVM(ClassifierMixin, BaseEstimator):
    """Multi-class linear SVM over one-hot, description or taxonomy class vectors.

    Minimises ``1/2 ||W||^2 + C sum_i max_y [loss(y_i, y) + s_y(x_i) - s_{y_i}(x_i)]``
    with ``s_y(x) = Lambda(y) . (W x)``, by default with block-coordinate
    Frank--Wolfe (``method="bcfw"``), else by the cutting-plane method.

    Parameters
    ----------
    structure : {"onehot", "description", "taxonomy"}, default="onehot"
    C : float, default=1.0
    class_descriptions : array-like of shape (n_classes, n_attributes), optional
        Required for ``structure="description"``: row ``k`` describes class
        ``classes[k]``.
    classes : sequence, optional
        Labels of the description rows (``structure="description"``).  May
        include classes absent from the training labels.  Default: the sorted
        training labels.
    taxonomy : dict, optional
        Required for ``structure="taxonomy"``: label -> path tuple (from the
        child of the root to the leaf).  Leaves absent from the training
        labels can be predicted too.
    ancestor_weight : float, default=1.0
        ``structure="taxonomy"`` only: the entry of each ancestor (inner node)
        in a class's path vector, the class's own leaf entry being 1 (see
        :class:`~linclass.joint.TaxonomyStructure`).  Below 1 the weights
        shared through ancestors are regularised more strongly than the
        leaves' own; 0 is the flat model.  A finite number >= 0.
    loss_matrix : array-like of shape (n_classes, n_classes), optional
        Rows/columns in the order of ``classes_``.  Default: 0/1 loss
        (tree distance for a taxonomy).
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` (regularised, as in
        liblinear).
    intercept_scaling : float, default=1.0
    method : {"bcfw", "1-slack", "n-slack"}, default="bcfw"
        ``"bcfw"``: block-coordinate Frank--Wolfe (Lacoste-Julien et al.,
        2013) with pairwise steps, whole passes in Cython for one-hot classes;
        it stops when the relative duality gap ``(P - D) / P`` is at most
        ``tol``, so the objective is within ``tol`` (relative) of the optimum.
        The cutting-plane methods stop on the most violated constraint (see
        :class:`~linclass.structured.StructuredSVM`).
    rescaling : {"margin", "slack"}, default="margin"
    tol : float, default=1e-3
    max_iter : int, default=1000
        Passes (bcfw) or cutting-plane iterations.
    random_state : None, int or numpy Generator
        Order of the examples in the BCFW passes.
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        Effective weight vector of each class, ``Lambda @ W``.
    intercept_ : ndarray of shape (n_classes,)
    attribute_coef_ : ndarray of shape (n_attributes, n_features + fit_intercept)
        ``W`` (one row per one-hot class / description attribute / tree node).
    n_features_in_ : int
    objective_, dual_objective_, n_iter_, history_ :
        From the :class:`~linclass.structured.StructuredSVM` (see there).
    """

    def __init__(self, structure="onehot", *, C=1.0, class_descriptions=None, classes=None,
                 taxonomy=None, ancestor_weight=1.0, loss_matrix=None, fit_intercept=True,
                 intercept_scaling=1.0, method="bcfw", rescaling="margin", tol=1e-3,
                 max_iter=1000, random_state=None, verbose=0):
        self.structure = structure
        self.C = C
        self.class_descriptions = class_descriptions
        self.classes = classes
        self.taxonomy = taxonomy
        self.ancestor_weight = ancestor_weight
        self.loss_matrix = loss_matrix
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.method = method
        self.rescaling = rescaling
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _augment(self, X):
        if not self.fit_intercept:
            return X
        column = np.full((X.shape[0], 1), float(self.intercept_scaling))
        if sp.issparse(X):
            return sp.hstack([X, sp.csr_matrix(column)], format="csr")
        return np.hstack([X, column])

    def _build_structure(self, y, n_features):
        """(classes_, codes, Structure) for the chosen class representation."""
        return class_structure(self.structure, y, n_features,
                               class_descriptions=self.class_descriptions,
                               classes=self.classes, taxonomy=self.taxonomy,
                               loss_matrix=self.loss_matrix,
                               ancestor_weight=self.ancestor_weight)

    def fit(self, X, y):
        """Fit on ``X`` (dense or sparse, (n_samples, n_features)) and labels ``y``."""
        check_positive(self.C, "C")
        check_positive(self.intercept_scaling, "intercept_scaling")
        check_positive(self.ancestor_weight, "ancestor_weight", strict=False)
        X = check_array(X)
        check_no_overflow(X, self)          # x @ x beyond double precision: a clear error
        check_classification_target(y, X.shape[0])   # >= 2 classes, discrete labels
        y = check_target(y, X.shape[0])
        n_features = X.shape[1]
        Xf = self._augment(X)
        classes, codes, structure = self._build_structure(y, Xf.shape[1])
        svm = StructuredSVM(structure, C=self.C, method=self.method,
                            rescaling=self.rescaling, tol=self.tol, max_iter=self.max_iter,
                            random_state=self.random_state, verbose=self.verbose)
        try:
            svm.fit(Xf, codes)
        except ValueError as exc:                # the solver's overflow errors name this model
            raise ValueError("MultiClassSVM: %s" % exc) from None
        W = svm.coef_.reshape(structure.n_features_x, structure.n_attributes).T
        class_coef = structure.class_vectors @ W
        self.classes_ = classes
        self.attribute_coef_ = np.ascontiguousarray(W)
        self.coef_ = np.ascontiguousarray(class_coef[:, :n_features])
        self.intercept_ = (class_coef[:, n_features] * float(self.intercept_scaling)
                           if self.fit_intercept else np.zeros(len(classes)))
        self.n_features_in_ = n_features
        check_finite_fit(self, coef_=self.coef_, intercept_=self.intercept_)
        self.objective_ = svm.objective_
        self.dual_objective_ = svm.dual_objective_
        self.n_iter_ = svm.n_iter_
        self.history_ = svm.history_
        return self

    def decision_function(self, X):
        """Class scores, shape (n_samples, n_classes); for two classes the
        difference ``F(x, classes_[1]) - F(x, classes_[0])``, shape (n_samples,)."""
        return binary_decision(self._class_scores(X))

    def _class_scores(self, X):
        check_is_fitted(self, "coef_")
        X = check_array(X)
        check_n_features(X, self.n_features_in_, owner=self)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return check_finite_output(self, scores, X)     # overflow: an error naming the model

    def predict(self, X):
        """Highest-scoring class of each sample."""
        return self.classes_[np.argmax(self._class_scores(X), axis=1)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy (weighted if ``sample_weight`` is given)."""
        predicted = self.predict(X)
        y = check_target(y, len(predicted))
        correct = (predicted == y).astype(np.float64)
        if sample_weight is None:
            return float(correct.mean())
        sw = check_sample_weight(sample_weight, len(predicted))
        return float((correct * sw).sum() / sw.sum())
