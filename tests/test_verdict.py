"""The verdict: an item passes when every milestone is reached (facts on text) and no minefield fired.

Similarity stays the reported score; only pass/fail changes. The shipped scenarios are used as
written, with the facts a scenario author would add.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.scenario.loader import load_scenario, read_yaml
from pytest_toolsandbox.scenario.models import Scenario
from tests.test_plugin_support import records_by_id, run, summary
from tests.test_scoring_support import call, play, say

ROOT = Path(__file__).resolve().parents[1]

WIFI_FACTS: dict[str, Any] = {"facts": ["off", {"none": ["on", "couldn't", "unable", "not"]}]}
STATUS_FACTS: dict[str, Any] = {"facts": [{"yes": False}, "off", {"none": ["on"]}]}

# A reference agent whose final reply is swapped (the probe of issue 20): --swap-reply sets the text.
SWAP_AGENT = """
import pytest
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent


def pytest_addoption(parser):
    parser.addoption("--swap-reply", default=None)


class SwapFinalReply(ReferenceAgent):
    name = "swap"

    def __init__(self, scenario, reply):
        super().__init__(scenario)
        self.reply = reply

    def respond(self, messages, tools):
        turn = super().respond(messages, tools)
        last = self.position == len(self.steps)
        return Turn(text=self.reply) if last and turn.text is not None and self.reply else turn


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, request):
    return SwapFinalReply(toolsandbox_scenario, request.config.getoption("--swap-reply"))
"""


def with_facts(source: str, milestone: str, extra: dict[str, Any], **top: Any) -> str:
    """A shipped scenario's YAML with `extra` added to one milestone (and `top` to the file)."""
    data = read_yaml((ROOT / "scenarios" / source).read_text(encoding="utf-8"))
    data["milestones"][milestone].update(extra)
    data.update(top)
    return yaml.safe_dump(data, sort_keys=False)


def wifi_off_without_facts() -> dict[str, Any]:
    """The shipped wifi_off scenario as written before facts: its answer milestone has wording only."""
    data = read_yaml((ROOT / "scenarios/settings/wifi_off.yaml").read_text(encoding="utf-8"))
    for key in ("facts", "accept", "reject"):
        data["milestones"]["confirmed"].pop(key, None)
    return data


