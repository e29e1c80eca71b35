"""LLM mode, articles (NeoQA C.4): per news profile, subsets of the event's items chosen by the "editor", an
article drafted in the outlet's voice, unsupported facts trimmed, missing items worked back in, entities marked up.

Whether an item made it into the article is checked by its names and numbers appearing in the text; an item
that still misses after the completion step is dropped from `used_items` and listed in `unsure_evidences`, the
release's field for exactly this doubt, so sufficiency is never claimed on evidence the article may not hold."""

from __future__ import annotations

import re
from collections.abc import Callable

from newskg.core.llm.client import LLMClient
from newskg.evaluation.neoqa.articles import PROFILES
from newskg.evaluation.neoqa.llm_steps import ask
from newskg.evaluation.neoqa.prompts import article_complete, article_select, article_trim, article_write
from newskg.evaluation.neoqa.records import MARKUP, NewsArticle, Timeline, mark_names, plain

STYLES = {
    "SensationalNews": "dramatic, emotional, attention-grabbing",
    "ObjectiveNews": "neutral, factual, measured",
    "ProgressiveNews": "focused on fairness, community and inclusion",
    "ConservativeNews": "focused on costs, tradition and order",
}
NUMBER = re.compile(r"\d[\d,.]*")


def write_llm_articles(client: LLMClient, timeline: Timeline, per_profile: int = 3) -> list[NewsArticle]:
    articles: list[NewsArticle] = []
    base = timeline.timeline_id.replace(":", "_")
    names = _names(timeline)
    for event in timeline.events:
        sentences = [i.sentence for i in event.outline]
        number = 0
        for profile in PROFILES:
            for subset in _subsets(client, profile, sentences, per_profile):
                items = [event.outline[i] for i in subset]
                headline, passages = _draft(client, profile, event.date, [plain(i.sentence) for i in items])
                text = " ".join([headline, *passages])
                used = [i.id for i in items if _carries(text, plain(i.sentence))]
                articles.append(
                    NewsArticle(
                        timeline_id=timeline.timeline_id,
                        article_id=f"{base}-ev{event.created_at}-{number}",
                        event_id=event.event_id,
                        headline=mark_names(headline, names),
                        news_profile=profile,
                        passages=[mark_names(p, names) for p in passages],
                        used_items=used,
                        unsure_evidences=[i.id for i in items if i.id not in used],
                        created_at=event.created_at,
                        date=event.date,
                    )
                )
                number += 1
    return articles


def _subsets(client: LLMClient, profile: str, sentences: list[str], count: int) -> list[list[int]]:
    def valid(reply: article_select.Subsets) -> str | None:
        good = [s for s in reply.subsets if s and all(1 <= i <= len(sentences) for i in s)]
        return None if len(good) >= 1 else "every group must list item numbers from the outline"

    reply = ask(client, article_select.build(profile, [plain(s) for s in sentences], count), valid)
    return [sorted({i - 1 for i in s}) for s in reply.subsets if s and all(1 <= i <= len(sentences) for i in s)][:count]


def _draft(client: LLMClient, profile: str, date: str, items: list[str]) -> tuple[str, list[str]]:
    draft = ask(client, article_write.build(profile, STYLES[profile], date, items, ""))
    text: Callable[[article_write.Draft], str] = lambda d: d.headline + "\n\n" + "\n\n".join(d.passages)  # noqa: E731
    trimmed = ask(client, article_trim.build(text(draft), items))
    missing = [i for i in items if not _carries(text(trimmed), i)]
    if missing:
        trimmed = ask(client, article_complete.build(text(trimmed), missing))
    return trimmed.headline, trimmed.passages


def _carries(text: str, item: str) -> bool:
    """The item's capitalised names (past its first word) and numbers all appear in the text."""
    words = item.split()
    names = [w.strip(".,;:'\"") for w in words[1:] if w[:1].isupper()]
    numbers = NUMBER.findall(item)
    return all(n in text for n in names + numbers)


def _names(timeline: Timeline) -> dict[str, str]:
    found: dict[str, str] = {}
    for event in timeline.events:
        for item in event.outline:
            for m in MARKUP.finditer(item.sentence):
                found[m.group(1)] = m.group(0)
    return found
