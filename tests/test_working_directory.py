"""The project's tests find their files from their own location: `cd tests && pytest test_offpolicy.py`
collects as well as a run from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SHIPPED_SCENARIO_USERS = ("test_llm_agents.py", "test_llm_user.py", "test_offpolicy.py", "test_simulator_guard.py",
                          "test_text_calls.py", "test_user_push.py")


def test_modules_that_load_shipped_scenarios_collect_from_the_tests_folder() -> None:
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             *SHIPPED_SCENARIO_USERS], cwd=TESTS, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:]
    assert " error" not in result.stdout.splitlines()[-1]
