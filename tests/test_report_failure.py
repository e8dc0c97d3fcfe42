"""The failure message of a scenario item: expected targets (fill_from filled), "not reached",
guardrail hits; and metrics without calls read n/a."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation.result import Finding, GroundTruthMetrics
from pytest_toolsandbox.evaluation.text import ground_truth_line, per_call
from tests.test_plugin_support import records_by_id, run, summary, write_suite

CONVERT = """
categories: [single_tool_call, single_user_turn, canonicalization]
user: {goal: Know how many euros 100 US dollars are., first_message: "How much is 100 bucks in euros?"}
tools: [convert_currency]
milestones:
  converted:
    tool_call: {convert_currency: {amount: 100, from_currency_code: USD, to_currency_code: EUR}}
  answered:
    after: [converted]
    agent_says: {text: "That is {amount} euros.", match: contains}
    fill_from: {milestone: converted, values: {amount: result}}
reference:
  - convert_currency(amount=100, from_currency_code="USD", to_currency_code="EUR")
  - agent: That is 92.0 euros.
"""

WIFI_THEN_CONTACT = """
categories: [multiple_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, set_cellular_service_status]
milestones:
  wifi_off: {tool_call: {set_wifi_status: {on: false}}}
  confirmed: {after: [wifi_off], agent_says: Wifi is off.}
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off.
"""

# Turns wifi off, then cellular too (nobody asked), then confirms: the confirmation matches but
# the settings changed since wifi_off, so the guardrail zeroes it.
MEDDLER = """
import json
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall

CALLS = [("set_wifi_status", {"on": False}), ("set_cellular_service_status", {"on": False})]


class Meddler:
    name = "meddler"

    def __init__(self):
        self.step = 0

    def respond(self, messages, tools):
        self.step += 1
        if self.step <= len(CALLS):
            tool, arguments = CALLS[self.step - 1]
            return Turn(tool_calls=(ToolCall(id=f"c{self.step}", name=tool, arguments=json.dumps(arguments)),))
        return Turn(text="Wifi is off.")
"""


def test_unhelpful_agent_on_fill_from_shows_the_filled_expected_value(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/convert.yaml": CONVERT})
    result = run(pytester, "--agent", "unhelpful")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert ("missed milestone converted (0.000): not reached; expected "
            'convert_currency(amount=100, from_currency_code="USD", to_currency_code="EUR")') in output
    # the agent never converted, so the amount comes from the reference dialogue's conversion
    assert ('missed milestone answered (0.000): not reached; expected agent says "That is 92.0 euros." '
            "(filled as in the reference dialogue)") in output
    assert "closest" not in output
    record = records_by_id(summary(pytester))["scenarios/convert.yaml::test_scenario[base]"]
    assert record["milestones"][1]["expected"] == {
        "agent_says": 'agent says "That is 92.0 euros." (filled as in the reference dialogue)'}


def test_guardrail_hit_is_named(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/wifi.yaml": WIFI_THEN_CONTACT})
    pytester.makepyfile(meddler=MEDDLER)
    pytester.makeconftest("import pytest\nfrom meddler import Meddler\n\n"
                          "@pytest.fixture\ndef toolsandbox_agent():\n    return Meddler()\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "similarity 0.5000" in output
    assert ("milestone confirmed zeroed by a guardrail (settings, contacts, messaging, reminders changed since "
            "wifi_off): met at [7] agent→user: Wifi is off.") in output
    record = summary(pytester)["records"][0]
    assert record["milestones"][1]["guarded"] == "settings, contacts, messaging, reminders changed since wifi_off"


def test_rates_without_calls_read_n_a() -> None:
    none = GroundTruthMetrics(precision=1.0, recall=0.0, incorrect_action_rate=0.0, success=False,
                              matched_calls=0, predicted_calls=0, reference_calls=2)
    assert ground_truth_line(none).startswith("precision n/a · recall 0.00 · incorrect actions n/a")
    some = GroundTruthMetrics(precision=0.5, recall=1.0, incorrect_action_rate=0.5, success=False,
                              matched_calls=1, predicted_calls=2, reference_calls=1)
    assert ground_truth_line(some).startswith("precision 0.50 · recall 1.00 · incorrect actions 0.50")
    finding = Finding(code="PREMATURE_END", count=2, per_call=2.0, indices=[3])
    assert per_call(finding, 0) == "n/a per call (no calls)"
    assert per_call(finding, 4) == "2.00 per call"
