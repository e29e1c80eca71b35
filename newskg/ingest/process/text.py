"""Main text and metadata of a page with trafilatura; plain text passes through."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import cast

import trafilatura
from lxml import html as lxml_html  # pyright: ignore[reportMissingTypeStubs] - lxml ships no types; see _html_lang

from newskg.core.records import RawArticle
from newskg.ingest.process.guards import Rejected, looks_binary

MIN_TEXT_CHARS = 40
# C0 control characters but tab and newline, DEL, and lone UTF-16 surrogates (JSON's "\ud800" decodes to one):
# a NUL cuts a FalkorDB query's text, and a surrogate cannot be encoded as UTF-8 (the chunk message would fail).
_UNWANTED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text without control characters (tab and newline kept; CR and CRLF become a newline) or lone surrogates."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _UNWANTED.sub("", text)


def clean_optional(text: str | None) -> str | None:
    return None if text is None else clean_text(text) or None


@dataclass(frozen=True)
class Page:
    text: str
    title: str | None
    author: str | None
    date: str | None
    lang: str | None
    url: str | None


def _html_lang(html: str) -> str | None:
    try:
        # lxml is untyped: its root element is only asked for two attributes, read as strings right here.
        root = lxml_html.fromstring(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            html[:200_000].encode("utf-8", "replace")
        )
        attributes: dict[str, str] = dict(root.attrib)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    except (ValueError, lxml_html.etree.ParserError):  # pyright: ignore[reportUnknownMemberType]
        return None
    lang = (attributes.get("lang") or attributes.get("xml:lang") or "").strip()
    return lang.split("-")[0].lower() or None


def _metadata(result: str | None) -> dict[str, str]:
    """trafilatura's JSON output, its string fields only (text, title, author, date, language, source)."""
    decoded: object = json.loads(result) if result else {}
    if not isinstance(decoded, dict):
        return {}
    fields = cast("dict[object, object]", decoded)  # a JSON object: its keys and values are checked below
    return {key: value for key, value in fields.items() if isinstance(key, str) and isinstance(value, str)}


def extract_page(raw: RawArticle) -> Page:
    content = raw.html or raw.text or ""
    if looks_binary(content):
        raise Rejected("binary_payload", "the payload is binary, not text or HTML")
    if raw.html:
        result = trafilatura.extract(
            raw.html,
            url=raw.url,
            output_format="json",
            with_metadata=True,
            include_comments=False,
            include_tables=False,
            favor_precision=False,
        )
        meta = _metadata(result)
        text = (meta.get("text") or "").strip()
        page = Page(
            text,
            meta.get("title") or raw.title,
            meta.get("author"),
            meta.get("date"),
            meta.get("language") or _html_lang(raw.html),
            raw.url or meta.get("source"),
        )
    else:
        page = Page((raw.text or "").strip(), raw.title, None, None, None, raw.url)
    page = Page(
        clean_text(page.text).strip(),
        clean_optional(page.title),
        clean_optional(page.author),
        page.date,
        clean_optional(page.lang),
        clean_optional(page.url),
    )
    if len(page.text) < MIN_TEXT_CHARS:
        raise Rejected("empty_extraction", f"only {len(page.text)} characters of main text")
    return page
