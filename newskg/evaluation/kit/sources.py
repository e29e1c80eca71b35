"""The sources a question generated from the graph may read: the news, or the synthetic NeoQA stream (its
articles live under a reserved domain, evaluation/neoqa/generate.article_url). FanOutQA and IRB generation filter
every article they read by it, in their Cypher (graph/store/questions.ARTICLE_OF_SOURCE), with these parameters."""

# pyright: strict

SYNTHETIC_PREFIX = "https://neoqa.synthetic.invalid/"
SOURCES = ("news", "neoqa")


def source_params(source: str) -> dict[str, object]:
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    return {"synthetic": source == "neoqa", "synthetic_prefix": SYNTHETIC_PREFIX}
