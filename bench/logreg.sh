#!/usr/bin/env bash
# Sparse logistic regression and regularization paths: strads (logreg: dynamic, cyclic, shotgun, and
# STRADS' bound update; lasso --path with l1-ratio 1 and 0.5) against scikit-learn (LogisticRegression l1
# with liblinear and saga; lasso_path, enet_path) and celer (LogisticRegression) on news20-comp, each
# timed to the same relative duality gap. Installs the peers and the data in bench/.venv-bench and
# bench/data (from package registries only), then writes bench/results/logreg-DATE.md.
#
# Usage: bench/logreg.sh [--ratio R] [--path-ratio R] [--repeat N] [--skip saga,paths,logreg]
#                        [--strads-runs SCHEDULER:WORKERS:UPDATE,...]
#        (defaults: lambda = 0.01 x lambda_max, paths down to 0.01 x lambda_max in 20 points, best of 3,
#         strads dynamic on 1 and 2 workers, cyclic, shotgun on 2 workers, dynamic with --update bound)
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/logreg.sh${*:+ $*}"
ratio=0.01
path_ratio=0.01
repeat=3
skip=""
runs=dynamic:1:newton,dynamic:2:newton,cyclic:1:newton,shotgun:2:newton,dynamic:1:bound
while [ $# -gt 0 ]; do
  case "$1" in
    --ratio) ratio=$2; shift 2 ;;
    --path-ratio) path_ratio=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --strads-runs) runs=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
bench_venv scikit-learn "celer==0.7.4"
news20_comp

mkdir -p bench/results
suffix=""
[ -n "$skip" ] && suffix="-without-${skip//,/-}"
[ "$ratio" != 0.01 ] && suffix="$suffix-ratio-$ratio"
out="bench/results/logreg-$(date +%Y-%m-%d)$suffix.md"
"$VENV/bin/python" bench/logreg_bench.py --strads target/release/strads --data bench/data/news20-comp.svm \
  --ratio "$ratio" --path-ratio "$path_ratio" --repeat "$repeat" --skip "$skip" --strads-runs "$runs" --out "$out" --command "$command"
