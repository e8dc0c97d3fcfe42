"""Where in an answer a value is asserted: sentences, clauses, quotes, denials, negations and hedges.

A fact is a claim about the world, and the same words can assert it, deny it or merely quote
someone: "No, it is not true that your wifi is off", "I could not send it", "Priya wrote 'see you at
8'". Facts read their values only where the text asserts them; this module says where that is, by
character spans of the text it is given (the caller decides which text: the answer as written, or
with number words turned into digits).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

_SENTENCE_END = re.compile(r"[.!?;\n]+(?=\s|$)|[!?;\n]")
_CLAUSE_END = re.compile(r"[,:—–]|\s-\s|\b(?:and|but|while|whereas|so|then)\b", re.IGNORECASE)
_QUOTE = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<!\w)'[^']*'(?!\w)")

_NEGATOR = re.compile(
    r"\b(?:not|never|no\s+longer|neither|nor|unable|failed|cannot|without|"
    r"(?:is|was|are|were|do|does|did|has|have|had|ca|could|wo|would|should|must)n[’']t)\b", re.IGNORECASE)
"""Words that deny what follows them in their clause: "wifi is not on", "I couldn't send it"."""

_DENIAL = re.compile(
    r"\b(?:(?:not|n[’']t)\s+(?:true|the\s+case|correct|right)|(?:is\s+)?(?:false|incorrect|wrong|untrue))\s+that\b",
    re.IGNORECASE)
"""Phrases that deny the rest of their sentence: "it is not true that …", "it is false that …"; a bare "that is
not correct, …" corrects what came before and denies nothing after it."""

_OFFERS = r"one\s+of|either|possibly|perhaps|maybe|could\s+be|not\s+(?:sure|certain)|unsure|uncertain"
"""Words that offer a value as one possibility: each is both a hedge and a marker of alternatives."""

_HEDGE = re.compile(
    rf"\b(?:{_OFFERS}|probably|presumably|might|may\s+(?:be|or|not|have)|or\s+so|can[’']?t\s+tell|cannot\s+tell|"
    r"i\s+(?:think|believe|guess)|likely|(?:n[’']t|not)\s+know)\b",
    re.IGNORECASE)
"""Words that make a stated value a guess: "possibly 5:57", "one of: 174, 175", "I'm not sure"."""

_MARKER = re.compile(rf"\b(?:{_OFFERS}|might\s+be)\b", re.IGNORECASE)
"""Words that offer what follows as alternatives: "It is one of: A, B, C", "possibly A, B"."""

_LIST_GLUE = re.compile(r"[,:]|and", re.IGNORECASE)
"""What may separate two clauses that are items of one list: a comma, a colon, "and" ("or" does not
split clauses); "but", "so", a dash end the list."""

_ITEM_WORDS = 4
"""The most words of an item of a list told only by its closing "or" ("A, B or C"): longer pieces
are clauses of a sentence ("Kenji, your dentist, can be reached by phone or email")."""

