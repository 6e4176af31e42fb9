"""strads from Python against the Python peers, through the calls a Python user makes, in one run.

Lasso: `strads.linear_model.Lasso` with its defaults (n_workers=None, scheduler "block") against
scikit-learn's `Lasso`, celer and skglm on the problems of the Lasso suite at lambda_max/20, /100
and /1000, no intercept, each timed by the wall time of `fit(X, y)` (input checks and strads' copy
into its own rows included) to a relative duality gap of --target computed here the same way for
every method; each method's tolerance is the loosest of a ladder that reaches it; best of --repeat.

LDA: `strads.LDAModel` against `tomotopy.LDAModel` on the same documents, alpha = 50/K fixed,
beta = 0.01, 2 workers: the wall time of `train(N)`, the log-likelihood per token after N
iterations, and the seconds until each first reaches tomotopy's final log-likelihood (strads'
from its callback, tomotopy's from training in steps of 10).

Usage: python python_suite.py --problem NAME=FILE [...] --corpus NAME=DIR [...] --topics 100
       --iterations 100 --out FILE.md [--command TEXT]
"""

import argparse
import datetime
import sys
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

from benchlib import commit, machine, write_report
from lasso_bench import peer_fit, relative_gap, warm_up_peers
from lasso_suite import RATIOS, PEER_TOLS, best_of, fmt, ratio
from lda_bench import read_corpus

STRADS_TOLS = [1e-6, 1e-7, 1e-8, 1e-9, 1e-10]


def strads_lasso(X, y, lam, tol):
    from strads.linear_model import Lasso

    model = Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=None)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model.coef_


def time_to(fitter, tols, gap_of, target, repeat):
    for tol in tols:
        seconds, w = best_of(lambda: fitter(tol), repeat)
        if gap_of(w) <= target:
            return seconds
    return None


def lasso_table(args, say):
    peers = ["scikit-learn", "celer", "skglm"]
    say("## Lasso: `strads.linear_model.Lasso` against the Python peers, fit() seconds")
    say()
    say("| problem | shape, nonzeros | lambda | strads | " + " | ".join(peers) + " | strads/best of celer, skglm |")
    say("|" + "---|" * (5 + len(peers)))
    for spec in args.problem:
        name, data = spec.split("=", 1)
        X, y = load_svmlight_file(data)
        X = X.tocsc()
        n, p = X.shape
        lam_max = float(np.abs(X.T @ y).max() / n)
        for r in RATIOS:
            lam = r * lam_max
            gap_of = lambda w, lam=lam: relative_gap(X, y, w, lam)[0]
            mine = time_to(lambda tol: strads_lasso(X, y, lam, tol), STRADS_TOLS, gap_of, args.target, args.repeat)
            times = [time_to(lambda tol, peer=peer: peer_fit(peer, X, y, lam, tol), PEER_TOLS, gap_of, args.target,
                             args.repeat) for peer in peers]
            best = min((t for t in times[1:] if t is not None), default=None)
            say(f"| {name} | {n} x {p}, {X.nnz} | 1/{round(1 / r)} | {fmt(mine)} | "
                + " | ".join(fmt(t) for t in times) + f" | {ratio(mine, best)} |")
    say()


def documents(data):
    vocab, docs = read_corpus(data)
    return [[vocab[w] for w, c in pairs for _ in range(c)] for pairs in docs if pairs]


def lda_runs(words, k, iterations):
    import strads
    import tomotopy as tp

    peer = tp.LDAModel(k=k, alpha=50.0 / k, eta=0.01, seed=1)
    peer.optim_interval = 0
    for doc in words:
        peer.add_doc(doc)
    peer.train(0, workers=2)
    peer_trace, seconds = [], 0.0
    while len(peer_trace) * 10 < iterations:
        step = min(10, iterations - len(peer_trace) * 10)
        start = time.perf_counter()
        peer.train(step, workers=2)
        seconds += time.perf_counter() - start
        peer_trace.append((seconds, peer.ll_per_word))

    mine = strads.LDAModel(k=k, alpha=50.0 / k, eta=0.01, seed=1, optimize_interval=0)
    for doc in words:
        mine.add_doc(doc)
    trace = []
    start = time.perf_counter()
    mine.train(iterations, workers=2, callback=lambda p: trace.append((p["seconds"], p["log_likelihood_per_token"])))
    wall = time.perf_counter() - start
    return peer.num_words, (seconds, peer_trace), (wall, trace, mine.ll_per_word)


def lda_table(args, say):
    say("## LDA: `strads.LDAModel` against `tomotopy.LDAModel`, 2 workers, train() seconds")
    say()
    say("| corpus | tokens | K | N | tomotopy s | strads s | strads/tomotopy | ll/token tomotopy | ll/token strads "
        "| s to tomotopy's ll: tomotopy | strads |")
    say("|" + "---|" * 11)
    for spec in args.corpus:
        name, data = spec.split("=", 1)
        words = documents(data)
        for k in args.topics:
            tokens, (peer_s, peer_trace), (wall, trace, final) = lda_runs(words, k, args.iterations)
            target = peer_trace[-1][1]
            reach = next((s for s, ll in trace if ll >= target), None)
            say(f"| {name} | {tokens} | {k} | {args.iterations} | {peer_s:.2f} | {wall:.2f} | {ratio(wall, peer_s)} | "
                f"{target:.4f} | {final:.4f} | {peer_s:.2f} | {fmt(reach)} |")
    say()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", action="append", default=[], help="NAME=FILE, a regression problem (svmlight)")
    ap.add_argument("--corpus", action="append", default=[], help="NAME=DIR, a corpus prepared by strads lda prepare")
    ap.add_argument("--topics", type=lambda s: [int(k) for k in s.split(",")], default=[100])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--target", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    import strads

    say("# strads from Python against the Python peers")
    say()
    say(f"- date: {datetime.date.today()}")
    say(f"- machine: {machine()}")
    say(f"- commit: {commit()}; strads {strads.__version__} built into the benchmark's environment by `pip install .`")
    say(f"- command: `{args.command or ' '.join(sys.argv)}`")
    say(f"- Lasso: fit() wall seconds to a relative duality gap <= {args.target} (computed here), no intercept, "
        f"best of {args.repeat}; strads with its defaults (n_workers=None: 1 worker below 1M stored values, "
        "every core above); skglm after its JIT warm-up")
    say("- LDA: alpha = 50/K fixed, beta = 0.01, 2 workers each; tomotopy trained in steps of 10 iterations, "
        "strads in one train(N) with its callback every 10")
    say()
    if args.problem:
        warm_up_peers()
        strads_lasso(np.eye(3), np.ones(3), 0.1, 1e-4)
        lasso_table(args, say)
    if args.corpus:
        lda_table(args, say)
    write_report(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
