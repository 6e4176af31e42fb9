#!/usr/bin/env bash
# Runs every fuzz target of strads' input parsers for a bounded time (cargo fuzz, nightly): no panic,
# no hang (10 s per input) and no allocation above 2 GB on any input. New inputs that reach new code
# are kept in fuzz/corpus/TARGET; a crash is saved in fuzz/artifacts/TARGET and stops the run with
# exit code 1. The corpora replay as ordinary tests (crates/strads/tests/fuzz_replay.rs).
#
# Usage: fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 seconds, every target)
# Needs: rustup toolchain install nightly; cargo install cargo-fuzz
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(libsvm matrix_market csv ratings corpus)
fi
cargo +nightly fuzz build -O
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  echo "== $target: $seconds s"
  cargo +nightly fuzz run -O "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 2>&1 \
    | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done)|panicked|ERROR" || true
  if [ -n "$(ls -A "artifacts/$target" 2>/dev/null)" ]; then
    echo "$target: crash inputs in fuzz/artifacts/$target" >&2
    exit 1
  fi
done
