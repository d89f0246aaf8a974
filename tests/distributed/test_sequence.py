"""The sequence tagger on dask bags (iterative parameter mixing), in process.

References: the in-memory SequenceTagger on the same sentences -- the same
feature vocabulary (ids included), the same weights with one partition and no
shuffling, accuracy close to it with several partitions.
"""
import numpy as np
import pytest

dask = pytest.importorskip("dask")
db = pytest.importorskip("dask.bag")

import linclass  # noqa: E402
import linclass.distributed as ld  # noqa: E402
from linclass.datasets import load_bundled_ud_english, write_conll  # noqa: E402
from linclass.sequence import SequenceTagger  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def ud():
    def split(sentences):
        return ([list(s.column("form")) for s in sentences], [list(s.column("upos"))
                                                              for s in sentences])
    return split(load_bundled_ud_english("train")[:900]), \
        split(load_bundled_ud_english("test")[:300])


def bags(X, Y, n):
    return db.from_sequence(X, npartitions=n), db.from_sequence(Y, npartitions=n)


def test_vocabulary_is_the_in_memory_one(ud):
    (X, Y), _ = ud
    memory = SequenceTagger(min_count=2, max_iter=1).fit(X, Y)
    dist = ld.fit(SequenceTagger(min_count=2, max_iter=1), *bags(X, Y, 3))
    assert np.array_equal(dist.classes_, memory.classes_)
    assert dist.n_features_ == memory.n_features_
    assert np.array_equal(dist.features_.get_feature_names_out(),
                          memory.features_.get_feature_names_out())
    A, _ = memory.features_.transform(X[:50])
    B, _ = dist.features_.transform(X[:50])
    assert (A != B).nnz == 0


@pytest.mark.parametrize("order", [1, 2])
def test_one_partition_without_shuffling_is_the_in_memory_perceptron(ud, order):
    (X, Y), (Xt, _) = ud
    params = dict(features="w[0] w[-1] w[1] suffix3(w[0])", max_iter=3, shuffle=False,
                  order=order)
    memory = SequenceTagger(**params).fit(X[:300], Y[:300])
    dist = ld.fit(SequenceTagger(**params), *bags(X[:300], Y[:300], 1))
    np.testing.assert_allclose(dist.emission_, memory.emission_, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dist.transitions_, memory.transitions_, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dist.transitions2_, memory.transitions2_, rtol=1e-5, atol=1e-5)
    assert dist.predict(Xt) == memory.predict(Xt)
    assert [h["token_errors"] for h in dist.history_] == \
        [h["token_errors"] for h in memory.history_]


def test_parameter_mixing_accuracy_is_close_to_the_in_memory_fit(ud):
    (X, Y), (Xt, Yt) = ud
    memory = SequenceTagger(random_state=0).fit(X, Y).score(Xt, Yt)
    for n in (2, 4):
        info = {}
        model = ld.fit(SequenceTagger(random_state=0), *bags(X, Y, n), info=info)
        assert info["n_partitions"] == n and 1 <= info["rounds"] <= 10
        assert abs(model.score(Xt, Yt) - memory) < 0.015
        # deterministic for a fixed partitioning and seed
        again = ld.fit(SequenceTagger(random_state=0), *bags(X, Y, n))
        assert np.array_equal(again.emission_, model.emission_)


def test_conll_shards_hashing_and_an_ordinary_model(ud, tmp_path):
    (X, Y), (Xt, Yt) = ud
    paths = []
    for k in range(3):
        path = tmp_path / ("shard%d.conll" % k)
        part = slice(k * 300, (k + 1) * 300)
        write_conll([list(zip(x, y)) for x, y in zip(X[part], Y[part])], path)
        paths.append(path)
    Xb, Yb = ld.conll_bags(paths, token_columns=(0,), label_column=1)
    assert Xb.npartitions == 3
    model = ld.fit(SequenceTagger(n_hash=2 ** 16, random_state=1), Xb, Yb)
    assert model.n_features_ == 2 ** 16
    assert model.score(Xt, Yt) > 0.8
    path = tmp_path / "tagger.npz"
    model.save(path)
    loaded = linclass.load(path)
    assert loaded.predict(Xt[:20]) == model.predict(Xt[:20])
    assert not any("dask" in type(v).__module__ for v in vars(model).values())


def test_bad_input_is_refused_with_a_clear_error(ud):
    (X, Y), _ = ud
    with pytest.raises(TypeError, match="dask bags"):
        ld.fit(SequenceTagger(), X, Y)
    with pytest.raises(ValueError, match="partitions"):
        ld.fit(SequenceTagger(), db.from_sequence(X, npartitions=2),
               db.from_sequence(Y, npartitions=3))
    with pytest.raises(ValueError, match="trainer='ssvm' is not distributed"):
        ld.fit(SequenceTagger(trainer="ssvm"), *bags(X, Y, 2))
    with pytest.raises(ValueError, match="partitioned alike|tokens but"):
        ld.fit(SequenceTagger(), *bags(X[:10], [y[:-1] for y in Y[:10]], 2))
    with pytest.raises(ValueError, match="labels must be strings"):
        ld.fit(SequenceTagger(), *bags(X[:10], [[1] * len(x) for x in X[:10]], 2))
    with pytest.raises(ValueError, match="not a sentence"):
        ld.fit(SequenceTagger(), *bags(["a b c"] * 4, [["X"] * 3] * 4, 2))
    with pytest.raises(ValueError, match="sample_weight"):
        ld.fit(SequenceTagger(), *bags(X, Y, 2), sample_weight=np.ones(len(X)))
