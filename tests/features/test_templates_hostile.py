"""Issue #35 for feature templates: a state whose width does not match its
vocabulary is refused by ``_check_state`` (which ``load`` always runs; the ids
would index past a model's weights), and numpy string arrays are sentences."""
import numpy as np
import pytest

import linclass
from linclass.exceptions import NotFittedError
from linclass.features import FeatureTemplate

SENTENCES = [[("the", "DT"), ("dog", "NN")], [("a", "DT"), ("cat", "NN"), ("runs", "VB")]]


def _template(**kw):
    return FeatureTemplate(template="w[0]\nw[-1]|pos[0]", columns=("w", "pos"), **kw)


@pytest.mark.parametrize("mutate", [
    lambda t: setattr(t, "n_features_", t.n_features_ - 1),
    lambda t: setattr(t, "n_features_", t.n_features_ + 3),
    lambda t: setattr(t, "feature_counts_", t.feature_counts_[:1]),
    lambda t: setattr(t, "n_features_", -1),
], ids=["narrower", "wider", "counts", "negative"])
def test_inconsistent_width_is_refused(mutate, tmp_path):
    template = _template().fit(SENTENCES)
    template._check_state()
    mutate(template)
    with pytest.raises(ValueError, match="n_features_|feature_counts_"):
        template._check_state()


def test_hashed_width_is_n_hash():
    template = _template(n_hash=64).fit(SENTENCES)
    template._check_state()
    template.n_features_ = 32
    with pytest.raises(ValueError, match="n_hash is 64"):
        template._check_state()


def test_numpy_string_sentences_work_like_lists(tmp_path):
    template = _template().fit(SENTENCES)
    X, lengths = template.transform(SENTENCES)
    as_numpy = [np.array(s) for s in SENTENCES]            # 2-D: a row of columns per token
    X2, lengths2 = template.transform(as_numpy)
    assert (X != X2).nnz == 0 and list(lengths) == list(lengths2)
    path = tmp_path / "template.npz"
    template.save(path)
    X3, _ = linclass.load(path).transform(as_numpy)
    assert (X != X3).nnz == 0
    with pytest.raises(NotFittedError):
        _template().transform(SENTENCES)


@pytest.mark.parametrize("bad", [None, float("nan")])
def test_ambiguity_classes_refuse_a_missing_tag(bad):
    from linclass.features import AmbiguityClasses
    X = [["the", "dog"], ["a", "cat"]]
    with pytest.raises(ValueError, match=r"y\[1\]\[1\]"):
        AmbiguityClasses(n_folds=2).fit(X, [["D", "N"], ["D", bad]])


def test_feature_template_offset_out_of_range_is_a_clear_error():
    from linclass.features import FeatureTemplate
    with pytest.raises(ValueError, match="out of range"):
        FeatureTemplate(template="w[999999999999]").fit([["a", "b"]])
