"""CRF end to end: the optimum against scipy, OWL-QN sparsity, python-crfsuite
agreement, the sklearn-crfsuite tutorial, persistence, bad input."""
import itertools
import pickle

import numpy as np
import pytest
import scipy.optimize

from linclass import NotFittedError, load
from linclass.sequence import CRF
from linclass.sequence._optimize import pseudo_gradient


def generated_ner_corpus(n_sent=120, seed=0):
    """(word, postag) sentences with IOB2 entity labels: names and places
    are capitalised, places follow 'in'/'to', people follow 'Mr.'/'said'."""
    rng = np.random.default_rng(seed)
    people = ["Smith", "Garcia", "Lopez", "Ana", "John", "Maria"]
    places = ["Madrid", "Paris", "Lima", "Rome", "Oslo"]
    orgs = ["Acme", "Globex", "Initech"]
    fillers = [("the", "DA"), ("a", "DI"), ("house", "NC"), ("went", "VM"), ("big", "AQ"),
               ("and", "CC"), ("saw", "VM"), ("today", "RG"), ("of", "SP")]
    X, Y = [], []
    for _ in range(n_sent):
        sent, labels = [], []
        for _ in range(int(rng.integers(1, 6))):
            r = rng.random()
            if r < 0.2:
                sent += [("in", "SP"), (places[rng.integers(len(places))], "NP")]
                labels += ["O", "B-LOC"]
            elif r < 0.4:
                sent.append(("Mr.", "NC"))
                labels.append("O")
                for k in range(int(rng.integers(1, 3))):
                    sent.append((people[rng.integers(len(people))], "NP"))
                    labels.append("B-PER" if k == 0 else "I-PER")
            elif r < 0.5:
                sent += [(orgs[rng.integers(len(orgs))], "NP"), ("Inc.", "NP")]
                labels += ["B-ORG", "I-ORG"]
            else:
                sent.append(fillers[rng.integers(len(fillers))])
                labels.append("O")
        X.append(sent)
        Y.append(labels)
    return X, Y


# -- the sklearn-crfsuite tutorial, verbatim except for the imports ----------
TUTORIAL = '''
def word2features(sent, i):
    word = sent[i][0]
    postag = sent[i][1]

    features = {
        'bias': 1.0,
        'word.lower()': word.lower(),
        'word[-3:]': word[-3:],
        'word[-2:]': word[-2:],
        'word.isupper()': word.isupper(),
        'word.istitle()': word.istitle(),
        'word.isdigit()': word.isdigit(),
        'postag': postag,
        'postag[:2]': postag[:2],
    }
    if i > 0:
        word1 = sent[i-1][0]
        postag1 = sent[i-1][1]
        features.update({
            '-1:word.lower()': word1.lower(),
            '-1:word.istitle()': word1.istitle(),
            '-1:word.isupper()': word1.isupper(),
            '-1:postag': postag1,
            '-1:postag[:2]': postag1[:2],
        })
    else:
        features['BOS'] = True

    if i < len(sent)-1:
        word1 = sent[i+1][0]
        postag1 = sent[i+1][1]
        features.update({
            '+1:word.lower()': word1.lower(),
            '+1:word.istitle()': word1.istitle(),
            '+1:word.isupper()': word1.isupper(),
            '+1:postag': postag1,
            '+1:postag[:2]': postag1[:2],
        })
    else:
        features['EOS'] = True

    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]

def sent2labels(sent):
    return [label for token, postag, label in sent]

def sent2tokens(sent):
    return [token for token, postag, label in sent]

X_train = [sent2features(s) for s in train_sents]
y_train = [sent2labels(s) for s in train_sents]

X_test = [sent2features(s) for s in test_sents]
y_test = [sent2labels(s) for s in test_sents]

crf = sklearn_crfsuite.CRF(
    algorithm='lbfgs',
    c1=0.1,
    c2=0.1,
    max_iterations=100,
    all_possible_transitions=True
)
crf.fit(X_train, y_train)

labels = list(crf.classes_)
labels.remove('O')

y_pred = crf.predict(X_test)
f1 = metrics.flat_f1_score(y_test, y_pred,
                           average='weighted', labels=labels)

sorted_labels = sorted(
    labels,
    key=lambda name: (name[1:], name[0])
)
report = metrics.flat_classification_report(
    y_test, y_pred, labels=sorted_labels, digits=3
)
seq_acc = metrics.sequence_accuracy_score(y_test, y_pred)
marginals = crf.predict_marginals_single(X_test[0])
state = crf.state_features_
trans = crf.transition_features_
'''

