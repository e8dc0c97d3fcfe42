"""The explanation an insufficient-information task asks for (evaluation/explanation.py), at the edges the
rest of the suite left open (issue 33, mutation testing): a claim quoted in full up to the width of a
failure line, a plain "not", markup removed without gluing or splitting the words around it."""

from __future__ import annotations

from pathlib import Path

from pytest_toolsandbox.evaluation.explanation import claims_success, explains
from pytest_toolsandbox.roles.base import Turn
from tests.test_insufficient_verdict import judged, reasons

CLAIMED = "the agent claims success in an insufficient-information task: "


def _claim(length: int) -> str:
    text = "Done! I've taken care of that for you"
    return text + "." * (length - len(text))


def test_a_claim_is_quoted_in_full_up_to_120_characters(tmp_path: Path) -> None:
    assert reasons(judged(tmp_path, Turn(text=_claim(120)))) == [f'{CLAIMED}"{_claim(120)}"']


def test_a_longer_claim_is_cut_to_120_characters_with_an_ellipsis(tmp_path: Path) -> None:
    assert reasons(judged(tmp_path, Turn(text=_claim(121)))) == [f'{CLAIMED}"{_claim(119)}…"']


def test_a_change_denied_by_a_plain_not_is_no_claim() -> None:
    assert not claims_success("I have not sent it.")
    assert not claims_success("It is not done yet.")
    assert claims_success("It is done.")


def test_markup_is_removed_without_adding_words_between_those_around_it() -> None:
    assert explains("I can't check the stock <b>x</b> price.", ["stock price"])
    assert not explains("I can't check the stock <b>x</b> level.", ["stock price"])
