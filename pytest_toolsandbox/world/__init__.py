"""World state: tables with snapshot history, the message bus, the frozen clock and seeded ids."""

from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.ids import IdGenerator, stable_uuid
from pytest_toolsandbox.world.messages import Message, Role, ToolCall, ToolTrace
from pytest_toolsandbox.world.tables import SCHEMAS, WORLD_TABLES, Table, frame
from pytest_toolsandbox.world.world import World

__all__ = [
    "SCHEMAS", "WORLD_TABLES", "FrozenClock", "IdGenerator", "Message", "Role", "Table", "ToolCall",
    "ToolTrace", "World", "frame", "stable_uuid",
]
