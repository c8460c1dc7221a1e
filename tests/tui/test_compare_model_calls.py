"""The comparison counts model calls as each run's timeline does, and a live run decides nothing.

A model node entered and exited is a model call whether or not it wrote an ``llm_call``
(a researcher's thinking reports no tokens): the table's ``model calls`` matches the
model rows each run's timeline draws under it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource
from tests.resumed_pair import FROZEN_AFTER, RESUMED_START, LedgerLines
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, settle
from tui.app import RuntopApp, make_app
from tui.screens.compare import CompareScreen
from tui.settings import Settings
from tui.widgets.comparison_table import ComparisonTable

pytestmark = pytest.mark.timeout(60)

THINKER = "run_20261128T150500000_cccc3333cccc3333"
ANSWERER = "run_20261128T151000000_dddd4444dddd4444"
SEARCHING = "run_20261128T151500000_eeee5555eeee5555"


def researcher(run_id: str, start: datetime, *, thinks: bool, ends: bool = True) -> LedgerLines:
    """The demo's researcher: it thinks in a model node that writes no ``llm_call`` (when
    ``thinks``), searches, reads a page, and answers in one that writes it."""
    run = LedgerLines(run_id, start)
    run.add(0, "run_started", skill="researcher", agent="researcher", input="inotify")
    if thinks:
        run.add(0, "node_enter", node_id="llm:default#1", node_name="default")
        run.add(0.1, "reasoning_chunk", index=0, delta="A search first.", node_id="llm:default#1")
        run.add(0.7, "node_exit", node_id="llm:default#1", duration_micros=700_000, success=True)
    run.tool(0.7, 0.6, "web_search", 1, "8 results")
    if not ends:  # still searching
        run.lines.pop()  # its web_search has no result yet
        run.lines.pop()
        return run
    run.tool(1.3, 0.5, "read_page", 1, "2772 words")
    run.add(1.8, "node_enter", node_id="llm:default#2", node_name="default")
    run.add(3.6, "llm_call", model="claude-sonnet", prompt_tokens=1800, output_tokens=36)
    run.add(3.6, "node_exit", node_id="llm:default#2", duration_micros=1_800_000, success=True)
    return run.add(3.6, "run_completed", status="ok", output="ENOSPC")


def write(directory: Path, run: LedgerLines, *, live: bool = False) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{run.run_id}.jsonl"
    path.write_bytes(run.data())
    if not live:  # ended long ago; a live run's ledger was written just now
        old = RESUMED_START.timestamp() + 3600
        os.utime(path, (old, old))


def table_lines(app: RuntopApp) -> list[str]:
    table = app.screen.query_one(ComparisonTable)
    return [str(line) for line in table.lines(table.size.width)]


def row(app: RuntopApp, label: str) -> list[str]:
    """The comparison row ``label`` (``model calls``, ``  web_search``) as its cells."""
    line = next(line for line in table_lines(app) if line.startswith(label))
    return [cell.strip() for cell in line[len(label) :].split("  ") if cell.strip()]


async def compare_both(pilot: Any, count: int) -> CompareScreen:
    app = pilot.app
    await loaded(pilot, count)
    await pilot.press("space", "down", "space", "C")
    await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
    table = app.screen.query_one(ComparisonTable)
    await settle(pilot, lambda: table.comparison and not table.reading, "both runs read")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    return screen


async def test_a_model_node_without_tokens_is_a_model_call_as_its_timeline_draws_it(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "runs"
    write(directory, researcher(THINKER, RESUMED_START, thinks=True))
    later = RESUMED_START.replace(minute=10)
    write(directory, researcher(ANSWERER, later, thinks=False))
    app = make_app(
        Settings(clock=FROZEN_AFTER, flush_interval=0.01),
        [LedgerDirectorySource(directory, name="runs")],
    )
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await compare_both(pilot, 2)
        assert (screen.left.run_id, screen.right.run_id) == (THINKER, ANSWERER)
        # A thought and answered: two model calls, as its timeline's two model rows say.
        assert row(app, "model calls") == ["2", "1", "≠ 1 fewer"]
        assert row(app, "prompt tokens") == ["1.8k", "1.8k", "= same"]
        panes = screen.panes()
        await settle(
            pilot,
            lambda: (
                len(panes[screen.left].timeline) == 4 and len(panes[screen.right].timeline) == 3
            ),
            "both timelines",
        )
        shown = "\n".join(screen_lines(app))
        assert shown.count("◆ default") == 1  # A's thinking: no model named
        assert shown.count("◆ claude-sonnet") == 2  # each run's answer
        assert row(app, "tools") == ["same tools"]


async def test_a_live_run_against_a_finished_one_decides_no_tool_yet(tmp_path: Path) -> None:
    """The walk read ``tools … not the same tools`` beside ``? not decided yet`` on every
    other row, and ``web_search 1× 0.6s | 1× running | ? not decided yet, +0 calls``."""
    directory = tmp_path / "runs"
    write(directory, researcher(THINKER, RESUMED_START, thinks=True))
    searching = datetime.now(UTC).replace(tzinfo=UTC)
    write(directory, researcher(SEARCHING, searching, thinks=True, ends=False), live=True)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory, name="runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await compare_both(pilot, 2)
        assert (screen.left.run_id, screen.right.run_id) == (THINKER, SEARCHING)
        assert row(app, "outcome")[-1] == "? B has not ended"
        # B thought (its node exited) and is searching: one model call so far, not 0.
        assert row(app, "model calls") == ["2", "1 so far", "? not decided yet"]
        # B may yet read a page: whether the tools are the same is not decided.
        assert row(app, "tools") == ["? not decided yet"]
        assert row(app, "  web_search") == ["1× 0.6s", "1× running", "? not decided yet"]
        assert row(app, "  read_page") == ["1× 0.5s", "—", "? only in A so far"]
        assert "+0 call" not in "\n".join(screen_lines(app))
