"""The Python package against the command line on the same data and seed: the same models, to the bit."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import strads

from test_topic import planted

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    """The strads binary of this checkout (built by cargo if it is not yet)."""
    subprocess.run(["cargo", "build", "-q", "-p", "strads"], cwd=ROOT, check=True)
    binary = ROOT / "target" / "debug" / "strads"
    assert binary.exists(), binary
    return str(binary)


def first_appearance(ids):
    """`ids` renumbered 0, 1, ... in the order they first appear, as the command line numbers them."""
    _, first = np.unique(ids, return_index=True)
    order = np.unique(ids)[np.argsort(first)]
    mapping = {value: k for k, value in enumerate(order)}
    return np.array([mapping[v] for v in ids])


def test_lda_gives_the_command_lines_log_likelihood(cli, tmp_path):
    docs, _ = planted(documents=120, length=30, seed=2)
    vocab, ids, lines, expanded = [], {}, [], []
    for doc in docs:
        counts = {}
        for word in doc:
            index = ids.setdefault(word, len(vocab))
            if index == len(vocab):
                vocab.append(word)
            counts[index] = counts.get(index, 0) + 1
        lines.append(f"{len(counts)} " + " ".join(f"{w}:{c}" for w, c in counts.items()))
        # The tokens in the order the LDA-C reader expands them.
        expanded.append([vocab[w] for w, c in counts.items() for _ in range(c)])
    (tmp_path / "corpus.ldac").write_text("\n".join(lines) + "\n")
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    for workers in [1, 2]:
        model = strads.LDAModel(k=4, alpha=0.1, eta=0.01, seed=3, optimize_interval=0)
        for doc in expanded:
            model.add_doc(doc)
        model.train(40, workers=workers)
        out = tmp_path / f"out-{workers}"
        subprocess.run(
            [cli, "lda", "--data", str(tmp_path / "corpus.ldac"), "--vocab", str(tmp_path / "vocab.txt"), "--topics", "4",
             "--alpha", "0.1", "--beta", "0.01", "--iterations", "40", "--workers", str(workers), "--seed", "3",
             "--optimize-alpha", "off", "--out", str(out), "--quiet"],
            check=True,
        )
        summary = json.loads((out / "summary.json").read_text())
        assert model.ll_per_word == summary["log_likelihood_per_token"]
        counts = np.load(out / "word_topic.npy")
        np.testing.assert_array_equal(model._word_topic, counts.reshape(model._word_topic.shape))


def test_mf_predicts_what_the_command_line_predicts(cli, tmp_path):
    rng = np.random.default_rng(0)
    keys = np.unique(rng.integers(0, 60 * 40, 900))
    users, items = first_appearance(keys // 40), first_appearance(keys % 40)
    ratings = np.clip(np.round(3 + rng.standard_normal(keys.size)), 1, 5)
    train = tmp_path / "train.tsv"
    train.write_text("".join(f"{u}\t{i}\t{r}\n" for u, i, r in zip(users, items, ratings)))
    pairs_u, pairs_i = np.array([0, 3, 50, 10, 7]), np.array([0, 5, 39, 12, 33])
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{u}\t{i}\n" for u, i in zip(pairs_u, pairs_i)))
    for algorithm in ["ccdpp", "als"]:
        model = strads.MF(rank=4, algorithm=algorithm, n_workers=2, random_state=5).fit(users=users, items=items, ratings=ratings)
        out = tmp_path / algorithm
        subprocess.run([cli, "mf", "--data", str(train), "--rank", "4", "--algorithm", algorithm, "--workers", "2",
                        "--seed", "5", "--out", str(out), "--quiet"], check=True)
        done = subprocess.run([cli, "mf", "predict", "--model", str(out), "--data", str(pairs)], check=True,
                              capture_output=True, text=True)
        rows = [line.split(",") for line in done.stdout.strip().splitlines()[1:]]
        predicted = np.array([float(p) for _, _, p in rows])
        # The same factors and biases to the bit; predictions up to the order of a dot product's sum.
        np.testing.assert_array_equal(model.user_factors, np.load(out / "user_factors.npy"))
        np.testing.assert_array_equal(model.item_factors, np.load(out / "item_factors.npy"))
        np.testing.assert_array_equal(model.user_bias, np.load(out / "user_bias.npy").ravel())
        np.testing.assert_allclose(model.predict(pairs_u, pairs_i), predicted, rtol=1e-13)
