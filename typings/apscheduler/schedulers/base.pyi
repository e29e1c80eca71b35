from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from apscheduler.job import Job
from apscheduler.triggers.base import BaseTrigger

class BaseScheduler:
    def __init__(self, gconfig: Mapping[str, object] = ..., **options: object) -> None: ...
    def start(self, paused: bool = False) -> None: ...
    def shutdown(self, wait: bool = True) -> None: ...
    def add_job(
        self,
        func: Callable[..., object],
        trigger: str | BaseTrigger | None = None,
        args: Sequence[object] | None = None,
        kwargs: Mapping[str, object] | None = None,
        id: str | None = None,
        name: str | None = None,
        misfire_grace_time: int | None = ...,
        coalesce: bool = ...,
        max_instances: int = ...,
        next_run_time: datetime | None = ...,
        jobstore: str = "default",
        executor: str = "default",
        replace_existing: bool = False,
        **trigger_args: object,
    ) -> Job: ...
    def get_jobs(self, jobstore: str | None = None, pending: bool | None = None) -> list[Job]: ...
