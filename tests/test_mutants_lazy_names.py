"""`pytest_toolsandbox.evaluation` loads its public names on first use (PEP 562): each name comes from
its home module, is kept in the package afterwards, and an unknown name is the usual AttributeError
(found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

from importlib import import_module

import pytest

import pytest_toolsandbox.evaluation as evaluation

HOMES = {"Evaluation": "result", "EventOutcome": "result", "Finding": "result", "GroundTruthMetrics": "result",
         "evaluate": "score"}


@pytest.mark.parametrize(("name", "home"), sorted(HOMES.items()))
def test_a_public_name_loads_from_its_home_and_stays(monkeypatch: pytest.MonkeyPatch, name: str, home: str) -> None:
    monkeypatch.delitem(vars(evaluation), name, raising=False)  # as before its first use
    expected = getattr(import_module(f"pytest_toolsandbox.evaluation.{home}"), name)
    assert getattr(evaluation, name) is expected
    assert vars(evaluation)[name] is expected  # kept: the next use is a plain attribute


def test_the_public_names_are_exactly_the_lazy_ones() -> None:
    assert sorted(evaluation.__all__) == sorted(HOMES)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match=r"^module 'pytest_toolsandbox\.evaluation' has no attribute 'scores'$"):
        evaluation.scores  # noqa: B018
    assert not hasattr(evaluation, "scores")
