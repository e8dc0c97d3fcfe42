"""How answers' values are read (evaluation/values.py), pinned at the edges the rest of the suite left open
(issue 33, mutation testing): clock times at the ends of the hour and the day, positions told by a
hemisphere alone, durations of "a" unit, "zero" to "three" as words."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation.values import Mention, Reading, clock_minutes, duration_seconds


def _times(text: str) -> list[tuple[int, ...]]:
    return [mention.values for mention in Reading(text).times]


@pytest.mark.parametrize(("text", "minutes"), [
    ("at 23:30", [(23 * 60 + 30,)]),  # the last hour of the day
    ("at 24:00", []),  # no such hour
    ("at 10:59", [(10 * 60 + 59, 22 * 60 + 59)]),  # the last minute of an hour; either half of the day
    ("at 10:60", []),  # no such minute
    ("at 0:30", [(30,)]),  # midnight's hour is unambiguous
    ("at 12:30", [(12 * 60 + 30,)]),  # so is noon's
    ("at 13:30", [(13 * 60 + 30,)]),
    ("at 10:59 pm", [(22 * 60 + 59,)]),
    ("at 10:60 pm", []),
])
def test_a_clock_time_is_read_to_the_last_minute_of_its_hour_and_day(text: str, minutes: list[tuple[int, ...]]) -> None:
    assert _times(text) == minutes


@pytest.mark.parametrize(("text", "minutes"), [
    ("10 in the night", [(22 * 60,)]),
    ("12 in the night", [(0, 12 * 60)]),  # midnight or noon: "night" does not say which twelve
    ("5:30 o'clock", [(5 * 60 + 30, 17 * 60 + 30)]),
    ("12 o'clock", [(0, 12 * 60)]),
    ("half past 12", [(30, 12 * 60 + 30)]),
    ("quarter past 12", [(15, 12 * 60 + 15)]),
    ("quarter to 1", [(45, 12 * 60 + 45)]),
    ("quarter to 12", [(11 * 60 + 45, 23 * 60 + 45)]),
    ("quarter past 13", [(60 + 15, 13 * 60 + 15)]),
])
def test_a_clock_time_without_am_or_pm_may_mean_either_half_of_the_day(text: str,
                                                                       minutes: list[tuple[int, ...]]) -> None:
    assert _times(text) == minutes


def test_a_scenario_time_in_words_is_read_like_an_answer() -> None:
    assert clock_minutes("5:30 pm") == 17 * 60 + 30
    with pytest.raises(ValueError, match="is not one time of day"):
        clock_minutes("12 o'clock")


@pytest.mark.parametrize(("text", "value", "axis"), [
    ("37.323 north", 37.323, "latitude"),
    ("37.323 N", 37.323, "latitude"),
    ("37.323 S", -37.323, "latitude"),
    ("122.03 E", 122.03, "longitude"),
    ("122.03 east", 122.03, "longitude"),
    ("122.03 W", -122.03, "longitude"),
])
def test_a_hemisphere_alone_makes_a_decimal_half_of_a_position(text: str, value: float, axis: str) -> None:
    assert Reading(text).coordinates == [Mention("coordinate", (value,), 0, len(text), unit=axis)]


def test_a_lone_bare_decimal_is_no_position() -> None:
    assert Reading("37.323").coordinates == []


@pytest.mark.parametrize(("written", "seconds"), [("a hr", 3600), ("an hour", 3600), ("half an hour", 1800)])
def test_a_duration_of_a_single_unit_may_be_written_with_an_article(written: str, seconds: int) -> None:
    assert duration_seconds(written) == seconds


def test_zero_to_three_as_words_are_read_where_they_stand_in_any_case() -> None:
    assert Reading("Two or One").small_number_words() == [Mention("word", (2.0,), 0, 3), Mention("word", (1.0,), 7, 10)]
