#!/usr/bin/env bash
# LDA: the effect of re-estimating alpha (`--optimize-alpha 10`, the default) against a fixed
# alpha = 50/K (`--optimize-alpha off`) on held-out perplexity (document completion), training
# log-likelihood and seconds, on two real corpora of different shapes: 20 Newsgroups (its own
# test split) and GCIDE definitions (short documents; every tenth line held out). Same seed, 2
# workers. Writes bench/results/lda-alpha-DATE.md.
#
# Usage: bench/lda_alpha.sh [--topics K] [--iterations N]
set -euo pipefail
cd "$(dirname "$0")/.."
topics=100
iterations=200
while [ $# -gt 0 ]; do
  case "$1" in
    --topics) topics=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/common.sh
bench_venv
strads=target/release/strads
news20_tab
gcide_lines
work=bench/work/lda-alpha
mkdir -p "$work"
prepare() { # prepare NAME INPUT FLAGS...
  local name=$1 input=$2; shift 2
  [ -f "$work/$name/corpus.ldac" ] || "$strads" lda prepare --data "$input" "$@" --out "$work/$name" >/dev/null
}
prepare news20-train bench/data/20newsgroups-train.tab --format tsv --column Text --skip-lines 2
prepare news20-test bench/data/20newsgroups-test.tab --format tsv --column Text --skip-lines 2
awk 'NR % 10 != 0' bench/data/gcide-definitions.txt > "$work/gcide-train.txt"
awk 'NR % 10 == 0' bench/data/gcide-definitions.txt > "$work/gcide-test.txt"
prepare gcide-train "$work/gcide-train.txt" --format lines
prepare gcide-test "$work/gcide-test.txt" --format lines

out="bench/results/lda-alpha-$(date +%Y-%m-%d).md"
{
  echo "# LDA: re-estimated alpha against a fixed alpha"
  echo
  echo "- date: $(date +%Y-%m-%d)"
  echo "- machine: $(cd bench && "../$VENV/bin/python" -c "from benchlib import machine; print(machine())")"
  echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' dirty')"
  echo "- command: \`bench/lda_alpha.sh --topics $topics --iterations $iterations\`"
  echo "- K = $topics, $iterations iterations, 2 workers, seed 1, beta = 0.01, alpha starting at 50/K; held-out"
  echo "  perplexity by document completion (half of each test document folded in, the other half scored)"
  echo
  echo "| corpus | alpha | final alpha | train log-likelihood / token | test perplexity | seconds |"
  echo "|---|---|---|---|---|---|"
} > "$out.tmp"
for corpus in news20 gcide; do
  for setting in 10 off; do
    run="$work/run-$corpus-$setting"
    rm -rf "$run"
    "$strads" lda --data "$work/$corpus-train" --test "$work/$corpus-test" --topics "$topics" \
      --iterations "$iterations" --workers 2 --seed 1 --eval-every "$iterations" --optimize-alpha "$setting" \
      --quiet --out "$run"
    "$VENV/bin/python" - "$run/summary.json" "$corpus" "$setting" >> "$out.tmp" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
label = "re-estimated every 10 iterations" if sys.argv[3] != "off" else "fixed"
print(f"| {sys.argv[2]} | {label} | {s['alpha']:.4f} | {s['log_likelihood_per_token']:.4f} | "
      f"{s['test_perplexity']:.1f} | {s['seconds']:.2f} |")
PY
  done
done
mv "$out.tmp" "$out"
cat "$out"
