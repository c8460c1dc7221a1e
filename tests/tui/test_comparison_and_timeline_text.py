"""The comparison, the timelines and the tools say their figures one way.

Each test asserts on what the screen shows: a model call under way is counted as under
way, not ``0 so far``; the label column gives tool names the room the width has; every
timeline's axis writes its times alike.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource
from tests.tui.test_interaction import screen_lines
from tests.tui_support import FROZEN, loaded, open_run, sample_app, settle
from tui.screens.compare import CompareScreen
from tui.screens.run import RunScreen
from tui.widgets.comparison_table import ComparisonTable
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)

TORN = "run_20261128T143000058_5e6f708192a3b4c5"
"""A sample run gone stale inside a model call (entered, never exited, no ``llm_call``)."""
DEPLOY = "run_20261128T143000031_9c8b7a6f5e4d3c2b"
"""A sample run that failed after 30 s."""
RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""A sample run that succeeded: two model calls, two tool calls."""
THINKING = "run_20261128T143400001_b2b2b2b2b2b2b2b2"
"""The run :func:`write_thinking_run` writes: live, its model call under way."""


def ledger_line(run_id: str, seq: int, kind: str, payload: dict[str, Any], at: float) -> str:
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    record = {"run_id": run_id, "seq": seq, "time": when, "type": kind, "payload": payload}
    return json.dumps(record) + "\n"


def write_thinking_run(directory: Path, *tools: str) -> None:
    """A run that called ``tools`` and is now (at the app's clock) waiting on a model."""
    at = FROZEN - 20
    lines = [ledger_line(THINKING, 1, "run_started", {"skill": "research"}, at)]
    for n, name in enumerate(tools):
        call = {"call_id": f"c{n}", "name": name, "arguments": {}}
        lines.append(ledger_line(THINKING, len(lines) + 1, "tool_call", call, at + n + 0.1))
        done = {"call_id": f"c{n}", "output": "ok"}
        lines.append(ledger_line(THINKING, len(lines) + 1, "tool_result", done, at + n + 0.6))
    model = {"node_id": "llm:default#1", "node_name": "default"}
    lines.append(ledger_line(THINKING, len(lines) + 1, "node_enter", model, at + 10))
    (directory / f"{THINKING}.jsonl").write_text("".join(lines))


def comparison_text(app: Any) -> str:
    table = app.screen.query_one(ComparisonTable)
    return "\n".join(line.plain for line in table.lines(table.size.width))


def row(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(label))


async def compare(pilot: Any, first: str, second: str, *words: str) -> str:
    """Mark ``first`` and ``second`` on the runs table, compare them, and wait for ``words``."""
    app = pilot.app
    rows = app.screen.query_one(RunTable)
    for run_id in (first, second):
        rows.select_key(next(run.key for run in rows.rows if run.run_id == run_id))
        await pilot.press("space")
    await pilot.press("C")
    await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
    await settle(pilot, lambda: all(w in comparison_text(app) for w in words), repr(words))
    return comparison_text(app)


# -- 1: a model call under way is one call, not 0 ----------------------------------------------


async def test_a_model_call_under_way_is_counted_running_not_zero(
    fixtures: Path, tmp_path: Path
) -> None:
    live = tmp_path / "live"
    live.mkdir()
    write_thinking_run(live)  # its last event 10 s before the app's now: live at that now
    app = sample_app(fixtures, LedgerDirectorySource(live, name="live", clock=FROZEN))
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 7)
        text = await compare(pilot, RESEARCH, THINKING, "model calls")
        calls = row(text, "model calls")
        assert "1 running" in calls
        assert "0 so far" not in calls
        tokens = row(text, "prompt tokens")
        assert "call running" in tokens  # not known yet, not "not recorded"


async def test_a_stale_runs_open_model_call_is_unfinished_not_zero(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        text = await compare(pilot, RESEARCH, TORN, "? stale")
        calls = row(text, "model calls")
        assert calls.split()[2:5] == ["2", "1", "unfinished"]  # A's 2, B's 1 never ended
        assert "running" not in calls  # its writer is gone: nothing runs


# -- 2: the label column as wide as the tool names, where there is room -------------------------


async def test_tool_names_are_whole_where_there_is_room(fixtures: Path) -> None:
    app = sample_app(fixtures)
    write_thinking_run(fixtures, "plan_migration_for_production")
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 7)
        text = await compare(pilot, RESEARCH, THINKING, "plan_migration")
        assert "  plan_migration_for_production " in text
        assert "  web_search " in text
        # The columns after it stay lined up with the title's A and B.
        title = text.splitlines()[0]
        tool = row(text, "  plan_migration_for_production")
        assert tool[title.index("A") :].startswith("—")
        assert tool[title.index("B") :].startswith("1×")
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 7)
        text = await compare(pilot, RESEARCH, THINKING, "plan_migr")
        # At 80 columns A's and B's values keep their room: the long name is cut.
        assert "  plan_migr" in text
        assert "plan_migration_for_production" not in text
        assert "✔ succeeded" in row(text, "outcome")


