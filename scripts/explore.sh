#!/usr/bin/env bash
# `make explore`: the local servers up, the explorer's URL with a ready view of the entity with the most facts, then
# `newskg serve` in the foreground (Ctrl-C stops it). With NEWSKG_API_KEYS set, type a key into the page.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/newskg services up
echo "explorer: $(.venv/bin/python scripts/explore_url.py)"
exec .venv/bin/newskg serve
