#!/usr/bin/env bash
# checkov (Kubernetes policy checks of the rendered k8s/ overlays) in its own venv, .venv-checkov: it pins about
# 90 packages, some older than the project's (packaging, networkx), so it cannot share .venv. The exact tested set
# is tools/checkov-constraints.txt. tests/integration/test_k8s_checkov.py runs it with --skip-download (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
rm -rf .venv-checkov
"$PYTHON" -m venv .venv-checkov
.venv-checkov/bin/pip install -q --disable-pip-version-check -c tools/checkov-constraints.txt checkov
echo "setup (checkov): done ($(.venv-checkov/bin/checkov --version))"
