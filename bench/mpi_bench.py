"""MPI against the embedded runtime: the same run on P = 1, 2, 3 workers as threads of one process and as
ranks of an MPI job (one worker each), in one run on the same data.

For each application (Lasso and logistic regression on news20, LDA on 20 Newsgroups, MF on MovieLens
100K) the script reads every run's summary.json and prints one table: training seconds, throughput
(coordinate updates, tokens or ratings per second of training), its ratio MPI / embedded at the same
P, peak resident memory per rank, bytes sent per round, input bytes read per rank, and for LDA the
word-topic bytes per worker. Then it checks the targets (2 ranks at least 0.8x the throughput of 2
threads; LDA model bytes per rank about 1/P) and writes the table, the machine and the command to
--out. Every MPI model is also compared with the embedded one (they must be byte for byte equal).

Usage: python mpi_bench.py --strads PATH --out FILE.md [--apps lasso,logreg,lda,mf] [--repeat 3]
       [--lda-iterations 50] [--mf-iterations 20] [--command TEXT]
"""

import argparse
import filecmp
import math
import json
import os
import shutil
import subprocess
import sys
import tempfile

from benchlib import commit, machine

DATA = "bench/data"

# Each application: the training command (without --workers/--out) and the files that hold its model.
APPS = {
    "lasso": {
        "args": ["lasso", "--data", f"{DATA}/news20-comp.svm", "--lambda-ratio", "0.01", "--tol", "1e-6",
                 "--scheduler", "shotgun"],
        "model": ["coefficients.csv"],
        "unit": "updates/s",
    },
    "logreg": {
        "args": ["logreg", "--data", f"{DATA}/news20-comp.svm", "--lambda-ratio", "0.01", "--tol", "1e-6",
                 "--scheduler", "shotgun"],
        "model": ["coefficients.csv"],
        "unit": "updates/s",
    },
    "lda": {
        "args": ["lda", "--data", f"{DATA}/news20-lda/train", "--topics", "100", "--alpha", "0.5",
                 "--beta", "0.01", "--eval-every", "1000000"],
        "model": ["word_topic.npy"],
        "unit": "tokens/s",
    },
    "mf": {
        "args": ["mf", "--data", f"{DATA}/ml100k/train.tsv", "--test", f"{DATA}/ml100k/test.tsv", "--rank", "50",
                 "--lambda", "0.1", "--algorithm", "ccdpp"],
        "model": ["user_factors.npy", "item_factors.npy"],
        "unit": "ratings/s",
    },
}

