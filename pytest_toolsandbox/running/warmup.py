"""What a concurrent run imports while every running episode waits for its model (`EpisodePool.idle`).

The items need these soon — at a tool's first call, at the first scoring — and each costs CPU that would
otherwise land in the middle of the run. They are imported in steps of at most a few hundred
milliseconds, each started only where no answer is due. The report's charts (matplotlib, half a second)
come first where a report is written: what is not loaded by the end is loaded after the last item, when
nothing overlaps it.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

WARM_UP_IMPORTS: tuple[tuple[str, ...], ...] = (
    ("pint", "holidays", "geopy.distance"),  # what the tools import at their first call
    ("scipy.optimize",),  # most of the scorer's import
    ("pytest_toolsandbox.evaluation.score", "pytest_toolsandbox.report.text.failure",
     "pytest_toolsandbox.report.results.record"),
    ("scipy.stats",),  # most of nltk's package import
    ("nltk.stem.porter",),  # the scorer's stemmer
)


def warm_ups(writes_report: bool) -> list[Callable[[], None]]:
    """The warm-up steps of this process, in order (xdist workers write no report: no charts)."""
    steps: list[Callable[[], None]] = [functools.partial(_import_all, names) for names in WARM_UP_IMPORTS]
    if writes_report:
        steps[:0] = [functools.partial(_import_all, ("matplotlib",)), _load_charts]
    return steps


def _import_all(names: tuple[str, ...]) -> None:
    """One warm-up step: import `names` (each once per process; later imports are lookups)."""
    for name in names:
        importlib.import_module(name)


def _load_charts() -> None:
    """Set up the report's charts (the parts of matplotlib they use) while episodes wait for their
    models, instead of after the last item, on the way to the exit."""
    from pytest_toolsandbox.report.pages import charts

    charts.load()
