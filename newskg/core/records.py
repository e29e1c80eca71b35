"""The shared record types: the one schema every stage reads and writes.

Every record serialises to JSON carrying its `kind` and `schema_version`, so a consumer can tell a message
written by a newer producer (rejected to the dead-letter topic) from a malformed one.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, ClassVar, Literal, Self, cast

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from newskg.core.errors import NewskgError
from newskg.core.variant import Variant

SCHEMA_VERSION = 1

DayKey = Annotated[int, Field(ge=10000101, le=99991231, description="yyyymmdd day key")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]


class RecordError(NewskgError, ValueError):
    """Bytes that are not a valid record of the expected kind and version; `reason` is a stable code."""

    REASON = "invalid_record"

    def __init__(self, reason: str, message: str):
        super().__init__(message, reason=reason)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    KIND: ClassVar[str]

    schema_version: int = SCHEMA_VERSION

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if not 1 <= version <= SCHEMA_VERSION:
            raise ValueError(f"schema_version {version} is not one this build reads (1..{SCHEMA_VERSION})")
        return version

    def to_json(self) -> str:
        return json.dumps({"kind": self.KIND, **self.model_dump(mode="json")}, ensure_ascii=False)

    def to_bytes(self) -> bytes:
        try:
            return self.to_json().encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (input JSON may escape one: "\ud800") has no UTF-8 form: sent escaped, as JSON allows,
            # for the process stage to strip. Raising here stopped `ingest files` mid-run (issue #28).
            return json.dumps({"kind": self.KIND, **self.model_dump(mode="json")}).encode("ascii")

    @classmethod
    def from_bytes(cls, data: bytes | str) -> Self:
        """Decode and validate; raises RecordError with a reason a dead letter can carry."""
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
        except UnicodeDecodeError as exc:
            raise RecordError("undecodable_bytes", f"undecodable bytes: {exc}") from exc
        payload = _json_loads(text)
        if not isinstance(payload, dict):
            raise RecordError("malformed_json", "malformed JSON: expected an object")
        payload = cast(dict[str, object], payload)  # a JSON object: string keys
        kind = payload.pop("kind", cls.KIND)
        if kind != cls.KIND:
            raise RecordError("wrong_kind", f"expected a {cls.KIND} record, got {kind!r}")
        version = payload.get("schema_version")
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise RecordError(
                "unsupported_schema_version",
                f"schema_version {version} is newer than this build reads ({SCHEMA_VERSION})",
            )
        try:
            return cls.model_validate(payload)
        except ValueError as exc:
            raise RecordError("invalid_record", f"invalid {cls.KIND}: {exc}") from exc


class RawArticle(Record):
    """What a source saw: a page or a text, with whatever dates it offered (the process stage picks one)."""

    KIND: ClassVar[str] = "RawArticle"
    url: str | None = None
    html: str | None = None
    text: str | None = None
    source: NonEmpty = "unknown"
    fetched_at: str = Field(description="ISO instant the source fetched it")
    published: str | None = Field(default=None, description="date given with the input (JSONL field, synthetic stream)")
    feed_published: str | None = Field(default=None, description="date of the feed entry")
    http_last_modified: str | None = None
    fallback_date: str | None = Field(default=None, description="--date given on the command line")
    title: str | None = None
    backfill: bool = Field(
        default=False, description="historical input: its ingestion instant is its publication instant"
    )

    @model_validator(mode="after")
    def _has_content(self) -> Self:
        if not (self.html or self.text):
            raise ValueError("a RawArticle needs html or text")
        return self


class Article(Record):
    KIND: ClassVar[str] = "Article"
    id: NonEmpty
    url: str | None = None
    title: str | None = None
    author: str | None = None
    text: NonEmpty
    published: str = Field(description="ISO instant, UTC")
    published_day: DayKey
    date_origin: Literal["page", "given", "feed", "http", "cli"] = "page"
    source: NonEmpty
    source_id: NonEmpty
    lang: str | None = None
    ingested_at: str
    ingested_ms: int


# The provenance fields of a reported text (_Reported), by name: what every copy of them reads and writes.
PROVENANCE = ("source", "source_id", "url", "title", "day", "published", "ingested_at", "ingested_ms")


class _Reported(Record):
    """Where and when a piece of text was reported: shared by a kept chunk and a sighting of it."""

    source: NonEmpty
    source_id: NonEmpty
    url: str | None = None
    title: str | None = None
    day: DayKey
    published: str
    ingested_at: str
    ingested_ms: int

    def provenance(self) -> dict[str, Any]:
        """Its provenance fields by name (PROVENANCE), as a graph row stores them."""
        return self.provenance_of(self)

    @staticmethod
    def provenance_of(holder: object, **given: Any) -> dict[str, Any]:
        """The provenance fields (PROVENANCE) read by name off anything that carries them (a record, a graph row,
        an article), those in `given` as given (an article's `day` is its `published_day`)."""
        return {name: given[name] if name in given else getattr(holder, name) for name in PROVENANCE}


class Chunk(_Reported):
    """m consecutive sentences of one article; the id is the hash of the normalised text."""

    KIND: ClassVar[str] = "Chunk"
    id: NonEmpty
    text: NonEmpty
    sentences: list[str]
    article_id: NonEmpty
    article_ids: list[str]
    sentence_start: int = Field(ge=0, description="index of the first sentence in the article")
    sentence_end: int = Field(ge=1, description="index after the last sentence")
    entity_ids: list[str] = []
    lang: str | None = Field(default=None, description="its article's language (ISO 639-1), detected from the text")


class ChunkSighting(_Reported):
    """A near-duplicate of a kept chunk seen in another article: recorded, never re-extracted."""

    KIND: ClassVar[str] = "ChunkSighting"
    chunk_id: NonEmpty
    article_id: NonEmpty
    similarity: float = Field(ge=0.0, le=1.0)


class DedupSignature(Record):
    """A kept chunk's MinHash signature: one entry of the shared dedup log."""

    KIND: ClassVar[str] = "DedupSignature"
    chunk_id: NonEmpty
    article_id: NonEmpty
    num_perm: int = Field(ge=1)
    minhash: NonEmpty = Field(description="base64 of little-endian uint32 hash values")
    day: DayKey | None = Field(default=None, description="the chunk's publication day: the dedup window's clock")
    ingested_ms: int | None = Field(
        default=None,
        description="the ingestion instant of the article record that emitted it (its redelivery re-emits)",
    )


class DedupSighting(Record):
    """An article's chunk already sent as a sighting of a kept chunk: one entry of the shared dedup log, so the
    same article ingested again emits nothing, on any replica and after restarts."""

    KIND: ClassVar[str] = "DedupSighting"
    chunk_id: NonEmpty = Field(description="the sighting article's own chunk (hash of its text)")
    article_id: NonEmpty
    kept_chunk_id: NonEmpty
    day: DayKey
    ingested_ms: int | None = Field(
        default=None,
        description="the ingestion instant of the article record that emitted it (its redelivery re-emits)",
    )
    similarity: float | None = Field(default=None, description="the similarity the sighting stated")


class DedupRelease(Record):
    """A kept chunk the extract stage dead-lettered (it never reached the graph): one entry of the shared dedup
    log, written by the extract stage with the dead letter, so the chunk's signature is let go and a later
    near-duplicate is extracted as a chunk of its own instead of becoming a sighting of a chunk that does not exist.
    It names the record that emitted the chunk (`ingested_ms`): a signature logged again later, by another record,
    is not released by it; read before that record's signature (the two stages write the log independently), it
    still releases it."""

    KIND: ClassVar[str] = "DedupRelease"
    chunk_id: NonEmpty
    ingested_ms: int = Field(description="the ingestion instant of the article record that emitted the chunk")
    day: DayKey = Field(description="the chunk's publication day: the dedup window's clock")
    reason: str = ""


class IndexOp(BaseModel):
    """One call linking made on the extract stage's alias index (extract/entities/alias_index.py): add(entity,
    name, type), add_alias(entity, alias), merge(entity → target), vote(entity, type, weight). The time and the
    context words are its journal's."""

    model_config = ConfigDict(frozen=True)

    op: Literal["add", "alias", "merge", "vote"]
    entity_id: str
    text: str = ""  # add: the name; alias: the alias; merge: the target id; vote: the type
    kind: str = ""  # add: the type
    weight: int = 0  # vote


class ArticleMemory(BaseModel):
    """What the linker remembers of an article (extract/entities/linker.py `_ArticleMemory`) as plain data: in a
    journal, what its chunk added to it."""

    fulls: list[tuple[str, str, str]] = []  # (name, type, explanation)
    person_tokens: list[str] = []
    linked: dict[str, str] = {}
    names: list[tuple[list[str], str]] = []  # (key words, type)
    votes: list[tuple[str, str, int, int, int]] = []  # (entity id, type, seen day, seen ms, weight)


class LinkJournal(BaseModel):
    """What linking one chunk record taught the linker (extract/entities/journal.py): stored with the chunk in the
    graph, and carried by the shared linking log."""

    article_id: str
    seen: tuple[int, int]  # the chunk's (publication day, ingestion ms): when its operations were first seen
    context: list[str]
    ops: list[IndexOp]
    memory: ArticleMemory


class LinkingEntry(Record):
    """One entry of the shared linking log (extract/entities/link_log.py): the journal of a chunk record written
    to the graph, keyed by the journal's id, so every extract replica's alias index learns what the others linked."""

    KIND: ClassVar[str] = "LinkingEntry"
    journal_id: NonEmpty
    chunk_id: NonEmpty
    journal: LinkJournal


class Mention(Record):
    KIND: ClassVar[str] = "Mention"
    text: NonEmpty
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    label: NonEmpty
    entity_id: str | None = None


class Entity(Record):
    """What one record (a linked chunk) says of an entity, as of that record (issue #29): the graph keeps each
    alias with its earliest-visible record's times and the name and type of the earliest-visible record that gave
    them (graph/store/writes.ENTITIES), so neither arrival order nor a later record changes what "as of D" shows.

    `seen`: the record's (publication day, ingestion ms); None: given without a time (a KB entry, a fixture),
    visible always and first among records. `aliases`: the spellings the record showed, each as of `seen` unless
    `alias_seen` dates it otherwise (a KB alias: (0, 0), always). `spelled`: `name` is the record's own spelling of
    the entity's name (False: only the linker's name for it, used to create the node until a record spells it)."""

    KIND: ClassVar[str] = "Entity"
    id: NonEmpty
    name: NonEmpty
    type: NonEmpty
    aliases: list[str] = []
    description: str | None = None
    seen: tuple[int, int] | None = None
    alias_seen: dict[str, tuple[int, int]] = {}
    spelled: bool = True


class Interaction(Record):
    """One timestamped entity interaction, lexicalised as a short sentence."""

    KIND: ClassVar[str] = "Interaction"
    id: NonEmpty
    subject_id: NonEmpty
    subject_name: NonEmpty
    object_id: str | None = None
    object_name: str | None = None
    text: NonEmpty
    event_day: DayKey
    published_day: DayKey
    ingested_at: str
    ingested_ms: int
    variant: Variant
    chunk_ids: list[str]
    article_ids: list[str] = []
    source_ids: list[str] = []
    # Which rule of its variant made it (M0: extract/openie/clauses.py RULES; an LLM fact: its variant): measured
    # per rule by `newskg eval facts`. Not part of the id, and not written to the graph.
    rule: str | None = None
    # How far a reader can trust it (M0: extract/openie/confidence.py, fitted on labelled facts; None: an LLM's fact,
    # whose variant has no fitted model). Not part of the id: the same fact from two chunks keeps the higher.
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class DeadLetter(Record):
    """Input a stage could not use, with the reason and where it came from: nothing vanishes."""

    KIND: ClassVar[str] = "DeadLetter"
    reason: NonEmpty
    detail: str = ""
    stage: NonEmpty
    topic: str
    partition: int
    offset: int
    key: str | None = None
    payload_excerpt: str = ""
    payload_bytes: int = 0
    at: str


RECORD_TYPES: dict[str, type[Record]] = {
    cls.KIND: cls
    for cls in (
        RawArticle,
        Article,
        Chunk,
        ChunkSighting,
        DedupSignature,
        DedupSighting,
        DedupRelease,
        LinkingEntry,
        Mention,
        Entity,
        Interaction,
        DeadLetter,
    )
}


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _int64(digits: str) -> int:
    """A JSON integer no store can hold (a 5,000-digit one makes int() raise a plain ValueError; one past int64
    overflows the dedup index's arrays and the graph's integers) refused as malformed."""
    if len(digits) > 20:  # "-" and 19 digits
        raise RecordError("malformed_json", f"malformed JSON: an integer of {len(digits)} characters")
    value = int(digits)
    if not INT64_MIN <= value <= INT64_MAX:
        raise RecordError("malformed_json", f"malformed JSON: the integer {value} is outside 64 bits")
    return value


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise RecordError("malformed_json", f"malformed JSON: the number {text[:40]} is out of range")
    return value


def _no_constant(name: str) -> object:
    raise RecordError("malformed_json", f"malformed JSON: {name} is not JSON")


def _json_loads(data: bytes | str) -> object:
    """json.loads, every way it refuses input a RecordError (a stage's guard, and the dedup log's replay, catch
    RecordError): bytes that are not UTF-8, malformed JSON, nesting deeper than the parser's recursion limit
    (`[[[[...`, RecursionError), an integer too long to convert or outside 64 bits, a number out of range, and
    NaN/Infinity (which Python's parser accepts and JSON does not). Anything else the parser raises is a
    RecordError too: no input reaches past it as another exception."""
    try:
        return json.loads(data, parse_int=_int64, parse_float=_finite, parse_constant=_no_constant)
    except RecordError:
        raise
    except UnicodeDecodeError as exc:
        raise RecordError("undecodable_bytes", f"undecodable bytes: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise RecordError("malformed_json", f"malformed JSON: {exc}") from exc
    except RecursionError as exc:
        raise RecordError("malformed_json", "malformed JSON: nested too deeply to parse") from exc
    except (ValueError, TypeError, OverflowError) as exc:
        raise RecordError("malformed_json", f"malformed JSON: {type(exc).__name__}: {str(exc)[:200]}") from exc


def decode_any(data: bytes | str) -> Record:
    """Decode a message whose kind is not known in advance (the chunks topic carries two kinds)."""
    payload = _json_loads(data)
    if not isinstance(payload, dict):
        raise RecordError("malformed_json", "malformed JSON: expected an object")
    kind = cast(dict[str, object], payload).get("kind")
    if not isinstance(kind, str) or kind not in RECORD_TYPES:
        raise RecordError("wrong_kind", f"unknown record kind {kind!r}")
    return RECORD_TYPES[kind].from_bytes(data)
