"""The scenario-format page's examples load, and its full scenarios score as the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import parse_scenario, read_yaml
from tests.test_scoring_support import ROOT, call, play, say

PAGE = ROOT / "docs" / "scenario-format.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)
FRAGMENTS = [block for block in BLOCKS if block.startswith(("milestones:", "minefields:"))]
SCENARIOS = [block for block in BLOCKS if block.startswith("# example scenario")]
BASE = {"categories": ["multiple_tool_call"], "user": {"goal": "Anything.", "first_message": "Hello."},
        "tools": "all"}


def test_the_page_has_examples_for_every_constraint_kind_and_field() -> None:
    text = "".join(FRAGMENTS + SCENARIOS)
    for field in ("world:", "added:", "removed:", "updated:", "tool_call:", "attempted_call:", "agent_says:",
                  "user_says:", "after:", "since:", "fill_from:", "formats:", "tolerance:", "match:",
                  "no_guardrails:"):
        assert field in text, field


@pytest.mark.parametrize("block", FRAGMENTS, ids=lambda block: block.split("\n")[1].strip().rstrip(":"))
def test_every_fragment_loads(block: str) -> None:
    scenario = parse_scenario({**BASE, **read_yaml(block)}, Path("docs/fragment.yaml"))
    assert scenario.milestones or scenario.minefields


@pytest.mark.parametrize("block", SCENARIOS, ids=lambda block: block.split("\n")[1].removeprefix("name: "))
def test_every_full_example_scores_1_with_its_reference_dialogue(block: str) -> None:
    scenario = parse_scenario(read_yaml(block), Path("docs/example.yaml"))
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))
    assert evaluate(scenario, trajectory).score == 1.0


def test_the_combined_example_scores_as_the_page_says() -> None:
    block = next(block for block in SCENARIOS if "name: kilometers_to_miles" in block)
    scenario = parse_scenario(read_yaml(block), Path("docs/example.yaml"))
    convert = call("unit_conversion", amount=5, from_unit="kilometer", to_unit="mile")
    wrong = evaluate(scenario, play(scenario, [convert, say("5 kilometers are about 3.41 miles.")]))
    assert wrong.score == 0.5
    rouge_only = block.replace('      - {text: "3.11", match: contains}\n', "")
    alone = parse_scenario(read_yaml(rouge_only), Path("docs/example.yaml"))
    answer = evaluate(alone, play(alone, [convert, say("5 kilometers are about 3.41 miles.")])).milestones[1]
    assert round(answer.similarity, 2) == 0.95
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "scores 0.5 (the conversion milestone 1, the answer 0), although ROUGE-L alone would give the answer 0.95" \
        in page


@pytest.mark.parametrize("block", [block for block in SCENARIOS if "accept:" in block],
                         ids=lambda block: block.split("\n")[1].removeprefix("name: "))
def test_every_full_example_with_answers_judges_them_as_declared(block: str) -> None:
    from pytest_toolsandbox.suite.examples import declaration_problems, example_problems
    from pytest_toolsandbox.tools.registry import all_tools

    scenario = parse_scenario(read_yaml(block), Path("docs/example.yaml"))
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))
    base = (trajectory, evaluate(scenario, trajectory))
    assert declaration_problems(scenario) == [] and example_problems(scenario, all_tools(), base) == []
