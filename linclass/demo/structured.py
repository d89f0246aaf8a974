"""``linclass demo`` parts for sequence alignment and collective classification,
on small data generated here (no shared data needed)."""
import time

import numpy as np


def make_alignment_pairs(n_pairs=60, length=40, alphabet="ACDEFGHIKL", random_state=0):
    """Synthetic homologous pairs: ``b`` evolves from ``a`` by substitutions that
    favour "similar" residues (neighbours in the alphabet) and indels.

    Returns
    -------
    pairs : list of (a, b) strings
    references : list of partner arrays of ``a`` (the true evolutionary alignment)
    """
    rng = np.random.default_rng(random_state)
    K = len(alphabet)
    pairs, references = [], []
    for _ in range(n_pairs):
        a = rng.integers(K, size=length)
        b, partners = [], np.full(length, -1, dtype=np.int64)
        i = 0
        while i < length:
            r = rng.random()
            if r < 0.06:                                  # deletion run in b
                i += int(rng.integers(1, 4))
                continue
            if r < 0.12:                                  # insertion run in b
                b.extend(rng.integers(K, size=int(rng.integers(1, 4))).tolist())
                continue
            c = a[i]
            if rng.random() < 0.35:                       # similar-residue substitution
                c = (c + rng.choice([-1, 1])) % K
            partners[i] = len(b)
            b.append(int(c))
            i += 1
        pairs.append(("".join(alphabet[k] for k in a), "".join(alphabet[k] for k in b)))
        references.append(partners)
    return pairs, references


def demo_alignment(quick=False):
    """Learn a substitution matrix and gap costs from synthetic reference
    alignments; compare alignment accuracy with an identity matrix."""
    from ..alignment.learner import AlignmentLearner, SubstitutionMatrix, alignment_accuracy, align
    alphabet = "ACDEFGHIKL"
    n = 40 if quick else 150
    pairs, refs = make_alignment_pairs(2 * n, alphabet=alphabet, random_state=0)
    train_p, train_r, test_p, test_r = pairs[:n], refs[:n], pairs[n:], refs[n:]
    identity = SubstitutionMatrix.identity(alphabet, match=2, mismatch=-1)
    baseline = AlignmentLearner(alphabet)
    predicted = [align(a, b, substitution=identity, gap_open=3, gap_extend=1).partners
                 for a, b in test_p]
    print("Sequence alignment (synthetic: similar-residue substitutions and indels)")
    print("  %d training / %d test pairs of length ~40" % (len(train_p), len(test_p)))
    print("  identity matrix (+2/-1), gaps 3/1:  accuracy %.3f"
          % alignment_accuracy(test_r, predicted))
    for learner in ("perceptron", "svm"):
        start = time.perf_counter()
        model = baseline.set_params(learner=learner, max_iter=10 if learner == "perceptron"
                                    else (30 if quick else 100), C=1.0, tol=0.1)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(train_p, train_r)
        print("  learned (%-10s)               accuracy %.3f  (gaps %.2f/%.2f, %.1fs)"
              % (learner, model.score(test_p, test_r), model.gap_open_, model.gap_extend_,
                 time.perf_counter() - start))
    print(model.align(*test_p[0]))
    return model


def make_graph(n_nodes=300, n_labels=3, n_features=30, homophily=0.85, degree=4,
               noise=2.0, random_state=0):
    """A random graph whose edges mostly join nodes of the same label, with
    weak, noisy bag-of-features node content.

    Returns
    -------
    features : CSR matrix (n_nodes, n_features)
    edges : int64 (n_edges, 2)
    labels : int64 (n_nodes,)
    """
    import scipy.sparse as sp
    rng = np.random.default_rng(random_state)
    labels = rng.integers(n_labels, size=n_nodes)
    centers = rng.normal(size=(n_labels, n_features))
    dense = centers[labels] + noise * rng.normal(size=(n_nodes, n_features))
    features = sp.csr_matrix((dense > 1.0).astype(np.float64))
    edges = []
    for u in range(n_nodes):
        for _ in range(int(rng.poisson(degree / 2))):
            same = rng.random() < homophily
            pool = np.flatnonzero((labels == labels[u]) == same)
            v = int(rng.choice(pool))
            if v != u:
                edges.append((u, v))
    return features, np.array(edges, dtype=np.int64).reshape(-1, 2), labels


def demo_graph(quick=False):
    """Collective vs content-only classification on a synthetic homophilous graph
    with half of the nodes labelled."""
    from ..graph.collective import CollectiveClassifier
    features, edges, labels = make_graph(n_nodes=200 if quick else 600, random_state=0)
    n = labels.size
    train = np.zeros(n, dtype=bool)
    train[np.random.default_rng(0).permutation(n)[: n // 2]] = True
    test = ~train
    print("Collective classification (synthetic graph: %d nodes, %d edges, 85%% same-label "
          "edges, half labelled)" % (n, len(edges)))
    results = {}
    for name, E in (("content only", np.zeros((0, 2), dtype=np.int64)), ("collective", edges)):
        start = time.perf_counter()
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CollectiveClassifier(C=0.1, max_iter=50 if quick else 150)
            model.fit_graph(features, E, labels, train)
        predicted = model.predict_graph(features, E, labels, train)
        results[name] = float(np.mean(predicted[test] == labels[test]))
        print("  %-13s accuracy on unlabelled nodes %.3f  (%.1fs)"
              % (name, results[name], time.perf_counter() - start))
    print("  learned label-pair weights:\n%s" % np.array2string(model.pair_coef_, precision=2))
    return results
