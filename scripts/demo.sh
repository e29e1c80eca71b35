#!/usr/bin/env bash
# The end-to-end demo: start the local servers, stream real news pages through Kafka into chunks, show the
# topics. Grows with each stage (extraction, graph, QA, the synthetic timelines).
set -euo pipefail
cd "$(dirname "$0")/.."
NEWSKG=.venv/bin/newskg
PAGES=../shared/data/news-html
[ -d "$PAGES" ] || PAGES=tests/fixtures/news-html

$NEWSKG services up
$NEWSKG ingest files "$PAGES" --date 2020-01-01
$NEWSKG run all --until-idle
$NEWSKG topics
echo
echo "One article as the process stage sees it (newskg ingest extract FILE --json):"
FIRST=$(ls "$PAGES"/*.html.gz | head -n 1)
$NEWSKG ingest extract "$FIRST" --json | .venv/bin/python -c \
  'import json,sys; a=json.loads(sys.stdin.readline()); print(json.dumps({k: (v[:160] + "…" if isinstance(v, str) and len(v) > 160 else v) for k, v in a.items()}, indent=2, ensure_ascii=False))'
$NEWSKG services status
