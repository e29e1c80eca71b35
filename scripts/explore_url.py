"""Print the explorer's URL with a ready view: the most connected entity of the configured graph, as of the last
day with mentions (scripts/explore.sh, the end of scripts/demo.sh)."""

from __future__ import annotations

from urllib.parse import urlencode

from core.settings import get_settings
from core.timeaxes import day_iso
from graph.store.asof import AsOf
from graph.store.reads import DAY_RANGE
from newskg.wiring import Wiring


def explore_url() -> str:
    settings = get_settings()
    base = f"http://{settings.api_host}:{settings.api_port}/explore"
    with Wiring(settings) as wiring:
        store = wiring.store()
        rows = store.conn.read(DAY_RANGE, {"as_of_day": AsOf.of(None).day})
        last = rows[0].get("last") if rows else None
        if not isinstance(last, int):
            return base
        top = store.top_entities(limit=1, as_of=last)
    if not top:
        return base
    return f"{base}?{urlencode({'entity': top[0].id, 'as_of': day_iso(last)})}"


if __name__ == "__main__":
    print(explore_url())
