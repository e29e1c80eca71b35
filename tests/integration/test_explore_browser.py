"""The explorer page in a real browser (Debian's chromium + chromedriver, selenium) against the API app serving a
graph built from the synthetic stream (Kafka, process, extract): the link `make demo` prints opens on the entity
with the most facts as of the day shown, with every one of them listed (those with no object entity too) and marked
on the timeline; a search finds an entity, expanding a node adds its neighbours, moving the date earlier removes an
edge first reported later, the evidence panel shows the chunk, and the console refuses a write and a statement past
the timeout. At every step the labels are legible: inside the canvas, at least 10 px on screen, no name over
another. Screenshots are saved under the test's temp dir (NEWSKG_EXPLORE_SHOTS: a folder to keep them in) and must
not be blank."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from PIL import Image, ImageStat
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from newskg.core.timeaxes import day_from_key, day_iso, day_key
from newskg.pipeline import qa_service
from newskg.qa.api import create_app
from newskg.services.process import free_port
from newskg.wiring import Wiring
from tests.support.cli import REPO
from tests.support.synthetic import synthetic_world

# the synthetic stream through the real pipeline takes most of it (1-4 min on this shared 2-core machine)
pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

KEY = "browser-key"
# A statement of seconds (400 million rows): the server stops it at the console's 2 s timeout.
SLOW = "UNWIND range(1, 20000) AS a UNWIND range(1, 20000) AS b WITH a, b WHERE a * b % 7 = 3 RETURN count(*)"


@pytest.fixture(scope="module")
def served(stack, tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    """The API app (with an API key) on a free port over a synthetic-stream graph; its base URL and the env of the
    graph's isolation."""
    with (
        synthetic_world(stack, tmp_path_factory.mktemp("explore"), seed=11, events=4) as world,
        Wiring(world.settings) as wiring,
    ):
        service = qa_service(wiring)
        app = create_app(service, {"graph": service.store.conn.ping}, api_keys=[KEY])
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{port}"
        wait(lambda: _up(base), 30, "the API server")
        try:
            yield base, world.env
        finally:
            server.should_exit = True
            thread.join(timeout=10)


