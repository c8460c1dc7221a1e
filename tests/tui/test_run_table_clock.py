"""The runs table's second: a tick draws again only the lines whose times read differently.

Every second the screen moves the table's instant on. A table of runs that ended hours ago
reads the same at the next second (``3h ago``, ``0.2s``): drawing its every line again was
most of what an idle runtop did.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.strip import Strip

from inspector import RunKey, RunView
from inspector.model import make_view
from ledger_reader import RunStatus, RunSummary
from tui.widgets.run_table import RunTable

NOW = 1_800_000_000.0


class _CountingTable(RunTable):
    """The real table; the rows it draws are counted."""

    def __init__(self) -> None:
        super().__init__(clock=NOW)
        self.drawn: list[int] = []

    def render_line(self, y: int) -> Strip:
        self.drawn.append(self.scroll_offset.y + y)
        return super().render_line(y)


class _OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield _CountingTable()


def _run(number: int, status: RunStatus, started: str, ended: str | None) -> RunView:
    run_id = f"run_{number:04d}"
    summary = RunSummary(
        run_id=run_id,
        status=status,
        skill="s",
        started_at=started,
        completed_at=ended,
        last_event_at=ended,
    )
    return make_view(RunKey("runs", run_id), summary, None, detailed=True)


async def test_a_tick_draws_only_the_lines_whose_times_moved() -> None:
    hours_ago = [
        _run(n, RunStatus.SUCCEEDED, "2027-01-15T05:00:00Z", "2027-01-15T05:00:03Z")
        for n in range(30)
    ]
    # Started just now and still running: STARTED and TIME both read differently each second.
    live = _run(99, RunStatus.RUNNING, "2027-01-15T07:59:50Z", None)
    app = _OneTable()
    async with app.run_test(size=(160, 20)) as pilot:
        table = app.query_one(_CountingTable)
        table.set_rows([live, *hours_ago])
        await pilot.pause()
        await pilot.pause()
        assert table.drawn  # the first frame drew the lines on screen
        table.drawn.clear()
        table.clock = NOW + 1
        table.tick()
        await pilot.pause()
        assert table.drawn == [0]  # the live run's line; the rest read as they did
        assert "11s ago" in table.show_text().splitlines()[0]
