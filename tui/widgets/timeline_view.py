"""One run's timeline as a waterfall: a row per node, a bar from its start to its end.

Draws only the rows on screen (the line API: :meth:`TimelineView.render_line`
reads ``rows()[top + y]``), so a timeline of 100,000 nodes scrolls and
answers keys as one of ten does. The first line is the time ruler; it stays
put while the rows scroll under it.

Its model (:class:`~inspector.timeline.Timeline`) and time axis come from
outside: the owner folds events into the model and calls
:meth:`TimelineView.model_changed`; :attr:`TimelineView.axis` fixes the axis
(two views stacked on one axis set the same range), and
:attr:`TimelineView.window` is the part of it shown (zoom and pan change
it, and say so with :class:`TimelineView.WindowChanged` so a neighbour can
follow).
"""

from __future__ import annotations

import time
from typing import ClassVar, Final, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector.timeline import NodeKind, Outcome, Timeline, TimelineNode
from tui.text.timeline import Columns, bar_cells, bar_text, columns, row_head, ruler
from tui.textual_compat import grow_scroll_range
from tui.widgets.lines import CURSOR_BINDINGS, highlighted

MIN_WINDOW: Final = 0.001
"""The narrowest window zoom goes to, in seconds."""
PAN_FRACTION: Final = 0.25
"""Left and right move the window by this much of its width."""

_KIND_CLASS: Final = {
    NodeKind.MODEL: "timeline--model",
    NodeKind.TOOL: "timeline--tool",
    NodeKind.APPROVAL: "timeline--approval",
    NodeKind.STEP: "timeline--step",
    NodeKind.CHILD_RUN: "timeline--child-run",
}
_OUTCOME_CLASS: Final = {
    Outcome.ERROR: "timeline--error",
    Outcome.DENIED: "timeline--denied",
    Outcome.CANCELED: "timeline--canceled",
    Outcome.UNFINISHED: "timeline--canceled",
    Outcome.RUNNING: "timeline--running",
}


class _Frame(NamedTuple):
    """What every line of one frame is drawn with."""

    base: Style
    cols: Columns
    now: float
    """Where in-flight bars end."""
    window: tuple[float, float]


