"""The graph explorer: JSON endpoints under /v1/explore and the page at /explore (qa/explore_page/).

Everything is "as of D" (graph/store/explore.py): search with suggestions, an entity's neighbourhood, its daily
mentions with the NEON spike days (core/spikes.py), the evidence of an interaction, a read-only Cypher console
(the server refuses writes and stops the statement at the timeout) and the export of a view as JSON or GraphML.

The page and its scripts carry no data and are served without a key (PAGE_PATHS, open in qa/api.py); every
/v1/explore call sends the API key the user typed into the page (kept in sessionStorage, sent as X-API-Key)."""

from __future__ import annotations

import datetime as dt
import logging
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from newskg.core.records import Variant
from newskg.core.spikes import SpikeRule, detect
from newskg.core.timeaxes import day_iso, day_key, shift_day
from newskg.graph.connection.base import ConsoleRefused
from newskg.graph.store import explore
from newskg.graph.store.asof import AsOf
from newskg.graph.store.explore import EdgeRow, Window
from newskg.graph.store.rows import EntityAsOf
from newskg.graph.store.store import GraphStore
from newskg.qa.contract import (
    DATE_PATTERN,
    ERRORS,
    PROGRAM_PATTERN,
    TEXT_PATTERN,
    ErrorBody,
    date_query,
    parse_day,
    text_query,
)

LOG = logging.getLogger(__name__)
PAGE_DIR = Path(__file__).resolve().parent / "explore_page"
REPO = Path(__file__).resolve().parents[2]  # the checkout (newskg/qa/explore.py): its node_modules
# Where the image (k8s/Dockerfile) puts cytoscape.min.js: an installed package has no node_modules beside it.
VENDOR_DIR = PAGE_DIR / "vendor"
GRAPH_LIBRARY = "cytoscape.min.js"
# The page's files: fixed names (nothing from the request picks a path on disk).
ASSETS = {"explore.js": "text/javascript", "explore.css": "text/css", GRAPH_LIBRARY: "text/javascript"}
PAGE_PATHS = frozenset({"/explore", *(f"/explore/{name}" for name in ASSETS)})
MISSING_LIBRARY = (
    "The explorer's graph library (cytoscape.min.js, from npm) is not installed, so the page cannot draw the graph. "
    "Run `make explore` (installs it, then serves this page) or `make setup`; in a checkout without make: "
    "`npm ci --omit=dev`."
)

# An evidence row repeats its interaction; the fact is said once, above its evidence.
FACT_FIELDS = ("text", "event_day", "variant", "confidence", "subject_id", "object_id")

AS_OF_HELP = "YYYY-MM-DD: the graph as it stood at the end of that day (default: as it stands now)"
TYPE_PATTERN = r"^[A-Z_]{1,20}$"
RESULT_CAP = 500  # edges per entity in a view
REFUSAL_STATUS = {"write_refused": 403, "timeout": 408, "invalid_query": 400}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {"model": ErrorBody, "description": "no such entity or interaction as of the day"},
}
CONSOLE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    400: {"model": ErrorBody, "description": "not valid Cypher (reason `invalid_query`)"},
    403: {"model": ErrorBody, "description": "the statement writes: refused by the server (`write_refused`)"},
    408: {"model": ErrorBody, "description": "stopped by the server-side timeout (`timeout`)"},
}
EXPORT_RESPONSES: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND,
    200: {
        "description": "the view as JSON (`format=json`) or GraphML (`format=graphml`), as a download",
        "content": {"application/json": {}, "application/graphml+xml": {}},
    },
}

AsOfParam = Annotated[str | None, date_query(AS_OF_HELP)]
FromParam = Annotated[str | None, date_query("first event day (not after `to` nor the as-of day: else 422)", "from")]
ToParam = Annotated[str | None, date_query("last event day (default, and at most: the as-of day)")]
VariantParam = Annotated[Variant | None, Query(description="extraction variant: M0, M1 or M2 (default: all)")]
TypesParam = Annotated[
    list[Annotated[str, Field(pattern=TYPE_PATTERN)]] | None,
    Query(alias="type", description="keep neighbours of these entity types (repeatable; default: all)"),
]
EntityIdParam = Annotated[str, PathParam(min_length=1, max_length=200, pattern=TEXT_PATTERN)]


