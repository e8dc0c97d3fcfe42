"""A tolerant reader for JSON-like text: what a call written almost as JSON says, and what is wrong with it.

Small models write tool calls with `//` comments, Python's `True`/`False`/`None`, single quotes, doubled
braces (`{{…}}`), expressions (`1680000000 + 86400`, `utilities_2()`) or cut off mid-object. Strict JSON
rejects all of them, and rightly so: such a call is never run. To tell the model what went wrong, and to
count the attempt (an `attempted_call` minefield must fire on it), we still need to know which tool it
named and with which arguments. This scanner reads the text character by character, evaluates nothing,
and returns the value it could read together with the problems it met; a value it cannot read (an
expression, a function call, a bare word) is left out of its object or list. Nesting is bounded, so
hostile input ("[[[[…") cannot exhaust the stack.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting read; anything deeper ends the scan (no real call nests so deep)."""

PROBLEMS: dict[str, str] = {
    "comment": "it has comments (// … or /* … */), which JSON does not allow",
    "python_literal": "it uses Python's True/False/None where JSON writes true/false/null",
    "single_quotes": "it quotes strings with single quotes where JSON uses double quotes",
    "doubled_braces": "it doubles the braces ({{ … }}) where a call is one object { … }",
    "expression": "a value is an expression or a function call (such as 1680000000 + 86400 or now()); "
    "JSON holds only literal values, so compute the value first (with a tool call if needed)",
    "placeholder": "it has a placeholder such as <value> where the real value belongs",
    "unquoted": "it has unquoted words where JSON needs a double-quoted string",
    "trailing_comma": "it has a comma right before a closing bracket",
    "truncated": "it is cut off before the JSON ends",
    "unbalanced": "it has more closing brackets than opening ones",
    "unexpected": "it has characters JSON does not allow there",
    "too_deep": "it nests too deeply to read",
}
"""Each problem code and the sentence that explains it to the model."""


class _Unreadable:
    """A value the scanner could not read (left out of its container)."""

    def __repr__(self) -> str:
        return "UNREADABLE"


UNREADABLE: Any = _Unreadable()

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_INTEGER = re.compile(r"-?\d+")
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]*")
_WORDS = {
    "true": (True, None),
    "false": (False, None),
    "null": (None, None),
    "True": (True, "python_literal"),
    "False": (False, "python_literal"),
    "None": (None, "python_literal"),
}
_OPERATORS = "+-*/%<>=!&|^"
_PLACEHOLDER_LIMIT = 80  # a slot such as <latitude> is short; bounding the search keeps the scan linear


@dataclass(frozen=True)
class Scan:
    """What was read: the value (UNREADABLE if none), where reading stopped, and the problems met
    (codes of PROBLEMS, in order of first occurrence)."""

    value: Any
    end: int
    problems: tuple[str, ...]


