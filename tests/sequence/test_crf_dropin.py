"""linclass.CRF as a drop-in for sklearn_crfsuite.CRF, on a subsample of the
sklearn-crfsuite tutorial (CoNLL-2002 Spanish NER, its word2features):
F1 of every algorithm against python-crfsuite, lbfgs weights, the
attributes (size_, num_attributes_, attributes_, state_features_,
transition_features_, training_log_, tagger_), model_filename, and the
tutorial's RandomizedSearchCV code path.

python-crfsuite shuffles with the C library's ``rand()``, whose state is
shared by every training in a process, so its online and SGD runs are made in
a fresh interpreter: their result then does not depend on test order.
"""
import importlib.util
import json
import math
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from linclass import CRF, load
from linclass.metrics import flat_f1_score

N_TRAIN = 1000
N_ITER = 20
#: SGD needs more epochs for its F1 to settle (its order noise is ~1 point at 20)
ITERATIONS = {"l2sgd": 50}
ALGORITHM_PARAMS = {"lbfgs": {"c1": 0.0, "c2": 0.1}, "l2sgd": {"c2": 0.1}, "ap": {},
                    "pa": {"pa_type": 1, "c": 1.0}, "arow": {"variance": 1.0, "gamma": 1.0}}


# -- the tutorial's features (word2features, sent2features, sent2labels), taken
# from the verbatim tutorial text of test_crf.py ---------------------------------
def _tutorial_functions():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_crf.py")
    spec = importlib.util.spec_from_file_location("_crf_tutorial_text", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ns = {}
    exec(module.TUTORIAL.split("X_train =")[0], ns)
    return ns["sent2features"], ns["sent2labels"]


sent2features, sent2labels = _tutorial_functions()


def load_tutorial_data():
    """(train_sents, test_sents) as nltk's conll2002.iob_sents: (word, pos, tag)."""
    from linclass import datasets
    train = datasets.load_conll2002("esp", "train")[:N_TRAIN]
    test = datasets.load_conll2002("esp", "testb")
    as_triples = [[tuple(t) for t in zip(s.column("word"), s.column("pos"), s.column("ner"))]
                  for s in train]
    test_triples = [[tuple(t) for t in zip(s.column("word"), s.column("pos"), s.column("ner"))]
                    for s in test]
    return as_triples, test_triples


def train_crfsuite_models(out_dir):
    """In a fresh interpreter: python-crfsuite models of every algorithm (and
    their training logs' iteration counts) into ``out_dir``."""
    import pycrfsuite
    train, _ = load_tutorial_data()
    X = [sent2features(s) for s in train]
    y = [sent2labels(s) for s in train]
    iterations = {}
    for algorithm, params in ALGORITHM_PARAMS.items():
        trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
        params = dict(params, max_iterations=ITERATIONS.get(algorithm, N_ITER),
                      **{"feature.possible_transitions": True})
        if algorithm == "pa":
            params["type"] = params.pop("pa_type")
        trainer.set_params(params)
        for xseq, yseq in zip(X, y):
            trainer.append(xseq, yseq)
        trainer.train(os.path.join(out_dir, algorithm + ".crfsuite"))
        iterations[algorithm] = [it["loss"] for it in trainer.logparser.iterations]
    with open(os.path.join(out_dir, "losses.json"), "w") as fh:
        json.dump(iterations, fh)


@pytest.fixture(scope="module")
def data():
    try:
        train, test = load_tutorial_data()
    except (OSError, ValueError) as exc:
        pytest.skip("CoNLL-2002 data not available: %s" % exc)
    return {"X_train": [sent2features(s) for s in train],
            "y_train": [sent2labels(s) for s in train],
            "X_test": [sent2features(s) for s in test],
            "y_test": [sent2labels(s) for s in test]}


@pytest.fixture(scope="module")
def crfsuite_models(data, tmp_path_factory):
    pytest.importorskip("pycrfsuite")
    out = tmp_path_factory.mktemp("crfsuite")
    code = ("import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('dropin', sys.argv[1])\n"
            "mod = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(mod)\n"
            "mod.train_crfsuite_models(sys.argv[2])\n")
    subprocess.run([sys.executable, "-c", code, os.path.abspath(__file__), str(out)],
                   check=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                   env=dict(os.environ))
    with open(out / "losses.json") as fh:
        losses = json.load(fh)
    return out, losses


@pytest.fixture(scope="module")
def fitted(data):
    """Our model of every algorithm (fitted once for the module)."""
    return {algorithm: CRF(algorithm=algorithm, max_iterations=ITERATIONS.get(algorithm, N_ITER),
                           all_possible_transitions=True, **params).fit(data["X_train"],
                                                                        data["y_train"])
            for algorithm, params in ALGORITHM_PARAMS.items()}


def entity_f1(y_true, y_pred, classes):
    labels = [label for label in classes if label != "O"]
    return flat_f1_score(y_true, y_pred, average="weighted", labels=labels)


# -- every algorithm against CRFsuite --------------------------------------------
@pytest.mark.parametrize("algorithm", sorted(ALGORITHM_PARAMS))
def test_f1_within_one_point_of_crfsuite(algorithm, data, fitted, crfsuite_models):
    import pycrfsuite
    out, losses = crfsuite_models
    crf = fitted[algorithm]
    tagger = pycrfsuite.Tagger()
    tagger.open(str(out / (algorithm + ".crfsuite")))
    theirs = [tagger.tag(x) for x in data["X_test"]]
    ours = crf.predict(data["X_test"])
    f1_theirs = entity_f1(data["y_test"], theirs, tagger.labels())
    f1_ours = entity_f1(data["y_test"], ours, crf.classes_)
    assert f1_theirs > 0.5
    assert abs(f1_ours - f1_theirs) <= 0.01, (algorithm, f1_ours, f1_theirs)
    info = tagger.info()
    if algorithm in ("lbfgs", "l2sgd"):
        # the same feature set: every non-zero weight of ours is a CRFsuite feature
        # (the online learners leave different features at exactly 0 in each run)
        assert set(crf.state_features_) <= set(info.state_features)
        assert set(crf.transition_features_) <= set(info.transitions)
    assert sorted(crf.classes_) == sorted(tagger.labels())
    # CRFsuite's model file, read by linclass (sklearn-crfsuite's model_filename)
    loaded = CRF(model_filename=str(out / (algorithm + ".crfsuite")))
    assert loaded.predict(data["X_test"]) == theirs
    assert loaded.size_ == int(info.header["size"]) == os.path.getsize(out / (algorithm
                                                                             + ".crfsuite"))
    assert loaded.num_attributes_ == int(info.header["num_attrs"])
    assert loaded.attributes_ == sorted(info.attributes, key=lambda a: int(info.attributes[a]))
    keys = sorted(info.state_features)
    np.testing.assert_allclose([loaded.state_features_[k] for k in keys],
                               [info.state_features[k] for k in keys], atol=5e-7)  # dump: %f
    assert set(loaded.transition_features_) == set(info.transitions)
    x = data["X_test"][7]
    tagger.set(x)
    for t, marginals in enumerate(loaded.predict_marginals_single(x)):
        for label, p in marginals.items():
            assert p == pytest.approx(tagger.marginal(label, t), abs=1e-9)
    # the log has CRFsuite's iterations (none stops early in 20; SGD may stop on delta)
    if algorithm == "l2sgd":
        assert 10 < len(crf.training_log_.iterations) <= ITERATIONS["l2sgd"]
    else:
        assert len(crf.training_log_.iterations) == len(losses[algorithm]) == N_ITER
    if algorithm == "lbfgs":   # deterministic: the same objective, iteration by iteration
        np.testing.assert_allclose([it["loss"] for it in crf.training_log_.iterations],
                                   losses[algorithm], rtol=1e-5)
    tagger.close()


def test_lbfgs_same_weights_and_predictions_as_crfsuite(data, fitted, crfsuite_models):
    import pycrfsuite
    out, _ = crfsuite_models
    crf = fitted["lbfgs"]
    tagger = pycrfsuite.Tagger()
    tagger.open(str(out / "lbfgs.crfsuite"))
    info = tagger.info()
    theirs = info.state_features
    ours = crf.state_features_
    keys = sorted(theirs)
    # CRFsuite's dump rounds to 6 decimals
    np.testing.assert_allclose([ours.get(k, 0.0) for k in keys], [theirs[k] for k in keys],
                               atol=1e-4)
    for k, v in info.transitions.items():
        assert crf.transition_features_.get(k, 0.0) == pytest.approx(v, abs=1e-4)
    X = data["X_test"][:300]
    assert crf.predict(X) == [tagger.tag(x) for x in X]
    tagger.close()


# -- attributes --------------------------------------------------------------------
def test_attributes_have_sklearn_crfsuites_types_and_agree_with_the_weights(data, fitted):
    sklearn_crfsuite = pytest.importorskip("sklearn_crfsuite")
    crf = fitted["lbfgs"]
    # sklearn-crfsuite's model on the same data (lbfgs is deterministic)
    peer = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=0.1, max_iterations=N_ITER,
                                all_possible_transitions=True)
    peer.fit(data["X_train"][:200], data["y_train"][:200])
    for name in ("classes_", "size_", "num_attributes_", "attributes_", "state_features_",
                 "transition_features_", "training_log_", "tagger_"):
        assert getattr(crf, name) is not None, name
    assert isinstance(crf.size_, int) and crf.size_ > 0
    assert isinstance(crf.num_attributes_, int)
    assert crf.num_attributes_ == len(crf.attributes_) == len({a for a, _ in crf.state_features_})
    assert all(isinstance(a, str) for a in crf.attributes_)
    # the dicts: keys as sklearn-crfsuite's, weights those of the fitted arrays
    state = crf.state_features_
    names = crf.features_.get_feature_names_out()
    attr = np.repeat(np.arange(len(crf.attr_ptr_) - 1), np.diff(crf.attr_ptr_))
    for p in np.flatnonzero(crf.coef_)[:500].tolist():
        assert state[(str(names[attr[p]]), crf.classes_[crf.attr_label_[p]])] == crf.coef_[p]
    assert len(state) == np.count_nonzero(crf.coef_)
    for (a, b), v in crf.transition_features_.items():
        assert crf.transitions_[crf.classes_.index(a), crf.classes_.index(b)] == v
    assert type(next(iter(state))) is type(next(iter(peer.state_features_)))
    assert type(next(iter(crf.transition_features_))) is \
        type(next(iter(peer.transition_features_)))
    # the training log: CRFsuite's keys (the peer's lbfgs keys are all present)
    log = crf.training_log_
    assert log.last_iteration is log.iterations[-1]
    assert set(peer.training_log_.last_iteration) <= set(log.last_iteration)
    assert [it["num"] for it in log.iterations] == list(range(1, N_ITER + 1))
    assert log.last_iteration["active_features"] == np.count_nonzero(crf.coef_) + \
        np.count_nonzero(crf.transitions_[crf.transition_mask_])
    # the tagger: python-crfsuite's methods and answers
    tagger = crf.tagger_
    assert tagger.labels() == crf.classes_ == list(peer.tagger_.labels()) or \
        sorted(tagger.labels()) == sorted(peer.tagger_.labels())
    x = data["X_test"][3]
    assert tagger.tag(x) == crf.predict_single(x)
    tagger.set(x)
    for t in range(len(x)):
        assert sum(tagger.marginal(label, t) for label in tagger.labels()) == \
            pytest.approx(1.0, abs=1e-9)
    marg = crf.predict_marginals_single(x)
    assert marg[2]["O"] == pytest.approx(tagger.marginal("O", 2), abs=1e-12)
    # probability = exp(score - log Z), the score read off state_features_/transition_features_
    yseq = tagger.tag()
    score = sum(state.get((name, label), 0.0) * (1.0 if value is True else float(value))
                for token, label in zip(x, yseq) for name, value in token.items()
                if not isinstance(value, str) and value is not False)
    score += sum(state.get(("%s:%s" % (name, value), label), 0.0)
                 for token, label in zip(x, yseq) for name, value in token.items()
                 if isinstance(value, str))
    score += sum(crf.transition_features_.get((a, b), 0.0) for a, b in zip(yseq, yseq[1:]))
    _, _, log_z, _ = crf._marginals([x])
    assert tagger.probability(yseq) == pytest.approx(math.exp(score - log_z[0]), rel=1e-9)
    assert tagger.probability(yseq) == pytest.approx(crf.predict_proba_sequence([x], [yseq])[0])
    info = tagger.info()
    assert int(info.header["size"]) == crf.size_
    assert int(info.header["num_attrs"]) == crf.num_attributes_
    assert info.state_features == state
    with pytest.raises(ValueError, match="unknown label"):
        tagger.marginal("B-XYZ", 0)
    with pytest.raises(ValueError, match="position"):
        tagger.marginal("O", len(x))


