"""scikit-learn conventions of every flat estimator (linclass.base): unseen labels
in ``score``, ``feature_names_in_`` from data frames, plain-string ``classes_``,
``get_feature_names_out`` on transformers."""
import warnings

import numpy as np
import pytest

import linclass
from linclass.base import check_feature_names

LR = linclass.LogisticRegression


def _classifiers():
    return [
        linclass.Perceptron(max_iter=20, random_state=0), linclass.LinearSVC(random_state=0),
        linclass.CrammerSingerSVC(random_state=0), linclass.WestonWatkinsSVC(random_state=0),
        linclass.OneVsRestClassifier(linclass.LinearSVC(random_state=0)),
        linclass.OneVsOneClassifier(linclass.LinearSVC(random_state=0)),
        linclass.LeastSquaresClassifier(), linclass.RidgeClassifier(),
        linclass.LassoClassifier(alpha=0.001), linclass.SVC(),
        linclass.KernelPerceptron(random_state=0), linclass.SGDClassifier(random_state=0),
        linclass.MixtureNB(random_state=0), linclass.MultinomialNB(), linclass.BernoulliNB(),
        LR(), linclass.MaxEnt(), linclass.GaussianNB(), linclass.KernelRidgeClassifier(),
        linclass.KernelLogisticRegression(), linclass.MultiClassSVM(),
        linclass.CostSensitiveClassifier(LR()), linclass.RejectOption(LR()),
        linclass.PriorShiftClassifier(LR()), linclass.CalibratedClassifier(LR()),
        linclass.PosteriorCombiner([LR(), linclass.GaussianNB()]),
    ]


CLASSIFIERS = _classifiers()


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, 4)))
    y = np.array(["a", "b", "c"])[(X[:, 0] > X[:, 1]).astype(int) + (X[:, 2] > 1)]
    return X, y


def _name(est):
    return type(est).__name__


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_name)
def test_unseen_label_in_score_counts_as_error(est):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    pred = est.predict(X)
    y_test = y.copy().astype(object)
    y_test[:7] = "never-seen"                  # 7 certain errors
    expected = float(np.mean(pred == y_test))
    assert expected <= 53 / 60
    assert est.score(X, y_test) == pytest.approx(expected)
    assert est.score(X, y) == pytest.approx(float(np.mean(pred == y)))


def test_cross_val_score_fold_with_a_class_missing_from_training():
    sklearn = pytest.importorskip("sklearn.model_selection")
    from sklearn.linear_model import LogisticRegression as SkLR
    X, y = _data(90, seed=3)
    y = y.astype(object)
    y[80:] = "rare"                            # only in the last fold
    cv = sklearn.KFold(3)
    ours = sklearn.cross_val_score(LR(), X, y, cv=cv)
    theirs = sklearn.cross_val_score(SkLR(), X, y, cv=cv)
    assert np.isfinite(ours).all()
    # the rare class can never be predicted in the last fold: both libraries
    # count it wrong, so the last fold's score is at most 20/30
    assert ours[2] <= 20 / 30 and theirs[2] <= 20 / 30
    np.testing.assert_allclose(ours, theirs, atol=0.1)


# ---------------------------------------------------------- feature names ---

class _Frame:
    """A minimal data frame (no pandas): ``.columns`` and ``__array__``."""

    def __init__(self, values, columns):
        self.values = np.asarray(values, dtype=float)
        self.columns = list(columns)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    @property
    def shape(self):
        return self.values.shape

    def __len__(self):
        return len(self.values)


