"""Save the README's screenshots: scripted scenarios, saved as SVG by the app itself.

    make screenshots        (or: .venv/bin/python -m tui.screenshots screenshots/ [NAME...])

Each scenario runs the demo's simulated agents in an embedded manager,
headless at 160x48, and saves what the screen shows at a chosen moment.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from textual.pilot import Pilot
from textual.widgets import Input

from inspector import ManagerSource
from inspector.events import LlmCall, ToolCall
from run_manager import Manager
from tui.app import RuntopApp, make_app
from tui.demo import start_demo
from tui.screens.cancel import CancelScreen
from tui.settings import Settings
from tui.widgets.event_list import EventList
from tui.widgets.run_table import RunTable

SIZE = (160, 48)


async def _until(pilot: Pilot[Any], check: Callable[[], object], limit: float = 20.0) -> None:
    for _ in range(int(limit / 0.05)):
        if check():
            return
        await pilot.pause(0.05)
    raise RuntimeError("the scenario never reached the state it waits for")


def _rows(app: RuntopApp) -> RunTable:
    return app.screen.query_one(RunTable)


async def runs_live(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(pilot, lambda: len(_rows(app).rows) >= 5)
    await pilot.pause(2.0)


async def run_with_tool_call(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(
        pilot,
        lambda: any(
            r.agent == "researcher" and r.status.value == "succeeded" for r in _rows(app).rows
        ),
    )
    table = _rows(app)
    done = next(r for r in table.rows if r.agent == "researcher" and r.status.value == "succeeded")
    table.select_key(done.key)
    await pilot.press("enter")
    events = app.screen.query_one(EventList)
    await _until(pilot, lambda: events.count > 20 and events.item(events.count - 1) is not None)
    calls = [n for n in range(events.count) if isinstance(events.item(n), ToolCall)]
    events.follow = False
    events.cursor = calls[0] if calls else 0
    await pilot.pause(0.5)


async def run_model_call(pilot: Pilot[Any]) -> None:
    """The researcher's last model call selected: its conversation in the detail pane."""
    await run_with_tool_call(pilot)
    app = pilot.app
    events = app.screen.query_one(EventList)
    calls = [n for n in range(events.count) if isinstance(events.item(n), LlmCall)]
    events.cursor = calls[-1] if calls else 0
    await pilot.pause(1.0)


