from datetime import timedelta

from apscheduler.triggers.base import BaseTrigger

class IntervalTrigger(BaseTrigger):
    interval: timedelta
