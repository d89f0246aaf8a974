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


def test_n_jobs_training_is_a_close_model(ud):
    (Xtr, Ytr), (Xte, Yte) = ud
    a = SequenceTagger(features="pos", max_iter=3, random_state=0).fit(Xtr, Ytr)
    b = SequenceTagger(features="pos", max_iter=3, random_state=0, n_jobs=2).fit(Xtr, Ytr)
    assert not np.array_equal(a.emission_, b.emission_)     # parameter mixing: another model
    assert abs(a.score(Xte, Yte) - b.score(Xte, Yte)) < 0.03


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


# -- one sentence, predict_single ---------------------------------------------------
def test_one_sentence_to_predict_is_refused_clearly():
    X, Y = toy_corpus()
    tagger = SequenceTagger(features="w[0]", max_iter=3, random_state=0).fit(X, Y)
    words = ["the", "dog", "runs"]
    with pytest.raises(ValueError, match="looks like one sentence.*predict_single"):
        tagger.predict(words)                       # plain-string tokens
    assert tagger.predict_single(words) == tagger.predict([words])[0] == ["DET", "NOUN", "VERB"]
    pairs = [[(w, "x") for w in s] for s in ([t[0] for t in x] for x in X)]
    two = SequenceTagger(features="w[0] pos[0]", max_iter=3, random_state=0).fit(pairs, Y)
    with pytest.raises(ValueError, match="looks like one sentence"):
        two.predict([("the", "x"), ("dog", "x")])   # tuple tokens
    assert two.predict_single([("the", "x"), ("dog", "x")]) == ["DET", "NOUN"]
    with pytest.raises(ValueError, match="one sentence"):
        two.predict_single("the dog")
    dicts = SequenceTagger(features=None, max_iter=2).fit([[{"w": "a"}, {"w": "b"}]], [["X", "Y"]])
    with pytest.raises(ValueError, match="looks like one sentence"):
        dicts.predict([{"w": "a"}, {"w": "b"}])


# -- partial_fit grows the vocabulary --------------------------------------------------
def test_partial_fit_grows_the_vocabulary():
    X, Y = toy_corpus()
    tagger = SequenceTagger(features="w[0]", max_iter=5, random_state=0,
                            average=False).fit(X[:30], Y[:30])
    new = [[("the",), ("emu",), ("runs",)]] * 5
    assert tagger.predict(new)[0][1] != "NOUN" or "w[0]=emu" not in \
        tagger.features_.get_feature_names_out()
    n_before = tagger.n_features_
    tagger.partial_fit(new, [["DET", "NOUN", "VERB"]] * 5, max_iter=5)
    names = list(tagger.features_.get_feature_names_out())
    assert tagger.n_features_ == n_before + 1 == len(names) and names[-1] == "w[0]=emu"
    assert tagger.emission_.shape == (n_before + 1, len(tagger.classes_))
    assert tagger.predict([[("a",), ("emu",)]]) == [["DET", "NOUN"]]


def test_partial_fit_epochs_equal_one_fit(ud):
    (X, Y), _ = ud
    X, Y = X[:200], Y[:200]
    full = SequenceTagger(features="w[0] w[-1]", max_iter=4,
                          random_state=np.random.default_rng(7)).fit(X, Y)
    part = SequenceTagger(features="w[0] w[-1]", max_iter=1,
                          random_state=np.random.default_rng(7)).fit(X, Y)
    for _ in range(3):
        part.partial_fit(X, Y, max_iter=1)
    assert full.n_iter_ == 4 and all(h["sentence_errors"] for h in full.history_)
    for a, b in zip((full.emission_, full.transitions_, full.start_, full.stop_),
                    (part.emission_, part.transitions_, part.start_, part.stop_)):
        np.testing.assert_array_equal(a, b)


