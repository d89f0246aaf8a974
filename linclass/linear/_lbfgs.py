"""Unconstrained L-BFGS (two-loop recursion) with a backtracking line search.

scipy's L-BFGS-B keeps the compact representation of the bound-constrained
method (Byrd, Lu, Nocedal & Zhu 1995): with a million parameters (a softmax
model over a text vocabulary) its per-iteration driver costs as much as a pass
over the data.  Smooth unpenalised or L2-penalised objectives have no bounds,
so the classic two-loop recursion (Nocedal 1980; Nocedal & Wright 2006,
Algorithm 7.4) suffices; below :data:`BLOCKED_MIN_PARAMS` parameters the
driver runs it on float64 pairs (:class:`_TwoLoopHistory`).  From there on it
keeps the pairs in the compact representation (:class:`_CompactHistory`): two
passes over the float32 history per iteration instead of the two-loop
recursion's 2k + 1, in column blocks that
the threads of an ``n_jobs > 1`` fit share, and (from
:data:`BLOCKED_MIN_PARAMS` parameters) no pass of its own to store a pair;
:mod:`linclass._core._lbfgs` holds both kernels.

Line search: the unit step (after the first iteration, where the step is
scaled to unit length), Armijo's sufficient decrease (c1 = 1e-4), otherwise
the minimiser of the quadratic interpolation of f along the direction, kept in
[0.1, 0.5] times the previous step.  On a strictly convex objective every
accepted step has s.y > 0, so the curvature pairs stay positive definite (a pair
with s.y <= 1e-10 y.y is skipped anyway).

Stopping rules are the ones of scipy's L-BFGS-B as linclass called it:
``max |g| <= gtol`` (convergence), a relative decrease of f below ``ftol`` in
two successive iterations (convergence), a line search that cannot decrease f
(the objective is flat to rounding: convergence), or ``max_iter`` iterations
(no convergence).

References
----------
Nocedal, J. (1980). Updating quasi-Newton matrices with limited storage.
Mathematics of Computation 35, 773-782.
Nocedal, J. & Wright, S. J. (2006). Numerical Optimization, 2nd ed., Springer,
sections 3.5 and 7.2.
"""
import numpy as np
from scipy.linalg import blas, solve_triangular

from .._core import _lbfgs as _lbfgs_core

__all__ = ["lbfgs_minimize"]


