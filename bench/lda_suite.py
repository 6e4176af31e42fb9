"""LDA suite: strads with its defaults against tomotopy on corpora of several shapes, in one run.

Each corpus is a folder written by `strads lda prepare` (or `strads gen lda`); every tool trains the
same model -- collapsed Gibbs with a fixed symmetric alpha = 50/K and beta = 0.01 -- on the same
tokens, 2 workers each. strads runs with its defaults (`--sampler auto`, which summary.json names) and
with each sampler forced, so the table shows what the automatic choice gave up or gained. Every run is
a child process under /usr/bin/time, so peak RSS is the whole process's, tomotopy's included.

For each corpus and K the table gives tokens per second, the log-likelihood per token after N
iterations, the seconds to reach tomotopy's log-likelihood after N iterations, and peak RSS, each
with its ratio to tomotopy.

Usage: python lda_suite.py --strads PATH --corpus NAME=DIR [--corpus ...] --topics 100,1000
       --iterations 100,50 --out FILE.md [--command TEXT]
       python lda_suite.py --tomotopy-child DIR K ITERATIONS EVAL_EVERY   (one tomotopy run, JSON out)
"""

import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

from benchlib import commit, machine, write_report
from lda_bench import read_corpus

warnings.filterwarnings("ignore", message="The training result may differ")
DASH = "\u2014"


