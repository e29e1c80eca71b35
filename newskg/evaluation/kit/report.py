"""One way to write an evaluation's report folder: its JSON documents, its PNG figures and one HTML page showing
them. Every page opens the same way (the title, then the run's facts), escapes every string it is given unless
the string is `Html` the code built itself, and embeds its figures, so the page is one self-contained file; a
figure too many to embed is linked, beside the page in the folder."""

# pyright: strict, reportUnknownMemberType=false
# (matplotlib's stubs leave the **kwargs of its drawing calls untyped; everything else here is checked strictly)

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from matplotlib.figure import Figure
from pydantic import BaseModel

STYLE = (
    "body{font-family:sans-serif} table{border-collapse:collapse} "
    "td,th{padding:3px 8px;border:1px solid #ccc;vertical-align:top} small,.meta{color:#555}"
)


class Html(str):
    """Markup the report's code wrote itself (tags around figures it formatted): the kit passes it on as is."""


BREAK = Html("<br>")


def escape(value: object) -> Html:
    """Any value as page text: `Html` as it is, anything else escaped (names, questions and answers come from
    data and model outputs, and must never become markup)."""
    return value if isinstance(value, Html) else Html(html.escape(str(value)))


def join(parts: Iterable[object]) -> Html:
    return Html("".join(escape(part) for part in parts))


def element(tag: str, *content: object) -> Html:
    return Html(f"<{tag}>{join(content)}</{tag}>")


def heading(title: object, level: int = 2) -> Html:
    return element(f"h{level}", title)


def section(title: object, *content: object, level: int = 2) -> Html:
    return join([heading(title, level), *content])


def paragraph(*content: object) -> Html:
    return element("p", *content)


def bullets(items: Iterable[object]) -> Html:
    return element("ul", *(element("li", item) for item in items))


def table(head: Sequence[object], rows: Iterable[Sequence[object]]) -> Html:
    header = element("tr", *(element("th", cell) for cell in head))
    body = (element("tr", *(element("td", cell) for cell in row)) for row in rows)
    return element("table", header, *body)


def image(path: Path) -> Html:
    """A PNG inside the page (base64), so the page needs no file beside it."""
    data = base64.b64encode(path.read_bytes()).decode()
    return Html(f'<img alt="{escape(path.stem)}" src="data:image/png;base64,{data}">')


def images(paths: Iterable[Path]) -> Html:
    """Figures one under the other, each embedded."""
    return join(paragraph(image(path)) for path in paths)


def link(path: Path) -> Html:
    """A file beside the page, by its name: the link holds when the folder is moved or served."""
    return Html(f'<a href="{escape(path.name)}">{escape(path.name)}</a>')


def page(title: str, facts: Mapping[str, object], *sections: Html) -> Html:
    """The whole page: the title, the run's facts in one line ("name: value · …"), then the sections."""
    line = " · ".join(f"{escape(name)}: {escape(value)}" for name, value in facts.items())
    head = f"<!doctype html><meta charset=utf-8><title>{escape(title)}</title><style>{STYLE}</style>"
    return Html(f"{head}{heading(title, 1)}<p class=meta>{line}</p>{join(sections)}")


def save_figure(figure: Figure, path: Path, dpi: int = 100) -> Path:
    """A figure built with `matplotlib.figure.Figure` (not pyplot: no display, no global state to close)."""
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    return path


def json_text(document: BaseModel | Mapping[str, object]) -> str:
    """One JSON layout for every report file; a value JSON cannot hold is written as its text (a day, a path)."""
    data = document.model_dump(mode="json") if isinstance(document, BaseModel) else document
    return json.dumps(data, indent=1, ensure_ascii=False, default=str)


class ReportFolder:
    """A report's folder. Each file written is named in `paths` under a key the CLI prints and tests read ("json",
    "html", a figure's name without ".png"); write the figures before the page that embeds them."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.paths: dict[str, Path] = {}

    def _add(self, key: str, name: str) -> Path:
        self.paths[key] = self.folder / name
        return self.paths[key]

    def json(self, document: BaseModel | Mapping[str, object], name: str = "report.json", key: str = "json") -> Path:
        path = self._add(key, name)
        path.write_text(json_text(document), encoding="utf-8")
        return path

    def figure(self, figure: Figure, name: str, key: str | None = None, dpi: int = 100) -> Path:
        return save_figure(figure, self._add(key or Path(name).stem, name), dpi)

    def html(self, content: Html, name: str = "report.html", key: str = "html") -> Path:
        path = self._add(key, name)
        path.write_text(content, encoding="utf-8")
        return path