class _CompactHistory:
    """The curvature pairs of L-BFGS in the compact representation (Byrd, Nocedal
    & Schnabel 1994, Theorem 2.3):

        H = gamma I + [S  gamma Y] M [S^T ; gamma Y^T],
        M = [[R^-T (D + gamma Y^T Y) R^-1, -R^-T], [-R^-1, 0]],

    R the upper triangle of S^T Y (pairs oldest first), D its diagonal.  The
    direction -H g costs one pass over the history for S^T g and Y^T g, k x k
    algebra, and one combination pass: two passes instead of the two-loop
    recursion's 2k + 1, each a column-block loop that threads share without
    synchronisation (``threads.map``; partial products are added in block order,
    so the result is fixed for a fixed number of blocks).

    The products of the older pairs with a new y (s_i.y_new, y_i.y_new, on the
    stored float32 values) are added to the next direction's pass, which reads
    every pair anyway: one more row per tile, no extra pass over the history.

    The driver's blocked path stores a pair without a pass of its own
    (:meth:`defer`): the fused trial-point pass writes ``s = float32(d)`` into the
    next free slot (the oldest pair's, when the history is full) should the unit
    step be accepted, and the next direction's projection pass writes
    ``y = float32(g_new - g_old)`` tile by tile and adds ``s.y``, ``y.y``; the
    curvature test follows that pass (a refused pair's row of products is dropped).
    """

    def __init__(self, n, memory, threads=None, n_blocks=1):
        self.S = np.zeros((memory, n), dtype=np.float32)      # ring buffer of pairs
        self.Y = np.zeros((memory, n), dtype=np.float32)
        self.SY = np.zeros((memory, memory))       # SY[i, j] = s_i.y_j, i stored first
        self.YY = np.zeros((memory, memory))
        self.memory = memory
        self.newest_first = []
        self.pending = None                        # slot whose products await g_new
        self.deferred = None                       # (slot, g_old): y to write, not yet tested
        self.s_written = False                     # the last fused pass wrote next_slot's s
        self.gamma = 1.0
        self.threads = threads
        # blocks cut on the kernels' tile grid; their sums go to per-tile rows added in
        # tile order, so every product is the same however many blocks (threads) run
        tile = _lbfgs_core.TILE
        self.n_tiles = (n + tile - 1) // tile
        cuts = np.round(np.linspace(0, self.n_tiles, max(1, int(n_blocks)) + 1)) * tile
        cuts = np.minimum(cuts.astype(np.int64), n)
        self.blocks = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a] \
            or [(0, n)]

    def _map(self, function):
        if self.threads is None or len(self.blocks) == 1:
            return [function(block) for block in self.blocks]
        return self.threads.map(function, self.blocks)

    def clear(self):
        self.newest_first = []
        self.pending = None
        self.deferred = None
        self.s_written = False

    def next_slot(self):
        """The ring-buffer row the next pair goes to."""
        newest = self.newest_first
        return (newest[0] + 1) % self.memory if newest else 0

    def direction(self, g, out, x=None, x_out=None, write_s=False):
        """``out = -H g``; with ``x`` and ``x_out`` (and at least one pair stored)
        instead ``x_out = x + d`` (d = -H g) in one pass that does not write ``out``,
        and ``g . d`` is returned (None otherwise: ``out`` holds d).  ``write_s``: that
        pass also writes float32(d) to row :meth:`next_slot` of S (see :meth:`defer`),
        and ``self.s_written`` says whether it did."""
        S, Y = self.S, self.Y
        self.s_written = False
        deferred, self.deferred = self.deferred, None
        if deferred is not None:                # the deferred pair: y written in the projection
            new, g_old = deferred
            order = np.array(self.newest_first[::-1] + [new], dtype=np.int32)
            sums = self._project(g, order, new, g_old)
            curvature, sums = sums[-1], sums[:-1]
            if not self._accept(new, curvature[0], curvature[1]):   # refused: drop its row
                order = order[:-1]
                sums = sums[:-1]
                new = -1
        else:
            order = np.array(self.newest_first[::-1], dtype=np.int32)    # oldest first
            new = -1 if self.pending is None else self.pending
            sums = None
        gamma = self.gamma
        if order.shape[0] == 0:
            np.multiply(g, -gamma, out=out)
            return None
        if sums is None:
            sums = self._project(g, order, new, None)
        Sg, Yg = sums[:, 0].copy(), sums[:, 1].copy()
        if new >= 0:                            # products of the older pairs with y_new
            Sy, Yy = sums[:, 2], sums[:, 3]
            for i, j in enumerate(order.tolist()):
                if j != new:
                    self.SY[j, new] = Sy[i]
                    self.YY[j, new] = self.YY[new, j] = Yy[i]
            self.pending = None
        SY = self.SY[np.ix_(order, order)]
        R = np.triu(SY)
        r_inv_u = solve_triangular(R, Sg, lower=False)
        middle = (np.diag(np.diag(SY)) + gamma * self.YY[np.ix_(order, order)]) @ r_inv_u
        top = solve_triangular(R, middle - gamma * Yg, trans="T", lower=False)
        # -H g = -gamma g - S top + gamma Y R^-1 S^T g
        a = np.ascontiguousarray(top)
        b = np.ascontiguousarray(-gamma * r_inv_u)
        if x is not None:
            s_slot = self.next_slot() if write_s else -1
            tiles = np.empty((self.n_tiles, 1))
            self._map(lambda blk: _lbfgs_core.lbfgs_combine_trial(
                g, S, Y, order, a, b, gamma, x, x_out, blk[0], blk[1], s_slot, tiles))
            self.s_written = write_s
            return float(tiles.sum(axis=0)[0])
        self._map(lambda blk: _lbfgs_core.lbfgs_combine(g, S, Y, order, a, b, gamma, out,
                                                        blk[0], blk[1]))
        return None

    def _project(self, g, order, new, g_old):
        """The projection pass over the blocks: rows (s_i.g, y_i.g, s_i.y_new, y_i.y_new)
        for the pairs ``order`` (the last two 0 without ``new``), and with ``g_old`` a
        last row (s_new.y_new, y_new.y_new, 0, 0) for the pair whose y the pass wrote;
        tile sums added in tile order."""
        k = order.shape[0]
        tiles = np.empty((self.n_tiles, 4 * k + 2))
        S, Y = self.S, self.Y
        self._map(lambda b: _lbfgs_core.lbfgs_project(g, S, Y, order, new, b[0], b[1], g_old,
                                                      tiles))
        total = tiles.sum(axis=0)
        return np.vstack([total[:4 * k].reshape(k, 4),
                          np.concatenate([total[4 * k:], [0.0, 0.0]])])[:k + (g_old is not None)]

    # -- the per-parameter vector work of the driver, split over the column blocks
    # (numpy releases the GIL on these slices); used for n >= BLOCKED_MIN_PARAMS
    # (with one block and no threads too)
    def dot(self, u, v):
        """``u . v`` in one call (rare: without pairs or after a restart), so that it
        does not depend on the blocks."""
        return float(np.dot(u, v))

    def max_abs(self, u):
        return max(self._map(lambda b: float(np.max(np.abs(u[b[0]:b[1]])))
                             if b[1] > b[0] else 0.0))

    def difference(self, u, v, out):
        """``out = u - v``."""
        self._map(lambda b: np.subtract(u[b[0]:b[1]], v[b[0]:b[1]], out=out[b[0]:b[1]]))
        return out

    def step(self, x, d, step, out):
        """``out = x + step * d``."""
        def run(b):
            o = out[b[0]:b[1]]
            np.multiply(d[b[0]:b[1]], step, out=o)
            o += x[b[0]:b[1]]
        self._map(run)
        return out

    def store(self, x_new, x, g_new, g):
        """Store the pair (x_new - x, g_new - g), g the gradient of the last
        :meth:`direction`, unless its curvature s.y is too small."""
        slot = self._take_slot()
        S, Y = self.S, self.Y
        parts = self._map(lambda b: _lbfgs_core.lbfgs_store_range(x_new, x, g_new, g, S, Y,
                                                                  slot, b[0], b[1]))
        sy = float(np.sum([p[0] for p in parts]))
        yy = float(np.sum([p[1] for p in parts]))
        self.pending = None
        return self._accept(slot, sy, yy)

    def defer(self, x_new, x, g):
        """Store the pair (x_new - x, g_new - g) without a pass of its own: s is in row
        :meth:`next_slot` of S already when the last :meth:`direction` wrote it
        (``s_written``: the unit step of its fused pass was accepted), else it is
        written here; y, the curvature test and the products are left to the next
        :meth:`direction` (whose g is g_new), which needs ``g`` unchanged until then."""
        s_written = self.s_written
        self.s_written = False
        slot = self._take_slot()
        if not s_written:
            S = self.S
            self._map(lambda b: _lbfgs_core.lbfgs_store_s(x_new, x, S, slot, b[0], b[1]))
        self.pending = None
        self.deferred = (slot, g)

    def _take_slot(self):
        newest = self.newest_first
        slot = self.next_slot()
        if len(newest) == self.memory:
            newest.pop()                      # the oldest pair's slot is reused
        return slot

    def _accept(self, slot, sy, yy):
        """Keep the pair in ``slot`` unless its curvature s.y is too small."""
        if not (sy > 1e-10 * yy and yy > 0.0):
            return False
        self.SY[slot, slot] = sy
        self.YY[slot, slot] = yy
        self.gamma = sy / yy
        self.newest_first.insert(0, slot)
        self.pending = slot
        return True


