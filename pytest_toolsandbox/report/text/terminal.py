"""Text from a run made safe for a terminal.

Agent text, agent names and tool results are data. Printed raw, an ANSI/OSC sequence in them could
clear the screen, retitle the window, forge a hyperlink or hide a failure; so every control character
except newline and tab is shown as a visible `\\xNN` escape in terminal output (reports keep the data),
and bidirectional controls and other invisible format characters as `\\uXXXX` (`escaping.py`).
Secrets are scrubbed too (`recording/secrets.py`), as in every report file.
"""

from __future__ import annotations

import re

from pytest_toolsandbox.recording.secrets import scrub_text
from pytest_toolsandbox.report.pages.escaping import show_invisible

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with C0/C1 control characters (ESC, BEL, CSI, …) replaced by `\\xNN`, invisible format
    characters (U+202E, …) by `\\uXXXX`, secrets scrubbed."""
    return show_invisible(_CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", scrub_text(text)))
