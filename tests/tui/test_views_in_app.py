"""Views in the app: the table saved as one (``V``), chosen again from ``v`` or the palette
(its filter, sort and columns), and a damaged ``views.toml`` said, the app going on."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from tests.tui.test_filter_box import apply
from tests.tui.test_palette_keybar import open_palette
from tests.tui.test_runs_screen_text import shown, titles
from tests.tui_support import loaded, noticed, sample_app, settle
from tui.screens.runs import RunsScreen
from tui.screens.save_view import SaveViewScreen
from tui.views import View, save_view

pytestmark = pytest.mark.timeout(60)

RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""The one sample run whose model calls said a cost ($0.0102)."""
FAILED = "run_20261128T143000031_9c8b7a6f5e4d3c2b"


def runs_screen(app: Any) -> RunsScreen:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen


def name_box_focused(app: Any) -> bool:
    return isinstance(app.screen, SaveViewScreen) and getattr(app.focused, "id", "") == "name"


async def choose(pilot: Any, name: str) -> None:
    """``v``, the view's name, Enter."""
    await pilot.press("v")
    await settle(pilot, lambda: pilot.app.screen.query("CommandList"), "the views listed")
    await pilot.press(*name, "enter")
    await settle(pilot, lambda: isinstance(pilot.app.screen, RunsScreen), "the view chosen")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_table_saved_as_a_view_is_chosen_again(
    fixtures: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    views = tmp_path / "views.toml"
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=size, notifications=True) as pilot:
        await loaded(pilot)
        await apply(pilot, "duration:>20s")
        assert shown(app) == [FAILED]
        await pilot.press("s", "s", "s")  # sorted by duration
        assert runs_screen(app).sort == "duration"
        await pilot.press("V")
        await settle(pilot, lambda: name_box_focused(app), "the save box")
        await pilot.press(*"slow", "tab", "ctrl+u", *"status run duration", "enter")
        await noticed(pilot, "view 'slow' saved")
        kept = tomllib.loads(views.read_text())["views"]["slow"]
        assert kept == {
            "filter": "duration:>20s",
            "sort": "duration",
            "reverse": True,
            "columns": ["status", "run", "duration"],
        }
        await pilot.press("escape")  # the filter cleared: every run again
        await settle(pilot, lambda: len(shown(app)) == 6, "every run")
        await choose(pilot, "slow")
        await settle(pilot, lambda: shown(app) == [FAILED], "the view's runs")
        screen = runs_screen(app)
        assert (screen.filter_text, screen.sort, screen.reverse) == (
            "duration:>20s",
            "duration",
            True,
        )
        said = titles(app)
        assert "TIME" in said, said
        assert "SKILL" not in said, said
        assert "EVENTS" not in said, said
        await choose(pilot, "every run")
        await settle(pilot, lambda: len(shown(app)) == 6, "every run")
        assert "SKILL" in titles(app)


async def test_the_palette_offers_each_view(fixtures: Path, tmp_path: Path) -> None:
    views = tmp_path / "views.toml"
    save_view(views, View("spent", "cost:>0.01", "tokens", True))
    save_view(views, View("failures", "status:failed"))
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        entries = await open_palette(pilot)
        assert entries["View: spent"].startswith("cost:>0.01 · sorted by tokens ▼"), entries
        assert "View: failures" in entries
        assert "View: every run" in entries
        await pilot.press(*"View: spent", "enter")
        await settle(pilot, lambda: shown(app) == [RESEARCH], "the view's runs")
        assert runs_screen(app).sort == "tokens"


async def test_a_damaged_views_file_is_said_and_kept(fixtures: Path, tmp_path: Path) -> None:
    views = tmp_path / "views.toml"
    views.write_bytes(b"[views.mine\nfilter = 'status:failed'\n")
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("v")
        said = await noticed(pilot, "is not TOML")
        assert str(views) in said.replace("\n", "") or "views.toml" in said
        assert isinstance(app.screen, RunsScreen)  # nothing to choose: no list opens
        await pilot.press("V")
        await settle(pilot, lambda: name_box_focused(app), "the save box")
        await pilot.press(*"mine", "enter")
        await noticed(pilot, "not saved")
        assert views.read_bytes() == b"[views.mine\nfilter = 'status:failed'\n"
        assert len(shown(app)) == 6  # the table goes on


def typed_at_once(app: Any, *keys: str) -> None:
    """``keys`` from the terminal all at once (fast typing, a paste, tmux's send-keys):
    posted before the first is handled, as the driver posts what it read."""
    for key in keys:
        character = {"enter": "\r", "space": " "}.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, character))


@pytest.mark.parametrize("name", ["slow", "dear", "mark space"])
async def test_a_view_named_in_the_burst_that_opens_the_save_box_is_saved_by_that_name(
    fixtures: Path, tmp_path: Path, name: str
) -> None:
    """``V``, a name and Enter typed fast: the box lost the keys typed before it was
    made (``slow`` saved nothing, ``dear`` was saved as ``ear``: its ``d`` taken for the
    table's deny, and lost with it)."""
    views = tmp_path / "views.toml"
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        await apply(pilot, "duration:>20s")
        keys = ["space" if c == " " else c for c in name]
        typed_at_once(app, "V", *keys, "enter")
        await noticed(pilot, f"view {name!r} saved")
        assert list(tomllib.loads(views.read_text())["views"]) == [name]
        assert isinstance(app.screen, RunsScreen)


