#!/usr/bin/env bash
# MPI benchmark: every application on P = 1, 2, 3 workers, as threads of one process and as ranks of an
# MPI job, side by side on the same data in one run (throughput ratio, peak memory per rank, bytes sent
# per round, input bytes read per rank, LDA model bytes per rank). Builds strads with the `mpi` feature
# (installs OpenMPI and libclang with apt-get if missing), then writes bench/results/mpi-DATE.md.
# The LDA corpus and the MovieLens split are those of bench/lda.sh and bench/mf.sh (run them once first).
#
# Usage: bench/mpi.sh [--mpich] [--apps lasso,logreg,lda,mf] [--repeat 3] [--lda-iterations 50] [--mf-iterations 20]
#        (--mpich: strads built against MPICH in target/mpich and launched by mpiexec.mpich; the results
#         file is then mpi-mpich-DATE.md)
set -euo pipefail
cd "$(dirname "$0")/.."
command="bench/mpi.sh${*:+ $*}"
mpich=0
if [ "${1:-}" = --mpich ]; then mpich=1; shift; fi

if ! command -v mpirun.openmpi >/dev/null || ! command -v mpicc.mpich >/dev/null \
  || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q openmpi-bin libopenmpi-dev mpich libmpich-dev libclang-dev
fi
if [ "$mpich" = 1 ]; then
  MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpich cargo build --release -q -p strads --features mpi
  strads=target/mpich/release/strads launcher=mpiexec.mpich name=mpi-mpich
else
  cargo build --release -q -p strads --features mpi
  strads=target/release/strads launcher=mpirun name=mpi
fi

source bench/common.sh
news20_comp
for needed in bench/data/news20-lda/train/corpus.ldac bench/data/ml100k/train.tsv; do
  if [ ! -f "$needed" ]; then
    echo "bench: $needed is missing: run bench/lda.sh --quick and bench/mf.sh --quick once first" >&2
    exit 1
  fi
done

mkdir -p bench/results
python3 bench/mpi_bench.py --strads "$strads" --launcher "$launcher" --out "bench/results/$name-$(date +%Y-%m-%d).md" \
  --command "$command" "$@"
