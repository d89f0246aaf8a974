"""Where per-partition tasks run: a ``distributed.Client`` or dask's local scheduler.

A :class:`Runner` offers the few collective operations the distributed
learners need, with the same semantics (and the same reduction order, so the
same floating-point result) on both back ends:

* ``compute(delayed)``      -- run a list of ``dask.delayed`` values, results to the driver;
* ``persist(delayed)``      -- keep partition data where it is computed (workers), handles back;
* ``map(f, handles, *args)``-- ``[f(h, *args) for h in handles]``, results to the driver;
* ``map_reduce(f, handles, combine, *args)`` -- the same, combined by a pairwise tree
  (on the workers for a client), only the root comes back;
* ``map_persist(f, handles, *args)`` -- new handles ``f(h, *args)`` that stay on the workers;
* ``map_update(f, handles, combine, *args)`` -- ``f`` returns (new state, output): the
  states stay on the workers as new handles, the outputs are tree-combined;
* ``fold(f, initial, handles, *args)`` -- ``acc = f(acc, h, *args)`` partition after
  partition, the accumulator travelling between workers (a sequential pass).

Large arguments (weight vectors) are scattered once per call, to every worker.
Failures of the cluster (closed client, lost workers, broken connections)
become :class:`DistributedError`; errors raised by the task code itself (bad
input found in a partition) keep their type and message.
"""
import contextlib
import operator

import numpy as np

__all__ = ["DistributedError", "Runner", "import_dask", "partition_seed"]


class DistributedError(RuntimeError):
    """The Dask cluster cannot run the fit (no usable client, workers lost, wrong version)."""


def import_dask():
    """The ``dask`` module, or an ``ImportError`` telling how to install it."""
    try:
        import dask
        import dask.array  # noqa: F401  (the array extra is required)
    except ImportError as exc:
        raise ImportError("linclass.distributed needs Dask: pip install 'linclass[dask]' "
                          "(dask[array,bag] and distributed); %s" % exc) from exc
    return dask


def partition_seed(seed, index, *more):
    """A 64-bit seed drawn from ``(seed, partition index, *more)`` (numpy's SeedSequence):
    independent streams per partition (and round), reproducible for a fixed chunking."""
    sequence = np.random.SeedSequence(entropy=int(seed),
                                      spawn_key=(int(index),) + tuple(int(m) for m in more))
    return int(sequence.generate_state(1, dtype=np.uint64)[0])


# -- one BLAS thread inside tasks ------------------------------------------------------
_BLAS_CONTROLLER = []


def _blas_limit():
    """Context limiting BLAS to one thread in this process (when threadpoolctl exists)."""
    if not _BLAS_CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
            _BLAS_CONTROLLER.append(ThreadpoolController())
        except ImportError:
            _BLAS_CONTROLLER.append(None)
    controller = _BLAS_CONTROLLER[0]
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


class _Opaque:
    """A partition handle passed to a local-scheduler task as it is: dask traverses
    lists and dicts given to ``delayed`` calls (every featureset of a MaxEnt shard,
    at every round); it leaves other objects alone."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _on_worker(function, *args):
    """Run one task body on a worker with BLAS limited to one thread."""
    args = [a.value if isinstance(a, _Opaque) else a for a in args]
    with _blas_limit():
        return function(*args)


def _worker_version():
    """linclass's version and location as seen by a worker (read at call time)."""
    import linclass
    import linclass._version as version
    return version.__version__, linclass.__file__


def _wait(client, futures):
    """Wait for the futures of ``client`` (``distributed.wait`` asks for the default
    client: the client given to ``fit`` need not be the default one)."""
    from distributed import wait
    with client.as_current():
        wait(futures)


