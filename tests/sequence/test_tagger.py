"""SequenceTagger end to end: learning, equivalences, persistence, bad input."""
import pickle

import numpy as np
import pytest

from linclass import ModelFormatError, NotFittedError, load
from linclass.sequence import SequenceTagger


def toy_corpus(n_sent=60, seed=0):
    """A deterministic toy tagging problem: tag = f(word, previous tag)."""
    rng = np.random.default_rng(seed)
    words = ["the", "a", "dog", "cat", "runs", "sees", "quickly", "."]
    tag_of = {"the": "DET", "a": "DET", "dog": "NOUN", "cat": "NOUN", "runs": "VERB",
              "sees": "VERB", "quickly": "ADV", ".": "PUNCT"}
    X, Y = [], []
    for _ in range(n_sent):
        n = int(rng.integers(1, 9))
        sent = [words[i] for i in rng.integers(0, len(words), n)]
        X.append([(w,) for w in sent])
        Y.append([tag_of[w] for w in sent])
    return X, Y


@pytest.fixture(scope="module")
def ud():
    from linclass.datasets import load_bundled_ud_english
    train = load_bundled_ud_english("train")[:800]
    test = load_bundled_ud_english("test")[:200]

    def split(sents):
        return [[(w,) for w in s.column("form")] for s in sents], [s.column("upos") for s in sents]
    return split(train), split(test)


def test_learns_toy_problem_exactly():
    X, Y = toy_corpus()
    # the last weights separate the data; the averaged ones also carry the
    # first epoch's mistakes, so only the plain perceptron must be perfect
    tagger = SequenceTagger(features="w[0]", max_iter=20, random_state=0,
                            average=False).fit(X, Y)
    assert tagger.score(X, Y) == 1.0
    assert tagger.predict([[("cat",), ("runs",)]]) == [["NOUN", "VERB"]]
    assert tagger.history_[-1]["sentence_errors"] == 0      # stopped early: separable
    assert tagger.n_iter_ < 20
    averaged = SequenceTagger(features="w[0]", max_iter=20, random_state=0).fit(X, Y)
    assert averaged.n_iter_ == tagger.n_iter_
    assert averaged.score(X, Y) > 0.95


def test_plain_string_tokens_and_empty_sentences():
    X, Y = toy_corpus()
    Xs = [[t[0] for t in s] for s in X]
    tagger = SequenceTagger(features="w[0]", max_iter=5, random_state=0)
    tagger.fit(Xs + [[]], Y + [[]])
    pred = tagger.predict([[], ["dog"], []])
    assert pred == [[], ["NOUN"], []]


def test_pos_tagger_on_bundled_ud_beats_baseline(ud):
    (Xtr, Ytr), (Xte, Yte) = ud
    tagger = SequenceTagger(features="pos", max_iter=5, random_state=0).fit(Xtr, Ytr)
    acc = tagger.score(Xte, Yte)
    from linclass.demo.sequence import _most_frequent_tag_baseline
    base = _most_frequent_tag_baseline(Xtr, Ytr, Xte, Yte)
    assert acc > base + 0.03
    assert acc > 0.85


def test_n_jobs_gives_same_predictions(ud):
    (Xtr, Ytr), (Xte, _) = ud
    a = SequenceTagger(features="pos", max_iter=2, random_state=0).fit(Xtr, Ytr)
    b = SequenceTagger(features="pos", max_iter=2, random_state=0, n_jobs=2).fit(Xtr, Ytr)
    big = Xte * 3
    assert a.predict(big) == b.predict(big)


def test_fit_is_reproducible_and_shuffle_matters(ud):
    (Xtr, Ytr), _ = ud
    a = SequenceTagger(features="w[0] w[-1]", max_iter=2, random_state=3).fit(Xtr, Ytr)
    b = SequenceTagger(features="w[0] w[-1]", max_iter=2, random_state=3).fit(Xtr, Ytr)
    np.testing.assert_array_equal(a.emission_, b.emission_)
    c = SequenceTagger(features="w[0] w[-1]", max_iter=2, random_state=4).fit(Xtr, Ytr)
    assert not np.array_equal(a.emission_, c.emission_)


def test_second_order_learns(ud):
    (Xtr, Ytr), (Xte, Yte) = ud
    tagger = SequenceTagger(features="pos", order=2, max_iter=3, random_state=0).fit(Xtr, Ytr)
    assert tagger.transitions2_.shape == (len(tagger.classes_) ** 3,)
    assert np.abs(tagger.transitions2_).sum() > 0
    assert tagger.score(Xte, Yte) > 0.8


