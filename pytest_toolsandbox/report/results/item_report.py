"""What a scenario item's test report carries to the controller: its record (plain JSON data: the
outcome, similarity, verdict, usage, baseline change …), its trajectory as JSON, the context of its
trajectory page, and the pytest-html extras. Plain data, so it crosses from xdist workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.running.configure import settings
from pytest_toolsandbox.running.errors import ToolsandboxError
from pytest_toolsandbox.running.items import Case, gate_agent, is_scenario_id, scenario_and_case, slug

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.world.trajectory import Trajectory

_TRAJECTORY_JSON = pytest.StashKey[tuple[Any, str, Any]]()
"""(the trajectory, its JSON as the report keeps it, the trajectory that JSON holds)."""


def keep_for_report(node: pytest.Item, trajectory: Trajectory, max_message_chars: int) -> Trajectory:
    """Serialise the played trajectory once, as the report will keep it, and return the trajectory the
    item goes on with."""
    serialised = _serialised(trajectory, max_message_chars)
    node.stash[_TRAJECTORY_JSON] = serialised  # the report reuses it: serialised once
    return serialised[0]


def _serialised(trajectory: Trajectory, max_message_chars: int) -> tuple[Trajectory, str, Trajectory]:
    """(the trajectory, its JSON as the report keeps it, the trajectory that JSON holds): long messages
    cut (scoring keeps the full text), lone surrogates (half an emoji) replaced, since no file nor xdist
    channel takes them."""
    from pytest_toolsandbox.basics.surrogates import encodable
    from pytest_toolsandbox.report.results.truncation import for_report

    shown = for_report(trajectory, max_message_chars)
    text = shown.to_json()
    clean = encodable(text)
    if clean != text:
        cut = shown is not trajectory
        shown = type(trajectory).from_json(clean)
        trajectory = type(trajectory).from_json(encodable(trajectory.to_json())) if cut else shown
    return trajectory, clean, shown


def attach(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """Give a scenario item's report its record, trajectory and page context (the final outcome, after
    xfail handling, is known here)."""
    found = scenario_and_case(item)
    if found is None or not isinstance(item, pytest.Function):
        return
    parent, case = found
    from pytest_toolsandbox.report.results.record import item_outcome
    from pytest_toolsandbox.report.text.terminal import terminal_safe

    _carry(report, toolsandbox_categories=list(parent.scenario.categories))
    # -v lines read the domain as a dotted name (`x.yaml` would show as `x::yaml`): the test name here;
    # the controller restores the node id for failure headlines once the line is printed.
    report.location = (parent.nodeid, None, item.name)
    failure = call.excinfo.value if call.excinfo is not None else None
    if isinstance(failure, ToolsandboxError) and report.failed:
        report.longrepr = terminal_safe(str(failure))
    outcome = item_outcome(report.when, report.outcome, hasattr(report, "wasxfail"))
    if outcome is None or report.when == "teardown":
        return
    error = None
    if outcome == "error" and call.excinfo is not None:
        error = str(failure) if isinstance(failure, ToolsandboxError) else call.excinfo.exconly()[:2000]
    record = _record(item, parent.scenario, case, outcome, failure, error)
    item_slug = slug(item)
    _carry(report, toolsandbox_record=record, toolsandbox_slug=item_slug, toolsandbox_context=parent.page_context)
    if item.config.getoption("xmlpath", None):  # --junitxml reads them from the item's teardown report
        from pytest_toolsandbox.report.text.junit import junit_properties

        item.user_properties.extend(junit_properties(record, item_slug))
    values: dict[str, Any] = item.funcargs
    trajectory = values.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    serialised = item.stash.get(_TRAJECTORY_JSON, None)
    if serialised is not None:  # items live to the session's end: so would their trajectories
        del item.stash[_TRAJECTORY_JSON]
    if trajectory is not None:
        if not (serialised and serialised[0] is trajectory):  # a trajectory the plugin did not play
            serialised = _serialised(trajectory, settings(item.config).limits.max_message_chars)
        _carry(report, toolsandbox_trajectory=serialised[1])
        if item.config.getoption("htmlpath", None):
            _carry(report, extras=[*getattr(report, "extras", []), *_html_extras(record, serialised[2])])


def _carry(report: pytest.TestReport, **values: Any) -> None:
    """Attributes of our own on a test report: pytest keeps them, and xdist sends a report's attributes
    (its `__dict__`) from the worker to the controller, which reads them back with `getattr`."""
    vars(report).update(values)


def _usage(role: object) -> dict[str, Any] | None:
    """What a role reports through `usage` (LLM roles), as plain JSON data; None otherwise.

    Real SDK usage is nested (`prompt_tokens_details`), holds None (`cache_creation_input_tokens`) or
    is a pydantic object: it is converted, never trusted."""
    from pytest_toolsandbox.basics.jsondata import plain

    try:
        usage = plain(getattr(role, "usage", None))
    except Exception:  # a property that raises is no usage
        return None
    return usage if isinstance(usage, dict) else None


def _model(role: object, attribute: str = "model") -> str | None:
    """A role's `model` (or the snapshot that answered it) as one line of text (an Enum, a client object or
    a raising property are data)."""
    from pytest_toolsandbox.basics.jsondata import label

    try:
        return label(getattr(role, attribute, None))
    except Exception:
        return None


def _off_policy(episode: object) -> dict[str, Any] | None:
    """Per-turn results of an off-policy episode (`--user=reference-history`); None otherwise."""
    from pytest_toolsandbox.running.offpolicy import OffPolicyEpisode

    return episode.as_json() if isinstance(episode, OffPolicyEpisode) and episode.turns else None


def _replayed(cassette: Any) -> bool | None:
    """Whether every request of the item came from its cassette (None: the item had no cassette)."""
    return None if cassette is None else cassette.replayed


def _record(item: pytest.Function, scenario: Scenario, case: Case, outcome: str, failure: BaseException | None,
            error: str | None) -> dict[str, Any]:
    from pytest_toolsandbox.basics.jsondata import plain
    from pytest_toolsandbox.report.ci.baseline import classify
    from pytest_toolsandbox.report.results.record import empty_evaluation_fields, evaluation_fields, trajectory_fields
    from pytest_toolsandbox.report.results.usage import usage_fields
    from pytest_toolsandbox.roles.base import role_name

    values: dict[str, Any] = item.funcargs  # whatever the fixtures (or a conftest's overrides) returned
    config = settings(item.config)
    trajectory = values.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    evaluation = values.get("toolsandbox_evaluation")
    threshold = values.get("toolsandbox_threshold")
    agent = gate_agent(item, case, values.get("toolsandbox_agent"))
    baseline = config.baseline.status(agent, scenario.path, case.variant) if config.baseline else None
    tokens = {"agent": _usage(values.get("toolsandbox_agent")), "user": _usage(values.get("toolsandbox_user"))}
    models = {"agent": _model(values.get("toolsandbox_agent")), "user": _model(values.get("toolsandbox_user"))}
    answered = {role: _model(values.get(f"toolsandbox_{role}"), "answered_model") for role in ("agent", "user")}
    return capped(plain({  # plain JSON data whatever the roles exposed: it crosses the xdist channel and JSON files
        "id": item.nodeid, "scenario": scenario.name, "path": scenario.path,
        "categories": list(scenario.categories), "variant": case.variant, "trial": case.trial,
        "max_messages": config.max_messages or scenario.max_messages,
        "agent": role_name(values.get("toolsandbox_agent"), case.agent), "agent_spec": agent,
        "user": role_name(values.get("toolsandbox_user"), config.user),
        **trajectory_fields(trajectory),
        "agent_model": models["agent"], "user_model": models["user"],
        "agent_answered_model": answered["agent"], "user_answered_model": answered["user"],
        "outcome": outcome, "threshold": threshold,
        **(evaluation_fields(evaluation, threshold, _expected(scenario, trajectory, evaluation))
           if evaluation is not None else empty_evaluation_fields()),
        "tokens": tokens, **usage_fields(tokens, models, _replayed(values.get("toolsandbox_cassette"))),
        "user_sim_suspect": values.get("toolsandbox_user_suspect") or [],
        "off_policy": _off_policy(values.get("toolsandbox_episode")),
        "baseline": None if baseline is None else ("passed" if baseline else "failed"),
        "change": classify(baseline, outcome) if config.baseline and config.baseline.source(agent) is not None
        else None,  # an agent the baseline does not gate has no change, not a "new" task
        "error": error,
    }), config.limits.max_message_chars)


def capped(value: Any, limit: int) -> Any:
    """`value` (plain JSON data) with every text longer than `limit` characters cut, whatever field holds
    it: agent and user text reaches a record in many places (the verdict's closest message, a diagnosis
    detail, an error), and one 7 MB reply quoted in each made every report file grow without bound.
    Lone surrogates (half an emoji) become U+FFFD: no file nor xdist channel takes them."""
    from pytest_toolsandbox.basics.limits import truncated
    from pytest_toolsandbox.basics.surrogates import encodable

    if isinstance(value, str):
        return encodable(truncated(value, limit))
    if isinstance(value, dict):
        return {capped(key, limit): capped(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [capped(item, limit) for item in value]
    return value


def _expected(scenario: Scenario, trajectory: Trajectory | None, evaluation: Evaluation) -> dict[str, Any] | None:
    """Each milestone's and minefield's targets as text, for the record (and so the report)."""
    if trajectory is None:
        return None
    from pytest_toolsandbox.report.text.expected import expectations

    return {kind: expectations(scenario, trajectory, getattr(evaluation, kind), kind)
            for kind in ("milestones", "minefields")}


def _html_extras(record: dict[str, Any], trajectory: Trajectory) -> list[dict[str, Any]]:
    """pytest-html per-test extra: the trajectory view with its milestone table."""
    from pytest_html import extras

    from pytest_toolsandbox.recording.secrets import scrub_text
    from pytest_toolsandbox.report.pages.trajectory_html import trajectory_fragment

    return [extras.html(scrub_text(trajectory_fragment(trajectory, record)))]  # pytest-html writes it, not us


def html_table_header(cells: list[str]) -> None:
    """pytest-html's results table gains the Category and Similarity columns."""
    cells.insert(2, '<th class="sortable" data-column-type="category">Category</th>')
    cells.insert(3, '<th class="sortable" data-column-type="similarity">Similarity</th>')


def html_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    """A row's Category and Similarity cells, and its test id escaped (a file name is data)."""
    from pytest_toolsandbox.report.pages.escaping import escape

    prefix = '<td class="col-testId">'
    for position, cell in enumerate(cells):  # pytest-html leaves the test id unescaped
        if cell.startswith(prefix) and cell.endswith("</td>") and is_scenario_id(report.nodeid):
            cells[position] = prefix + escape(cell[len(prefix):-len("</td>")], quote=True) + "</td>"
    record = getattr(report, "toolsandbox_record", None) or {}
    score = record.get("score")
    cells.insert(2, f'<td class="col-category">{escape(", ".join(getattr(report, "toolsandbox_categories", [])))}</td>')
    cells.insert(3, f'<td class="col-similarity">{"" if score is None else f"{score:.4f}"}</td>')