@dataclass(frozen=True)
class ConsoleLimits:
    timeout_ms: int = 2000
    max_rows: int = 500
    max_chars: int = 2000


# The console's parameters: a name is one line of text, a string value may span lines (qa/contract.py patterns:
# no NUL, which would cut the statement FalkorDB's client inlines them into).
ParamName = Annotated[str, Field(min_length=1, max_length=100, pattern=TEXT_PATTERN)]
ParamText = Annotated[str, Field(pattern=PROGRAM_PATTERN)]
ParamValue = ParamText | int | float | bool | None | list[ParamText | int | float | bool | None]


class ConsoleRequest(BaseModel):
    query: str = Field(
        min_length=1,
        max_length=ConsoleLimits().max_chars,
        pattern=PROGRAM_PATTERN,
        description="A read-only Cypher statement; values as $parameters",
    )
    params: dict[ParamName, ParamValue] = Field(
        default_factory=dict,
        description="The statement's parameters",
        # pydantic states the names' pattern as patternProperties, which alone would admit any other name
        json_schema_extra={"additionalProperties": False},
    )
    as_of: str | None = Field(
        default=None,
        pattern=DATE_PATTERN,
        json_schema_extra={"format": "date"},
        description="YYYY-MM-DD: sets $as_of_day and $as_of_ms (the as-of bounds of graph/store/reads.visible) for "
        "the statement to filter with; the console runs the statement as written, it does not rewrite it",
    )


def _parse_day(value: str | None, name: str) -> int | None:
    return None if value is None else parse_day(value, name)


def _as_of(value: str | None) -> AsOf:
    return AsOf.of(_parse_day(value, "as_of"))


def _window(as_of: AsOf, first: str | None, last: str | None, variant: Variant | None) -> Window:
    start = _parse_day(first, "from") or 0  # no lower bound: an as-of day before year 1000 is still a day
    end = min(_parse_day(last, "to") or as_of.day, as_of.day)
    if start > end:
        raise HTTPException(422, "from is after to (or after the as-of day)")
    return Window(start, end, variant)


@dataclass
class View:
    """Entities (nodes) and the interactions between them (edges) visible as of D."""

    nodes: dict[str, dict[str, object]]
    edges: dict[str, dict[str, object]]

    def as_dict(self) -> dict[str, object]:
        return {"nodes": list(self.nodes.values()), "edges": list(self.edges.values())}


def build_view(
    store: GraphStore,
    entity_ids: list[str],
    as_of: AsOf,
    window: Window,
    types: list[str] | None,
    focus: list[EntityAsOf] | None = None,
) -> View:
    """The neighbourhoods of `entity_ids` merged: a neighbour whose type is filtered out drops with its edges;
    a fact with no object stays on its subject (`target` null). `focus`: explore.nodes of `entity_ids` when the
    caller has read them already."""
    rows = [row for entity in entity_ids for row in explore.neighbourhood(store, entity, as_of, window, RESULT_CAP)]
    found = _entities_of(store, entity_ids, rows, as_of, focus)
    kept = {i for i in found if i in entity_ids or not types or found[i].type in types}
    # an edge between two focus entities is in both neighbourhoods: one edge, counted once
    shown = {r.id: r for r in rows if r.subject_id in kept and (r.object_id is None or r.object_id in kept)}
    facts = _facts_per_entity(list(shown.values()))
    view = View({}, {i: _edge(r) for i, r in shown.items()})
    for entity_id in sorted(kept):
        entity = found[entity_id]
        node: dict[str, object] = {**asdict(entity), "aliases": entity.aliases or []}
        view.nodes[entity_id] = node | {"focus": entity_id in entity_ids, "facts": facts[entity_id]}
    return view