LINCLASS_IMPORTS = "import linclass.sequence as sklearn_crfsuite\nfrom linclass import metrics\n"


def tutorial_sents(seed):
    X, Y = generated_ner_corpus(150, seed)
    return [[(w, p, lab) for (w, p), lab in zip(x, y)] for x, y in zip(X, Y)]


@pytest.fixture(scope="module")
def tutorial():
    ns = {"train_sents": tutorial_sents(0), "test_sents": tutorial_sents(1)}
    exec(LINCLASS_IMPORTS + TUTORIAL, ns)
    return ns


def test_tutorial_runs_with_only_the_import_changed(tutorial):
    from linclass.metrics import f1_score
    ns = tutorial
    flat_true = [t for s in ns["y_test"] for t in s]
    flat_pred = [t for s in ns["y_pred"] for t in s]
    assert ns["f1"] == pytest.approx(f1_score(flat_true, flat_pred, average="weighted",
                                              labels=ns["labels"]))
    assert ns["f1"] > 0.95                        # the generated entities are easy
    assert "B-LOC" in ns["report"] and "I-PER" in ns["report"]
    assert ns["seq_acc"] == np.mean([a == b for a, b in zip(ns["y_test"], ns["y_pred"])])
    m = ns["marginals"]
    assert len(m) == len(ns["X_test"][0])
    assert all(abs(sum(d.values()) - 1) < 1e-9 and set(d) == set(ns["crf"].classes_)
               for d in m)
    assert ("B-PER", "I-PER") in ns["trans"]
    assert all(isinstance(k[0], str) and k[1] in ns["crf"].classes_ for k in ns["state"])


def test_same_predictions_and_weights_as_python_crfsuite(tutorial, tmp_path):
    pycrfsuite = pytest.importorskip("pycrfsuite")
    ns = tutorial
    params = {"c1": 0.0, "c2": 0.5, "max_iterations": 300, "epsilon": 1e-8, "delta": 1e-10}
    crf = CRF(**params).fit(ns["X_train"], ns["y_train"])
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    trainer.set_params(params)
    for x, y in zip(ns["X_train"], ns["y_train"]):
        trainer.append(x, y)
    path = str(tmp_path / "m.crfsuite")
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    info = tagger.info()
    # the same feature set (CRFsuite's: observed pairs only) and the same optimum;
    # CRFsuite also keeps pairs whose attribute value was 0 (False): weight 0
    ours = crf.state_features_
    theirs = info.state_features
    assert set(ours) <= set(theirs)
    keys = sorted(theirs)
    np.testing.assert_allclose([ours.get(k, 0.0) for k in keys], [theirs[k] for k in keys],
                               atol=2e-3)
    for k, v in info.transitions.items():
        assert crf.transition_features_[k] == pytest.approx(v, abs=2e-3)
    assert crf.objective_ == pytest.approx(trainer.logparser.last_iteration["loss"], rel=1e-6)
    pred = crf.predict(ns["X_test"])
    assert pred == [tagger.tag(x) for x in ns["X_test"]]
    marg = crf.predict_marginals(ns["X_test"][:20])
    for x, m in zip(ns["X_test"][:20], marg):
        tagger.set(x)
        for t, d in enumerate(m):
            for label, p in d.items():
                assert p == pytest.approx(tagger.marginal(label, t), abs=1e-3)
    tagger.close()


def test_lbfgs_iterations_follow_crfsuite(tutorial):
    """The Moré-Thuente line search takes liblbfgs's steps: the objective after
    each of the first iterations equals CRFsuite's log, iteration by iteration
    (a backtracking-only search keeps the first, far too short step 1/||d||)."""
    pycrfsuite = pytest.importorskip("pycrfsuite")
    ns = tutorial
    params = {"c1": 0.0, "c2": 1.0, "max_iterations": 12}
    crf = CRF(**params).fit(ns["X_train"], ns["y_train"])
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    trainer.set_params(params)
    for x, y in zip(ns["X_train"], ns["y_train"]):
        trainer.append(x, y)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        trainer.train(tmp + "/m.crfsuite")
    theirs = [it["loss"] for it in trainer.logparser.iterations]
    ours = [h["objective"] for h in crf.history_]
    assert len(ours) == len(theirs) == 12
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert crf.history_[0]["evaluations"] == trainer.logparser.iterations[0]["linesearch_trials"]


