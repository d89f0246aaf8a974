"""Collective classification on Cora and CiteSeer: content-only vs collective.

Split (fixed): ``numpy.random.default_rng(0).permutation(n_nodes)``; the first
half of the permutation are the labelled (training) nodes, the rest the test
nodes.  Training uses the subgraph induced by the labelled nodes; at test
time the whole graph is used with the labelled nodes clamped to their labels
(the "partly labelled network" setting of Sen et al., 2008).  Edges are
undirected label-pair features; CiteSeer's self-citations are kept as unary
terms (``self_loops="unary"``).

Rows per data set:

* content-only: linclass's structure without edges (a Crammer--Singer
  multi-class SVM on the bag of words, 1-slack cutting plane) vs
  scikit-learn's ``LinearSVC`` (one-vs-rest) at the same C, when installed;
* collective: the same learner with label-pair edge features (BP + ICM
  inference) vs the content-only linclass model (peer column).

``--quick`` uses Cora only and fewer cutting-plane iterations.  Times: fit +
predict, one run each (the fits take seconds).
"""
import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.graph.collective import CollectiveClassifier  # noqa: E402
from linclass.datasets import load_citation_graph  # noqa: E402

C = 0.01


def split(n, seed=0):
    train = np.zeros(n, dtype=bool)
    train[np.random.default_rng(seed).permutation(n)[: n // 2]] = True
    return train


def run(quick, data_dir):
    rows = []
    names = ["cora"] if quick else ["cora", "citeseer"]
    max_iter = 60 if quick else 300
    for name in names:
        d = load_citation_graph(name, data_home=pathlib.Path(data_dir))
        X, E, y = d.features, d.edges, d.labels
        train = split(X.shape[0])
        test = ~train
        label = "%s (%d nodes, %d edges, 50%% labelled, seed 0)" % (name, X.shape[0], len(E))
        no_edges = np.zeros((0, 2), dtype=np.int64)

        def content_only():
            m = CollectiveClassifier(C=C, max_iter=max_iter).fit_graph(X, no_edges, y, train)
            return m.predict_graph(X, no_edges, y, train)

        def collective():
            m = CollectiveClassifier(C=C, max_iter=max_iter).fit_graph(X, E, y, train)
            return m.predict_graph(X, E, y, train)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_content, p_content = _harness.median_time(content_only, 1)
            t_coll, p_coll = _harness.median_time(collective, 1)
        acc_content = float(np.mean(p_content[test] == y[test]))
        acc_coll = float(np.mean(p_coll[test] == y[test]))
        try:
            from sklearn.svm import LinearSVC

            def peer():
                model = LinearSVC(C=C, max_iter=5000).fit(X[train], y[train])
                return model.predict(X[test])

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_peer, p_peer = _harness.median_time(peer, 1)
            rows.append(_harness.make_row(
                "node classification, content only", label, "sklearn LinearSVC (OvR)", t_peer,
                t_content, "acc %.4f" % np.mean(p_peer == y[test]), "acc %.4f" % acc_content))
        except ImportError:
            rows.append(_harness.make_row(
                "node classification, content only", label, None, None, t_content, None,
                "acc %.4f" % acc_content, note="scikit-learn not installed"))
        rows.append(_harness.make_row(
            "collective classification (BP+ICM)", label, "linclass content-only (same learner)",
            t_content, t_coll, "acc %.4f" % acc_content, "acc %.4f" % acc_coll,
            note="peer column = the content-only model; C=%g, 1-slack SVM" % C))
    return rows


if __name__ == "__main__":
    result = run("--quick" in sys.argv, _harness.default_data_dir())
    print(_harness.format_table(result))
