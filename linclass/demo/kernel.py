"""Demo of the kernel methods on data generated here (two interleaved moons, three rings)."""
import warnings

import numpy as np


def _rings(n, rng):
    """Three concentric noisy rings: not linearly separable."""
    y = rng.integers(0, 3, size=n)
    angle = rng.uniform(0, 2 * np.pi, size=n)
    radius = 1.0 + y + 0.25 * rng.normal(size=n)
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)]), y


def demo_kernel(quick=False):
    """Train SVC (linear and RBF, with Platt probabilities) and the kernel perceptron.

    Returns a dict of test accuracies; prints a short report.
    """
    from ..kernels.kernel_perceptron import KernelPerceptron
    from ..kernels.svc import SVC
    rng = np.random.default_rng(0)
    n = 600 if quick else 3000
    X, y = _rings(n, rng)
    Xt, yt = _rings(n // 2, rng)
    results = {}
    for name, model in [("SVC linear", SVC(kernel="linear")),
                        ("SVC rbf + Platt", SVC(kernel="rbf", gamma=1.0, probability=True,
                                                random_state=0)),
                        ("kernel perceptron rbf", KernelPerceptron(kernel="rbf", gamma=1.0,
                                                                   max_iter=5, random_state=0)),
                        ("kernel perceptron rbf, budget 100",
                         KernelPerceptron(kernel="rbf", gamma=1.0, max_iter=5, budget=100,
                                          random_state=0))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        acc = float(np.mean(model.predict(Xt) == yt))
        results[name] = acc
        extra = ""
        if getattr(model, "probability", False):
            proba = model.predict_proba(Xt)
            extra = ", mean max probability %.3f" % proba.max(axis=1).mean()
        print("%-34s test accuracy %.3f, %d support vectors%s"
              % (name, acc, len(model.support_), extra))
    return results


if __name__ == "__main__":
    demo_kernel(quick=True)
