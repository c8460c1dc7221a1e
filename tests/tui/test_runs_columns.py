"""The runs table's columns and clocks.

At 80x24 the columns give way by priority, empty ones first, never the sorted one, also
with the keys help open; a run whose source went down stops its clock when the source went
down, not at its last event; a replay's first frame does not say a run took 0s.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspector import ReplaySource, RunSource, RunUpdate, SourceUpdate
from ledger_reader import LedgerItem, RunStatus, RunSummary
from tests.tui.test_interaction import screen_lines
from tests.tui_support import GoesAway, loaded, sample_app, settle
from tui.app import make_app
from tui.settings import Settings

pytestmark = pytest.mark.timeout(60)


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _times(line: str) -> list[float]:
    """The durations a line shows (``9.4s``, ``12s``), not its relative times (``9s ago``)."""
    return [float(n) for n in re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)s(?! ago)\b", line)]


async def test_a_run_of_a_source_gone_down_stops_its_clock_when_the_source_went_down() -> None:
    """It showed 9.1s, then 0.3s (its last event) once the server went away."""
    source = GoesAway()
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)

        def row() -> str:
            return next((line for line in screen_lines(app) if "…708192a3b4c5" in line), "")

        await settle(pilot, lambda: "running" in row() and _times(row()), "the run ticking")
        assert _times(row())[0] >= 9.0, row()
        source.away.set()
        await settle(pilot, lambda: "unknown" in row(), "the run unknown")
        stopped = _times(row())
        assert stopped, row()
        assert 9.0 <= stopped[0] < 12, row()  # when it went down, not 0.3s
        await pilot.pause(1.2)  # another tick: the clock stays stopped
        assert _times(row()) == stopped, row()

        await pilot.press("enter")  # the run's header says the same
        await settle(pilot, lambda: type(app.screen).__name__ == "RunScreen", "the run")
        await settle(pilot, lambda: "3 events" in "\n".join(screen_lines(app)), "the header")
        counts = next(line for line in screen_lines(app) if "3 events" in line)
        assert _times(counts) == stopped, counts


async def test_a_replays_first_frame_does_not_say_its_run_took_0s(fixtures: Path) -> None:
    """Only the run's start played: how long it ran is not known yet (not 0s)."""
    ledger = next(fixtures.glob("run_20261128T143000012_*.jsonl"))
    replay = ReplaySource([ledger], step=True, name="replay")
    app = make_app(Settings(clock=1795876500.0, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: "paused" in "\n".join(screen_lines(app)), "the replay")
        await pilot.press("n")
        rows = await loaded(pilot, 1)
        await settle(pilot, lambda: rows.rows[0].event_count == 1, "the run's start")
        line = next(line for line in screen_lines(app) if "…9c2e7b3d8a60" in line)
        assert " 0s " not in line, line
        assert _times(line) == [], line
        await pilot.press("enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "RunScreen", "the run")
        await settle(pilot, lambda: "1 events" in "\n".join(screen_lines(app)), "the header")
        counts = next(line for line in screen_lines(app) if "1 events" in line)
        assert " 0s " not in counts, counts
        await pilot.press("escape", "n", "n")  # two more events: now it has a time
        await settle(pilot, lambda: rows.rows[0].event_count == 3, "two more steps")
        await settle(
            pilot,
            lambda: any(_times(x) for x in screen_lines(app) if "…9c2e7b3d8a60" in x),
            "a time",
        )


# -- columns --------------------------------------------------------------------------------


def _header(app: Any) -> str:
    """The column titles as the screen shows them (the second line)."""
    return screen_lines(app)[1]


def _table_side(line: str) -> str:
    """What of a line is the table's, with the keys help open beside it."""
    return line.split("▏")[0]


async def test_status_is_as_wide_as_its_words_and_the_source_is_cut_at_its_start(
    fixtures: Path,
) -> None:
    """STATUS took 19 cells for ``✔ succeeded``; ``127.0.0.1:8765`` read ``127.0.0.1…``."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("slash", *"status:succeeded", "enter")
        await settle(pilot, lambda: len(rows.rows) == 2, "the two succeeded runs")
        line = next(line for line in screen_lines(app) if "3d8a60" in line)
        assert "✔ succeeded …" in line, line
        assert "TIME" in _header(app), _header(app)  # the cells STATUS gave up

    source = GoesAway()
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        line = next(line for line in screen_lines(app) if "…708192a3b4c5" in line)
        assert line.rstrip().endswith("127.0.0.1:8765"), line  # room for the whole name
        await pilot.press("s", "s", "s", "s", "s", "s")  # sorted by source: it stays
        await settle(pilot, lambda: "SOURCE ▲" in _header(app), "sorted by source")
        await pilot.resize_terminal(80, 24)
        await settle(pilot, lambda: "SOURCE ▲" in _header(app), "the source kept at 80")
        line = next(line for line in screen_lines(app) if "…708192a3b4c5" in line)
        assert "127.0.0.1:8765" in line or "…0.1:8765" in line, line  # the port is there


class Quiet(RunSource):
    """Runs from two sources' worth of names that recorded no tokens and no damage."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        started = time.time() - 120
        runs = [
            RunUpdate(
                f"run_20261202T0100000{n:02d}_{n:016x}",
                RunSummary(
                    run_id=f"run_20261202T0100000{n:02d}_{n:016x}",
                    status=RunStatus.SUCCEEDED,
                    skill="triage",
                    started_at=_iso(started + n),
                    completed_at=_iso(started + n + 3),
                    last_event_at=_iso(started + n + 3),
                    event_count=6,
                ),
            )
            for n in range(3)
        ]
        yield SourceUpdate(runs=runs, initial=True)
        await asyncio.Event().wait()

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        return []

    async def close(self) -> None:
        pass


async def test_columns_empty_for_every_run_give_way_before_columns_with_something() -> None:
    """TOKENS / COST and DAMAGED, empty for every run, stayed while STARTED, TIME or
    SOURCE went."""
    app = make_app(Settings(flush_interval=0.01), [Quiet("nightly")])
    async with app.run_test(size=(100, 24)) as pilot:
        await loaded(pilot, 3)
        titles = _header(app)
        for shown in ("STARTED", "TIME", "EVENTS", "SOURCE", "DOING NOW"):
            assert shown in titles, titles
        for gone in ("TOKENS", "DAMAGED"):
            assert gone not in titles, titles
        line = next(line for line in screen_lines(app) if "…000000000002" in line)
        assert line.rstrip().endswith("nightly"), line


async def test_with_the_keys_help_open_the_table_keeps_the_sorted_column(fixtures: Path) -> None:
    """With ``?`` open at 80x24 the titles were laid out for the screen, and the columns
    for more than the table's width: the sorted column was under the help, or beyond."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("question_mark")
        await settle(pilot, lambda: "▏" in _header(app), "the keys help")
        await settle(pilot, lambda: "STARTED ▼" in _table_side(_header(app)), "STARTED")
        await pilot.press(*"sssss")  # status, agent, time, events, tokens
        await settle(pilot, lambda: rows.sort_key == "tokens", "sorted by tokens")
        await settle(pilot, lambda: "TOKENS / COST ▼" in _table_side(_header(app)), "TOKENS")
        titles = _table_side(_header(app))
        spent = next(line for line in screen_lines(app) if "2.9k" in line)
        assert "2.9k $0.0102" in _table_side(spent), spent
        # The figures end where their title does (the titles laid out as the lines are).
        assert titles.index("▼") == _table_side(spent).index("2.9k $0.0102") + 11, (
            titles,
            spent,
        )
        await pilot.press("question_mark")  # closed: the table takes the screen again
        await settle(pilot, lambda: "▏" not in _header(app), "the help closed")
        await settle(pilot, lambda: "TOKENS / COST ▼" in _header(app), "the whole title")
