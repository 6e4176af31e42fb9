#!/usr/bin/env bash
# Matrix factorization benchmark: strads (CCD++, CCD and ALS; 1 and 2 workers) against libmf (LIBMF's
# parallel SGD; 1 and 2 threads) and Spark ALS (local, 2 cores) on MovieLens 100K, at rank 10 and 50 with
# the same frequency-weighted L2 (lambda = 0.1 per rating). One seeded 80/20 split of the ratings
# (bench/data/ml100k/{train,test}.tsv) is shared by every tool. Each tool is timed to the same test RMSE,
# libmf's best within 0.5%. Installs the peers and the data in bench/.venv-bench and bench/data (from
# package registries only), then writes bench/results/mf-DATE.md. The full run takes a few minutes, most
# of them Spark's.
#
# Usage: bench/mf.sh [--iterations N] [--ranks K1,K2] [--lambda L] [--repeat R] [--tools strads,libmf,spark]
#                    [--quick]
#        (defaults: 20 iterations, ranks 10,50, lambda 0.1, each libmf and strads point best of 3, all tools;
#         --quick: rank 10, strads ccdpp P = 1, 2 and als P = 2, libmf on 2 threads, one repeat, no Spark;
#         --tools without strads neither builds nor needs target/release/strads)
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/mf.sh${*:+ $*}"
iterations=20
ranks=10,50
lambda=0.1
repeat=3
tools=strads,libmf,spark
quick=()
while [ $# -gt 0 ]; do
  case "$1" in
    --iterations) iterations=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --lambda) lambda=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
strads=target/release/strads
if [[ ",$tools," == *,strads,* ]]; then
  bench_venv "libmf==0.9.2" "pyspark==4.3.0"
  if ! "$strads" mf --help >/dev/null 2>&1; then
    echo "bench: $strads has no working 'mf' command (is matrix factorization built into this tree yet?)" >&2
    exit 1
  fi
else
  peer_venv "libmf==0.9.2" "pyspark==4.3.0"
fi
if [[ ",$tools," == *,spark,* ]] && ! java -version >/dev/null 2>&1; then
  echo "bench: Spark needs a Java runtime (17 or later) on the PATH; none found (or run with --tools strads,libmf)" >&2
  exit 1
fi
ml100k_inter

mkdir -p bench/results
suffix=""
if [ ${#quick[@]} -gt 0 ]; then
  suffix="-quick"  # a smoke run does not overwrite the day's full run
elif [ "$tools" != strads,libmf,spark ]; then
  suffix="-${tools//,/-}"  # nor does a run of some of the tools
fi
out="bench/results/mf-$(date +%Y-%m-%d)$suffix.md"
"$VENV/bin/python" bench/mf_bench.py --strads "$strads" --inter bench/data/ml-100k.inter --split-dir bench/data/ml100k \
  --iterations "$iterations" --ranks "$ranks" --lambda "$lambda" --repeat "$repeat" --tools "$tools" \
  ${quick[@]+"${quick[@]}"} --out "$out" --command "$command"
