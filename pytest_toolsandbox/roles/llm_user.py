"""The user simulator as a real model, role-reversed: the agent's messages reach it as the other
party's turns and its own earlier lines as its turns, so it continues the conversation as the person.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.conversation import Conversation, conversation
from pytest_toolsandbox.roles.model_backed import ModelBacked
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.scripted import END_CONVERSATION
from pytest_toolsandbox.roles.simulator_prompt import simulator_system_prompt
from pytest_toolsandbox.roles.text_calls import parse_text_calls
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role, ToolCall


class LLMUser(ModelBacked):
    """Replies as the scenario's person; `end_conversation` is the only action it can take."""

    def __init__(self, client: ModelClient, scenario: Scenario, name: str) -> None:
        super().__init__(client)
        self.scenario = scenario
        self.name = name
        self.ends = 0
        # True when the world's instruction is complete as it stands (`--prompts reference`): the
        # reference's instruction brings its own role reversal and demonstrations.
        self.raw_instruction = False

    def prompt(self, messages: Sequence[Message]) -> Conversation:
        """What the model is sent: its system prompt and the role-reversed conversation."""
        seen = conversation(messages, Role.USER)
        system = seen.system if self.raw_instruction else simulator_system_prompt(seen.system)
        return Conversation(system=system, entries=seen.entries)

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        ending = [tool for tool in tools if tool.tool == END_CONVERSATION]
        reply = self.client.complete(self.prompt(messages), ending)
        calls = reply.calls or (parse_text_calls(reply.text, known=[tool.name for tool in ending]) if ending else ())
        if ending and any(call.name == ending[0].name for call in calls):
            self.ends += 1
            return Turn(tool_calls=(ToolCall(id=f"end_{self.ends}", name=ending[0].name),))
        return Turn(text=reply.text)
