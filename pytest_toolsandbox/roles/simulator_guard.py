"""The simulator-failure guard: signs that an LLM user simulator, not the agent, spoiled an episode.

Cheap heuristics on the finished trajectory, each with a reason code:
- `ended_early`: the simulator ended the conversation while milestones were still unmet and the
  agent's last words did not claim the task was done;
- `invented_fact`: the simulator stated a phone number, a name or a date found neither in its goal,
  its knowledge and its scripted first message, nor in anything the agent told it;
- `echo`: the simulator repeated the agent's last message nearly word for word (rapidfuzz ratio of
  at least ECHO_SIMILARITY on texts of at least ECHO_MIN_CHARS characters);
- `assistant_style`: the simulator spoke like the assistant (offers help, "As an AI", apologises that
  it cannot, reports a change as made — "I've updated…", "your reminder has been set", "your wifi
  is now on" —, asks for more information, talks of functions, tool names or JSON calls) instead of
  like the person with the goal;
- `repeated_line`: the simulator said the same line (case and spacing aside) REPEAT_LIMIT times;
- `message_cap`: the conversation hit the message cap: the simulator never called `end_conversation`.
A suspect item is still scored; the flag tells the reader to look at the user side first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.messages import Message, Role

_CLAIM = re.compile(r"\b(done|sent|set|created|added|updated|changed|removed|deleted|completed|scheduled|"
                    r"turned|enabled|disabled|all set|here is|here are|it is|it's|is currently)\b", re.IGNORECASE)
_PHONE = re.compile(r"\+?\d[\d\s().-]{5,}\d")
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_DATE = re.compile(rf"\b(?:\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|\d{{4}}-\d{{2}}-\d{{2}}|"
                   rf"(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS}))\b",
                   re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_NOT_NAMES = frozenset({"I", "I'm", "Ok", "Okay", "Yes", "No", "Thanks", "Thank", "Please", "Hi", "Hello", "Hey",
                        "Sure", "Can", "Could", "Would", "What", "When", "Where", "Who", "How", "The", "And",
                        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
                        *(month.capitalize() for month in _MONTHS.split("|"))})  # months: dates, not names


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _facts(text: str) -> list[str]:
    """Phone numbers, dates and capitalised names (not at a sentence start) stated in `text`."""
    facts = [match.group(0) for match in _PHONE.finditer(text) if len(_digits(match.group(0))) >= 7]
    facts += [match.group(0) for match in _DATE.finditer(text)]
    for sentence in _SENTENCES.split(text):
        for match in _NAME.finditer(sentence.strip()):
            words = match.group(0).split()[1 if match.start() == 0 else 0:]  # a sentence's first word is
            if words and not set(words) <= _NOT_NAMES:                     # capitalised by grammar
                facts.append(" ".join(words))
    return facts


def _known(fact: str, allowed: str, allowed_digits: str) -> bool:
    if len(_digits(fact)) >= 7:
        return _digits(fact)[-7:] in allowed_digits
    return all(word.lower() in allowed for word in fact.split() if word not in _NOT_NAMES)


def invented_facts(scenario: Scenario, messages: Sequence[Message]) -> list[str]:
    """Facts the simulator stated that it could not have known."""
    allowed_parts = [scenario.user.goal, scenario.user.knowledge, scenario.user.first_message]
    invented: list[str] = []
    for message in messages:
        if message.sender is Role.AGENT and message.recipient is Role.USER:
            allowed_parts.append(message.content)
        elif message.sender is Role.USER and message.recipient is Role.AGENT and message.tool_call is None:
            allowed = "\n".join(allowed_parts)
            lowered, digits = allowed.lower(), _digits(allowed)
            invented += [fact for fact in _facts(message.content)
                         if not _known(fact, lowered, digits) and fact not in invented]
            allowed_parts.append(message.content)
    return invented


def ended_early(messages: Sequence[Message], milestones_met: bool, ended_by_user: bool) -> bool:
    """The simulator hung up on unmet milestones though the agent never said it was done."""
    if not ended_by_user or milestones_met:
        return False
    last_agent = next((message.content for message in reversed(messages)
                       if message.sender is Role.AGENT and message.recipient is Role.USER), "")
    return _CLAIM.search(last_agent) is None


ECHO_SIMILARITY = 90.0
"""rapidfuzz ratio (0–100) from which a user line counts as an echo of the agent's last message."""

ECHO_MIN_CHARS = 20
"""Shorter lines ("Thanks!", "Yes.") are said by both sides naturally and never count as echoes."""

REPEAT_LIMIT = 3
"""The same user line this many times is a simulator stuck in a loop."""