# -- 3: one way of writing an axis's ticks ----------------------------------------------------


async def test_every_timeline_axis_writes_its_ticks_one_way(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        rulers = []
        for run_id in (TORN, DEPLOY):  # a run of 0.3 s, and one of 30 s
            await open_run(pilot, run_id)
            await pilot.press("T")
            await settle(pilot, lambda: any("┊" in line for line in screen_lines(app)), "axis")
            rulers.append(next(line for line in screen_lines(app) if "┊" in line))
            await pilot.press("escape", "escape")
            await settle(pilot, lambda: not isinstance(app.screen, RunScreen), "the runs")
        for ruler in rulers:
            ticks = re.findall(r"┊(\S+)", ruler.split("│")[0])
            assert len(ticks) >= 3, ruler
            assert ticks[0] == "0s"  # on every axis: never 0.0s on one and 0s on the next
            # The fewest digits: 0.1s, never 0.10s; 1s, never 1.0s.
            assert not [tick for tick in ticks if re.fullmatch(r"\d+\.\d*0s", tick)], ruler
        assert re.search(r"┊0\.0?[1-9]s", rulers[0])  # a short run's ticks: fractions
        assert "┊10s" in rulers[1]


# -- 4: a stale run's open node is not running, and its wall time is its duration ---------------


async def test_a_stale_runs_open_model_call_is_unfinished_where_its_run_stopped(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await open_run(pilot, TORN)
        await pilot.press("T")
        await settle(pilot, lambda: "wall" in screen_lines(app)[3], "the timeline's summary")
        lines = screen_lines(app)
        assert "? stale" in lines[0]
        assert " 0.3s " in lines[1]  # the run's duration, to its last event (streamed text)
        summary = lines[3].split("│")[0]
        assert "wall 0.3s" in summary  # not 0.1s, the last event the timeline timed
        assert "running" not in summary
        model = next(line for line in lines if "◆ default" in line).split("│")[0]
        assert "▸" not in model  # an open end says running: its writer is gone
        assert "no end" not in model
        assert "0.2s" in model  # from its start to where the run stopped
        await settle(pilot, lambda: "unfinished" in screen_lines(app)[3], "the node's detail")
        await pilot.press("escape", "escape")
        await settle(pilot, lambda: not isinstance(app.screen, RunScreen), "the runs")
        await compare(pilot, RESEARCH, TORN, "model calls")
        await settle(pilot, lambda: "B  wall" in "\n".join(screen_lines(app)), "B's timeline")
        lines = screen_lines(app)
        at = next(n for n, line in enumerate(lines) if line.startswith(" B  wall"))
        assert "wall 0.3s" in lines[at]
        bar = next(line for line in lines[at:] if "◆ default" in line)
        assert "█" in bar
        assert "▸" not in bar  # drawn to where it stopped, not to the end of A's axis


# -- 6: the header's source cut where it says least ---------------------------------------------


async def source_line(fixtures: Path, named: Path, size: tuple[int, int]) -> str:
    """The run screen's source line for the run in ``named``, named as ``runtop FILE`` names
    it (by its file name), at ``size``."""
    source = LedgerDirectorySource(named.parent, name=named.name, only=[str(named)])
    app = sample_app(fixtures, source)
    async with app.run_test(size=size) as pilot:
        rows = await loaded(pilot, 7)
        rows.select_key(next(run.key for run in rows.rows if run.source == named.name))
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
        await settle(pilot, lambda: "(live)" in screen_lines(app)[2], "the source line")
        return screen_lines(app)[2]


async def test_the_headers_source_keeps_its_file_name(fixtures: Path, tmp_path: Path) -> None:
    deep = tmp_path / "a" / "rather" / "long" / "directory" / "of" / "ledgers"
    deep.mkdir(parents=True)
    named = deep / f"{DEPLOY}.jsonl"  # 46 cells: it was cut at 40, its extension lost
    named.write_bytes((fixtures / f"{DEPLOY}.jsonl").read_bytes())
    line = await source_line(fixtures, named, (160, 48))
    assert f" {named.name} (live)  input " in line  # room to spare: whole
    line = await source_line(fixtures, named, (80, 24))
    assert ".jsonl (live)  input " in line  # cut in its middle: its end stays
    assert line.startswith(" run_2026")
    assert "…" in line.split(" (live)")[0]


# -- 5: no "following" beside a run whose writer is gone ----------------------------------------


async def test_a_stale_runs_header_does_not_say_following(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await open_run(pilot, TORN)
        await settle(pilot, lambda: "3 events" in screen_lines(app)[1], "the header")
        lines = screen_lines(app)
        assert "? stale" in lines[0]
        assert lines[1].startswith(" 3 events  0.3s")  # no event of it is on its way
        assert "following" not in "\n".join(lines[:3])
