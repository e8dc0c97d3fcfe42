"""`--prompts reference`: the reference benchmark's own agent system prompt and user-simulator
instruction, for runs whose numbers are set next to the ToolSandbox paper's.

The texts are not part of this project: `import-toolsandbox` copies them from the user's installed
`tool_sandbox` into `reference-prompts.json` beside the imported scenario files, and this module
reads them from there at run time. Our own prompts (roles/prompts.py) stay the default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.vocabulary import REFERENCE_PROMPTS_FILE
from pytest_toolsandbox.scenario.models import Scenario, UserSpec


class PromptsError(ValueError):
    """`--prompts reference` for a scenario that has no imported reference prompts nearby."""


@dataclass(frozen=True)
class ReferencePrompts:
    agent_system_prompt: str
    user_instruction: str
    demonstrations: tuple[dict[str, Any], ...]

    def user_message(self, user: UserSpec) -> str:
        """The simulator's system message: the reference's instruction, then this scenario's task, then
        the demonstration dialogues (shared ones first) as transcripts."""
        text = f"{self.user_instruction}{user.goal}"
        if user.knowledge:
            text += f" {user.knowledge}"
        demonstrations = [*self.demonstrations, *(d.model_dump() for d in user.demonstrations)]
        for demonstration in demonstrations:
            lines = [f"{self.user_instruction}{demonstration['goal']}"]
            for turn in demonstration["turns"]:
                (role, said), = turn.items()
                lines.append(f"{ {'user': 'User A', 'agent': 'User B', 'user_calls': 'User A calls'}[role]}: {said}")
            text += "\n\n" + "\n".join(lines)
        return text


def _file_for(scenario_path: str) -> Path | None:
    folder = Path(scenario_path).resolve().parent
    for candidate in (folder, *folder.parents[:3]):
        if (candidate / REFERENCE_PROMPTS_FILE).is_file():
            return candidate / REFERENCE_PROMPTS_FILE
    return None


@cache
def _load(path: Path) -> ReferencePrompts:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ReferencePrompts(data["agent_system_prompt"], data["user_instruction"],
                                tuple(data.get("demonstrations", ())))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise PromptsError(f"{path}: not a reference prompts file ({error}); re-run "
                           "`python -m pytest_toolsandbox import-toolsandbox`") from None


def reference_prompts(scenario: Scenario) -> ReferencePrompts:
    """The imported prompts that belong with `scenario` (in its folder or up to three above)."""
    path = _file_for(scenario.path or ".")
    if path is None:
        where = scenario.path or scenario.name
        raise PromptsError(f"--prompts reference: no {REFERENCE_PROMPTS_FILE} next to {where}; "
                           "it is written by `python -m pytest_toolsandbox import-toolsandbox` (docs/toolsandbox.md)")
    return _load(path)
