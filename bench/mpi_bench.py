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

MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lda-iterations", type=int, default=50)
    parser.add_argument("--mf-iterations", type=int, default=20)
    parser.add_argument("--command", default="")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="strads-mpi-bench-")
    lines = [
        "# MPI against the embedded runtime",
        "",
        f"Machine: {machine()}. Commit: {commit()}. Command: `{args.command or ' '.join(sys.argv)}`.",
        f"MPI: {subprocess.run(['mpirun', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}.",
        "",
        "Each row: the same run as P worker threads of one process (embedded) and as P ranks of one worker each",
        f"(mpirun --oversubscribe), best training seconds of {args.repeat}; throughput is the application's work",
        "per training second. The models of both runtimes are compared byte for byte.",
        "",
    ]
    targets = []
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
        for p in [int(x) for x in args.workers.split(",")]:
            best = {}
            for runtime in ("embedded", "mpi"):
                out = os.path.join(work, f"{app}-{runtime}-{p}")
                for _ in range(args.repeat):
                    if runtime == "embedded":
                        s = run([args.strads] + cmd + ["--workers", str(p)], out)
                    else:
                        s = run(MPIRUN + ["-n", str(p), args.strads] + cmd, out)
                    if runtime not in best or s["seconds"] < best[runtime]["seconds"]:
                        best[runtime] = s
            same = all(filecmp.cmp(os.path.join(work, f"{app}-embedded-{p}", f),
                                   os.path.join(work, f"{app}-mpi-{p}", f), shallow=False) for f in spec["model"])
            e, m = best["embedded"], best["mpi"]
            te, tm = throughput(app, e, 0), throughput(app, m, 0)
            rows[p] = (e, m, te, tm)
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
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(targets))
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
