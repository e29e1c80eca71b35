"""A fan-out question → one list step and one attribute step per item (FanOutQA's decompositions have this
shape: "who were the first five picks?", then "what is the batting hand of {pick}?").

The LLM decomposes when one is configured (prompts/decompose.py); offline, a few rules cover the shapes
"for each X that …, Y?", "what is the Y of each of the X?", "what is the Y of the N X?", "who are the Y of the
X?" and "what are the X, and what is their Y?". A question no rule fits is answered whole (one step)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from newskg.core.llm.client import LLMClient
from newskg.evaluation.fanoutqa.prompts import decompose as prompt

ITEM = "{item}"
_COUNT = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)"


@dataclass(frozen=True)
class Decomposition:
    list_question: str
    attribute_template: str  # holds {item}; empty when the list itself answers the question
    by: str  # rules | llm | whole

    def attribute(self, item: str) -> str:
        return self.attribute_template.replace(ITEM, item)

    @property
    def fans_out(self) -> bool:
        return self.by != "whole"


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,?.")


def _for_each(m: re.Match[str]) -> Decomposition:
    x, rel = _clean(m["x"]), _clean(m["rel"])
    # The attribute step keeps the relation: "that interaction" means nothing without the list's entity.
    return Decomposition(f"Which {x} {rel}?", f"For {ITEM} (the {x} that {rel}): {_clean(m['y'])}?", "rules")


def _of_each(m: re.Match[str]) -> Decomposition:
    return Decomposition(
        f"What are the {_clean(m['x'])}?", f"{m['wh'].capitalize()} is the {_clean(m['y'])} of {ITEM}?", "rules"
    )


def _and_their(m: re.Match[str]) -> Decomposition:
    return Decomposition(f"What are the {_clean(m['x'])}?", f"What is the {_clean(m['y'])} of {ITEM}?", "rules")


# Most specific first. Every rule keeps the question's own words for the list and the attribute.
RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Decomposition]], ...] = (
    (re.compile(r"^for each (?P<x>.+?) that (?P<rel>.+?), (?P<y>.+?)\??$", re.I), _for_each),
    (
        re.compile(r"^(?P<wh>what|who|which) (?:is|are|was|were) the (?P<y>.+?) of each of the (?P<x>.+?)\??$", re.I),
        _of_each,
    ),
    (
        re.compile(
            r"^(?:what|who|which) (?:is|are|was|were) the (?P<x>.+?),? and (?:what|who) (?:is|are|was|were) "
            r"(?:their|its|the) (?P<y>.+?)(?: of each.*)?\??$",
            re.I,
        ),
        _and_their,
    ),
    (
        re.compile(
            rf"^(?P<wh>what|who|which) (?:is|are|was|were) the (?P<y>.+?) of the (?P<x>(?:\w+ )?{_COUNT}\b.+?)\??$",
            re.I,
        ),
        _of_each,
    ),
    (re.compile(r"^(?P<wh>who|what) (?:is|are|was|were) the (?P<y>\w+s) of the (?P<x>.+?)\??$", re.I), _of_each),
)


def decompose_offline(question: str) -> Decomposition:
    text = _clean(question)
    for pattern, build in RULES:
        if m := pattern.match(text):
            return build(m)
    return Decomposition(question, "", "whole")


class Decomposer:
    """The LLM when one is given (its reply cached and cost-accounted by the client); the rules otherwise, and
    whenever the LLM's reply is unusable (no reply, or an attribute step without {item})."""

    def __init__(self, client: LLMClient | None = None):
        self.client = client

    def __call__(self, question: str) -> Decomposition:
        if self.client is not None:
            reply = self.client.complete(prompt.build(question))
            if reply is not None and (not reply.attribute_question or ITEM in reply.attribute_question):
                return Decomposition(reply.list_question, reply.attribute_question, "llm")
            self.client.count(prompt.NAME, "unusable")
        return decompose_offline(question)