# -- threads: training by parameter mixing, decoding -------------------------------------
def _kernel_reference(tagger, X, Y, n_shards, epochs, seed, start=None, state=None):
    """The perceptron by hand on the kernel: sequential (1 shard) or dense parameter
    mixing (each shard on private dense copies of the mixed weights and its own dense
    sums, zero at the start of the fit and kept over its epochs, scaled by
    1/n_shards; after each epoch the weights become their float64 mean; at the end
    of the fit the shards' sums are added to the model's, in shard order).
    ``start``: the initial weights (default: zeros); ``state``: a training state to
    continue (weights, sums, counter and visit order, as partial_fit does)."""
    from linclass._core import _sequence
    from linclass.sequence.tagger import _encode_label_sequences
    ref = SequenceTagger(features=tagger.features, max_iter=1)
    ref.classes_, gold = _encode_label_sequences(Y, X)
    ref.features_ = ref._make_featurizer(X)
    Xf, offsets = ref._featurize(X, fit=True)
    K = len(ref.classes_)
    W = [np.zeros((Xf.shape[1], K), np.float32), np.zeros((K, K), np.float32),
         np.zeros(0, np.float32), np.zeros(K, np.float32), np.zeros(K, np.float32)]
    if start is not None:
        W = [np.array(w, np.float32) for w in start]
    U = [np.zeros(w.shape) for w in W]
    rng, order, counter = np.random.default_rng(seed), np.arange(len(X), dtype=np.int32), 1.0
    if state is not None:
        W, U = [w.copy() for w in state["weights"]], [u.copy() for u in state["sums"]]
        order, counter = state["order"].copy(), state["counter"]
    shard_sums = [[np.zeros(w.shape) for w in W] for _ in range(n_shards)]
    for _ in range(epochs):
        rng.shuffle(order)
        bounds = np.linspace(0, len(order), n_shards + 1).astype(int)
        if n_shards == 1:
            shards = [(W, U)]
        else:
            shards = [([w.copy() for w in W], shard_sums[j]) for j in range(n_shards)]
        counters = []
        for j, (w, u) in enumerate(shards):
            counters.append(_sequence.perceptron_epoch(
                w[0], u[0], w[1], u[1], w[2], u[2], w[3], u[3], w[4], u[4],
                Xf.indices, Xf.data, Xf.indptr, offsets, gold,
                np.ascontiguousarray(order[bounds[j]:bounds[j + 1]]), counter=counter,
                sum_scale=1.0 / n_shards)[0])
        if n_shards > 1:
            for a in range(5):
                mean = np.zeros(W[a].shape)
                for w, _ in shards:
                    mean += w[a]
                W[a][...] = (mean / n_shards).astype(np.float32)
        counter = max(counters)
    if n_shards > 1:
        for a in range(5):
            for u in shard_sums:
                U[a] += u[a]
    avg = np.empty_like(W[0])
    _sequence.averaged_weights(W[0].reshape(-1), U[0].reshape(-1), counter, avg.reshape(-1))
    return avg


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_threaded_training_matches_the_kernel_by_hand(ud, n_jobs):
    (Xtr, Ytr), _ = ud
    X, Y = Xtr[:300], Ytr[:300]
    tagger = SequenceTagger(features="w[0] suffix2(w[0]) w[-1]", max_iter=3, random_state=5,
                            n_jobs=n_jobs).fit(X, Y)
    # n_jobs=1: bit for bit the sequential epoch; n_jobs>1: bit for bit the dense mixing
    reference = _kernel_reference(tagger, X, Y, n_jobs, 3, 5)
    np.testing.assert_array_equal(tagger.emission_, reference)
    again = SequenceTagger(features="w[0] suffix2(w[0]) w[-1]", max_iter=3, random_state=5,
                           n_jobs=n_jobs).fit(X, Y)
    np.testing.assert_array_equal(tagger.emission_, again.emission_)     # deterministic


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_partial_fit_of_a_loaded_model_mixes_from_its_weights(ud, n_jobs):
    # a loaded model has no training state: partial_fit restarts the averaging from the
    # stored (averaged) weights at counter 1; with n_jobs > 1 every shard must start
    # from those weights too (not from zeros)
    import pickle
    (Xtr, Ytr), _ = ud
    X, Y = Xtr[:300], Ytr[:300]
    fitted = SequenceTagger(features="w[0] suffix2(w[0]) w[-1]", max_iter=2, random_state=5,
                            n_jobs=n_jobs).fit(X, Y)
    loaded = pickle.loads(pickle.dumps(fitted))
    start = [w.copy() for w in (loaded.emission_, loaded.transitions_, loaded.transitions2_,
                                loaded.start_, loaded.stop_)]
    loaded.partial_fit(X, Y, max_iter=2)
    reference = _kernel_reference(loaded, X, Y, n_jobs, 2, 5, start=start)
    np.testing.assert_array_equal(loaded.emission_, reference)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_partial_fit_continues_the_mixing_from_the_training_state(ud, n_jobs):
    # partial_fit of an in-memory model: every shard starts from the current weights
    # (the private copies are made before shard 0 starts updating the model's)
    (Xtr, Ytr), _ = ud
    X, Y = Xtr[:300], Ytr[:300]
    tagger = SequenceTagger(features="w[0] suffix2(w[0]) w[-1]", max_iter=2, random_state=5,
                            n_jobs=n_jobs).fit(X, Y)
    tagger._settle_sums()           # the overlays a mixing fit leaves, in the sums
    state = {k: (v.copy() if isinstance(v, np.ndarray) else
                 [a.copy() for a in v] if isinstance(v, list) else v)
             for k, v in tagger._train_state.items()}
    tagger.partial_fit(X, Y, max_iter=2)
    reference = _kernel_reference(tagger, X, Y, n_jobs, 2, 5, state=state)
    np.testing.assert_array_equal(tagger.emission_, reference)