class _Scanner:
    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.pos = start
        self.problems: list[str] = []

    def note(self, code: str) -> None:
        if code not in self.problems:
            self.problems.append(code)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip(self) -> None:
        """Skip whitespace and comments (// …, /* … */, # …)."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char.isspace():
                self.pos += 1
            elif text.startswith("//", self.pos) or char == "#":
                self.note("comment")
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                self.note("comment")
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    self.note("truncated")
                self.pos = len(text) if end < 0 else end + 2
            else:
                return

    def value(self, depth: int) -> Any:
        self.skip()
        char = self.peek()
        if not char:
            self.note("truncated")
            return UNREADABLE
        if depth > MAX_DEPTH:
            self.note("too_deep")
            self.pos = len(self.text)
            return UNREADABLE
        if char == "{":
            return self.obj(depth)
        if char == "[":
            return self.array(depth)
        if char == "<":
            return self.placeholder()
        if char in "\"'":
            read = self.string()
        elif char.isdigit() or char in "-+.":
            read = self.number()
        elif _WORD.match(char):
            read = self.word()
        else:
            self.note("unexpected")
            self.pos += 1
            return UNREADABLE
        return self.after_scalar(read)

    def placeholder(self) -> Any:
        """`<latitude>`: a template slot, not a value."""
        end = self.text.find(">", self.pos, self.pos + _PLACEHOLDER_LIMIT)
        if end < 0 or "\n" in self.text[self.pos : end]:
            self.note("unexpected")
            self.pos += 1
            return UNREADABLE
        self.note("placeholder")
        self.pos = end + 1
        return UNREADABLE

    def after_scalar(self, read: Any) -> Any:
        """A scalar followed by an operator is an expression: skip it, the value is unreadable."""
        self.skip()
        char = self.peek()
        if char and char in _OPERATORS:
            self.note("expression")
            self.skip_expression()
            return UNREADABLE
        return read

    def skip_expression(self) -> None:
        """Skip to the next `,`, `}` or `]` that is not inside brackets or a string."""
        depth = 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in "\"'":
                self.string()
                continue
            if char == "#" or self.text.startswith(("//", "/*"), self.pos):
                self.skip()
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif char == "," and depth == 0:
                return
            self.pos += 1

    def string(self) -> Any:
        quote = self.text[self.pos]
        if quote == "'":
            self.note("single_quotes")
        start = self.pos = self.pos + 1
        while self.pos < len(self.text) and self.text[self.pos] != quote:
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        raw = self.text[start : min(self.pos, len(self.text))]
        if self.pos >= len(self.text):
            self.note("truncated")
            raw = raw.removesuffix("\\")
        else:
            self.pos += 1
        if quote == "'":  # \' needs no escape in JSON, a bare " does
            raw = re.sub(r'(?<!\\)((?:\\\\)*)"', r'\1\\"', raw.replace("\\'", "'"))
        try:
            return json.loads(f'"{raw}"', strict=False)
        except ValueError:  # a malformed escape such as \x41
            self.note("unexpected")
            return raw

    def number(self) -> Any:
        match = _NUMBER.match(self.text, self.pos)
        if match is None:
            self.note("unexpected")
            self.pos += 1
            return UNREADABLE
        self.pos = match.end()
        literal = match.group(0).lstrip("+")
        try:  # int() and float() parse a literal; they evaluate nothing
            number = int(literal) if _INTEGER.fullmatch(literal) else float(literal)
        except ValueError:  # an integer of thousands of digits
            self.note("unexpected")
            return UNREADABLE
        if isinstance(number, float) and not math.isfinite(number):
            self.note("unexpected")
            return UNREADABLE
        return number

    def word(self) -> Any:
        match = _WORD.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()
        word = match.group(0)
        self.skip()
        if self.peek() == "(":
            self.note("expression")  # a function call, with whatever follows it (`f(x).y + 1`)
            self.skip_expression()
            return UNREADABLE
        if word in _WORDS:
            value, problem = _WORDS[word]
            if problem:
                self.note(problem)
            return value
        self.note("unquoted")
        return UNREADABLE

    def key(self) -> str | None:
        char = self.peek()
        if char in "\"'":
            key = self.string()
            return key if isinstance(key, str) else None
        match = _WORD.match(self.text, self.pos)
        if match is not None:
            self.note("unquoted")
            self.pos = match.end()
            return match.group(0)
        return None

    def obj(self, depth: int) -> Any:
        self.pos += 1
        self.skip()
        if self.peek() == "{":  # {{ … }}: read the inner object, then its doubled closer
            self.note("doubled_braces")
            inner = self.value(depth + 1)  # through value(): the depth bound holds for {{{{… too
            self.skip()
            if self.peek() == "}":
                self.pos += 1
            return inner
        result: dict[str, Any] = {}
        while True:
            if self.closed("}"):
                return result
            before = self.pos
            key = self.key()
            self.skip()
            if key is None or self.peek() != ":":
                self.note("truncated" if not self.peek() else "unexpected")
                self.skip_expression()
                if self.pos == before:  # a stray ] or ): step over it
                    self.pos += 1
                continue
            self.pos += 1
            item = self.value(depth + 1)
            if item is not UNREADABLE:
                result[key] = item
            if not self.separator("}"):
                return result

    def closed(self, closer: str) -> bool:
        """Whether the container ends here: at its closing bracket (consumed), or at the end of the text
        (noted as truncated, and what was read so far is kept)."""
        self.skip()
        char = self.peek()
        if not char:
            self.note("truncated")
            return True
        if char == closer:
            self.pos += 1
            return True
        return False

    def array(self, depth: int) -> Any:
        self.pos += 1
        result: list[Any] = []
        while True:
            if self.closed("]"):
                return result
            before = self.pos
            item = self.value(depth + 1)
            if item is not UNREADABLE:
                result.append(item)
            if self.pos == before:
                self.pos += 1
            if not self.separator("]"):
                return result

    def separator(self, closer: str) -> bool:
        """After a member: consume `,` (noting a trailing one) and say whether the container goes on."""
        self.skip()
        char = self.peek()
        if char == ",":
            self.pos += 1
            self.skip()
            if self.peek() == closer:
                self.note("trailing_comma")
            return True
        if char == closer:
            return True
        if not char:
            self.note("truncated")
            return False
        self.note("unexpected")  # a missing comma, or a closer of the other kind
        if char in "}]":
            self.pos += 1
            return False
        return True


def scan(text: str, start: int = 0) -> Scan:
    """Read one JSON-like value from `text` at `start`; closers left over after it count as `unbalanced`."""
    scanner = _Scanner(text, start)
    value = scanner.value(0)
    scanner.skip()
    if scanner.peek() and scanner.peek() in "}]":
        scanner.note("unbalanced")
        while scanner.peek() and scanner.peek() in "}] \t\r\n":
            scanner.pos += 1
    return Scan(value=value, end=scanner.pos, problems=tuple(scanner.problems))


def describe(problems: tuple[str, ...]) -> str:
    """The problems as one sentence fragment for the model."""
    return "; ".join(PROBLEMS[code] for code in problems)
