"""Moving between screens: Escape closes one thing at a time; ``p`` reaches the run a
resumed run came from; resume asks first; an empty cancel reason records what the box said.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Input, Label, Static

from inspector import ManagerSource
from run_manager import Manager
from tests.agents import Echo, stubborn_worker
from tests.tui_support import (
    cancel_asked,
    canceled,
    drawn_cells,
    events_read,
    loaded,
    noticed,
    sample_app,
    settle,
)
from tui.app import make_app
from tui.palette import palette_commands
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.settings import Settings

pytestmark = pytest.mark.timeout(60)


def labels(app: object) -> str:
    return "\n".join(str(label.render()) for label in app.screen.query(Label))  # type: ignore[attr-defined]


async def test_escape_closes_the_search_before_the_run(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("end", "enter")
        await events_read(pilot, 21)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await pilot.press("slash", *"mouse")
        box = screen.query_one("#search", Input)
        assert box.has_class("open")
        await pilot.press("escape")  # typing: closes the box, not the run
        assert app.screen is screen
        assert not box.has_class("open")
        await pilot.press("slash", *"mouse", "enter")
        await settle(pilot, lambda: "of" in str(box.border_title), "the matches")
        await pilot.press("escape")  # matches shown: the search goes, the run stays
        assert app.screen is screen
        assert not box.has_class("open")
        assert screen.search_text == ""
        await pilot.press("escape")  # now back to the runs
        assert isinstance(app.screen, RunsScreen)


async def test_escape_closes_the_keys_panel_and_nothing_else(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        screen = app.screen
        await pilot.press("question_mark")
        assert screen.query("HelpPanel")
        await pilot.press("escape")
        assert not screen.query("HelpPanel")
        assert app.screen is screen  # the run stays open
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_the_palette_sorts_either_way_and_shows_the_tree(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        titles = [command.title for command in palette_commands(app, app.screen)]
        assert {"Tree", "Reverse", "Sort"} <= set(titles)
        before = [run.run_id for run in rows.rows]
        await pilot.press("ctrl+p", *"reverse")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot, lambda: [run.run_id for run in rows.rows] == before[::-1], "reversed")


async def test_resume_asks_first_and_p_goes_back_to_the_run_resumed(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path / "runs", agents=[Echo()]) as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            first = manager.start(Echo(), "hello")
            await asyncio.wait_for(first.result(), 5)
            rows = await loaded(pilot, 1)
            await settle(pilot, lambda: not rows.rows[0].live, "the run ended")
            await pilot.press("r")
            assert "Resume run" in labels(app)  # asked, not done
            assert len(manager.active()) == 0
            await pilot.press("escape")
            assert isinstance(app.screen, RunsScreen)
            await pilot.pause(0.1)
            assert len(rows.rows) == 1  # left as it was
            await pilot.press("r", "enter")
            await noticed(pilot, "resumed as")
            await settle(pilot, lambda: len(rows.rows) == 2, "the resumed run")
            resumed = next(run for run in rows.rows if run.resumed_from)
            assert resumed.resumed_from == first.run_id
            rows.select_key(resumed.key)
            await pilot.press("enter")
            header = str(app.screen.query_one("#run-header", Static).render())
            assert f"resumed from {first.run_id} (p)" in header
            await pilot.press("p")
            assert isinstance(app.screen, RunScreen)
            assert app.screen.key.run_id == first.run_id
            await pilot.press("p")  # no parent, not resumed: says so
            await noticed(pilot, "no parent and was not resumed")


async def test_a_cancel_with_no_reason_records_what_the_box_said(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, handle = await cancel_asked(pilot, manager, stubborn_worker, "0.05")
            assert app.screen.query_one("#reason", Input).placeholder == "why cancel it"
            hint = app.screen.query_one(".hint", Label)
            assert "'canceled in runtop' is recorded" in str(hint.render())
            await pilot.press("enter")
            # Its own row (a sample run is canceled too, so "⊘ canceled" in the table says
            # nothing of this one).
            await settle(pilot, lambda: canceled(rows, handle.run_id), "canceled")
            assert handle.info().cancel_reason == "canceled in runtop"  # not "user"


async def test_a_replay_restarted_while_paused_says_so_and_shows_nothing_played(
    fixtures: Path,
) -> None:
    from inspector import ReplaySource
    from tui.widgets.source_line import SourceLine

    ledger = next(fixtures.glob("run_20261128T143000012_*.jsonl"))
    replay = ReplaySource([ledger], step=True, name="replay")
    app = make_app(Settings(clock=1795876500.0, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        sources = app.screen.query_one(SourceLine)

        def said() -> str:
            return str(sources.render())

        await settle(pilot, lambda: "replay (paused, at 1x)" in said(), "the speed, paused")
        await pilot.press("n", "n", "n")
        rows = await loaded(pilot, 1)
        await settle(pilot, lambda: rows.rows[0].event_count == 3, "three steps")
        await pilot.press("x")  # paused, the speed is still said where the replay is
        await settle(pilot, lambda: "replay (paused, at 2x)" in said(), "2x")
        await pilot.press("R")
        await noticed(pilot, "paused: space plays, n steps")
        await settle(pilot, lambda: not rows.rows, "nothing played yet")  # not 3 events
        assert "0 runs" in said()
        await pilot.press("n")
        await settle(pilot, lambda: rows.rows and rows.rows[0].event_count == 1, "one again")


async def test_started_is_never_younger_than_the_time_a_run_has_run() -> None:
    """In the demo's first seconds STARTED said ``2s ago`` beside a TIME of ``2.6s``."""
    from tests.agents import Sleeper

    def seconds(text: str) -> float:
        return float(text.removesuffix(" ago").removesuffix("s"))

    async with Manager() as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(Sleeper(), "30")
            rows = await loaded(pilot, 1)
            run = rows.rows[0]
            assert run.live
            assert run.started_at is not None
            for after in (0.05, 0.45, 1.0, 2.6, 9.97, 12.7, 59.5):
                rows.now = run.started_at + after  # the instant a frame is drawn at
                cells = drawn_cells(rows, run)
                started, took = cells["started"], cells["duration"]
                if started == "now":  # under a tenth of a second
                    assert seconds(took) < 0.1, (after, started, took)
                else:
                    assert seconds(started) >= seconds(took), (after, started, took)
            handle.cancel()


