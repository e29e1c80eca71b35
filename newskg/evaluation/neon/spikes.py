"""The NEON spike rule lives in core/spikes.py (the explorer in qa/ computes it too, and qa may not import
evaluation); the evaluation keeps importing it from here."""

from newskg.core.spikes import SpikeRule, SpikeSeries, days_from, detect, exceeds, rolling_sums, threshold_of

__all__ = ["SpikeRule", "SpikeSeries", "days_from", "detect", "exceeds", "rolling_sums", "threshold_of"]
