# The part of `apscheduler` 3 (no type information of its own) that newskg/feeds.py and newskg/cli/ingest.py use.