async def test_doing_now_says_a_tool_one_way(tmp_path: Path) -> None:
    """DOING NOW said ``tool web_search`` for one run and ``tool:web_search#1`` (its node
    id) for another; each now says ``tool web_search``."""
    from inspector import LedgerDirectorySource
    from tests.conftest import line, written_ago

    in_node = "run_20261129T064500001_0000000000000001"
    in_call = "run_20261129T064500002_0000000000000002"
    directory = tmp_path / "runs"
    directory.mkdir()
    at = written_ago(1)
    (directory / f"{in_node}.jsonl").write_bytes(
        line(1, "run_started", {"skill": "a"}, run_id=in_node, time=at)
        + line(2, "node_enter", {"node_id": "tool:web_search#1"}, run_id=in_node, time=at)
        + line(3, "node_enter", {"node_id": "llm:claude-haiku#2"}, run_id=in_node, time=at)
        + line(4, "node_exit", {"node_id": "llm:claude-haiku#2"}, run_id=in_node, time=at)
    )
    (directory / f"{in_call}.jsonl").write_bytes(
        line(1, "run_started", {"skill": "b"}, run_id=in_call, time=at)
        + line(2, "tool_call", {"call_id": "c1", "name": "web_search"}, run_id=in_call, time=at)
    )
    # Written just now, by another writer than runtop: live.
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory)])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 2)
        doing = {run.run_id: run.doing for run in rows.rows}
        assert doing == {in_node: "tool web_search", in_call: "tool web_search"}
        assert "tool:web_search#1" not in rows.show_text()


async def test_screenshots_show_one_ledger_directory_whenever_made(tmp_path: Path) -> None:
    """The README's screenshots showed a new temporary directory in the source line each
    time they were made: every SVG changed on every ``make screenshots``."""
    from tui import screenshots

    lines: list[str] = []

    async def first_run(pilot: object) -> None:
        app = pilot.app  # type: ignore[attr-defined]
        await settle(pilot, lambda: app.screen.query_one("RunTable").rows, "a run")  # type: ignore[arg-type]
        lines.append(str(app.screen.query_one("SourceLine").render()))

    assert screenshots.LEDGERS.name == "runtop-demo"  # the place make screenshots uses
    ledgers = tmp_path / "runtop-demo"
    for attempt in ("one", "two"):
        path = await screenshots.save(attempt, first_run, tmp_path, ledgers=ledgers)
        assert path.exists()
        assert f"ledgers in {ledgers})" in lines[-1]  # the same each time
        assert not ledgers.exists()  # not left behind