@pytest.mark.parametrize("opened", [False, True])
async def test_the_columns_typed_in_the_burst_that_opens_the_save_box_are_kept(
    fixtures: Path, tmp_path: Path, opened: bool
) -> None:
    """``V``, a name, Tab, ctrl+u, the columns and Enter typed fast: Tab and ctrl+u came
    before the box had focus and were lost, and the columns were typed onto the name
    (``slowstatus run duration`` saved with every column). The box open already, the
    keys after Tab went to the name: Tab moved the focus after they had been handed on."""
    views = tmp_path / "views.toml"
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        columns = ["space" if c == " " else c for c in "status run duration"]
        if opened:
            await pilot.press("V")
            await settle(pilot, lambda: name_box_focused(app), "the save box")
        typed_at_once(app, *([] if opened else ["V"]), *"slow", "tab", "ctrl+u", *columns, "enter")
        await noticed(pilot, "view 'slow' saved")
        kept = tomllib.loads(views.read_text())["views"]
        assert kept["slow"]["columns"] == ["status", "run", "duration"], kept


@pytest.mark.parametrize("name", ["slow", "dear"])
async def test_a_view_named_in_the_burst_that_opens_the_views_is_typed_in_their_box(
    fixtures: Path, tmp_path: Path, name: str
) -> None:
    """``v`` and a view's name typed fast: the list's box was left empty (the letters went
    to the table under it, ``d`` to its deny). They are in the box, and Enter chooses it.
    (An Enter in the same burst comes before the list has found the view: Textual's
    palette then chooses nothing, as after ctrl+p.)"""
    views = tmp_path / "views.toml"
    save_view(views, View(name, "duration:>20s", "duration", True))
    save_view(views, View("other", "status:canceled"))
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        typed_at_once(app, "v", *name)
        await settle(pilot, lambda: app.screen.query("CommandList"), "the views listed")
        box = app.screen.query_one(Input)
        await settle(pilot, lambda: box.value == name, f"{name} in the box")
        await settle(pilot, lambda: app.screen.query_one("CommandList").option_count, "found")
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, RunsScreen), "the view chosen")
        await settle(pilot, lambda: shown(app) == [FAILED], "the view's runs")
        assert runs_screen(app).sort == "duration"


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_line_above_the_table_names_the_view_chosen(
    fixtures: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """It said ``filter: cost:>0.01``, as if typed: the view's name was nowhere."""
    views = tmp_path / "views.toml"
    save_view(views, View("costly", filter="cost:>0.01"))
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        await choose(pilot, "costly")
        await settle(pilot, lambda: shown(app) == [RESEARCH], "the view's runs")
        line = str(app.screen.query_one("#sources").render())
        assert "view: costly (cost:>0.01)" in line, line
        await choose(pilot, "every run")  # the table as it opens: no view said
        await settle(pilot, lambda: len(shown(app)) == 6, "every run")
        line = str(app.screen.query_one("#sources").render())
        assert "view:" not in line, line


def costly_and_slow(fixtures: Path, tmp_path: Path) -> Any:
    """The app on the samples, with two views kept: ``costly`` and ``slow``."""
    views = tmp_path / "views.toml"
    save_view(views, View("costly", filter="cost:>0.01"))
    save_view(views, View("slow", filter="duration:>20s"))
    return sample_app(fixtures, views_file=views)


@pytest.mark.parametrize("name", ["costly", "cos", "every run"])
async def test_a_view_typed_in_one_burst_with_enter_is_chosen(
    fixtures: Path, tmp_path: Path, name: str
) -> None:
    """``v``, a view's name and Enter in one burst (tmux's send-keys, fast typing) chose
    nothing until a second Enter: Enter came before the palette had listed what the name
    matches. A terminal hands the app every key of a burst at once, as posted here."""
    app = costly_and_slow(fixtures, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        if name == "every run":
            await choose(pilot, "slow")
            await settle(pilot, lambda: shown(app) == [FAILED], "the slow view")
        keys = [("v", "v"), *((("space" if c == " " else c), c) for c in name), ("enter", "\r")]
        for key, character in keys:
            app.post_message(events.Key(key, character))
        expected = 6 if name == "every run" else 1

        def chosen() -> bool:
            return isinstance(app.screen, RunsScreen) and len(shown(app)) == expected

        await settle(pilot, chosen, f"the view {name!r} chosen")
        assert runs_screen(app).view_name == ("" if name == "every run" else "costly")


async def test_enter_before_the_palette_has_searched_chooses_what_it_finds(
    fixtures: Path, tmp_path: Path
) -> None:
    """Enter taken before the palette's search of what was typed had listed anything (a
    burst, a loaded machine) chose nothing, and a second Enter was needed."""
    app = costly_and_slow(fixtures, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("v")
        await settle(pilot, lambda: app.screen.query("CommandList"), "the views listed")
        box = app.screen.query_one(Input)
        box.value = "slow"  # typed, and Enter, before the search of it has run
        await box.action_submit()
        await settle(pilot, lambda: isinstance(app.screen, RunsScreen), "the view chosen")
        await settle(pilot, lambda: shown(app) == [FAILED], "the slow view's runs")
