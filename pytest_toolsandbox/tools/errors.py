"""Exceptions tools raise and the feedback errors for malformed calls.

Tools fail with the builtin exception that says what went wrong (ConnectionError for a missing
network, PermissionError for a setting that forbids the action, ValueError for bad values) or with
the two data errors below. The agent sees `Type: message`, never a traceback.
"""

from __future__ import annotations


class NoDataError(LookupError):
    """No row matches what a tool was asked to modify or remove."""


class DuplicateError(ValueError):
    """A change would break a uniqueness rule of the world (e.g. a second device owner)."""


class CallFeedback(Exception):
    """A malformed tool call, returned to the caller as feedback instead of being executed.

    `code` is the ToolScan error pattern: IFE invalid format, IFN unknown function, IAN invalid or
    missing argument name, IAT invalid argument type.
    """

    code = "IFE"

    def __init__(self, message: str) -> None:
        super().__init__(message)


class InvalidFormatError(CallFeedback):
    code = "IFE"


class UnknownToolError(CallFeedback):
    code = "IFN"


class ArgumentNameError(CallFeedback):
    code = "IAN"


class ArgumentTypeError(CallFeedback):
    code = "IAT"


def describe_exception(error: BaseException) -> str:
    """`Type: message`, the way the agent sees a failure (builtins and ours unqualified)."""
    try:
        text = str(error)
    except Exception:  # an exception whose __str__ raises is still an error to report
        text = "<unprintable message>"
    return f"{type(error).__name__}: {text}"
