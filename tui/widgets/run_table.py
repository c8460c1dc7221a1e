"""The live table of runs, drawn line by line.

Textual's DataTable took 1.1 s here to show 10,000 rows (MEASURED.md), so
the table draws only the rows on screen (the line API): showing 10,000
runs costs what showing 40 does. The selection follows its run, not its
row, as rows update and move.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar, Final

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector import RunKey, RunView, SourcesDown
from inspector.status_words import ended_reason
from ledger_reader import RunStatus
from tui.format import cell, now_or, relative, run_time, short_id, status_mark, tokens_and_cost
from tui.text import damaged_count, inert, skill_and_agent
from tui.widgets.lines import CURSOR_BINDINGS, highlighted, scroll_row_into_view

COLUMNS: Final = (
    ("mark", "", 1),
    ("status", "STATUS", 19),
    ("run", "RUN", 14),
    ("agent", "SKILL / AGENT", 24),
    ("started", "STARTED", 9),
    ("duration", "TIME", 8),
    ("events", "EVENTS", 8),
    ("damaged", "DAMAGED", 7),
    ("doing", "DOING NOW", 0),
    ("tokens", "TOKENS / COST", 15),
    ("source", "SOURCE", 10),
)
"""Key, title and width of each column (0: takes the room left). A sortable column has
room for its title and the sort arrow."""

MARK: Final = "◆"
"""The glyph of a run marked to compare (space, or ``m``, on the runs table)."""

NUMERIC: Final = frozenset({"events", "damaged", "duration", "tokens"})
"""Columns of numbers: right-aligned, titles and all, so their digits line up."""

SORT_KEYS: Final = ("started", "status", "agent", "duration", "events", "tokens", "source")


DROP_FIRST: Final = ("source", "tokens", "damaged", "started", "events", "duration")
"""Columns left out, in this order, when the terminal is too narrow for all (never the one
the table is sorted by: it takes the place of the next one instead). Without its column,
a run's damaged lines are said in DOING NOW."""

MIN_DOING: Final = 16
NARROW: Final = 120
"""Below this width the agent column gives up room it rarely fills."""
NARROW_AGENT: Final = 12


def visible_columns(total: int, keep: str = "") -> list[tuple[str, str, int]]:
    """The columns that fit ``total`` cells, with their widths (one space between them)."""
    shown = [
        (key, title, NARROW_AGENT if key == "agent" and total < NARROW else width)
        for key, title, width in COLUMNS
    ]
    for key in DROP_FIRST:
        fixed = sum(width for _, _, width in shown) + len(shown) - 1
        if total - fixed >= MIN_DOING:
            break
        if key != keep:
            shown = [column for column in shown if column[0] != key]
    fixed = sum(width for _, _, width in shown) + len(shown) - 1
    flexible = max(8, total - fixed)
    return [(key, title, width or flexible) for key, title, width in shown]


@functools.cache
def _layout(total: int, keep: str = "") -> tuple[tuple[str, int, bool], ...]:
    """Each column's key and width at ``total`` cells, and whether it is right-aligned."""
    return tuple((key, width, key in NUMERIC) for key, _, width in visible_columns(total, keep))


def column_widths(total: int) -> list[int]:
    return [width for _, _, width in visible_columns(total)]


def column_at(total: int, x: int, keep: str = "") -> str | None:
    """The key of the column drawn at cell ``x`` of a line ``total`` cells wide."""
    start = 0
    for key, _, width in visible_columns(total, keep):
        if start <= x < start + width + 1:
            return key
        start += width + 1
    return None


def header_text(total: int, sort: str, reverse: bool, *, tree: bool = False) -> Text:
    """The header line, with the sort column marked (its whole title, then the arrow), and
    the runs' column marked ``└`` while child runs are shown under their parents."""
    text = Text(no_wrap=True)
    for key, title, width in visible_columns(total, sort):
        if key == "agent" and tree:
            title = f"└ {title}"
        if len(title) > width - 2 * (key == sort):
            title = title.split(" / ")[0]  # SKILL, not SKILL / AGE, in a narrow column
        if key == sort:
            arrow = "▼" if reverse else "▲"
            title = f"{title[: max(1, width - 2)]} {arrow}"
            cut = title[:width]
            text.append(cut.rjust(width) if key in NUMERIC else cut.ljust(width), "underline")
            text.append(" ")
        else:
            cut = title[:width]
            text.append((cut.rjust(width) if key in NUMERIC else cut.ljust(width)) + " ")
    return text


def sort_runs(runs: Sequence[RunView], key: str, reverse: bool, now: float) -> list[RunView]:
    def value(run: RunView) -> tuple[object, ...]:
        match key:
            case "status":
                return (run.status.value, run.started_at or 0.0)
            case "agent":
                return (skill_and_agent(run.skill, run.agent), run.started_at or 0.0)
            case "duration":
                return (run.duration(now) or 0.0,)
            case "events":
                return (-1 if run.event_count is None else run.event_count,)
            case "tokens":
                return (run.prompt_tokens + run.output_tokens, run.cost_usd)
            case "source":
                return (run.source, run.started_at or 0.0)
            case _:
                return (run.started_at or 0.0, run.run_id)

    return sorted(runs, key=value, reverse=reverse)


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


