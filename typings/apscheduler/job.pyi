from datetime import datetime

from apscheduler.triggers.base import BaseTrigger

class Job:
    id: str
    name: str
    trigger: BaseTrigger
    next_run_time: datetime | None
    def remove(self) -> None: ...
