"""`final_answer`: facts on the agent's last message to the user, for the verdict only.

The reference ends with a bare "Done." (as imported reference scenarios do) and the only milestone is
the world's: the reminder was added. The final answer's facts decide whether the closing message may
stand; the similarity never changes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.report.text.failure import failure_message
from pytest_toolsandbox.report.text.paper import shippable
from pytest_toolsandbox.scenario.errors import ScenarioError
from pytest_toolsandbox.scenario.final_answer import FinalAnswer
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.messages import Role, ToolCall
from tests.test_plugin_support import run, summary, write_suite
from tests.test_scoring_support import call, play, say

ROOT = Path(__file__).resolve().parents[1]

REMINDER = """
categories: [single_tool_call, single_user_turn]
now: "2026-03-12T09:30:00"
user:
  goal: Get a reminder to call Kenji tomorrow at 5 pm.
  first_message: Remind me to call Kenji tomorrow at 5 pm.
tools: [add_reminder]
milestones:
  reminder_added:
    added: {reminders: [{content: Call Kenji, reminder_timestamp: "@tomorrow 17:00"}]}
reference:
  - add_reminder(content="Call Kenji", reminder_timestamp="@tomorrow 17:00")
  - agent: Done.
"""

CONFIRMED = """
final_answer:
  facts: [{time: "17:00", required: false}, {none: ["couldn't", failed, unable]}]
"""

ANSWER = """
final_answer:
  facts: [{time: "17:00"}, {name: Kenji}]
