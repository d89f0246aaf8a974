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
early too.  ``max_iterations=None`` still stops after
``MAX_ITERATIONS_CAP`` iterations (reason ``"max_iterations (hard
cap)"``), so that every call returns; a non-finite objective or gradient
raises ``ValueError`` instead of iterating on NaN.

Line search (as liblbfgs, which CRFsuite uses): for L-BFGS (``c1 = 0``) the
Moré--Thuente search for a step satisfying the strong Wolfe conditions
(sufficient decrease ``ftol = 1e-4``, curvature ``gtol = 0.9``), which also
*extrapolates* when the first trial step is too short -- the first iteration
starts at ``1 / ||d||``, far too short on CRF objectives, and a search that
only backtracks stays on that short step and then lags liblbfgs for the
rest of the run; for OWL-QN (``c1 > 0``) backtracking along the projected
path (liblbfgs allows only backtracking there too).

References
----------
Moré, J. J., Thuente, D. J. (1994). Line search algorithms with guaranteed
sufficient decrease.  ACM Transactions on Mathematical Software 20.
Nocedal, J. (1980). Updating quasi-Newton matrices with limited storage.
Mathematics of Computation 35.
Andrew, G., Gao, J. (2007). Scalable training of L1-regularized log-linear
models.  ICML.
"""
import numpy as np
from scipy.linalg.blas import daxpy, ddot

__all__ = ["minimize_owlqn", "pseudo_gradient", "MAX_ITERATIONS_CAP"]

#: iterations of ``minimize_owlqn`` when ``max_iterations`` is None
MAX_ITERATIONS_CAP = 100_000


def _check_finite_progress(F, pg_norm, k):
    """NaN compares false against every stopping rule: refuse it at once."""
    if not (np.isfinite(F) and np.isfinite(pg_norm)):
        raise ValueError("the objective or its gradient became non-finite (NaN or infinity) "
                         "at iteration %d: the data or the parameters overflow double "
                         "precision" % k)


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


def _cstep(stx, fx, dx, sty, fy, dy, stp, fp, dp, brackt, stpmin, stpmax):
    """One safeguarded step of the Moré--Thuente search (their interval
    update and cubic/quadratic trial step).  Returns
    (stx, fx, dx, sty, fy, dy, new step, brackt)."""
    sgnd = dp * np.sign(dx)
    if fp > fx:                                # higher value: the minimum is bracketed
        theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
        s = max(abs(theta), abs(dx), abs(dp))
        gamma = s * np.sqrt(max(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
        if stp < stx:
            gamma = -gamma
        r = ((gamma - dx) + theta) / (((gamma - dx) + gamma) + dp)
        stpc = stx + r * (stp - stx)
        stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx)
        stpf = stpc if abs(stpc - stx) < abs(stpq - stx) else stpc + (stpq - stpc) / 2.0
        brackt = True
    elif sgnd < 0:                             # derivatives of opposite sign: bracketed
        theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
        s = max(abs(theta), abs(dx), abs(dp))
        gamma = s * np.sqrt(max(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
        if stp > stx:
            gamma = -gamma
        r = ((gamma - dp) + theta) / (((gamma - dp) + gamma) + dx)
        stpc = stp + r * (stx - stp)
        stpq = stp + (dp / (dp - dx)) * (stx - stp)
        stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
        brackt = True
    elif abs(dp) < abs(dx):                    # same sign, derivative decreases
        theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
        s = max(abs(theta), abs(dx), abs(dp))
        gamma = s * np.sqrt(max(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
        if stp > stx:
            gamma = -gamma
        r = ((gamma - dp) + theta) / ((gamma + (dx - dp)) + gamma)
        if r < 0 and gamma != 0:
            stpc = stp + r * (stx - stp)
        else:
            stpc = stpmax if stp > stx else stpmin
        stpq = stp + (dp / (dp - dx)) * (stx - stp)
        if brackt:
            stpf = stpc if abs(stpc - stp) < abs(stpq - stp) else stpq
            if stp > stx:
                stpf = min(stp + 0.66 * (sty - stp), stpf)
            else:
                stpf = max(stp + 0.66 * (sty - stp), stpf)
        else:
            stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
            stpf = min(stpmax, max(stpmin, stpf))
    else:                                      # same sign, derivative does not decrease
        if brackt:
            theta = 3.0 * (fp - fy) / (sty - stp) + dy + dp
            s = max(abs(theta), abs(dy), abs(dp))
            gamma = s * np.sqrt(max(0.0, (theta / s) ** 2 - (dy / s) * (dp / s)))
            if stp > sty:
                gamma = -gamma
            r = ((gamma - dp) + theta) / (((gamma - dp) + gamma) + dy)
            stpf = stp + r * (sty - stp)
        else:
            stpf = stpmax if stp > stx else stpmin
    if fp > fx:
        sty, fy, dy = stp, fp, dp
    else:
        if sgnd < 0:
            sty, fy, dy = stx, fx, dx
        stx, fx, dx = stp, fp, dp
    return stx, fx, dx, sty, fy, dy, stpf, brackt


def _more_thuente(fun, x, f, g, d, step, max_evals, ftol=1e-4, gtol=0.9, xtol=1e-16,
                  stpmin=1e-20, stpmax=1e20):
    """Strong-Wolfe line search along ``d`` from ``x`` (Moré and Thuente 1994,
    as MINPACK-2's dcsrch).  Returns (step, x_new, f_new, g_new, n_evals), or
    None when ``max_evals`` evaluations found no acceptable step."""
    ginit = g.dot(d)
    gtest = ftol * ginit
    width = stpmax - stpmin
    width1 = 2.0 * width
    stx, fx, gx = 0.0, f, ginit
    sty, fy, gy = 0.0, f, ginit
    stmin, stmax = 0.0, step + 4.0 * step
    brackt = False
    stage1 = True
    best = None
    for n_evals in range(1, max_evals + 1):
        x_new = x + step * d
        try:
            f_new, g_new = fun(x_new)
        except FloatingPointError:             # overflow far along d
            f_new, g_new = np.inf, None
        if not np.isfinite(f_new):
            # step back towards the best point so far and bracket there
            stmax = step
            brackt = True
            step = stx + 0.5 * (step - stx)
            continue
        dg = g_new.dot(d)
        ftest = f + step * gtest
        if f_new <= ftest and (best is None or f_new < best[2]):
            best = (step, x_new, f_new, g_new)
        if f_new <= ftest and abs(dg) <= gtol * (-ginit):
            return step, x_new, f_new, g_new, n_evals
        if brackt and (step <= stmin or step >= stmax or stmax - stmin <= xtol * stmax):
            break                              # rounding errors / interval too small
        if step == stpmax and f_new <= ftest and dg <= gtest:
            break
        if step == stpmin and (f_new > ftest or dg >= gtest):
            break
        if stage1 and f_new <= ftest and dg >= 0:
            stage1 = False
        if stage1 and f_new <= fx and f_new > ftest:
            # modified function psi(a) = f(a) - f(0) - a * gtest while in stage 1
            stx, fxm, gxm, sty, fym, gym, step, brackt = _cstep(
                stx, fx - stx * gtest, gx - gtest, sty, fy - sty * gtest, gy - gtest,
                step, f_new - step * gtest, dg - gtest, brackt, stmin, stmax)
            fx, gx = fxm + stx * gtest, gxm + gtest
            fy, gy = fym + sty * gtest, gym + gtest
        else:
            stx, fx, gx, sty, fy, gy, step, brackt = _cstep(
                stx, fx, gx, sty, fy, gy, step, f_new, dg, brackt, stmin, stmax)
        if brackt:
            if abs(sty - stx) >= 0.66 * width1:
                step = stx + 0.5 * (sty - stx)
            width1 = width
            width = abs(sty - stx)
            stmin, stmax = min(stx, sty), max(stx, sty)
        else:
            stmin = step + 1.1 * (step - stx)
            stmax = step + 4.0 * (step - stx)
        step = min(max(step, stpmin), stpmax)
        if brackt and (step <= stmin or step >= stmax or stmax - stmin <= xtol * stmax):
            step = stx
    if best is not None:                       # sufficient decrease at least
        return best + (max_evals,)
    return None


def _backtrack(fun, x, F, pg, d, step, slope, c1, orthant, max_evals):
    """Armijo backtracking (halving) along ``d``, projected onto ``orthant``
    when given (OWL-QN).  Returns (step, x_new, f_new, g_new, n_evals) or None."""
    for n_evals in range(1, max_evals + 1):
        x_new = x + step * d
        if orthant is not None:
            x_new[np.sign(x_new) != orthant] = 0.0
        try:
            f_new, g_new = fun(x_new)
        except FloatingPointError:             # overflow far along d: step back
            f_new, g_new = np.inf, None
        F_new = f_new + c1 * np.abs(x_new).sum()
        decrease = pg.dot(x_new - x) if c1 > 0 else step * slope
        if np.isfinite(F_new) and F_new <= F + 1e-4 * decrease:
            return step, x_new, f_new, g_new, n_evals
        step *= 0.5
    return None


def minimize_owlqn(fun, x0, *, c1=0.0, max_iterations=None, num_memories=6, epsilon=1e-5,
                   period=10, delta=1e-5, max_linesearch=20, callback=None,
                   linesearch="auto"):
    """Minimise ``f(x) + c1 * ||x||_1``.

    Parameters
    ----------
    fun : callable ``x -> (f, g)``
    x0 : ndarray (float64), not modified
    c1 : float, default=0
    max_iterations : int or None (``MAX_ITERATIONS_CAP``)
    num_memories : int, default=6
    epsilon, period, delta : stopping rules (see the module docstring)
    max_linesearch : int, default=20
    callback : callable ``(iteration, x, objective, pg_norm, step, n_evals) -> bool``
        Called after each iteration; True stops.
    linesearch : {"auto", "morethuente", "backtracking"}
        "auto": Moré--Thuente when ``c1 == 0``, backtracking otherwise
        (OWL-QN needs the projected backtracking search).

    Returns
    -------
    x, objective, n_iterations, reason (str)
    """
    if linesearch not in ("auto", "morethuente", "backtracking"):
        raise ValueError("linesearch must be 'auto', 'morethuente' or 'backtracking', got %r"
                         % (linesearch,))
    if linesearch == "morethuente" and c1 > 0:
        raise ValueError("OWL-QN (c1 > 0) needs linesearch='backtracking'")
    use_mt = linesearch == "morethuente" or (linesearch == "auto" and c1 == 0)
    x = np.array(x0, dtype=np.float64)
    f, g = fun(x)
    F = f + c1 * np.abs(x).sum()
    pg = pseudo_gradient(x, g, c1)
    S, Y, rho, YY = [], [], [], []
    history = [F]
    k = 0
    reason = "max_iterations"
    if max_iterations is None:
        max_iterations, reason = MAX_ITERATIONS_CAP, "max_iterations (hard cap)"
    pg_norm = np.linalg.norm(pg)
    _check_finite_progress(F, pg_norm, 0)
    if pg_norm / max(1.0, np.linalg.norm(x)) < epsilon:
        return x, F, 0, "converged (gradient)"
    while k < max_iterations:
        # two-loop recursion: d = -H pg (in place: BLAS axpy, no temporaries)
        q = -pg
        alphas = []
        for s, y, r in zip(reversed(S), reversed(Y), reversed(rho)):
            a = r * ddot(s, q)
            alphas.append(a)
            q = daxpy(y, q, a=-a)
        if S:
            q *= (1.0 / rho[-1]) / YY[-1]
        for (s, y, r), a in zip(zip(S, Y, rho), reversed(alphas)):
            b = r * ddot(y, q)
            q = daxpy(s, q, a=a - b)
        d = q
        if c1 > 0:
            d[d * pg >= 0] = 0.0              # keep the direction in pg's descent orthant
            orthant = np.where(x != 0, np.sign(x), -np.sign(pg))
        slope = pg.dot(d)
        if slope >= 0:                        # not a descent direction: restart
            S, Y, rho, YY = [], [], [], []
            d = -pg
            slope = -pg.dot(pg)
        step = 1.0 / np.linalg.norm(d) if k == 0 else 1.0
        if use_mt:
            found = _more_thuente(fun, x, f, g, d, step, max_linesearch)
        else:
            found = _backtrack(fun, x, F, pg, d, step, slope, c1,
                               orthant if c1 > 0 else None, max_linesearch)
        if found is None:
            return x, F, k, "line search failed"
        step, x_new, f_new, g_new, n_evals = found
        F_new = f_new + c1 * np.abs(x_new).sum() if c1 > 0 else f_new
        s = x_new - x
        y = g_new - g
        sy = ddot(s, y)
        yy = ddot(y, y)
        if sy > 1e-12 * max(1.0, yy):
            S.append(s)
            Y.append(y)
            rho.append(1.0 / sy)
            YY.append(yy)
            if len(S) > num_memories:
                S.pop(0)
                Y.pop(0)
                rho.pop(0)
                YY.pop(0)
        x, f, g, F = x_new, f_new, g_new, F_new
        pg = pseudo_gradient(x, g, c1)
        k += 1
        history.append(F)
        pg_norm = np.linalg.norm(pg)
        _check_finite_progress(F, pg_norm, k)
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
