"""What a finished run writes besides its report: the Markdown summary (`--ts-markdown PATH`, and
`$GITHUB_STEP_SUMMARY` in a GitHub Actions job), the refreshed baseline (`--update-baseline PATH`), and
the report directory rid of the files the previous run wrote and this one did not.

Failures are returned as text (file: reason), like the report's own write failures: the run's results
are complete in the terminal, and the exit status says a file is missing (docs/plugin.md, Exit status).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_toolsandbox.recording.secrets import scrub_text
from pytest_toolsandbox.report.ci.baseline_file import baseline_items, dump_baseline, summary_rules
from pytest_toolsandbox.report.text.markdown import markdown_summary
from pytest_toolsandbox.report.writing.files import write_atomic
from pytest_toolsandbox.report.writing.owned import MANIFEST, remove_stale
from pytest_toolsandbox.report.writing.write_failures import WriteFailures

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


@dataclass
class Written:
    """What was written (lines for the terminal) and what could not be."""

    errors: WriteFailures
    notes: list[str] = field(default_factory=list)


def write_outputs(summary: dict[str, Any], report_dir: Path, markdown: Path | None, update_baseline: Path | None,
                  environ: Mapping[str, str], shown: Any = str) -> Written:
    """Write the run's other outputs; `shown` turns a path into the form the user typed."""
    done = Written(WriteFailures(report_dir))
    if markdown is not None:
        try:
            write_atomic(markdown, markdown_summary(summary, report_dir, markdown.parent, environ))
            done.notes.append(f"markdown summary: {shown(markdown)}")
        except OSError as error:
            done.errors.add_error(error, markdown)
    step_summary = environ.get(STEP_SUMMARY)
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as stream:  # appended: other steps write there too
                stream.write(scrub_text(markdown_summary(summary, report_dir, None, environ)) + "\n")
        except OSError as error:
            done.errors.add_error(error, step_summary)
    if update_baseline is not None:
        if summary.get("partial"):
            done.errors.add(shown(update_baseline), "not updated, the run is partial (a baseline must hold every "
                            "selected item)")
        else:
            try:
                write_atomic(update_baseline, dump_baseline(summary["records"], shown(update_baseline),
                                                            summary_rules(summary)))
                done.notes.append(f"baseline updated: {shown(update_baseline)} "
                                  f"({len(baseline_items(summary['records']))} scored trials)")
            except OSError as error:
                done.errors.add_error(error, update_baseline)
    try:
        referenced = {record[key] for record in summary["records"] for key in ("trajectory", "page")
                      if isinstance(record.get(key), str)}
        for failure in remove_stale(report_dir, referenced):
            done.errors.add(*failure)
    except OSError as error:
        done.errors.add_error(error, report_dir / MANIFEST)
    return done
