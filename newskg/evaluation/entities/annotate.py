"""Builds tests/fixtures/entities/gold.jsonl from the hand-written annotation tables next to it.

Each table (annotations/<page id>.tsv) lists, for one document, every entity surface form we read in its text,
with its type and canonical name: `surface<TAB>TYPE<TAB>canonical`. Every occurrence of a surface in the text
(case-sensitive, not inside a longer word) becomes a mention, longest surfaces first, never overlapping; a
surface that occurs nowhere is an error (a typo in the table). The text is the page's gold article body from
the scrapinghub benchmark, cut at the last line break before 2,500 characters when longer; the NEON document is
the paper's appendix passage. `--review` prints every mention in context and the capitalised words no mention
covers, which is how each document was checked by reading.

Run: `python -m newskg.evaluation.entities.annotate [--pages DIR] [--review]`."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from newskg.evaluation.entities.gold import DEFAULT_GOLD, GoldDocument, GoldMention, load_gold, problems, save_gold

REPO = Path(__file__).resolve().parents[3]
FOLDER = REPO / "tests" / "fixtures" / "entities"
GOLD = DEFAULT_GOLD
PAGES = REPO.parent / "shared" / "data" / "news-html"
MAX_CHARS = 2500
NEON_ID = "neon-doja-cat"
# Pages in gold order: English news with many people and organisations (see the README for why each).
PAGE_IDS = (
    "9cb8224b660f",
    "ecb46e3e489d",
    "0d46122928b6",
    "c90731f051d0",
    "65ce3a4577a0",
    "833caf3bdba5",
    "fde930b01859",
    "7a664e40d256",
    "a1fca19b884e",
    "08f793762792",
    "961bd85ca85a",
    "5ae11e580afc",
    "d1c57d7821e5",
    "ea25dd7edff4",
    "aec5deeaada8",
    "42aad16bde92",
    "3f65af7b6b98",
    "156770d676ce",
    "8267acacb9e4",
    "e7994d550087",
    "87bf60570e6e",
    "7dfc3e359d7c",
    "ffc109d474fd",
    "6ebac05f637e",
    "70cb2d5bca75",
)
# NEON (Figures A1 and A2): the snippets with the paper's <e> markup taken off (and the spaces the markup added),
# in the paper's order, one paragraph each.
NEON_SOURCE = "NEON paper (shared/papers/neon.md beside the repository), appendix Figures A1 and A2, <e> markup removed"
NEON_TEXT = "\n\n".join(
    (
        "May 2, 2023: Stepping out at the Met Gala 2023 (her first ever!), Doja Cat instantly delivered one of the "
        "evening's most Internet-breaking moments by channeling the one and only Choupette, Karl Lagerfeld's "
        'beloved cat. "It makes no sense for anyone to go as Karl\'s cat more than Doja Cat, "says Brett Alan '
        "Nelson, her creative director and stylist ...",
        "May 1, 2023: Doja Cat and Jared Leto deliver Lagerfeld-inspired looks. For this year's theme, the A-list "
        "guests were asked to wear outfits which paid homage to the German fashion designer",
        "May 2 2023: ... To be fair, Leto was not the sole Choupette on the carpet. Doja Cat went the Animorphs "
        "route, wearing ... cap with her Oscar de la Renta gown. It's almost like Doja Cat and Jared Leto went to "
        "the Spirit Halloween store together ...",
    )
)


def cut(body: str) -> str:
    """The gold text of a page: the whole body up to MAX_CHARS, else up to the last line break before it (the
    last sentence end when no line break comes after 1,500 characters)."""
    if len(body) <= MAX_CHARS:
        return body
    end = body.rfind("\n", 0, MAX_CHARS)
    if end < 1500:
        end = body.rfind(". ", 0, MAX_CHARS) + 1
    return body[:end].rstrip()


def read_table(path: Path) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            surface, kind, canonical = line.split("\t")
            rows.append((surface, kind, canonical))
    return rows


def find_mentions(doc_id: str, text: str, rows: list[tuple[str, str, str]]) -> list[GoldMention]:
    taken = [False] * len(text)
    mentions: list[GoldMention] = []
    for surface, kind, canonical in sorted(rows, key=lambda r: -len(r[0])):
        hits = 0
        for match in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", text):
            if any(taken[match.start() : match.end()]):
                continue
            taken[match.start() : match.end()] = [True] * (match.end() - match.start())
            mentions.append(
                GoldMention(start=match.start(), end=match.end(), text=surface, type=kind, canonical=canonical)
            )
            hits += 1
        if not hits:
            raise SystemExit(f"{doc_id}: {surface!r} occurs nowhere in the text")
    return sorted(mentions, key=lambda m: m.start)


def page_texts(pages: Path) -> dict[str, tuple[str, str]]:
    """Page id (first 12 hex digits of the sha256) → (source, gold text)."""
    truth = json.loads((pages / "ground-truth.json").read_text(encoding="utf-8"))
    out: dict[str, tuple[str, str]] = {}
    for sha, entry in truth.items():
        if sha[:12] in PAGE_IDS:
            out[sha[:12]] = (
                f"{entry['url']} (scrapinghub article-extraction-benchmark {sha})",
                cut(entry["articleBody"]),
            )
    return out


def build(pages: Path) -> list[GoldDocument]:
    texts = page_texts(pages)
    sources = [(i, *texts[i]) for i in PAGE_IDS] + [(NEON_ID, NEON_SOURCE, NEON_TEXT)]
    docs: list[GoldDocument] = []
    for doc_id, source, text in sources:
        mentions = find_mentions(doc_id, text, read_table(FOLDER / "annotations" / f"{doc_id}.tsv"))
        doc = GoldDocument(id=doc_id, source=source, text=text, mentions=mentions)
        if problems(doc):
            raise SystemExit("; ".join(problems(doc)))
        docs.append(doc)
    return docs


def review(doc: GoldDocument) -> None:
    print(f"===== {doc.id}: {len(doc.mentions)} mentions")
    for m in doc.mentions:
        left, right = doc.text[max(0, m.start - 30) : m.start], doc.text[m.end : m.end + 20]
        print(f"  {m.type:8} {m.canonical:30.30} …{left!s:>30}[{m.text}]{right}…".replace("\n", " "))
    covered = [False] * len(doc.text)
    for m in doc.mentions:
        covered[m.start : m.end] = [True] * (m.end - m.start)
    loose = sorted(
        {w.group() for w in re.finditer(r"\b[A-Z][\w’'.-]*", doc.text) if not any(covered[w.start() : w.end()])}
    )
    print("  not covered:", ", ".join(loose))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=PAGES, help="the news-html folder with ground-truth.json")
    parser.add_argument("--review", action="store_true", help="print every mention in context")
    args = parser.parse_args()
    docs = build(args.pages)
    save_gold(docs, GOLD)
    load_gold(GOLD)  # what the evaluation will read, checked
    if args.review:
        for doc in docs:
            review(doc)
    print(f"{GOLD}: {len(docs)} documents, {sum(len(d.mentions) for d in docs)} mentions")


if __name__ == "__main__":
    main()