@pytest.mark.parametrize("average", [True, False])
def test_mixing_fit_publishes_into_a_shard_buffer_it_owns(ud, average):
    # n_jobs > 1 writes the published emission matrix into the last shard's private
    # weights: it must own them (no memory shared with the training state), a later
    # partial_fit must not write into the matrix published before, and without
    # averaging the published matrix is the model's (mixed) weights
    (Xtr, Ytr), _ = ud
    X, Y = Xtr[:300], Ytr[:300]
    tagger = SequenceTagger(features="w[0] suffix2(w[0]) w[-1]", max_iter=2, random_state=5,
                            n_jobs=2, average=average).fit(X, Y)
    first = tagger.emission_
    kept = first.copy()
    W = tagger._train_state["weights"][0]
    assert first.flags.owndata and first.flags.c_contiguous and first.dtype == np.float32
    assert not np.shares_memory(first, W)
    if not average:
        np.testing.assert_array_equal(first, W)
    tagger.partial_fit(X, Y, max_iter=2)
    np.testing.assert_array_equal(first, kept)                 # untouched by the next fit
    assert tagger.emission_ is not first
    assert not np.shares_memory(tagger.emission_, tagger._train_state["weights"][0])
    serial = SequenceTagger(features="w[0] suffix2(w[0]) w[-1]", max_iter=4, random_state=5,
                            n_jobs=1, average=average).fit(X, Y)
    assert tagger.emission_.shape == serial.emission_.shape


def test_decoding_identical_across_n_jobs(ud):
    (Xtr, Ytr), (Xte, _) = ud
    tagger = SequenceTagger(features="pos", max_iter=2, random_state=0).fit(Xtr, Ytr)
    big = Xte * 3                                  # 600 sentences: threads are used
    one = tagger.predict(big)
    scores = tagger.decision_function(big)
    for n_jobs in (2, 3):
        tagger.set_params(n_jobs=n_jobs)
        assert tagger.predict(big) == one
        np.testing.assert_array_equal(tagger.decision_function(big), scores)


def test_ner_template_words_alone_and_with_pos():
    X, Y = toy_corpus()
    words = SequenceTagger(features="ner", max_iter=3, random_state=0).fit(X, Y)
    assert "pos[0]" not in words.features_.template
    pairs = [[(t[0], "P") for t in s] for s in X]
    both = SequenceTagger(features="ner", max_iter=3, random_state=0).fit(pairs, Y)
    assert "pos[0]" in both.features_.template
    assert words.score(X, Y) > 0.95 and both.score(pairs, Y) > 0.95


