"""Limited-memory quasi-Newton minimisation for the CRF: L-BFGS and OWL-QN.

``minimize_owlqn(fun, x0, c1=0)`` minimises ``f(x) + c1 * ||x||_1`` where
``fun(x) -> (f, grad f)`` is smooth.  With ``c1 = 0`` it is L-BFGS with a
backtracking (Armijo) line search; with ``c1 > 0`` it is the orthant-wise
limited-memory quasi-Newton method of Andrew and Gao (2007): the direction
is built from the pseudo-gradient, constrained to its orthant, and every
line-search point is projected onto that orthant, so that coordinates that
would change sign become exactly zero.

Stopping follows CRFsuite / liblbfgs: ``||pg|| / max(1, ||x||) < epsilon``,
or the relative decrease of the objective over ``period`` iterations below
``delta``, or ``max_iterations`` iterations; a callback returning True stops
early too.

References
----------
Nocedal, J. (1980). Updating quasi-Newton matrices with limited storage.
Mathematics of Computation 35.
Andrew, G., Gao, J. (2007). Scalable training of L1-regularized log-linear
models.  ICML.
"""
import numpy as np

__all__ = ["minimize_owlqn", "pseudo_gradient"]


def pseudo_gradient(x, g, c1):
    """Minimum-norm subgradient of f + c1 * ||x||_1 (Andrew and Gao, eq. 4)."""
    if c1 == 0.0:
        return g
    pg = np.where(x > 0, g + c1, np.where(x < 0, g - c1, 0.0))
    zero = x == 0
    right = g + c1          # derivative towards +
    left = g - c1           # towards -
    pg[zero & (right < 0)] = right[zero & (right < 0)]
    pg[zero & (left > 0)] = left[zero & (left > 0)]
    return pg


def minimize_owlqn(fun, x0, *, c1=0.0, max_iterations=None, num_memories=6, epsilon=1e-5,
                   period=10, delta=1e-5, max_linesearch=20, callback=None):
    """Minimise ``f(x) + c1 * ||x||_1``.

    Parameters
    ----------
    fun : callable ``x -> (f, g)``
    x0 : ndarray (float64), not modified
    c1 : float, default=0
    max_iterations : int or None (no limit)
    num_memories : int, default=6
    epsilon, period, delta : stopping rules (see the module docstring)
    max_linesearch : int, default=20
    callback : callable ``(iteration, x, objective, pg_norm, step, n_evals) -> bool``
        Called after each iteration; True stops.

    Returns
    -------
    x, objective, n_iterations, reason (str)
    """
    x = np.array(x0, dtype=np.float64)
    f, g = fun(x)
    F = f + c1 * np.abs(x).sum()
    pg = pseudo_gradient(x, g, c1)
    S, Y, rho = [], [], []
    history = [F]
    k = 0
    reason = "max_iterations"
    pg_norm = np.linalg.norm(pg)
    if pg_norm / max(1.0, np.linalg.norm(x)) < epsilon:
        return x, F, 0, "converged (gradient)"
    while max_iterations is None or k < max_iterations:
        # two-loop recursion: d = -H pg
        q = -pg
        alphas = []
        for s, y, r in zip(reversed(S), reversed(Y), reversed(rho)):
            a = r * s.dot(q)
            alphas.append(a)
            q -= a * y
        if S:
            q *= S[-1].dot(Y[-1]) / Y[-1].dot(Y[-1])
        for (s, y, r), a in zip(zip(S, Y, rho), reversed(alphas)):
            b = r * y.dot(q)
            q += (a - b) * s
        d = q
        if c1 > 0:
            d[d * pg >= 0] = 0.0              # keep the direction in pg's descent orthant
            orthant = np.where(x != 0, np.sign(x), -np.sign(pg))
        slope = pg.dot(d)
        if slope >= 0:                        # not a descent direction: restart
            S, Y, rho = [], [], []
            d = -pg
            slope = -pg.dot(pg)
        step = 1.0 / np.linalg.norm(d) if k == 0 else 1.0
        n_evals = 0
        while True:
            x_new = x + step * d
            if c1 > 0:
                x_new[np.sign(x_new) != orthant] = 0.0
            try:
                f_new, g_new = fun(x_new)
            except FloatingPointError:         # overflow far along d: step back
                f_new, g_new = np.inf, None
            n_evals += 1
            F_new = f_new + c1 * np.abs(x_new).sum()
            decrease = pg.dot(x_new - x) if c1 > 0 else step * slope
            if np.isfinite(F_new) and F_new <= F + 1e-4 * decrease:
                break
            if n_evals >= max_linesearch:
                return x, F, k, "line search failed"
            step *= 0.5
        s = x_new - x
        y = g_new - g
        sy = s.dot(y)
        if sy > 1e-12 * max(1.0, y.dot(y)):
            S.append(s)
            Y.append(y)
            rho.append(1.0 / sy)
            if len(S) > num_memories:
                S.pop(0)
                Y.pop(0)
                rho.pop(0)
        x, f, g, F = x_new, f_new, g_new, F_new
        pg = pseudo_gradient(x, g, c1)
        k += 1
        history.append(F)
        pg_norm = np.linalg.norm(pg)
        if callback is not None and callback(k, x, F, pg_norm, step, n_evals):
            reason = "stopped by callback"
            break
        if pg_norm / max(1.0, np.linalg.norm(x)) < epsilon:
            reason = "converged (gradient)"
            break
        if period and len(history) > period:
            old = history[len(history) - 1 - period]
            if (old - F) / max(abs(F), 1e-300) < delta:
                reason = "converged (objective)"
                break
    return x, F, k, reason
