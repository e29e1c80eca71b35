#!/usr/bin/env bash
# The end-to-end demo: start the local servers; stream fictional NeoQA timelines (the main corpus) and a few real
# news pages through Kafka → chunks → entities and interactions → the graph and its Qdrant mirror; ask sample
# questions as of their day; run the NeoQA benchmark with the offline answerers.
# Steps 3 to 8 only read the graph: they run as jobs in two lanes (two cores), each job's output captured in a file
# and printed in step order as it completes, so the log reads as if they ran one after another. The embedded Qdrant
# mirror admits one process at a time, so every job that opens it (the questions, the NeoQA graph answerer, the
# NEON replay, the IRB run) runs in one lane, one after another; the other lane runs the jobs that read the graph
# alone (NeoQA's offline reader, FanOutQA, extract text, the query log and its spike days, the IRB question set).
set -euo pipefail
cd "$(dirname "$0")/.."
NEWSKG=.venv/bin/newskg
PY=.venv/bin/python
SYNTH=.newskg/neoqa
PAGES=tests/fixtures/news-html   # a few bundled real pages next to the synthetic stream

STEP_START=$SECONDS
timed() {  # the wall time of the step that just ended, as `[time] NAME: N s` (bench/demo.py reads these lines)
  echo "[time] demo $1: $((SECONDS - STEP_START)) s"
  STEP_START=$SECONDS
}

echo "== 0. Start the local servers (broker, graph)"
$NEWSKG services up
timed "0 services"
echo
echo "== 1. Generate 3 fictional timelines (seeded) and stream every article into Kafka at its fictional date"
$NEWSKG ingest synthetic --timelines 3 --seed 7 --out "$SYNTH"
$NEWSKG ingest files "$PAGES" --date 2020-01-01 --backfill   # historical pages: ingested "as published"
timed "1 ingest"
echo
echo "== 2. Process (dedup) and extract (offline M0) until the topics are drained"
$NEWSKG run all --until-idle
$NEWSKG topics
$NEWSKG graph stats
$NEWSKG graph entities --top 8
timed "2 process and extract"
echo
# One job per function below; `job ID` runs it in the background (so `set -e` holds inside it) with its output to
# $OUT/ID.log, then writes its exit code to $OUT/ID.rc and its seconds to $OUT/ID.s.
OUT=.newskg/demo-steps
rm -rf "$OUT"
mkdir -p "$OUT"
job() {
  local id=$1 start=$SECONDS rc=0
  "j$id" >"$OUT/$id.log" 2>&1 &
  wait $! || rc=$?
  echo $((SECONDS - start)) >"$OUT/$id.s"
  echo "$rc" >"$OUT/$id.rc.tmp"
  mv "$OUT/$id.rc.tmp" "$OUT/$id.rc"
  return "$rc"
}
ended() {  # ID LANE_PID: wait until job ID has ended (or its lane has, without running it); 0 if it succeeded
  while [ ! -e "$OUT/$1.rc" ] && kill -0 "$2" 2>/dev/null; do sleep 0.1; done
  [ -e "$OUT/$1.rc" ] && [ "$(cat "$OUT/$1.rc")" = 0 ]
}

