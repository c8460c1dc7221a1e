"""The first frame: it names what is watched, and says it is opening, not that there are
no runs, until the runs are known; the launch imports only what that frame needs (the
other screens come when first asked for, on the main thread)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from textual.widgets import Static

from inspector import RunSource, RunStore, RunUpdate, SourceUpdate
from ledger_reader import LedgerItem, RunStatus, RunSummary
from tests.tui_support import settle
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)


class HeldSource(RunSource):
    """Three runs, held back until the test lets them go; counts how often it was read."""

    def __init__(self) -> None:
        super().__init__("held")
        self.release = asyncio.Event()
        self.reads = 0

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        self.reads += 1
        await self.release.wait()
        runs = [
            RunUpdate(f"run_{n}", RunSummary(run_id=f"run_{n}", status=RunStatus.SUCCEEDED))
            for n in range(3)
        ]
        yield SourceUpdate(runs=runs, initial=True)

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        return []

    async def close(self) -> None:
        pass


class SilentSource(HeldSource):
    """Ends without a word."""

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        self.reads += 1
        return
        yield  # an async generator that yields nothing


async def test_the_first_frame_names_the_source_before_its_runs_are_known() -> None:
    source = HeldSource()
    app = make_app(Settings(flush_interval=0.01), [source])
    frames: list[tuple[str, str]] = []

    def recorded(screen: Any, renderable: Any) -> None:
        if renderable is not None and app.screen.query(SourceLine):
            line = str(app.screen.query_one(SourceLine).render())
            empty = str(app.screen.query_one("#empty", Static).render())
            frames.append((line, empty))

    app.frame_watchers.append(recorded)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, lambda: frames, "a frame")
        line, empty = frames[0]  # the source holds its runs back: none is known yet
        assert "held (opening)" in line
        assert empty.startswith("Opening")
        assert "held" in empty
        assert "No runs yet" not in empty  # not known to be none: not said
        source.release.set()
        table = app.screen.query_one(RunTable)
        await settle(pilot, lambda: len(table.rows) == 3, "the runs")
        await settle(
            pilot,
            lambda: "opening" not in str(app.screen.query_one(SourceLine).render()),
            "the source line without opening",
        )
        assert "3 runs" in str(app.screen.query_one(SourceLine).render())


async def test_a_source_is_opening_until_it_speaks_or_ends() -> None:
    held, silent = HeldSource(), SilentSource()
    silent.name = "silent"
    async with RunStore(flush_interval=0.005) as store:
        changes = store.changes()
        store.add_source(held)
        store.add_source(silent)
        assert [state.opening for state in store.snapshot().sources] == [True, True]
        async with asyncio.timeout(10):
            while store.snapshot().sources[1].opening:  # it ended without a word
                await anext(changes)
            assert held.reads == 1
            assert store.snapshot().sources[0].opening  # read, but held: still opening
            held.release.set()
            while store.snapshot().sources[0].opening or len(store.snapshot().runs) < 3:
                await anext(changes)
        await changes.aclose()  # type: ignore[attr-defined]
        assert (held.reads, silent.reads) == (1, 1)


LAUNCH_PROBE = """
import json, sys
import tui.cli, tui.app, tui.commands.watch
print(json.dumps(sorted(sys.modules)))
"""


def test_the_launch_imports_only_what_the_first_frame_needs() -> None:
    """The run screen with its widgets (~25 ms), the tool-call and cancel screens
    (DataTable, Input: ~8 ms) and Rich's Syntax with Pygments (~12 ms) are imported when
    first used, on the main thread, not at launch."""
    found = subprocess.run(
        [sys.executable, "-c", LAUNCH_PROBE], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(found.stdout))
    assert {"tui.app", "tui.screens.runs", "textual.app"} <= loaded  # the probe loaded the app
    assert not loaded & {
        "tui.screens.run",
        "tui.widgets.event_list",
        "tui.widgets.detail",
        "tui.widgets.timeline_view",
        "inspector.timeline",
        "inspector.comparison",
        "tui.screens.tools",
        "tui.screens.tool_calls",
        "tui.screens.cancel",
        "tui.screens.approval",
        "rich.syntax",
        "pygments",
    }


RUN_SCREEN_PROBE = """
import asyncio, importlib.abc, json, sys, threading
frames = []
imported = []

class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "tui.screens.run":
            imported.append({"main_thread": threading.current_thread() is threading.main_thread(),
                             "frames_before": len(frames)})
        return None

sys.meta_path.insert(0, Spy())
from inspector import RunSource, RunUpdate, SourceUpdate
from ledger_reader import RunStatus, RunSummary
from tui.app import make_app
from tui.settings import Settings

class Runs(RunSource):
    async def updates(self):
        summary = RunSummary(run_id="run_1", status=RunStatus.SUCCEEDED)
        yield SourceUpdate(runs=[RunUpdate("run_1", summary)], initial=True)
    async def events(self, run_id, start, stop):
        return []
    async def close(self):
        pass

async def main():
    app = make_app(Settings(flush_interval=0.01), [Runs("runs")])
    def recorded(screen, renderable):
        if renderable is not None:
            frames.append(1)
    app.frame_watchers.append(recorded)
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(1000):
            if imported:
                break
            await pilot.pause(0.01)
asyncio.run(main())
print(json.dumps(imported))
"""


def test_the_run_screen_is_imported_after_the_first_frame_on_the_main_thread() -> None:
    """Not at launch (the first frame waits for none of it), not on the first Enter (opening a
    run would wait for it), and never in a thread (a thread import raced the key bar's)."""
    found = subprocess.run(
        [sys.executable, "-c", RUN_SCREEN_PROBE], capture_output=True, text=True, check=True
    )
    imported = json.loads(found.stdout.splitlines()[-1])
    assert len(imported) == 1, imported  # imported, and once, with no key pressed
    assert imported[0]["main_thread"]
    assert imported[0]["frames_before"] >= 1
