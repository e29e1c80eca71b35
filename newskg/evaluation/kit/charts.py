"""Chart shapes more than one report draws."""

# pyright: strict, reportUnknownMemberType=false
# (matplotlib's stubs leave the **kwargs of its drawing calls untyped; everything else here is checked strictly)

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.axes import Axes


def grouped_bars(
    ax: Axes, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], fontsize: int = 8
) -> None:
    """Per group, one bar per series side by side (a missing value drawn as 0), in a legend by series name."""
    width = 0.8 / max(1, len(series))
    for n, (name, values) in enumerate(series.items()):
        xs = [i + (n - (len(series) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, [value or 0.0 for value in values], width, label=name)
    ax.set_xticks(range(len(groups)), list(groups), fontsize=fontsize)
    ax.legend(fontsize=8)
