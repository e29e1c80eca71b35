#!/usr/bin/env bash
# The end-to-end demo: start the local servers, stream real news pages through Kafka → chunks → entities and
# interactions → the graph and its Qdrant mirror, then look at the graph. Grows with each stage (QA, the
# synthetic timelines, NeoQA).
set -euo pipefail
cd "$(dirname "$0")/.."
NEWSKG=.venv/bin/newskg
PAGES=../shared/data/news-html
[ -d "$PAGES" ] || PAGES=tests/fixtures/news-html

$NEWSKG services up
$NEWSKG ingest files "$PAGES" --date 2020-01-01 --backfill   # historical pages: ingested "as published"
$NEWSKG run all --until-idle          # process (dedup) and extract (offline M0) in one process
$NEWSKG topics
$NEWSKG graph stats
$NEWSKG graph entities --top 8
read -r TOP NAME DAY < <($NEWSKG graph entities --top 1 --json | .venv/bin/python -c \
  'import json,sys; e=json.load(sys.stdin)["entities"][0]; d=str(e["last_day"]); print(e["id"], e["name"].replace(" ", "_"), f"{d[:4]}-{d[4:6]}-{d[6:]}")')
$NEWSKG graph timeline "$TOP" --from 1990-01-01 --to 2030-12-31 --limit 15
echo
echo "Sample questions, answered from the graph as it stood on the day asked:"
$NEWSKG ask "${NAME//_/ } news" --date "$DAY" --strategy temporal --k 5
$NEWSKG ask "${NAME//_/ }" --date "$DAY" --strategy hybrid --k 5
echo
echo "Linking and offline extraction of one sentence (newskg extract text … --explain):"
$NEWSKG extract text "Doja Cat dressed as Choupette at the Met Gala on Monday. Jared Leto also arrived as Choupette, and Leto posed with Anna Wintour." --date 2023-05-02 --explain
$NEWSKG services status
