"""Run data made safe for HTML and terminals: invisible format characters shown, links kept relative.

Agent output, tool results and summary files are data written by others. Escaping `<`, `&` and quotes
is not enough: bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) and other invisible
format characters make text read differently from what it is ("Trojan Source"), so a reader could be
shown `rm -rf` as something harmless or a failing verdict as a passing one. They are replaced by a
visible `\\uXXXX` escape in HTML and terminal output (JSON files keep the data exactly). Links built
from summary data (a record's `page`) must stay relative paths inside the report: a crafted
`javascript:` or `//host` value must never become an `href`.
"""

from __future__ import annotations

import html
import re

_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)
"""Bidirectional controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), zero-width and joiner
characters, invisible operators, line/paragraph separators, the byte-order mark, interlinear
annotation marks and tag characters: none has a visible glyph of its own."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def show_invisible(text: str) -> str:
    """`text` with every invisible format character replaced by its `\\uXXXX` escape."""
    return _INVISIBLE.sub(_visible, text)


def escape(text: str, quote: bool = True) -> str:
    """`html.escape` plus `show_invisible`: the one way run data enters HTML."""
    return html.escape(show_invisible(text), quote=quote)


def relative_href(path: object) -> str | None:
    """`path` as an escaped `href` when it is a relative path inside the report, else None.

    Refused: anything with a URL scheme (`javascript:`, `data:`, `http:`), a leading `/` or `\\`
    (absolute, or `//host`), backslashes, whitespace or control characters (browsers strip some of
    them before reading the scheme). A first segment holding a colon is read as a scheme by browsers,
    so it is refused too; the report's own pages never have one."""
    if not isinstance(path, str) or not path or _SCHEME.match(path) or path[0] in "/\\":
        return None
    if any(char == "\\" or char.isspace() or not char.isprintable() for char in path):
        return None
    if ":" in path.split("/", 1)[0] or _INVISIBLE.search(path):
        return None
    return html.escape(path, quote=True)
