"""What a role is offered: agent-facing tool schemas and their OpenAI / Anthropic formats."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.tools.registry import ToolSpec


@dataclass(frozen=True)
class OfferedTool:
    """A tool as one role sees it. `name` may be scrambled; `tool` is always the registry name."""

    name: str
    tool: str
    description: str
    parameters: dict[str, Any] = field(hash=False)

    @classmethod
    def from_spec(cls, spec: ToolSpec) -> OfferedTool:
        return cls(name=spec.name, tool=spec.name, description=spec.description,
                   parameters=spec.json_schema())

    def replace(self, **changes: Any) -> OfferedTool:
        fields: dict[str, Any] = {"name": self.name, "tool": self.tool, "description": self.description,
                  "parameters": copy.deepcopy(self.parameters)}
        fields.update(changes)
        return OfferedTool(**fields)

    def openai(self) -> dict[str, Any]:
        """OpenAI chat-completions `tools` entry."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": self.parameters}}

    def anthropic(self) -> dict[str, Any]:
        """Anthropic messages `tools` entry."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tool": self.tool, "description": self.description,
                "parameters": self.parameters}