"""


def loaded(tmp_path: Path, text: str) -> Scenario:
    path = tmp_path / "reminder.yaml"
    path.write_text(text.lstrip(), encoding="utf-8")
    return load_scenario(path)


def add_reminder() -> ToolCall:
    return call("add_reminder", content="Call Kenji", reminder_timestamp=1773446400.0)  # 2026-03-13 17:00 PDT


def judged(scenario: Scenario, *replies: str) -> Evaluation:
    """The reminder added, then the agent says `replies` in turn (none: it says nothing to the user)."""
    return evaluate(scenario, play(scenario, [add_reminder(), *(say(reply) for reply in replies)]))


def reasons(evaluation: Evaluation) -> list[str]:
    assert evaluation.verdict is not None
    return evaluation.verdict.reasons()


@pytest.mark.parametrize("reply", [
    "Done.",  # no detail given, none misreported
    "I've set a reminder to call Kenji tomorrow at 5 PM.",
    "All set: you'll be reminded at 17:00 tomorrow to call Kenji.",
    "Reminder saved for five in the afternoon tomorrow.",
])
def test_a_confirmation_that_misreports_nothing_passes(tmp_path: Path, reply: str) -> None:
    evaluation = judged(loaded(tmp_path, REMINDER + CONFIRMED), reply)
    assert evaluation.passed(None), reasons(evaluation)
    assert evaluation.verdict is not None and evaluation.verdict.final_answer is not None
    assert evaluation.verdict.final_answer.held and evaluation.verdict.final_answer.index == 5


@pytest.mark.parametrize(("reply", "why"), [
    ("I've set a reminder to call Kenji tomorrow at 6 PM.", "gives '6 PM' instead: it should give the time 17:00"),
    ("I couldn't add the reminder, sorry.", 'says "couldn\'t"'),
    ("Reminder set for 5 PM or 6 PM tomorrow.", 'gives the time 17:00 but also "6 PM"'),
])
def test_a_confirmation_that_misreports_or_denies_the_action_fails(tmp_path: Path, reply: str, why: str) -> None:
    evaluation = judged(loaded(tmp_path, REMINDER + CONFIRMED), reply)
    assert not evaluation.passed(None)
    assert reasons(evaluation) == [f'final answer not held: the agent\'s last message to the user "{reply}" {why}']


def test_silence_and_an_empty_last_message_fail(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, REMINDER + CONFIRMED)
    lookups = [call("add_reminder", content="Call Kenji", reminder_timestamp=1773446400.0 + 60 * n) for n in range(4)]
    silent = evaluate(scenario, play(scenario, [add_reminder(), *lookups], max_messages=6))
    assert not silent.passed(None)
    assert reasons(silent) == ["final answer not held: the agent sent no message to the user"]
    empty = judged(scenario, "")
    assert not empty.passed(None)
    assert reasons(empty) == ["final answer not held: the agent's last message to the user (message 5) is empty"]


ASKED_AGAIN = REMINDER.replace("  - agent: Done.", "  - agent: Done.\n  - user: At what time?\n  - agent: At 5 PM.")


def test_a_question_before_the_work_is_no_final_answer(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, ASKED_AGAIN + CONFIRMED)
    later = [call("add_reminder", content="Call Kenji", reminder_timestamp=1773446400.0 + 60 * n) for n in range(4)]
    evaluation = evaluate(scenario, play(scenario, [say("Which Kenji?"), add_reminder(), *later], max_messages=8))
    assert not evaluation.passed(None)
    assert reasons(evaluation) == ["final answer not held: the agent sent the user no message after message 6, "
                                   "where milestone 'reminder_added' was reached (its last was message 3)"]


def test_only_the_last_message_to_the_user_counts(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, ASKED_AGAIN + ANSWER)
    taken_back = judged(scenario, "Kenji's reminder is set for 5 PM.", "Actually, it is for 6 PM.")
    assert not taken_back.passed(None)
    corrected = judged(scenario, "Kenji's reminder is set for 6 PM.", "Sorry: Kenji's reminder is at 5 PM.")
    assert corrected.passed(None), reasons(corrected)


@pytest.mark.parametrize(("reply", "passed"), [
    ("You'll be reminded to call Kenji at five in the afternoon tomorrow.", True),
    ("Kenji: 17:00 tomorrow.", True),
    ("Done.", False),  # the user asked for the time; a bare claim does not give it
    ("Kenji's reminder is at 6 PM.", False),
    ("Kenji's reminder is at 5 PM or 6 PM.", False),
    ("Kenji's reminder is not at 5 PM.", False),
])
def test_a_required_answer_must_be_stated(tmp_path: Path, reply: str, passed: bool) -> None:
    evaluation = judged(loaded(tmp_path, REMINDER + ANSWER), reply)
    assert evaluation.passed(None) is passed, reasons(evaluation)


def test_the_failure_names_the_fact_the_final_answer_misses(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, REMINDER + ANSWER)
    trajectory = play(scenario, [add_reminder(), say("Done.")])
    evaluation = evaluate(scenario, trajectory)
    assert evaluation.verdict is not None
    assert evaluation.verdict.final_answer is not None
    assert evaluation.verdict.final_answer.model_dump() == {
        "held": False, "index": 5, "closest": "Done.", "fact": "give the time 17:00",
        "missing": 'the agent\'s last message to the user "Done." does not give the time 17:00'}
    assert failure_message(trajectory, evaluation, None).splitlines()[1:] == [
        '  final answer not held: the agent\'s last message to the user "Done." does not give the time 17:00']
    assert evaluation.score == 1.0  # the similarity does not know about it


def test_a_threshold_decides_by_similarity_as_before(tmp_path: Path) -> None:
    evaluation = judged(loaded(tmp_path, REMINDER + ANSWER + "threshold: 0.9\n"), "Done.")
    assert evaluation.passed(0.9) and not evaluation.passed(None)


def test_the_record_keeps_the_final_answer_capped(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/reminder.yaml": REMINDER + ANSWER})
    pytester.makeconftest("""
import pytest
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent


