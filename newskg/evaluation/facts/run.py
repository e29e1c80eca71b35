"""`newskg eval facts`: extract each page set as the stages would, draw a seeded sample of its facts and of its
PERSON and ORG mentions, join the stored labels, and report precision with its 95% interval, per page set and per
rule that made the fact. Items in the sample without a label are listed for reading (`todo`), never guessed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from newskg.core.llm.client import LLMClient
from newskg.core.settings import Settings
from newskg.core.variant import Variant
from newskg.evaluation.facts.collect import ENTITY_TYPES, Extracted, Fact, Mention, extract
from newskg.evaluation.facts.corpus import SHARED_DATA, Corpus, load
from newskg.evaluation.facts.labels import DEFAULT_LABELS, FactLabel, LabelStore, MentionLabel
from newskg.evaluation.facts.sample import seeded_sample
from newskg.evaluation.facts.scoring import Proportion

DEFAULT_FACT_SAMPLE = {Corpus.NEWS: 200, Corpus.FRESH: 120, Corpus.SYNTHETIC: 100}
DEFAULT_MENTION_SAMPLE = {Corpus.NEWS: 80, Corpus.FRESH: 40, Corpus.SYNTHETIC: 30}  # per type
CONFIDENCE_BANDS = (0.0, 0.3, 0.5, 0.7)


class FactsConfig(BaseModel):
    corpora: list[Corpus] = [Corpus.NEWS, Corpus.FRESH, Corpus.SYNTHETIC]
    seed: int = 27
    fact_sample: dict[Corpus, int] = DEFAULT_FACT_SAMPLE
    mention_sample: dict[Corpus, int] = DEFAULT_MENTION_SAMPLE
    labels: Path = DEFAULT_LABELS
    data: Path = SHARED_DATA
    synthetic_timelines: int = 3
    variant: Literal[Variant.M0, Variant.M1] = Variant.M0
    max_chunks: int | None = None  # per page set: an LLM variant is slow on a small local model


class LabelledFact(BaseModel):
    key: str
    corpus: Corpus
    page: str
    rule: str
    subject: str
    subject_type: str
    object: str | None
    text: str
    chunk_text: str
    confidence: float | None = None
    label: FactLabel | None


class LabelledMention(BaseModel):
    key: str
    corpus: Corpus
    page: str
    text: str
    type: str
    name: str
    chunk_text: str
    label: MentionLabel | None


class Figures(BaseModel):
    """Precision of one slice of the sample (a page set, a rule, or all of them)."""

    fact_precision: float | None
    fact_precision_ci: tuple[float, float] | None
    facts_labelled: int
    facts_sampled: int
    readable: float | None
    true_to_text: float | None
    subject_right: float | None
    entity_precision_person: float | None
    entity_precision_person_ci: tuple[float, float] | None
    entity_precision_org: float | None
    entity_precision_org_ci: tuple[float, float] | None
    mentions_labelled: int
    mentions_sampled: int


class CorpusFigures(Figures):
    pages: int
    chunks: int
    facts: int  # every fact the page set gave, before sampling
    facts_per_chunk: float
    by_rule: dict[str, Figures]
    # The sampled facts of at least each confidence (CONFIDENCE_BANDS): is the confidence a reader sees worth
    # reading? In sample on `news` and `synthetic` (the model was fitted on their labels), out of sample on `fresh`.
    by_confidence: dict[str, Figures] = {}
    skipped_pages: list[str]


class FactsReport(Figures):
    m0_rules: str = "strict"
    variant: Variant = Variant.M0
    seed: int
    labels: str
    by_corpus: dict[Corpus, CorpusFigures]
    sample: list[LabelledFact]
    mentions: list[LabelledMention]

    @property
    def todo(self) -> list[LabelledFact | LabelledMention]:
        return [x for x in [*self.sample, *self.mentions] if x.label is None]


def _labelled_facts(facts: Sequence[Fact], size: int, seed: int, store: LabelStore) -> list[LabelledFact]:
    return [
        LabelledFact.model_validate({**asdict(f), "key": f.key, "label": store.facts.get(f.key)})
        for f in seeded_sample(facts, size, seed, lambda f: f.key)
    ]


def _labelled_mentions(mentions: Sequence[Mention], size: int, seed: int, store: LabelStore) -> list[LabelledMention]:
    """`size` of each type, sampled apart."""
    return [
        LabelledMention.model_validate({**asdict(m), "key": m.key, "label": store.mentions.get(m.key)})
        for entity_type in ENTITY_TYPES
        for m in seeded_sample([m for m in mentions if m.type == entity_type], size, seed, lambda m: m.key)
    ]


def _share(labels: list[FactLabel], attribute: str) -> float | None:
    return round(sum(getattr(x, attribute) for x in labels) / len(labels), 4) if labels else None


def figures(facts: Sequence[LabelledFact], mentions: Sequence[LabelledMention]) -> dict[str, object]:
    labels = [f.label for f in facts if f.label is not None]
    precision = Proportion.of(sum(x.clean for x in labels), len(labels))
    out: dict[str, object] = {
        "fact_precision": precision.value,
        "fact_precision_ci": precision.ci,
        "facts_labelled": len(labels),
        "facts_sampled": len(facts),
        "readable": _share(labels, "readable"),
        "true_to_text": _share(labels, "true"),
        "subject_right": _share(labels, "subject_ok"),
        "mentions_labelled": sum(m.label is not None for m in mentions),
        "mentions_sampled": len(mentions),
    }
    for entity_type in ENTITY_TYPES:
        read = [m.label for m in mentions if m.type == entity_type and m.label is not None]
        share = Proportion.of(sum(x.ok for x in read), len(read))
        out[f"entity_precision_{entity_type.lower()}"] = share.value
        out[f"entity_precision_{entity_type.lower()}_ci"] = share.ci
    return out


def _corpus_figures(extracted: Extracted, facts: list[LabelledFact], mentions: list[LabelledMention]) -> CorpusFigures:
    by_rule: dict[str, list[LabelledFact]] = defaultdict(list)
    for fact in facts:
        by_rule[fact.rule].append(fact)
    return CorpusFigures(
        **figures(facts, mentions),  # pyright: ignore[reportArgumentType] - the keys are Figures' fields
        pages=extracted.articles,
        chunks=extracted.chunks,
        facts=len(extracted.facts),
        facts_per_chunk=round(len(extracted.facts) / max(1, extracted.chunks), 3),
        by_rule={
            rule: Figures(**figures(group, []))  # pyright: ignore[reportArgumentType]
            for rule, group in sorted(by_rule.items())
        },
        by_confidence={
            f">={band}": Figures(**figures([f for f in facts if (f.confidence or 0.0) >= band], []))  # pyright: ignore[reportArgumentType]
            for band in CONFIDENCE_BANDS
        },
        skipped_pages=extracted.skipped,
    )


def run(
    config: FactsConfig,
    settings: Settings,
    progress: Callable[[Corpus, int, int], None] | None = None,
    llm: LLMClient | None = None,
) -> FactsReport:
    """M0's facts; with `llm` (config.variant M1), M1's facts from that endpoint."""
    store = LabelStore.load(config.labels)
    by_corpus: dict[Corpus, CorpusFigures] = {}
    sample: list[LabelledFact] = []
    mentions: list[LabelledMention] = []
    for corpus in config.corpora:
        pages = load(corpus, config.data, config.synthetic_timelines, config.seed)
        on_chunks: Callable[[int, int], None] | None = (
            (lambda done, total: progress(corpus, done, total)) if progress else None  # noqa: B023
        )
        extracted = extract(pages, settings, on_chunks, llm, config.max_chunks)
        facts = _labelled_facts(extracted.facts, config.fact_sample.get(corpus, 0), config.seed, store)
        names = _labelled_mentions(extracted.mentions, config.mention_sample.get(corpus, 0), config.seed, store)
        by_corpus[corpus] = _corpus_figures(extracted, facts, names)
        sample += facts
        mentions += names
    return FactsReport(
        **figures(sample, mentions),  # pyright: ignore[reportArgumentType]
        m0_rules=settings.extract_m0_rules,
        variant=config.variant,
        seed=config.seed,
        labels=str(config.labels),
        by_corpus=by_corpus,
        sample=sample,
        mentions=mentions,
    )
