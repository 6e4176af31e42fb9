"""Sparse logistic regression and regularization paths side by side: strads against scikit-learn and
celer, in one run.

Part 1, one lambda. Every method solves min (1/n) sum log(1 + exp(-y_i x_i . w)) + lambda ||w||_1 (no
intercept) at the same lambda: scikit-learn's LogisticRegression(l1, liblinear and saga) and celer's
LogisticRegression take C = 1 / (n lambda). Every solution is scored by the same duality gap, computed
here from the solution alone: with p_i = sigma(-y_i x_i . w), the dual point a = s p, s the largest scale
in [0, 1] with ||X^T (y a)||_inf <= n lambda, D = sum H(a_i) (H the binary entropy), the primal
P = sum log(1 + exp(-y_i x_i . w)) + n lambda ||w||_1, the relative gap (P - D) / P. For each method the
script finds the loosest setting of its own tolerance whose solution has a gap of at most --target and
reports the time of that fit (best of --repeat). strads' time is its training time (summary.json
"seconds"); the peers' time is their fit() call.

Part 2, paths. A 20-point path from lambda_max down to --path-ratio x lambda_max (geometric, the same
grid for everyone: lambda_max = ||X^T y||_inf / (n l1_ratio)) of the Lasso (l1_ratio 1) and the elastic
net (l1_ratio 0.5), objective 1/(2n) ||y - X w||^2 + lambda (l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2 / 2),
no intercept: strads `lasso --path 20` against scikit-learn's lasso_path / enet_path given the same grid.
A path counts when every one of its points has a relative duality gap at most --target (computed here
from the coefficients: for l1_ratio < 1 the dual is D = r . y - ||r||^2 / 2 - sum_j S(|x_j . r|, n lambda
l1_ratio)^2 / (2 n lambda (1 - l1_ratio)) at the residual r).

Usage: python logreg_bench.py --strads PATH --data FILE --out FILE.md [--ratio R] [--path-ratio R]
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.special import expit
from sklearn.datasets import load_svmlight_file

from benchlib import commit, machine, plot_gap_curves

TOLS = [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]


def entropy(a):
    a = np.clip(a, 0.0, 1.0)
    out = np.zeros_like(a)
    inside = (a > 0) & (a < 1)
    b = a[inside]
    out[inside] = -b * np.log(b) - (1 - b) * np.log(1 - b)
    return out


def logistic_gap(X, y, w, lam):
    n = X.shape[0]
    z = X @ w
    primal = np.logaddexp(0.0, -y * z).sum() + n * lam * np.abs(w).sum()
    p = expit(-y * z)
    corr = np.abs(X.T @ (y * p)).max()
    scale = min(1.0, n * lam / max(corr, 1e-300))
    dual = entropy(scale * p).sum()
    return (primal - dual) / primal, primal / n


def enet_gap(X, y, w, lam, l1_ratio):
    n = X.shape[0]
    r = y - X @ w
    alpha, ridge = n * lam * l1_ratio, n * lam * (1 - l1_ratio)
    primal = 0.5 * r @ r + alpha * np.abs(w).sum() + 0.5 * ridge * (w @ w)
    corr = X.T @ r
    if ridge > 0:
        dual = r @ y - 0.5 * r @ r - (np.maximum(np.abs(corr) - alpha, 0.0) ** 2).sum() / (2 * ridge)
    else:
        scale = min(1.0, alpha / max(np.abs(corr).max(), 1e-300))
        dual = scale * (r @ y) - 0.5 * scale * scale * (r @ r)
    return (primal - dual) / primal, primal / n


def read_coefficients(path, features):
    w = np.zeros(features)
    with open(path) as f:
        next(f)
        for line in f:
            index, value = line.strip().split(",")
            if index != "intercept":
                w[int(index)] = float(value)
    return w


def run_strads_logreg(binary, data, lam, scheduler, workers, update, tol, budget, features):
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "logreg", "--data", data, "--lambda", repr(float(lam)), "--scheduler", scheduler,
               "--workers", str(workers), "--update", update, "--tol", repr(float(tol)), "--quiet", "--out", out,
               "--max-seconds", str(budget)]
        subprocess.run(cmd, check=True)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        return summary, read_coefficients(os.path.join(out, "coefficients.csv"), features)


def run_strads_path(binary, data, ratio, points, l1_ratio, workers, tol, budget, features):
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "lasso", "--data", data, "--lambda-ratio", repr(float(ratio)), "--path", str(points),
               "--l1-ratio", repr(float(l1_ratio)), "--workers", str(workers), "--tol", repr(float(tol)), "--quiet",
               "--out", out, "--max-seconds", str(budget)]
        subprocess.run(cmd, check=True)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        coefs = {}
        with open(os.path.join(out, "path_coefficients.csv")) as f:
            next(f)
            for line in f:
                lam, index, value = line.strip().split(",")
                if index != "intercept":
                    coefs.setdefault(float(lam), np.zeros(features))[int(index)] = float(value)
        lambdas = []
        with open(os.path.join(out, "path.csv")) as f:
            next(f)
            for line in f:
                lambdas.append(float(line.split(",")[0]))
        return summary, [(lam, coefs.get(lam, np.zeros(features))) for lam in lambdas]


def peer_logreg(name, X, y, lam, tol):
    n = X.shape[0]
    C = 1.0 / (n * lam)
    if name.startswith("scikit-learn"):
        import sklearn
        from sklearn.linear_model import LogisticRegression
        solver = name.split()[-1]
        # scikit-learn 1.8 deprecated penalty="l1" for l1_ratio=1 (penalty="l1" with the default
        # l1_ratio=0 is then "inconsistent"); before 1.8 l1_ratio only applies to the elastic net.
        major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
        l1 = {"l1_ratio": 1.0} if (major, minor) >= (1, 8) else {"penalty": "l1"}
        model = LogisticRegression(solver=solver, C=C, fit_intercept=False, tol=tol, max_iter=100_000, **l1)
    elif name == "celer":
        from celer import LogisticRegression
        model = LogisticRegression(C=C, tol=tol, max_iter=1000, max_epochs=1_000_000)
    elif name == "skglm":
        # skglm's objective is this one: the mean logistic loss plus alpha ||w||_1.
        from skglm import SparseLogisticRegression
        model = SparseLogisticRegression(alpha=lam, tol=tol, fit_intercept=False, max_iter=1000, max_epochs=100_000)
    else:
        raise ValueError(name)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, np.asarray(model.coef_).ravel()


def peer_path(X, y, grid, l1_ratio, tol):
    from sklearn.linear_model import enet_path, lasso_path
    start = time.perf_counter()
    if l1_ratio == 1.0:
        _, coefs, _ = lasso_path(X, y, alphas=grid, tol=tol, max_iter=1_000_000)
    else:
        _, coefs, _ = enet_path(X, y, l1_ratio=l1_ratio, alphas=grid, tol=tol, max_iter=1_000_000)
    return time.perf_counter() - start, [(lam, coefs[:, k]) for k, lam in enumerate(grid)]


def warm_up_peers():
    # celer and scikit-learn import lazily and skglm compiles its kernels (numba) at its first fit;
    # the first fit pays for it. Not timed.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 20))
    y = np.where(rng.standard_normal(60) > 0, 1.0, -1.0)
    from scipy import sparse
    for name in ("scikit-learn liblinear", "scikit-learn saga", "celer", "skglm"):
        peer_logreg(name, sparse.csc_matrix(X), y, 0.01, 1e-4)
    peer_path(sparse.csc_matrix(X), y, np.array([0.1, 0.05]), 1.0, 1e-4)


def timed_search(fit, gap_of, target, repeat, slow=10.0, points=None):
    """The loosest tolerance whose fit reaches the target gap: (seconds, gap, objective, result, tol) or None.

    Every fit made on the way is appended to `points` as (seconds, gap): a method's gap against time.
    """
    last = None
    for tol in TOLS:
        times = []
        result = None
        for _ in range(repeat):
            seconds, result = fit(tol)
            if seconds is None:
                return None, last
            times.append(seconds)
            if seconds > slow:
                break
        gap, objective = gap_of(result)
        last = (min(times), gap, objective, result, tol)
        if points is not None:
            points.append((min(times), gap))
        if gap <= target:
            return last, last
    return None, last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--ratio", type=float, default=0.01, help="logistic lambda as a fraction of lambda_max")
    ap.add_argument("--path-ratio", type=float, default=0.01, help="the end of the paths, a fraction of lambda_max")
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--target", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=300.0, help="most seconds of one strads run")
    ap.add_argument("--skip", default="", help="comma-separated: saga, paths, logreg")
    ap.add_argument("--strads-runs", default="dynamic:1:newton,dynamic:2:newton,cyclic:1:newton,shotgun:2:newton,"
                    "dynamic:1:bound", help="strads logreg runs, scheduler:workers:update, comma-separated")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    warm_up_peers()
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    X, y = load_svmlight_file(args.data)
    X = X.tocsc()
    n, p = X.shape
    say("# Sparse logistic regression and paths: strads against scikit-learn and celer")
    say()
    say(f"- date: {datetime.date.today()}")
    say(f"- machine: {machine()}")
    say(f"- commit: {commit()}")
    say(f"- command: `{args.command or ' '.join(sys.argv)}`")
    say(f"- data: `{args.data}`, {n} x {p}, {X.nnz} nonzeros, labels {sorted(set(y.tolist()))}")
    say(f"- every time is to a relative duality gap <= {args.target:g}, computed here the same way for every method "
        f"from the solution alone; best of {args.repeat} fits (one when a fit takes over 10 s); strads: training "
        f"seconds (summary.json), peers: the fit call; each method at the loosest of its tolerances that reaches "
        f"the gap")
    say()

    if "logreg" not in skip:
        # lambda_max of the logistic loss without intercept: ||X^T y||_inf / (2n).
        lam = float(args.ratio * np.abs(X.T @ y).max() / (2 * n))
        say(f"## Logistic regression, lambda = {args.ratio:g} x lambda_max = {lam:.6g} (no intercept)")
        say()
        say("| method | workers | seconds | ÷ celer | objective | gap | nnz | tolerance used |")
        say("|---|---|---|---|---|---|---|---|")
        results = []
        curves = []
        strads_runs = [tuple(run.split(":")) for run in args.strads_runs.split(",")]
        strads_runs = [(scheduler, int(workers), update) for scheduler, workers, update in strads_runs]
        for scheduler, workers, update in strads_runs:
            name = f"strads {scheduler}" + (" --update bound" if update == "bound" else "")

            def fit(tol, scheduler=scheduler, workers=workers, update=update):
                summary, w = run_strads_logreg(args.strads, args.data, lam, scheduler, workers, update, tol,
                                               args.budget, p)
                if summary["status"] in ("diverged", "max-seconds"):
                    return None, w
                return summary["seconds"], w

            curve = []
            found, last = timed_search(fit, lambda w: logistic_gap(X, y, w, lam), args.target, args.repeat,
                                       points=curve)
            results.append((name, workers, found, last))
            curves.append((f"{name} P={workers}", curve))
        for name in ("scikit-learn liblinear", "scikit-learn saga", "celer", "skglm"):
            if name.endswith("saga") and "saga" in skip:
                continue
            curve = []
            found, last = timed_search(lambda tol, name=name: peer_logreg(name, X, y, lam, tol),
                                       lambda w: logistic_gap(X, y, w, lam), args.target, args.repeat,
                                       points=curve)
            results.append((name, 1, found, last))
            curves.append((name, curve))
        celer = next((r[2][0] for r in results if r[0] == "celer" and r[2]), None)
        for name, workers, found, last in results:
            if found:
                seconds, gap, objective, w, tol = found
                ratio = f"{seconds / celer:.2f}" if celer else "-"
                say(f"| {name} | {workers} | {seconds:.3f} | {ratio} | {objective:.10g} | {gap:.2e} | "
                    f"{int((w != 0).sum())} | {tol:g} |")
            else:
                reached = f"gap {last[1]:.1e} at its tightest tolerance" if last else "failed or out of budget"
                say(f"| {name} | {workers} | not reached | - | - | - | - | {reached} |")
        say()
        # Each method's gap against seconds: one point per fit at one of its tolerances.
        plot_gap_curves(args.strads, say, curves, args.out[:-3] + ".png",
                        f"news20-comp, L1 logistic regression, {args.ratio:g} x lambda_max")
        strads_best = min((r[2][0] for r in results if r[0].startswith("strads") and r[2]), default=None)
        if celer and strads_best:
            say(f"Target (no slower than celer on a single lambda): fastest strads {strads_best:.3f} s against celer "
                f"{celer:.3f} s, {strads_best / celer:.2f}x: {'met' if strads_best <= celer else 'NOT met'}.")
            say()

    if "paths" not in skip:
        y_reg = y.astype(float)
        for l1_ratio in (1.0, 0.5):
            lam_max = float(np.abs(X.T @ y_reg).max() / (n * l1_ratio))
            grid = lam_max * args.path_ratio ** (np.arange(args.points) / (args.points - 1))
            title = "Lasso" if l1_ratio == 1.0 else f"Elastic net, l1_ratio {l1_ratio:g}"
            say(f"## {title} path: {args.points} lambdas from lambda_max = {lam_max:.6g} down to "
                f"{args.path_ratio:g} x lambda_max")
            say()
            say("| method | workers | seconds | ÷ strads P=1 | worst gap over the path | nnz at the end | tolerance used |")
            say("|---|---|---|---|---|---|---|")

            def worst(points, l1_ratio=l1_ratio):
                gaps = [enet_gap(X, y_reg, w, lam, l1_ratio)[0] for lam, w in points]
                return max(gaps), None

            rows = []
            for workers in (1, 2):
                def fit(tol, workers=workers):
                    summary, points = run_strads_path(args.strads, args.data, args.path_ratio, args.points, l1_ratio,
                                                      workers, tol, args.budget, p)
                    if len(points) < args.points:
                        return None, points
                    return summary["seconds"], points

                found, last = timed_search(fit, worst, args.target, args.repeat)
                rows.append(("strads lasso --path", workers, found, last))
            name = "scikit-learn lasso_path" if l1_ratio == 1.0 else "scikit-learn enet_path"
            found, last = timed_search(lambda tol: peer_path(X, y_reg, grid, l1_ratio, tol), worst, args.target,
                                       args.repeat)
            rows.append((name, 1, found, last))
            base = rows[0][2][0] if rows[0][2] else None
            for label, workers, found, last in rows:
                if found:
                    seconds, gap, _, points, tol = found
                    ratio = f"{seconds / base:.2f}" if base else "-"
                    say(f"| {label} | {workers} | {seconds:.3f} | {ratio} | {gap:.2e} | "
                        f"{int((points[-1][1] != 0).sum())} | {tol:g} |")
                else:
                    reached = f"worst gap {last[1]:.1e} at its tightest tolerance" if last else "out of budget"
                    say(f"| {label} | {workers} | not reached | - | - | - | {reached} |")
            say()
            peer = rows[-1][2][0] if rows[-1][2] else None
            best = min((r[2][0] for r in rows[:-1] if r[2]), default=None)
            if peer and best:
                say(f"Target (a {args.points}-point path at least 3x faster than scikit-learn's): strads {best:.3f} s "
                    f"against {peer:.3f} s, {peer / best:.1f}x: {'met' if peer >= 3 * best else 'NOT met'}.")
                say()

    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
