"""pytest_toolsandbox/compat.py against the installed pytest and pytest-xdist: each private internal the
plugin reaches is still there and means what the plugin takes it to mean. Run on the oldest and newest
versions pyproject.toml allows (benchmarks/README.md says how)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScheduling

from pytest_toolsandbox.compat import (
    adopt_setup,
    determine_setup,
    pending_on,
    send_to,
    worker_count,
)


def test_determine_setup_finds_the_ini_of_the_arguments_directory(pytester: pytest.Pytester) -> None:
    project = pytester.mkdir("project")
    (project / "tox.ini").write_text("[pytest]\nmarkers = chosen: the project's marker\n")
    root, ini, inicfg, ignored = determine_setup(None, None, [str(project)], None, pytester.path)
    assert (root, ini, ignored) == (project, project / "tox.ini", [])
    assert "chosen" in str(inicfg["markers"])


def test_adopt_setup_moves_the_configs_rootdir_ini_file_and_ini_values(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig()
    assert config.getini("markers") == [] or all("chosen" not in marker for marker in config.getini("markers"))
    project = pytester.mkdir("project")
    (project / "tox.ini").write_text("[pytest]\nmarkers = chosen: the project's marker\n")
    adopt_setup(config, *determine_setup(None, None, [str(project)], None, pytester.path))
    assert (config.rootpath, config.inipath) == (project, project / "tox.ini")
    assert "chosen: the project's marker" in config.getini("markers")  # the cached value was dropped


class Node:
    """What the `load` scheduler asks of a worker node: it records the item indices it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def send_runtest_all(self) -> None:
        raise AssertionError("not used by load scheduling with several items")

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_load_schedulers_queues_are_read_and_topped_up(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig("--tx", "2*popen")
    scheduling = LoadScheduling(config)
    nodes = [Node("gw0"), Node("gw1")]
    collection = [f"test_{n}.py::test" for n in range(40)]
    for node in nodes:
        scheduling.add_node(node)
        scheduling.add_node_collection(node, collection)
    scheduling.schedule()
    assert worker_count(scheduling) == 2
    first = [pending_on(scheduling, node) for node in nodes]
    assert first == [len(node.sent) for node in nodes] and all(count > 0 for count in first)
    send_to(scheduling, nodes[0], 3)
    assert pending_on(scheduling, nodes[0]) == first[0] + 3 == len(nodes[0].sent)
    assert sorted(nodes[0].sent + nodes[1].sent) == list(range(sum(first) + 3))  # xdist's order, no repeats


QUEUE_PROBE = """
import json
from pytest_toolsandbox.compat import queued_on_worker, xdist_worker

def pytest_runtest_setup(item):
    worker = xdist_worker(item.config)
    seen = None if worker is None else queued_on_worker(worker)
    with open(f"queue-{item.name}.json", "w") as out:
        json.dump({"worker": worker is not None, "queued": seen, "index": item.session.items.index(item)}, out)
"""


def _probes(root: Path) -> list[dict[str, Any]]:
    return sorted((json.loads(path.read_text()) for path in root.glob("queue-*.json")), key=lambda p: p["index"])


def test_a_worker_sees_the_items_xdist_queued_on_it(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(QUEUE_PROBE)
    pytester.makepyfile(test_many="import pytest\n\n@pytest.mark.parametrize('n', range(12))\n"
                                  "def test_n(n):\n    pass\n")
    pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider").assert_outcomes(passed=12)
    probes = _probes(pytester.path)
    assert len(probes) == 12 and all(probe["worker"] for probe in probes)
    for probe in probes:  # what follows an item on its worker: later items only, in order
        assert probe["queued"] == sorted(probe["queued"]) and all(i > probe["index"] for i in probe["queued"])
    assert probes[0]["queued"] and probes[-1]["queued"] == []


def test_outside_xdist_there_is_no_worker(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(QUEUE_PROBE)
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert _probes(pytester.path) == [{"worker": False, "queued": None, "index": 0}]

