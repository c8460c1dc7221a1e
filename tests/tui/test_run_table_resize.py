"""A terminal made smaller keeps the selected run, and the selected event, in view.

The 31st run selected at 160x48 stays in view at 80x24, with the preview below showing a
run a row on screen is; a run's event stream keeps its selected entry, and the detail
beside it, the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource
from tests.conftest import line
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, open_run, settle
from tui.app import make_app
from tui.settings import Settings

pytestmark = pytest.mark.timeout(60)


def many_runs(directory: Path, count: int) -> None:
    directory.mkdir()
    for number in range(count):
        run_id = f"run_20261129T0645{number:05d}_{number:016x}"
        (directory / f"{run_id}.jsonl").write_bytes(
            line(1, "run_started", {"skill": f"skill-{number}"}, run_id=run_id)
            + line(2, "run_completed", {"status": "ok"}, run_id=run_id)
        )


async def test_the_selected_run_stays_in_view_when_the_terminal_shrinks(tmp_path: Path) -> None:
    many_runs(tmp_path / "runs", 40)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 40)
        for _ in range(30):
            await pilot.press("down")
        selected = rows.selected
        assert selected is not None
        assert selected.skill == "skill-9"  # newest first
        await pilot.resize_terminal(80, 24)

        def in_view() -> bool:
            top, height = rows.scroll_offset.y, rows.scrollable_content_region.height
            return top <= rows.cursor < top + height

        await settle(pilot, in_view, "the selected run in view")
        assert rows.selected is selected
        assert "skill-9 " in "\n".join(screen_lines(app))


async def test_the_selected_event_stays_in_view_when_the_terminal_shrinks(
    tmp_path: Path,
) -> None:
    run_id = "run_20261129T064500001_0000000000000001"
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / f"{run_id}.jsonl").write_bytes(
        line(1, "run_started", {"skill": "fan-out"}, run_id=run_id)
        + b"".join(
            line(seq, "tool_call", {"call_id": f"c{seq}", "name": f"tool_{seq}"}, run_id=run_id)
            for seq in range(2, 80)
        )
    )
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, run_id)
        await pilot.press("home", *["down"] * 40)  # tool_41 selected, following paused
        await settle(pilot, lambda: "tool tool_41 " in "\n".join(screen_lines(app)), "tool_41")
        await pilot.resize_terminal(80, 24)

        def listed() -> bool:  # its row in the stream, not only the detail's heading
            return any("⚙ tool_41 " in text for text in screen_lines(app))

        await settle(pilot, listed, "the selected tool call's row in view")