def test_online_attributes_and_unfitted_state(fitted):
    for algorithm in ("ap", "pa", "arow"):
        crf = fitted[algorithm]
        log = crf.training_log_
        assert {"num", "loss", "feature_norm", "time", "scores"} <= set(log.last_iteration)
        assert log.last_iteration["feature_norm"] > 0
        assert crf.num_attributes_ == len(crf.attributes_) > 0
    fresh = CRF(algorithm="ap")
    assert fresh.tagger_ is None
    with pytest.raises(AttributeError):
        fresh.classes_


def test_online_options_change_the_model(data):
    X, y = data["X_train"][:150], data["y_train"][:150]
    base = CRF(algorithm="pa", max_iterations=3, c=0.01).fit(X, y)
    for params in ({"pa_type": 0}, {"pa_type": 2}, {"averaging": False},
                   {"error_sensitive": False}, {"c": 0.001}):
        params = dict({"c": 0.01}, **params)
        other = CRF(algorithm="pa", max_iterations=3, **params).fit(X, y)
        assert not np.array_equal(other.coef_, base.coef_), params
    a = CRF(algorithm="arow", max_iterations=3, variance=1.0, gamma=1.0).fit(X, y)
    b = CRF(algorithm="arow", max_iterations=3, variance=0.1, gamma=10.0).fit(X, y)
    assert not np.array_equal(a.coef_, b.coef_)
    # deterministic
    assert np.array_equal(CRF(algorithm="arow", max_iterations=3).fit(X, y).coef_, a.coef_)
    # epsilon: ap stops once the mean loss is below it
    ap = CRF(algorithm="ap", max_iterations=50, epsilon=1.0).fit(X, y)
    assert ap.n_iter_ == 1 and len(ap.training_log_.iterations) == 1