_OR = re.compile(r"\bor\b", re.IGNORECASE)
_QUANTITY = re.compile(r"[$€£¥₹]?\d")
_OR_AFTER = re.compile(r"\s*,?\s*(?:or|nor)\b", re.IGNORECASE)
_OR_BEFORE = re.compile(
    r"\b(?:or|either|nor)\s+(?:(?:maybe|possibly|perhaps|even|else)\s+)?(?:(?:the|a|an|your|my)\s+)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Layout:
    """The spans of one text: sentences, clauses, quotes, and the parts that are denied or hedged."""

    sentences: tuple[tuple[int, int], ...]
    clauses: tuple[tuple[int, int], ...]
    quotes: tuple[tuple[int, int], ...]
    negated: tuple[tuple[int, int], ...]
    hedged: tuple[tuple[int, int], ...]
    hedged_clauses: tuple[tuple[int, int], ...]
    plain: str
    """The text with quotations blanked out."""

    def quoted(self, start: int) -> bool:
        """Whether the character at `start` is inside quotation marks (someone else's words)."""
        return _inside(start, self.quotes)

    def asserted(self, start: int) -> bool:
        """Whether the text asserts what starts at `start`: not denied, not negated in its clause."""
        return not _inside(start, self.negated)

    def hedges(self, start: int) -> bool:
        """Whether the sentence around `start` makes its values a guess ("possibly", "not sure")."""
        return _inside(start, self.hedged)

    def hedged_clause(self, start: int) -> bool:
        """Whether the clause around `start` is a guess ("wifi might be off")."""
        return _inside(start, self.hedged_clauses)

    def alternative(self, start: int, end: int) -> bool:
        """Whether the words at `start:end` are offered as one of alternatives: "partner or
        neighbor", "Boise or maybe Twin Falls", "either Diego or Sam"."""
        sentence = self.sentence_of(start)
        before = _OR_BEFORE.search(self.plain, sentence[0], start)
        if before and self.plain[:before.start()].rstrip().endswith(",") and _QUANTITY.match(self.plain, start):
            before = None  # "$684.10, or 629.37 EUR": the same amount restated in another unit
        return bool(before or _OR_AFTER.match(self.plain, end, sentence[1]))

    def sentence_of(self, start: int) -> tuple[int, int]:
        """The sentence holding the character at `start`; on the punctuation between two sentences, none:
        the empty span (0, 0)."""
        return next((span for span in self.sentences if span[0] <= start < span[1]), (0, 0))

    def clause_of(self, start: int) -> tuple[int, int]:
        """The clause holding the character at `start`; on a separator ("," "and" "then"), none: (0, 0)."""
        return next((span for span in self.clauses if span[0] <= start < span[1]), (0, 0))


def _inside(position: int, spans: tuple[tuple[int, int], ...]) -> bool:
    return any(start <= position < end for start, end in spans)


def _split(text: str, pattern: re.Pattern[str], start: int, end: int) -> list[tuple[int, int]]:
    spans, begin = [], start
    for match in pattern.finditer(text, start, end):
        if match.start() > begin:
            spans.append((begin, match.start()))
        begin = match.end()
    if end > begin:
        spans.append((begin, end))
    return spans


def _runs(plain: str, clauses: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The clauses of one sentence grouped into lists: neighbours joined only by list glue."""
    runs: list[list[tuple[int, int]]] = []
    for clause in clauses:
        if runs and _LIST_GLUE.fullmatch(plain, runs[-1][-1][1], clause[0]):
            runs[-1].append(clause)
        else:
            runs.append([clause])
    return runs


def _alternative_lists(plain: str, sentences: list[tuple[int, int]],
                       clauses: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The spans of lists whose items are offered as alternatives, not stated: those after a marker
    ("It is one of: 555-0100, Kenji Watanabe, Sam Whitaker") and those closed by "or" whose items are
    all short ("555-0100, Kenji Watanabe or Sam Whitaker"). Each item of such a list is a guess, not
    only the one beside the marker or the "or"; a list with neither ("two reminders: call Kenji and
    pick up the dry cleaning") states every item."""
    for start, end in sentences:
        for run in _runs(plain, [clause for clause in clauses if start <= clause[0] < end]):
            marked = next((index for index, clause in enumerate(run) if _MARKER.search(plain, *clause)), None)
            if marked is not None:
                yield run[marked][0], run[-1][1]
            elif len(run) > 1 and _closing_or(plain, run):
                yield run[0][0], run[-1][1]


def _closing_or(plain: str, run: list[tuple[int, int]]) -> bool:
    """Whether a run of clauses is a list of short items closed by "or": "A, B or C", "A, B, or C"."""
    *items, (start, end) = run
    closing = _OR.search(plain, start, end)
    pieces = [plain[item[0]:item[1]] for item in items if plain[item[0]:item[1]].strip()]
    if not closing:
        return False
    if not plain[start:closing.start()].strip() and _QUANTITY.match(plain[closing.end():].lstrip()):
        return False  # "8 shares are $730.40, or £577.02": the same amount restated in another unit
    pieces.append(plain[start:closing.start()])
    return all(len(piece.split()) <= _ITEM_WORDS for piece in pieces)


@lru_cache(maxsize=4096)
def layout(text: str) -> Layout:
    """The spans of `text`; quotes are blanked before splitting, so a quoted "tonight, 8?" is one piece."""
    quotes = tuple(match.span() for match in _QUOTE.finditer(text))
    plain = text
    for start, end in quotes:
        plain = plain[:start] + "q" * (end - start) + plain[end:]
    sentences = _split(plain, _SENTENCE_END, 0, len(plain))
    clauses = [clause for start, end in sentences for clause in _split(plain, _CLAUSE_END, start, end)]
    negated: list[tuple[int, int]] = []
    hedged: list[tuple[int, int]] = []
    lists = tuple(_alternative_lists(plain, sentences, clauses))
    hedged_clauses = tuple(clause for clause in clauses if _HEDGE.search(plain, *clause) or _inside(clause[0], lists))
    for start, end in sentences:
        denial = _DENIAL.search(plain, start, end)
        if denial:  # an answer that opens by denying ("It is not true that …") denies all it goes on to say
            opens = not plain[:denial.start()].strip(" \t\n\"'“‘-—").lower().removesuffix("it is").removesuffix(
                "it's").strip()
            negated.append((denial.end(), len(plain) if opens else end))
        if _HEDGE.search(plain, start, end):
            hedged.append((start, end))
    for start, end in clauses:
        negator = _NEGATOR.search(plain, start, end)
        if negator:
            negated.append((negator.end(), end))
    return Layout(tuple(sentences), tuple(clauses), quotes, tuple(negated), tuple(hedged), hedged_clauses, plain)
