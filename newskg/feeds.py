"""Feed polling wiring: the poller built from settings, and the scheduled job (apscheduler, persistent job
store under the data dir, so the schedule survives restarts)."""

from __future__ import annotations

import logging
import re
from collections.abc import Generator
from contextlib import contextmanager

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from newskg.core.ids import digest
from newskg.core.settings import Settings, get_settings
from newskg.core.timeaxes import utc_now
from newskg.ingest.sources.feed_state import FeedState
from newskg.ingest.sources.feeds import FeedPoller, FeedReport
from newskg.ingest.sources.http import PoliteFetcher
from newskg.pipeline import articles_producer
from newskg.wiring import Wiring

log = logging.getLogger(__name__)
_EVERY = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")


def parse_every(text: str) -> int:
    """'90s', '15m', '2h', '1d' → seconds."""
    match = _EVERY.match(text)
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"not an interval: {text!r} (use e.g. 30s, 15m, 2h, 1d)")
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


@contextmanager
def feed_poller(settings: Settings) -> Generator[FeedPoller]:
    with Wiring(settings) as wiring:
        producer = articles_producer(wiring)
        fetcher = wiring.own(
            PoliteFetcher(
                settings.fetch_user_agent,
                settings.fetch_timeout_s,
                settings.fetch_min_interval_s,
                settings.max_page_bytes,
                allow_private=settings.fetch_allow_private,
                max_redirects=settings.fetch_max_redirects,
            )
        )
        state = wiring.own(FeedState(settings.data_dir / "feeds" / "state.sqlite"))
        yield FeedPoller(fetcher, state, producer, settings.topic_articles, settings.topic_dlq)


def poll_once(settings: Settings, urls: list[str]) -> list[FeedReport]:
    with feed_poller(settings) as poller:
        return [poller.poll(url) for url in urls]


def poll_feed_job(url: str) -> None:
    """The scheduled job (referenced by import path in the job store, so it takes plain arguments)."""
    for report in poll_once(get_settings(), [url]):
        log.info("feed %s: %s", url, report)


def scheduler(settings: Settings, blocking: bool = True) -> BaseScheduler:
    """The scheduler over the persistent job store; non-blocking to read or edit the stored schedule."""
    path = (settings.data_dir / "feeds" / "jobs.sqlite").resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    cls = BlockingScheduler if blocking else BackgroundScheduler
    return cls(jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{path}")}, timezone="UTC")


def schedule_feed(sched: BaseScheduler, url: str, every_s: int) -> None:
    sched.add_job(
        poll_feed_job,
        "interval",
        seconds=every_s,
        args=[url],
        id="feed-" + digest(url, size=8),
        name=url,
        replace_existing=True,
        next_run_time=utc_now(),
        max_instances=1,
        coalesce=True,
        misfire_grace_time=every_s,
    )
