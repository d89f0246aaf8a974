"""Unconstrained L-BFGS (two-loop recursion) with a backtracking line search.

scipy's L-BFGS-B keeps the compact representation of the bound-constrained
method (Byrd, Lu, Nocedal & Zhu 1995): with a million parameters (a softmax
model over a text vocabulary) its per-iteration driver costs as much as a pass
over the data.  Smooth unpenalised or L2-penalised objectives have no bounds,
so the classic two-loop recursion (Nocedal 1980; Nocedal & Wright 2006,
Algorithm 7.4) suffices; :mod:`linclass._core._lbfgs` runs it in 2k + 1 fused
passes over float32 curvature pairs (k of them stored).

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
from scipy.linalg import blas

from .._core import _lbfgs as _lbfgs_core

__all__ = ["lbfgs_minimize"]


def lbfgs_minimize(fun, x0, *, gtol, max_iter, ftol=64 * np.finfo(float).eps, memory=10,
                   callback=None):
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
    memory : int
        Number of curvature pairs kept.
    callback : callable or None
        Called as ``callback(x, f, g)`` after each iteration.

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
    memory = max(1, int(memory))
    S = np.zeros((memory, n), dtype=np.float32)      # pairs in a ring buffer
    Y = np.zeros((memory, n), dtype=np.float32)
    rho = np.zeros(memory)
    newest_first = []                               # slots, newest first
    gamma = 1.0
    d = np.empty(n)
    n_iter = 0
    flat_steps = 0
    if n == 0 or not np.all(np.isfinite(g)) or not np.isfinite(f):
        return x, f, 0, n == 0
    if np.max(np.abs(g)) <= gtol:
        return x, f, 0, True
    while n_iter < max_iter:
        _lbfgs_core.lbfgs_direction(g, S, Y, rho, np.array(newest_first, dtype=np.int32),
                                    gamma, d)
        gd = dot(g, d)
        if not gd < 0.0:                      # not a descent direction: restart
            newest_first = []
            np.negative(g, out=d)
            gd = -dot(g, g)
        step = 1.0 if newest_first else min(1.0, 1.0 / np.sqrt(-gd))
        # backtracking line search (Armijo)
        accepted = False
        for _ in range(40):
            x_new = axpy(d, x.copy(), a=step)
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
        slot = (newest_first[0] + 1) % memory if newest_first else 0
        if len(newest_first) == memory:
            newest_first.pop()                # the oldest pair's slot is reused
        sy, yy = _lbfgs_core.lbfgs_store_pair(x_new, x, g_new, g, S, Y, slot)
        if sy > 1e-10 * yy and yy > 0.0:
            rho[slot] = 1.0 / sy
            gamma = sy / yy
            newest_first.insert(0, slot)
        f_old = f
        x, f, g = x_new, f_new, g_new
        if callback is not None:
            callback(x, f, g)
        if np.max(np.abs(g)) <= gtol:
            return x, f, n_iter, True
        if f_old - f <= ftol * max(abs(f_old), abs(f), 1.0):
            flat_steps += 1
            if flat_steps == 2:
                return x, f, n_iter, True
        else:
            flat_steps = 0
    return x, f, n_iter, False