def test_more_thuente_extrapolates_and_meets_strong_wolfe():
    from linclass.sequence._optimize import _more_thuente
    rng = np.random.default_rng(0)
    A = rng.normal(size=(8, 8))
    A = A @ A.T + np.eye(8)
    b = rng.normal(size=8)

    def fun(x):
        return 0.5 * x @ A @ x - b @ x + 0.1 * np.sum(x ** 4), A @ x - b + 0.4 * x ** 3

    x = np.zeros(8)
    f, g = fun(x)
    d = -g
    first = 1e-3 / np.linalg.norm(d)          # far too short: the search must go further
    step, x_new, f_new, g_new, n = _more_thuente(fun, x, f, g, d, first, 20)
    assert step > first
    np.testing.assert_allclose(x_new, x + step * d)
    assert (f_new, g_new[0]) == pytest.approx(tuple(v if np.ndim(v) == 0 else v[0]
                                                    for v in fun(x_new)))
    assert f_new <= f + 1e-4 * step * g.dot(d)                # sufficient decrease
    assert abs(g_new.dot(d)) <= 0.9 * abs(g.dot(d))           # curvature (strong Wolfe)
    # a step that is too long is shortened until both conditions hold
    step, x_new, f_new, g_new, n = _more_thuente(fun, x, f, g, d, 1e3, 30)
    assert f_new <= f + 1e-4 * step * g.dot(d)
    assert abs(g_new.dot(d)) <= 0.9 * abs(g.dot(d))


# -- the optimum against scipy on the same objective in numpy ---------------
def numpy_objective(theta, Xs, Ys, F, K, c2):
    """NLL by enumeration of every label sequence + c2 * ||theta||^2 (dense model)."""
    W = theta[:F * K].reshape(F, K)
    T = theta[F * K:].reshape(K, K)
    total = c2 * theta.dot(theta)
    for x, y in zip(Xs, Ys):
        E = x @ W
        scores = []
        for path in itertools.product(range(K), repeat=len(y)):
            scores.append(sum(E[t, path[t]] for t in range(len(y)))
                          + sum(T[path[t - 1], path[t]] for t in range(1, len(y))))
        gold = sum(E[t, y[t]] for t in range(len(y))) + sum(T[y[t - 1], y[t]]
                                                             for t in range(1, len(y)))
        total += np.logaddexp.reduce(scores) - gold
    return total


def test_lbfgs_optimum_equals_scipy_on_numpy_objective():
    X = [[["a", "b"], ["c"]], [["a"], ["b", "c"], ["c"]], [["b"]], [["c", "a"], ["a"]]]
    Y = [["x", "y"], ["x", "x", "y"], ["y"], ["y", "x"]]
    crf = CRF(c2=0.3, all_possible_states=True, all_possible_transitions=True,
              epsilon=1e-10, delta=0, max_iterations=500).fit(X, Y)
    names = crf.attributes_
    F, K = len(names), 2
    Xs = [np.array([[1.0 if n in tok else 0.0 for n in names] for tok in x]) for x in X]
    Ys = [[crf.classes_.index(t) for t in y] for y in Y]
    res = scipy.optimize.minimize(numpy_objective, np.zeros(F * K + K * K),
                                  args=(Xs, Ys, F, K, 0.3), method="L-BFGS-B",
                                  options={"gtol": 1e-10, "ftol": 1e-14, "maxiter": 1000})
    W = np.zeros((F, K))
    attr = np.repeat(np.arange(F), np.diff(crf.attr_ptr_))
    W[attr, crf.attr_label_] = crf.coef_
    np.testing.assert_allclose(W.ravel(), res.x[:F * K], atol=1e-5)
    np.testing.assert_allclose(crf.transitions_.ravel(), res.x[F * K:], atol=1e-5)
    assert crf.objective_ == pytest.approx(res.fun, rel=1e-9)


