"""Scoring: milestone/minefield similarity, turn count, diagnosis and ground-truth metrics."""

from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome, Finding, GroundTruthMetrics
from pytest_toolsandbox.evaluation.score import evaluate

__all__ = ["Evaluation", "EventOutcome", "Finding", "GroundTruthMetrics", "evaluate"]
