"""`--max-spend USD` and `--max-run-tokens N`: a run stops starting episodes once it has spent its budget.

Spend and tokens are known per item when its record arrives at the controller (report/results/usage.py prices
them). Once the total reaches a cap, no new episode starts: an item whose episode has not started is
not run (it gets no record, so the summary is partial and `--resume` runs it later), episodes already
playing finish and keep their results. Under xdist the controller, which alone sees every record,
leaves a stop file in the report directory that each worker checks before its next item.

Items on a model missing from the price table have unknown spend: they count towards `--max-run-tokens`
but not towards `--max-spend` (the terminal says how many). Answers whose server reported no valid usage
(missing, negative, non-finite or non-numeric counts: roles/usage_counts.py) count towards neither: the
first one makes the budget say once, loudly, that the caps cannot be enforced for them.

A cap is reached when the total reaches it and something was spent: `--max-spend 0` means no spending
(the run stops starting episodes after the first item that spent anything; a run that spends nothing —
replayed, local or free models — runs to the end), and likewise for tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.results.usage import record_cost, record_tokens, unknown_usage

STOP_FILE = ".toolsandbox-budget-reached"


class Budget:
    """The caps of a run, the running totals (controller) and the stop signal shared with xdist workers."""

    def __init__(self, max_spend: float | None, max_tokens: int | None, report_dir: Path) -> None:
        self.max_spend = max_spend
        self.max_tokens = max_tokens
        self.stop_file = report_dir / STOP_FILE
        self.spend = 0.0
        self.tokens = 0
        self.unpriced = 0
        self.unknown = 0
        """Answered requests without valid usage: neither cap can count them."""
        self.notice: str | None = None
        """The warning that a cap cannot count some answers, until it is shown (once per run)."""
        self._warned = False
        self.reason: str | None = None
        self._counted: set[str] = set()

    @property
    def active(self) -> bool:
        return self.max_spend is not None or self.max_tokens is not None

    def start(self) -> None:
        """Controller, before workers start: no stop signal left by an earlier run."""
        self.stop_file.unlink(missing_ok=True)

    def add(self, record: dict[str, Any]) -> None:
        """Count one item's usage (once per item); signal the stop when a cap is reached."""
        if record["id"] in self._counted:
            return
        self._counted.add(record["id"])
        cost, tokens = record_cost(record), record_tokens(record)
        self.spend += cost or 0.0
        self.tokens += tokens or 0
        self.unpriced += cost is None and bool(tokens)
        self.unknown += unknown_usage(record)
        if self.unknown and not self._warned:
            self._warned = True
            self.notice = (f"toolsandbox: WARNING: {record['id']}: the model server reported no valid token usage "
                           f"for {self.unknown} answer(s); {self._caps()} cannot count them and cannot be enforced "
                           "for them (the summary counts them as unknown_usage)")
        if self.reason is None:
            self.reason = self._exceeded()
            if self.reason is not None:
                try:
                    self.stop_file.parent.mkdir(parents=True, exist_ok=True)
                    self.stop_file.write_text(self.reason, encoding="utf-8")
                except OSError:  # the in-process run stops anyway; workers would go on to the end
                    pass

    def _caps(self) -> str:
        caps = (("--max-spend", self.max_spend), ("--max-run-tokens", self.max_tokens))
        return " and ".join(cap for cap, value in caps if value is not None)

    def _exceeded(self) -> str | None:
        if self.max_spend is not None and self.spend >= self.max_spend and self.spend > 0:
            return f"--max-spend ${self.max_spend:g} reached (${self.spend:.4f} spent)"
        if self.max_tokens is not None and self.tokens >= self.max_tokens and self.tokens > 0:
            return f"--max-run-tokens {self.max_tokens} reached ({self.tokens} tokens used)"
        return None

    def reached(self) -> str | None:
        """Why no new episode may start, or None: this process's own count, else the controller's signal."""
        if self.reason is None and self.active:
            try:
                self.reason = self.stop_file.read_text(encoding="utf-8") or None
            except OSError:
                return None
        return self.reason

    def take_notice(self) -> str | None:
        """The pending warning, once."""
        notice, self.notice = self.notice, None
        return notice

    def finish(self) -> None:
        self.stop_file.unlink(missing_ok=True)
