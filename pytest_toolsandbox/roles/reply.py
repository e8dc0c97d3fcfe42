"""What a provider adapter extracts from one response."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_toolsandbox.world.messages import ToolCall


@dataclass(frozen=True)
class Reply:
    text: str
    calls: tuple[ToolCall, ...]
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    """None: the response reported no valid count (roles/usage_counts.py)."""