@pytest.mark.parametrize("params, match", [
    ({"algorithm": "crf"}, "algorithm"), ({"pa_type": 3}, "pa_type"), ({"c": 0}, "c must"),
    ({"variance": -1.0}, "variance"), ({"gamma": float("nan")}, "gamma"),
    ({"linesearch": "Wolfe"}, "linesearch"), ({"error_sensitive": 1}, "error_sensitive"),
    ({"averaging": "yes"}, "averaging"), ({"keep_tempfiles": None}, "keep_tempfiles"),
    ({"model_filename": ""}, "model_filename"), ({"epsilon": -1.0}, "epsilon"),
    ({"trainer_cls": 3}, "trainer_cls")])
def test_bad_parameters_are_refused_before_training(params, match):
    with pytest.raises(ValueError, match=match):
        CRF(**params).fit([[{"a": 1.0}]], [["x"]])


def test_linesearch_options(data):
    X, y = data["X_train"][:100], data["y_train"][:100]
    mt = CRF(max_iterations=5, linesearch="MoreThuente").fit(X, y)
    bt = CRF(max_iterations=5, linesearch="Backtracking").fit(X, y)
    sbt = CRF(max_iterations=5, linesearch="StrongBacktracking").fit(X, y)
    assert mt.objective_ > 0 and bt.objective_ > 0 and sbt.objective_ > 0
    assert [it["linesearch_trials"] for it in bt.training_log_.iterations] != \
        [it["linesearch_trials"] for it in mt.training_log_.iterations] or \
        not np.array_equal(bt.coef_, mt.coef_)


