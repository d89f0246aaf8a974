"""The debug build (LINCLASS_DEBUG_BUILD=1) checks the indices kernels follow
through raw pointers (issue #17, item 5): fed an out-of-range column index or
row extent directly through a ``_core`` entry point, bypassing
``linclass._validation``, a kernel stops with a message naming the check
instead of reading out of bounds.  Runs only on the debug build (a release
build would read out of bounds: nothing to assert there)."""
import subprocess
import tempfile
import sys

import pytest

from linclass._core import _checks

pytestmark = pytest.mark.skipif(not _checks.DEBUG_BUILD,
                                reason="needs the debug build (LINCLASS_DEBUG_BUILD=1)")

_KERNEL_CALL = """
import numpy as np
from linclass._core._kernels import row_sq_norms
out = row_sq_norms(data=np.ones(3), indices=np.array({indices}, dtype=np.int32),
                   indptr=np.array({indptr}, dtype=np.int32), n_rows=2, n_cols=3, sparse=True)
print("returned", out.tolist())
"""


def _run(indices, indptr):
    code = _KERNEL_CALL.format(indices=indices, indptr=indptr)
    # run outside the source tree: from the checkout "import linclass" would find the
    # sources (without the compiled core) instead of the installed package
    with tempfile.TemporaryDirectory() as cwd:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, cwd=cwd)


@pytest.mark.parametrize("indices, indptr, what", [
    ([0, 1, 2 ** 30], [0, 2, 3], "column index"),      # column >= n_cols
    ([0, -4, 1], [0, 2, 3], "column index"),           # negative column
    ([0, 1, 2], [0, 3, 1], "indptr"),                  # decreasing indptr
])
def test_out_of_range_index_stops_the_kernel(indices, indptr, what):
    proc = _run(indices, indptr)
    assert proc.returncode != 0 and "returned" not in proc.stdout, proc.stdout
    assert "linclass debug build: IndexError" in proc.stderr and what in proc.stderr, \
        proc.stderr


def test_valid_input_passes_the_checks():
    proc = _run([0, 2, 1], [0, 2, 3])
    assert proc.returncode == 0, proc.stderr
    assert "returned [2.0, 1.0]" in proc.stdout


def _viterbi_arguments(feature_ids):
    import numpy as np
    K, F = 2, 3
    n = len(feature_ids)
    return dict(W=np.zeros((F, K)), trans=np.zeros((K, K)), trans2=np.zeros(0),
                start=np.zeros(K), stop=np.zeros(K),
                indices=np.array(feature_ids, dtype=np.int32), data=np.ones(n),
                indptr=np.arange(n + 1, dtype=np.int32),
                sent_offsets=np.array([0, n], dtype=np.int64),
                out=np.zeros(n, dtype=np.int32), scores=np.zeros(1))


@pytest.mark.parametrize("feature_ids", [[0, 3], [-1, 1], [2 ** 31 - 1]])
def test_sequence_kernel_raises_on_feature_index_out_of_range(feature_ids):
    """The sequence entry points check index values under the debug build and
    raise IndexError (they run before the kernel releases the GIL)."""
    from linclass._core._sequence import viterbi_batch
    with pytest.raises(IndexError, match="feature index"):
        viterbi_batch(**_viterbi_arguments(feature_ids))


def test_sequence_kernel_accepts_valid_indices():
    from linclass._core._sequence import viterbi_batch
    args = _viterbi_arguments([0, 2, 1])
    viterbi_batch(**args)
    assert args["out"].tolist() == [0, 0, 0]        # all scores 0: ties go to label 0


def test_sgd_epoch_refuses_a_wrong_unit_x_claim():
    """``sgd_epoch(unit_x=True)`` (the caller's claim that every stored value is
    1.0, which makes the epoch skip the values) is checked under the debug build."""
    import numpy as np
    from linclass._core import _sgd
    n, d = 4, 3
    args = dict(data=np.array([1.0, 2.0, 1.0, 1.0]), indices=np.array([0, 1, 2, 0], np.int32),
                indptr=np.arange(n + 1, dtype=np.int32), is_sparse=True, n_samples=n,
                n_features=d, ysign=np.array([1.0, -1.0, 1.0, -1.0]), weight=np.ones(n),
                order=np.arange(n, dtype=np.int32), shuffle=False, seed=0, loss=0,
                learning_rate=0, eta0=0.1, power_t=0.5, t0=1.0, alpha=1e-3, l1_ratio=0.0,
                intercept_decay=1.0, fit_intercept=True, averaging=False, average_start=0.0,
                w=np.zeros(d), avg_sum=np.zeros(1), l1_q=np.zeros(1),
                state=np.array([1.0, 0, 0, 0, 0, 0]), compute_loss=False)
    with pytest.raises(ValueError, match="unit_x"):
        _sgd.sgd_epoch(**args, unit_x=True)
    status, _ = _sgd.sgd_epoch(**args, unit_x=None)
    assert status == 0



