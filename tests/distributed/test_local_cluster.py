"""linclass.distributed.fit on a real LocalCluster: 2 worker processes, 1 thread each.

The workers import the linclass under test: the fixture puts its parent
directory first on the workers' PYTHONPATH (an editable install would do too).
References: the in-memory fits on the same rows.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402
import dask.array as da  # noqa: E402

import linclass  # noqa: E402
import linclass.distributed as ld  # noqa: E402
from linclass.linear import BernoulliNB, LinearSVC, LogisticRegression, MultinomialNB  # noqa: E402


@pytest.fixture(scope="module")
def client():
    source = str(pathlib.Path(linclass.__file__).resolve().parents[1])
    path = os.pathsep.join([source] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=50,
                                       env={"PYTHONPATH": path, "OMP_NUM_THREADS": "1",
                                            "OPENBLAS_NUM_THREADS": "1"},
                                       death_timeout=60)
    client = distributed.Client(cluster, timeout=60)
    try:
        client.wait_for_workers(2, timeout=120)
        yield client
    finally:
        client.close(timeout=30)
        cluster.close(timeout=30)


def _data(n=400, d=300, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.04, random_state=seed, format="csr")
    X.data = np.floor(X.data * 5) + 1.0
    scores = X @ rng.normal(size=(d, n_classes)) + rng.normal(size=(n, n_classes))
    return X, np.argmax(scores, axis=1)


def test_workers_run_this_linclass(client):
    files = client.run(lambda: __import__("linclass").__file__)
    assert len(files) == 2
    assert all(pathlib.Path(f).resolve() == pathlib.Path(linclass.__file__).resolve()
               for f in files.values())


def test_naive_bayes_and_logistic_regression_on_two_worker_processes(client):
    X, y = _data()
    Xd = da.from_array(X, chunks=((100, 0, 150, 150), (X.shape[1],)), asarray=False)
    for model in (MultinomialNB(), BernoulliNB()):
        ref = type(model)().fit(X, y)
        got = ld.fit(model, Xd, y, client=client)
        assert np.array_equal(got.feature_log_prob_, ref.feature_log_prob_)
        assert np.array_equal(got.class_log_prior_, ref.class_log_prior_)
    labels = (y > 0).astype(int)
    ref = LogisticRegression(C=0.1).fit(X, labels)
    info = {}
    got = ld.fit(LogisticRegression(C=0.1), Xd, labels, client=client, info=info)
    assert abs(got.objective_ - ref.objective_) <= 1e-6 * ref.objective_
    assert info["rounds"] >= 2


def test_cocoa_on_two_worker_processes_equals_the_in_process_run(client):
    X, y = _data(n_classes=2, seed=1)
    Xd = da.from_array(X, chunks=((200, 200), (X.shape[1],)), asarray=False)
    with pytest.warns(linclass.ConvergenceWarning):
        on_cluster = ld.fit(LinearSVC(random_state=0), Xd, y, client=client, max_rounds=6)
    with dask.config.set(scheduler="synchronous"), pytest.warns(linclass.ConvergenceWarning):
        in_process = ld.fit(LinearSVC(random_state=0), Xd, y, max_rounds=6)
    # same seeds per (partition, round), same reduction order: the same numbers
    assert np.array_equal(on_cluster.coef_, in_process.coef_)
    assert np.array_equal(on_cluster.dual_coef_, in_process.dual_coef_)


def test_a_worker_with_another_linclass_version_is_refused(client):
    X, y = _data(n=60)
    Xd = da.from_array(X, chunks=((30, 30), (X.shape[1],)), asarray=False)
    worker = sorted(client.scheduler_info()["workers"])[0]
    client.run(exec, "import linclass._version as v; v.__version__ = '0.0.1'", workers=[worker])
    try:
        with pytest.raises(ld.DistributedError, match="another linclass version.*0.0.1"):
            ld.fit(MultinomialNB(), Xd, y, client=client)
    finally:
        client.run(exec, "import linclass._version as v; v.__version__ = %r"
                   % linclass.__version__, workers=[worker])
    ld.fit(MultinomialNB(), Xd, y, client=client)        # the cluster is fine again


def test_a_closed_client_is_refused_and_the_estimator_left_unfitted(client):
    X, y = _data(n=60)
    Xd = da.from_array(X, chunks=((30, 30), (X.shape[1],)), asarray=False)
    other = distributed.Client(client.scheduler.address, timeout=30)
    other.close()
    model = LogisticRegression()
    with pytest.raises(ld.DistributedError, match="not running"):
        ld.fit(model, Xd, y, client=other)
    assert not hasattr(model, "coef_")


def test_sequence_tagger_on_two_worker_processes_equals_the_in_process_run(client, tmp_path):
    from linclass.datasets import load_bundled_ud_english, write_conll
    from linclass.sequence import SequenceTagger
    sentences = load_bundled_ud_english("train")[:400]
    paths = []
    for k in range(2):
        path = tmp_path / ("part%d.conll" % k)
        part = sentences[k * 200:(k + 1) * 200]
        write_conll([list(zip(s.column("form"), s.column("upos"))) for s in part], path)
        paths.append(path)
    Xb, Yb = ld.conll_bags(paths, token_columns=(0,), label_column=1)
    info = {}
    remote = ld.fit(SequenceTagger(max_iter=4, random_state=3), Xb, Yb, client=client,
                    info=info)
    assert info["rounds"] == 4
    # the reference runs in a process without a client (the fixture's client is
    # this process's default client): dask's synchronous scheduler
    code = ("import dask, linclass.distributed as ld\n"
            "from linclass.sequence import SequenceTagger\n"
            "with dask.config.set(scheduler='synchronous'):\n"
            "    m = ld.fit(SequenceTagger(max_iter=4, random_state=3),\n"
            "               *ld.conll_bags(%r, token_columns=(0,), label_column=1))\n"
            "m.save(%r)\n" % ([str(p) for p in paths], str(tmp_path / "local.npz")))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(pathlib.Path(linclass.__file__).resolve().parents[1])]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    local = linclass.load(tmp_path / "local.npz")
    assert np.array_equal(remote.emission_, local.emission_)
    assert np.array_equal(remote.transitions_, local.transitions_)


def test_maxent_on_two_worker_processes_reaches_the_in_memory_optimum(client):
    from linclass.linear.maxent import MaxEnt
    import dask.bag as db
    rng = np.random.default_rng(7)
    X = [{"w": "v%d" % rng.integers(6), "s": "x%d" % rng.integers(3),
          "n": float(rng.integers(1, 4))} for _ in range(300)]
    y = ["a" if fs["w"] in ("v0", "v1") or rng.random() < 0.2 else
         ("b" if fs["s"] == "x0" else "c") for fs in X]
    ref = MaxEnt(prior_variance=1.0).fit(X, y)
    info = {}
    got = ld.fit(MaxEnt(prior_variance=1.0), db.from_sequence(list(zip(X, y)), npartitions=3),
                 None, client=client, info=info)
    assert got.vocabulary_ == ref.vocabulary_
    assert abs(got.objective_ - ref.objective_) <= 1e-6 * ref.objective_
    assert info["n_partitions"] == 3 and info["rounds"] >= 5
    # IIS by exact reductions of the expectation tables on the workers
    ref = MaxEnt(algorithm="iis", prior_variance=1.0, max_iter=15).fit(X, y)
    got = ld.fit(MaxEnt(algorithm="iis", prior_variance=1.0, max_iter=15),
                 db.from_sequence(list(zip(X, y)), npartitions=3), None, client=client)
    assert got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10)


@pytest.mark.parametrize("estimator", ["LogisticRegression", "MaxEnt"])
def test_a_cluster_gone_mid_fit_is_a_clear_error_and_nothing_is_written(monkeypatch, estimator):
    """The cluster is closed after two reductions of a running fit."""
    from linclass.linear.maxent import MaxEnt
    from linclass.distributed.runner import Runner
    cluster = distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=50,
                                       death_timeout=60)
    own = distributed.Client(cluster, timeout=60, set_as_default=False)
    try:
        X, y = _data(n=200)
        Xd = da.from_array(X, chunks=((100, 100), (X.shape[1],)), asarray=False)
        original, calls = Runner.map_reduce, []

        def closing(self, *args):
            calls.append(1)
            if len(calls) == 3:
                cluster.close(timeout=30)
            return original(self, *args)

        monkeypatch.setattr(Runner, "map_reduce", closing)
        model = LogisticRegression() if estimator == "LogisticRegression" else MaxEnt()
        with pytest.raises(ld.DistributedError, match="cluster failed during the fit.*left "
                                                      "unchanged"):
            ld.fit(model, Xd, y, client=own)
        assert len(calls) == 3
        assert not hasattr(model, "coef_") and not hasattr(model, "classes_")
        assert not hasattr(model, "vocabulary_")
    finally:
        own.close(timeout=30)
        cluster.close(timeout=30)


def test_svmlight_shards_read_on_the_workers(client, tmp_path):
    from linclass.datasets import dump_svmlight_file, load_svmlight_file
    X, y = _data(n=300)
    paths = []
    for k in range(3):
        path = tmp_path / ("s%d.svm" % k)
        dump_svmlight_file(X[k * 100:(k + 1) * 100], y[k * 100:(k + 1) * 100], path)
        paths.append(path)
    Xd, yd = ld.svmlight_shards(paths, client=client)
    assert Xd.chunks[0] == (100, 100, 100)
    Xm, ym = load_svmlight_file(paths[0])
    nb = ld.fit(MultinomialNB(), Xd, yd, client=client)
    ref = MultinomialNB().fit(sp.vstack([load_svmlight_file(p, n_features=Xd.shape[1])[0]
                                         for p in paths]), y.astype(float))
    assert np.array_equal(nb.feature_log_prob_, ref.feature_log_prob_)
