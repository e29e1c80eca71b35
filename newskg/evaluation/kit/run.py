"""What every evaluation's `run(config, clients, progress) -> Report` takes: the clients it borrows, where it says
how far it is, and the error that refuses a run.

A run never opens a server itself: `Clients` hands it what it needs and closes it after (newskg.wiring.Wiring
is one; this protocol keeps evaluation from importing the CLI's layer). A run never prints: it reports progress
and warnings to `Progress`, and the caller draws them (a progress bar, or nothing)."""

# pyright: strict

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from newskg.core.errors import NewskgError

if TYPE_CHECKING:  # the heavy clients load only when a run asks for them
    from newskg.core.llm.client import LLMClient
    from newskg.core.settings import Settings
    from newskg.graph.mirror.base import VectorMirror
    from newskg.graph.store.store import GraphStore
    from newskg.qa.query import EntityResolver
    from newskg.qa.retrieve import Retriever
    from newskg.qa.service import QAService


class Refused(NewskgError, ValueError):
    """The run cannot go on with these inputs or clients. The message is for the person who ran it: it names the
    option to change as the command line spells it, since that is where every config comes from today."""

    REASON = "run_refused"


class Clients(Protocol):
    """The server clients one run borrows, each opened on first use and owned (closed) by the lender."""

    settings: Settings

    def store(self, ensure_schema: bool = True) -> GraphStore: ...

    def mirror(self) -> VectorMirror: ...

    def llm(self, max_calls: int | None = None) -> LLMClient | None: ...

    def has_llm(self) -> bool: ...

    def retriever(self, with_mirror: bool = True) -> Retriever: ...

    def resolver(self) -> EntityResolver: ...

    def qa_service(self) -> QAService: ...

    def over(self, settings: Settings) -> Clients: ...


class Task(Protocol):
    def advance(self) -> None: ...

    def finish(self) -> None: ...


class Progress(Protocol):
    """Where a run says what it is doing: a task per step (`total` None: no telling how long), and warnings."""

    def task(self, description: str, total: int | None = None) -> Task: ...

    def warn(self, message: str) -> None: ...


class _Unseen:
    def advance(self) -> None:
        pass

    def finish(self) -> None:
        pass

    def task(self, description: str, total: int | None = None) -> _Unseen:
        return self

    def warn(self, message: str) -> None:
        pass


UNSEEN: Progress = _Unseen()  # for a run nobody watches (tests, scripts)


@contextmanager
def refusing(*errors: type[Exception], prefix: str = "") -> Generator[None]:
    """Turn an expected failure of the step inside (a bad file, an unreachable LLM) into `Refused`."""
    try:
        yield
    except errors as exc:
        raise Refused(f"{prefix}{exc}") from exc


def mirror_or_none(clients: Clients, progress: Progress) -> VectorMirror | None:
    """The mirror adds nearest-chunk retrieval, but the embedded one admits one process at a time (Qdrant Edge's WAL
    lock, local mode's folder lock): when another holds it, the graph alone answers, said out loud."""
    try:
        return clients.mirror()
    except Exception as exc:  # a held folder is NotConfigured; a server's errors vary
        progress.warn(f"mirror unavailable ({exc}); answering from the graph alone")
        return None
