"""Issue #35 for the sequence models: a tagger whose state was made
inconsistent by hand (or by a tampered file) must raise, not crash, in
predict (child process); sentences as tuples and numpy string arrays work
like lists; HMM tokens are words; the quasi-Newton solver of the CRF always
returns and refuses non-finite progress."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from linclass.exceptions import ConvergenceWarning, NotFittedError
from linclass.sequence import CRF, HMM, SequenceTagger
from linclass.sequence import _optimize

X = [["the", "dog", "runs"], ["a", "cat", "sleeps"], ["the", "cat", "runs"], ["dogs", "run"]]
Y = [["D", "N", "V"], ["D", "N", "V"], ["D", "N", "V"], ["N", "V"]]

# children run Python from here, not from the repository root, whose unbuilt
# linclass/ would shadow the installed package
_OUTSIDE_SOURCE = os.path.dirname(os.path.abspath(__file__))

# Each mutation leaves a fitted tagger inconsistent; predict (and the load-time
# _check_state) must raise ValueError.  Run in one child: a crash fails the test.

_CHILD = r"""
import json, warnings
import numpy as np
warnings.simplefilter("ignore")
from linclass.sequence import SequenceTagger
X = %(X)r
Y = %(Y)r

def shrink_vocabulary(m):
    F = m.n_features_ - 5                    # ids of the last 5 keys index past the weights
    m.features_.n_features_ = F
    m.n_features_ = F
    m.emission_ = np.ascontiguousarray(m.emission_[:F])

MUTATIONS = {
    "shrink_vocabulary": shrink_vocabulary,
    "emission_rows": lambda m: setattr(m, "emission_", np.ascontiguousarray(m.emission_[:2])),
    "emission_columns": lambda m: setattr(m, "emission_", np.zeros((m.n_features_, 7))),
    "transitions": lambda m: setattr(m, "transitions_", np.zeros((1, 1))),
    "start": lambda m: setattr(m, "start_", np.zeros(1)),
    "classes": lambda m: setattr(m, "classes_", m.classes_[:1]),
    "order": lambda m: setattr(m, "order", 2),
    "transitions2": lambda m: setattr(m, "transitions2_", np.zeros(5)),
}
for order in (1, 2):
    for name, mutate in MUTATIONS.items():
        model = SequenceTagger(max_iter=2, order=order, random_state=0).fit(X, Y)
        mutate(model)
        outcome = []
        for call in (lambda: model._check_state(), lambda: model.predict(X),
                     lambda: model.predict_marginals(X), lambda: model.decision_function(X)):
            try:
                call()
                outcome.append("accepted")
            except ValueError:
                outcome.append("ValueError")
            except Exception as exc:
                outcome.append(type(exc).__name__)
        print("RESULT " + json.dumps([order, name, outcome]), flush=True)
