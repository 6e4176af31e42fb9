#!/usr/bin/env bash
# Implicit-feedback benchmark: strads (`strads mf --implicit`: ALS with conjugate gradient, exact ALS and
# row CCD; 1 and 2 workers) against the implicit library's ALS (1 and 2 threads) on the MovieLens 100K split
# of bench/mf.sh, ratings as interaction strengths, ranks 10 and 50, the same confidences, L2 and iterations;
# precision, MAP and NDCG at 10 on the held-out interactions, computed by one function for every tool.
# Installs implicit and the data in bench/.venv-bench and bench/data (package registries only), then writes
# bench/results/mf-implicit-DATE.md. About a minute.
#
# Usage: bench/mf_implicit.sh [--ranks K1,K2] [--iterations N] [--alpha A] [--repeat R]
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/mf_implicit.sh${*:+ $*}"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks|--iterations|--alpha|--repeat) extra+=("$1" "$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/common.sh
bench_venv "implicit==0.7.3" "libmf==0.9.2"
ml100k_inter
# The split of bench/mf.sh (seed 1, 20% to test), written once.
"$VENV/bin/python" -c 'import sys; sys.path.insert(0, "bench"); import mf_bench; mf_bench.make_split("bench/data/ml-100k.inter", "bench/data/ml100k", 1, 0.2)'
mkdir -p bench/results bench/work/mf-implicit
"$VENV/bin/python" bench/mf_implicit_bench.py --strads target/release/strads --split-dir bench/data/ml100k \
  ${extra[@]+"${extra[@]}"} --out "bench/results/mf-implicit-$(date +%Y-%m-%d).md" --command "$command"