def test_partial_fit_continues(ud):
    (Xtr, Ytr), (Xte, Yte) = ud
    full = SequenceTagger(features="pos", max_iter=4, shuffle=False).fit(Xtr, Ytr)
    part = SequenceTagger(features="pos", max_iter=2, shuffle=False).fit(Xtr, Ytr)
    part.partial_fit(Xtr, Ytr, max_iter=2)
    # two epochs + two more epochs over the same data = four epochs
    np.testing.assert_allclose(part.emission_, full.emission_, atol=1e-4)
    with pytest.raises(ValueError, match="not seen in training"):
        part.partial_fit([[("x",)]], [["NEWTAG"]])


def test_save_load_and_pickle_round_trip(tmp_path, ud):
    (Xtr, Ytr), (Xte, _) = ud
    tagger = SequenceTagger(features="pos", max_iter=2, random_state=0).fit(Xtr, Ytr)
    path = tmp_path / "tagger.npz"
    tagger.save(path)
    again = load(path)
    assert again.predict(Xte) == tagger.predict(Xte)
    assert again.get_params() == tagger.get_params()
    again2 = pickle.loads(pickle.dumps(tagger))
    assert again2.predict(Xte[:20]) == tagger.predict(Xte[:20])
    again.partial_fit(Xtr[:50], Ytr[:50], max_iter=1)     # loaded models can go on training


def test_loading_tampered_or_newer_files_fails(tmp_path):
    import json
    import zipfile
    X, Y = toy_corpus()
    path = tmp_path / "m.npz"
    SequenceTagger(features="w[0]", max_iter=2).fit(X, Y).save(path)
    # flip bytes of one array
    with np.load(path) as z:
        contents = {k: z[k] for k in z.files}
    victim = next(k for k in contents if k.startswith("a") and contents[k].size > 2
                  and contents[k].dtype.kind == "f")
    tampered = dict(contents)
    tampered[victim] = contents[victim] + 1
    np.savez(tmp_path / "t.npz", **tampered)
    with pytest.raises(ModelFormatError, match="checksum"):
        load(tmp_path / "t.npz")
    # a newer format version (digest recomputed by an honest newer writer)
    from linclass import persistence
    meta = json.loads(contents["__linclass_meta__"].tobytes())
    meta["format_version"] = persistence.FORMAT_VERSION + 1
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    arrays = {k: v for k, v in contents.items() if not k.startswith("__")}
    digest = persistence._digest(meta_bytes, arrays)
    np.savez(tmp_path / "n.npz", __linclass_meta__=np.frombuffer(meta_bytes, np.uint8),
             __linclass_digest__=np.frombuffer(digest.encode(), np.uint8), **arrays)
    with pytest.raises(ModelFormatError, match="newer|upgrade"):
        load(tmp_path / "n.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelFormatError, match="not a linclass model"):
        load(tmp_path / "junk.npz")
    # a class outside linclass is refused even with a valid digest
    meta["format_version"] = persistence.FORMAT_VERSION
    meta["class"] = "os.system"
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    digest = persistence._digest(meta_bytes, arrays)
    np.savez(tmp_path / "c.npz", __linclass_meta__=np.frombuffer(meta_bytes, np.uint8),
             __linclass_digest__=np.frombuffer(digest.encode(), np.uint8), **arrays)
    with pytest.raises(ModelFormatError, match="not a linclass model"):
        load(tmp_path / "c.npz")
    assert zipfile.is_zipfile(path)


@pytest.mark.parametrize("X,Y,match", [
    ([[("a",)]], [["A", "B"]], "1 tokens but 2 labels"),
    ([[("a",)]], [["A"], ["B"]], "1 sentences but Y has 2"),
    ([[("a",)]], [[1]], "labels must be strings"),
    ("abc", [["A"]], "list of sentences"),
    ([[]], [[]], "no labels"),
])
def test_bad_training_input(X, Y, match):
    with pytest.raises(ValueError, match=match):
        SequenceTagger(features="w[0]").fit(X, Y)


@pytest.mark.parametrize("param,value,match", [
    ("trainer", "crf", "trainer must be"), ("order", 3, "order must be"),
    ("max_iter", 0, "max_iter"), ("C", -1.0, "C must be"),
])
def test_bad_parameters(param, value, match):
    X, Y = toy_corpus(5)
    with pytest.raises(ValueError, match=match):
        SequenceTagger(features="w[0]", **{param: value}).fit(X, Y)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        SequenceTagger().predict([[("a",)]])


def test_crfsuite_style_dict_input():
    X, Y = toy_corpus()
    Xd = [[{"w": t[0], "bias": 1.0} for t in s] for s in X]
    tagger = SequenceTagger(features=None, max_iter=20, random_state=0,
                            average=False).fit(Xd, Y)
    assert tagger.score(Xd, Y) == 1.0
