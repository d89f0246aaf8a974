"""Issue #35 for collective classification: node features whose CSR column
indices point outside the matrix (once a segfault, run in a child process),
edges outside the graph in ``fit_graph``/``predict_graph`` (negative ones were
wrapped around by numpy), labels checked as every classifier checks them."""
import os
import subprocess
import sys

import numpy as np
import pytest

from linclass.demo.structured import make_graph
from linclass.exceptions import NotFittedError
from linclass.graph import CollectiveClassifier

# children run Python from here, not from the repository root, whose unbuilt
# linclass/ would shadow the installed package
_OUTSIDE_SOURCE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r"""
import warnings
import numpy as np, scipy.sparse as sp
warnings.simplefilter("ignore")
from linclass.demo.structured import make_graph
from linclass.graph import CollectiveClassifier
X, E, y = make_graph(n_nodes=30, random_state=0)
model = CollectiveClassifier(max_iter=3).fit([(X, E)], [y])
bad = sp.csr_matrix(X.toarray() if sp.issparse(X) else X)
bad.indices = bad.indices.copy()
bad.indices[0] = 10 ** 6                       # scipy does not look again
cases = {
    "predict": lambda: model.predict([(bad, E)]),
    "fit": lambda: CollectiveClassifier(max_iter=3).fit([(bad, E)], [y]),
    "fit_graph": lambda: model.fit_graph(bad, E, y, np.ones(30, bool)),
    "predict_graph": lambda: model.predict_graph(bad, E, y, np.ones(30, bool)),
}
for name, call in cases.items():
    try:
        call()
        print("RESULT", name, "accepted", flush=True)
    except ValueError as exc:
        print("RESULT", name, "ValueError" if "column index out of range" in str(exc)
              else "other ValueError", flush=True)
print("DONE", flush=True)
"""


def test_out_of_range_feature_columns_raise_in_a_child_process():
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          timeout=300,
                          cwd=_OUTSIDE_SOURCE)
    assert proc.returncode == 0 and "DONE" in proc.stdout, (proc.returncode, proc.stdout,
                                                           proc.stderr[-2000:])
    results = [line.split()[1:] for line in proc.stdout.splitlines()
               if line.startswith("RESULT")]
    assert results == [[name, "ValueError"] for name in
                       ("predict", "fit", "fit_graph", "predict_graph")]


@pytest.mark.parametrize("edges", [[[0, -1], [1, 2]], [[0, 30], [1, 2]], [[-30, 1]]])
def test_fit_graph_and_predict_graph_refuse_edges_outside_the_graph(edges):
    X, E, y = make_graph(n_nodes=30, random_state=0)
    train = np.arange(30) % 2 == 0
    model = CollectiveClassifier(max_iter=3)
    with pytest.raises(ValueError, match="outside \\[0, 30\\)"):
        model.fit_graph(X, np.array(edges), y, train)
    model.fit_graph(X, E, y, train)
    with pytest.raises(ValueError, match="outside \\[0, 30\\)"):
        model.predict_graph(X, np.array(edges), y, train)


def test_predict_graph_clamps_the_known_labels_and_needs_a_fit():
    X, E, y = make_graph(n_nodes=30, random_state=1)
    train = np.arange(30) % 3 != 0
    with pytest.raises(NotFittedError):
        CollectiveClassifier().predict_graph(X, E, y, train)
    model = CollectiveClassifier(max_iter=5).fit_graph(X, E, y, train)
    predicted = model.predict_graph(X, E, y, train)
    np.testing.assert_array_equal(predicted[train], y[train])
    with pytest.raises(ValueError, match="one entry per node"):
        model.predict_graph(X, E, y[:10], train)


@pytest.mark.parametrize("labels, message", [
    (lambda y: np.zeros_like(y), "only one class"),
    (lambda y: y + 0.5, "continuous"),
    (lambda y: y + 1j, "complex"),
    (lambda y: np.where(y == 0, None, y).astype(object), "None"),
])
def test_collective_classifier_checks_its_labels(labels, message):
    X, E, y = make_graph(n_nodes=30, random_state=0)
    with pytest.raises(ValueError, match=message):
        CollectiveClassifier(max_iter=3).fit([(X, E)], [labels(y)])


def test_labels_of_different_kinds_across_graphs_are_refused():
    """Numbers in one graph and strings in another were cast to strings by
    concatenate (classes_ ['0', '1', 'a', 'b'], predictions as strings)."""
    X, E, y = make_graph(n_nodes=30, random_state=0)
    with pytest.raises(ValueError, match="Mix of label"):
        CollectiveClassifier(max_iter=3).fit([(X, E), (X, E)],
                                             [y, np.where(y == 0, "a", "b")])


def test_huge_node_features_raise_naming_the_model():
    """Values near 1e300 overflowed the QP (an error naming its internals), and
    at predict gave infinite node scores decoded to arbitrary labels."""
    X, E, y = make_graph(n_nodes=30, random_state=0)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    with pytest.raises(ValueError, match="CollectiveClassifier: .*overflow"):
        CollectiveClassifier(max_iter=3).fit([(X * 1e300, E)], [y])
    model = CollectiveClassifier(max_iter=3).fit([(X, E)], [y])
    huge = np.where(np.arange(X.size).reshape(X.shape) % 2, 1e308, -1.7e308)
    with pytest.raises(ValueError, match="CollectiveClassifier: .*not finite"):
        model.predict([(huge, E)])
    with pytest.raises(ValueError, match="CollectiveClassifier: .*not finite"):
        model.predict_graph(huge, E, y, np.zeros(30, bool))


def test_a_huge_c_raises_instead_of_a_wrong_model():
    """C = 1e300 on separable data: the 1-slack QP lost precision and "converged"
    to weights predicting one class for every node."""
    X, E, y = make_graph(n_nodes=30, random_state=0)
    with pytest.raises(ValueError, match="CollectiveClassifier: .*lost precision"):
        CollectiveClassifier(max_iter=20, C=1e300).fit([(X, E)], [y])
