"""Articles for the pipeline: the real news pages under tests/fixtures, stories written for the tests, and
feeding them to `newskg ingest files`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.support.cli import newskg_json

NEWS_HTML = Path(__file__).resolve().parents[1] / "fixtures" / "news-html"

STORY = (
    "Doja Cat arrived at the Paris Fashion Week show on Thursday night in a striking red outfit. The singer "
    "posed for photographers outside the venue with her manager and several friends. Fans gathered along the "
    "street for hours hoping to catch a glimpse of the star before the show began. The designer later "
    "praised her choice of outfit in a short statement to reporters. Tickets for the event had sold out "
    "within minutes of going on sale last month. Organisers said security had been increased this year "
    "after crowds blocked the road outside the venue. The show closed with a tribute to the house founder, "
    "who died in 2019. Several celebrities attended the after-party at a hotel nearby."
)

# Three dated stories (day, source, text): two around the 2023 Met Gala, one from Paris in August.
STORIES = [
    (
        "2023-05-01",
        "alpha",
        "Doja Cat dressed as Choupette at the Met Gala on Monday. Jared Leto also arrived as "
        "Choupette, and Leto posed with Anna Wintour before the dinner.",
    ),
    (
        "2023-05-02",
        "beta",
        "Doja Cat thanked Karl Lagerfeld's estate in a statement. Anna Wintour praised the "
        "Met Gala theme in an interview with Vogue.",
    ),
    (
        "2023-08-31",
        "gamma",
        "Doja Cat performed in Paris at the Accor Arena. Doja Cat later met Pharrell "
        "Williams backstage after the concert.",
    ),
]


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> str:
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return str(path)


def ingest_stories(
    env: dict[str, str],
    folder: Path,
    stories: list[tuple[str, str, str]],
    name: str = "stories.jsonl",
    backfill: bool = True,
) -> dict[str, Any]:
    """`newskg ingest files` of (day, source, text) stories, each at https://SOURCE.example/DAY."""
    rows = (
        {"url": f"https://{src}.example/{day}", "text": text, "published": day, "source": src}
        for day, src, text in stories
    )
    path = write_jsonl(folder / name, rows)
    return newskg_json("ingest", "files", path, *(["--backfill"] if backfill else []), env=env)
