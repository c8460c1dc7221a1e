"""A coding agent's session watched live: a real Claude Code session (tests/sessions_home)
written record by record while the app is open shows each record as it lands, and the
tool use that waits for permission is ``awaiting_approval`` until its result is written."""

from __future__ import annotations

import time
from pathlib import Path

from inspector import RunKey
from inspector.session_source import SessionSource
from ledger_reader import RunStatus
from tests.tui_support import events_read, noticed, open_run, settle
from tui.app import RuntopApp, make_app
from tui.settings import Settings
from tui.widgets.event_list import EventList

HOME = Path(__file__).parent.parent / "sessions_home"
SESSION = (
    HOME
    / ".claude"
    / "projects"
    / "-Users-test_user-agent-sample"
    / "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
)
RUN_ID = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"


def status_of(app: RuntopApp) -> RunStatus | None:
    """The session's status as the app's store has it (whichever screen is up)."""
    run = app.store.get(RunKey("sessions", RUN_ID))
    return run.status if run is not None else None


async def test_a_session_written_record_by_record_shows_each_record(tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects"
    folder = projects / SESSION.parent.name
    folder.mkdir(parents=True)
    copy = folder / SESSION.name
    lines = SESSION.read_bytes().splitlines(keepends=True)
    bash = next(n for n, line in enumerate(lines) if b'"name":"Bash"' in line)
    result = next(n for n in range(bash, len(lines)) if b'"tool_result"' in lines[n])
    copy.write_bytes(b"".join(lines[:2]))  # a file backup and the first prompt
    app = make_app(Settings(), [SessionSource([projects], settle=60.0)])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: status_of(app) is RunStatus.RUNNING, "the session")
        screen = await open_run(pilot, RUN_ID)
        events = screen.query_one(EventList)
        waits: list[float] = []
        for line in lines[2 : bash + 1]:
            before = events.count
            written = time.monotonic()
            with copy.open("ab") as file:
                file.write(line)
            if b'"type":"assistant"' in line or b'"type":"user"' in line:
                await settle(pilot, lambda b=before: events.count > b, "the record's events")  # type: ignore[misc]
                waits.append(time.monotonic() - written)
        await settle(
            pilot, lambda: status_of(app) is RunStatus.AWAITING_APPROVAL, "the permission wait"
        )
        with copy.open("ab") as file:
            file.write(b"".join(lines[bash + 1 : result + 1]))
        await settle(pilot, lambda: status_of(app) is RunStatus.RUNNING, "the result")
        assert waits
        assert max(waits) < 1.0, waits
        await events_read(pilot, events.count - 1)


async def test_the_keys_say_why_they_cannot_act_on_a_session(tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects"
    folder = projects / SESSION.parent.name
    folder.mkdir(parents=True)
    (folder / SESSION.name).write_bytes(SESSION.read_bytes())
    app = make_app(Settings(), [SessionSource([projects])])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await open_run(pilot, RUN_ID)
        await pilot.press("c")
        assert "stop it there" in await noticed(pilot, "claude-code session runs in its own")
        await pilot.press("r")
        assert f"claude --resume {RUN_ID}" in await noticed(pilot, "resume it in claude-code")