class _TwoLoopHistory:
    """The curvature pairs in float64 and the classic two-loop recursion
    (Nocedal & Wright 2006, Algorithm 7.4), for problems below
    :data:`BLOCKED_MIN_PARAMS` parameters: there the compact representation's
    k x k algebra costs more in Python calls than the recursion's 4k short
    vector operations (a9a, 124 parameters: 0.49 ms an iteration against
    0.06 ms, while an evaluation of the objective takes 1.8 ms).  The same
    interface as :class:`_CompactHistory`'s serial path (``direction(g, out)``,
    ``store``, ``clear``, ``newest_first``)."""

    def __init__(self, n, memory):
        self.S = np.zeros((memory, n))
        self.Y = np.zeros((memory, n))
        self.rho = np.zeros(memory)
        self.memory = memory
        self.newest_first = []
        self.gamma = 1.0

    def clear(self):
        self.newest_first = []

    def direction(self, g, out):
        """``out = -H g``."""
        S, Y, rho = self.S, self.Y, self.rho
        np.copyto(out, g)
        alphas = []
        for i in self.newest_first:
            a = rho[i] * float(S[i] @ out)
            out -= a * Y[i]
            alphas.append(a)
        out *= self.gamma
        for i, a in zip(reversed(self.newest_first), reversed(alphas)):
            b = rho[i] * float(Y[i] @ out)
            out += (a - b) * S[i]
        np.negative(out, out=out)

    def store(self, x_new, x, g_new, g):
        """Store the pair (x_new - x, g_new - g) unless its curvature s.y is too small
        (the oldest pair's slot is reused when the history is full)."""
        s = x_new - x
        y = g_new - g
        sy = float(s @ y)
        yy = float(y @ y)
        if not (sy > 1e-10 * yy and yy > 0.0):
            return False
        newest = self.newest_first
        slot = (newest[0] + 1) % self.memory if newest else 0
        if len(newest) == self.memory:
            newest.pop()
        self.S[slot] = s
        self.Y[slot] = y
        self.rho[slot] = 1.0 / sy
        self.gamma = sy / yy
        newest.insert(0, slot)
        return True


