"""pytest-toolsandbox: stateful, conversational evaluation of tool-using agents as pytest tests."""

__version__ = "0.1.0"