class Rambling(ReferenceAgent):
    name = "rambling"

    def respond(self, messages, tools):
        turn = super().respond(messages, tools)
        return Turn(text="Done. " + "blah " * 1000) if turn.text is not None else turn


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return Rambling(toolsandbox_scenario)
""")
    result = run(pytester, "--max-message-chars", "200")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*final answer not held: the agent\'s last message to the user "Done. blah*'
                                 'does not give the time 17:00*'])
    (record,) = summary(pytester)["records"]
    answer = record["verdict"]["final_answer"]
    assert answer["held"] is False and answer["fact"] == "give the time 17:00"
    assert answer["closest"].startswith("Done. blah") and "--max-message-chars" in answer["closest"]
    assert len(answer["closest"]) < 300
    page = (pytester.path / "toolsandbox-report" / record["page"]).read_text(encoding="utf-8")
    assert "fired; the agent&#x27;s last message to the user &quot;Done. blah" in page  # the header says why
    shipped = shippable(summary(pytester))["records"][0]["verdict"]  # without the agent's text
    assert shipped["final_answer"] == {"held": False, "index": 5}


@pytest.mark.parametrize(("entry", "error"), [
    ("final_answer: {facts: []}", 'field final_answer.facts: facts is a non-empty list, e.g. [off, {none: '
                                  '[on, "couldn\'t"]}]'),
    ('final_answer: {facts: [{time: "25:00"}]}', "field final_answer.facts.time: '25:00' is not one time of day; "
                                                 'write it as HH:MM (24-hour), e.g. "17:00"'),
    ("final_answer: {facts: [{colour: red}]}", "field final_answer.facts: fact {'colour': 'red'} is none of: "),
    ("final_answer: {fact: [off]}", "field final_answer.facts: Field required"),
    ("final_answer: [off]", "field final_answer: Input should be a valid dictionary"),
    ('final_answer: {facts: [off], waive: {"done claim": " "}}',
     "field final_answer.waive: waiver of 'done claim' gives no reason"),
])
def test_a_bad_final_answer_is_a_load_error_naming_file_and_field(tmp_path: Path, entry: str, error: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        loaded(tmp_path, REMINDER + entry + "\n")
    assert str(raised.value).startswith(f"{tmp_path / 'reminder.yaml'}: {error}")


def test_fact_words_are_read_as_written(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, REMINDER + 'final_answer: {facts: [off, {phone: +12453344098}, {number: 5.0}]}\n')
    assert scenario.final_answer is not None
    assert [fact.describe() for fact in scenario.final_answer.facts] == [
        'say "off"', "give the phone number +12453344098", "state the number 5"]


SHIPPED = sorted((ROOT / "scenarios").rglob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED[::10], ids=lambda path: str(path.relative_to(ROOT / "scenarios")))
@pytest.mark.parametrize("rules", ["ours", "reference"])
def test_a_final_answer_changes_no_similarity(path: Path, rules: str) -> None:
    """Every similarity figure of the reference dialogue (score, mapping, each constraint) stays as it
    was when the scenario gains a final answer, even one the dialogue fails."""
    registry = all_tools()
    scenario = load_scenario(path, registry)
    with_answer = scenario.model_copy(update={"final_answer": FinalAnswer.model_validate(
        {"facts": [{"time": "03:17"}, {"none": ["the"]}]})})
    trajectory = play_reference(scenario, registry, rules=rules)
    before, after = evaluate(scenario, trajectory, registry, rules), evaluate(with_answer, trajectory, registry, rules)
    assert after.model_dump(exclude={"verdict"}) == before.model_dump(exclude={"verdict"})
    assert after.verdict is not None and after.verdict.final_answer is not None
    assert not after.passed(None) and not after.verdict.final_answer.held


@pytest.mark.parametrize(("replies", "passed"), [
    (("Kenji's reminder is set for 5 PM.", "You're welcome!"), True),  # closing words to a user who said thanks
    (("Kenji's reminder is set for 5 PM.", "Have a nice day."), True),
    (("Kenji's reminder is set for 5 PM.", "Actually, it is for 6 PM."), False),  # taken back
    (("Kenji's reminder is set for 6 PM.", "You're welcome!"), False),  # the answer behind it is wrong
    (("You're welcome!",), False),  # closing words with no answer behind them
])
def test_closing_words_that_contradict_nothing_leave_the_answer_before_them_standing(
        tmp_path: Path, replies: tuple[str, ...], passed: bool) -> None:
    scenario = loaded(tmp_path, ASKED_AGAIN + ANSWER)
    trajectory = play(scenario, [add_reminder(), *(say(reply) for reply in replies)])
    said = [m.content for m in trajectory.messages if m.sender is Role.AGENT and m.recipient is Role.USER]
    assert said[:len(replies)] == list(replies)  # every reply was played (then the script's own "Anything else?")
    evaluation = evaluate(scenario, trajectory)
    assert evaluation.passed(None) is passed, reasons(evaluation)


def test_closing_words_do_not_outweigh_a_denial_after_the_answer(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, ASKED_AGAIN + CONFIRMED)
    evaluation = judged(scenario, "Reminder set for 5 PM.", "Sorry, I couldn't add it.")
    assert not evaluation.passed(None)
    assert reasons(evaluation) == ['final answer not held: the agent\'s last message to the user "Sorry, I couldn\'t '
                                   'add it." says "couldn\'t"']
