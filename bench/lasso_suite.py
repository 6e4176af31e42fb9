"""A suite of Lasso and sparse logistic problems: strads with its defaults on 1 and 2 workers against
scikit-learn, celer and skglm (Lasso) or liblinear, celer and skglm (logistic), one table of ratios.

Every method solves the same objective (no intercept) at lambda_max/20, /100 and /1000 and is timed to a
relative duality gap of at most --target, computed here from the solution the same way for every
method. strads runs with its defaults (only --lambda-ratio, --workers and, if its own gap check stops
short of the target here, a tighter --tol); each peer's tolerance is the loosest of a ladder that
reaches the target. Best of --repeat (slow fits are timed once). strads: training seconds from
summary.json; peers: fit() seconds, skglm after its JIT warm-up.

Usage: python lasso_suite.py --strads PATH --problem NAME=FILE [...] --out FILE.md [--logistic NAME=FILE ...]
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
from sklearn.datasets import load_svmlight_file

from benchlib import commit, machine, write_report
from lasso_bench import peer_fit, relative_gap, warm_up_peers
from logreg_bench import logistic_gap, peer_logreg, read_coefficients
from logreg_bench import warm_up_peers as warm_up_logistic_peers

RATIOS = [1 / 20, 1 / 100, 1 / 1000]
PEER_TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
SLOW = 5.0


def strads_fit(binary, command, data, ratio, workers, tol, budget, features):
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, command, "--data", data, "--lambda-ratio", repr(ratio), "--workers", str(workers),
               "--quiet", "--out", out, "--max-seconds", str(budget)]
        if tol is not None:
            cmd += ["--tol", repr(tol)]
        subprocess.run(cmd, check=True)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        return summary, read_coefficients(os.path.join(out, "coefficients.csv"), features)


def best_of(fit, repeat):
    times, result = [], None
    for _ in range(repeat):
        seconds, result = fit()
        times.append(seconds)
        if seconds > SLOW:
            break
    return min(times), result


def time_strads(args, command, data, ratio, workers, gap_of, features):
    for tol in (None, 1e-7, 1e-8, 1e-9):
        def fit():
            summary, w = strads_fit(args.strads, command, data, ratio, workers, tol, args.budget, features)
            return summary["seconds"], (summary, w)
        seconds, (summary, w) = best_of(fit, args.repeat)
        if summary["status"] in ("diverged", "max-seconds"):
            return None, summary
        if gap_of(w) <= args.target:
            return seconds, summary
    return None, summary


def time_peer(name, fitter, X, y, lam, gap_of, target, repeat):
    for tol in PEER_TOLS:
        seconds, w = best_of(lambda: fitter(name, X, y, lam, tol), repeat)
        if gap_of(w) <= target:
            return seconds
    return None


def fmt(seconds):
    return f"{seconds:.3f}" if seconds is not None else "-"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def suite(args, say, command, specs, labels, gap, fitter, peers):
    """One table: each problem `NAME=FILE` of `specs` at every ratio, strads `command` on 1 and 2
    workers and each peer `(column, name, counts_as_best)`; `labels` maps the file's labels to the
    loss', `gap(X, y, w, lam)` scores a solution. lambda_max is the gradient's largest entry at 0."""
    say("| problem | shape, nonzeros | lambda | strads P=1 | strads P=2 | split rounds P=2 | "
        + " | ".join(column for column, _, _ in peers) + " | P2/best | P2/P1 |")
    say("|" + "---|" * (8 + len(peers)))
    for spec in specs:
        name, data = spec.split("=", 1)
        X, y = load_svmlight_file(data)
        X = X.tocsc()
        y = labels(y)
        n, p = X.shape
        # The gradient at w = 0: X^T y for the squared loss, X^T (y / 2) for the logistic one.
        lam_max = float(np.abs(X.T @ (y if command == "lasso" else 0.5 * y)).max() / n)
        for r in RATIOS:
            lam = r * lam_max
            gap_of = lambda w, lam=lam: gap(X, y, w, lam)[0]
            s1, _ = time_strads(args, command, data, r, 1, gap_of, p)
            s2, summary2 = time_strads(args, command, data, r, 2, gap_of, p)
            times = [time_peer(peer, fitter, X, y, lam, gap_of, args.target, args.repeat) for _, peer, _ in peers]
            best = min((t for t, (_, _, counts) in zip(times, peers) if counts and t is not None), default=None)
            say(f"| {name} | {n} x {p}, {X.nnz} | 1/{round(1 / r)} | {fmt(s1)} | {fmt(s2)} | "
                f"{summary2.get('split_rounds', 0)}/{summary2.get('rounds', 0)} | "
                + " | ".join(fmt(t) for t in times) + f" | {ratio(s2, best)} | {ratio(s2, s1)} |")
    say()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", required=True)
    ap.add_argument("--problem", action="append", default=[], help="NAME=FILE, a regression problem")
    ap.add_argument("--logistic", action="append", default=[], help="NAME=FILE, a classification problem")
    ap.add_argument("--target", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()

    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    say("# Linear models suite: strads defaults on 1 and 2 workers against the fastest peers")
    say()
    say(f"- date: {datetime.date.today()}")
    say(f"- machine: {machine()}")
    say(f"- commit: {commit()}")
    say(f"- command: `{args.command or ' '.join(sys.argv)}`")
    say(f"- time to a relative duality gap <= {args.target} (computed here, the same for every method), no "
        f"intercept; best of {args.repeat} (fits over {SLOW:g} s timed once); strads: training seconds with "
        "its defaults; peers: fit() seconds at the loosest tolerance of a ladder that reaches the gap")
    say("- `P2/best` is strads on 2 workers over the fastest peer (scikit-learn's Lasso aside; below 1: strads wins); "
        "`P2/P1` is 2 workers over 1")
    say()

    if args.problem:
        warm_up_peers()
        say("## Lasso: 1/(2n) ||y - X w||^2 + lambda ||w||_1")
        say()
        suite(args, say, "lasso", args.problem, lambda y: y, relative_gap, peer_fit,
              [("scikit-learn", "scikit-learn", False), ("celer", "celer", True), ("skglm", "skglm", True)])
    if args.logistic:
        warm_up_logistic_peers()
        say("## Sparse logistic regression: (1/n) sum log(1 + exp(-y x.w)) + lambda ||w||_1")
        say()
        suite(args, say, "logreg", args.logistic, lambda y: np.where(y > 0, 1.0, -1.0), logistic_gap, peer_logreg,
              [("liblinear", "scikit-learn liblinear", True), ("celer", "celer", True), ("skglm", "skglm", True)])

    write_report(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
