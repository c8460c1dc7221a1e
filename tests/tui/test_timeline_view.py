"""The timeline on the run screen (T), and ``runtop show --timeline``: real ledgers on disk."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from inspector import LedgerDirectorySource
from inspector.timeline import NodeKind, Outcome
from tests.timeline_ledgers import BASE, CHILD, FROZEN, PARENT, LedgerWriter, write_runs
from tests.tui_support import settle
from tui.app import RuntopApp, make_app
from tui.cli import main
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.text.timeline import bar_cells, bar_text
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.timeline_pane import TimelinePane
from tui.widgets.timeline_view import TimelineView

pytestmark = pytest.mark.timeout(60)


def app_on(directory: Path, clock: float = FROZEN, *, judged_at_clock: bool = False) -> RuntopApp:
    """The app on ``directory`` at ``clock``; its runs' liveness judged at that clock too, or
    (by default) now, by which the timeline ledgers, written days ago, are long over."""
    settings = Settings(clock=clock, flush_interval=0.01)
    judged = clock if judged_at_clock else None
    return make_app(settings, [LedgerDirectorySource(directory, name="runs", clock=judged)])


async def open_timeline(pilot: Pilot[Any], run_id: str, runs: int = 2) -> TimelinePane:
    """Open ``run_id`` from the runs table, press T, and wait for its timeline to be read."""
    app = pilot.app
    table = app.screen.query_one("RunTable")
    await settle(
        pilot,
        lambda: len(table.rows) == runs and all(r.detailed for r in table.rows),  # type: ignore[attr-defined]
        "the runs",
    )
    table.select_key(next(r.key for r in table.rows if r.run_id == run_id))  # type: ignore[attr-defined]
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
    await pilot.press("T")
    pane = app.screen.query_one(TimelinePane)
    await settle(pilot, lambda: not pane.loading, "the timeline read")
    await pilot.pause()
    return pane


def row_text(view: TimelineView, y: int) -> str:
    return view.render_line(y).text


async def test_finished_run_parallel_tools_child_run_select_and_jump(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = app_on(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = await open_timeline(pilot, PARENT)
        view = pane.view
        rows = pane.timeline.rows()
        assert [(node.kind, node.name, node.depth) for node in rows] == [
            (NodeKind.MODEL, "claude-sonnet", 0),
            (NodeKind.TOOL, "web_search", 0),
            (NodeKind.TOOL, "web_search", 0),
            (NodeKind.TOOL, "read_page", 0),
            (NodeKind.STEP, "summarise", 0),
            (NodeKind.TOOL, "fetch", 1),
            (NodeKind.CHILD_RUN, "summarizer", 0),
            (NodeKind.APPROVAL, "publish", 0),
            (NodeKind.MODEL, "claude-sonnet", 0),
        ]
        assert rows[6].run_id == CHILD
        summary = str(pane.query_one("#timeline-summary").render())
        assert "wall 15s" in summary
        assert "tools 4.6s (8.3s summed)" in summary  # three at once count once
        assert "child runs 0.5s" in summary
        assert app.screen.query_one(EventList).display is False
        assert view.has_focus
        # the rows: a ruler, then each node's name, numbers and bar, the axis the run's 15 s
        assert "┊0s" in row_text(view, 0)
        assert "┊10s" in row_text(view, 0)
        assert "853 tok" in row_text(view, 1)
        assert "  ⚙ fetch" in row_text(view, 6)
        first_bar = row_text(view, 2).index("█")  # web_search at 2.5 s of 15 s
        last_bar = row_text(view, 9).index("█")  # the last model call at 11.2 s
        assert first_bar < last_bar
        # selecting a bar shows its node in the detail pane, with its tool call
        await pilot.press("down", "down", "down")
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "read_page" in detail.text, "the node's detail")
        assert "node tool:read_page#1  ·  from +2.700s to +4.900s" in detail.text
        assert "tool read_page  ·  error  ·  2.2s" in detail.text
        assert "timed out" in detail.text  # the call's result, from the event
        # Enter: the event stream, at the node's tool call
        await pilot.press("enter")
        events = app.screen.query_one(EventList)
        await settle(pilot, lambda: events.display and events.has_focus, "the event stream")
        chosen = rows[3].detail_position
        assert chosen is not None
        await settle(pilot, lambda: events.entry_of(events.cursor).start <= chosen, "the event")
        assert events.entry_of(events.cursor).end > chosen
        # T again: the timeline as it was left
        await pilot.press("T")
        assert view.display
        assert view.cursor == 3
        await pilot.press("escape")  # closes the timeline, not the run
        assert isinstance(app.screen, RunScreen)
        assert events.display


async def test_zoom_and_pan(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = app_on(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_timeline(pilot, PARENT)
        view = pane.view
        whole = view.shown()
        assert whole == pane.timeline.span()
        assert whole[1] - whole[0] == pytest.approx(15)
        await pilot.press("down")  # web_search#1, 2.5 s in
        await pilot.press("plus")
        low, high = view.shown()
        assert high - low == pytest.approx(7.5)
        assert low <= rows_start(pane, 1) <= high  # zoomed around the selected node
        assert "zoomed" in row_text(view, 0)
        await pilot.press("right")
        moved = view.shown()
        assert moved[0] == pytest.approx(low + 7.5 / 4)
        for _ in range(10):
            await pilot.press("right")
        assert view.shown()[1] == pytest.approx(whole[1])  # not past the end
        await pilot.press("minus")
        assert view.window is None
        await pilot.press("plus", "plus", "0")
        assert view.window is None


def rows_start(pane: TimelinePane, row: int) -> float:
    return pane.timeline.rows()[row].start


async def test_live_run_grows_at_the_right(tmp_path: Path) -> None:
    run = LedgerWriter(PARENT)
    run.add(0, "run_started", skill="research")
    run.model(0.2, 2.0, 1, 100, 10)
    run.tool_start(2.5, "web_search", 1, {"q": "x"})
    path = run.write(tmp_path)
    clock = (BASE.timestamp()) + 4.0
    app = app_on(tmp_path, clock=clock, judged_at_clock=True)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_timeline(pilot, PARENT, runs=1)
        view = pane.view
        assert view.live
        tool = pane.timeline.rows()[1]
        assert (tool.name, tool.end, tool.outcome) == ("web_search", None, Outcome.RUNNING)
        assert view.full_axis() == (BASE.timestamp(), clock)  # to now: it is still running
        assert row_text(view, 2).rstrip().endswith("▸")  # open-ended at now
        assert "1.5s…" in row_text(view, 2)  # in flight for 1.5 s so far
        # the run goes on: a result and a second tool call, written as a writer would
        run.tool_end(3.0, "web_search", 1, "found")
        run.tool_start(3.2, "fetch", 1, {"u": 1})
        with path.open("ab") as ledger:
            ledger.write(b"".join(run.lines[-3:]))
        await settle(pilot, lambda: len(pane.timeline) == 3, "the new node")
        assert tool.end is not None
        assert tool.outcome is Outcome.OK
        await settle(pilot, lambda: "fetch" in row_text(view, 3), "the new row drawn")
        summary = pane.query_one("#timeline-summary")
        await settle(pilot, lambda: "3 nodes" in str(summary.render()), "the summary")
        assert row_text(view, 3).rstrip().endswith("▸")


async def test_damaged_ledger_opens_and_says_what_it_could_not_use(tmp_path: Path) -> None:
    run = LedgerWriter(PARENT)
    run.add(0, "run_started", skill="broken")
    run.lines.append(b"{this is not json\n")
    run.add(1, "tool_result", call_id="ghost", output="?", is_error=True)
    run.add(3, "node_exit", node_id="tool:orphan#1", duration_micros=1_000_000, success=True)
    run.add(2, "node_enter", node_id="tool:late#1", node_name="[red]late\x1b[2J")  # out of order
    run.add(2.5, "node_exit", node_id="tool:late#1", success=True)
    run.add(4, "run_completed", status="ok")
    run.write(tmp_path)
    old = time.time() - 3600
    os.utime(tmp_path / f"{PARENT}.jsonl", (old, old))
    app = app_on(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_timeline(pilot, PARENT, runs=1)
        view = pane.view
        summary = str(pane.query_one("#timeline-summary").render())
        assert "1 damaged line" in summary
        assert "2 nodes with a note" in summary
        names = [node.name for node in pane.timeline.rows()]
        assert names == ["ghost", "orphan", "[red]late\x1b[2J"]  # by start time
        drawn = row_text(view, 3)
        assert "[red]late␛[2J" in drawn  # inert: markup and escapes as text
        assert "\x1b" not in drawn
        await pilot.press("home")
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "note:" in detail.text, "the note")
        assert "note: tool_result with no tool_call: start unknown" in detail.text
        await pilot.press("down")
        await settle(pilot, lambda: "from its duration" in detail.text, "the second note")


async def test_an_empty_run_says_so(tmp_path: Path) -> None:
    LedgerWriter(PARENT).add(0, "run_started").add(1, "run_completed", status="ok").write(tmp_path)
    app = app_on(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_timeline(pilot, PARENT, runs=1)
        assert len(pane.timeline) == 0
        assert "0 nodes" in str(pane.query_one("#timeline-summary").render())
        await pilot.press("down", "enter", "plus", "left")  # nothing to move to: no crash
        assert pane.view.render_line(1).text.strip() == ""


# -- runtop show --timeline -----------------------------------------------------------


def test_show_timeline_prints_bars_100_wide_into_a_pipe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_runs(tmp_path)
    code = main(["show", PARENT, "--dir", str(tmp_path), "--timeline"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [PARENT, "research", "succeeded"]  # the word ls says
    assert lines[1].startswith("wall 15s · model 5.8s · tools 4.6s (8.3s summed)")
    assert max(len(text) for text in lines) <= 100
    rows = [text for text in lines if "█" in text]
    assert len(rows) == 9
    assert rows[5].startswith("  ⚙ fetch")
    assert "▶ summarizer" in rows[6]
    assert str(tmp_path) not in out


def test_show_timeline_json_gives_nodes_with_start_end_parent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_runs(tmp_path)
    code = main(["show", str(tmp_path / f"{PARENT}.jsonl"), "--timeline", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["run_id"] == PARENT
    assert document["summary"]["wall"] == 15.0
    nodes = {node["id"]: node for node in document["nodes"]}
    fetch = nodes["tool:fetch#1"]
    assert (fetch["parent"], fetch["start"], fetch["end"]) == (
        "step:summarise#1",
        "2026-11-28T14:20:06.000000Z",
        "2026-11-28T14:20:07.500000Z",
    )
    child = nodes[f"run:{CHILD}"]
    assert (child["kind"], child["parent"], child["duration"]) == ("child_run", None, 3.5)


def test_show_timeline_json_is_inert_and_refuses_follow(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = LedgerWriter(PARENT)
    run.add(0, "run_started")
    run.add(1, "node_enter", node_id="tool:x#1", node_name="evil\x1b]0;owned\x07\u202e")
    run.write(tmp_path)
    code = main(["show", PARENT, "--dir", str(tmp_path), "--timeline", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert json.loads(out)["nodes"][0]["name"] == "evil\x1b]0;owned\x07\u202e"
    code = main(["show", PARENT, "--dir", str(tmp_path), "--timeline"])
    out = capsys.readouterr().out
    assert "evil␛]0;owned␇\\u202e" in out
    code = main(["show", PARENT, "--dir", str(tmp_path), "--timeline", "--follow"])
    assert code != 0
    assert "--timeline prints the run once" in capsys.readouterr().err


async def test_a_ledger_truncated_and_rewritten_is_read_again(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = app_on(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_timeline(pilot, PARENT)
        assert len(pane.timeline) == 9
        shorter = LedgerWriter(PARENT)
        shorter.add(0, "run_started", skill="research")
        shorter.tool_start(1, "only_tool", 1, {})
        path = tmp_path / f"{PARENT}.jsonl"
        path.write_bytes(b"".join(shorter.lines))  # a writer started it over
        await settle(
            pilot,
            lambda: [node.name for node in pane.timeline.rows()] == ["only_tool", "summarizer"],
            "the timeline read again",
        )
        assert pane.view.render_line(1).text.startswith("⚙ only_tool")


async def test_enter_on_a_child_run_opens_it(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = app_on(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_timeline(pilot, PARENT)
        child = next(node for node in pane.timeline.rows() if node.kind is NodeKind.CHILD_RUN)
        pane.view.select_node(child)
        await pilot.press("enter")
        await settle(
            pilot,
            lambda: isinstance(app.screen, RunScreen) and app.screen.key.run_id == CHILD,
            "the child run's screen",
        )
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen.query(TimelinePane), "the parent's timeline again")
        assert app.screen.query_one(TimelinePane).display


async def test_the_pane_is_built_hidden_and_reads_nothing_until_shown(tmp_path: Path) -> None:
    write_runs(tmp_path)
    app = app_on(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.screen.query_one("RunTable")
        await settle(pilot, lambda: len(table.rows) == 2, "the runs")  # type: ignore[attr-defined]
        table.select_key(next(r.key for r in table.rows if r.run_id == PARENT))  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen.query(TimelinePane), "the pane built")
        pane = app.screen.query_one(TimelinePane)
        await pilot.pause(0.2)
        assert not pane.display
        assert pane.timeline.items_read == 0  # nothing read for a timeline not asked for
        assert app.screen.query_one(EventList).display
        await pilot.press("T")
        await settle(pilot, lambda: not pane.loading, "the timeline read")
        assert len(pane.timeline) == 9
        assert len(app.screen.query(TimelinePane)) == 1


@pytest.mark.parametrize(
    ("start", "end", "cells"),
    [
        (-141.0, -135.0, (0, 1, True, False)),  # wholly before: cut at the left edge
        (70.0, 75.0, (39, 40, False, True)),  # wholly after (a clock ahead): the right edge
        (-5.0, -5.0, (0, 1, True, False)),  # a point before it too: cut, not a point
    ],
)
def test_a_node_off_the_whole_axis_is_drawn_at_its_edge(
    start: float, end: float, cells: tuple[int, int, bool, bool]
) -> None:
    drawn = bar_cells(start, end, (0.0, 67.0), 40, clamp=True)
    assert drawn is not None
    assert (drawn.begin, drawn.end, drawn.before, drawn.after) == cells
    assert bar_text(drawn, in_flight=False) == ("←" if drawn.before else "→")
    assert bar_cells(start, end, (0.0, 67.0), 40) is None  # zoomed in, it is off to one side
