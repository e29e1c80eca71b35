"""A bound on a kafka-python call that its own timeout does not bound.

kafka-python 3 runs a client's network work as tasks on an IO thread; a blocking call (`poll(timeout_ms=500)`,
`commit`) hands its task to that thread and waits for it with no timeout (NetworkSelector.run: `event.wait()`).
The timeout is kept by the task alone, so a task that is not run to its end leaves the caller waiting for ever.
Two ways seen with 3.0.12: a task waiting on a future another thread resolves is put back on the ready queue without
waking the IO thread (NetworkSelector._poll_once: `event.add_both(... self.call_soon(task))`), which then sleeps in
select() until some other event or timer (tests/unit/test_kafka_watchdog.py); and after a broker restart an
`end_offsets(timeout_ms=2000)` stayed parked for 15 s and more in fetcher._fetch_offsets_by_times_async, awaiting
a metadata refresh through manager.wait_for, the loop's timers running and a wake-up not releasing it.

The watchdog follows one call at a time. Once the call is NUDGE_AFTER_S past its own timeout it wakes the IO thread
(every NUDGE_EVERY_S), which is enough for a lost wake-up: the task runs and the call returns. A call still waiting
GIVE_UP_AFTER_S past its timeout is made to raise KafkaTimeoutError (retriable: the stage runner waits it out as an
outage, and says so), so a consumer never hangs silently. kafka-python leaves the task running, as its own timeouts
do: the next call picks up what it left in flight."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass

from newskg.ingest.kafka.client import IoLoop, KafkaTimeoutError

log = logging.getLogger(__name__)

NUDGE_AFTER_S = 5.0
NUDGE_EVERY_S = 1.0
# A request's timeout (kafka-python's request_timeout_ms, 30 s): a call still waiting that long past its own is lost.
GIVE_UP_AFTER_S = 30.0


@dataclass
class _Call:
    what: str
    due: float  # when the call's own timeout has passed
    nudges: int = 0


class CallWatchdog:
    """Bounds the blocking calls of one kafka-python client (one caller thread at a time, as kafka-python requires).
    Its thread starts with the first call and ends with close()."""

    def __init__(
        self,
        loop: IoLoop | None,
        who: str,
        nudge_after_s: float = NUDGE_AFTER_S,
        give_up_after_s: float = GIVE_UP_AFTER_S,
        nudge_every_s: float = NUDGE_EVERY_S,
    ):
        self._loop, self._who = loop, who
        self._nudge_after_s, self._give_up_after_s, self._nudge_every_s = nudge_after_s, give_up_after_s, nudge_every_s
        self._cond = threading.Condition()
        self._call: _Call | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def bounding(self, what: str, timeout_s: float) -> Generator[None]:
        """Watch the call made inside: `what` names it in the log, `timeout_s` is the timeout it was given."""
        if self._loop is None or self._closed:
            yield
            return
        call = _Call(what, time.monotonic() + timeout_s)
        with self._cond:
            self._call = call
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="newskg-kafka-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                if self._call is call:
                    self._call = None
                    self._cond.notify()
        if call.nudges:
            log.warning("%s: %s returned after %d wake-up(s) of its IO thread", self._who, what, call.nudges)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _watch(self) -> None:
        loop = self._loop
        assert loop is not None
        with self._cond:
            while not self._closed:
                call = self._call
                if call is None:
                    self._cond.wait()
                    continue
                now = time.monotonic()
                if now >= call.due + self._give_up_after_s:
                    self._call = None
                    message = (
                        f"{self._who}: {call.what} did not return {self._give_up_after_s:g} s after its timeout "
                        "(kafka-python's IO thread never finished it); given up, to be tried again"
                    )
                    log.error("%s", message)
                    loop.fail_waiting_calls(KafkaTimeoutError(message))
                    continue
                next_nudge = call.due + self._nudge_after_s + call.nudges * self._nudge_every_s
                if now < next_nudge:
                    self._cond.wait(min(next_nudge, call.due + self._give_up_after_s) - now)
                    continue
                if not call.nudges:
                    log.warning(
                        "%s: %s has not returned %.0f s after its timeout; waking kafka-python's IO thread",
                        self._who,
                        call.what,
                        now - call.due,
                    )
                call.nudges += 1
                loop.wakeup()