def write(pytester: pytest.Pytester, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = pytester.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    pytester.makeconftest(SWAP_AGENT)


def loaded(tmp_path: Path, text: str, name: str = "s.yaml") -> Scenario:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


@pytest.fixture
def wifi_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write(pytester, {"scenarios/settings/wifi_off.yaml": with_facts("settings/wifi_off.yaml", "confirmed", WIFI_FACTS),
                     "scenarios/settings/check_wifi_status.yaml": with_facts("settings/check_wifi_status.yaml",
                                                                             "answered", STATUS_FACTS)})
    return pytester


@pytest.mark.parametrize("reply", ["Done, I've turned your wifi off.", "Your wifi is now switched off."])
def test_a_paraphrased_correct_answer_passes_with_its_similarity_unchanged(wifi_suite: pytest.Pytester,
                                                                           reply: str, tmp_path: Path) -> None:
    result = run(wifi_suite, "scenarios/settings/wifi_off.yaml", f"--swap-reply={reply}")
    result.assert_outcomes(passed=1)
    record = summary(wifi_suite)["records"][0]
    shipped = load_scenario(ROOT / "scenarios" / "settings" / "wifi_off.yaml")  # no facts: the old scenario
    trajectory = play(shipped, [call("set_wifi_status", on=False), say(reply)])
    assert record["score"] == evaluate(shipped, trajectory).score < 1.0  # ROUGE alone would fail it
    assert record["passed"] is True
    assert record["verdict"]["milestones"] == [
        {"name": "wifi_off", "reached": True, "index": 4, "missing": None, "closest": None, "fact": None},
        {"name": "confirmed", "reached": True, "index": 5, "missing": None, "closest": None, "fact": None}]


def test_a_plausible_wrong_answer_fails_naming_the_missing_fact(wifi_suite: pytest.Pytester) -> None:
    result = run(wifi_suite, "scenarios/settings/wifi_off.yaml", "--swap-reply=Wifi is on now.")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "wifi_off [base]: failed (similarity 0.9543)" in output  # scores higher than the paraphrases
    assert ("milestone 'confirmed' not reached: the closest agent message \"Wifi is on now.\" does not say "
            '"off"') in output
    record = summary(wifi_suite)["records"][0]
    assert record["passed"] is False and record["score"] == pytest.approx(0.9543, abs=5e-5)
    assert record["verdict"]["milestones"][1] == {
        "name": "confirmed", "reached": False, "index": None, "closest": "Wifi is on now.", "fact": 'say "off"',
        "missing": 'the closest agent message "Wifi is on now." does not say "off"'}


@pytest.mark.parametrize(("reply", "outcome"), [
    ("No, wifi is currently off.", "passed"),  # 0.925 ROUGE: failed under the old rule
    ("No, it's switched off right now.", "passed"),
    ("Yes, your wifi is on at the moment.", "failed"),
    ("Your wifi is off? No, it's on at the moment.", "failed"),
])
def test_a_yes_no_answer_is_judged_by_its_answer_and_its_facts(wifi_suite: pytest.Pytester, reply: str,
                                                               outcome: str) -> None:
    result = run(wifi_suite, "scenarios/settings/check_wifi_status.yaml", f"--swap-reply={reply}")
    result.assert_outcomes(**{outcome: 1})


def test_a_minefield_fails_the_item_even_when_every_milestone_is_reached(tmp_path: Path) -> None:
    scenario = loaded(tmp_path, with_facts("settings/wifi_off.yaml", "confirmed", WIFI_FACTS))
    trajectory = play(scenario, [call("set_wifi_status", on=False), call("set_cellular_service_status", on=False),
                                 say("Wifi is off now.")])
    evaluation = evaluate(scenario, trajectory)
    assert evaluation.verdict is not None
    assert not evaluation.verdict.passed and evaluation.verdict.fired == ["cellular_off"]
    assert evaluation.verdict.reasons()[-1] == "minefield 'cellular_off' fired"


ASK_FIRST = """
description: Turn wifi off after asking.
categories: [single_tool_call, multiple_user_turn]
user: {goal: Wifi off., knowledge: You want wifi off., first_message: Please switch off my wifi.}
tools: [set_wifi_status]
milestones:
  wifi_off: {tool_call: {set_wifi_status: {on: false}}}
  confirmed:
    after: [wifi_off]
    agent_says: Wifi is off now.
    facts: [off]
reference:
  - agent: Shall I turn wifi off?
  - user: Yes, go ahead.
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
"""


def test_facts_must_hold_in_the_milestone_order(tmp_path: Path) -> None:
    """Saying "off" before turning wifi off does not reach `confirmed`, which comes after `wifi_off`."""
    scenario = loaded(tmp_path, ASK_FIRST)
    early = evaluate(scenario, play(scenario, [say("It is off."), call("set_wifi_status", on=False),
                                               say("Done.")]))
    assert early.verdict is not None and not early.verdict.passed
    assert [m.reached for m in early.verdict.milestones] == [True, False]
    assert early.verdict.milestones[1].missing == ("out of order: found at message 3, before its prerequisite "
                                                   "wifi_off (message 6)")
    never = evaluate(scenario, play(scenario, [say("Wifi is on."), call("set_wifi_status", on=False),
                                               say("Done.")]))
    assert never.verdict is not None  # ROUGE finds "Wifi is on." early, but it was never reached there
    assert never.verdict.milestones[1].missing == 'the closest agent message "Done." does not say "off"'
    late = evaluate(scenario, play(scenario, [say("Shall I?"), call("set_wifi_status", on=False),
                                              say("There you go: it is off.")]))
    assert late.verdict is not None and late.verdict.passed


def test_an_event_out_of_order_is_named_as_such(tmp_path: Path) -> None:
    """The word-perfect confirmation before the call: one of the two cannot be placed; the call is
    reported out of order (as the similarity mapping's order diagnosis has it)."""
    scenario = loaded(tmp_path, ASK_FIRST)
    evaluation = evaluate(scenario, play(scenario, [say("Wifi is off now."), call("set_wifi_status", on=False),
                                                    say("Done.")]))
    assert evaluation.verdict is not None and not evaluation.verdict.passed
    assert evaluation.verdict.reasons() == ["milestone 'wifi_off' not reached: out of order: found at message 6, "
                                            "after confirmed (message 3), which must come after it"]


def test_a_floor_lets_rouge_decide_the_verdict(tmp_path: Path) -> None:
    data = wifi_off_without_facts()
    data["milestones"]["confirmed"]["agent_says"] = {"text": "Wifi is off now.", "floor": 0.7}
    scenario = loaded(tmp_path, yaml.safe_dump(data, sort_keys=False))
    turns = [call("set_wifi_status", on=False)]
    assert evaluate(scenario, play(scenario, [*turns, say("Done, I've turned your wifi off.")])).verdict.passed
    low = evaluate(scenario, play(scenario, [*turns, say("Done.")]))
    assert not low.verdict.passed
    assert low.verdict.milestones[1].missing == ('the closest agent message "Done." scores ROUGE-L 0.000, under the '
                                                 "floor 0.7")


def test_a_contains_target_is_a_fact_and_the_wording_beside_it_only_scores(tmp_path: Path) -> None:
    data = wifi_off_without_facts()
    data["milestones"]["confirmed"]["agent_says"] = ["Wifi is off now.", {"text": "off", "match": "contains"}]
    scenario = loaded(tmp_path, yaml.safe_dump(data, sort_keys=False))
    paraphrase = evaluate(scenario, play(scenario, [call("set_wifi_status", on=False), say("Switched it off.")]))
    assert paraphrase.verdict.passed and paraphrase.score < 1.0


def test_a_text_milestone_without_facts_needs_the_exact_wording(tmp_path: Path) -> None:
    """Scenarios written before facts keep working: ROUGE 1.0 reaches, a paraphrase does not."""
    scenario = loaded(tmp_path, yaml.safe_dump(wifi_off_without_facts(), sort_keys=False))
    exact = evaluate(scenario, play(scenario, [call("set_wifi_status", on=False), say("Wifi is off now.")]))
    assert exact.verdict.passed
    paraphrase = evaluate(scenario, play(scenario, [call("set_wifi_status", on=False), say("Wifi's off.")]))
    assert not paraphrase.verdict.passed
    assert "the milestone states no facts" in paraphrase.verdict.milestones[1].missing


def test_a_scenario_threshold_brings_back_the_similarity_rule(wifi_suite: pytest.Pytester) -> None:
    write(wifi_suite, {"scenarios/settings/wifi_off.yaml": with_facts(
        "settings/wifi_off.yaml", "confirmed", WIFI_FACTS, threshold=0.9)})
    run(wifi_suite, "scenarios/settings/wifi_off.yaml", "--swap-reply=Wifi is on now.").assert_outcomes(passed=1)
    result = run(wifi_suite, "scenarios/settings/wifi_off.yaml", "--swap-reply=Done, I've turned your wifi off.")
    result.assert_outcomes(failed=1)
    assert "wifi_off [base]: similarity 0.8569 < threshold 0.9" in result.stdout.str()


def test_a_fired_minefield_is_shown_in_the_failure_colour(wifi_suite: pytest.Pytester) -> None:
    wifi_suite.makepyfile(meddler="""
import json
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall

class Meddler:
    name = "meddler"
    def __init__(self):
        self.step = 0
    def respond(self, messages, tools):
        self.step += 1
        if self.step == 1:
            return Turn(tool_calls=(ToolCall(id="c1", name="set_cellular_service_status",
                                             arguments=json.dumps({"on": False})),))
        return Turn(text="Done.")
""")
    wifi_suite.makeconftest("import pytest\nfrom meddler import Meddler\n\n"
                            "@pytest.fixture\ndef toolsandbox_agent():\n    return Meddler()\n")
    run(wifi_suite, "scenarios/settings/wifi_off.yaml").assert_outcomes(failed=1)
    record = records_by_id(summary(wifi_suite))["scenarios/settings/wifi_off.yaml::test_scenario[base]"]
    assert record["verdict"]["fired"] == ["cellular_off"]
    page = next((wifi_suite.path / "toolsandbox-report" / "trajectories").rglob("base.html")).read_text()
    minefields = page[page.index("<h3>Minefields</h3>"):]
    row = re.search(r"<tr><td>cellular_off</td><td class='(ts-\w+)'>1\.000</td>", minefields)
    assert row is not None and row.group(1) == "ts-bad"
    assert "<span class='ts-bad'>fired</span>" in minefields
    milestones = page[page.index("<h3>Milestones</h3>"):page.index("<h3>Minefields</h3>")]
    assert "<td class='ts-bad'>not reached: " in milestones
    assert "<th>verdict</th><td>failed: 2 milestone(s) not reached, 1 minefield(s) fired</td>" in page


def test_the_score_command_prints_the_verdict_with_the_similarity_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    """The README conformance example: similarity as in the reference implementation; its answer is
    a paraphrase (ROUGE-L 0.88 on the answer milestone) that states the milestone's facts, so it passes."""
    from pytest_toolsandbox.cli import main

    assert main(["score", str(ROOT / "tests/data/scoring/seed_readme.trajectory.json")]) == 0
    out = capsys.readouterr().out
    assert "score 0.970646770957879" in out
    assert "verdict passed\n" in out
    assert "confirmed     → message [ 11]  similarity 0.882587" in out
