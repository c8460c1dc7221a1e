"""The command palette names what each action takes and where it applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.filters import FIELDS
from tests.tui.test_interaction import bar, screen_lines
from tests.tui.test_key_words import palette
from tests.tui_support import GoesAway, loaded, noticed, sample_app, settle
from tui.app import make_app
from tui.settings import Settings

pytestmark = pytest.mark.timeout(60)


async def test_the_palette_s_filter_names_every_field_the_filter_takes(fixtures: Path) -> None:
    """It said ``by status:, skill:, agent:, since:, text``: the filter also takes
    ``source:``, ``run:``, ``parent:`` and ``error:`` (the children of a run among them)."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        said = (await palette(pilot))["Filter"]
        assert all(f"{field}:" in said for field in FIELDS), said


async def test_the_palette_does_not_offer_itself(fixtures: Path) -> None:
    """Textual binds ``ctrl+p`` to the palette with words of its own: an entry to pick that
    would only open the palette again."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        entries = await palette(pilot)
        assert "Filter" in entries
        assert not [title for title, said in entries.items() if "(^p)" in said], entries


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


# -- a run whose source went away ------------------------------------------------------------


async def test_a_run_whose_source_is_down_does_not_look_live_on_its_screen() -> None:
    """The server killed, Enter on its run: the header said ``◌ unknown … following``, the
    list was rows of ``· reading…`` for as long as the server was away, and ``c`` opened a
    confirmation that then failed with ``cannot be reached``."""
    source = GoesAway(event_count=30)
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot, 1)
        assert app.screen.check_action("run_key", ("cancel",)) is True  # while the server is there
        source.away.set()
        await settle(pilot, lambda: "unknown" in rows.show_text(), "the run unknown")
        await pilot.press("enter")
        await settle(pilot, lambda: "unknown" in screen_lines(app)[0], "the run's screen")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        assert "following" not in lines[1], lines[1]
        assert "reading…" not in "\n".join(lines)
        assert "not read: its source cannot be reached" in "\n".join(lines)
        assert app.screen.check_action("run_key", ("cancel",)) is None  # greyed: it would only fail
        await pilot.press("c")
        said = await noticed(pilot, "cannot be reached now")
        assert "127.0.0.1:8765" in said
        assert type(app.screen).__name__ == "RunScreen"  # no confirmation to fail after


async def test_the_keys_panel_says_where_the_demo_s_ledgers_are(tmp_path: Path) -> None:
    """At 80x24 with a filter set, the source line cut the demo's ``ledgers in …`` to
    ``demo (live, ledgers in…``, and ``?`` listed only keys: the path was nowhere. ``?``
    names every source watched, whole (wrapped, not cut)."""
    from inspector import ManagerSource
    from run_manager import Manager
    from tests.agents import Echo

    ledgers = tmp_path / "a-rather-long-directory-name-for-the-demo-ledgers"
    async with Manager(ledger_dir=ledgers) as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="demo")])
        async with app.run_test(size=(80, 24)) as pilot:
            manager.start(Echo(), "hello")
            await loaded(pilot, 1)
            await pilot.press("slash", *"status:succeeded", "enter")
            await pilot.press("question_mark")
            await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
            await pilot.pause(0.1)
            panel = app.screen.query_one("HelpPanel").region
            said = "".join(  # its lines without the panel's border
                row[panel.x : panel.right].strip(" ▏")
                for row in screen_lines(app)[panel.y : panel.bottom]
            )
            assert f"ledgersin{ledgers}" in said.replace(" ", ""), said


async def test_f_on_a_finished_run_does_not_claim_to_follow(fixtures: Path) -> None:
    """``f`` on a finished run said ``following new events``: none will come."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("home", "enter")  # the classify run: it succeeded
        await settle(pilot, lambda: "events" in screen_lines(app)[1], "the run")
        await pilot.press("f", "f")
        said = await noticed(pilot, "the run has ended")
        assert "following new events" not in said