async def cancel_confirmation(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(pilot, lambda: any(r.agent == "summarizer" for r in _rows(app).rows))
    table = _rows(app)
    table.select_key(next(r.key for r in table.rows if r.agent == "summarizer"))
    await pilot.pause(1.0)
    await pilot.press("c")
    await _until(pilot, lambda: isinstance(app.screen, CancelScreen))
    await pilot.press(*"wrong input file")
    for box in app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause(0.3)


async def tool_calls(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(pilot, lambda: sum(r.status.value == "succeeded" for r in _rows(app).rows) >= 2)
    await pilot.press("t")
    await pilot.pause(0.5)


async def model_calls(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(pilot, lambda: sum(r.status.value == "succeeded" for r in _rows(app).rows) >= 3)
    await pilot.press("M")
    await pilot.pause(0.5)


def _asking(app: RuntopApp, agent: str) -> Any:
    return next(
        (r for r in _rows(app).rows if r.agent == agent and r.pending_approval is not None), None
    )


async def approval_confirmation(pilot: Pilot[Any]) -> None:
    """The migrator's question denied (the translator asks too, of its budget)."""
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(pilot, lambda: _asking(app, "migrator") is not None)
    _rows(app).select_key(_asking(app, "migrator").key)
    await pilot.pause(0.5)
    await pilot.press("d")
    await pilot.press(*"not during the freeze")
    for box in app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause(0.3)


async def budget_confirmation(pilot: Pilot[Any]) -> None:
    """The translator's run, asking on its budget ($0.80 of $1.00), approved with ``a``."""
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(pilot, lambda: _asking(app, "translator") is not None)
    _rows(app).select_key(_asking(app, "translator").key)
    await pilot.press("enter")
    await pilot.pause(1.0)
    await pilot.press("a")
    for box in app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause(0.3)


async def run_search(pilot: Pilot[Any]) -> None:
    await run_with_tool_call(pilot)
    await pilot.press("home", "slash", *"mouse", "enter")
    box = pilot.app.screen.query_one("#search", Input)
    await _until(pilot, lambda: "of" in str(box.border_title))
    box.cursor_blink = False
    await pilot.pause(0.3)


async def tool_drilldown(pilot: Pilot[Any]) -> None:
    from textual.widgets import DataTable

    await tool_calls(pilot)
    tools = pilot.app.screen.query_one(DataTable)
    names = [str(tools.get_row_at(index)[0]) for index in range(tools.row_count)]
    if "web_search" in names:
        tools.move_cursor(row=names.index("web_search"))
    await pilot.press("enter")
    await pilot.pause(0.5)


async def compare_resumed(pilot: Pilot[Any]) -> None:
    """The demo's failed deploy beside its resume: opened on the resume, compared with C."""
    from tui.screens.compare import CompareScreen
    from tui.widgets.comparison_table import ComparisonTable

    app = pilot.app
    assert isinstance(app, RuntopApp)

    def resumed() -> Any:
        return next(
            (r for r in _rows(app).rows if r.resumed_from and not r.live),
            None,
        )

    await _until(pilot, lambda: resumed() is not None)
    table = _rows(app)
    table.select_key(resumed().key)
    await pilot.press("enter")
    await pilot.pause(0.5)
    await pilot.press("C")
    await _until(pilot, lambda: isinstance(app.screen, CompareScreen))
    comparison = app.screen.query_one(ComparisonTable)
    await _until(pilot, lambda: comparison.comparison is not None and not comparison.reading)
    app.clear_notifications()
    await pilot.pause(0.5)


async def run_timeline(pilot: Pilot[Any]) -> None:
    """The planner's run, finished: a model call, then its two child runs side by side."""
    from tui.widgets.timeline_pane import TimelinePane

    app = pilot.app
    assert isinstance(app, RuntopApp)
    await _until(
        pilot,
        lambda: any(
            r.agent == "planner" and r.status.value == "succeeded" for r in _rows(app).rows
        ),
        limit=60.0,
    )
    table = _rows(app)
    table.select_key(next(r.key for r in table.rows if r.agent == "planner"))
    await pilot.press("enter")
    await pilot.pause(0.5)
    await pilot.press("T")
    pane = app.screen.query_one(TimelinePane)
    await _until(pilot, lambda: not pane.loading and pane.summary is not None)
    await pilot.press("down", "down")
    await pilot.pause(0.5)


SESSIONS: Final = Path(__file__).resolve().parent.parent / "tests" / "sessions_home"
"""Real coding agents' sessions (their README says whose), laid out as a home."""


async def coding_agents(pilot: Pilot[Any]) -> None:
    """The demo's runs beside coding agents' sessions, as plain ``runtop`` shows a home
    holding both; the sessions dated long ago (idle), so the picture holds still."""
    from inspector.session_source import SessionSource

    app = pilot.app
    assert isinstance(app, RuntopApp)
    home = Path(tempfile.gettempdir()) / "runtop-sessions"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(SESSIONS, home)
    for path in home.rglob("*.json*"):
        os.utime(path, (1_770_000_000, 1_770_000_000))
    folders = [
        home / ".claude" / "projects",
        home / ".codex" / "sessions",
        home / ".gemini" / "tmp",
    ]
    app.store.add_source(SessionSource(folders, name="coding agents"))
    await _until(pilot, lambda: sum(r.key.source == "coding agents" for r in _rows(app).rows) >= 6)
    await _until(pilot, lambda: len(_rows(app).rows) >= 10)
    await pilot.pause(2.0)


SCENARIOS: dict[str, Callable[[Pilot[Any]], Awaitable[None]]] = {
    "runs": runs_live,
    "run-tool-call": run_with_tool_call,
    "run-model-call": run_model_call,
    "cancel-confirm": cancel_confirmation,
    "tool-calls": tool_calls,
    "model-calls": model_calls,
    "approval-confirm": approval_confirmation,
    "budget-confirm": budget_confirmation,
    "run-search": run_search,
    "tool-drilldown": tool_drilldown,
    "compare-resumed": compare_resumed,
    "run-timeline": run_timeline,
    "coding-agents": coding_agents,
}


LEDGERS: Final = Path(tempfile.gettempdir()) / "runtop-demo"
"""Where the scenarios' ledgers go: one fixed place, since the source line shows it (a new
temporary directory each time changed every screenshot on every regeneration)."""


async def save(
    name: str,
    scenario: Callable[[Pilot[Any]], Awaitable[None]],
    out: Path,
    *,
    ledgers: Path = LEDGERS,
) -> Path:
    shutil.rmtree(ledgers, ignore_errors=True)
    os.mkdir(ledgers, mode=0o700)
    try:
        manager = Manager(ledger_dir=ledgers)
        app = make_app(Settings(flush_interval=0.05), [ManagerSource(manager, name="demo")])
        async with app.run_test(size=SIZE) as pilot:
            demo = asyncio.create_task(start_demo(manager, pace=0.4))
            await scenario(pilot)
            path = Path(app.save_screenshot(filename=f"{name}.svg", path=str(out)))
            demo.cancel()
        await manager.close(grace=2.0)
        return path
    finally:
        shutil.rmtree(ledgers, ignore_errors=True)


async def main(out: Path, names: list[str]) -> None:
    for name, scenario in SCENARIOS.items():
        if names and name not in names:
            continue
        path = await save(name, scenario, out)
        print(path)


if __name__ == "__main__":
    # python -m tui.screenshots [DIR [NAME...]]: every scenario, or only those named.
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    target.mkdir(parents=True, exist_ok=True)
    unknown = set(sys.argv[2:]) - set(SCENARIOS)
    if unknown:
        sys.exit(
            f"no such screenshot: {', '.join(sorted(unknown))} (one of {', '.join(SCENARIOS)})"
        )
    asyncio.run(main(target, sys.argv[2:]))
