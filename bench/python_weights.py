"""strads.linear_model.Lasso against scikit-learn's Lasso with and without sample weights, and
strads on 1 and 2 workers, through the Python calls a user makes (each fit() timed whole: input
checks and strads' copy of the data included). Prints Markdown rows; needs the `strads` package
and scikit-learn in the running interpreter (bench/python_suite.sh installs both).

Usage: python bench/python_weights.py [--repeat N]
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import Lasso as SkLasso

from strads.linear_model import Lasso


def problem(rng, n, p, density, sparse):
    X = rng.standard_normal((n, p))
    X[rng.random((n, p)) > density] = 0.0
    w = np.zeros(p)
    w[rng.choice(p, 20, replace=False)] = rng.standard_normal(20)
    y = X @ w + 0.5 * rng.standard_normal(n) + 1.0
    return (sp.csc_matrix(X) if sparse else X), X, y


def best_of(repeat, fit):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - start)
    return min(times), model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    rng = np.random.default_rng(0)
    print("| problem | alpha | weights | strads s | scikit-learn s | ratio | objective, relative to scikit-learn's |")
    print("|---|---|---|---|---|---|---|")
    for name, n, p, density, sparse in [("dense 2000 x 500", 2000, 500, 1.0, False), ("sparse 5000 x 5000, 2%", 5000, 5000, 0.02, True)]:
        data, dense, y = problem(rng, n, p, density, sparse)
        weights = rng.uniform(0.0, 2.0, n)
        for weighted in (False, True):
            sw = weights if weighted else None
            w = np.ones(n) if sw is None else sw * n / sw.sum()
            mean = np.average(y, weights=w)
            alpha_max = np.abs(dense.T @ (w * (y - mean))).max() / n
            for ratio in (0.05, 0.01):
                alpha = ratio * alpha_max

                def objective(model):
                    r = y - dense @ model.coef_ - model.intercept_
                    return (w * r * r).sum() / (2 * n) + alpha * np.abs(model.coef_).sum()

                ours, mine = best_of(repeat, lambda: Lasso(alpha=alpha, tol=1e-6).fit(data, y, sample_weight=sw))
                theirs, sk = best_of(
                    repeat, lambda: SkLasso(alpha=alpha, tol=1e-6, max_iter=100_000).fit(data, y, sample_weight=sw)
                )
                change = (objective(mine) - objective(sk)) / objective(sk)
                print(f"| {name} | alpha_max x {ratio} | {'yes' if weighted else 'no'} | {ours:.4f} | {theirs:.4f} | {ours / theirs:.2f} | {change:+.1e} |")
    print()
    print("| dense array | alpha | 1 worker s | 2 workers s | 2 / 1 |")
    print("|---|---|---|---|---|")
    for n, p in [(2000, 500), (4000, 500), (8000, 1000)]:
        _, X, y = problem(rng, n, p, 1.0, False)
        X = np.asfortranarray(X)
        alpha_max = np.abs(X.T @ (y - y.mean())).max() / n
        for ratio in (0.05, 0.01):
            one, _ = best_of(repeat, lambda: Lasso(alpha=ratio * alpha_max, tol=1e-6, n_workers=1).fit(X, y))
            two, _ = best_of(repeat, lambda: Lasso(alpha=ratio * alpha_max, tol=1e-6, n_workers=2).fit(X, y))
            print(f"| {n} x {p} | alpha_max x {ratio} | {one:.4f} | {two:.4f} | {two / one:.2f} |")


if __name__ == "__main__":
    main()