async def test_notices_leave_the_preview_in_view_at_80x24(fixtures: Path) -> None:
    """Toasts lay over the preview's last lines at 80x24, one above the other: the run
    the keys act on went out of view as soon as they said something about it."""
    from tui.widgets.run_preview import RunPreview

    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("y", "c")  # copied; cannot cancel: the run already ended
        await settle(pilot, lambda: len(app.screen.query("Toast")) == 2, "two notices")
        await pilot.pause(0.2)
        preview = app.screen.query_one(RunPreview).region
        toasts = [toast.region for toast in app.screen.query("Toast")]
        for toast in toasts:
            assert not toast.overlaps(preview), (toast, preview)
        assert not toasts[0].overlaps(toasts[1])


async def test_a_run_that_ends_between_ticks_is_not_older_than_it_started() -> None:
    """The table draws every line at one instant, moved on each second: a run that ended
    after it showed ``0.1s ago`` beside a TIME of ``0.2s`` (the README's screenshot)."""

    class Held:
        """Runs until the test lets it end: on a loaded machine a run that slept 0.3 s
        could end before the test saw it start, and the test then drew the past."""

        name = "held"

        def __init__(self) -> None:
            self.end = asyncio.Event()

        async def run(self, input: str) -> str:
            await self.end.wait()
            return "let go"

    agent = Held()
    async with Manager() as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(agent, "")
            rows = await loaded(pilot, 1)
            run = rows.rows[0]
            assert run.started_at is not None
            assert run.live
            rows.now = run.started_at + 0.1  # the last tick came just after it started
            await asyncio.sleep(0.3)
            agent.end.set()
            await asyncio.wait_for(handle.result(), 5)
            await settle(pilot, lambda: not rows.rows[0].live, "the end")
            cells = drawn_cells(rows, rows.rows[0])
            started, took = cells["started"], cells["duration"]
            assert float(started.removesuffix("s ago")) >= float(took.removesuffix("s")), cells


async def test_one_mark_for_an_error_and_numbers_titled_where_they_align(fixtures: Path) -> None:
    """The failed run's error event was marked ✗ beside ✘ failed and ✘ error; the runs
    table's number columns had their titles on the left, their numbers on the right; the
    preview said a tool call without the time the run screen gives it."""
    from tui.widgets.run_preview import RunPreview

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        header = str(app.screen.query_one("#header", Static).render())
        line = rows.render_line(0).text
        for title in ("TIME", "EVENTS"):  # right-aligned: a title ends where its numbers do
            end = header.index(title) + len(title)
            assert line[end - 1] != " ", (title, header, line)
        await pilot.press("end")  # the research run: its read_page call took 1.4s
        preview = app.screen.query_one(RunPreview)
        await settle(pilot, lambda: "read_page ✔ 1.4s" in str(preview.render()), "its time")
        rows.cursor = next(n for n, run in enumerate(rows.rows) if run.status.value == "failed")
        await pilot.press("enter")
        events = await events_read(pilot, 6)
        drawn = "\n".join(events.render_line(y).text for y in range(len(events.entries())))
        assert "✘ error" in drawn
        assert "✗" not in drawn


async def test_a_resume_left_for_a_manager_says_what_will_take_it(tmp_path: Path) -> None:
    """A finished run of a folder (the samples: a runtop ledger that names no writer's
    process) is resumed by a control file: the notice says a manager writing there takes
    it, not that it was done."""
    import shutil

    from inspector import LedgerDirectorySource
    from tui.commands.samples import SHIPPED

    folder = tmp_path / "samples"
    shutil.copytree(SHIPPED, folder)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(folder, name="samples")])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot, len(list(SHIPPED.glob("*.jsonl"))))
        summarizer = next(run for run in rows.rows if run.summary.agent == "summarizer")
        assert rows.select_key(summarizer.key)
        await pilot.press("r", "enter")
        said = await noticed(pilot, "resume requested")
        assert "when a runtop manager there takes it" in said
    assert list((folder / ".control").glob("*.resume"))
