"""Content-derived identifiers: the same content always gets the same id, so every write is an idempotent upsert."""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from newskg.core.records import Variant

# Query parameters that only track the click, never change the article.
_TRACKING_PARAMS = re.compile(r"^(utm_.*|fbclid|gclid|mc_cid|mc_eid|ref|ref_src|cmpid|ocid|smid|smtyp)$", re.I)
_SPACE = re.compile(r"\s+")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NAMESPACE = uuid.UUID("6f1d4c3e-2b7a-4e0c-9a57-3c1f0d2b8e11")


def digest(*parts: str, size: int = 16) -> str:
    """Hex digest of the parts, separated so ("ab", "c") and ("a", "bc") differ."""
    h = hashlib.blake2b(digest_size=size)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def normalise_text(text: str) -> str:
    """Case-folded, NFKC, single-spaced text without lone surrogates (no UTF-8 holds one; the process stage strips
    them): the form content ids are computed from."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", _LONE_SURROGATE.sub("", text))).strip().casefold()


def canonical_url(url: str) -> str:
    """Lower-case scheme and host, no fragment, no tracking parameters, no trailing slash."""
    parts = urlsplit(url.strip())
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING_PARAMS.match(k)]
    path = parts.path.rstrip("/") or "/"
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    netloc = host if parts.port in (None, 80, 443) else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme.lower() or "http", netloc, path, urlencode(sorted(query)), ""))


def article_id(url: str | None, text: str | None) -> str:
    """Canonical URL when there is one, else the normalised text."""
    if url:
        return "a_" + digest("url", canonical_url(url))
    if text:
        return "a_" + digest("text", normalise_text(text))
    raise ValueError("an article needs a url or a text to get an id")


def chunk_id(text: str) -> str:
    return "c_" + digest("chunk", normalise_text(text))


def source_id(name: str) -> str:
    return "s_" + digest("source", normalise_text(name))


def entity_id(name: str, entity_type: str) -> str:
    return "e_" + digest("entity", entity_type.upper(), normalise_text(name))


def named_entity_id(name: str) -> str:
    """The id the linker gives an entity it creates: the name alone. An exact name links to a known entity
    whatever its type, so two chunks that could not see each other (concurrent consumers, a restart) must create
    the one entity a sequential run would have made, even when spaCy typed the name differently in each; the type
    is the mentions' vote, not part of who the entity is."""
    return entity_id(name, "NAMED")


def interaction_id(subject_id: str, object_id: str | None, text: str, event_day: int, variant: Variant) -> str:
    """The extraction variant is part of the id: the same sentence extracted by M0 and by M1 stays two facts, so
    NEON(M0) and NEON(M1) each retrieve only their own (the replay compares them)."""
    return "i_" + digest("interaction", variant, subject_id, object_id or "", normalise_text(text), str(event_day))


def point_uuid(graph_id: str) -> str:
    """Qdrant point id for a graph id (UUID5), so mirror upserts are idempotent too."""
    return str(uuid.uuid5(_NAMESPACE, graph_id))
