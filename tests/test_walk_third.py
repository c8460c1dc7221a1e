"""What a third fresh-eyes walk found in the palette, each kept fixed by a pilot test."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.filters import FIELDS
from tests.test_keys_leftovers import palette
from tests.test_tui_interaction import bar, screen_lines
from tests.tui_support import loaded, sample_app, settle

pytestmark = pytest.mark.timeout(60)


async def test_the_palette_s_filter_names_every_field_the_filter_takes(fixtures: Path) -> None:
    """It said ``by status:, skill:, agent:, since:, text``: the filter also takes
    ``source:``, ``run:``, ``parent:`` and ``error:`` (the children of a run among them)."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        said = (await palette(pilot))["Filter"]
        assert all(f"{field}:" in said for field in FIELDS), said


async def test_a_run_s_damaged_lines_are_in_its_header_at_80x24(fixtures: Path) -> None:
    """The header's counts ended ``0 tool calls (0 errors)  1 dam…`` at 80 columns: the
    damage, said last, was what was cut. It is said beside the events now."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("home", "enter")  # the classify run, with a damaged line
        await settle(pilot, lambda: "events" in screen_lines(app)[1], "the run's counts")
        assert "3 events, 1 damaged line " in screen_lines(app)[1], screen_lines(app)[1]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_filter_box_s_keys_are_in_the_bar(fixtures: Path, size: tuple[int, int]) -> None:
    """With the filter box open the key bar was empty (typing takes ``?`` and ``q``, and the
    table's keys are not the box's): it says what Enter, Escape and up do there."""
    app = sample_app(fixtures)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        await pilot.press("slash")
        await settle(pilot, lambda: "Apply" in bar(app), "the box's keys")
        said = bar(app)
        assert all(word in said for word in ("⏎ Apply", "esc Clear filter", "Earlier filters"))
        await pilot.press(*"status:failed", "enter")
        await settle(pilot, lambda: "? Keys" in bar(app), "the table's keys again")
        assert "Apply" not in bar(app)