def timed(cmd):
    """Runs cmd under /usr/bin/time; returns (exit code, stdout, peak RSS in bytes)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        text = rss.read().strip().splitlines()
        peak = int(text[-1]) * 1024 if text and text[-1].isdigit() else None
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
    return done.returncode, done.stdout, peak


def tomotopy_child(data, k, iterations, eval_every):
    import tomotopy as tp

    vocab, docs = read_corpus(data)
    model = tp.LDAModel(k=k, alpha=50.0 / k, eta=0.01, seed=1)
    model.optim_interval = 0  # plain collapsed Gibbs with the fixed alpha
    for pairs in docs:
        words = [vocab[w] for w, c in pairs for _ in range(c)]
        if words:
            model.add_doc(words)
    model.train(0, workers=2)
    trace, seconds, done = [], 0.0, 0
    while done < iterations:
        step = min(eval_every, iterations - done)
        start = time.perf_counter()
        model.train(step, workers=2)
        seconds += time.perf_counter() - start
        done += step
        trace.append((done, seconds, model.ll_per_word))
    print(json.dumps({"trace": trace, "tokens": model.num_words}))


def run_tomotopy(data, k, iterations, eval_every):
    code, out, peak = timed([sys.executable, os.path.abspath(__file__), "--tomotopy-child", data, str(k),
                             str(iterations), str(eval_every)])
    if code != 0:
        return None
    result = json.loads(out.strip().splitlines()[-1])
    trace = [tuple(row) for row in result["trace"]]
    return {"name": "tomotopy, 2 workers", "trace": trace, "peak": peak,
            "tokens_per_second": result["tokens"] * trace[-1][0] / trace[-1][1]}


def run_strads(binary, data, k, iterations, eval_every, sampler, workdir):
    out = os.path.join(workdir, f"{os.path.basename(os.path.dirname(data.rstrip('/')))}-k{k}-{sampler}")
    cmd = [binary, "lda", "--data", data, "--topics", str(k), "--iterations", str(iterations), "--workers", "2",
           "--seed", "1", "--eval-every", str(eval_every), "--quiet", "--out", out,
           # alpha stays fixed, as tomotopy's with optim_interval = 0: the log-likelihoods compare.
           "--optimize-alpha", "off"]
    if sampler != "default":
        cmd += ["--sampler", sampler]
    print("  $ " + " ".join(cmd), flush=True)
    code, _, peak = timed(cmd)
    if code != 0:
        return None
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "trace.csv")) as f:
        trace = [(int(r["iteration"]), float(r["seconds"]), float(r["log_likelihood_per_token"]))
                 for r in csv.DictReader(f)]
    name = f"strads defaults ({summary['sampler']})" if sampler == "default" else f"strads {sampler}"
    return {"name": name, "trace": trace, "peak": peak, "tokens_per_second": float(summary["tokens_per_second"])}


def seconds_to(trace, target):
    for _, seconds, ll in trace:
        if ll >= target:
            return seconds
    return None


def ratio(value, base):
    return f" ({value / base:.2f})" if value is not None and base else ""


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--tomotopy-child":
        tomotopy_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", required=True)
    ap.add_argument("--corpus", action="append", required=True, help="NAME=PREPARED_DIR")
    ap.add_argument("--topics", default="100,1000")
    ap.add_argument("--iterations", default="100,50", help="iterations at each K, in the order of --topics")
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--workdir", default="bench/work/lda-suite")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()
    topics = [int(k) for k in args.topics.split(",")]
    iterations = [int(n) for n in args.iterations.split(",")]
    if len(iterations) != len(topics):
        ap.error("--iterations needs one value per --topics value")
    os.makedirs(args.workdir, exist_ok=True)

    lines = [
        "# LDA suite: strads defaults against tomotopy on corpora of several shapes",
        "",
        f"- date: {datetime.date.today().isoformat()}",
        f"- machine: {machine()}",
        f"- commit: {commit()}",
        f"- command: `{args.command}`",
        "- model: collapsed Gibbs, alpha = 50/K fixed (tomotopy `optim_interval = 0`), beta = 0.01, 2 workers "
        "each, seed 1, one run each; seconds are training seconds (evaluation not counted)",
        "- `to tomotopy's ll`: seconds until the run first reaches tomotopy's log-likelihood after N iterations, "
        "evaluated every 10 iterations (ratio to tomotopy's time); peak RSS from /usr/bin/time",
        "",
    ]
    for spec in args.corpus:
        name, data = spec.split("=", 1)
        vocab, docs = read_corpus(data)
        lengths = [sum(c for _, c in d) for d in docs]
        tokens = sum(lengths)
        weighted = sum(n * n for n in lengths) / max(tokens, 1)
        lines += [f"## {name}: {len(docs):,} documents, {tokens:,} tokens, {len(vocab):,} words, "
                  f"mean length {tokens / max(len(docs), 1):.1f} (token-weighted {weighted:.0f})", ""]
        for k, n in zip(topics, iterations):
            print(f"{name} K = {k}, {n} iterations", flush=True)
            peer = run_tomotopy(data, k, n, args.eval_every)
            runs = [run_strads(args.strads, data, k, n, args.eval_every, s, args.workdir)
                    for s in ("default", "sparse", "alias")]
            lines += [f"K = {k}, {n} iterations:", "",
                      "| run | tokens/s | ll/token @N | s to tomotopy's ll | peak RSS |", "|---|---|---|---|---|"]
            target = peer["trace"][-1][2] if peer else None
            base_time = peer["trace"][-1][1] if peer else None
            for run in ([peer] if peer else []) + [r for r in runs if r]:
                reach = seconds_to(run["trace"], target) if target is not None else None
                lines.append(
                    f"| {run['name']} | {run['tokens_per_second'] / 1e6:.2f}M"
                    f"{ratio(run['tokens_per_second'], peer['tokens_per_second'] if peer else None)} "
                    f"| {run['trace'][-1][2]:.4f} "
                    f"| {f'{reach:.2f}' if reach is not None else 'not in N iterations'}"
                    f"{ratio(reach, base_time)} "
                    f"| {run['peak'] / 1e6:.0f} MB{ratio(run['peak'], peer['peak'] if peer else None)} |"
                    if run["peak"] else f"| {run['name']} | failed | | | |")
            lines.append("")
            print("\n".join(lines[-8:]), flush=True)
    write_report(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