print("DONE", flush=True)
"""


def test_inconsistent_tagger_state_raises_in_a_child_process():
    proc = subprocess.run([sys.executable, "-c", _CHILD % {"X": X, "Y": Y}],
                          capture_output=True, text=True, timeout=300,
                          cwd=_OUTSIDE_SOURCE)
    results = [json.loads(line[7:]) for line in proc.stdout.splitlines()
               if line.startswith("RESULT ")]
    assert proc.returncode == 0 and "DONE" in proc.stdout, \
        (proc.returncode, results[-1:], proc.stderr[-2000:])
    assert len(results) == 16
    for order, name, outcome in results:
        if name == "order" and order == 2:
            continue                          # already order 2: nothing changed
        assert outcome == ["ValueError"] * 4, (order, name, outcome)


def _variants(X, Y):
    return {
        "tuples": ([tuple(s) for s in X], [tuple(s) for s in Y]),
        "numpy rows": ([np.array(s) for s in X], [np.array(s) for s in Y]),
        "numpy 2-D": (np.array(X[:3]), np.array(Y[:3])),
    }


@pytest.mark.parametrize("make", [
    lambda: SequenceTagger(max_iter=3, random_state=0),
    lambda: SequenceTagger(max_iter=3, order=2, random_state=0),
    lambda: CRF(features="pos", max_iterations=20),
    lambda: HMM(),
], ids=["tagger", "tagger-order2", "CRF", "HMM"])
def test_tuples_and_numpy_string_arrays_work_like_lists(make):
    for name, (XX, YY) in _variants(X, Y).items():
        n = len(XX)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            expected = make().fit(X[:n], Y[:n]).predict(X[:n])
            got = make().fit(XX, YY).predict(XX)
        assert got == expected, name
        assert all(type(tag) is str for sent in got for tag in sent)


@pytest.mark.parametrize("token, kind", [(["the", "x"], "list"), (None, "NoneType"),
                                         (1.5, "float"), (7, "int"), ((3, "D"), "tuple")])
def test_hmm_tokens_must_be_words(token, kind):
    bad = [["the", "dog"], ["a", token, "cat"]]
    with pytest.raises(ValueError, match="X\\[1\\]\\[1\\].*got %s" % kind):
        HMM().fit(bad, [["D", "N"], ["D", "N", "N"]])
    model = HMM().fit(X, Y)
    with pytest.raises(ValueError, match="X\\[1\\]\\[1\\].*got %s" % kind):
        model.predict(bad)
    # a CoNLL row (a tuple whose first column is the word) is a token
    assert model.predict([[("the", "DT"), ("dog", "NN")]]) == [["D", "N"]]


def test_owlqn_hard_cap_and_non_finite_progress(monkeypatch):
    def quadratic(x):
        return float(x @ x), 2.0 * x

    monkeypatch.setattr(_optimize, "MAX_ITERATIONS_CAP", 3)
    x, _, n_iter, reason = _optimize.minimize_owlqn(
        quadratic, np.full(4, 10.0), max_iterations=None, epsilon=0.0, period=0)
    assert (n_iter, reason) == (3, "max_iterations (hard cap)")

    # NaN compares false against every stopping rule: an error, not a loop
    with pytest.raises(ValueError, match="non-finite"):
        _optimize.minimize_owlqn(lambda x: (float(x @ x), np.full_like(x, np.nan)),
                                 np.ones(2), max_iterations=None)
    with pytest.raises(ValueError, match="non-finite"):
        _optimize.minimize_owlqn(lambda x: (float("inf"), x), np.ones(2))


def test_crf_warns_when_the_hard_cap_is_reached(monkeypatch):
    monkeypatch.setattr(_optimize, "MAX_ITERATIONS_CAP", 2)
    with pytest.warns(ConvergenceWarning, match="hard cap"):
        model = CRF(features="pos", epsilon=0.0, period=0).fit(X, Y)
    assert model.n_iter_ == 2 and model.stop_reason_ == "max_iterations (hard cap)"


@pytest.mark.parametrize("make", [SequenceTagger, CRF, HMM])
def test_not_fitted_error_before_fit(make):
    model = make()
    for method in ("predict", "predict_marginals", "decision_function", "score"):
        if hasattr(model, method):
            args = (X, Y) if method == "score" else (X,)
            with pytest.raises(NotFittedError):
                getattr(model, method)(*args)


@pytest.mark.parametrize("name, value", [("log_emissions_", np.nan), ("log_start_", 0.5),
                                         ("log_transitions_", np.inf)])
def test_hmm_state_check_refuses_what_is_not_a_log_probability(name, value, tmp_path):
    from linclass import load
    model = HMM().fit(X, Y)
    path = tmp_path / "hmm.npz"
    model.save(path)
    assert load(path).predict(X) == model.predict(X)
    table = getattr(model, name).copy()
    table.reshape(-1)[0] = value
    setattr(model, name, table)
    with pytest.raises(ValueError, match=name):
        model._check_state()


@pytest.mark.parametrize("dev", [[], [[]]])
def test_crf_refuses_a_dev_set_without_tokens(dev):
    """An empty dev set scored accuracy 1.0 at every iteration: early
    stopping silently kept the weights of the first iteration."""
    from linclass.sequence import CRF
    X = [["the", "dog", "runs"], ["a", "cat", "sleeps", "now"], ["dogs", "run"]]
    Y = [["D", "N", "V"], ["D", "N", "V", "R"], ["N", "V"]]
    with pytest.raises(ValueError, match="X_dev holds no tokens"):
        CRF(max_iterations=20, features="pos").fit(X, Y, X_dev=dev, y_dev=dev)


@pytest.mark.parametrize("model", [lambda: SequenceTagger(max_iter=1),
                                   lambda: CRF(features="pos", max_iterations=3)])
@pytest.mark.parametrize("token", [1, 1.5])
def test_a_number_as_first_token_is_refused_clearly(model, token):
    """A number as the first token leaked numpy/len's TypeError."""
    with pytest.raises(ValueError, match="a token must be a word string"):
        model().fit([[token, "a", "b"]], [["D", "N", "V"]])
