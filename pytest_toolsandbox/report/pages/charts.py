"""Charts of the static report, drawn by matplotlib and embedded as inline SVG.

Inline SVG keeps the report one set of files that opens from file:// with no network and no
script. matplotlib is imported here only, when a report is written (never when the plugin loads),
and through its object API (Figure + the SVG canvas) so no global pyplot state or GUI backend is
touched. Output is deterministic: a fixed hash salt for element ids, no date metadata, text kept as
text (`svg.fonttype: none`), so the same run gives the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_toolsandbox.report.text.terminal import terminal_safe

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_PASS_COLOURS = "RdYlGn"


def load() -> None:
    """Import the parts of matplotlib the charts use, ahead of the first chart (see running/warmup.py,
    `_load_charts`)."""
    _figure(1, 1)


def _svg(figure: Figure, salt: str) -> str:
    """The figure as an <svg> element (no XML prolog), ids salted per chart so charts on one page
    never share an id."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"toolsandbox-{salt}", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=72)
    FigureCanvasSVG(figure)
    return figure


def _text(label: str) -> str:
    """Run data as chart text: control characters shown as escapes (matplotlib warns about them on
    the terminal, raw), `$` escaped (matplotlib would parse it as mathtext and may fail)."""
    return terminal_safe(str(label)).replace("$", r"\$")


def heatmap(rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]],
            title: str, salt: str) -> str:
    """Pass rate per (row, column) cell, red (0) to green (1), each cell labelled; empty cells grey."""
    import numpy as np
    from matplotlib import colormaps

    data = np.array([[np.nan if value is None else value for value in row] for row in values], dtype=float)
    figure = _figure(1.6 + 1.05 * len(columns), 1.1 + 0.42 * len(rows))
    axes = figure.add_subplot()
    colours = colormaps[_PASS_COLOURS].with_extremes(bad="#e6e8ee")
    image = axes.imshow(np.ma.masked_invalid(data), cmap=colours, vmin=0.0, vmax=1.0, aspect="auto")
    axes.set_xticks(range(len(columns)), labels=[_text(c) for c in columns], rotation=30, ha="right", fontsize=9)
    axes.set_yticks(range(len(rows)), labels=[_text(r) for r in rows], fontsize=9)
    for (row, column), value in np.ndenumerate(data):
        label = "—" if np.isnan(value) else f"{100 * value:.0f}%"
        axes.text(column, row, label, ha="center", va="center", fontsize=9,
                  color="#1d2330" if np.isnan(value) or 0.25 < value < 0.85 else "white")
    axes.set_title(_text(title), fontsize=10)
    figure.colorbar(image, ax=axes, fraction=0.04, pad=0.02, label="pass rate")
    return _svg(figure, salt)


def pass_k_curve(curves: Mapping[str, Mapping[int, float | None]], title: str, salt: str) -> str:
    """pass^k against k, one line per agent: how fast reliability decays when every trial must pass."""
    figure = _figure(6.0, 3.2)
    axes = figure.add_subplot()
    for label, points in curves.items():
        known = sorted((k, value) for k, value in points.items() if value is not None)
        axes.plot([k for k, _ in known], [value for _, value in known], marker="o", label=_text(label))
    every_k = sorted({k for points in curves.values() for k in points})
    axes.set_xticks(every_k)
    axes.set_xlabel("k (trials that must all pass)")
    axes.set_ylabel("pass^k")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(alpha=0.3)
    axes.set_title(_text(title), fontsize=10)
    # beside the axes, never on them: curves run anywhere from 0 to 1, so no corner inside is free
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    return _svg(figure, salt)