_ASSISTANT = re.compile(
    r"\bas an (?:ai|assistant|language model)\b"
    r"|\bI(?:'m| am) (?:an? )?(?:ai|virtual assistant|language model)\b"
    r"|\bI can help you\b|\bhow (?:can|may) I (?:help|assist)\b"
    r"|\banything else (?:I can|that I can|you need)\b"
    r"|\bI(?:'d| would) be (?:happy|glad) to (?:help|assist)\b"
    r"|\blet me know if you (?:need|have|want|would like)\b"
    r"|\bI(?:'m| am) sorry,? but I (?:can't|cannot|couldn't|could not|don't|do not)\b"
    r"|\bI(?:'ve| have) (?:just )?(?:updated|set|added|sent|created|removed|deleted|turned|changed|scheduled|moved)\b"
    r"|\byour (?:\w+ ){1,5}(?:has|have) been (?:set|updated|added|sent|created|removed|deleted|changed|scheduled"
    r"|moved|turned)\b"
    r"|\byour (?:\w+ ){1,4}(?:is|are) now (?:turned )?(?:on|off|enabled|disabled|set)\b"
    r"|\bprovide (?:me with )?more (?:information|details)\b"
    r"|\b(?:function|tool) calls?\b|\bthe `?\w+`? (?:function|tool)\b"
    r"|```|\{\s*[\"']name[\"']\s*:",
    re.IGNORECASE)


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _user_lines(messages: Sequence[Message]) -> list[tuple[int, Message]]:
    """The simulator's text messages to the agent, each with its position in `messages`."""
    return [(position, message) for position, message in enumerate(messages)
            if message.sender is Role.USER and message.recipient is Role.AGENT and message.tool_call is None]


def echoes(messages: Sequence[Message]) -> list[int]:
    """Indices of user lines that repeat the agent's preceding message nearly verbatim."""
    found = []
    last_agent = ""
    for message in messages:
        if message.sender is Role.AGENT and message.recipient is Role.USER:
            last_agent = _normal(message.content)
        elif message.sender is Role.USER and message.recipient is Role.AGENT and message.tool_call is None:
            line = _normal(message.content)
            if (min(len(line), len(last_agent)) >= ECHO_MIN_CHARS
                    and fuzz.ratio(line, last_agent) >= ECHO_SIMILARITY):
                found.append(message.index)
    return found


def assistant_style(messages: Sequence[Message]) -> list[int]:
    """Indices of user lines that read like the assistant's (offers of help, tool talk)."""
    tool_names = re.compile(r"\b(?:" + "|".join(re.escape(name) for name in all_tools() if "_" in name) + r")\b")
    return [message.index for _, message in _user_lines(messages)
            if _ASSISTANT.search(message.content) or tool_names.search(message.content)]


def repeated_lines(messages: Sequence[Message]) -> list[str]:
    """User lines said REPEAT_LIMIT times or more."""
    counts: dict[str, int] = {}
    for _, message in _user_lines(messages):
        line = _normal(message.content)
        if line:
            counts[line] = counts.get(line, 0) + 1
    return [line for line, count in counts.items() if count >= REPEAT_LIMIT]


def _at(indices: list[int]) -> str:
    return ", ".join(str(index) for index in indices)


def suspicions(scenario: Scenario, messages: Sequence[Message], milestones_met: bool,
               ended_by_user: bool, hit_cap: bool = False) -> list[str]:
    """Readable reasons to suspect the simulator, each starting with its code; empty when none."""
    reasons = []
    if ended_early(messages, milestones_met, ended_by_user):
        reasons.append("ended_early: the simulated user ended the conversation with milestones pending "
                       "before the agent claimed completion")
    invented = invented_facts(scenario, messages)
    if invented:
        reasons.append("invented_fact: the simulated user stated " + ", ".join(repr(fact) for fact in invented)
                       + ", outside its goal, knowledge and the agent's messages")
    echoed = echoes(messages)
    if echoed:
        reasons.append(f"echo: the simulated user repeated the agent's last message at message(s) {_at(echoed)}")
    styled = assistant_style(messages)
    if styled:
        reasons.append(f"assistant_style: the simulated user spoke like an assistant at message(s) {_at(styled)}")
    repeated = repeated_lines(messages)
    if repeated:
        reasons.append(f"repeated_line: the simulated user said {', '.join(repr(line[:80]) for line in repeated)} "
                       f"{REPEAT_LIMIT} times or more")
    if hit_cap:
        reasons.append("message_cap: the conversation hit the message cap; the simulated user never ended it")
    return reasons


def reason_code(reason: str) -> str:
    """The code a reason starts with (`echo`, `message_cap`, …)."""
    return reason.split(":", 1)[0]