def test_owlqn_gives_exact_zeros_and_meets_the_optimality_conditions():
    X, Y = generated_ner_corpus(80, 3)
    feats = [[{"w": w, "p": p, "cap": w[:1].isupper()} for w, p in s] for s in X]
    c1 = 0.5
    crf = CRF(c1=c1, c2=0.01, max_iterations=500, epsilon=1e-7, delta=0).fit(feats, Y)
    n_zero = int(np.sum(crf.coef_ == 0.0))
    assert n_zero > len(crf.coef_) // 4
    assert len(crf.state_features_) == len(crf.coef_) - n_zero
    # optimality of f + c1 |x|: the pseudo-gradient vanishes
    from linclass.sequence import _crf_kernels as kernels
    Xf, offsets = crf._featurize(feats, fit=False)
    from linclass.sequence.tagger import _encode_label_sequences
    _, gold = _encode_label_sequences(Y, feats, classes=np.asarray(crf.classes_))
    table = crf._state_table()
    batch = kernels.make_batch(Xf, offsets, table, gold)
    K = len(crf.classes_)
    nll, gw, gt, _, _ = kernels.nll_and_gradient(table, batch, crf.coef_, crf.transitions_,
                                                 np.zeros(K), np.zeros(K), [(0, len(X))])
    theta = np.concatenate([crf.coef_, crf.transitions_[crf.transition_mask_]])
    grad = np.concatenate([gw, gt[crf.transition_mask_]]) + 2 * 0.01 * theta
    pg = pseudo_gradient(theta, grad, c1)
    assert np.abs(pg).max() < 1e-3
    assert np.all(np.abs(grad[theta == 0]) <= c1 + 1e-3)


def test_lbfgs_l2_is_l1_free_and_elastic_net_objective_is_lower_than_at_zero():
    X, Y = generated_ner_corpus(40, 4)
    feats = [[{"w": w, "p": p} for w, p in s] for s in X]
    crf = CRF(c1=0.0, c2=1.0, max_iterations=50).fit(feats, Y)
    assert np.all(crf.coef_ != 0.0)
    assert crf.history_[-1]["objective"] < crf.history_[0]["objective"]
    assert all(a["objective"] >= b["objective"] for a, b in zip(crf.history_, crf.history_[1:]))


# -- threads, templates, early stopping -------------------------------------
def test_threaded_gradient_is_deterministic_and_equal_to_single_thread():
    X, Y = generated_ner_corpus(200, 5)
    feats = [[{"w": w, "p": p} for w, p in s] for s in X]
    one = CRF(max_iterations=15, n_jobs=1).fit(feats, Y)
    two = CRF(max_iterations=15, n_jobs=2).fit(feats, Y)
    again = CRF(max_iterations=15, n_jobs=2).fit(feats, Y)
    np.testing.assert_array_equal(two.coef_, again.coef_)
    np.testing.assert_allclose(two.coef_, one.coef_, rtol=1e-6, atol=1e-8)
    assert two.predict(feats) == one.predict(feats)


def test_feature_template_input():
    X, Y = generated_ner_corpus(120, 6)
    crf = CRF(features="w[0] w[-1] w[1] pos[0] shape(w[0])", columns=("w", "pos"),
              max_iterations=100).fit(X, Y)
    Xt, Yt = generated_ner_corpus(60, 7)
    assert crf.score(Xt, Yt) > 0.97
    # string tokens with the default column
    crf2 = CRF(features="w[0] w[-1]", max_iterations=30).fit([[w for w, _ in s] for s in X], Y)
    assert len(crf2.predict_single([w for w, _ in Xt[0]])) == len(Xt[0])


def test_early_stopping_on_dev_keeps_the_best_iteration():
    X, Y = generated_ner_corpus(150, 8)
    Xd, Yd = generated_ner_corpus(50, 9)
    f = [[{"w": w} for w, _ in s] for s in X]
    fd = [[{"w": w} for w, _ in s] for s in Xd]
    crf = CRF(c2=0.01, max_iterations=200, n_iter_no_change=3).fit(f, Y, X_dev=fd, y_dev=Yd)
    accs = [h["dev_accuracy"] for h in crf.history_]
    best = int(np.argmax(accs))
    assert len(accs) == best + 1 + 3 or len(accs) == 200 or crf.stop_reason_.startswith("conv")
    assert crf.score(fd, Yd) == pytest.approx(max(accs))