def _entities_of(
    store: GraphStore, entity_ids: list[str], rows: list[EdgeRow], as_of: AsOf, focus: list[EntityAsOf] | None
) -> dict[str, EntityAsOf | explore.Neighbour]:
    """The view's entities as of D: the focus ones with their exact counts then (explore.nodes), the others without
    counts (explore.neighbours): the visible edge that names one proves it exists then, and counting its facts would
    cost all of them, however many the view shows (issue #30)."""
    named = {r.subject_id for r in rows} | {r.object_id for r in rows if r.object_id}
    others = explore.neighbours(store, sorted(named - set(entity_ids)), as_of)
    focus = explore.nodes(store, entity_ids, as_of) if focus is None else focus
    return {e.id: e for e in [*others, *focus]}


def _edge(row: EdgeRow) -> dict[str, object]:
    return {
        "id": row.id,
        "source": row.subject_id,
        "target": row.object_id,
        "text": row.text,
        "day": day_iso(row.event_day),
        "event_day": row.event_day,
        "published_day": row.published_day,
        "variant": row.variant,
        "confidence": row.confidence,
        "n_sources": row.n_sources,
    }


def _facts_per_entity(rows: list[EdgeRow]) -> Counter[str]:
    """The view's facts naming each entity (a fact about it alone included, one with itself as object once): what
    the page sizes a node by, since only the focus entities carry their counts as of D."""
    return Counter(end for r in rows for end in {r.subject_id, r.object_id} if end is not None)


