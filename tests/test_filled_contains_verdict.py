"""A `contains` target filled from a tool result yields to the milestone's facts in the verdict.

The imported holiday and temperature bases ask for the filled value as a substring ("287"), which
rejects "two hundred eighty-seven days" and accepts "287 or 288". With facts on the milestone
(importer/answer_facts.py) the facts decide; the similarity still scores the substring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolsandbox.scenario.loader import parse_scenario
from pytest_toolsandbox.suite.examples import judge_in_place
from pytest_toolsandbox.tools.registry import all_tools

REGISTRY = all_tools()
WORDS = "Christmas is two hundred eighty-seven days away."


def _scenario(facts: list[Any] | None) -> Any:
    answer: dict[str, Any] = {
        "after": ["diff"],
        "agent_says": ["It is {days} days till Christmas Day", {"text": "{days}", "match": "contains"}],
        "fill_from": {"milestone": "diff", "values": {"days": "result.days"}}}
    if facts is not None:
        answer["facts"] = facts
    data = {"name": "days", "categories": ["multiple_tool_call", "single_user_turn"],
            "user": {"goal": "g", "first_message": "How many days is it till Christmas Day"},
            "tools": ["get_current_timestamp", "search_holiday", "timestamp_diff"],
            "milestones": {"now": {"tool_call": {"get_current_timestamp": {}}},
                           "christmas": {"tool_call": {"search_holiday": {"holiday_name": "Christmas Day"}}},
                           "diff": {"after": ["now", "christmas"], "tool_call": {"timestamp_diff": {}},
                                    "fill_from": [{"milestone": "now", "values": {"timestamp_0": "result"}},
                                                  {"milestone": "christmas", "values": {"timestamp_1": "result"}}]},
                           "answer": answer},
            "reference": ["get_current_timestamp()", "search_holiday(holiday_name=\"Christmas Day\")",
                          "timestamp_diff(timestamp_0=1773333000.0, timestamp_1=1798185600.0)",
                          {"agent": "It is 287 days till Christmas Day"}]}
    return parse_scenario(data, Path("x.yaml"), REGISTRY)


def _judged(scenario: Any, text: str) -> Any:
    return judge_in_place(scenario, REGISTRY, 3, text)


def test_with_facts_the_filled_value_may_be_written_in_words_and_a_rival_fails() -> None:
    scenario = _scenario([{"number": 287, "tolerance": 0.5, "unit": "days"}])
    assert _judged(scenario, WORDS).passed(None)
    assert not _judged(scenario, "It is 287 or 288 days till Christmas Day").passed(None)
    assert _judged(scenario, WORDS).score < _judged(scenario, "It is 287 days till Christmas Day").score


def test_without_facts_the_filled_value_is_the_substring_it_was() -> None:
    scenario = _scenario(None)
    assert not _judged(scenario, WORDS).passed(None)
    assert _judged(scenario, "It is 287 days till Christmas Day").passed(None)
