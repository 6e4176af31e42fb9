"""Implicit feedback side by side: strads (ALS with conjugate gradient, exact ALS, row CCD; P = 1 and 2)
against the `implicit` library's ALS (1 and 2 threads), on one split of MovieLens 100K, in one run.

The data. The same split as bench/mf.sh (bench/data/ml100k/{train,test}.tsv): every rating r of 1..5 is an
interaction of that strength; the held-out pairs are the test interactions.

The model. Both tools minimize the objective of Hu, Koren and Volinsky (2008) over every (user, item) pair,

    sum over all (u, i) of c_ui (p_ui - w_u . h_i)^2 + lambda (sum_u |w_u|^2 + sum_i |h_i|^2),

p_ui = 1 for an interaction, else 0, c_ui = 1 + alpha r_ui for an interaction, else 1. strads computes
c = 1 + alpha r itself (`--implicit --alpha A`); implicit 0.7 takes the matrix's values as the confidences
(`confidence - 1` multiplies the observed rows in its CG, alpha = 1 leaves them as given), so it is given
the matrix of 1 + alpha r. lambda is the same plain L2 in both (no frequency weighting), the initial entries
uniform below 0.01 in both, and both run 3 CG steps per row from the row's last value (implicit's default
solver) for the same number of iterations. implicit runs in its default float32; strads in float64.

Scores. For every user with test interactions, the items are ranked by w_u . h_i with the user's training
items left out; precision@k (hits over the sum of min(k, test items)), MAP@k and NDCG@k as implicit's
ranking_metrics_at_k defines them, computed here by one function for every tool (strads' own summary
figures are checked against it). Seconds: strads' training seconds (summary.json; loading not counted);
implicit's model.fit() (the transposition of the matrix it makes is counted, the CSR build is not). Each
point: the least seconds of R runs (5 unless --repeat says); the metrics of the last (both tools are deterministic for a seed).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(__file__))
import benchlib  # noqa: E402


def read_tsv(path):
    users, items, values = [], [], []
    with open(path) as f:
        next(f)
        for line in f:
            u, i, r = line.rstrip("\n").split("\t")[:3]
            users.append(u)
            items.append(i)
            values.append(float(r))
    return users, items, np.array(values)


def metrics(w, h, train_rows, test_rows, k):
    """precision@k, MAP@k, NDCG@k over users with test items (implicit's definitions)."""
    scores = w @ h.T
    discount = 1.0 / np.log2(np.arange(k) + 2)
    hits = possible = 0
    ap_sum = ndcg_sum = 0.0
    users = 0
    for u, likes in test_rows.items():
        seen = train_rows.get(u)
        if not seen:
            continue
        s = scores[u].copy()
        s[list(seen)] = -np.inf
        # best first, ties by the lower item row (as strads breaks them)
        order = np.lexsort((np.arange(len(s)), -s))[:k]
        relevant = min(k, len(likes))
        found = 0
        ap = dcg = 0.0
        for n, i in enumerate(order):
            if i in likes:
                found += 1
                ap += found / (n + 1)
                dcg += discount[n]
        hits += found
        possible += relevant
        ap_sum += ap / relevant
        ndcg_sum += dcg / discount[:relevant].sum()
        users += 1
    return {"precision": hits / possible, "map": ap_sum / users, "ndcg": ndcg_sum / users, "users": users}


def objective(w, h, confidence, lam):
    """The objective above, densely (c and p from the CSR of confidences)."""
    s = w @ h.T
    dense_c = np.ones_like(s)
    dense_p = np.zeros_like(s)
    coo = confidence.tocoo()
    dense_c[coo.row, coo.col] = coo.data
    dense_p[coo.row, coo.col] = 1.0
    return float((dense_c * (dense_p - s) ** 2).sum() + lam * ((w * w).sum() + (h * h).sum()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", required=True)
    ap.add_argument("--split-dir", required=True)
    ap.add_argument("--ranks", default="10,50")
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.01)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bench/mf_implicit.sh")
    args = ap.parse_args()

    import implicit
    from threadpoolctl import threadpool_limits

    train_path = os.path.join(args.split_dir, "train.tsv")
    test_path = os.path.join(args.split_dir, "test.tsv")
    tu, ti, tr = read_tsv(train_path)
    user_ids = {u: n for n, u in enumerate(dict.fromkeys(tu))}
    item_ids = {i: n for n, i in enumerate(dict.fromkeys(ti))}
    rows = np.array([user_ids[u] for u in tu])
    cols = np.array([item_ids[i] for i in ti])
    n_users, n_items = len(user_ids), len(item_ids)
    confidence = sp.csr_matrix((1.0 + args.alpha * tr, (rows, cols)), shape=(n_users, n_items))
    train_rows = {}
    for u, i in zip(rows, cols):
        train_rows.setdefault(int(u), set()).add(int(i))
    vu, vi, _ = read_tsv(test_path)
    test_rows = {}
    for u, i in zip(vu, vi):
        if u in user_ids and i in item_ids:
            test_rows.setdefault(user_ids[u], set()).add(item_ids[i])

    lines = [
        "# MF, implicit feedback: strads against implicit",
        "",
        f"- date: {time.strftime('%Y-%m-%d')}",
        f"- machine: {benchlib.machine()}",
        f"- commit: {benchlib.commit()}",
        f"- command: `{args.command}`",
        f"- data: MovieLens 100K, the split of bench/mf.sh: {len(tr):,} training interactions (value = the "
        f"rating), {sum(len(v) for v in test_rows.values()):,} test interactions, {n_users} users x {n_items} items",
        f"- model: confidence 1 + {args.alpha} r, lambda {args.lam} (plain L2), {args.iterations} iterations, "
        f"3 CG steps per row unless the row says otherwise; metrics at k = {args.k}, training items left out",
        f"- peer: implicit {implicit.__version__} (AlternatingLeastSquares, CPU, float32, use_cg=True, "
        "given the matrix of confidences with alpha = 1)",
        "- seconds: least of the repeats; strads: training only (summary.json); implicit: model.fit()",
        "",
    ]
    for rank in [int(x) for x in args.ranks.split(",")]:
        results = []
        for threads in (1, 2):
            best = math.inf
            for rep in range(args.repeat):
                model = implicit.cpu.als.AlternatingLeastSquares(
                    factors=rank, regularization=args.lam, alpha=1.0, iterations=args.iterations,
                    use_cg=True, num_threads=threads, random_state=1, calculate_training_loss=False,
                )
                with threadpool_limits(1, "blas"):
                    start = time.perf_counter()
                    model.fit(confidence, show_progress=False)
                    best = min(best, time.perf_counter() - start)
            w = np.asarray(model.user_factors, dtype=np.float64)
            h = np.asarray(model.item_factors, dtype=np.float64)
            m = metrics(w, h, train_rows, test_rows, args.k)
            results.append((f"implicit ALS (CG)", threads, best, m, objective(w, h, confidence, args.lam), None))
            print(f"  implicit k={rank} threads={threads} {best:.3f}s NDCG@{args.k}={m['ndcg']:.4f}", flush=True)
        configs = [
            ("strads defaults (--implicit)", 1, []),
            ("strads defaults (--implicit)", 2, []),
            ("strads als, CG 3 steps", 1, ["--algorithm", "als", "--cg-steps", "3", "--tol", "0"]),
            ("strads als, CG 3 steps", 2, ["--algorithm", "als", "--cg-steps", "3", "--tol", "0"]),
            ("strads als, exact (--cg-steps 0)", 2, ["--algorithm", "als", "--cg-steps", "0", "--tol", "0"]),
            ("strads ccd", 2, ["--algorithm", "ccd", "--tol", "0"]),
        ]
        for name, workers, extra in configs:
            out = f"bench/work/mf-implicit/k{rank}-{len(results)}"
            best = math.inf
            # The defaults rows give only what a newcomer gives: the data, the rank, the workers.
            tuned = [] if name.startswith("strads defaults") else [
                "--alpha", str(args.alpha), "--lambda", str(args.lam), "--iterations", str(args.iterations)]
            cmd = [args.strads, "mf", "--data", train_path, "--test", test_path, "--implicit", "--rank", str(rank),
                   "--workers", str(workers), "--top-k", str(args.k), "--out", out, "--quiet", *tuned, *extra]
            for rep in range(args.repeat):
                subprocess.run(cmd, check=True)
                with open(os.path.join(out, "summary.json")) as f:
                    summary = json.load(f)
                best = min(best, summary["seconds"])
            print("  $ " + " ".join(cmd), flush=True)
            w = np.load(os.path.join(out, "user_factors.npy"))
            h = np.load(os.path.join(out, "item_factors.npy"))
            with open(os.path.join(out, "users.txt")) as f:
                order_u = [user_ids[x] for x in f.read().split("\n") if x]
            with open(os.path.join(out, "items.txt")) as f:
                order_i = [item_ids[x] for x in f.read().split("\n") if x]
            w_full = np.zeros((n_users, rank))
            h_full = np.zeros((n_items, rank))
            w_full[order_u] = w
            h_full[order_i] = h
            m = metrics(w_full, h_full, train_rows, test_rows, args.k)
            own = summary["ranking"]
            if abs(own["ndcg"] - m["ndcg"]) > 1e-9 or abs(own["precision"] - m["precision"]) > 1e-9:
                print(f"  warning: strads' own metrics {own} differ from this script's {m}", flush=True)
            note = f"{summary['iterations']} it." if name.startswith("strads defaults") else None
            results.append((name, workers, best, m, objective(w_full, h_full, confidence, args.lam), note))
            print(f"  strads {name} k={rank} P={workers} {best:.3f}s NDCG@{args.k}={m['ndcg']:.4f}", flush=True)
        peer = next(r for r in results if r[0].startswith("implicit") and r[1] == 2)
        k = args.k
        lines += [
            f"## Rank {rank}",
            "",
            f"| tool / config | workers | seconds | ÷ implicit (2 threads) | precision@{k} | MAP@{k} | NDCG@{k} "
            "| NDCG ÷ implicit's | objective |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name, workers, secs, m, obj, note in results:
            label = f"{name} ({note})" if note else name
            lines.append(
                f"| {label} | {workers} | {secs:.3f} | {secs / peer[2]:.2f} | {m['precision']:.4f} | {m['map']:.4f} "
                f"| {m['ndcg']:.4f} | {m['ndcg'] / peer[3]['ndcg']:.3f} | {obj:.1f} |"
            )
        lines.append("")
        defaults = next(r for r in results if r[0].startswith("strads defaults") and r[1] == 2)
        quality = defaults[3]["ndcg"] >= peer[3]["ndcg"]
        speed = defaults[2] <= peer[2]
        lines += [
            "Targets (strads defaults on 2 workers against implicit on 2 threads):",
            "",
            f"- ranking quality at least implicit's: NDCG@{k} {defaults[3]['ndcg']:.4f} against "
            f"{peer[3]['ndcg']:.4f}: {'met' if quality else 'NOT met'}",
            f"- in at most its time: {defaults[2]:.3f} s against {peer[2]:.3f} s "
            f"({defaults[2] / peer[2]:.2f}x): {'met' if speed else 'NOT met'}",
            "",
        ]
    benchlib.write_report(args.out, "\n".join(lines))


if __name__ == "__main__":
    main()