class TimelineView(ScrollView, can_focus=True):
    """The nodes of one run's timeline, each a bar on a shared time axis."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *CURSOR_BINDINGS,
        Binding(
            "plus,equals_sign",
            "zoom(2)",
            "Zoom in",
            key_display="+",
            tooltip="Around the selected node",
        ),
        Binding(
            "minus", "zoom(0.5)", "Zoom out", key_display="-", tooltip="Around the selected node"
        ),
        Binding("left", "pan(-1)", "Earlier", show=False),
        Binding("right", "pan(1)", "Later", show=False),
        Binding(
            "0", "whole", "Whole run", show=False, tooltip="The timeline of the whole run again"
        ),
        Binding(
            "enter",
            "choose",
            "To the event",
            tooltip="The selected node's event in the event stream",
        ),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--cursor",
        "timeline--ruler",
        "timeline--numbers",
        "timeline--model",
        "timeline--tool",
        "timeline--approval",
        "timeline--step",
        "timeline--child-run",
        "timeline--error",
        "timeline--denied",
        "timeline--canceled",
        "timeline--running",
    }

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)
    """The selected row (``watch_cursor`` draws again the lines it left and came to)."""

    class NodeMessage(Message):
        """Something happened to ``node`` in ``view``."""

        def __init__(self, view: TimelineView, node: TimelineNode) -> None:
            self.view = view
            self.node = node
            super().__init__()

        @property
        def control(self) -> TimelineView:
            return self.view

    class Highlighted(NodeMessage):
        """The selection moved to ``node`` (its detail belongs in the detail pane)."""

    class Chosen(NodeMessage):
        """Enter on ``node``: show it in the event stream."""

    class WindowChanged(Message):
        """Zoom or pan moved the window shown (``None``: the whole axis)."""

        def __init__(self, view: TimelineView, window: tuple[float, float] | None) -> None:
            self.view = view
            self.window = window
            super().__init__()

        @property
        def control(self) -> TimelineView:
            return self.view

    def __init__(
        self,
        timeline: Timeline,
        *,
        clock: float | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self.clock = clock
        """A fixed "now" (tests, screenshots); else the wall clock."""
        self.live = False
        """The run may still write: in-flight bars and the axis reach to now."""
        self.axis: tuple[float, float] | None = None
        """The whole time axis, when set from outside (a shared axis, or the run's known
        times while its events are still being read); else the timeline's own span."""
        self.window: tuple[float, float] | None = None
        """The part of the axis shown; ``None`` for all of it."""
        self._frame: _Frame | None = None
        self._announced: TimelineNode | None = None
        self._columns: Columns | None = None
        """The columns laid out for the rows (as wide as the widest row's numbers, every
        label cut at one width): worked out as the timeline changes, not at each frame."""

    # -- what is drawn ------------------------------------------------------------------

    def now(self) -> float | None:
        """Where in-flight bars end: now while live, else the timeline's last time."""
        if not self.live:
            return None
        return self.clock if self.clock is not None else time.time()

    def full_axis(self) -> tuple[float, float]:
        """The axis: as set from outside, else the run from its start to its end (or now)."""
        if self.axis is not None:
            return self.axis
        return self.timeline.span(self.now())

    def shown(self) -> tuple[float, float]:
        """The window drawn: the zoomed part, else the whole axis."""
        return self.window if self.window is not None else self.full_axis()

    def model_changed(self) -> None:
        """The timeline grew or changed: size the scroll range and redraw."""
        count = len(self.timeline.rows())
        self._columns = None
        grow_scroll_range(self, Size(self.scrollable_content_region.width, count + 1))
        if count and self.cursor >= count:
            self.cursor = count - 1
        self._announce()
        self.refresh()

    def set_window(self, window: tuple[float, float] | None) -> None:
        """Show ``window`` of the axis (``None``: all of it), without telling anyone."""
        self.window = window
        self.refresh()

    def node_at(self, row: int) -> TimelineNode | None:
        rows = self.timeline.rows()
        return rows[row] if 0 <= row < len(rows) else None

    def _frame_now(self) -> _Frame:
        width = self.size.width
        if self._columns is None or sum(self._columns) + 2 != width:
            self._columns = columns(width, self.timeline.rows(), self.now())
        return _Frame(
            base=self.rich_style,
            cols=self._columns,
            now=self.now() or self.full_axis()[1],
            window=self.shown(),
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        # What every line of a frame is drawn with, worked out once for the frame: the
        # style walks the widget's ancestors, and all bars end at one instant.
        self._frame = self._frame_now()
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        frame = self._frame or self._frame_now()
        base, cols = frame.base, frame.cols
        if y == 0:
            scale = ruler(frame.window, self.full_axis()[0], cols.bars)
            style = base + self.get_component_rich_style("timeline--ruler", partial=True)
            head = "zoomed: - out, 0 all" if self.window is not None else ""
            lead = Segment(head[: cols.bars_at - 1].ljust(cols.bars_at), style)
            return Strip([lead, Segment(scale, style)]).crop_extend(0, width, base)
        row = self.scroll_offset.y + y - 1
        node = self.node_at(row)
        if node is None:
            return Strip.blank(width, base)
        strip = Strip(self._segments(node, frame))
        strip = strip.crop_extend(0, width, base)
        if row == self.cursor:
            cursor = self.get_component_rich_style("timeline--cursor", partial=True)
            strip = highlighted(strip, cursor)  # its background: the bars keep their colours
        return strip

    def _segments(self, node: TimelineNode, frame: _Frame) -> list[Segment]:
        base, cols, now = frame.base, frame.cols, frame.now
        kind = self.get_component_rich_style(_KIND_CLASS[node.kind], partial=True)
        outcome_class = _OUTCOME_CLASS.get(node.outcome)
        bar_style = base + kind
        name_style = base
        if outcome_class is not None:
            outcome = self.get_component_rich_style(outcome_class, partial=True)
            bar_style += outcome
            if node.outcome is not Outcome.RUNNING:
                name_style += outcome
        muted = base + self.get_component_rich_style("timeline--numbers", partial=True)
        name, said = row_head(node, cols, now if self.live else None)
        segments = [Segment(name, name_style), Segment(" "), Segment(said, muted), Segment(" ")]
        end = node.end_or(now)
        cells = bar_cells(node.start, end, frame.window, cols.bars, clamp=self.window is None)
        if cells is not None:
            segments.append(Segment(" " * cells.begin, base))
            segments.append(Segment(bar_text(cells, in_flight=node.in_flight), bar_style))
        return segments

    # -- moving ---------------------------------------------------------------------------

    def _height(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def watch_cursor(self, old: int, row: int) -> None:
        top = self.scroll_offset.y
        height = self._height()
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True)
        self._announce()
        if self.scroll_offset.y != top:
            self.refresh()
        else:
            # The lines the cursor left and came to, not every bar (the ruler is line 0).
            self.refresh_line(old + 1)
            self.refresh_line(row + 1)

    def _announce(self) -> None:
        node = self.node_at(self.cursor)
        if node is not None and node is not self._announced:
            self._announced = node
            self.post_message(self.Highlighted(self, node))

    def select_node(self, node: TimelineNode) -> None:
        """Move the selection to ``node``."""
        self.timeline.rows()  # brings rows (and each node's row) up to date
        if node.row >= 0:
            self.cursor = node.row

    def action_cursor(self, delta: int) -> None:
        count = len(self.timeline.rows())
        if count:
            self.cursor = min(max(self.cursor + delta, 0), count - 1)

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self._height() - 1))

    def action_jump(self, where: int) -> None:
        count = len(self.timeline.rows())
        if count:
            self.cursor = 0 if where >= 0 else count - 1

    def action_choose(self) -> None:
        node = self.node_at(self.cursor)
        if node is not None:
            self.post_message(self.Chosen(self, node))

    def action_zoom(self, factor: float) -> None:
        """Zoom in (``factor`` > 1) or out around the selected node's start, or the middle."""
        axis = self.full_axis()
        low, high = self.shown()
        width = (high - low) / factor
        if width >= axis[1] - axis[0]:
            self._change_window(None)
            return
        width = max(width, MIN_WINDOW)
        node = self.node_at(self.cursor)
        if node is not None and low <= node.start <= high:
            share = (node.start - low) / (high - low) if high > low else 0.5
            centre_low = node.start - share * width
        else:
            centre_low = (low + high) / 2 - width / 2
        self._change_window(self._clamped(centre_low, width, axis))

    def action_pan(self, direction: int) -> None:
        if self.window is None:
            return  # all of the run is shown: nowhere to pan
        low, high = self.window
        width = high - low
        step = direction * width * PAN_FRACTION
        self._change_window(self._clamped(low + step, width, self.full_axis()))

    def action_whole(self) -> None:
        self._change_window(None)

    @staticmethod
    def _clamped(low: float, width: float, axis: tuple[float, float]) -> tuple[float, float]:
        low = min(max(low, axis[0]), max(axis[0], axis[1] - width))
        return (low, low + width)

    def _change_window(self, window: tuple[float, float] | None) -> None:
        self.set_window(window)
        self.post_message(self.WindowChanged(self, window))

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            row = self.scroll_offset.y + event.y - 1
            if self.node_at(row) is not None:
                self.cursor = row

    def on_resize(self) -> None:
        self.model_changed()


__all__ = ["TimelineView"]
