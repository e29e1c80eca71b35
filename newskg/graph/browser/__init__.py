"""The Neo4j Browser guide, saved queries and style for analysts, and a loader for the saved queries."""

from __future__ import annotations

from importlib.resources import files


def saved_queries() -> dict[str, tuple[str, list[str]]]:
    """name → (Cypher, parameter names), parsed from queries.cypher."""
    text = files(__name__).joinpath("queries.cypher").read_text(encoding="utf-8")
    queries: dict[str, tuple[str, list[str]]] = {}
    for block in text.split("// name: ")[1:]:
        lines = block.splitlines()
        name = lines[0].strip()
        params = lines[1].removeprefix("// params:").split("(")[0]
        body = "\n".join(line for line in lines[2:] if not line.startswith("//")).strip().rstrip(";")
        queries[name] = (body, [p.strip() for p in params.split(",") if p.strip()])
    return queries
