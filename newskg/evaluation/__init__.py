"""Spike replay, judges, synthetic timelines and NeoQA, FanOutQA, IRB."""