def _tree(items, combine):
    """Pairwise tree reduction, left to right: ((a+b)+(c+d))+e for five items."""
    items = list(items)
    while len(items) > 1:
        paired = [combine(items[k], items[k + 1]) for k in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            paired.append(items[len(items) - 1])
        items = paired
    return items[0]


def _cluster_failure(exc):
    """Is ``exc`` a failure of the cluster rather than of the task code?"""
    names = {"CommClosedError", "KilledWorker", "FutureCancelledError", "CancelledError",
             "TimeoutError", "StreamClosedError"}
    return (type(exc).__name__ in names or isinstance(exc, (ConnectionError, OSError))
            and not isinstance(exc, FileNotFoundError))


class Runner:
    """Collective operations over partitions on a client or on the local scheduler.

    Parameters
    ----------
    client : distributed.Client or None
        None: dask's configured local scheduler (``dask.config.set(scheduler=...)``:
        "threads" by default, "synchronous" for debugging) in this process.
    """

    def __init__(self, client=None):
        self.dask = import_dask()
        self.client = client
        if client is not None:
            self._check_client()

    # -- set-up --------------------------------------------------------------------
    def _check_client(self):
        client = self.client
        status = getattr(client, "status", None)
        if status not in ("running", "newly-created", "connecting"):
            raise DistributedError("the Dask client is %r, not running: the cluster is gone or "
                                   "the client was closed; start a new Client" % (status,))
        from .._version import __version__
        try:
            versions = client.run(_worker_version)
        except Exception as exc:
            raise DistributedError("the Dask workers cannot run linclass (%s: %s); install "
                                   "the same linclass %s on every worker"
                                   % (type(exc).__name__, exc, __version__)) from exc
        if not versions:
            raise DistributedError("the Dask cluster has no workers")
        wrong = {address: v for address, (v, _) in versions.items() if v != __version__}
        if wrong:
            raise DistributedError("workers run another linclass version than this driver "
                                   "(%s): %s; install the same version everywhere"
                                   % (__version__, ", ".join("%s has %s" % kv
                                                             for kv in sorted(wrong.items()))))

    @contextlib.contextmanager
    def _guard(self):
        try:
            yield
        except DistributedError:
            raise
        except Exception as exc:
            if self.client is not None and (_cluster_failure(exc)
                                            or self.client.status != "running"):
                raise DistributedError("the Dask cluster failed during the fit (%s: %s); the "
                                       "estimator was left unchanged"
                                       % (type(exc).__name__, exc)) from exc
            raise

    @property
    def n_workers(self):
        if self.client is None:
            return 1
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def _local_compute(self, delayed_values):
        return list(self.dask.compute(*delayed_values))

    def _scatter(self, args):
        """Scatter array arguments once to every worker; scalars go as they are."""
        out = []
        for a in args:
            if isinstance(a, np.ndarray) and a.nbytes > 4096:
                a = self.client.scatter(a, broadcast=True, hash=False)
            out.append(a)
        return out

    # -- operations ----------------------------------------------------------------
    def compute(self, delayed_values):
        """Run ``dask.delayed`` values; their results come back to the driver."""
        delayed_values = list(delayed_values)
        with self._guard():
            if self.client is None:
                return self._local_compute(delayed_values)
            futures = self.client.compute(delayed_values)
            return self.client.gather(futures)

    def compute_reduce(self, delayed_values, combine):
        """Tree-combine ``dask.delayed`` values (pairwise, on the workers); the root back."""
        delayed = self.dask.delayed
        root = _tree(delayed_values, lambda a, b: delayed(_on_worker, pure=False)(combine, a, b))
        return self.compute([root])[0]

    def persist(self, delayed_values):
        """Compute partitions and keep them where they are (handles to them)."""
        delayed_values = list(delayed_values)
        with self._guard():
            if self.client is None:
                return self._local_compute(delayed_values)
            futures = self.client.compute(delayed_values)
            _wait(self.client, futures)
            for f in futures:
                if f.status == "error":
                    f.result()          # raises the task's own exception
            return futures

    def map(self, function, handles, *args):
        """``[function(h, *args) for h in handles]`` with results on the driver."""
        with self._guard():
            if self.client is None:
                delayed = self.dask.delayed
                return self._local_compute([delayed(_on_worker, pure=False)(
                    function, _Opaque(h), *args) for h in handles])
            args = self._scatter(args)
            futures = [self.client.submit(_on_worker, function, h, *args, pure=False)
                       for h in handles]
            return self.client.gather(futures)

    def map_reduce(self, function, handles, combine, *args):
        """``combine``-tree of ``function(h, *args)`` over handles; only the root comes back."""
        with self._guard():
            if self.client is None:
                return _tree(self.map(function, handles, *args), combine)
            args = self._scatter(args)
            submit = self.client.submit
            leaves = [submit(_on_worker, function, h, *args, pure=False) for h in handles]
            root = _tree(leaves, lambda a, b: submit(_on_worker, combine, a, b, pure=False))
            return root.result()

    def map_persist(self, function, handles, *args):
        """New handles ``function(h, *args)`` kept on the workers (partition state)."""
        with self._guard():
            if self.client is None:
                return self.map(function, handles, *args)
            args = self._scatter(args)
            futures = [self.client.submit(_on_worker, function, h, *args, pure=False)
                       for h in handles]
            _wait(self.client, futures)
            for f in futures:
                if f.status == "error":
                    f.result()
            return futures

    def map_update(self, function, handles, combine, *args):
        """``function(h, *args) -> (state, output)``: (new handles, combined outputs)."""
        with self._guard():
            if self.client is None:
                pairs = self.map(function, handles, *args)
                return [p[0] for p in pairs], _tree([p[1] for p in pairs], combine)
            args = self._scatter(args)
            submit = self.client.submit
            pairs = [submit(_on_worker, function, h, *args, pure=False) for h in handles]
            states = [submit(operator.getitem, p, 0, pure=False) for p in pairs]
            outputs = [submit(operator.getitem, p, 1, pure=False) for p in pairs]
            root = _tree(outputs, lambda a, b: submit(_on_worker, combine, a, b, pure=False))
            result = root.result()
            _wait(self.client, states)
            return states, result

    def fold(self, function, initial, handles, *args):
        """``acc = function(acc, h, *args)`` over the handles in order, starting from
        ``initial``; the accumulator moves from worker to worker, the last comes back."""
        with self._guard():
            if self.client is None:
                acc = initial
                for h in handles:
                    acc = _on_worker(function, acc, h, *args)
                return acc
            acc = initial
            for h in handles:
                acc = self.client.submit(_on_worker, function, acc, h, *args, pure=False)
            return acc.result() if handles else initial

    def release(self, handles):
        """Drop partition data held on the workers."""
        if self.client is not None:
            for f in handles:
                try:
                    f.release()
                except Exception:       # the cluster may already be gone
                    pass

    @contextlib.contextmanager
    def driver_context(self):
        """BLAS limited to one thread on the driver (L-BFGS on short vectors), and for
        the local scheduler's tasks, which share the driver's process."""
        with _blas_limit():
            yield
