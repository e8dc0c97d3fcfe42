"""Role specs as given to --agent / --user."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolsandbox.roles.human import HumanAgent, HumanUser
from pytest_toolsandbox.roles.resolve import RoleSpecError, role_factory
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser, UnhelpfulAgent
from pytest_toolsandbox.scenario.loader import load_scenario

FREDRIK = Path(__file__).resolve().parents[1] / "scenarios" / "messaging" / "send_message_cellular_off.yaml"


@pytest.mark.parametrize(("spec", "kind", "role"), [
    ("reference", "agent", ReferenceAgent), ("unhelpful", "agent", UnhelpfulAgent), ("human", "agent", HumanAgent),
    ("scripted", "user", ScriptedUser), ("human", "user", HumanUser),
    ("pytest_toolsandbox.roles.scripted:UnhelpfulAgent", "agent", UnhelpfulAgent),
    ("pytest_toolsandbox.roles.scripted:ScriptedUser", "user", ScriptedUser),
])
def test_specs_build_their_roles(spec: str, kind: str, role: type) -> None:
    assert isinstance(role_factory(spec, kind)(load_scenario(FREDRIK), "base"), role)  # type: ignore[arg-type]


def test_unknown_specs_name_the_choices() -> None:
    with pytest.raises(RoleSpecError, match=r"unknown agent — did you mean claude or claude-opus\? Use a built-in "
                                            r"agent \(human, reference, unhelpful\), a model alias \(claude, .*gpt-4o"):
        role_factory("claud", "agent")
    with pytest.raises(RoleSpecError, match=r"unknown user\. Use a built-in user .*scripted"):
        role_factory("zzzz", "user")
    with pytest.raises(RoleSpecError, match="cannot load it"):
        role_factory("no_such_module:Agent", "agent")
