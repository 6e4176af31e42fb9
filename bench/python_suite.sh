#!/usr/bin/env bash
# strads from Python (`pip install .` into the benchmark's environment) against scikit-learn, celer
# and skglm on the Lasso suite's problems, and against tomotopy on two corpora, through the calls a
# Python user makes. Writes bench/results/python-suite-DATE.md.
#
# Usage: bench/python_suite.sh [--repeat N] [--quick]
#   --quick: news20, gen-1k and digits; the 20 Newsgroups corpus only
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/python_suite.sh${*:+ $*}"
repeat=3
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
bench_venv scikit-learn "celer==0.7.4" skglm "tomotopy==0.14.0" "maturin>=1.9.4,<2"
news20_comp
news20_tab
gcide_lines
strads=target/release/strads
if [ ! -f bench/data/news20-lda/train/corpus.ldac ]; then
  "$strads" lda prepare --data bench/data/20newsgroups-train.tab --format tsv --column Text --skip-lines 2 \
    --out bench/data/news20-lda/train
fi
if [ ! -f bench/data/gcide-lda/train/corpus.ldac ]; then
  "$strads" lda prepare --data bench/data/gcide-definitions.txt --format lines --out bench/data/gcide-lda/train
fi
for name in gen-1k gen-10k gen-tall digits; do
  if [ ! -f "bench/data/$name.svm" ]; then
    echo "bench: bench/data/$name.svm is missing: run bench/lasso_suite.sh once to make it" >&2
    exit 1
  fi
done
"$VENV/bin/pip" install -q .

problems=(--problem news20=bench/data/news20-comp.svm --problem gen-1k=bench/data/gen-1k.svm
          --problem digits=bench/data/digits.svm)
corpora=(--corpus "20 Newsgroups=bench/data/news20-lda/train")
if [ "$quick" = 0 ]; then
  problems+=(--problem gen-10k=bench/data/gen-10k.svm --problem tall=bench/data/gen-tall.svm)
  corpora+=(--corpus "gcide definitions (short)=bench/data/gcide-lda/train")
fi
mkdir -p bench/results
"$VENV/bin/python" bench/python_suite.py "${problems[@]}" "${corpora[@]}" --topics 100 --iterations 100 \
  --repeat "$repeat" --out "bench/results/python-suite-$(date +%Y-%m-%d).md" --command "$command"
