"""No degenerate agent passes an item of the imported reference suite where passing is wrong (issue 36).

Needs the reference package, like tests/test_import_fidelity.py (skipped without it, so in CI): with
TOOLSANDBOX_REFERENCE_PYTHON naming an interpreter that has `tool_sandbox`, the benchmark is imported
into a temporary directory and every agent of tests/degenerate_agents.py plays all 129 bases against
the scripted user (base variant; the insufficient-information bases in all 8 variants), judged by the
real verdict. None may pass an item; the agent that declines and names what is missing must pass
exactly the insufficient-information items. `benchmarks/probe_degenerate_agents.py` prints the counts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from tests.degenerate_agents import DEGENERATE, INSUFFICIENT, outcomes
from tests.test_import_fidelity import REFERENCE_PYTHON, needs_reference

pytestmark = needs_reference
BASES = 129


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("toolsandbox")
    subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "import-toolsandbox", "--python", REFERENCE_PYTHON,
                    "--out", str(out)], check=True, capture_output=True, text=True)
    return out


def insufficient(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in find_scenarios(folder)
            if INSUFFICIENT in load_scenario(path).categories}


@pytest.mark.parametrize("agent", sorted(DEGENERATE))
def test_no_degenerate_agent_passes_an_imported_item(imported: Path, agent: str) -> None:
    passed = outcomes(agent, imported)
    assert len({scenario for scenario, _ in passed}) == BASES
    assert [key for key, ok in passed.items() if ok] == [], f"{agent} passes imported items it must fail"


def test_declining_with_an_explanation_passes_exactly_the_imported_insufficient_information_items(
        imported: Path) -> None:
    passed = outcomes("declines-and-explains", imported)
    declined = insufficient(imported)
    assert declined, "the import wrote no insufficient-information base"
    assert {key for key, ok in passed.items() if ok} == {key for key in passed if key[0] in declined}
