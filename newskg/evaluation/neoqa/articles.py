"""News articles about each event in 4 news profiles (NeoQA §4.1, C.4): per profile several subsets of the
event's outline items, one article per subset, recording exactly which items it carries (`used_items`).

The contract the benchmark relies on (the paper's Requirement 2): an article states the facts of its used items
and nothing of any other item. Profile wording (lead-ins, colour sentences, sign-offs) therefore never contains a
name, a number or a date."""

from __future__ import annotations

import random
from typing import TypedDict

from newskg.evaluation.neoqa.records import MARKUP, Event, NewsArticle, OutlineItem, plain
from newskg.evaluation.neoqa.timeline import World


class Profile(TypedDict):
    """A news profile's wording: headline pattern, lead-ins, colour sentences and sign-off."""

    headline: str
    leads: list[str]
    colour: list[str]
    close: str


PROFILES: dict[str, Profile] = {
    "SensationalNews": {
        "headline": "{lead} Sparks Uproar",
        "leads": ["In a stunning turn, ", "Jaws dropped when ", "Brace yourselves: ", ""],
        "colour": [
            "Nobody saw this coming.",
            "The fallout is only just beginning.",
            "Tempers are running high across town.",
        ],
        "close": "Stay with us for every twist in this unfolding saga.",
    },
    "ObjectiveNews": {
        "headline": "{lead}: What We Know",
        "leads": ["", "According to official statements, ", "Records show that ", ""],
        "colour": ["Further details were not immediately available.", "The situation remains under review."],
        "close": "This report will be updated as new information is confirmed.",
    },
    "ProgressiveNews": {
        "headline": "{lead} Puts Community Voices First",
        "leads": ["", "Community advocates noted that ", "In a step welcomed by many residents, "],
        "colour": [
            "Advocates say fairness and openness must guide what happens next.",
            "Many hope the process will include those most affected.",
        ],
        "close": "The debate shows how much local democracy depends on participation.",
    },
    "ConservativeNews": {
        "headline": "{lead} Raises Questions Over Costs",
        "leads": ["", "Taxpayers may note that ", "Critics of public spending pointed out that "],
        "colour": [
            "Sceptics ask whether the plans are affordable.",
            "Local businesses are watching the decisions carefully.",
        ],
        "close": "Whether the plans deliver value for money remains to be seen.",
    },
}


def write_articles(
    rng: random.Random, world: World, per_profile: int = 3, size: tuple[int, int] = (5, 9)
) -> list[NewsArticle]:
    articles: list[NewsArticle] = []
    for event in world.timeline.events:
        number = 0
        for profile in PROFILES:
            for _ in range(per_profile):
                chosen = sorted(
                    rng.sample(event.outline, min(len(event.outline), rng.randint(*size))), key=lambda item: item.pos
                )
                articles.append(_article(rng, world, event, profile, chosen, number))
                number += 1
    return articles


def _article(
    rng: random.Random, world: World, event: Event, profile: str, items: list[OutlineItem], number: int
) -> NewsArticle:
    style = PROFILES[profile]
    sentences = [_with_lead(rng.choice(style["leads"]), item.sentence) for item in items]
    cut = max(1, len(sentences) // 2)
    passages = [
        " ".join(sentences[:cut]),
        " ".join([*sentences[cut:], rng.choice(style["colour"])]).strip(),
        style["close"],
    ]
    base = world.timeline.timeline_id.replace(":", "_")
    return NewsArticle(
        timeline_id=world.timeline.timeline_id,
        article_id=f"{base}-ev{event.created_at}-{number}",
        event_id=event.event_id,
        headline=style["headline"].format(lead=_headline_lead(items[0])),
        passages=[p for p in passages if p],
        news_profile=profile,
        used_items=[item.id for item in items],
        created_at=event.created_at,
        date=event.date,
    )


def _with_lead(lead: str, sentence: str) -> str:
    if not lead:
        return sentence
    first = sentence[0].lower() + sentence[1:] if sentence.startswith(("The ", "A ", "On ", "More ")) else sentence
    return lead + first


def _headline_lead(item: OutlineItem) -> str:
    """The first entity the lead item names (markup kept), so the headline adds no fact of its own."""
    match = MARKUP.search(item.sentence)
    return match.group(0) if match else plain(item.sentence.split(",")[0])[:60]
