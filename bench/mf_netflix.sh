#!/usr/bin/env bash
# MF at scale: strads against libmf on a generated Netflix-shaped problem (`strads gen mf --shape netflix`,
# 480,189 users x 17,770 items, 10M ratings by default: a tenth of Netflix's on the same users and items),
# ranks 10 and 50, strads' defaults and its other algorithms on 2 workers, libmf on 2 threads. Generates
# the data once in bench/data/netflix-RATINGS, then writes bench/results/mf-netflix-DATE.md. About 15
# minutes at 10M ratings.
#
# Usage: bench/mf_netflix.sh [--ratings N] [--ranks K1,K2]
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/mf_netflix.sh${*:+ $*}"
ratings=10000000
ranks=10,50
while [ $# -gt 0 ]; do
  case "$1" in
    --ratings) ratings=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/common.sh
bench_venv "libmf==0.9.2"
data="bench/data/netflix-$ratings"
if [ ! -f "$data/truth.json" ]; then
  target/release/strads gen mf --shape netflix --ratings "$ratings" --rank 10 --noise 0.5 --seed 1 --out "$data"
fi
mkdir -p bench/results bench/work/mf-netflix
"$VENV/bin/python" bench/mf_netflix.py --strads target/release/strads --data "$data" --ranks "$ranks" \
  --out "bench/results/mf-netflix-$(date +%Y-%m-%d).md" --command "$command"