def graphml(view: View) -> bytes:
    """The view as GraphML (nodes: name, type, their facts in the view, a focus entity's mentions and interactions
    as of D; edges: text, day, sources, variant)."""
    root = ET.Element("graphml", xmlns="http://graphml.graphdrawing.org/xmlns")
    keys = [
        ("name", "node", "string"),
        ("type", "node", "string"),
        ("mentions", "node", "int"),
        ("interactions", "node", "int"),
        ("facts", "node", "int"),
        ("text", "edge", "string"),
        ("day", "edge", "string"),
        ("n_sources", "edge", "int"),
        ("variant", "edge", "string"),
        ("confidence", "edge", "double"),
    ]
    for name, scope, kind in keys:
        ET.SubElement(root, "key", {"id": name, "for": scope, "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", id="view", edgedefault="directed")

    def data(parent: ET.Element, values: dict[str, object], scope: str) -> None:
        for name, key_scope, _ in keys:
            if key_scope == scope and values.get(name) is not None:
                ET.SubElement(parent, "data", key=name).text = str(values[name])

    for node_id, node in view.nodes.items():
        data(ET.SubElement(graph, "node", id=node_id), node, "node")
    for edge_id, edge in view.edges.items():
        if edge["target"] is not None:
            attrs = {"id": edge_id, "source": str(edge["source"]), "target": str(edge["target"])}
            data(ET.SubElement(graph, "edge", attrs), edge, "edge")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


class _SpikeEntity(BaseModel):
    entity_id: str
    spike_days: list[int | str] = Field(default_factory=lambda: [])  # day keys (replay) or YYYY-MM-DD (spikes)


class _SpikeFileBody(BaseModel):
    origin: str | None = None
    entities: list[_SpikeEntity] = Field(default_factory=lambda: [])  # `newskg eval spikes`: <out>/spikes.json
    spikes: list[_SpikeEntity] = Field(default_factory=lambda: [])  # `newskg eval replay`: <out>/report.json


@dataclass(frozen=True)
class NeonSpikes:
    """The spike days the NEON evaluation found, per entity id."""

    path: Path
    origin: str | None
    days: dict[str, frozenset[int]]


def _day_of(value: int | str) -> int:
    return value if isinstance(value, int) else day_key(value)


def read_neon_spikes(path: Path) -> NeonSpikes:
    """A spike file of the NEON evaluation; ValueError (pydantic's included) when it is not one."""
    body = _SpikeFileBody.model_validate_json(path.read_bytes())
    days: dict[str, set[int]] = {}
    for entry in [*body.entities, *body.spikes]:
        days.setdefault(entry.entity_id, set()).update(_day_of(d) for d in entry.spike_days)
    return NeonSpikes(path, body.origin, {k: frozenset(v) for k, v in days.items()})


class SpikeFile:
    """The NEON evaluation's spike days when its file is there (read again whenever the file changes), else None:
    the timeline then computes the rolling-sum rule itself. A file that cannot be read is logged and skipped."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._read: tuple[tuple[int, int], NeonSpikes | None] | None = None

    def current(self) -> NeonSpikes | None:
        if self.path is None or not self.path.is_file():
            return None
        stat = self.path.stat()
        version = (stat.st_mtime_ns, stat.st_size)
        if self._read is None or self._read[0] != version:
            try:
                spikes = read_neon_spikes(self.path)
            except (OSError, ValueError) as exc:
                LOG.warning("explorer: spike file %s not used (%s): the rolling-sum rule instead", self.path, exc)
                spikes = None
            self._read = (version, spikes)
        return self._read[1]


def with_spike_source(body: dict[str, object], days: list[int], neon: NeonSpikes | None, entity_id: str) -> None:
    """The timeline's spike days: the NEON evaluation's for this entity when its file has it, else the rule's
    (already in `body`). Either way only days of the series' period `days`, which ends at the as-of day."""
    if neon is None or entity_id not in neon.days:
        body["spike_source"] = "rule"
        return
    period = set(days)
    body["spike_days"] = sorted(d for d in neon.days[entity_id] if d in period)
    body["threshold"] = None  # the evaluation's rule ran on its own series (a query log, or the whole period)
    body |= {"spike_source": "neon", "spike_file": str(neon.path), "spike_origin": neon.origin}


def asset_file(name: str) -> Path | None:
    """The file behind /explore/NAME, or None when it is not there. cytoscape.js (MIT) comes from the npm registry
    (package-lock.json: `make explore` or `make setup` install it into node_modules; the image vendors it)."""
    if name == GRAPH_LIBRARY:
        candidates = [REPO / "node_modules" / "cytoscape" / "dist" / name, VENDOR_DIR / name]
    else:
        candidates = [PAGE_DIR / name] if name in ASSETS else []
    return next((path for path in candidates if path.is_file()), None)


def _latest_day(store: GraphStore, as_of: AsOf) -> int:
    """The as-of day, or for "now" the last day with mentions (a timeline needs a last day)."""
    if not as_of.is_latest:
        return as_of.day
    _, last = explore.day_range(store, as_of)
    return last if last is not None else day_key(dt.datetime.now(dt.UTC).date())


def explore_router(
    store_of: Callable[[], GraphStore], limits: ConsoleLimits | None = None, spikes_file: Path | None = None
) -> APIRouter:
    """The explorer's endpoints; include it in the API app (the app's key check covers /v1/explore). `store_of`
    gives the graph store when a request comes (the app may be built before its service). `spikes_file`: the NEON
    evaluation's spike days (NEWSKG_EXPLORE_SPIKES_FILE), used by the timeline when it is there."""
    routes = _Explorer(store_of, limits or ConsoleLimits(), SpikeFile(spikes_file))
    router = APIRouter(tags=["explore"])
    router.add_api_route("/v1/explore/days", routes.days, methods=["GET"], responses=ERRORS)
    router.add_api_route("/v1/explore/search", routes.search, methods=["GET"], responses=ERRORS)
    router.add_api_route(
        "/v1/explore/entities/{entity_id}/neighbourhood", routes.neighbourhood, methods=["GET"], responses=NOT_FOUND
    )
    router.add_api_route(
        "/v1/explore/entities/{entity_id}/timeline", routes.timeline, methods=["GET"], responses=NOT_FOUND
    )
    router.add_api_route(
        "/v1/explore/interactions/{interaction_id}/evidence", routes.evidence, methods=["GET"], responses=NOT_FOUND
    )
    router.add_api_route("/v1/explore/cypher", routes.cypher, methods=["POST"], responses=CONSOLE_ERRORS)
    router.add_api_route("/v1/explore/export", routes.export, methods=["GET"], responses=EXPORT_RESPONSES)
    router.add_api_route("/explore", page, methods=["GET"], include_in_schema=False)
    router.add_api_route("/explore/{name}", asset, methods=["GET"], include_in_schema=False)
    return router


class _Explorer:
    """The explorer's endpoints over the graph store `store_of` gives when a request comes."""

    def __init__(self, store_of: Callable[[], GraphStore], console: ConsoleLimits, neon_spikes: SpikeFile):
        self.store_of = store_of
        self.console = console
        self.neon_spikes = neon_spikes

    def days(self) -> dict[str, object]:
        """The first and last publication day with mentions in the graph (the page's date slider bounds)."""
        first, last = explore.day_range(self.store_of(), AsOf.of(None))
        return {"first": day_iso(first) if first else None, "last": day_iso(last) if last else None}

    def search(
        self,
        q: Annotated[str, text_query("part of a name or alias", max_length=200)],
        as_of: AsOfParam = None,
        type: Annotated[str | None, Query(pattern=TYPE_PATTERN, description="entity type, e.g. PERSON")] = None,
        limit: Annotated[int, Query(ge=1, le=50)] = 10,
    ) -> dict[str, object]:
        """Suggestions: entities whose name or an alias contains `q`, as of the day, with their counts then."""
        view = _as_of(as_of)
        rows = explore.search(self.store_of(), q, view, limit, type)
        return {"q": q, "as_of": view.iso, "entities": [asdict(r) | {"aliases": r.aliases or []} for r in rows]}

    def neighbourhood(
        self,
        entity_id: EntityIdParam,
        as_of: AsOfParam = None,
        variant: VariantParam = None,
        type: TypesParam = None,
        from_: FromParam = None,
        to: ToParam = None,
    ) -> dict[str, object]:
        """The entity, its visible interactions (edges) and the entities they name, as of the day."""
        view = _as_of(as_of)
        focus = explore.nodes(self.store_of(), [entity_id], view)
        if not focus:
            raise HTTPException(404, f"no entity {entity_id!r}" + (f" as of {as_of}" if as_of else ""))
        window = _window(view, from_, to, variant)
        built = build_view(self.store_of(), [entity_id], view, window, type, focus)
        return {"entity_id": entity_id, "as_of": view.iso} | built.as_dict()

    def timeline(
        self,
        entity_id: EntityIdParam,
        as_of: AsOfParam = None,
        days: Annotated[int, Query(ge=7, le=730, description="how many days up to the as-of day")] = 60,
        window: Annotated[int, Query(ge=1, le=30, description="the spike rule's rolling window")] = 3,
        sigma: Annotated[float, Query(ge=0, le=10, description="the spike rule's σ multiplier")] = 1.0,
    ) -> dict[str, object]:
        """Daily mentions (chunks per publication day, ingested by the as-of day) and the spike days: the NEON
        evaluation's when its spike file has the entity (`spike_source` "neon"), else the rolling-sum rule computed
        here (`spike_source` "rule"); never a day after the as-of day."""
        view = _as_of(as_of)
        found = explore.nodes(self.store_of(), [entity_id], view)
        if not found:
            raise HTTPException(404, f"no entity {entity_id!r}" + (f" as of {as_of}" if as_of else ""))
        last = _latest_day(self.store_of(), view)
        first = shift_day(last, 1 - days)
        counts = {r.day: r.chunks for r in explore.daily_mentions(self.store_of(), entity_id, first, last, view)}
        series = detect(counts, first, last, SpikeRule(window, sigma), entity_id, found[0].name)
        body = {"as_of": view.iso, "rule": {"window": window, "sigma": sigma}} | series.as_dict()
        with_spike_source(body, series.days, self.neon_spikes.current(), entity_id)
        return body

    def evidence(self, interaction_id: EntityIdParam, as_of: AsOfParam = None) -> dict[str, object]:
        """The chunks that state the interaction, with article, source and times, as of the day."""
        view = _as_of(as_of)
        rows = explore.evidence(self.store_of(), interaction_id, view)
        if not rows:
            raise HTTPException(404, f"no interaction {interaction_id!r}" + (f" as of {as_of}" if as_of else ""))
        first = rows[0]
        names = {
            e.id: e.name
            for e in explore.nodes(self.store_of(), [first.subject_id, *filter(None, [first.object_id])], view)
        }
        chunks = [{k: v for k, v in asdict(r).items() if k not in FACT_FIELDS} for r in rows]
        return {
            "id": interaction_id,
            "as_of": view.iso,
            "text": first.text,
            "day": day_iso(first.event_day),
            "variant": first.variant,
            "confidence": first.confidence,
            "subject": {"id": first.subject_id, "name": names.get(first.subject_id)},
            "object": {"id": first.object_id, "name": names.get(first.object_id or "")} if first.object_id else None,
            "sources": sorted({r.source for r in rows if r.source}),
            "evidence": chunks,
        }

    def cypher(self, request: ConsoleRequest) -> Response:
        """A read-only Cypher console: parameters only, refused if it writes (the server enforces it), stopped
        after the timeout, the first rows kept."""
        if len(request.query) > self.console.max_chars:
            raise HTTPException(422, f"the query is {len(request.query)} characters; at most {self.console.max_chars}")
        try:
            as_of = _as_of(request.as_of)
            result = explore.console(
                self.store_of(), request.query, as_of, request.params, self.console.timeout_ms, self.console.max_rows
            )
        except ConsoleRefused as exc:
            return JSONResponse({"detail": str(exc), "reason": exc.reason}, status_code=REFUSAL_STATUS[exc.reason])
        return JSONResponse(asdict(result) | {"timeout_ms": self.console.timeout_ms, "max_rows": self.console.max_rows})

    def export(
        self,
        entity: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=200, pattern=TEXT_PATTERN)]],
            Query(min_length=1, max_length=50),
        ],
        as_of: AsOfParam = None,
        variant: VariantParam = None,
        type: TypesParam = None,
        from_: FromParam = None,
        to: ToParam = None,
        format: Literal["json", "graphml"] = "json",
    ) -> Response:
        """The view of these entities (as the page shows it) as JSON or GraphML."""
        view = _as_of(as_of)
        window = _window(view, from_, to, variant)
        built = build_view(self.store_of(), sorted(set(entity)), view, window, type)
        name = f"newskg-{view.iso or 'now'}.{format}"
        headers = {"Content-Disposition": f'attachment; filename="{name}"'}
        if format == "graphml":
            return Response(graphml(built), media_type="application/graphml+xml", headers=headers)
        body = {"as_of": view.iso, "entities": sorted(set(entity))} | built.as_dict()
        return JSONResponse(body, headers=headers)


def page() -> Response:
    if asset_file(GRAPH_LIBRARY) is None:  # not a page that loads and then cannot draw: say what to run
        body = f"<!doctype html><title>newskg explorer</title><h1>newskg explorer</h1><p>{MISSING_LIBRARY}</p>"
        return HTMLResponse(body, status_code=503)
    return FileResponse(PAGE_DIR / "index.html", media_type="text/html")


def asset(name: str) -> FileResponse:
    path = asset_file(name)
    if path is None:
        raise HTTPException(404, MISSING_LIBRARY if name == GRAPH_LIBRARY else f"no file {name!r}")
    return FileResponse(path, media_type=ASSETS[name])


__all__ = ["PAGE_PATHS", "ConsoleLimits", "NeonSpikes", "SpikeFile", "explore_router", "graphml", "read_neon_spikes"]
