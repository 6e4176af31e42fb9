"""MF at scale: strads against libmf on a generated Netflix-shaped problem (480,189 users x 17,770 items,
heavy-tailed activity and popularity, 1-5 stars; `strads gen mf --shape netflix`), in one run.

Every tool trains on train.tsv and is scored on the test pairs whose user and item have training ratings
(the same pairs for every tool; libmf has no factors for the others). strads runs with its defaults (only
--rank and --workers given) and with --algorithm ccd and als; libmf with lambda 0.1 per rating (its usual
setting, no biases) at 5, 10 and 20 iterations on 2 threads. Seconds: strads' training seconds
(summary.json: loading not counted); libmf's MF.fit() (its setup included). Peak RSS: strads' own
measure of its process (summary.json), which holds the ratings twice with residuals. "s to libmf's RMSE": the first point of
strads' trace.csv at or below libmf's test RMSE after 20 iterations.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time
import types

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import benchlib  # noqa: E402
from mf_bench import libmf_fit  # noqa: E402


def load(path):
    a = np.loadtxt(path, skiprows=1, dtype=np.float64)
    return a[:, 0].astype(np.int64) - 1, a[:, 1].astype(np.int64) - 1, a[:, 2]


def rmse(pred, truth):
    return float(np.sqrt(np.mean((truth - pred) ** 2)))


def strads_predictions(out, u, i):
    """strads' predictions of the pairs (u, i), 0-based generated ids, from its output folder."""
    with open(os.path.join(out, "model.json")) as f:
        info = json.load(f)
    users = [int(x) - 1 for x in open(os.path.join(out, "users.txt")).read().split()]
    items = [int(x) - 1 for x in open(os.path.join(out, "items.txt")).read().split()]
    row_u = np.full(max(users) + 1, -1)
    row_u[users] = np.arange(len(users))
    row_i = np.full(max(items) + 1, -1)
    row_i[items] = np.arange(len(items))
    w = np.load(os.path.join(out, "user_factors.npy"))
    h = np.load(os.path.join(out, "item_factors.npy"))
    ru, ri = row_u[u], row_i[i]
    pred = (w[ru] * h[ri]).sum(1) + info["mu"]
    if info["bias"] == "full":
        pred += np.load(os.path.join(out, "user_bias.npy"))[ru, 0] + np.load(os.path.join(out, "item_bias.npy"))[ri, 0]
    return pred


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", default="target/release/strads")
    ap.add_argument("--data", required=True, help="folder of train.tsv, test.tsv, truth.json")
    ap.add_argument("--ranks", default="10,50")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bench/mf_netflix.sh")
    args = ap.parse_args()

    truth = json.load(open(os.path.join(args.data, "truth.json")))
    tu, ti, tr = load(os.path.join(args.data, "train.tsv"))
    vu, vi, vr = load(os.path.join(args.data, "test.tsv"))
    seen_u = np.zeros(truth["users"], bool)
    seen_i = np.zeros(truth["items"], bool)
    seen_u[tu] = True
    seen_i[ti] = True
    warm = seen_u[vu] & seen_i[vi]
    vu, vi, vr = vu[warm], vi[warm], vr[warm]
    lines = [
        "# MF at scale: strads against libmf on a Netflix-shaped problem",
        "",
        f"- date: {time.strftime('%Y-%m-%d')}",
        f"- machine: {benchlib.machine()}",
        f"- commit: {benchlib.commit()}",
        f"- command: `{args.command}`",
        f"- data: `strads gen mf --shape netflix --ratings {truth['ratings']}` (seed {truth['seed']}, true rank "
        f"{truth['rank']}, noise {truth['noise']}): {len(tr):,} training ratings, {len(vr):,} test ratings of "
        f"users and items seen in training ({int((~warm).sum()):,} others left out), {truth['users']:,} users x "
        f"{truth['items']:,} items; mean {tr.mean():.3f}, std {tr.std():.3f}",
        "- strads: defaults, `--algorithm ccd` and `--algorithm als` (only --rank and --workers besides); "
        "seconds of training (summary.json), one run each",
        "- libmf 0.9.2: lambda_p2 = lambda_q2 = 0.1, no L1, no biases, 2 threads; MF.fit() seconds, one fit per "
        "iteration count",
        "",
    ]
    for rank in [int(x) for x in args.ranks.split(",")]:
        rows = []
        # libmf's factors have a row up to the largest training index of each side.
        data = types.SimpleNamespace(train_u=tu, train_i=ti, train_r=tr, n_users=int(tu.max()) + 1,
                                     n_items=int(ti.max()) + 1)
        for iterations in (5, 10, 20):
            seconds, P, Q = libmf_fit(data, rank, 0.1, iterations, 2)
            score = rmse((P[vu] * Q[vi]).sum(1), vr)
            rows.append((f"libmf SGD, {iterations} it.", 2, iterations, seconds, score, None))
            print(f"  libmf k={rank} it={iterations} {seconds:.2f}s test RMSE {score:.4f}", flush=True)
        for name, workers, extra in [("strads defaults", 1, []), ("strads defaults", 2, []),
                                     ("strads ccd", 2, ["--algorithm", "ccd"]),
                                     ("strads als", 2, ["--algorithm", "als"])]:
            out = f"bench/work/mf-netflix/k{rank}-{len(rows)}"
            cmd = [args.strads, "mf", "--data", os.path.join(args.data, "train.tsv"), "--test",
                   os.path.join(args.data, "test.tsv"), "--rank", str(rank), "--workers", str(workers), "--out",
                   out, "--quiet", *extra]
            print("  $ " + " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
            summary = json.load(open(os.path.join(out, "summary.json")))
            summary["out"] = out
            score = rmse(strads_predictions(out, vu, vi), vr)
            rows.append((name, workers, summary["iterations"], summary["seconds"], score, summary))
            print(f"  {name} k={rank} P={workers} {summary['seconds']:.2f}s test RMSE {score:.4f}", flush=True)
        libmf20 = rows[2]
        lines += [
            f"## Rank {rank}",
            "",
            f"| tool / config | workers | iterations | seconds | ÷ libmf 20 it. | test RMSE | s to libmf's "
            f"{libmf20[4]:.4f} | ÷ libmf's 20 it. | best test RMSE (iteration) | peak RSS |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, workers, iterations, seconds, score, summary in rows:
            rss = f"{summary['peak_rss_bytes_per_rank'] / 1e9:.2f} GB" if summary else "—"
            how = f"{iterations}" + (" (converged)" if summary and summary["converged"] else "")
            if summary and summary.get("cg_steps") is not None:
                how += f", cg_steps {summary['cg_steps']}"
            reach, best = "—", "—"
            if summary:
                # strads' trace scores every test pair (cold ones by the bias model): within 0.001 of the
                # warm pairs' RMSE here.
                with open(os.path.join(summary["out"], "trace.csv")) as f:
                    trace = [(int(r["iteration"]), float(r["seconds"]), float(r["test_rmse"]))
                             for r in csv.DictReader(f) if r["test_rmse"]]
                hit = next((t for t in trace if t[0] > 0 and t[2] <= libmf20[4]), None)
                reach = f"{hit[1]:.2f} | {hit[1] / libmf20[3]:.2f}" if hit else "not reached | —"
                top = min(trace, key=lambda t: t[2])
                best = f"{top[2]:.4f} ({top[0]})"
            else:
                reach = "— | —"
            lines.append(f"| {name} | {workers} | {how} | {seconds:.2f} | {seconds / libmf20[3]:.2f} | "
                         f"{score:.4f} | {reach} | {best} | {rss} |")
        lines.append("")
    benchlib.write_report(args.out, "\n".join(lines))


if __name__ == "__main__":
    main()
