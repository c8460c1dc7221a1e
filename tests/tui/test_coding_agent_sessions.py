"""A coding agent's session watched live: a real Claude Code session (tests/sessions_home)
written record by record while the app is open shows each record as it lands, and the
tool use that waits for permission is ``awaiting_approval`` until its result is written."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from inspector import RunKey
from inspector.session_source import SessionSource
from inspector.timeline import Outcome
from ledger_reader import RunStatus
from tests.session_times import retimed
from tests.tui.test_interaction import screen_lines
from tests.tui_support import events_read, noticed, open_run, settle
from tui.app import RuntopApp, make_app
from tui.settings import Settings
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.timeline_pane import TimelinePane

HOME = Path(__file__).parent.parent / "sessions_home"
SESSION = (
    HOME
    / ".claude"
    / "projects"
    / "-Users-test_user-agent-sample"
    / "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
)
RUN_ID = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"


def status_of(app: RuntopApp, run_id: str = RUN_ID) -> RunStatus | None:
    """The session's status as the app's store has it (whichever screen is up)."""
    run = app.store.get(RunKey("sessions", run_id))
    return run.status if run is not None else None


async def test_a_session_written_record_by_record_shows_each_record(tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects"
    folder = projects / SESSION.parent.name
    folder.mkdir(parents=True)
    copy = folder / SESSION.name
    lines = retimed(SESSION.read_bytes()).splitlines(keepends=True)  # as if written now
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


SPOTTER = HOME / ".claude" / "projects" / "-home-USER-projects-spotter-worktrees-spotter-4te"
SPOTTER_ID = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
"""A 2.1.39 session cut short on a ``Bash`` call whose result was never written."""


@pytest.mark.parametrize(
    ("quiet", "word"),
    [(3600.0, "unfinished"), (0.0, "running")],
    ids=["idle", "written-just-now"],
)
async def test_a_call_with_no_result_reads_one_word_in_every_view(
    tmp_path: Path, quiet: float, word: str
) -> None:
    """The session's last call, never answered: ``unfinished`` in every view once the
    session is idle (its status: nobody is writing it), ``running`` while it is written;
    the event stream said ``running`` of an idle session's call its timeline called
    ``unfinished``."""
    projects = tmp_path / ".claude" / "projects"
    shutil.copytree(SPOTTER, projects / SPOTTER.name)
    when = time.time() - quiet
    for path in projects.rglob("*.jsonl"):
        path.write_bytes(retimed(path.read_bytes(), ending=when))
        os.utime(path, (when, when))
    # Settled at once: its last response's records are not held back for more blocks.
    app = make_app(Settings(), [SessionSource([projects], settle=0.2)])
    async with app.run_test(size=(160, 48)) as pilot:
        live = RunStatus.IDLE if quiet else RunStatus.RUNNING
        await settle(pilot, lambda: status_of(app, SPOTTER_ID) is live, f"the session {live}")
        screen = await open_run(pilot, SPOTTER_ID)
        events = screen.query_one(EventList)
        await events_read(pilot, events.count - 1)
        await pilot.press("end")
        other = "running" if word == "unfinished" else "unfinished"
        bash = "grep -A 2 opentelemetry_bandit mix.lock"
        await settle(
            pilot,
            lambda: any(f"Bash … {word}" in line and bash in line for line in screen_lines(app)),
            f"the last call {word} in the event stream",
        )
        await pilot.press("end")
        await settle(
            pilot,
            lambda: f"tool Bash  ·  {word}" in screen.query_one(EventDetail).text,
            "the call's detail",
        )
        await pilot.press("T")
        pane = screen.query_one(TimelinePane)
        await settle(pilot, lambda: not pane.loading and pane.summary is not None, "timeline")
        await pilot.press("end")
        last = pane.timeline.rows()[-1]
        assert (last.name, last.outcome.value) == ("Bash", word)
        await settle(
            pilot,
            lambda: f"tool Bash  ·  {word}" in screen.query_one(EventDetail).text,
            "the node's detail",
        )
        assert not any(f"Bash … {other}" in line for line in screen_lines(app))
        running = {stats.name: stats.in_flight for stats in app.store.tool_stats()}
        assert running["Bash"] == (1 if word == "running" else 0)


async def test_a_sub_agent_begun_before_its_session_has_a_bar(tmp_path: Path) -> None:
    """Claude Code 2.0's start-up sub-agent began 141 s before its session's first record:
    on the session's timeline it had no bar at all; it is drawn at the left edge, cut."""
    projects = tmp_path / ".claude" / "projects"
    shutil.copytree(SESSION.parent, projects / SESSION.parent.name)
    app = make_app(Settings(), [SessionSource([projects])])
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_run(pilot, RUN_ID)
        await pilot.press("T")
        pane = screen.query_one(TimelinePane)
        await settle(pilot, lambda: not pane.loading and len(pane.timeline) > 1, "timeline")
        child = next(node for node in pane.timeline.rows() if node.run_id is not None)
        assert child.start < pane.view.full_axis()[0]
        await settle(
            pilot,
            lambda: any("▶ claude-code" in line and "←" in line for line in screen_lines(app)),
            "the sub-agent's bar",
        )


async def test_a_sessions_model_calls_say_their_tokens_and_its_sub_agent_how_it_went(
    tmp_path: Path,
) -> None:
    """On the session's timeline every model call says its tokens (only those of 10 s or
    more did), and its sub-agent, idle once it answered, is not ``unfinished``."""
    projects = tmp_path / ".claude" / "projects"
    shutil.copytree(SPOTTER, projects / SPOTTER.name)
    app = make_app(Settings(), [SessionSource([projects])])
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_run(pilot, SPOTTER_ID)
        await pilot.press("T")
        pane = screen.query_one(TimelinePane)
        await settle(pilot, lambda: not pane.loading and pane.summary is not None, "timeline")
        await settle(
            pilot,
            lambda: any("▶ claude-code" in line for line in screen_lines(app)),
            "the sub-agent's row",
        )

        def model_rows() -> list[str]:
            rows = [line.partition("│")[0] for line in screen_lines(app)]
            return [row for row in rows if row.startswith("◆")]

        # The session's last records may be folded a frame after its timeline first shows:
        # a call read before its answer says unfinished until then (seen once under load).
        await settle(pilot, lambda: len(model_rows()) == 6, "the six model calls")
        await settle(pilot, lambda: all(" tok " in row for row in model_rows()), "their tokens")
        rows = [line.partition("│")[0] for line in screen_lines(app)]
        sub_agent = next(row for row in rows if "▶ claude-code" in row)
        assert "unfinished" not in sub_agent
        child = next(node for node in pane.timeline.rows() if node.run_id is not None)
        assert child.outcome is Outcome.OK  # its Task call came back with its answer
