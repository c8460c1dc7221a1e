"""The live table of runs, drawn line by line.

Textual's DataTable took 1.1 s here to show 10,000 rows (MEASURED.md), so
the table draws only the rows on screen (the line API): showing 10,000
runs costs what showing 40 does. The selection follows its run, not its
row, as rows update and move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector import RunKey, RunView, SourcesDown
from inspector.model import UNANSWERED
from tui.columns import COLUMNS, SORT_KEYS, sort_runs
from tui.text import cell, damaged_count, inert, run_name
from tui.text.runs import now_or, relative, run_time, short_id, status_mark, tokens_and_cost
from tui.widgets.lines import CURSOR_BINDINGS, highlighted, scroll_row_into_view
from tui.widgets.run_columns import (
    AGENT_WIDE,
    DOING_MAX,
    DROP_FIRST,
    FIXED_CELLS,
    MARK,
    MIN_DOING,
    MIN_DOING_SQUEEZED,
    NARROW,
    NARROW_AGENT,
    NUMERIC,
    SOURCE_MAX,
    SQUEEZED,
    UNKNOWN_FILL,
    Fill,
    LinesWidth,
    Titles,
    column_at,
    column_layout,
    column_widths,
    header_text,
    visible_columns,
)
from tui.widgets.run_tally import LAST_KNOWN, QUESTION_ROOM, RowTally, doing_now, fill_of


def tree_order(runs: Sequence[RunView]) -> tuple[list[RunView], dict[RunKey, int]]:
    """``runs`` with each run's children right after it (in their order), and each depth.

    As htop shows a process tree: a run whose parent is not among ``runs`` is a root.
    """
    present = {run.key for run in runs}
    children: dict[RunKey, list[RunView]] = {}
    roots: list[RunView] = []
    for run in runs:
        parent = RunKey(run.source, run.parent_run_id) if run.parent_run_id else None
        if parent is not None and parent in present and parent != run.key:
            children.setdefault(parent, []).append(run)
        else:
            roots.append(run)
    ordered: list[RunView] = []
    depths: dict[RunKey, int] = {}
    stack = [(run, 0) for run in reversed(roots)]
    while stack:
        run, depth = stack.pop()
        if run.key in depths:
            continue  # a cycle of parents: shown once
        depths[run.key] = depth
        ordered.append(run)
        stack.extend((child, depth + 1) for child in reversed(children.get(run.key, [])))
    ordered.extend(run for run in runs if run.key not in depths)  # only in a cycle
    return ordered, depths


def tree_branches(ordered: Sequence[RunView], depths: dict[RunKey, int]) -> dict[RunKey, str]:
    """What the SKILL / AGENT cell of each run below another starts with, in the tree view
    (``ordered`` and ``depths`` as :func:`tree_order` gives them): ``├`` for a child with
    siblings after it, ``└`` for the last, and ``│`` on the way down wherever an ancestor
    has siblings still to come, as ``tree`` draws a directory. Two cells a level.

    Read from the last run up: a run's level is open above it while a run of that depth
    comes later with none shallower between (a shallower one closes the levels below it).
    """
    branches: dict[RunKey, str] = {}
    open_levels: list[bool] = []  # open_levels[depth]: a run at that depth comes later
    for run in reversed(ordered):
        depth = depths.get(run.key, 0)
        if len(open_levels) <= depth:
            open_levels.extend([False] * (depth + 1 - len(open_levels)))
        if depth:
            way = "".join("│ " if open_levels[level] else "  " for level in range(1, depth))
            branches[run.key] = way + ("├ " if open_levels[depth] else "└ ")
        open_levels[depth] = True
        del open_levels[depth + 1 :]
    return branches


def _cut_start(text: str, width: int) -> str:
    """``text`` cut to ``width`` at its start, the cut marked: ``…0.0.1:8765``."""
    if len(text) <= width:
        return text
    return "…" + text[len(text) - width + 1 :] if width > 1 else "…"[:width]


class RunTable(ScrollView, can_focus=True):
    """Every run, one line each; Enter opens the selected one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *CURSOR_BINDINGS,
        Binding("enter", "open", "Open", tooltip="The selected run: its events, as they come"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"runtable--cursor", "runtable--mark"}

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)
    """The selected row (``watch_cursor`` draws again the lines it left and came to)."""
    sort_key: reactive[str] = reactive("started")
    """The column the rows are sorted by: kept on screen however narrow (bound to the
    runs screen's sort)."""

    class Selected(Message):
        """The selection moved to another run."""

        def __init__(self, run: RunView | None) -> None:
            self.run = run
            super().__init__()

    class Opened(Message):
        """The user asked to open a run."""

        def __init__(self, run: RunView) -> None:
            self.run = run
            super().__init__()

    def __init__(self, *, clock: float | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.rows: list[RunView] = []
        self.branches: dict[RunKey, str] = {}
        """In the tree view, the branch drawn before each child run's name (``├ ``, ``│ └ ``):
        :func:`tree_branches`. Runs at the top of the tree have none."""
        self.marked: frozenset[RunKey] = frozenset()
        """The runs marked to compare: their lines show :data:`MARK` (set by the screen)."""
        self.sources_down: frozenset[str] = frozenset()
        """Sources that cannot be read now: their live runs show as unknown, clocks stopped."""
        self.replayed_at: dict[str, float] = {}
        """The moment each replay has played up to (set by the screen): its runs' STARTED
        is from there, as the source line says it, not from now (``3d ago`` beside a TIME
        of 0.1s)."""
        self.down_since: dict[str, float] = {}
        """When each source down went down: its live runs' clocks stop there (the store's
        moment; the moment this table was told, if it was not given one)."""
        self.now = now_or(clock)
        """The time every line of a frame is drawn at: relative times agree with their order."""
        self.fill = Fill()
        """What the rows put in the columns: the columns are laid out for it."""
        self.hidden_columns: frozenset[str] = frozenset()
        """The columns the view chosen does not show (set by the screen)."""
        self.kept_columns: frozenset[str] = frozenset()
        """The columns kept while nothing is in them yet: a replay's runs will come to fill
        them (set by the screen, :func:`~tui.widgets.run_tally.recorded_columns`)."""
        self.tally = RowTally()
        """What the rows add up to, kept as they change: :attr:`fill`, and the totals the
        source line says."""
        self._selected_key: RunKey | None = None
        self.chosen = False
        """A run was chosen (the cursor moved by a key or a click, or to a run by name): the
        selection follows it as rows come and go. Until then it is the top row, as runs
        arrive in any order (a folder of old sessions read before the newest runs would
        otherwise hold it on a run far below the screen); Home gives it back to the top."""
        self._fixed_cells: dict[tuple[str, RunKey, str | None, str | None, bool, int], str] = {}
        self._frame_width: LinesWidth | None = None
        self._colours: dict[str, Style] = {}
        self._base_style: Style | None = None
        self._cursor: Style | None = None
        self._mark: Style | None = None

    # -- data -----------------------------------------------------------------------

    def tick(self) -> None:
        """A second passed: the frame's instant moves on, and the lines on screen whose
        times read differently at it are drawn again (all at that one instant); a line that
        reads the same at both is left as drawn (runs finished hours ago draw nothing)."""
        before, self.now = self.now, now_or(self.clock)
        top = self.scroll_offset.y
        for row in range(top, min(len(self.rows), top + max(1, self.size.height))):
            run = self.rows[row]
            if self._times(run, before) != self._times(run, self.now):
                self.refresh_line(row)

    def _move_on(self) -> None:
        """Every line drawn again, at this instant."""
        self.now = now_or(self.clock)
        self.refresh()

    def _times(self, run: RunView, now: float) -> tuple[str, str]:
        """What a run's STARTED and TIME cells read at ``now``: the text that moves with the
        clock (as :meth:`_cells` writes it)."""
        replayed = self.replayed_at.get(run.source)
        since = (
            self.down_since.get(run.source)
            if run.live and run.source in self.sources_down
            else None
        )
        started = relative(run.started_at, replayed if replayed is not None else now)
        return started, run_time(run, now, since, replayed)

    def set_rows(self, rows: list[RunView], sources_down: frozenset[str] = frozenset()) -> None:
        """Show ``rows`` (already filtered and sorted), keeping the selected run selected.

        Only the lines on screen whose run changed are drawn again: with a
        hundred live runs, most frames change a few lines, not the table.
        """
        top = self.scroll_offset.y
        height = max(1, self.size.height)
        before = self.rows[top : top + height]
        cursor_before = self.cursor
        self.rows = rows
        if sources_down != self.sources_down:
            given = sources_down.since if isinstance(sources_down, SourcesDown) else {}
            self.down_since = {
                name: given.get(name, self.down_since.get(name, now_or(self.clock)))
                for name in sources_down
            }
            self.sources_down = sources_down
            # Drawn at this instant (not the last tick's, before the source went down): a
            # stopped clock reads the same from its first frame on.
            self._move_on()
        self.tally.update(rows, sources_down)
        fill = self.tally.fill(self.kept_columns)._replace(hidden=self.hidden_columns)
        if fill != self.fill:
            self.fill = fill
            self.refresh()  # every line is laid out again
        self.virtual_size = Size(self.size.width, len(rows))
        if self._selected_key is not None and self.chosen:
            if not (self.cursor < len(rows) and rows[self.cursor].key == self._selected_key):
                # It moved (it is mostly where it was: looked for there first, not among all).
                for index, run in enumerate(rows):
                    if run.key == self._selected_key:
                        self.cursor = index
                        break
                else:
                    self.cursor = min(self.cursor, max(0, len(rows) - 1))
        else:
            self.cursor = min(self.cursor, max(0, len(rows) - 1))
        if self.cursor != cursor_before or self.scroll_offset.y != top:
            # The selection followed its run: if a run in view (where it was, or where the
            # selection went) wrote after the frame's instant, every line moves on first, or a
            # run inserted above the selection would read "now" beside a TIME of 0.2s.
            low, high = max(0, min(top, self.cursor - height)), max(top, self.cursor) + height
            if any((run.last_event_at or 0.0) > self.now for run in rows[low:high]):
                self._move_on()
            else:
                self.refresh()  # the rows moved under the selection: every line
            return
        after = rows[top : top + height]
        if len(after) != len(before):
            self._move_on()
            return
        changed = [
            offset
            for offset, (old, new) in enumerate(zip(before, after, strict=True))
            if old is not new
        ]
        if any((after[offset].last_event_at or 0.0) > self.now for offset in changed):
            # A run wrote after the instant the frame is drawn at: drawn at that instant, it
            # would have run longer (TIME) than it has existed (STARTED). All lines move on.
            self._move_on()
            return
        for offset in changed:
            self.refresh_line(top + offset)

    def set_marked(self, marked: frozenset[RunKey]) -> None:
        """Mark these runs (and no others) as chosen to compare."""
        if marked != self.marked:
            self.marked = marked
            self.refresh()

    @property
    def selected(self) -> RunView | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def select_key(self, key: RunKey) -> bool:
        for index, run in enumerate(self.rows):
            if run.key == key:
                self.chosen = True
                self.cursor = index
                return True
        return False

    def watch_cursor(self, old: int, new: int) -> None:
        run = self.selected
        key = run.key if run is not None else None
        top = self.scroll_offset.y
        scroll_row_into_view(self, new)
        if key != self._selected_key or old != new:
            self._selected_key = key
            self.post_message(self.Selected(run))
        if self.scroll_offset.y != top:
            self.refresh()
        else:
            self.refresh_line(old)
            self.refresh_line(new)

    # -- drawing ----------------------------------------------------------------------

    def on_mount(self) -> None:
        self._colours = {}

    def _colour(self, name: str) -> Style:
        style = self._colours.get(name)
        if style is None:
            variables = self.app.get_css_variables()
            value = variables.get(name.lstrip("$"), "")
            try:
                style = Style(color=value) if value.startswith("#") else Style(dim=True)
            except Exception:
                style = Style(dim=True)
            self._colours[name] = style
        return style

    def notify_style_update(self) -> None:
        self._colours = {}
        self._base_style = None
        self._cursor = None
        self._mark = None
        super().notify_style_update()

    def lines_width(self, width: int | None = None) -> LinesWidth:
        """The cells a line has, beside the scroll bar's column: the columns and their titles
        are laid out for them, and for the rows (:class:`LinesWidth`). The table's own width
        once it has one (the keys help beside it makes it narrower than the screen); before,
        as if it were ``width`` wide."""
        gutter = self.scrollbar_size_vertical
        table = self.size.width or (width if width is not None else 0)
        return LinesWidth(max(1, table - gutter), self.fill, gutter)

    def _fixed(self, column: str, run: RunView, size: int) -> str:
        """A cell made of what rarely changes for a run (its id, skill and agent, source),
        ``size`` cells wide: made once, not each time a live run's line is drawn (ten times
        a second for each live run on screen)."""
        key = (column, run.key, run.skill, run.agent, run.summary.input is None, size)
        text = self._fixed_cells.get(key)
        if text is None:
            if len(self._fixed_cells) > FIXED_CELLS:
                self._fixed_cells.clear()
            match column:
                case "run":
                    text = _cut_start(short_id(run.run_id), size)  # its distinctive end
                case "agent":
                    text = run_name(run.summary, size)
                case _:  # the end of a name says most (the port of 127.0.0.1:8765)
                    text = _cut_start(inert(run.source, single_line=True), size)
            self._fixed_cells[key] = text
        return text

    def render_lines(self, crop: Region) -> list[Strip]:
        # The width is worked out once for the lines of a frame, not for each line.
        self._frame_width = self.lines_width()
        try:
            return super().render_lines(crop)
        finally:
            self._frame_width = None

    def render_line(self, y: int) -> Strip:
        width = self._frame_width or self.lines_width()
        row = self.scroll_offset.y + y
        base = self._base_style
        if base is None:
            base = self._base_style = self.rich_style  # walks the ancestors: once, not per line
        if row >= len(self.rows):
            return Strip.blank(width, base)
        run = self.rows[row]
        segments = self._cells(run, width, base)
        strip = Strip(segments).crop_extend(0, width, base)
        if row == self.cursor:
            highlight = self._cursor_style()
            if not self.has_focus:
                highlight = Style(bgcolor=highlight.bgcolor)
            strip = highlighted(strip, highlight)
        return strip

    def _cursor_style(self) -> Style:
        """The cursor row's style: its text style, and its background laid over the table's.

        Textual's partial component style drops the background's alpha: the
        cursor came out solid accent, and a running run's accent-coloured
        status vanished into it. The status colours stay; only the row shows.
        """
        if self._cursor is None:
            component = self.get_component_styles("runtable--cursor")
            background = self.background_colors[1] + component.background
            partial = self.get_component_rich_style("runtable--cursor", partial=True)
            self._cursor = partial + Style(bgcolor=background.rich_color)
        return self._cursor

    def _mark_style(self) -> Style:
        if self._mark is None:
            self._mark = self.get_component_rich_style("runtable--mark", partial=True)
        return self._mark

    def _cells(self, run: RunView, width: int, base: Style) -> list[Segment]:
        down = run.source in self.sources_down and run.live
        now = self.now
        if down:
            base = base + Style(dim=True)
        segments: list[Segment] = []
        columns = column_layout(width, self.sort_key, self.fill)
        damage_unseen = all(key != "damaged" for key, _, _ in columns)
        for key, size, right in columns:
            style = base
            match key:
                case "mark":
                    text = MARK if run.key in self.marked else " "
                    style = base + self._mark_style()
                case "status":
                    glyph, word, colour = status_mark(run, source_down=down)
                    text = cell(f"{glyph} {word}", size)
                    style = base + self._colour(colour)
                case "run":
                    text = self._fixed("run", run, size)  # its distinctive end
                case "agent":
                    indent = self.branches.get(run.key, "")
                    if len(indent) > size - 2:  # deeper than the column is wide: its end
                        indent = indent[len(indent) - max(0, size - 2) :]
                    text = indent + self._fixed("agent", run, size - len(indent))
                case "started":
                    text = relative(run.started_at, self.replayed_at.get(run.source, now))
                case "duration":
                    # Nobody knows what a run of a source down does now: its clock stops.
                    # A replay's running runs count up with the moment replayed, as STARTED.
                    since = self.down_since.get(run.source) if down else None
                    text = run_time(run, now, since, self.replayed_at.get(run.source))
                case "events":
                    text = "?" if run.event_count is None else str(run.event_count)
                case "damaged":
                    text = damaged_count(run.damaged_lines)
                    if run.damaged_lines:
                        style = base + self._colour("$error")
                case "doing":
                    said = doing_now(run, damage=damage_unseen, down=down)
                    cramped = len(said) > size and size - len(UNANSWERED) < QUESTION_ROOM
                    if cramped and said.startswith(UNANSWERED):
                        said = said.removeprefix("approval ")  # room for the question
                    text = cell(said, size)
                case "tokens":
                    text = tokens_and_cost(run, size)
                case _:
                    text = self._fixed("source", run, size)
            text = text[:size]
            segments.append(Segment((text.rjust(size) if right else text.ljust(size)) + " ", style))
        return segments

    # -- input --------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        if self.rows:
            self.chosen = True
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        if self.rows:
            self.chosen = where < 0  # the top: the newest run, whichever it comes to be
            self.cursor = len(self.rows) - 1 if where < 0 else 0

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter is greyed (and not offered by the palette) while there is no run to open."""
        if action == "open":
            return True if self.rows else None
        return True

    def action_open(self) -> None:
        run = self.selected
        if run is not None:
            self.post_message(self.Opened(run))

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
            self.chosen = True
            self.cursor = row
            if event.chain >= 2:
                self.action_open()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Hovering a row shows its run's full id (the RUN column shows its end)."""
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
            run = self.rows[row]
            # Text, not a string: a string would be read as markup, and a source's name is
            # a directory's name.
            self.tooltip = Text(inert(f"{run.run_id}\n{run.source}"))
        else:
            self.tooltip = None

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        # A smaller terminal keeps the selected run in view (the preview below shows it).
        self.call_after_refresh(scroll_row_into_view, self, self.cursor)

    def show_text(self) -> str:
        """The table as plain text (for tests and the clipboard)."""
        return "\n".join(
            "".join(segment.text for segment in self._cells(run, 200, Style())) for run in self.rows
        )


__all__ = [
    "AGENT_WIDE",
    "COLUMNS",
    "DOING_MAX",
    "DROP_FIRST",
    "FIXED_CELLS",
    "LAST_KNOWN",
    "MARK",
    "MIN_DOING",
    "MIN_DOING_SQUEEZED",
    "NARROW",
    "NARROW_AGENT",
    "NUMERIC",
    "QUESTION_ROOM",
    "SORT_KEYS",
    "SOURCE_MAX",
    "SQUEEZED",
    "UNKNOWN_FILL",
    "Fill",
    "LinesWidth",
    "RowTally",
    "RunTable",
    "Titles",
    "column_at",
    "column_widths",
    "doing_now",
    "fill_of",
    "header_text",
    "sort_runs",
    "tree_branches",
    "tree_order",
    "visible_columns",
]
