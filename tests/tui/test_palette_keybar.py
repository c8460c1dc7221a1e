"""The command palette and the key bar at 80x24.

The palette speaks runtop's words, each entry with its key, and offers Open; the bar keeps
a pair of keys (``a Approve``, ``d Deny``) together, and stays as it was while the palette
is open over it. Each test reads what the screen shows: the palette's entries as listed,
and the bar's line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList

from inspector import ManagerSource
from run_manager import Manager
from tests.tui_support import awaiting_approval, loaded, sample_app, settle
from tui import textual_compat as compat
from tui.app import RuntopApp

pytestmark = pytest.mark.timeout(60)

NO_KEY = {"Theme", "Screenshot"}
"""The palette's entries that no key does."""


def screen_lines(app: Any) -> list[str]:
    """The screen's lines as the terminal shows them (the palette over its screen)."""
    return compat.screen_lines(app.screen)


def bottom_line(app: Any) -> str:
    """The last line drawn: the key bar (under the palette too)."""
    return screen_lines(app)[-1].rstrip()


async def open_palette(pilot: Any) -> dict[str, str]:
    """Open the palette; its entries as listed: title -> the line under it."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await settle(
        pilot,
        lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
        "the palette's entries",
    )
    await pilot.pause(0.3)  # every entry listed (they come in batches)
    entries: dict[str, str] = {}
    for option in app.screen.query_one(CommandList).options:
        title, _, said = option.prompt.plain.partition("\n")
        assert title not in entries, f"{title!r} twice"
        entries[title] = said
    return entries


def key_of(said: str) -> str | None:
    """The key an entry names, at its end: ``(a)``."""
    named = re.search(r"\(([^()]+)\)$", said)
    return named.group(1) if named else None


def assert_keys_named(app: RuntopApp, entries: dict[str, str]) -> None:
    """Every entry a key does names it, as the key bar does; nothing in Textual's words."""
    screen = app.screen_stack[-2]  # the screen under the palette
    bound = {app.get_key_display(a.binding) for a in screen.active_bindings.values()}
    for title, said in entries.items():
        if title in NO_KEY:
            assert key_of(said) is None, (title, said)
            continue
        assert key_of(said) in bound, (title, said, sorted(bound))
    textual = ("Maximize", "Minimize")
    assert not set(textual) & set(entries), sorted(entries)
    for words in ("the application", "focused widget", "Change the current theme", "'screenshot'"):
        assert not any(words in said for said in entries.values()), (words, entries)


async def test_the_palette_offers_runtops_keys_where_they_apply(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await pilot.pause()

            entries = await open_palette(pilot)  # the runs
            assert_keys_named(app, entries)
            assert entries["Open"].endswith("(⏎)"), entries
            assert entries["Quit"].endswith("(q)"), entries
            assert entries["Keys"].endswith("(?)"), entries
            assert entries["Approve"].endswith("(a)"), entries
            assert entries["Deny"].endswith("(d)"), entries
            assert entries["Cancel run"].endswith("(c)"), entries
            assert entries["Filter"].endswith("(/)"), entries
            assert "Resume" not in entries  # a live run: r is greyed
            assert "Back" not in entries  # the first screen: nothing to go back to
            assert {"Theme", "Screenshot"} <= set(entries)
            await pilot.press(*"open")
            await pilot.pause(0.3)  # the palette searches as it is typed
            await pilot.press("enter")  # Open: the selected run
            await settle(pilot, lambda: type(app.screen).__name__ == "RunScreen", "the run")
            assert app.screen.current_run().run_id == waiting.run_id  # type: ignore[attr-defined]

            entries = await open_palette(pilot)  # the run
            assert_keys_named(app, entries)
            assert entries["Back"].endswith("(esc)"), entries
            assert entries["Search"].endswith("(/)"), entries
            assert entries["Approve"].endswith("(a)"), entries
            assert entries["Deny"].endswith("(d)"), entries
            for elsewhere in ("Open", "Filter", "Sort", "Mark", "Step"):
                assert elsewhere not in entries, (elsewhere, sorted(entries))
            await pilot.press("escape")  # the palette closes
            await settle(pilot, lambda: type(app.screen).__name__ == "RunScreen", "the run")
            await pilot.press("t")
            await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "the tools")

            entries = await open_palette(pilot)  # the tool calls across all runs
            assert_keys_named(app, entries)
            assert entries["Its calls"].endswith("(⏎)"), entries
            assert entries["Back"].endswith("(esc)"), entries
            for elsewhere in ("Tool calls", "Approve", "Deny", "Cancel run", "Open"):
                assert elsewhere not in entries, (elsewhere, sorted(entries))
            manager.cancel_all()


async def test_the_bar_under_the_palette_keeps_the_screens_keys(fixtures: Path) -> None:
    """Opening the palette turned the bar below it to other keys: every run key, greyed
    or not, as if it applied (``r Resume`` on a live run), and ``/ Search`` went."""
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await settle(pilot, lambda: "a Approve" in bottom_line(app), "a in the bar")
            for opening in ([], ["enter"]):  # the runs, then the run
                await pilot.press(*opening)
                await pilot.pause(0.3)
                before = bottom_line(app)
                assert before.endswith("? Keys  q Quit"), before
                await open_palette(pilot)
                assert bottom_line(app) == before
                assert "r Resume" not in bottom_line(app)  # it cannot be done: not shown
                await pilot.press("escape")
                await settle(pilot, lambda: not app.screen.query(CommandList), "it closed")
                assert bottom_line(app) == before
            drawn = bottom_line(app)
            for key in ("esc Back", "/ Search", "a Approve", "d Deny", "? Keys", "q Quit"):
                assert key in drawn, drawn
            manager.cancel_all()


async def test_a_narrow_bar_keeps_approve_and_deny_together(fixtures: Path) -> None:
    """At 80x24 the calls of a tool (ended runs: ``c``, ``r``, ``a``, ``d`` greyed) kept
    ``a Approve`` and dropped ``d Deny``, as if approving were the only answer."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("t")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "the tools")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolCallsScreen", "its calls")
        await settle(pilot, lambda: "Open" in bottom_line(app), "the calls' keys")
        drawn = bottom_line(app)
        assert ("a Approve" in drawn) == ("d Deny" in drawn), drawn
        assert drawn.endswith("? Keys  q Quit"), drawn
        assert "⏎ Open" in drawn, drawn
