"""Overlapping windows of m sentences with stride s (NEON §2.1 step 3)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    start: int
    end: int  # exclusive
    sentences: list[str]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def windows(sentences: list[str], size: int, stride: int) -> list[Window]:
    """Every sentence lands in at least one window; the last window ends at the last sentence."""
    if size < 1 or stride < 1:
        raise ValueError("size and stride must be >= 1")
    if not sentences:
        return []
    if len(sentences) <= size:
        return [Window(0, len(sentences), sentences)]
    starts = list(range(0, len(sentences) - size + 1, stride))
    if starts[-1] + size < len(sentences):
        starts.append(len(sentences) - size)
    return [Window(s, s + size, sentences[s : s + size]) for s in starts]