def test_verbose_prints_progress(capsys):
    X, Y = generated_ner_corpus(20, 10)
    CRF(max_iterations=3, verbose=1).fit([[{"w": w} for w, _ in s] for s in X], Y)
    out = capsys.readouterr().out
    # sklearn-crfsuite's LinePerIterationTrainer lines
    assert out.count("Iter ") == 3 and "loss=" in out and "feature_norm=" in out


# -- persistence --------------------------------------------------------------
def test_save_load_and_pickle_round_trip(tutorial, tmp_path):
    crf = tutorial["crf"]
    X = tutorial["X_test"][:30]
    path = tmp_path / "crf.npz"
    crf.save(path)
    for other in (load(path), pickle.loads(pickle.dumps(crf))):
        assert other.predict(X) == crf.predict(X)
        assert other.predict_marginals(X) == crf.predict_marginals(X)
        assert other.transition_features_ == crf.transition_features_
        assert other.get_params() == crf.get_params()


def test_marginals_agree_with_sequence_probabilities():
    X, Y = generated_ner_corpus(60, 11)
    feats = [[{"w": w} for w, _ in s] for s in X]
    crf = CRF(max_iterations=40, all_possible_transitions=True).fit(feats, Y)
    x = feats[0][:3]
    K = len(crf.classes_)
    paths = [list(p) for p in itertools.product(crf.classes_, repeat=len(x))]
    probs = crf.predict_proba_sequence([x] * len(paths), paths)
    assert probs.sum() == pytest.approx(1.0, abs=1e-9)
    marg = crf.predict_marginals_single(x)
    for t in range(len(x)):
        for label in crf.classes_:
            assert marg[t][label] == pytest.approx(
                sum(p for path, p in zip(paths, probs) if path[t] == label), abs=1e-9)
    assert K >= 3


# -- bad input ----------------------------------------------------------------
def test_bad_input_raises_clearly():
    X, Y = generated_ner_corpus(20, 12)
    feats = [[{"w": w} for w, _ in s] for s in X]
    with pytest.raises(ValueError, match="non-finite"):
        CRF().fit([[{"w": "a", "x": float("nan")}]] + feats[1:], [["O"]] + Y[1:])
    with pytest.raises(ValueError, match="non-finite"):
        CRF().fit([[{"w": "a", "x": float("inf")}]] + feats[1:], [["O"]] + Y[1:])
    crf = CRF(max_iterations=5).fit(feats, Y)
    with pytest.raises(ValueError, match="not seen in training"):
        CRF(max_iterations=5).fit(feats, Y, X_dev=feats[:2], y_dev=[["NEW"] * len(feats[0]),
                                                                     Y[1]])
    with pytest.raises(ValueError, match="list of sentences"):
        crf.predict(feats[0])                       # one sentence instead of a list
    with pytest.raises(ValueError, match="list of sentences"):
        crf.predict_marginals(feats[0])
    with pytest.raises(ValueError, match="list of sentences"):
        CRF().fit(feats[0], Y[0])
    with pytest.raises(ValueError, match="tokens but"):
        CRF().fit(feats, [y[:-1] for y in Y])
    with pytest.raises(ValueError, match="X_dev and y_dev"):
        CRF().fit(feats, Y, X_dev=feats)
    with pytest.raises(ValueError, match="algorithm"):
        CRF(algorithm="crf1d").fit(feats, Y)
    with pytest.raises(ValueError, match="c1"):
        CRF(c1=-1).fit(feats, Y)
    with pytest.raises(NotFittedError):
        CRF().predict(feats)


def test_command_line_train_predict_evaluate(tmp_path, capsys):
    from linclass.cli import main
    X, Y = generated_ner_corpus(60, 13)
    text = "".join("\n".join("%s %s %s" % (w, p, lab) for (w, p), lab in zip(x, y)) + "\n\n"
                   for x, y in zip(X, Y))
    data = tmp_path / "train.txt"
    data.write_text(text)
    for extra in ([], ["-p", "features='w[0] w[-1] w[1] pos[0]'"]):
        model = tmp_path / "crf.npz"
        assert main(["train", "--model", "crf", "-p", "max_iterations=50", *extra, str(data),
                     "-o", str(model)]) == 0
        assert "trained crf" in capsys.readouterr().out
        out = tmp_path / "pred.txt"
        assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
        assert out.read_text() == text
        assert main(["evaluate", str(model), str(data)]) == 0
        assert "FB1: 100.00" in capsys.readouterr().out
