"""When a scripted user whose lines have run out should push the agent instead of hanging up.

ToolSandbox's user simulator is told to keep asking the assistant to do the task with its tools. A
scripted user has no such judgment, so it reads the agent's last words with a few English patterns:

- a *confirmation question*: a yes/no question about the agent acting ("Shall I turn it off?",
  "Would you like me to send it?", "Do you want me to proceed?") — not a question asking for
  information ("Which Sam do you mean?", "Do you know his number?"), which a user without more lines
  cannot answer;
- a *deferral*: the agent hands the work back ("You can turn wifi on in Settings.", "Please enable
  cellular service.", "Here's how you can do it: …", "use the `timestamp_diff` function") without
  saying it cannot do it itself. "I can't switch Bluetooth; you can do it in Settings." is an honest
  refusal: the user has its answer.

Anything else is an answer or a completion, after which the user ends the conversation as before.
The patterns are deterministic: the same words always get the same reply.
"""

from __future__ import annotations

import re
from enum import StrEnum

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|how|why)\b", re.IGNORECASE)
_CONFIRM = re.compile(
    r"\b(?:shall|should|can|may|could|do) (?:I|we)\b"
    r"|\b(?:would|do) you (?:like|want) (?:me|us) to\b"
    r"|\b(?:want|need) me to\b"
    r"|\b(?:would|do) you like (?:me )?to\b"
    r"|\b(?:okay|ok|alright|all right|fine) (?:if|for) (?:I|me|us)\b"
    r"|\bproceed\b|\bgo ahead\b|\bconfirm\b",
    re.IGNORECASE,
)
_DEFER = re.compile(
    r"\byou (?:can|could|may|might|should|need to|will need to|would need to|'ll need to|will have to|have to)"
    r"(?: \w+){0,2}? (?:use|call|run|turn|switch|enable|disable|set|open|go|check|try|do|toggle|add|send|"
    r"create|search|find|look|tap|navigate|change|update|remove|delete|make|activate|deactivate)\b"
    r"|\bplease (?:turn|switch|enable|disable|set|open|go|check|make sure|try|toggle|use|navigate|tap|activate)\b"
    r"|\bhere(?:'s| is) how (?:you|to)\b"
    r"|\b(?:use|call|using|run) the `?[A-Za-z_][A-Za-z0-9_]*`? (?:function|tool)\b"
    r"|\bI (?:recommend|suggest) (?:that )?you\b",
    re.IGNORECASE,
)
_UNABLE = re.compile(
    r"\bI(?: am|'m)? (?:can't|cannot|can not|am unable|'m unable|unable|am not able|'m not able|not able)\b"
    r"|\bI (?:don't|do not) have (?:a way|any way|the ability|access|a tool|the tool|permission)\b"
    r"|\bI have no (?:way|tool|access|ability)\b"
    r"|\bI can only\b|\bno way (?:for me )?to\b|\bnot possible for me\b",
    re.IGNORECASE,
)
_COURTESY = re.compile(
    r"\b(?:anything else|something else|any other|any more questions|further assistance|help you with)\b", re.IGNORECASE
)


class Ask(StrEnum):
    """What the agent's last text to the user asks of the user."""

    CONFIRMATION = "confirmation"
    DEFERRAL = "deferral"
    NOTHING = "nothing"


def _sentences(text: str) -> list[str]:
    return [sentence.strip() for sentence in _SENTENCE_END.split(text) if sentence.strip()]


def _confirmation(sentence: str) -> bool:
    """A yes/no question about the agent acting (no question word before the ask)."""
    match = _CONFIRM.search(sentence)
    if match is None or _COURTESY.search(sentence):
        return False
    return _WH_WORD.search(sentence[: match.start()]) is None


def classify(text: str) -> Ask:
    """Does the agent's text ask the user to confirm, hand the work back, or neither?"""
    sentences = _sentences(text)
    if any(sentence.endswith("?") and _confirmation(sentence) for sentence in sentences):
        return Ask.CONFIRMATION
    if _DEFER.search(text) and not _UNABLE.search(text):
        return Ask.DEFERRAL
    return Ask.NOTHING
