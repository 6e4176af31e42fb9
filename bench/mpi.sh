#!/usr/bin/env bash
# MPI benchmark: every application on P = 1, 2, 3 workers, as threads of one process and as ranks of an
# MPI job, side by side on the same data in one run (throughput ratio, peak memory per rank, bytes sent
# per round, input bytes read per rank, LDA model bytes per rank). Builds strads with the `mpi` feature
# (installs OpenMPI and libclang with apt-get if missing), then writes bench/results/mpi-DATE.md.
# The LDA corpus and the MovieLens split are those of bench/lda.sh and bench/mf.sh (run them once first).
#
# Usage: bench/mpi.sh [--apps lasso,logreg,lda,mf] [--repeat 3] [--lda-iterations 50] [--mf-iterations 20]
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/mpi.sh${*:+ $*}"

if ! command -v mpirun >/dev/null || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q openmpi-bin libopenmpi-dev libclang-dev
fi
cargo build --release -q -p strads --features mpi

source bench/common.sh
news20_comp
for needed in bench/data/news20-lda/train/corpus.ldac bench/data/ml100k/train.tsv; do
  if [ ! -f "$needed" ]; then
    echo "bench: $needed is missing: run bench/lda.sh --quick and bench/mf.sh --quick once first" >&2
    exit 1
  fi
done

mkdir -p bench/results
python3 bench/mpi_bench.py --strads target/release/strads --out "bench/results/mpi-$(date +%Y-%m-%d).md" \
  --command "$command" "$@"
