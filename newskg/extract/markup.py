"""`<e>…</e>` markup around linked mentions, as the extraction prompts expect. Angle brackets already in the
text are escaped first, so a chunk can never forge or break a tag."""

from __future__ import annotations

from newskg.extract.entities.linker import LinkedMention


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mark_up(text: str, mentions: list[LinkedMention]) -> str:
    parts: list[str] = []
    cursor = 0
    for m in sorted(mentions, key=lambda m: m.start):
        if m.start < cursor or m.is_reference:  # names only, as NEON's prompts say ("she" stays unmarked)
            continue  # overlapping spans: the first wins
        parts.append(escape(text[cursor : m.start]))
        parts.append(f"<e>{escape(text[m.start : m.end])}</e>")
        cursor = m.end
    parts.append(escape(text[cursor:]))
    return "".join(parts)
