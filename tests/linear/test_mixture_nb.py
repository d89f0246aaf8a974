"""Mixture naive Bayes: EM monotonicity, the one-component case, the gain over plain NB."""
import numpy as np
import pytest
import scipy.sparse as sp

from linclass.linear.mixture_nb import MixtureNB
from linclass.linear.naive_bayes import BernoulliNB, MultinomialNB


def two_topic_classes(seed=0, n=400, d=60, length=15):
    """Class 0 writes about topic A or topic B; class 1 about the blend (A+B)/2.
    One multinomial per class gives class 0 the blend too, so plain naive Bayes
    cannot separate the classes; two components per class can."""
    rng = np.random.default_rng(seed)
    A, B = rng.dirichlet(np.full(d, 0.2), size=2)
    blend = (A + B) / 2
    X, y = [], []
    for i in range(n):
        c = i % 2
        topic = (A if rng.random() < 0.5 else B) if c == 0 else blend
        X.append(rng.multinomial(length, topic))
        y.append(c)
    return np.array(X, dtype=float), np.array(y)


@pytest.mark.parametrize("event_model", ["multinomial", "bernoulli"])
def test_objective_never_decreases(event_model):
    X, y = two_topic_classes(1)
    m = MixtureNB(n_components=3, event_model=event_model, n_init=2, max_iter=50,
                  tol=0.0, random_state=0).fit(X, y)
    for per_class in m.history_:
        for history in per_class:
            assert np.all(np.diff(history) >= -1e-8 * np.abs(history[1:]))


def test_one_component_equals_plain_naive_bayes():
    X, y = two_topic_classes(2)
    for event_model, plain in (("multinomial", MultinomialNB(alpha=0.5)),
                               ("bernoulli", BernoulliNB(alpha=0.5))):
        mix = MixtureNB(n_components=1, event_model=event_model, alpha=0.5,
                        random_state=0).fit(X, y)
        plain.fit(X, y)
        np.testing.assert_allclose(mix.predict_log_proba(X), plain.predict_log_proba(X),
                                   atol=1e-8)


def test_mixture_beats_single_distribution_and_sparse_equals_dense():
    X, y = two_topic_classes(3, n=600)
    Xtr, ytr, Xte, yte = X[:400], y[:400], X[400:], y[400:]
    plain = MultinomialNB().fit(Xtr, ytr).score(Xte, yte)
    mix = MixtureNB(n_components=2, n_init=5, random_state=0).fit(Xtr, ytr)
    assert mix.score(Xte, yte) > plain + 0.1
    mix_sparse = MixtureNB(n_components=2, n_init=5, random_state=0).fit(sp.csr_matrix(Xtr), ytr)
    np.testing.assert_allclose(mix_sparse.predict_proba(Xte), mix.predict_proba(Xte), atol=1e-8)
    np.testing.assert_allclose(mix.predict_proba(Xte).sum(axis=1), 1.0)


def test_seeded_and_save_load(tmp_path):
    from linclass import load
    X, y = two_topic_classes(4)
    a = MixtureNB(random_state=5).fit(X, y)
    b = MixtureNB(random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.feature_log_prob_, b.feature_log_prob_)
    a.save(tmp_path / "m.npz")
    np.testing.assert_allclose(load(tmp_path / "m.npz").predict_proba(X), a.predict_proba(X))


@pytest.mark.parametrize("params,match", [
    ({"n_components": 0}, "n_components"), ({"event_model": "gauss"}, "event_model"),
    ({"alpha": 0.0}, "alpha"), ({"n_init": 0}, "n_init"), ({"max_iter": -1}, "max_iter"),
])
def test_bad_parameters(params, match):
    X, y = two_topic_classes(5, n=20)
    with pytest.raises(ValueError, match=match):
        MixtureNB(**params).fit(X, y)


def test_bad_data():
    X, y = two_topic_classes(6, n=20)
    with pytest.raises(ValueError, match="Negative values"):
        MixtureNB().fit(-X, y)
    with pytest.raises(ValueError, match="NaN"):
        MixtureNB().fit(np.where(X > 3, np.nan, X), y)
    with pytest.raises(ValueError, match="one class"):
        MixtureNB().fit(X, np.zeros(len(y)))
    m = MixtureNB().fit(X, y)
    with pytest.raises(ValueError, match="expecting"):
        m.predict(X[:, :5])


def test_sklearn_checks():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator
    from linclass.utils import expected_failed_checks
    model = MixtureNB(n_init=1, random_state=0)
    check_estimator(model, expected_failed_checks=expected_failed_checks(model))