# OpenMPI's launcher; MPICH's hydra (--launcher mpiexec.mpich) oversubscribes and binds nothing by itself.
OPENMPI = ["mpirun", "--oversubscribe", "--bind-to", "none"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(cmd, out):
    if os.path.exists(out):
        shutil.rmtree(out)
    done = subprocess.run(cmd + ["--out", out, "--quiet"], env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{done.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def throughput(app, s, iterations):
    if app in ("lasso", "logreg"):
        return s["updates"] / s["seconds"]
    if app == "lda":
        return s["tokens"] * s["iterations"] / s["seconds"]
    return s["train_ratings"] * s["iterations"] / s["seconds"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strads", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--apps", default="lasso,logreg,lda,mf")
    parser.add_argument("--workers", default="1,2,3")
    # Lasso rounds last microseconds: three workers on a 2-core machine spend them waiting for a core.
    parser.add_argument("--linear-workers", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lda-iterations", type=int, default=50)
    parser.add_argument("--mf-iterations", type=int, default=20)
    parser.add_argument("--command", default="")
    parser.add_argument("--launcher", default="mpirun", help="mpirun (OpenMPI) or mpiexec.mpich (MPICH)")
    args = parser.parse_args()
    mpirun = OPENMPI if args.launcher == "mpirun" else [args.launcher]
    version = subprocess.run([args.launcher, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    version = next((line.strip() for line in version if "version" in line.lower()), version[0] if version else "?")
    work = tempfile.mkdtemp(prefix="strads-mpi-bench-")
    lines = [
        "# MPI against the embedded runtime",
        "",
        f"Machine: {machine()}. Commit: {commit()}. Command: `{args.command or ' '.join(sys.argv)}`.",
        f"MPI: `{args.launcher}`, {version}.",
        "",
        "Each row: the same run as P worker threads of one process (embedded) and as P ranks of one worker each",
        f"({' '.join(mpirun)}), best training seconds of {args.repeat}; throughput is the application's work",
        "per training second. The models of both runtimes are compared byte for byte.",
        "",
    ]
    targets = []
    measured = {}
    for app in args.apps.split(","):
        spec = APPS[app]
        cmd = spec["args"] + {"lda": ["--iterations", str(args.lda_iterations)],
                              "mf": ["--iterations", str(args.mf_iterations)]}.get(app, [])
        lines += [f"## {app}", "", "`strads " + " ".join(cmd) + "`", "",
                  f"| P | embedded s | MPI s | embedded {spec['unit']} | MPI {spec['unit']} | MPI / embedded "
                  "| peak RSS per rank (MB), embedded / MPI | bytes sent per round | input bytes read per rank "
                  + ("| model bytes per worker " if app == "lda" else "") + "| same model |",
                  "|---|---|---|---|---|---|---|---|---|" + ("---|" if app == "lda" else "")]
        rows = {}
        measured.setdefault(app, {})
        counts = args.linear_workers if app in ("lasso", "logreg") else args.workers
        for p in [int(x) for x in counts.split(",")]:
            best = {}
            for runtime in ("embedded", "mpi"):
                out = os.path.join(work, f"{app}-{runtime}-{p}")
                for _ in range(args.repeat):
                    if runtime == "embedded":
                        s = run([args.strads] + cmd + ["--workers", str(p)], out)
                    else:
                        s = run(mpirun + ["-n", str(p), args.strads] + cmd, out)
                    if runtime not in best or s["seconds"] < best[runtime]["seconds"]:
                        best[runtime] = s
            same = all(filecmp.cmp(os.path.join(work, f"{app}-embedded-{p}", f),
                                   os.path.join(work, f"{app}-mpi-{p}", f), shallow=False) for f in spec["model"])
            e, m = best["embedded"], best["mpi"]
            te, tm = throughput(app, e, 0), throughput(app, m, 0)
            rows[p] = (e, m, te, tm)
            measured[app][p] = (e, m, te, tm)
            extra = f"| {m.get('model_bytes_per_worker', 0):,} " if app == "lda" else ""
            lines.append(
                f"| {p} | {e['seconds']:.3f} | {m['seconds']:.3f} | {te:,.0f} | {tm:,.0f} | {tm / te:.2f} "
                f"| {e['peak_rss_bytes_per_rank'] / 1e6:.1f} / {m['peak_rss_bytes_per_rank'] / 1e6:.1f} "
                f"| {m['bytes_sent_per_round']:,.0f} | {m['input_bytes_read_per_rank']:,} {extra}| {'yes' if same else 'NO'} |")
            print(lines[-1], flush=True)
        lines.append("")
        if 2 in rows:
            ratio = rows[2][3] / rows[2][2]
            targets.append(f"- {app}: 2 ranks reach {ratio:.2f}x the throughput of 2 threads "
                           f"(target 0.8x: {'met' if ratio >= 0.8 else 'NOT met'}).")
        if app == "lda" and 1 in rows:
            base = rows[1][1].get("model_bytes_per_worker", 0)
            for p, (_, m, _, _) in sorted(rows.items()):
                if base:
                    targets.append(f"- lda: model bytes per rank at P = {p}: {m['model_bytes_per_worker']:,} "
                                   f"= {m['model_bytes_per_worker'] / base:.2f} of P = 1 (1/P = {1 / p:.2f}).")
    lines += ["## Targets", ""] + targets + [""]
    lines += scaling_model(measured)
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(targets))
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- the scaling model

# An assumed cluster: one rank per machine of 16 cores (T = 16 worker threads), 10 Gb/s links, and
# 50 microseconds per MPI message step (TCP); a broadcast or gather of b bytes to R ranks costs
# log2(R) steps plus about 2 b / bandwidth.
CORES, BANDWIDTH, STEP = 16, 1.25e9, 50e-6


def steps(r):
    return max(1.0, math.log2(r))


def lda_cluster(r, tokens_per_worker_second):
    """PubMed (8.2M documents, 737.9M tokens, V = 141,043) at K = 1000, model-parallel, U = R x T blocks."""
    v, k, n = 141_043, 1000, 737_869_083
    u = r * CORES
    compute = n / (r * CORES * tokens_per_worker_second)
    # Per sub-round each rank sends one block of V K / U counts (about one byte each) to its left
    # neighbour; per iteration U sub-rounds, each a broadcast, a gather of topic totals and a commit.
    data = v * k / BANDWIDTH
    latency = u * 3 * steps(r) * STEP
    return compute, data + latency, v * k / u * r + 3 * 8 * k * (r - 1)


def mf_cluster(r, visits_per_worker_second):
    """Netflix (480,189 users, 17,770 items, 100,480,507 ratings) at rank 40, CCD++ with 3 inner iterations."""
    users, items, ratings, k, inner = 480_189, 17_770, 100_480_507, 40, 3
    compute = ratings * k * (2 * inner + 3) / (r * CORES * visits_per_worker_second)
    # Per factor: a gather and a broadcast of w_t and h_t (users + items values), then per inner
    # iteration a gather and a broadcast of u (users values) and of v (items values).
    per_factor = (2 + 2 * inner) * (users + items) * 8 / BANDWIDTH
    rounds = k * (1 + 2 * inner)
    latency = rounds * 3 * steps(r) * STEP
    return compute, k * per_factor + latency, mf_predicted_round(users, items, r, inner)


def lasso_cluster(r, set_size=1024):
    """100M features, 50,000 rows at 1e-4 density (5 stored values per column), L coordinates per round."""
    per_column = 5
    compute = set_size * per_column * 4 / (r * CORES) / 1e9  # a few flops per stored value
    # A broadcast of the plan and of the commit, and the gather of every worker's L partial sums.
    latency = 3 * steps(r) * STEP + (r * CORES * 8 * set_size) / BANDWIDTH
    return compute, latency, (r - 1) * set_size * 30


def mf_predicted_round(users, items, ranks, inner=3):
    """Bytes per CCD++ round on `ranks` ranks as this implementation sends them (evaluation rounds aside)."""
    side = users + items
    factor = 8 * side * (ranks - 1) * (1 + inner) + 8 * side * (1 + inner) * (ranks - 1) / ranks
    return factor / (1 + 2 * inner)


def scaling_model(measured):
    out = ["## Scaling model: communication against computation per iteration, 8 to 64 machines", "",
           f"Assumed cluster: one rank per machine, {CORES} worker threads each, {BANDWIDTH * 8 / 1e9:.0f} Gb/s links, "
           f"{STEP * 1e6:.0f} us per message step (a broadcast or gather to R ranks takes log2 R steps). Computation rates "
           "are the ones measured above on one worker of this machine (embedded, P = 1): MF's as rating visits (K (2 T + 3) per "
           "rating and iteration), LDA's scaled from K = 100 to K = 1000 by the ratio of the alias sampler's rates in "
           "bench/results/lda-2026-12-02.md (4.87M against 19.91M tokens/s).", ""]
    checks = []
    if "mf" in measured and 2 in measured["mf"]:
        m = measured["mf"][2][1]
        predicted = mf_predicted_round(m["users"], m["items"], 2)
        checks.append(f"- MF, 2 ranks: the model predicts {predicted:,.0f} bytes per CCD++ round (broadcasts of "
                      f"users + items values and gathers of owned entries), measured {m['bytes_sent_per_round']:,.0f} "
                      "(evaluation rounds included).")
    if "lda" in measured and 2 in measured["lda"]:
        m = measured["lda"][2][1]
        v, k, u = m["vocabulary"], m["topics"], m["blocks"]
        predicted = 2 * v * k / u
        checks.append(f"- LDA, 2 ranks: the model predicts {predicted:,.0f} bytes per sub-round (one block of V K / U "
                      f"counts per rank, a byte per count), measured {m['bytes_sent_per_round']:,.0f} (evaluation, "
                      "topic totals and the final gather included).")
    if checks:
        out += ["Checked against the measured bytes per round:", ""] + checks + [""]
    rates = {}
    if "lda" in measured and 1 in measured["lda"]:
        rates["lda"] = measured["lda"][1][2] * 4.87 / 19.91  # K = 100 rate, scaled to K = 1000 (bench/results/lda)
    if "mf" in measured and 1 in measured["mf"]:
        # ratings x iterations per second, times K (2 T + 3) rating visits per iteration (K = 50, T = 3 here)
        rates["mf"] = measured["mf"][1][2] * 50 * (2 * 3 + 3)
    out += ["| machines | LDA PubMed K=1000: compute s / comm s per iteration | MF Netflix rank 40: compute s / comm s "
            "per iteration | Lasso 100M features, L = 1024: compute us / comm us per round |", "|---|---|---|---|"]
    for r in (8, 16, 32, 64):
        cells = []
        if "lda" in rates:
            c, m, _ = lda_cluster(r, rates["lda"])
            cells.append(f"{c:.2f} / {m:.2f} ({m / c:.0%})")
        else:
            cells.append(DASH)
        if "mf" in rates:
            c, m, _ = mf_cluster(r, rates["mf"])
            cells.append(f"{c:.2f} / {m:.2f} ({m / c:.0%})")
        else:
            cells.append(DASH)
        c, m, _ = lasso_cluster(r)
        cells.append(f"{c * 1e6:.2f} / {m * 1e6:.0f}")
        out.append(f"| {r} | " + " | ".join(cells) + " |")
    out += ["", "Reading: LDA stays computation-bound to about 32 machines; past that its U = R x T sub-rounds per "
            "iteration make the per-round latency dominate (fewer, larger blocks per rank would cut it). MF's CCD++ "
            "moves two whole factor vectors per factor and inner iteration, independent of the number of machines, "
            "so for Netflix it is communication-bound already at 8 machines (the vectors are 4 MB and the work per "
            "machine a fraction of a second); ALS or row-wise CCD send the whole factor per half-step instead. The "
            "Lasso's rounds are tiny: a cluster round is latency-bound, so the set size L must grow with R for "
            "throughput to scale, which the dependency checks of the dynamic scheduler limit; at 64 machines the gather of "
            "every worker's partial sums (R T L values, not summed within a rank first) is the larger part.", ""]
    return out


DASH = "\u2014"


if __name__ == "__main__":
    main()
