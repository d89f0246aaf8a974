"""Training on Dask: partitioned data in, an ordinary fitted linclass model out.

``fit(estimator, X, y, client=None)`` trains a linclass estimator on a dask
array (dense or scipy-sparse chunks, rows whole) and returns the same
estimator, fitted: it predicts, pickles and saves without Dask.  The
algorithm follows the estimator: exact per-partition counts with a tree
reduction for naive Bayes (``naive_bayes``), L-BFGS on the driver over loss
and gradient sums from the workers for logistic regression (``logistic``),
CoCoA+ with a local dual coordinate descent (``_core._cocoa``) for LinearSVC
(``svm``), iterative parameter mixing for the (averaged) Perceptron
(``perceptron``) and for the sequence tagger on dask bags of sentences
(``sequence``, with :func:`conll_bags` reading sharded CoNLL files), and
MaxEnt with class-specific features by L-BFGS over partition sums
(``maxent``).  :func:`svmlight_shards` reads svmlight/libsvm files, one
partition per file, into the dask arrays ``fit`` takes (``svmlight``).
``partitions`` turns dask collections into validated shards and runs tasks
on a ``distributed.Client`` or on dask's local scheduler (``runner``).

May import: ``linclass.linear``, ``linclass.sequence``, ``linclass.datasets`` (public
names only), ``linclass._core``,
``linclass._validation``, ``linclass.base``, ``linclass.exceptions``.
Dask itself is imported lazily inside functions: ``import linclass`` and
``import linclass.distributed`` never need it (``pip install linclass[dask]``).
"""
from .api import DistributedError, fit
from .sequence import conll_bags
from .svmlight import svmlight_shards

__all__ = ["DistributedError", "conll_bags", "fit", "svmlight_shards"]