# -- model files -------------------------------------------------------------------
def test_model_filename_saves_and_an_unfitted_crf_loads_it(data, tmp_path):
    X, y = data["X_train"][:150], data["y_train"][:150]
    Xt = data["X_test"][:50]
    path = tmp_path / "tutorial.crfmodel"
    crf = CRF(algorithm="ap", max_iterations=3, model_filename=str(path)).fit(X, y)
    assert path.is_file()
    assert crf.size_ == os.path.getsize(path)
    assert not list(tmp_path.glob(".*.tmp"))          # the atomic write left nothing behind
    # as sklearn-crfsuite: a CRF built on an existing model file is usable at once
    other = CRF(model_filename=str(path))
    assert other.classes_ == crf.classes_
    assert other.predict(Xt) == crf.predict(Xt)
    other2 = CRF(model_filename=str(path))
    assert other2.predict_marginals(Xt[:5]) == crf.predict_marginals(Xt[:5])
    assert other2.state_features_ == crf.state_features_
    assert other2.tagger_.tag(Xt[0]) == crf.predict_single(Xt[0])
    assert other2.size_ == crf.size_ and other2.training_log_ is None
    assert load(path).predict(Xt) == crf.predict(Xt)
    # python-crfsuite's Tagger().open(path) idiom on our model file
    from linclass.sequence._crf_compat import Tagger
    with Tagger().open(str(path)) as tagger:
        assert tagger.tag(Xt[2]) == crf.predict_single(Xt[2])
        assert tagger.labels() == crf.classes_
    tagger = Tagger()
    tagger.open(str(path))
    with pytest.raises(ValueError, match="set"):
        tagger.marginal("O", 0)               # no sequence set yet
    # pickling keeps the model; the tagger is rebuilt
    clone = pickle.loads(pickle.dumps(crf))
    assert clone.tagger_.tag(Xt[1]) == crf.predict_single(Xt[1])
    # refitting overwrites the file
    before = path.read_bytes()
    CRF(algorithm="pa", max_iterations=2, model_filename=str(path)).fit(X, y)
    assert path.read_bytes() != before
    # a file that is not a CRF model is a clear error, not a crash
    bad = tmp_path / "bad.crfsuite"
    bad.write_bytes(b"lCRF" + b"\0" * 60)
    with pytest.raises(ValueError):
        CRF(model_filename=str(bad)).predict(Xt)
    # keep_tempfiles is accepted; nothing else is written
    CRF(max_iterations=2, keep_tempfiles=True).fit(X, y)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.crfsuite", "tutorial.crfmodel"]


