"""Lone surrogates (half of an emoji, `\\ud800`) in text that comes from a model or an agent.

JSON may carry a lone surrogate as an escape (`"ok \\ud800"`), and a model that cuts an emoji in two
sends exactly that; Python then holds a `str` that UTF-8 cannot encode. Kept as it is, it breaks the
first thing that encodes it: the SDK's next request (the whole history is sent again, so the episode
errors one turn later and the item leaves the pass rate), a report file, the xdist channel. Such text
is data like any other, so the surrogate is replaced by U+FFFD (the replacement character) where the
text enters the conversation, and again where a record or file is written.
"""

from __future__ import annotations

import json
import re

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a surrogate (half of an escaped pair, or a lone one: only parsing tells them apart)."""


def encodable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD. ASCII text (a flag CPython keeps on every string)
    and text without a surrogate are returned as they are, without a copy."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def encodable_json(text: str) -> str:
    """JSON text (a tool call's arguments) whose strings hold no lone surrogate once parsed.

    Literal surrogates are replaced like in any text; an escaped lone surrogate (`"\\ud800"`, which the
    tool would receive as a surrogate and may echo in its result) is replaced by re-encoding the parsed
    value, which happens only when one is there: other arguments keep their bytes. Text that is not
    JSON is kept (it is never parsed into a value, so no surrogate can come out of it)."""
    text = encodable(text)
    if not _ESCAPED_SURROGATE.search(text):
        return text
    try:
        value = loads(text)
    except JsonDataError:
        return text
    decoded = json.dumps(value, ensure_ascii=False)  # a lone surrogate stays one character here
    return _SURROGATE.sub("\ufffd", decoded) if _SURROGATE.search(decoded) else text