def test_binary_logistic_passes_refuse_a_wrong_unit_x_claim():
    """``binary_loss_grad`` / ``binary_hess_vec`` with ``unit_x=True`` (the caller's
    claim that every stored value is 1.0) are checked under the debug build."""
    import numpy as np
    from linclass._core import _logistic
    rows = dict(data=np.array([1.0, 2.0, 1.0]), indices=np.array([0, 1, 2], np.int32),
                indptr=np.array([0, 2, 3], np.int32), n_rows=2, n_cols=3, dense=False)
    theta = np.array([0.1, -0.2, 0.3, 0.05])
    with pytest.raises(ValueError, match="unit_x"):
        _logistic.binary_loss_grad(y=np.array([1.0, -1.0]), sample_weight=np.ones(2),
                                   params=theta, fit_intercept=True, unit_x=True, **rows)
    with pytest.raises(ValueError, match="unit_x"):
        _logistic.binary_hess_vec(D=np.ones(2), v=theta, fit_intercept=True, unit_x=True,
                                  **rows)
    loss, grad, D = _logistic.binary_loss_grad(y=np.array([1.0, -1.0]),
                                               sample_weight=np.ones(2), params=theta,
                                               fit_intercept=True, **rows)
    assert np.isfinite(loss) and grad.shape == (4,)

_NB_CALL = """
import numpy as np
from linclass._core import _naive_bayes
args = dict(data=np.ones(3), indices=np.array({indices}, dtype=np.int32),
            indptr=np.array([0, 2, 3], dtype=np.int32))
if {scores}:
    out = np.empty((2, 2))
    _naive_bayes.sparse_scores(n_rows=2, table=np.ones((3, 2)), minus=None, binarize=False,
                               threshold=0.0, out=out, **args)
else:
    out = np.zeros((3, 2))
    _naive_bayes.count_features(n_rows=2, n_cols=3, dense=False,
                                y=np.array({labels}, dtype=np.int32), sample_weight=np.ones(2),
                                binarize=False, threshold=0.0, counts=out, **args)
print("returned", out.tolist())
"""


@pytest.mark.parametrize("scores, indices, labels, what", [
    (True, [0, 3, 1], [0, 1], "sparse_scores: column index"),
    (True, [0, -1, 1], [0, 1], "sparse_scores: column index"),
    (False, [0, 2, 1], [0, 2], "count_features: label"),
    (False, [0, 3, 1], [0, 1], "column index"),
])
def test_naive_bayes_kernels_check_indices_and_labels(scores, indices, labels, what):
    with tempfile.TemporaryDirectory() as cwd:
        code = _NB_CALL.format(scores=scores, indices=indices, labels=labels)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, cwd=cwd)
    assert proc.returncode != 0 and "returned" not in proc.stdout, proc.stdout
    assert "linclass debug build: IndexError" in proc.stderr and what in proc.stderr, \
        proc.stderr
    valid = _NB_CALL.format(scores=scores, indices=[0, 2, 1], labels=[0, 1])
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, "-c", valid], capture_output=True, text=True,
                              timeout=120, cwd=cwd)
    assert proc.returncode == 0 and "returned" in proc.stdout, proc.stderr


_RIDGE_CALL = """
import numpy as np
from linclass._core import _ridge
out = np.empty((3, 2))
_ridge.dual_apply(np.ones(3), np.array({rows}, dtype=np.int32),
                  np.array({colptr}, dtype=np.int32), 2, np.ones(3), np.zeros(3), 0.0, 1.0,
                  np.ones((3, 2)), out)
print("returned", out.tolist())
"""


@pytest.mark.parametrize("rows, colptr, what", [
    ([0, 3, 1], [0, 2, 3], "dual_apply: row index"),
    ([0, -1, 1], [0, 2, 3], "dual_apply: row index"),
    ([0, 2, 1], [0, 3, 2], "dual_apply: colptr"),
])
def test_ridge_kernel_product_checks_row_indices(rows, colptr, what):
    """The ridge kernel-side product's C loop (``_ridge_simd.h``) indexes Z and out
    by the CSC row indices: the debug build checks them first."""
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, "-c",
                               _RIDGE_CALL.format(rows=rows, colptr=colptr)],
                              capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode != 0 and "returned" not in proc.stdout, proc.stdout
    assert "linclass debug build: IndexError" in proc.stderr and what in proc.stderr, \
        proc.stderr
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, "-c",
                               _RIDGE_CALL.format(rows=[0, 2, 1], colptr=[0, 2, 3])],
                              capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode == 0 and "returned" in proc.stdout, proc.stderr