def test_verbose_and_trainer_cls_hooks(data, capsys):
    X, y = data["X_train"][:60], data["y_train"][:60]
    CRF(algorithm="arow", max_iterations=2, verbose=True).fit(X, y, X_dev=X[:10],
                                                            y_dev=y[:10])
    out = capsys.readouterr().out
    assert out.count("Iter ") == 2 and "F1=" in out and "Acc(item/seq)=" in out

    class Hooks:
        calls = []

        def __init__(self, algorithm, params, verbose):
            self.algorithm = algorithm

        def on_iteration(self, log, info):
            Hooks.calls.append((self.algorithm, info["num"], "Loss:" in log))

        def on_optimization_end(self, log):
            Hooks.calls.append("end")

    CRF(algorithm="ap", max_iterations=2, verbose=True, trainer_cls=Hooks).fit(X, y)
    assert Hooks.calls == [("ap", 1, True), ("ap", 2, True), "end"]
    assert capsys.readouterr().out == ""
    sklearn_crfsuite = pytest.importorskip("sklearn_crfsuite")
    from sklearn_crfsuite.trainer import LinePerIterationTrainer
    CRF(max_iterations=2, verbose=True, trainer_cls=LinePerIterationTrainer).fit(X, y)
    assert capsys.readouterr().out.count("Iter ") == 2
    assert sklearn_crfsuite