def test_two_thread_fit_starts_the_labels_after_the_column_pass():
    """n_jobs > 1 encodes the labels in a thread released when the template pass
    reaches its nogil part: classes and features are those of n_jobs=1, in
    template, hashing and attribute (dict) mode, the signal is not left on the
    fitted featurizer, and errors (labels' first) still propagate; labels
    encoded in token blocks (partial_fit) have the codes of one block."""
    rng = np.random.default_rng(3)
    words = ["w%d" % i for i in range(300)]
    X = [[(words[i], "P%d" % (i % 7)) for i in rng.integers(0, 300, rng.integers(1, 12))]
         for _ in range(900)]
    Y = [["B" if w[1] in ("P0", "P3") else "I" if int(w[0][1:]) % 2 else "O" for w in s]
         for s in X]
    for kwargs in ({"features": "chunking"}, {"features": "chunking", "n_hash": 4099}):
        one = SequenceTagger(max_iter=2, random_state=0, **kwargs).fit(X, Y)
        two = SequenceTagger(max_iter=2, random_state=0, n_jobs=2, **kwargs).fit(X, Y)
        assert list(one.classes_) == list(two.classes_) == ["B", "I", "O"]
        assert one.n_features_ == two.n_features_
        if "n_hash" not in kwargs:
            np.testing.assert_array_equal(one.features_.feature_keys_,
                                          two.features_.feature_keys_)
        assert "_before_extract" not in two.features_.__dict__
    Xd = [[{"w": t[0], "p": t[1]} for t in s] for s in X]
    one = SequenceTagger(features=None, max_iter=2, random_state=0).fit(Xd, Y)
    two = SequenceTagger(features=None, max_iter=2, random_state=0, n_jobs=2).fit(Xd, Y)
    assert list(one.classes_) == list(two.classes_) and one.n_features_ == two.n_features_
    with pytest.raises(ValueError, match="labels"):
        SequenceTagger(features="chunking", n_jobs=2).fit(X, Y[:-1] + [[1] * len(X[-1])])
    with pytest.raises(ValueError, match="sentence 2 has"):
        SequenceTagger(features="chunking", n_jobs=2).fit(X, Y[:2] + [Y[2] + ["O"]] + Y[3:])
    bad = X[:5] + [[("a", "b", "c")]] + X[6:]
    # labels in token blocks (more than 4096 tokens a thread): the codes of one thread
    from linclass.sequence.tagger import _encode_label_sequences
    big_X, big_Y = X * 4, Y * 4
    assert sum(map(len, big_Y)) > 3 * 4096
    ref = _encode_label_sequences(big_Y, big_X)
    for n_jobs in (2, 3):
        got = _encode_label_sequences(big_Y, big_X, n_jobs=n_jobs)
        assert list(got[0]) == list(ref[0]) and got[1].dtype == np.int32
        np.testing.assert_array_equal(got[1], ref[1])
        late = big_Y[:-1] + [big_Y[-1][:-1] + [3]]
        with pytest.raises(ValueError, match="labels must be strings, found 3"):
            _encode_label_sequences(late, big_X, n_jobs=n_jobs)
    with pytest.raises(ValueError, match="columns"):
        SequenceTagger(features="chunking", n_jobs=2).fit(bad, Y[:5] + [["O"]] + Y[6:])


def test_featurize_checks_matrices_not_made_by_the_template_pass():
    """Only FeatureTemplate's own template matrices skip check_array: a subclass
    returning a malformed matrix is refused with a clear error."""
    import scipy.sparse as sp
    from linclass.features import FeatureTemplate

    class Bad(FeatureTemplate):
        def fit_transform(self, sentences, y=None):
            X, lengths = super().fit_transform(sentences)
            X = sp.csr_matrix((X.data, X.indices.copy(), X.indptr), shape=X.shape)
            X.indices[0] = X.shape[1] + 5          # out of range
            return X, lengths
    X = [[("a", "DT"), ("cat", "NN")], [("the", "DT"), ("dog", "NN")]] * 3
    Y = [["B", "I"], ["B", "I"]] * 3
    with pytest.raises(ValueError, match="token features"):
        SequenceTagger(features=Bad("w[0] pos[0]", ("w", "pos")), max_iter=1).fit(X, Y)
    ok = SequenceTagger(features=FeatureTemplate("w[0] pos[0]", ("w", "pos")),
                        max_iter=3, random_state=0).fit(X, Y)
    assert ok.predict(X) == Y
