"""Print the explorer's URL with a ready view: the entity with the most facts (graph/store/explore.most_facts) as of
the last day with mentions, the day the view shows (scripts/explore.sh, the end of scripts/demo.sh)."""

from __future__ import annotations

from urllib.parse import urlencode

from newskg.core.settings import get_settings
from newskg.core.timeaxes import day_iso
from newskg.graph.store import explore
from newskg.graph.store.asof import AsOf
from newskg.wiring import Wiring


def explore_url() -> str:
    settings = get_settings()
    base = f"http://{settings.api_host}:{settings.api_port}/explore"
    with Wiring(settings) as wiring:
        store = wiring.store()
        _, last = explore.day_range(store, AsOf.of(None))
        if last is None:
            return base
        top = explore.most_facts(store, AsOf.of(last))
    if not top:
        return base
    return f"{base}?{urlencode({'entity': top[0].id, 'as_of': day_iso(last)})}"


if __name__ == "__main__":
    print(explore_url())
