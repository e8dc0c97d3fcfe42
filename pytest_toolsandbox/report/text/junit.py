"""An item's results as JUnit XML properties (`--junitxml`), so CI tools that read only JUnit (test
dashboards, flaky-test trackers) see the score and the diagnosis, not just pass/fail."""

from __future__ import annotations

from typing import Any

from pytest_toolsandbox.report.text.codes import diagnosis_codes

PREFIX = "toolsandbox_"


def junit_properties(record: dict[str, Any], slug: str | None) -> list[tuple[str, str]]:
    """(name, value) pairs of the record's similarity, diagnosis codes, categories, variant, verdict,
    baseline change and trajectory page (relative to the report directory; the item's `slug` names it)
    as text; absent values are left out."""
    from pytest_toolsandbox.report.writing.collector import TRAJECTORY_DIR

    values = {
        "similarity": None if record.get("score") is None else repr(float(record["score"])),
        "passed": None if record.get("passed") is None else str(bool(record["passed"])).lower(),
        "diagnosis": ",".join(diagnosis_codes(record)),
        "categories": ",".join(record.get("categories") or []),
        "variant": record.get("variant"),
        "change": record.get("change"),
        "page": f"{TRAJECTORY_DIR}/{slug}.html" if slug else None,
    }
    return [(PREFIX + name, str(value)) for name, value in values.items() if value is not None]
