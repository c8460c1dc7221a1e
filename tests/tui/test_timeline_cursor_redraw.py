"""A cursor move on the timeline draws again the two lines it left and came to, not every bar
(on a live run's timeline a key drew the whole view again, behind the stream)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.strip import Strip

from inspector.timeline import Timeline
from ledger_reader.decode import decode_line
from tests.conftest import line
from tui.widgets.timeline_view import TimelineView


class _CountingView(TimelineView):
    """The real view; the lines it draws are counted."""

    drawn: list[int]

    def render_line(self, y: int) -> Strip:
        self.drawn.append(y)
        return super().render_line(y)


def _timeline(nodes: int) -> Timeline:
    timeline = Timeline("run_t")
    seq = 1
    items = [line(seq, "run_started", {"skill": "s"})]
    for number in range(nodes):
        node = f"tool:search#{number}"
        items.append(line(seq := seq + 1, "node_enter", {"node_id": node, "node_name": "search"}))
        items.append(line(seq := seq + 1, "node_exit", {"node_id": node, "success": True}))
    for offset, text in enumerate(items):
        item = decode_line(text, offset)
        assert item is not None
        timeline.add(item)
    return timeline


class _OneView(App[None]):
    def compose(self) -> ComposeResult:
        view = _CountingView(_timeline(30), clock=1_800_000_000.0)
        view.drawn = []
        yield view


async def test_a_cursor_move_draws_two_lines() -> None:
    app = _OneView()
    async with app.run_test(size=(120, 20)) as pilot:
        view = app.query_one(_CountingView)
        view.model_changed()
        view.focus()
        await pilot.pause()
        await pilot.pause()
        await pilot.pause()
        assert len(view.drawn) > 10  # the first frame: every line on screen
        view.drawn.clear()
        await pilot.press("down")
        await pilot.pause()
        assert view.cursor == 1
        assert sorted(view.drawn) == [1, 2]  # the rows of nodes 0 and 1 (the ruler is line 0)
        assert "search" in view.render_line(2).text
