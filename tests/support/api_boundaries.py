"""Hostile values for every string and date parameter of every API operation, read from the app's own OpenAPI
schema, so a route added later is swept too (tests/unit/test_api_boundaries.py without a graph,
tests/integration/test_api_contract.py on the real graph).

Each case changes one parameter of an otherwise valid request: a control character in a string (NUL cut
FalkorDB's query text: a 500), or a day whose ±N-day shifts overflow `datetime` (0001-01-03, 9999-12-28: a 500).
Every one must be a 422 `ErrorBody` naming the parameter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

# NUL, the other C0 codes at both ends and in the middle, tab and line breaks, DEL: each refused in one-line text.
CONTROL_VALUES = ("\x00", "a\x00b", "doja cat\x00", "\x01", "\t", "a\nb", "\r", "\x1b[31m", "\x1f", "\x7f")
# Days outside the served years (qa/dates.py FIRST_YEAR..LAST_YEAR): the review's two, and the edges just outside.
OUT_OF_RANGE_DAYS = ("0001-01-03", "9999-12-28", "0001-01-01", "9999-12-31", "0999-12-31", "9000-01-01")
VALID_DAY = "2023-05-02"


@dataclass(frozen=True)
class Case:
    method: str
    path: str  # with the path parameters filled in (percent-encoded)
    params: dict[str, Any] = field(default_factory=dict[str, Any])
    body: dict[str, Any] | None = None
    parameter: str = ""  # the one parameter made hostile, as the 422 names it

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path} {self.parameter}={self.params.get(self.parameter)!r}"


def cases(spec: dict[str, Any]) -> list[Case]:
    """One case per hostile value of each string or date parameter of each operation (query, path, JSON body)."""
    found: list[Case] = []
    for template, methods in spec["paths"].items():
        for method, operation in methods.items():
            parameters: list[dict[str, Any]] = operation.get("parameters", [])
            found += _parameter_cases(method, template, parameters)
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is not None:
                found += _body_cases(method, template, parameters, _resolve(spec, body))
    return found


def _parameter_cases(method: str, template: str, parameters: list[dict[str, Any]]) -> list[Case]:
    """The required parameters valid, and one parameter (required or not) hostile."""
    required = {p["name"]: _valid(p["schema"]) for p in parameters if p.get("required")}
    found: list[Case] = []
    for parameter in parameters:
        name, schema = parameter["name"], parameter["schema"]
        for value in _hostile(schema):
            path, query = _split(template, parameters, {**required, name: [value] if _item(schema) else value})
            found.append(Case(method, path, query, parameter=name))
    return found


def _body_cases(method: str, template: str, parameters: list[dict[str, Any]], schema: dict[str, Any]) -> list[Case]:
    """The console's JSON body: its statement, a parameter's name and value, its as-of day."""
    path, _ = _split(template, parameters, {p["name"]: _valid(p["schema"]) for p in parameters})
    valid: dict[str, Any] = {"query": "RETURN 1"}
    found = [Case(method, path, body={**valid, "query": f"RETURN 1{c}"}, parameter="query") for c in "\x00\x01\x7f"]
    props = schema.get("properties", {})
    if "params" in props:
        found += [
            Case(method, path, body={**valid, "params": {"p": "a\x00b"}}, parameter="params"),
            Case(method, path, body={**valid, "params": {"p": ["ok", "\x00"]}}, parameter="params"),
            Case(method, path, body={**valid, "params": {"p\x00": "a"}}, parameter="params"),
        ]
    if "as_of" in props:
        found += [Case(method, path, body={**valid, "as_of": day}, parameter="as_of") for day in OUT_OF_RANGE_DAYS]
    return found


def _hostile(schema: dict[str, Any]) -> tuple[str, ...]:
    """Out-of-range days for a date, control characters for any other free string (not an enum)."""
    value = _item(schema) or schema
    if _is_date(value):
        return OUT_OF_RANGE_DAYS
    if "string" in _types(value) and not _enum(value):
        return CONTROL_VALUES
    return ()


def _valid(schema: dict[str, Any]) -> Any:
    """A value of a required parameter (all are dates, free text or lists of it here)."""
    item = _item(schema)
    if item is not None:
        return [_valid(item)]
    if _is_date(schema):
        return VALID_DAY
    enum = _enum(schema)
    if enum:
        return enum[0]
    return schema.get("minimum", 1) if _types(schema) & {"integer", "number"} else "x"


def _split(template: str, parameters: list[dict[str, Any]], given: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The path with its parameters filled in (percent-encoded), and the query parameters."""
    path, query = template, {}
    for parameter in parameters:
        name = parameter["name"]
        if name not in given:
            continue
        if parameter["in"] == "path":
            path = path.replace("{" + name + "}", quote(str(given[name]), safe=""))
        else:
            query[name] = given[name]
    return path, query


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return spec["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [schema, *schema.get("anyOf", [])]


def _types(schema: dict[str, Any]) -> set[str]:
    return {s["type"] for s in _variants(schema) if isinstance(s.get("type"), str)}


def _item(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The items' schema of an array parameter (a list, or an optional list), else None."""
    return next((s["items"] for s in _variants(schema) if s.get("type") == "array"), None)


def _is_date(schema: dict[str, Any]) -> bool:
    return any(s.get("format") == "date" for s in _variants(schema))


def _enum(schema: dict[str, Any]) -> list[Any]:
    return next((s["enum"] for s in _variants(schema) if "enum" in s), [])
