"""``has:`` in the runs table's filter: the runs' files searched off the event loop, the
table filling in as runs are found, a live run shown once it writes the words, and a
search for a filter typed over stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Static

from inspector import LedgerDirectorySource
from tests.conftest import line
from tests.tui.test_runs_screen_text import shown, source_line, until
from tests.tui_support import loaded
from tui.app import make_app
from tui.screens.runs import RunsScreen
from tui.settings import Settings

SAID = {
    "run_20261129T064500001_aaaaaaaaaaaaaaaa": 'the server said "connection refused"',
    "run_20261129T064500002_bbbbbbbbbbbbbbbb": "Connection Refused, twice",
    "run_20261129T064500003_cccccccccccccccc": "all went well",
}


def write_runs(directory: Path) -> None:
    for run_id, said in SAID.items():
        (directory / f"{run_id}.jsonl").write_bytes(
            line(1, "run_started", {"skill": "fetch", "input": "q"}, run_id=run_id)
            + line(2, "tool_result", {"call_id": "c", "output": said}, run_id=run_id)
        )


async def filtered(app: Any, pilot: Any, text: str) -> RunsScreen:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    await pilot.press("/", *text, "enter")
    await until(pilot, lambda: source_line(app).rstrip().endswith(f"filter: {text}"))
    return screen


async def test_the_table_shows_the_runs_whose_files_hold_the_words(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path)])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 3)
        await filtered(app, pilot, 'has:"connection refused"')
        assert sorted(shown(app)) == sorted(list(SAID)[:2])
        await filtered(app, pilot, 'has:"Connection Refused"')  # a capital: as written
        assert shown(app) == [list(SAID)[1]]
        await filtered(app, pilot, "-has:refused skill:fetch")
        assert shown(app) == [list(SAID)[2]]


async def test_a_live_run_that_writes_the_words_is_shown(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path)])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 3)
        await filtered(app, pilot, "has:quetzalcoatl")
        assert shown(app) == []
        live = list(SAID)[2]
        with (tmp_path / f"{live}.jsonl").open("ab") as ledger:
            ledger.write(line(3, "llm_chunk", {"index": 0, "delta": "a quetzalcoatl"}, run_id=live))
        await until(pilot, lambda: shown(app) == [live], turns=200)


async def test_a_filter_typed_over_stops_the_search_before(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path)])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 3)
        screen = await filtered(app, pilot, "has:went")
        first = screen._stop_search
        assert not first.is_set()
        await filtered(app, pilot, "has:twice")
        assert first.is_set()
        second = screen._stop_search
        assert shown(app) == [list(SAID)[1]]
        await filtered(app, pilot, "skill:fetch")  # no has: left: nothing searched
        assert second.is_set()
        assert sorted(shown(app)) == sorted(SAID)


async def test_has_says_where_it_could_not_look() -> None:
    """A manager's runs with no ledger folder (as an attach server's) have no files here:
    a ``has:`` that finds nothing says it could not search them, not only that none
    matches."""
    from inspector import ManagerSource
    from run_manager import Manager
    from tests.agents import Echo

    async with Manager(ledger_dir=False) as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48)) as pilot:
            await manager.start(Echo(), "hello").result()
            await loaded(pilot, 1)
            await filtered(app, pilot, "has:hello")
            empty = app.screen.query_one("#empty", Static)
            await until(pilot, lambda: "have none here" in str(empty.render()))
            said = str(empty.render())
            assert "No run matches" in said
            assert "the runs of local have none here" in said