@pytest.fixture
def browser(tmp_path) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingOptions", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def wait(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = condition()
        except Exception:
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def api(base: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{base}{path}", params=params, headers={"X-API-Key": KEY}, timeout=30)
    response.raise_for_status()
    return response.json()


def severe_logs(driver: webdriver.Chrome) -> list[str]:
    logs: list[dict[str, Any]] = driver.get_log("browser")
    return [entry["message"] for entry in logs if entry["level"] == "SEVERE"]


def screenshot(driver: webdriver.Chrome, folder: Path, name: str) -> Path:
    """Save and check the screenshot is not blank (its pixels vary); a copy in NEWSKG_EXPLORE_SHOTS when set."""
    path = folder / f"{name}.png"
    assert driver.save_screenshot(str(path))
    with Image.open(path) as image:
        variance = ImageStat.Stat(image.convert("L")).var[0]
    assert variance > 50, f"{name}: a blank screenshot (variance {variance:.1f})"
    keep = os.environ.get("NEWSKG_EXPLORE_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


# What a reader could not read in the drawn graph: a shown name or edge label outside the canvas, smaller than 10 px
# on screen, or over another one (their bounding boxes).
LEGIBILITY = """
const width = cy.width(), height = cy.height(), zoom = cy.zoom();
const labels = { includeNodes: false, includeEdges: false, includeLabels: true };
const problems = [], shown = [];
const outside = (b) => b.x1 < -1 || b.y1 < -1 || b.x2 > width + 1 || b.y2 > height + 1;
cy.nodes('[named = 1]').forEach((n) => {
  const b = n.renderedBoundingBox(labels), name = n.data('name');
  if (outside(b)) problems.push(`${name}: outside the canvas`);
  const px = parseFloat(n.style('font-size')) * zoom;
  if (px < 10) problems.push(`${name}: ${px.toFixed(1)} px`);
  for (const [other, o] of shown) {
    if (b.x1 < o.x2 && o.x1 < b.x2 && b.y1 < o.y2 && o.y1 < b.y2) problems.push(`${name} over ${other}`);
  }
  shown.push([name, b, n.id()]);
});
cy.edges('.labelled').forEach((e) => {
  const b = e.renderedBoundingBox(labels), label = e.data('shown');
  if (outside(b)) problems.push(`${label}: outside the canvas`);
  const px = parseFloat(e.style('font-size')) * zoom;
  if (px < 10) problems.push(`${label}: ${px.toFixed(1)} px`);
  for (const [other, o] of shown) {
    if (b.x1 < o.x2 && o.x1 < b.x2 && b.y1 < o.y2 && o.y1 < b.y2) problems.push(`${label} over ${other}`);
  }
  shown.push([label, b, null]);
});
return { problems, named: shown.filter(([, , id]) => id).map(([, , id]) => id), nodes: cy.nodes().length };
"""


def legible(driver: webdriver.Chrome) -> dict[str, Any]:
    """The drawn graph's labels pass LEGIBILITY (the graph has settled: its render is the latest)."""
    found: dict[str, Any] = js(driver, LEGIBILITY)
    assert found["problems"] == [], found
    assert found["nodes"] == 0 or found["named"], found
    return found


def most_facts(base: str, last: str) -> tuple[str, int, dict[str, Any]]:
    """By the API, the entity whose view as of the last day shows the most facts (the first by name among equals):
    its id, its number of facts and its view."""
    found = {
        e["id"]: e for q in "aeiou" for e in api(base, "/v1/explore/search", q=q, as_of=last, limit=50)["entities"]
    }
    views = {i: api(base, f"/v1/explore/entities/{i}/neighbourhood", as_of=last) for i in found}
    best = min(found, key=lambda i: (-len(views[i]["edges"]), found[i]["name"], i))
    return best, len(views[best]["edges"]), views


def opened(driver: webdriver.Chrome, url: str) -> None:
    driver.get("about:blank")
    driver.get(url)
    wait(lambda: js(driver, "return document.body.dataset.ready"), 20, "the page to start")


def js(driver: webdriver.Chrome, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def text_of(driver: webdriver.Chrome, selector: str) -> str:
    """The element's text, also where the side panel has it scrolled out of view."""
    return driver.find_element(By.CSS_SELECTOR, selector).get_attribute("textContent") or ""


def graph_ids(driver: webdriver.Chrome, kind: str) -> set[str]:
    return set(js(driver, f"return cy ? cy.{kind}().map((e) => e.id()) : []"))


def set_input(driver: webdriver.Chrome, element_id: str, value: str) -> None:
    js(
        driver,
        "const el = document.getElementById(arguments[0]); el.value = arguments[1];"
        "el.dispatchEvent(new Event('change'));",
        element_id,
        value,
    )


def pick(base: str, last: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The most connected entity as of the last day, a neighbour whose own neighbourhood brings new entities, and
    a day on which an edge of the hub's view was not yet reported while another was."""
    found = {
        e["id"]: e for q in "aeiou" for e in api(base, "/v1/explore/search", q=q, as_of=last, limit=50)["entities"]
    }
    hubs = sorted(found.values(), key=lambda e: -e["interactions"])
    for hub in hubs:
        view = api(base, f"/v1/explore/entities/{hub['id']}/neighbourhood", as_of=last)
        days = sorted({e["published_day"] for e in view["edges"] if e["target"]})  # the drawn edges' days
        shown = {n["id"] for n in view["nodes"]}
        for node in view["nodes"]:
            if node["id"] == hub["id"] or len(days) < 2:
                continue
            more = api(base, f"/v1/explore/entities/{node['id']}/neighbourhood", as_of=last)
            if {n["id"] for n in more["nodes"]} - shown:
                return hub, node, day_iso(day_key(day_from_key(days[-1]) - dt.timedelta(days=1)))
    raise AssertionError("the synthetic graph has no entity with a neighbour to expand and edges on two days")


def filtered_view(base: str, hub_id: str, last: str) -> dict[str, Any]:
    """Filters that keep part of the hub's view: its variant, the type of a neighbour, the days of that type's edges."""
    view = api(base, f"/v1/explore/entities/{hub_id}/neighbourhood", as_of=last)
    types = {n["id"]: n["type"] for n in view["nodes"]}
    edge = next(e for e in view["edges"] if e["target"] and e["target"] != hub_id)
    kind = types[edge["target"] if edge["source"] == hub_id else edge["source"]]
    kept = [
        e
        for e in view["edges"]
        if e["target"] and e["variant"] == edge["variant"] and kind in {types[e["source"]], types[e["target"]]}
    ]
    days = sorted(e["day"] for e in kept)
    return {"as_of": last, "variant": edge["variant"], "type": [kind], "from": days[0], "to": days[-1]}


def test_the_explorer_in_a_real_browser(served, browser, tmp_path):
    base, env = served
    assert httpx.get(f"{base}/explore").status_code == 200  # the page holds no data: no key needed
    assert httpx.get(f"{base}/v1/explore/search", params={"q": "a"}).status_code == 401  # the data needs the key
    last = api(base, "/v1/explore/days")["last"]
    hub, neighbour, earlier = pick(base, last)
    # `make demo` prints this view: the most connected entity as of the last day
    printed = subprocess.run(
        [sys.executable, "scripts/explore_url.py"],
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert "/explore?entity=" in printed and printed.endswith(f"as_of={last}")
    best, n_facts, views = most_facts(base, last)
    assert f"entity={best}&" in printed, (printed, best, n_facts)

    # the page loads with the key typed into it (sessionStorage), with no console errors
    browser.get(f"{base}/explore")
    js(browser, "sessionStorage.setItem('newskg-api-key', arguments[0])", KEY)
    severe_logs(browser)  # drained: the first load had no key yet
    browser.get(f"{base}/explore")
    wait(lambda: js(browser, "return document.body.dataset.ready"), 20, "the page to start")
    assert browser.find_element(By.ID, "asof").get_attribute("value") == last
    screenshot(browser, tmp_path, "1-loaded")

    # the printed link opens on that entity with all its facts: the graph, the side panel and the timeline
    printed_link = urlsplit(printed)
    opened(browser, f"{base}{printed_link.path}?{printed_link.query}")
    view = views[best]
    solo = [e for e in view["edges"] if e["target"] is None]
    wait(lambda: f"{n_facts} facts" in text_of(browser, "#status"), 10, "the view's facts in the status line")
    items = wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#entity-edges li") or None, 10, "the facts listed")
    assert {li.get_attribute("data-id") for li in items} == {e["id"] for e in view["edges"]}
    assert len(browser.find_elements(By.CSS_SELECTOR, "#entity-edges li.solo")) == len(solo)
    assert graph_ids(browser, "edges") == {e["id"] for e in view["edges"] if e["target"]}
    assert best in legible(browser)["named"]
    screenshot(browser, tmp_path, "0-opened")
    assert severe_logs(browser) == []

    # facts with no object entity show with their entity: on the node, in the side panel, on the timeline
    alone = max(views, key=lambda i: (sum(e["target"] is None for e in views[i]["edges"]), i))
    own = [e for e in views[alone]["edges"] if e["target"] is None]
    assert own, "the synthetic graph has a fact with no object entity"
    opened(browser, f"{base}/explore?entity={alone}&as_of={last}")
    wait(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#entity-edges li.solo")) == len(own), 10, "solo facts")
    label = js(browser, "return cy.$id(arguments[0]).data('label')", alone)
    assert label.endswith(f"+{len(own)} fact" + ("s" if len(own) > 1 else "")), label
    series = api(base, f"/v1/explore/entities/{alone}/timeline", as_of=last)["series"]
    period = {p["day"] for p in series}
    in_period = [e for e in views[alone]["edges"] if e["event_day"] in period]
    timeline = text_of(browser, "#timeline")
    assert f"facts: {len(in_period)}" in timeline, timeline
    marks = browser.find_elements(By.CSS_SELECTOR, "#timeline .fact-mark")
    assert len(marks) == len({e["event_day"] for e in in_period})
    legible(browser)
    screenshot(browser, tmp_path, "0b-facts-without-object")

    # every entity of the graph at once: the names that fit are shown, none over another, all inside the canvas
    everyone = "&".join(f"entity={i}" for i in sorted(views))
    opened(browser, f"{base}/explore?{everyone}&as_of={last}")
    wait(lambda: len(graph_ids(browser, "nodes")) >= len(views), 20, "every entity drawn")
    legible(browser)
    screenshot(browser, tmp_path, "0c-every-entity")
    browser.get(f"{base}/explore")
    wait(lambda: js(browser, "return document.body.dataset.ready"), 20, "the page to start")

    # search with suggestions finds the hub
    browser.find_element(By.ID, "search").send_keys(hub["name"][:4])
    item = wait(
        lambda: next(
            (li for li in browser.find_elements(By.CSS_SELECTOR, "#suggestion-list li") if hub["name"] in li.text),
            None,
        ),
        10,
        "a suggestion",
    )
    item.click()
    wait(lambda: hub["id"] in graph_ids(browser, "nodes"), 10, "the hub's neighbourhood")
    wait(lambda: neighbour["id"] in graph_ids(browser, "nodes"), 10, "the neighbour")
    before = graph_ids(browser, "nodes")
    assert f"entity={hub['id']}" in browser.current_url and f"as_of={last}" in browser.current_url

    # clicking a node expands it: its neighbours join the graph
    x, y = js(browser, "const p = cy.$id(arguments[0]).renderedPosition(); return [p.x, p.y]", neighbour["id"])
    graph = browser.find_element(By.ID, "graph")
    webdriver.ActionChains(browser).move_to_element_with_offset(
        graph, int(x - graph.size["width"] / 2), int(y - graph.size["height"] / 2)
    ).click().perform()
    wait(lambda: graph_ids(browser, "nodes") > before, 10, "the expanded neighbours")
    assert f"entity={neighbour['id']}" in browser.current_url
    wait(lambda: not text_of(browser, "#status").startswith("loading"), 10, "the expanded view drawn")
    legible(browser)
    screenshot(browser, tmp_path, "2-expanded")
    assert severe_logs(browser) == []

    js(browser, "showEntity(arguments[0])", hub["id"])
    # the evidence of an interaction the hub's list shows (the list is redrawn while the panel loads)
    # read in one go inside `wait`: a redraw between finding the items and reading them makes them stale
    listed = wait(
        lambda: [li.get_attribute("data-id") for li in browser.find_elements(By.CSS_SELECTOR, "#entity-edges li")],
        10,
        "the hub's interactions",
    )
    with_sources = {
        e["id"]
        for e in api(base, f"/v1/explore/entities/{hub['id']}/neighbourhood", as_of=last)["edges"]
        if e["n_sources"]
    }
    clicked = next(i for i in listed if i in with_sources)
    wait(
        lambda: browser.find_element(By.CSS_SELECTOR, f"#entity-edges li[data-id='{clicked}']").click() or True,
        10,
        "a click on the interaction",
    )
    expected = api(base, f"/v1/explore/interactions/{clicked}/evidence", as_of=last)["evidence"]
    try:
        chunk = wait(lambda: text_of(browser, "#evidence .chunk-text"), 10, "the evidence")
    except AssertionError as exc:
        shown = text_of(browser, "#evidence")
        raise AssertionError(f"{exc}: the panel shows {shown!r}; the API: {expected}") from exc
    assert chunk in {e["chunk_text"] for e in expected}
    assert browser.find_elements(By.CSS_SELECTOR, "#evidence mark"), "the entity is marked in the chunk"
    screenshot(browser, tmp_path, "4-evidence")
    assert severe_logs(browser) == []

    # moving the date earlier removes an edge first reported later
    edges_now = graph_ids(browser, "edges")
    later = {
        e["id"]
        for e in api(base, f"/v1/explore/entities/{hub['id']}/neighbourhood", as_of=last)["edges"]
        if e["published_day"] > day_key(earlier) and e["target"]  # drawn: an interaction between two entities
    }
    assert later and later <= edges_now
    set_input(browser, "asof", earlier)
    wait(lambda: not (graph_ids(browser, "edges") & later), 10, "the later edges to go")
    assert graph_ids(browser, "edges"), "the earlier edges stay"
    assert f"as_of={earlier}" in browser.current_url
    screenshot(browser, tmp_path, "3-earlier")

    # moving it later again brings them back: with the date field, then dragging the slider (to the earlier day,
    # as a drag's input events set it) and pressing End on it (a real key press: the slider's last day)
    set_input(browser, "asof", last)
    wait(lambda: later <= graph_ids(browser, "edges"), 10, "the later edges back (date field)")
    slider = browser.find_element(By.ID, "asof-slider")
    js(
        browser,
        "const s = arguments[0]; s.value = String(state.days.indexOf(arguments[1]));"
        "s.dispatchEvent(new Event('input'));",
        slider,
        earlier,
    )
    wait(lambda: not (graph_ids(browser, "edges") & later), 10, "the later edges to go (slider)")
    assert browser.find_element(By.ID, "asof").get_attribute("value") == earlier
    slider.send_keys(Keys.END)
    wait(lambda: later <= graph_ids(browser, "edges"), 10, "the later edges back (slider)")
    assert browser.find_element(By.ID, "asof").get_attribute("value") == last
    assert f"as_of={last}" in browser.current_url
    assert "rolling-sum rule" in text_of(browser, "#timeline")  # no NEON spike file here: the rule's days

    # filters (variant, type, day window) set on the page go into its link, and opening the link draws the same view
    chosen = filtered_view(base, hub["id"], last)
    set_input(browser, "variant", chosen["variant"])
    set_input(browser, "types", chosen["type"][0])
    set_input(browser, "from", chosen["from"])
    set_input(browser, "to", chosen["to"])
    shown = js(browser, "return state.entities")  # the hub and the expanded neighbour: the view is both
    expected_edges = {e["id"] for e in api(base, "/v1/explore/export", entity=shown, **chosen)["edges"] if e["target"]}
    assert expected_edges, chosen
    wait(lambda: graph_ids(browser, "edges") == expected_edges, 10, "the filtered view")
    filtered_nodes = graph_ids(browser, "nodes")
    link = browser.find_element(By.ID, "permalink").get_attribute("href") or ""
    for name, value in [("variant", chosen["variant"]), ("type", chosen["type"][0]), ("from", chosen["from"])]:
        assert f"{name}={value}" in link, link
    browser.get("about:blank")
    browser.get(link)
    wait(lambda: js(browser, "return document.body.dataset.ready"), 20, "the linked page to start")
    wait(lambda: graph_ids(browser, "edges") == expected_edges, 10, "the linked view's edges")
    assert graph_ids(browser, "nodes") == filtered_nodes
    controls = {name: browser.find_element(By.ID, name).get_attribute("value") for name in ("variant", "from", "to")}
    assert controls == {"variant": chosen["variant"], "from": chosen["from"], "to": chosen["to"]}
    screenshot(browser, tmp_path, "3b-linked")
    assert severe_logs(browser) == []

    # the console answers a read, refuses a write and a statement past the timeout
    def console(query: str) -> str:
        js(browser, "document.getElementById('cypher').value = arguments[0]", query)
        js(browser, "document.getElementById('cypher-status').textContent = ''")
        browser.find_element(By.ID, "run-cypher").click()
        return wait(lambda: browser.find_element(By.ID, "cypher-status").text, 15, "the console")

    assert console("MATCH (e:Entity) WHERE e.name CONTAINS $text RETURN e LIMIT 3").endswith("rows")
    names = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#cypher-table td")]
    assert names
    # the graph form of the result: one node per entity row, labelled with its name
    drawn = wait(
        lambda: js(browser, "return consoleCy ? consoleCy.nodes().map((n) => n.data('label')) : null"),
        10,
        "the console's graph",
    )
    assert len(drawn) == len(names) and all(any(f" {label})" in cell for cell in names) for label in drawn)
    assert browser.find_elements(By.CSS_SELECTOR, "#cypher-graph canvas")
    assert "write_refused" in console("CREATE (:Entity {id: 'mallory'})")
    assert api(base, "/v1/explore/search", q="mallory")["entities"] == []
    assert "timeout" in console(SLOW)
    screenshot(browser, tmp_path, "5-console")
