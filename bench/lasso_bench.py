"""Lasso side by side: strads' schedulers against scikit-learn, celer and skglm, in one run.

Every method solves min 1/(2n) ||y - X w||^2 + lambda ||w||_1 (no intercept) at the same lambda,
and every solution is scored by the same duality gap, computed here from the solution alone:
the dual point is the residual rescaled into the dual feasible set, the gap is relative to the
primal objective. For each method the script finds the loosest setting of its own tolerance whose
solution has a gap of at most --target, and reports the time of that fit (best of --repeat).
strads' time is its training time (summary.json "seconds"); the peers' time is their fit() call.

Usage: python lasso_bench.py --strads PATH --data FILE [--data FILE ...] --ratio R --out FILE.md
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

from benchlib import plot_gap_curves


def relative_gap(X, y, w, lam):
    n = X.shape[0]
    r = y - X @ w
    primal = r @ r / (2 * n) + lam * np.abs(w).sum()
    g = X.T @ r
    scale = min(1.0, n * lam / max(np.abs(g).max(), 1e-300))
    dual = (scale * (r @ y) - 0.5 * scale * scale * (r @ r)) / n
    return (primal - dual) / primal, primal


def run_strads(binary, data, lam, scheduler, workers, tol, budget):
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "lasso", "--data", data, "--lambda", repr(float(lam)), "--scheduler", scheduler,
               "--workers", str(workers), "--tol", repr(float(tol)), "--quiet", "--out", out,
               "--max-seconds", str(budget)]
        subprocess.run(cmd, check=True)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        coef = {}
        with open(os.path.join(out, "coefficients.csv")) as f:
            next(f)
            for line in f:
                index, value = line.strip().split(",")
                if index != "intercept":
                    coef[int(index)] = float(value)
    return summary, coef


def peer_fit(name, X, y, lam, tol):
    if name == "scikit-learn":
        from sklearn.linear_model import Lasso
        model = Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=1_000_000)
    elif name == "celer":
        from celer import Lasso
        model = Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=1000, max_epochs=1_000_000)
    elif name == "skglm":
        from skglm import Lasso
        model = Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=1000, max_epochs=1_000_000)
    else:
        raise ValueError(name)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, np.asarray(model.coef_).ravel()


def warm_up_peers():
    # skglm compiles with numba on first use; celer and scikit-learn import lazily. Not timed.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 20))
    y = rng.standard_normal(50)
    from scipy import sparse
    for name in ("scikit-learn", "celer", "skglm"):
        peer_fit(name, sparse.csc_matrix(X), y, 0.1, 1e-4)
        peer_fit(name, X, y, 0.1, 1e-4)


TOLS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", required=True)
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--ratio", type=float, default=0.002)
    ap.add_argument("--target", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0, help="most seconds of one strads run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()

    warm_up_peers()
    lines = []
    say = lambda s="": (print(s), lines.append(s))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    say(f"# Lasso: strads against scikit-learn, celer and skglm")
    say()
    say(f"- date: {datetime.date.today()}")
    say(f"- machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}")
    say(f"- commit: {commit}{' (with uncommitted changes)' if dirty else ''}")
    say(f"- command: `{args.command or ' '.join(sys.argv)}`")
    say(f"- objective 1/(2n)||y - Xw||^2 + lambda ||w||_1, no intercept, lambda = {args.ratio} x lambda_max")
    say(f"- time to a relative duality gap <= {args.target} (gap computed here, the same way for every method, "
        f"from the residual rescaled into the dual feasible set); best of {args.repeat} fits; strads: training seconds, peers: fit() seconds")
    say()

    for data in args.data:
        X, y = load_svmlight_file(data)
        X = X.tocsc()
        n = X.shape[0]
        lam = float(args.ratio * np.abs(X.T @ y).max() / n)
        say(f"## {os.path.basename(data)}: {X.shape[0]} x {X.shape[1]}, {X.nnz} nonzeros, lambda = {lam:.6g}")
        say()
        say("| method | workers | seconds | ratio to strads dynamic P=1 | objective | gap | nnz | tolerance used |")
        say("|---|---|---|---|---|---|---|---|")
        results = []
        curves = {}  # method -> (seconds, gap) of every fit made on the way: its gap against time
        strads_runs = [("dynamic", 1), ("dynamic", 2), ("shotgun", 1), ("shotgun", 2), ("sequential", 1), ("sequential", 2)]
        for scheduler, workers in strads_runs:
            best = None
            for tol in TOLS:
                if tol > args.target:
                    continue
                times = []
                for _ in range(args.repeat):
                    summary, coef = run_strads(args.strads, data, lam, scheduler, workers, tol, args.budget)
                    times.append(summary["seconds"])
                    # Slow runs are timed once: the spread of a run this long is small.
                    if summary["status"] != "converged" or summary["seconds"] > 10:
                        break
                w = np.zeros(X.shape[1])
                for j, v in coef.items():
                    w[j] = v
                gap, primal = relative_gap(X, y, w, lam)
                if summary["status"] not in ("diverged", "max-seconds"):
                    curves.setdefault(f"strads {scheduler} P={workers}", []).append((min(times), gap))
                if summary["status"] == "diverged":
                    best = (f"strads {scheduler}", workers, None, primal, gap, len(coef), "diverged")
                    break
                if summary["status"] == "max-seconds":
                    best = (f"strads {scheduler}", workers, None, primal, gap, len(coef),
                            f"not reached in {args.budget:g} s")
                    break
                if gap <= args.target:
                    best = (f"strads {scheduler}", workers, min(times), primal, gap, len(coef), f"--tol {tol:g}")
                    break
            results.append(best or (f"strads {scheduler}", workers, None, float("nan"), float("nan"), 0, "not reached"))
        for name in ("scikit-learn", "celer", "skglm"):
            best = None
            for tol in TOLS:
                times = []
                for _ in range(args.repeat):
                    seconds, w = peer_fit(name, X, y, lam, tol)
                    times.append(seconds)
                    if seconds > 10:
                        break
                gap, primal = relative_gap(X, y, w, lam)
                curves.setdefault(name, []).append((min(times), gap))
                if gap <= args.target:
                    best = (name, 1, min(times), primal, gap, int((w != 0).sum()), f"tol={tol:g}")
                    break
            results.append(best or (name, 1, None, float("nan"), float("nan"), 0, "not reached"))
        reference = next(r[2] for r in results if r[0] == "strads dynamic" and r[1] == 1)
        for name, workers, seconds, primal, gap, nnz, setting in results:
            ratio = f"{seconds / reference:.2f}" if seconds and reference else "-"
            shown = f"{seconds:.3f}" if seconds is not None else "-"
            say(f"| {name} | {workers} | {shown} | {ratio} | {primal:.10g} | {gap:.2e} | {nnz} | {setting} |")
        say()
        stem = os.path.splitext(os.path.basename(data))[0]
        plot_gap_curves(args.strads, say,
                        [(label, points) for label, points in curves.items()
                         if label.endswith("P=1") or not label.startswith("strads")],
                        args.out[:-3] + f"-{stem}.png", f"{stem}, Lasso, {args.ratio:g} x lambda_max")

    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
