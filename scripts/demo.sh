#!/usr/bin/env bash
# The end-to-end demo: start the local servers and show they are healthy. Grows with each stage.
set -euo pipefail
cd "$(dirname "$0")/.."
NEWSKG=.venv/bin/newskg
$NEWSKG services up
$NEWSKG topics --ensure
$NEWSKG services status
