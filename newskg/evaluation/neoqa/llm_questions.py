"""LLM mode, questions (NeoQA C.2 and D.1): for pairs of events, a multi-hop question through an entity both
mention and a time-span question over two dated items; five distractors; one false-premise and one
uncertain-specificity variant per multi-hop question; then the answerability filter: the model must answer its own
question from the two items alone (our MCQ prompt), or the question and its variants are dropped.

Checks that need no model are done in code: the bridge entity must not be named in the question, a time-span
answer must equal the real day difference, and a question that states both dates (a leaked assumption, D.1) is
sent back. Time-span distractors are near-miss day counts, computed."""

from __future__ import annotations

import datetime as dt
import itertools
import random

from newskg.core.llm.client import LLMClient
from newskg.evaluation.neoqa.instances import shuffled_options
from newskg.evaluation.neoqa.llm_steps import LLMGenerationError, ask
from newskg.evaluation.neoqa.prompts import distractors, mcq_answer, question_variant, question_write
from newskg.evaluation.neoqa.questions import Draft, day_distractors, make_question
from newskg.evaluation.neoqa.reader import DATE, date_in
from newskg.evaluation.neoqa.records import MARKUP, Distractor, OutlineItem, Question, Timeline, plain


def write_llm_questions(
    client: LLMClient, rng: random.Random, timeline: Timeline, max_pairs: int = 20
) -> list[Question]:
    pairs = list(itertools.combinations_with_replacement(range(len(timeline.events)), 2))
    questions: list[Question] = []
    for i, j in rng.sample(pairs, min(max_pairs, len(pairs))):
        for make in (_multi_hop, _time_span):
            try:
                questions.extend(make(client, rng, timeline, i, j))
            except LLMGenerationError:
                continue  # this pair yields no valid question: the paper discards such drafts too
    return questions


def _multi_hop(client: LLMClient, rng: random.Random, timeline: Timeline, i: int, j: int) -> list[Question]:
    first, second = timeline.events[i].outline, timeline.events[j].outline
    shared = sorted(_entities(first) & _entities(second))
    candidates = [
        (a, b, e) for e in shared for a in first for b in second if a.id != b.id and e in _ids(a) and e in _ids(b)
    ]
    if not candidates:
        return []
    a, b, bridge_id = rng.choice(candidates)
    bridge = next(m.group(1) for m in MARKUP.finditer(a.sentence) if m.group(2) == bridge_id)
    items = [plain(a.sentence), plain(b.sentence)]
    written = ask(
        client,
        question_write.build("multi-hop", items, _story(timeline, j), bridge),
        lambda r: f"the question names {bridge}" if bridge.lower() in r.question.lower() else None,
    )
    options = _distractors(client, written.question, written.answer, items)
    parent = _llm_question(timeline, j, "multi-hop", Draft(written.question, written.answer, options, [a.id, b.id]))
    if not _answers_itself(client, parent, items):
        return []
    variants: list[Question] = []
    for kind in ("false-premise", "uncertain-specificity"):
        changed = ask(
            client,
            question_variant.build(kind, written.question, items),
            lambda r: "the question is unchanged" if r.question.strip() == written.question else None,
        )
        variants.append(
            _llm_question(
                timeline,
                j,
                kind,
                Draft(changed.question, written.answer, options, [a.id, b.id]),
                parent=parent.question_id,
            )
        )
    return [parent, *variants]


def _time_span(client: LLMClient, rng: random.Random, timeline: Timeline, i: int, j: int) -> list[Question]:
    dated = [
        (x, y, day_x, day_y)
        for x in timeline.events[i].outline
        for y in timeline.events[j].outline
        if x.id != y.id and (day_x := _day(x)) and (day_y := _day(y)) and day_x != day_y
    ]
    if not dated:
        return []
    a, b, day_a, day_b = rng.choice(dated)
    days = abs((day_b - day_a).days)
    items = [plain(a.sentence), plain(b.sentence)]
    stated = [match.group(0) for text in items if (match := DATE.search(text))]  # both dated: both match

    def check(reply: question_write.Written) -> str | None:
        if all(d in reply.question for d in stated):
            return "the question gives away both dates; ask about the moments, not the dates"
        number = next((int(w) for w in reply.answer.replace(",", "").split() if w.isdigit()), None)
        return None if number == days else f"the two dates are {days} days apart, so the answer is '{days} days'"

    written = ask(client, question_write.build("time-span", items, _story(timeline, j)), check)
    options = day_distractors(rng, days, [a.id, b.id])
    draft = Draft(written.question, f"{days} days", options, [a.id, b.id])
    question = _llm_question(timeline, j, "time-span", draft)
    return [question] if _answers_itself(client, question, items) else []


def _distractors(client: LLMClient, question: str, answer: str, items: list[str]) -> list[Distractor]:
    def five_wrong(reply: distractors.Options) -> str | None:
        distinct = {d.answer.strip().lower() for d in reply.distractors} - {answer.strip().lower()}
        return None if len(distinct) >= 5 else "five different wrong answers are needed, none equal to the answer"

    reply = ask(client, distractors.build(question, answer, items), five_wrong)
    seen = {answer.strip().lower()}
    picked: list[Distractor] = []
    for d in reply.distractors:
        if d.answer.strip().lower() not in seen and len(picked) < 5:
            seen.add(d.answer.strip().lower())
            picked.append(Distractor(answer=d.answer.strip(), explanation=d.explanation))
    return picked


def _answers_itself(client: LLMClient, question: Question, items: list[str]) -> bool:
    """D.1: with only its own two items as evidence, the model must pick the answer it wrote."""
    options = shuffled_options(question, question.question_id)  # a model that always says "1" passes nothing
    reply = client.complete(mcq_answer.build(question.question, options, [(question.date, text) for text in items]))
    return mcq_answer.read_choice(reply, options) == options.index(question.answer)


def _llm_question(timeline: Timeline, j: int, category: str, draft: Draft, parent: str | None = None) -> Question:
    return make_question(timeline, j, category, draft, parent, {"mode": "llm"})


def _entities(outline: list[OutlineItem]) -> set[str]:
    return {i for item in outline for i in _ids(item)}


def _ids(item: OutlineItem) -> set[str]:
    return {m.group(2) for m in MARKUP.finditer(item.sentence)}


def _day(item: OutlineItem) -> dt.date | None:
    return date_in(plain(item.sentence))


def _story(timeline: Timeline, up_to: int, limit: int = 1200) -> str:
    lines = [plain(i.sentence) for e in timeline.events[: up_to + 1] for i in e.outline]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) > limit:
            break
        kept.insert(0, line)
        size += len(line)
    return "\n".join(kept)
