"""Hostile strings on every screen: a ledger's names, arguments, outputs and questions hold
markup and escape sequences, and every screen shows them as the text they are.

A fresh-eyes walk found the tool calls' drill-down crashing on a skill named with a
closing tag (Textual's DataTable reads a plain ``str`` cell as markup) and the tool
calls table swallowing a ``[b]`` in a tool's name. Each screen is walked here, and what
the terminal would show is read off the compositor.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from tests.tui.test_interaction import screen_lines
from tests.tui_support import events_read, loaded, sample_app, settle
from tui.screens.approval import ApprovalScreen
from tui.screens.compare import CompareScreen
from tui.screens.run import RunScreen
from tui.screens.tool_calls import ToolCallsScreen
from tui.screens.tools import ToolsScreen
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)

MARKUP = "[b]x[/b][/]"
"""Markup that is not balanced: read as markup, it raises (a crash) or vanishes."""
ESCAPES = "\x1b[31m\x1b]0;pwned\x07\u202e"
SKILL = f"evil{ESCAPES}{MARKUP}"
TOOL = f"sh[b]ell{ESCAPES}"
ARGUMENT = f"rm {MARKUP}{ESCAPES}"
OUTPUT = f"done {MARKUP}{ESCAPES}"
QUESTION = f"Apply {MARKUP}{ESCAPES}?"
RUNS = ("run_20261202T000000001_e1e1e1e1e1e1e1e1", "run_20261202T000000002_e2e2e2e2e2e2e2e2")


def write_hostile_runs(directory: Path) -> None:
    """Two runs, each started a minute ago, with one tool call and an open approval."""
    began = time.time() - 60
    for run_id in RUNS:

        def line(seq: int, kind: str, payload: dict[str, Any], run_id: str = run_id) -> str:
            at = datetime.fromtimestamp(began + seq, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            record = {"run_id": run_id, "seq": seq, "time": at, "type": kind}
            return json.dumps({**record, "payload": payload}) + "\n"

        node = f"tool:{TOOL}#1"
        call = {"call_id": "c1", "node_id": node, "name": TOOL, "arguments": {"cmd": ARGUMENT}}
        (directory / f"{run_id}.jsonl").write_text(
            line(1, "run_started", {"skill": SKILL, "agent": SKILL, "input": {"q": ARGUMENT}})
            + line(2, "node_enter", {"node_id": node, "node_name": TOOL})
            + line(3, "tool_call", call)
            + line(4, "tool_result", {"call_id": "c1", "node_id": node, "output": OUTPUT})
            + line(5, "node_exit", {"node_id": node, "duration_micros": 200_000, "success": True})
            + line(6, "error", {"message": OUTPUT})
            + line(
                7,
                "approval_request",
                {"approval_id": "a1", "prompt": QUESTION, "timeout_seconds": 86400},
            )
        )


def shown(app: Any) -> str:
    """The terminal's text: nothing in it may be an escape, a BEL or a bidi override."""
    text = "\n".join(screen_lines(app))
    for byte in ("\x1b", "\x07", "\u202e"):
        assert byte not in text, f"{byte!r} reached the terminal on {type(app.screen).__name__}"
    return text


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
async def test_every_screen_shows_hostile_strings_as_text(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    write_hostile_runs(tmp_path)
    app = sample_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 2)
        assert "evil␛[31m" in shown(app)

        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, ToolsScreen), "the tool calls")
        await settle(pilot, lambda: "sh[b]ell␛[31m" in shown(app), "the tool, named whole")

        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, ToolCallsScreen), "the tool's calls")
        arguments = "rm [b]x[/b][/]" if size[0] > 80 else '{"cmd":"rm …'  # cut, with a mark
        await settle(pilot, lambda: arguments in shown(app), "the call's arguments")
        assert "sh[b]ell␛[31m" in shown(app)  # in the title
        assert "evil␛[31m" in shown(app)  # SKILL / AGENT

        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run, at its call")
        await events_read(pilot, 4)
        await settle(pilot, lambda: "[b]x[/b][/]" in shown(app), "the detail")
        await pilot.press("T")
        await pilot.pause(0.3)
        shown(app)
        await pilot.press("escape", "escape", "escape", "escape")
        await settle(pilot, lambda: not isinstance(app.screen, RunScreen), "the runs")
        await pilot.press("escape")

        # a ledger directory takes no approvals (the key is greyed): the confirmation alone
        app.push_screen(ApprovalScreen(app.screen.query_one(RunTable).rows[0], approve=True))
        await settle(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval")
        await settle(pilot, lambda: "Apply [b]x[/b][/]␛[31m" in shown(app), "the question")
        await pilot.press("escape")

        await pilot.press("space", "down", "space", "C")
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
        await pilot.pause(0.5)
        shown(app)


async def test_the_tools_cursor_stays_on_its_tool_as_the_tools_reorder(tmp_path: Path) -> None:
    """Down then Enter, typed at once on a live tool calls screen, opened the tool that had
    moved into the row (the tools are sorted by their calls, and the cursor kept its row)."""
    run_id = RUNS[0]

    def calls(tool: str, first: int, count: int) -> str:
        lines = []
        for seq in range(first, first + 2 * count, 2):
            call = {"call_id": f"c{seq}", "name": tool, "arguments": {}}
            lines.append(
                json.dumps(
                    {"run_id": run_id, "seq": seq, "type": "tool_call", "payload": call}
                    | {"time": f"2026-12-02T00:00:{seq:02d}Z"}
                )
            )
            result = {"call_id": f"c{seq}", "output": "ok"}
            lines.append(
                json.dumps(
                    {"run_id": run_id, "seq": seq + 1, "type": "tool_result", "payload": result}
                    | {"time": f"2026-12-02T00:00:{seq + 1:02d}Z"}
                )
            )
        return "".join(line + "\n" for line in lines)

    ledger = tmp_path / f"{run_id}.jsonl"
    started = {"run_id": run_id, "seq": 1, "time": "2026-12-02T00:00:01Z", "type": "run_started"}
    ledger.write_text(
        json.dumps(started | {"payload": {"skill": "s"}}) + "\n" + calls("alpha", 2, 2)
    )
    app = sample_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, ToolsScreen), "the tool calls")
        with ledger.open("a") as out:
            out.write(calls("beta", 6, 1))
        table = app.screen.query_one(DataTable)
        await settle(pilot, lambda: table.row_count == 2, "both tools")
        await pilot.press("down")  # beta, the second of two
        with ledger.open("a") as out:
            out.write(calls("beta", 8, 2))  # beta's three calls now sort it first
        await settle(pilot, lambda: str(table.get_row_at(0)[0]) == "beta", "beta moved to the top")
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, ToolCallsScreen), "the calls")
        opened = app.screen
        assert isinstance(opened, ToolCallsScreen)
        assert opened.tool == "beta"