# -- the tutorial, unchanged after the import line ---------------------------------
# test_crf.TUTORIAL (features, training, evaluation, marginals, weights), then the
# tutorial's hyperparameter search and its inspection of the best model
SEARCH = '''
crf = sklearn_crfsuite.CRF(
    algorithm='lbfgs',
    max_iterations=100,
    all_possible_transitions=True
)
params_space = {
    'c1': scipy.stats.expon(scale=0.5),
    'c2': scipy.stats.expon(scale=0.05),
}

# use the same metric for evaluation
f1_scorer = make_scorer(metrics.flat_f1_score,
                        average='weighted', labels=labels)

# search
rs = RandomizedSearchCV(crf, params_space,
                        cv=3,
                        verbose=1,
                        n_jobs=1,
                        n_iter=N_SEARCH,
                        scoring=f1_scorer,
                        random_state=0)
rs.fit(X_train, y_train)
best = ('best params:', rs.best_params_, 'best CV score:', rs.best_score_,
        'model size: {:0.2f}M'.format(rs.best_estimator_.size_ / 1000000))
_x = [s['c1'] for s in rs.cv_results_['params']]
_y = [s['c2'] for s in rs.cv_results_['params']]
_c = [s for s in rs.cv_results_['mean_test_score']]

crf = rs.best_estimator_
y_pred = crf.predict(X_test)
report2 = metrics.flat_classification_report(
    y_test, y_pred, labels=sorted_labels, digits=3
)

from collections import Counter
top_trans = Counter(crf.transition_features_).most_common(20)
top_state = Counter(crf.state_features_).most_common(30)
'''


@pytest.mark.filterwarnings("ignore:.*ill-defined")
def test_tutorial_with_randomized_search_runs_with_the_import_changed():
    pytest.importorskip("sklearn")
    import scipy.stats
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import RandomizedSearchCV
    try:
        train, test = load_tutorial_data()
    except (OSError, ValueError) as exc:
        pytest.skip("CoNLL-2002 data not available: %s" % exc)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_crf.py")
    spec = importlib.util.spec_from_file_location("_crf_tutorial_text", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ns = {"train_sents": train[:150], "test_sents": test[:150], "scipy": scipy,
          "make_scorer": make_scorer, "RandomizedSearchCV": RandomizedSearchCV, "N_SEARCH": 2}
    # the import line: linclass instead of sklearn_crfsuite (few iterations: a test)
    code = module.TUTORIAL + SEARCH
    exec("import linclass as sklearn_crfsuite\nfrom linclass import metrics\n"
         + code.replace("max_iterations=100", "max_iterations=15"), ns)
    assert 0.2 < ns["f1"] <= 1.0
    assert "B-PER" in ns["report"] and "B-PER" in ns["report2"]
    rs = ns["rs"]
    assert set(rs.best_params_) == {"c1", "c2"}
    assert len(ns["_x"]) == len(ns["_c"]) == 2
    assert ns["best"][-1].startswith("model size: ")
    assert isinstance(ns["crf"], CRF) and ns["crf"].c1 == rs.best_params_["c1"]
    assert len(ns["top_trans"]) == 20 and len(ns["top_state"]) == 30
    assert all(isinstance(k, tuple) and len(k) == 2 for k, _ in ns["top_state"])


def test_damaged_crfsuite_model_files_raise_clearly(crfsuite_models, tmp_path):
    from linclass.sequence._crf_compat import Tagger
    out, _ = crfsuite_models
    good = (out / "ap.crfsuite").read_bytes()
    cases = {"cut.crfsuite": good[:len(good) // 2],
             "header.crfsuite": good[:40],
             "strings.crfsuite": good[:2000] + b"\xff" * 4000 + good[6000:],
             "features.crfsuite": good[:48] + b"XXXX" + good[52:]}
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=name):
            CRF(model_filename=str(path)).predict([[{"bias": 1.0}]])
        with pytest.raises(ValueError, match=name):
            Tagger().open(str(path))
    # the intact file is read by the tagger as by python-crfsuite's
    with Tagger().open(str(out / "ap.crfsuite")) as tagger:
        assert len(tagger.labels()) == 9
        assert int(tagger.info().header["size"]) == len(good)