j3() {
  echo "== 3. Sample questions, answered from the graph as it stood on the day asked"
  # A multi-hop question of the synthetic set: who its bridge person is, and the organisation the question names.
  mapfile -t PICK < <($PY - "$SYNTH" <<'EOF'
import sys
from pathlib import Path
from newskg.evaluation.neoqa.dataset import load
data = load(Path(sys.argv[1]))
q = next(q for q in data.questions if q.category == "multi-hop")
timeline = next(t for t in data.timelines if t.timeline_id == q.timeline_id)
kb = {e.id: e.name for group in timeline.named_entity_snapshots[-1].named_entities.values() for e in group}
print(q.question); print(q.answer); print(q.date); print(kb[q.meta["bridge_entity"]]); print(kb[q.meta["role_org"]])
EOF
  )
  echo "NeoQA question (as of ${PICK[2]}): ${PICK[0]}  [gold: ${PICK[1]}]"
  $NEWSKG ask "${PICK[3]}" --date "${PICK[2]}" --strategy temporal --k 5
  $NEWSKG ask "${PICK[4]} news" --date "${PICK[2]}" --strategy hybrid --k 5
}
j4a() {
  echo "== 4. NeoQA multiple choice (appendix E.2 instances): the offline reader on the given articles, then the"
  echo "==    graph answerer, which ignores them and retrieves from our graph as of each question's date"
  $NEWSKG eval neoqa --instances "$SYNTH/instances.jsonl" --answerer evidence --out .newskg/eval/neoqa-evidence
}
j4b() {
  $NEWSKG eval neoqa --instances "$SYNTH/instances.jsonl" --answerer graph --out .newskg/eval/neoqa-graph
}
j5() {
  echo "== 5. FanOutQA-style questions generated from the graph as of the stream's last day (hub, its partners, the"
  echo "==    day of each interaction); one of them, its decomposition and the graph answerer's dict"
  $NEWSKG eval fanoutqa generate --as-of "$LAST" --source neoqa --out .newskg/eval/fanout-questions.json
  $PY - .newskg/eval/fanout-questions.json <<'EOF'
import sys
from pathlib import Path
from newskg.core.settings import get_settings
from newskg.evaluation.fanoutqa.answerers import GraphFanoutAnswerer
from newskg.evaluation.fanoutqa.generate import load_generated
from newskg.graph.store.asof import AsOf
from newskg.wiring import Wiring
questions = load_generated(Path(sys.argv[1]))
if not questions:
    sys.exit("no question passed the fan-out and uniqueness checks")
q = questions[0]
with Wiring(get_settings()) as wiring:
    trace = GraphFanoutAnswerer(wiring.store(), None).answer(q.id, q.question, AsOf.of(q.as_of))
print(f"Q (as of {q.as_of}): {q.question}")
lists, attributes = trace.steps[0], trace.steps[1:]
print(f"  [list] {lists.question} -> {len(lists.answer or [])} items ({len(lists.evidence)} evidence)")
if attributes:
    print(f"  [attribute, one per item] e.g. {attributes[0].question}")
for step in attributes:
    print(f"    {step.item}: {step.answer} ({len(step.evidence)} evidence)")
right = sum(trace.answer.get(k) == v for k, v in q.answer.items()) if isinstance(trace.answer, dict) else 0
print(f"graph answer: {trace.answer}\n{right} of {len(q.answer)} entries as the graph's Cypher computed them")
EOF
}
j6() {
  echo "== 6. Linking and offline extraction of one sentence (newskg extract text … --explain)"
  $NEWSKG extract text "Doja Cat dressed as Choupette at the Met Gala on Monday. Jared Leto also arrived as Choupette, and Leto posed with Anna Wintour." --date 2023-05-02 --explain
}
QLOG=.newskg/eval/querylog.jsonl
j7a() {
  echo "== 7. NEON spike-day replay: a synthetic query log peaking on the timelines' event days (its known spike days"
  echo "==    written beside it), the spike days the rule finds, then 4 spike-day queries answered as of their day by"
  echo "==    NewsRAG and NEON(M0/M1/M2) x temporal/generic x k, scored by the offline proxies (the judges with an LLM)"
  $NEWSKG eval querylog --data "$SYNTH" --out "$QLOG" --seed 7 --entities 2
  $NEWSKG eval spikes --log "$QLOG" --out .newskg/eval/spikes
}
j7b() {
  $NEWSKG eval replay --log "$QLOG" --limit 4 --k 1,5,10 --out .newskg/eval/neon-replay
}
j8a() {
  echo "== 8. IRB: factuality questions generated from the graph as of the stream's last day (single-hop, 2-hop through"
  echo "==    a bridge, false premises the graph confirms false), then BM25 and dense retrieval (nDCG@5) and RAG answers"
  echo "==    graded (deterministic grader offline; the LLM grader when one is configured)"
  $NEWSKG eval irb generate --as-of "$LAST" --source neoqa --n 20 --seed 1 --no-llm --out .newskg/eval/irb.jsonl
}
j8b() {
  $NEWSKG eval irb run .newskg/eval/irb.jsonl --retrievers bm25,dense --out .newskg/eval/irb
  $NEWSKG services status
}

LAST=$($PY -c "import sys,json;print(max(json.loads(l)['date'] for l in open(sys.argv[1])))" "$SYNTH/articles.jsonl")
LANES_START=$SECONDS
# The lane without the mirror, longest job first; then the mirror's lane, which waits for the files it reads (the
# query log and its spike days, the IRB question set) from the other. A lane stops at its first failed job.
(job 8a; job 7a; job 4a; job 5; job 6) &
FREE=$!
(job 3; job 4b; ended 7a "$FREE"; job 7b; ended 8a "$FREE"; job 8b) &
MIRROR=$!

# Print each step's jobs in order as they end. A failed job ends the demo, once both lanes have stopped (a lane
# stops at its first failure; the other finishes what it is running), with the output of every job that failed and
# the first one's exit code: a lane runs its jobs in another order than the steps', so the job that failed may
# belong to a later step than the first one left unrun.
stop() {
  wait "$FREE" || true
  wait "$MIRROR" || true
  local rc="" f id
  for f in "$OUT"/*.rc; do
    [ "$(cat "$f")" != 0 ] || continue
    id=$(basename "$f" .rc)
    echo "demo: job $id failed (exit $(cat "$f")):"
    cat "$OUT/$id.log"
    [ -n "$rc" ] || rc=$(cat "$f")  # the first failed job's code (a later one's replaced a first code of 1)
  done
  exit "${rc:-1}"
}
show() {  # N NAME ID:LANE_PID...: each job of step N in order, its output once it has ended, then the step's time
  local n=$1 name=$2 seconds=0 spec id lane
  shift 2
  for spec in "$@"; do
    id=${spec%%:*} lane=${spec#*:}
    ended "$id" "$lane" || stop
    cat "$OUT/$id.log"
    seconds=$((seconds + $(cat "$OUT/$id.s")))
  done
  echo "[time] demo $n $name: $seconds s"
  echo
}
show 3 questions "3:$MIRROR"
show 4 neoqa "4a:$FREE" "4b:$MIRROR"
show 5 fanoutqa "5:$FREE"
show 6 "extract text" "6:$FREE"
show 7 "neon replay" "7a:$FREE" "7b:$MIRROR"
show 8 irb "8a:$FREE" "8b:$MIRROR"
wait "$FREE"
wait "$MIRROR"
echo "[time] demo 3-8 in two lanes: $((SECONDS - LANES_START)) s"
STEP_START=$SECONDS
echo "== 9. The graph explorer (as of any day): \`make explore\` installs its graph library (cytoscape, npm) and serves"
echo "==    it; this view opens on the entity with the most facts as of the last day:"
echo "   $($PY scripts/explore_url.py || echo "(the URL could not be made: see above)")"
timed "9 explorer url"
