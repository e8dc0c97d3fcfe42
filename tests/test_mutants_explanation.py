"""The explanation an insufficient-information task asks for (evaluation/explanation.py), at the edges the
rest of the suite left open (issue 33, mutation testing): a claim quoted in full up to the width of a
failure line, a plain "not", markup removed without gluing or splitting the words around it."""

from __future__ import annotations

from pathlib import Path

from pytest_toolsandbox.evaluation.explanation import claims_success, explains
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall
from tests.test_insufficient_verdict import BLUETOOTH, judged, reasons

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


TWO_MISSING = BLUETOOTH.replace("tools: [set_wifi_status, get_wifi_status]", "tools: [set_wifi_status, add_contact]") \
    .replace("missing: [bluetooth]", "missing: [bluetooth, pairing]")
NOTHING_LISTED = BLUETOOTH.replace("missing: [bluetooth]\n", "")


def test_the_missing_things_are_listed_when_no_message_explains(tmp_path: Path) -> None:
    assert reasons(judged(tmp_path, Turn(text="Sorry."), text=TWO_MISSING)) == [
        "no agent message says that the task cannot be done and names what is missing (bluetooth, pairing)"]
    assert reasons(judged(tmp_path, Turn(text="Sorry."), text=NOTHING_LISTED)) == [
        "no agent message says that the task cannot be done"]


def test_every_table_changed_is_named(tmp_path: Path) -> None:
    wifi_off = ToolCall(id="1", name="set_wifi_status", arguments='{"on": false}')
    contact = ToolCall(id="2", name="add_contact", arguments='{"name": "Kenji", "phone_number": "+13105550143"}')
    evaluation = judged(tmp_path, Turn(tool_calls=(wifi_off, contact)), Turn(text="I can't control Bluetooth."),
                        text=TWO_MISSING)
    assert reasons(evaluation) == ["the agent changed the world (settings, contacts) in a task it cannot do"]