def doing_now(run: RunView, *, damage: bool = False) -> str:
    """The DOING NOW cell: what a live run does, why an ended one failed or was canceled;
    with ``damage`` (no DAMAGED column on screen), a finished run's damaged lines."""
    if run.live or run.pending_approval is not None:  # what it waits on, or waited on
        return run.doing
    if run.status in {RunStatus.FAILED, RunStatus.CANCELED}:
        return ended_reason(run)
    if damage and run.damaged_lines:
        return f"{run.damaged_lines} damaged line{'s' if run.damaged_lines != 1 else ''}"
    return ""


class RunTable(ScrollView, can_focus=True):
    """Every run, one line each; Enter opens the selected one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *CURSOR_BINDINGS,
        Binding("enter", "open", "Open"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"runtable--cursor", "runtable--mark"}

    cursor: reactive[int] = reactive(0, always_update=True)
    """The selected row."""

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
        self.depths: dict[RunKey, int] = {}
        """In the tree view, how deep each run is below a run shown (children indented)."""
        self.sort_key = "started"
        """The column the rows are sorted by: kept on screen however narrow."""
        self.marked: frozenset[RunKey] = frozenset()
        """The runs marked to compare: their lines show :data:`MARK` (set by the screen)."""
        self.sources_down: frozenset[str] = frozenset()
        """Sources that cannot be read now: their live runs show as unknown, clocks stopped."""
        self.down_since: dict[str, float] = {}
        """When each source down went down: its live runs' clocks stop there (the store's
        moment; the moment this table was told, if it was not given one)."""
        self.now = now_or(clock)
        """The time every line of a frame is drawn at: relative times agree with their order."""
        self._selected_key: RunKey | None = None
        self._colours: dict[str, Style] = {}
        self._base_style: Style | None = None
        self._cursor: Style | None = None
        self._mark: Style | None = None

    # -- data -----------------------------------------------------------------------

    def tick(self) -> None:
        """A second passed: redraw every line at the new time (not some lines at each)."""
        self.now = now_or(self.clock)
        self.refresh()

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
            self.tick()
        self.virtual_size = Size(self.size.width, len(rows))
        if self._selected_key is not None:
            for index, run in enumerate(rows):
                if run.key == self._selected_key:
                    if index != self.cursor:
                        self.cursor = index
                    break
            else:
                self.cursor = min(self.cursor, max(0, len(rows) - 1))
        else:
            self.cursor = min(self.cursor, max(0, len(rows) - 1))
        if self.cursor != cursor_before or self.scroll_offset.y != top:
            # watch_cursor or the scroll redraws; if a run in view (where it was, or where the
            # selection went) wrote after the frame's instant, every line moves on first: a run
            # inserted above the selection read "now" beside a TIME of 0.2s.
            low, high = max(0, min(top, self.cursor - height)), max(top, self.cursor) + height
            if any((run.last_event_at or 0.0) > self.now for run in rows[low:high]):
                self.tick()
            return
        after = rows[top : top + height]
        if len(after) != len(before):
            self.tick()
            return
        changed = [
            offset
            for offset, (old, new) in enumerate(zip(before, after, strict=True))
            if old is not new
        ]
        if any((after[offset].last_event_at or 0.0) > self.now for offset in changed):
            # A run wrote after the instant the frame is drawn at: drawn at that instant, it
            # would have run longer (TIME) than it has existed (STARTED). All lines move on.
            self.tick()
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

    def lines_width(self, width: int | None = None) -> int:
        """The cells a line has, beside the scroll bar's column, when the table is ``width``
        wide (its own width by default): the columns and their titles are laid out for it."""
        return max(1, (self.size.width if width is None else width) - self.scrollbar_size_vertical)

    def render_line(self, y: int) -> Strip:
        width = self.lines_width()
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
        columns = _layout(width, self.sort_key)
        damage_unseen = all(key != "damaged" for key, _, _ in columns)
        for key, size, right in columns:
            style = base
            match key:
                case "mark":
                    text = MARK if run.key in self.marked else " "
                    style = base + self._mark_style()
                case "status":
                    glyph, word, colour = status_mark(run, source_down=down)
                    text = f"{glyph} {word}"
                    style = base + self._colour(colour)
                case "run":
                    text = short_id(run.run_id)
                case "agent":
                    depth = self.depths.get(run.key, 0)
                    indent = "  " * (depth - 1) + "└ " if depth else ""
                    who = skill_and_agent(run.skill, run.agent)
                    text = indent + cell(who, size - len(indent))
                case "started":
                    text = relative(run.started_at, now)
                case "duration":
                    # Nobody knows what a run of a source down does now: its clock stops.
                    text = run_time(run, now, self.down_since.get(run.source) if down else None)
                case "events":
                    text = "?" if run.event_count is None else str(run.event_count)
                case "damaged":
                    text = damaged_count(run.damaged_lines)
                    if run.damaged_lines:
                        style = base + self._colour("$error")
                case "doing":
                    text = cell(doing_now(run, damage=damage_unseen), size)
                case "tokens":
                    text = tokens_and_cost(run, size)
                case _:
                    text = cell(run.source, size)
            text = text[:size]
            segments.append(Segment((text.rjust(size) if right else text.ljust(size)) + " ", style))
        return segments

    # -- input --------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        if self.rows:
            self.cursor = len(self.rows) - 1 if where < 0 else 0

    def action_open(self) -> None:
        run = self.selected
        if run is not None:
            self.post_message(self.Opened(run))

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
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

    def show_text(self) -> str:
        """The table as plain text (for tests and the clipboard)."""
        return "\n".join(
            "".join(segment.text for segment in self._cells(run, 200, Style())) for run in self.rows
        )
