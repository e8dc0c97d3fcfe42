"""Units (evaluation/units.py) at the edges the rest of the suite left open (issue 33, mutation testing):
the ambiguous units ("degrees", "pounds", "¥") seen from both sides, conversions of pounds as a weight,
and a unit written out as an answer writes it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pytest_toolsandbox.evaluation.facts import Number
from pytest_toolsandbox.evaluation.units import written


def test_degrees_alone_state_a_temperature_of_either_scale() -> None:
    assert Number(number=68, unit="°F").holds("It is 68 degrees.")
    assert Number(number=20, unit="°C").holds("It is 20 degrees.")
    assert Number(number=20, unit="degrees").holds("It is 20 °C.")  # the fact's unit is the ambiguous one
    assert Number(number=68, unit="degrees").holds("It is 68 °F.")
    assert not Number(number=20, unit="degrees").holds("It is 20 km.")


def test_the_yen_sign_states_yen_or_yuan_but_no_other_currency() -> None:
    assert Number(number=500, unit="JPY").holds("It costs ¥500.")
    assert Number(number=500, unit="CNY").holds("It costs ¥500.")
    assert not Number(number=500, unit="USD").holds("It costs ¥500.")


def test_pounds_alone_are_sterling_or_a_weight_but_never_a_length() -> None:
    assert Number(number=10, unit="GBP").holds("It costs 10 pounds.")
    assert Number(number=10, unit="pounds").holds("It costs £10.")
    assert Number(number=10, unit="pounds").holds("It weighs 4.5 kg.")  # 4.54 kg, rounded as written
    assert not Number(number=10, unit="pounds").holds("It weighs 10 kg.")
    assert not Number(number=10, unit="USD").holds("It costs 10 pounds.")
    assert not Number(number=5, unit="km").holds("It weighs 5 pounds.")


def test_a_unit_is_written_out_in_its_longest_form() -> None:
    assert written("degree_Celsius") == "degrees celsius"
    assert written("EUR") == "euros"
    assert written("made_up") == "made_up"  # no alias: as named


def test_an_unknown_unit_is_refused_with_the_forms_to_write() -> None:
    with pytest.raises(ValidationError, match=r"unknown unit .parsecs.; write one of: \$, %, a\$, aud, australian"):
        Number(number=1, unit="parsecs")
