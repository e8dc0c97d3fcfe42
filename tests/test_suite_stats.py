"""`stats`: counts per category and variant, distributions, tool coverage, the suite's extra counts."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario, read_yaml
from pytest_toolsandbox.suite.features import Features, features
from pytest_toolsandbox.suite.stats import MINIMUM_BASES, MINIMUMS, check, compute
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import all_tools

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
REGISTRY = all_tools()


def copy(tmp_path: Path, source: str, change: Callable[[dict[str, Any]], None], name: str) -> Path:
    data = read_yaml((SCENARIOS / source).read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def facts(path: Path) -> Features:
    return features(load_scenario(path, REGISTRY), REGISTRY)


def test_categories_and_variants_count_bases_and_items() -> None:
    files = find_scenarios(SCENARIOS)
    stats = compute([facts(path) for path in files], REGISTRY)
    tags = Counter(tag for path in files for tag in yaml.safe_load(path.read_text(encoding="utf-8"))["categories"])
    assert stats["bases"] == len(files) and stats["items"] == len(files) * len(VARIANTS)
    for category, row in stats["categories"].items():
        assert row["bases"] == tags[category] and row["items"] == tags[category] * len(VARIANTS)
    assert {row["items"] for row in stats["variants"].values()} == {len(files)}
    assert sum(row["reference_bases"] for row in stats["categories"].values()) > stats["reference_total"]["bases"]
    assert stats["reference_total"] == {"bases": 129, "items": 1032}  # the paper's Table 6
    histogram = stats["milestones_per_scenario"]["histogram"]
    assert sum(histogram.values()) == len(files)


def test_definitions_of_the_extra_counts(tmp_path: Path) -> None:
    nested = facts(SCENARIOS / "settings" / "wifi_on_low_battery.yaml")
    cellular = facts(SCENARIOS / "messaging" / "send_message_cellular_off.yaml")
    currency = facts(SCENARIOS / "search" / "convert_currency.yaml")
    assert nested.nested and not cellular.nested
    assert nested.world_differs and not cellular.world_differs  # four settings changed vs one
    assert cellular.order_dependent and not currency.order_dependent  # `answered` is only text
    assert not cellular.parallel
    parallel = facts(copy(tmp_path, "search/weather_here.yaml", lambda d: (
        d["tools"].append("get_wifi_status"),
        d["reference"].__setitem__(0, {"parallel": ["get_current_location()", "get_wifi_status()"]})), "p.yaml"))
    assert parallel.parallel
    emptied = facts(copy(tmp_path, "search/convert_currency.yaml",
                         lambda d: d.update(world={"clear": ["contacts"]}), "c.yaml"))
    two_rows = facts(copy(tmp_path, "search/convert_currency.yaml", lambda d: d.update(world={"contacts": [
        {"name": f"Ana Ruiz {n}", "phone_number": f"+1415555010{n}"} for n in range(2)]}), "r2.yaml"))
    three_rows = facts(copy(tmp_path, "search/convert_currency.yaml", lambda d: d.update(world={"contacts": [
        {"name": f"Ana Ruiz {n}", "phone_number": f"+1415555010{n}"} for n in range(3)]}), "r3.yaml"))
    same_value = facts(copy(tmp_path, "search/convert_currency.yaml",
                            lambda d: d.update(world={"settings": {"wifi": True, "cellular": True}}), "s.yaml"))
    assert emptied.world_differs and three_rows.world_differs
    assert not two_rows.world_differs and not same_value.world_differs  # setting a default is no change


def test_paths_and_tool_coverage() -> None:
    removal = facts(SCENARIOS / "contacts" / "remove_contact_by_phone.yaml")
    assert removal.paths == {("contacts", "remove"), ("contacts", "search")}
    assert removal.named_tools == {"search_contacts"} and removal.effect_tools == {"remove_contact"}
    stats = compute([removal], REGISTRY)
    assert stats["paths"]["messages"] == {"add": 0, "modify": None, "remove": None, "search": 0}
    assert stats["tools"]["remove_contact"]["milestone_or_minefield"] == 1
    assert stats["tools"]["end_conversation"]["user_tool"]
    assert "end_conversation" not in stats["uncovered_tools"] and "add_contact" in stats["uncovered_tools"]
    assert len(stats["tools"]) == len(REGISTRY)


def test_paraphrase_pairs(tmp_path: Path) -> None:
    first = copy(tmp_path, "search/convert_currency.yaml", lambda d: None, "a.yaml")
    second = copy(tmp_path, "search/convert_currency.yaml", lambda d: d.update(paraphrase_of="a.yaml"), "b.yaml")
    dangling = copy(tmp_path, "search/convert_currency.yaml", lambda d: d.update(paraphrase_of="zz.yaml"), "c.yaml")
    stats = compute([facts(p) for p in (first, second, dangling)], REGISTRY)
    assert stats["pairs"] == [[str(second), str(first)]]
    assert stats["paraphrase_pairs"] == 1 and stats["paraphrase_bases"] == 2


def test_check_lists_exactly_the_shortfalls() -> None:
    stats = compute([facts(path) for path in find_scenarios(SCENARIOS)], REGISTRY)
    met = json.loads(json.dumps(stats))
    for category, minimum in MINIMUM_BASES.items():
        met["categories"][category]["bases"] = minimum
    met.update(MINIMUMS, uncovered_tools=[])
    met["paths"] = {table: {op: None if n is None else 1 for op, n in ops.items()}
                    for table, ops in met["paths"].items()}
    assert check(met) == []
    met["categories"]["canonicalization"]["bases"] = 59
    met["world_differs"] = 9
    met["paths"]["reminders"]["modify"] = 0
    assert check(met) == ["canonicalization: 59 bases, need 60", "world_differs: 9, need 10",
                          "reminders: no scenario exercises modify"]


def test_cli_text_json_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy(tmp_path, "search/convert_currency.yaml", lambda d: None, "a.yaml")
    assert main(["stats", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("1 bases × 8 variants = 8 items (reference benchmark: 129 bases, 1032 items)")
    assert "unit_conversion" in text and "UNCOVERED" in text
    assert main(["stats", str(tmp_path), "--json", "--check"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["bases"] == 1 and "bases: 1, need 150" in data["shortfalls"]
    copy(tmp_path, "search/convert_currency.yaml", lambda d: d.update(treshold=1), "bad.yaml")
    assert main(["stats", str(tmp_path)]) == 2
    assert "field treshold" in capsys.readouterr().err


@pytest.mark.skipif(len(find_scenarios(SCENARIOS)) < MINIMUMS["bases"],
                    reason="the 150-scenario suite of issue 9 has not landed in scenarios/ yet")
def test_repository_suite_meets_issue_9_minimums(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(SCENARIOS), "--check"]) == 0, capsys.readouterr().out
