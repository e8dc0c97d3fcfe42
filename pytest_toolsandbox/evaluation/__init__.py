"""Scoring: milestone/minefield similarity, turn count, diagnosis and ground-truth metrics.

The names below load on first use (PEP 562): collecting a scenario compiles its milestones with
`evaluation.constraints`, and importing this package must not drag the whole scoring stack (scipy,
the ROUGE stemmer) into collection; it loads when the first trajectory is scored.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome, Finding, GroundTruthMetrics
    from pytest_toolsandbox.evaluation.score import evaluate

_HOMES = {"Evaluation": "result", "EventOutcome": "result", "Finding": "result", "GroundTruthMetrics": "result",
          "evaluate": "score"}

__all__ = ["Evaluation", "EventOutcome", "Finding", "GroundTruthMetrics", "evaluate"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