#: From this many parameters on, the driver works on reused buffers in column blocks
#: (one without threads): the direction, ``g . d`` and the unit-step trial point
#: ``x + d`` in one pass over the history that never writes d itself
#: (:func:`_lbfgs.lbfgs_combine_trial`; d = x_trial - x only after a rejected unit step).
BLOCKED_MIN_PARAMS = 8192

#: Curvature pairs kept by default: more below :data:`BLOCKED_MIN_PARAMS` parameters,
#: where the two-loop recursion over the pairs costs little beside an evaluation
#: (a9a, 124 parameters: 20 pairs cut logistic regression's iterations from 356 to
#: 249 at C=1, 732 to 579 at C=10; w8a 68 to 57; well-conditioned problems take
#: the same number), and scipy's (scikit-learn's) 10 above it, where the pairs are
#: float32 rows of the parameters' size.
MEMORY_SMALL, MEMORY_LARGE = 20, 10


def lbfgs_minimize(fun, x0, *, gtol, max_iter, ftol=64 * np.finfo(float).eps, memory=None,
                   callback=None, threads=None, n_blocks=None, max_abs=None, fun_into=None):
    """Minimise a smooth function without constraints.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (f, g)`` with ``g`` a float64 array like ``x``.
    x0 : ndarray of float64
    gtol : float
        Stop when the largest absolute gradient entry is <= gtol.
    max_iter : int
    ftol : float
        Stop when ``(f_old - f_new) <= ftol * max(|f_old|, |f_new|, 1)`` in two
        successive iterations.
    memory : int or None
        Number of curvature pairs kept; None: :data:`MEMORY_SMALL` below
        :data:`BLOCKED_MIN_PARAMS` parameters, else :data:`MEMORY_LARGE`.
    callback : callable or None
        Called as ``callback(x, f, g)`` after each iteration.
    threads : object with ``map(function, blocks)`` or None
        Runs the history passes over column blocks on threads (e.g. the
        ``ThreadedSum`` of a fit with ``n_jobs > 1``); None: one block, this thread.
    n_blocks : int or None
        Column blocks of the history passes (default: 1 without ``threads``, 2 with;
        always 1 below :data:`BLOCKED_MIN_PARAMS` parameters).  From
        :data:`BLOCKED_MIN_PARAMS` parameters on, the driver's own vector work -- the
        trial point ``x + step d``, ``g.d`` and ``max |g|`` -- runs on the same blocks
        too (sums added block by block: deterministic for a fixed number of blocks),
        and the direction, ``g.d`` and the unit-step trial point share one pass; below
        it the plain serial code runs.
    max_abs : callable or None
        ``max_abs(g) -> max |g|`` for the gradients ``fun`` returns (an objective that
        computes it on the way saves a pass); None: computed here.
    fun_into : callable or None
        ``fun_into(x, out) -> (f, g)``, ``fun`` writing the gradient into the driver's
        buffer ``out`` (or returning a new array): used from
        :data:`BLOCKED_MIN_PARAMS` parameters on, so that an evaluation does not
        allocate (and fault in) a fresh gradient; the driver keeps two gradient
        buffers and hands the callback copies.

    Returns
    -------
    x, f, n_iter, converged
    """
    axpy = blas.daxpy
    dot = blas.ddot
    x = np.array(x0, dtype=np.float64, copy=True)
    n = x.shape[0]
    f, g = fun(x)
    g = np.array(g, dtype=np.float64, copy=True)
    if memory is None:
        memory = MEMORY_SMALL if n < BLOCKED_MIN_PARAMS else MEMORY_LARGE
    memory = max(1, int(memory))
    if n_blocks is None:
        n_blocks = 1 if threads is None else 2
    blocked = n >= BLOCKED_MIN_PARAMS
    history = (_CompactHistory(n, memory, threads, n_blocks) if blocked
               else _TwoLoopHistory(n, memory))
    d = np.empty(n)
    n_iter = 0
    flat_steps = 0
    if n == 0 or not np.all(np.isfinite(g)) or not np.isfinite(f):
        return x, f, 0, n == 0
    g_spare = None
    if blocked:                   # the driver's vector work on the column blocks too
        dot = history.dot
        if max_abs is None:
            max_abs = history.max_abs
        spare = np.empty(n)       # x_new is written here; the old x becomes the spare
        if fun_into is not None:
            g_spare = np.empty(n)     # g_new is written here; the old g becomes the spare
    elif max_abs is None:
        def max_abs(u):
            return np.max(np.abs(u))
    if max_abs(g) <= gtol:
        return x, f, 0, True
    while n_iter < max_iter:
        x_unit = None             # x + d, when the direction pass computed it
        if blocked:
            gd = history.direction(g, d, x, spare, write_s=True)
            if gd is None:
                gd = dot(g, d)
            else:
                x_unit = spare
        else:
            history.direction(g, d)
            gd = dot(g, d)
        if not gd < 0.0:                      # not a descent direction: restart
            history.clear()               # (also forgets an s the fused pass wrote)
            np.negative(g, out=d)
            gd = -dot(g, g)
            x_unit = None
        step = 1.0 if history.newest_first else min(1.0, 1.0 / np.sqrt(-gd))
        # backtracking line search (Armijo)
        accepted = False
        for _ in range(40):
            if x_unit is not None and step == 1.0:
                x_new = x_unit
            elif blocked:
                if x_unit is not None:        # d was not written: the unit step's x - x
                    history.difference(x_unit, x, d)
                    x_unit = None
                    history.s_written = False         # float32(d) is not this step's s
                x_new = history.step(x, d, step, spare)
            else:
                x_new = axpy(d, x.copy(), a=step)
            if g_spare is not None:
                f_new, g_new = fun_into(x_new, g_spare)
            else:
                f_new, g_new = fun(x_new)
            if np.isfinite(f_new) and f_new <= f + 1e-4 * step * gd:
                accepted = True
                break
            if np.isfinite(f_new):           # minimiser of the quadratic interpolation
                denom = 2.0 * (f_new - f - step * gd)
                trial = -gd * step * step / denom if denom > 0 else 0.5 * step
                step = min(max(trial, 0.1 * step), 0.5 * step)
            else:
                step *= 0.1
        n_iter += 1
        if not accepted:                      # f cannot decrease along d: flat to rounding
            return x, f, n_iter, True
        g_new = np.ascontiguousarray(g_new, dtype=np.float64)
        if blocked:                 # s written now or already, y by the next direction
            history.defer(x_new, x, g)
        else:
            history.store(x_new, x, g_new, g)
        f_old = f
        if blocked:
            spare = x
            if g_spare is not None and g_new is g_spare:
                g_spare = g
        x, f, g = x_new, f_new, g_new
        if callback is not None:                            # the buffers are reused
            callback(x.copy() if blocked else x, f, g.copy() if g_spare is not None else g)
        if max_abs(g) <= gtol:
            return x, f, n_iter, True
        if f_old - f <= ftol * max(abs(f_old), abs(f), 1.0):
            flat_steps += 1
            if flat_steps == 2:
                return x, f, n_iter, True
        else:
            flat_steps = 0
    return x, f, n_iter, False