def test_feature_names_by_duck_typing_without_pandas(tmp_path):
    X, y = _data()
    cols = ["w", "x", "y", "z"]
    model = LR().fit(_Frame(X, cols), y)
    assert model.feature_names_in_.dtype == object
    assert model.feature_names_in_.tolist() == cols
    np.testing.assert_array_equal(model.predict(_Frame(X, cols)), model.predict(X))
    with pytest.raises(ValueError, match="must be in the same order"):
        model.predict(_Frame(X[:, ::-1], cols[::-1]))
    with pytest.raises(ValueError, match="unseen at fit time:\n- v\n"):
        model.predict_proba(_Frame(X, ["v", "x", "y", "z"]))
    with pytest.raises(ValueError, match="yet now missing:\n- z\n"):
        model.score(_Frame(X[:, :3], cols[:3]), y)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(X)
    path = tmp_path / "m.npz"
    model.save(path)
    loaded = linclass.load(path)
    assert loaded.feature_names_in_.tolist() == cols
    with pytest.raises(ValueError, match="same order"):
        loaded.decision_function(_Frame(X[:, [1, 0, 2, 3]], ["x", "w", "y", "z"]))
    # refitting on a plain array forgets the names
    assert not hasattr(model.fit(X, y), "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        model.predict(_Frame(X, cols))
    # mixed string / non-string names: scikit-learn's TypeError
    with pytest.raises(TypeError, match="only supported if all input features have string"):
        LR().fit(_Frame(X, ["a", 1, "c", "d"]), y)
    # non-string names only: no names kept, no error
    assert not hasattr(LR().fit(_Frame(X, [0, 1, 2, 3]), y), "feature_names_in_")


def test_check_feature_names_is_quiet_without_frames():
    X, y = _data()
    model = LR().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_feature_names(model, X)
        model.predict(X)


def test_load_refuses_feature_names_of_the_wrong_length(tmp_path):
    X, y = _data()
    model = LR().fit(_Frame(X, list("abcd")), y)
    model.feature_names_in_ = model.feature_names_in_[:3]
    with pytest.raises(ValueError, match="feature_names_in_"):
        model._check_state()


@pytest.mark.parametrize("est", _classifiers() + [linclass.MercerMap(n_landmarks=5),
                                                   linclass.Ridge(), linclass.Lasso(),
                                                   linclass.LinearRegression(),
                                                   linclass.KernelRidge(),
                                                   linclass.RankSVM()], ids=_name)
def test_scikit_learn_dataframe_column_checks(est):
    """scikit-learn's own check: names recorded, reordered / unseen / missing
    columns raise its exact message in every method taking X."""
    pytest.importorskip("pandas")
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=linclass.ConvergenceWarning)
        check_dataframe_column_names_consistency(_name(est), est)


def test_pandas_reordered_columns_raise():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["age", "height", "weight", "income"])
    model = linclass.LinearSVC(random_state=0).fit(frame, pd.Series(y))
    assert list(model.feature_names_in_) == ["age", "height", "weight", "income"]
    with pytest.raises(ValueError, match="must be in the same order"):
        model.predict(frame[["height", "age", "weight", "income"]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(model.predict(frame), model.predict(X))


# ------------------------------------------------------- transformers' names ---

def test_mercer_map_feature_names_out_scikit_learn_checks():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import (check_transformer_get_feature_names_out,
                                                check_transformer_get_feature_names_out_pandas)
    check_transformer_get_feature_names_out("MercerMap", linclass.MercerMap(n_landmarks=5))
    check_transformer_get_feature_names_out_pandas("MercerMap",
                                                   linclass.MercerMap(n_landmarks=5))
    X, _ = _data()
    mapped = linclass.MercerMap(n_landmarks=6, random_state=0).fit(X)
    names = mapped.get_feature_names_out()
    assert names.tolist() == ["mercermap%d" % i for i in range(mapped.transform(X).shape[1])]
    with pytest.raises(ValueError, match="length"):
        mapped.get_feature_names_out(["a", "b"])


def test_featureset_encoder_names_match_dict_vectorizer():
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction import DictVectorizer
    from linclass.interop.nltk import FeaturesetEncoder
    featuresets = [{"last": "a", "first": "J"}, {"last": "e", "len": "4"},
                   {"first": "M", "last": "a"}]
    encoder = FeaturesetEncoder().fit(featuresets)
    names = encoder.get_feature_names_out()
    dense = encoder.transform(featuresets).toarray()
    reference = DictVectorizer(sparse=False).fit(featuresets)
    ref_names = list(reference.get_feature_names_out())
    ref_dense = reference.transform(featuresets)
    assert sorted(names) == sorted(ref_names)
    order = [ref_names.index(n) for n in names]
    np.testing.assert_array_equal(dense, ref_dense[:, order])


# --------------------------------------------------------------- classes_ ---

@pytest.mark.parametrize("est", [linclass.LinearSVC(random_state=0), LR(),
                                 linclass.MultinomialNB(), linclass.Perceptron(random_state=0),
                                 linclass.SVC()], ids=_name)
def test_string_classes_are_plain_python_strings(est, tmp_path):
    X, y = _data()
    est.fit(X, list(y))
    assert repr(list(est.classes_)) == "['a', 'b', 'c']"
    pred = est.predict(X[:3])
    assert all(type(p) is str for p in pred)
    assert "np.str_" not in repr(pred.tolist()) + repr(list(pred))
    est.save(tmp_path / "m.npz")
    loaded = linclass.load(tmp_path / "m.npz")
    assert repr(list(loaded.classes_)) == "['a', 'b', 'c']"
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    # numeric labels stay numeric
    est.fit(X, (y == "a").astype(int))
    assert est.classes_.dtype.kind == "i"
