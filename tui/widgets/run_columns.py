"""The runs table's columns: which are shown at a width, how wide each is, and the
titles line above them (laid out as the table's lines are, for what the runs put in them).
"""

from __future__ import annotations

import functools
from typing import Final, NamedTuple

from rich.text import Text
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import RenderOptions, Visual

from tui.columns import COLUMNS

MARK: Final = "◆"
"""The glyph of a run marked to compare (space, or ``m``, on the runs table)."""

NUMERIC: Final = frozenset({"events", "damaged", "duration", "tokens"})
"""Columns of numbers: right-aligned, titles and all, so their digits line up."""

DROP_FIRST: Final = ("source", "started", "events", "damaged", "duration", "tokens")
"""Columns left out, in this order, when the terminal is too narrow for all (never the one
the table is sorted by: it takes the place of the next one instead). A column empty for
every run shown goes first, at every width. Text gives way before figures, and a figure
is never cut: SOURCE and STARTED go while DOING NOW has less than :data:`MIN_DOING` cells,
then DOING NOW itself; then EVENTS (:data:`COUNTS`); then the status, the run and its name
give up cells (:data:`SQUEEZED`); DAMAGED, TIME and TOKENS / COST go last. At 80 columns
TOKENS / COST went second, before DOING NOW (empty for every idle session) gave up any of
its 18 cells. SOURCE, when the runs shown come from several sources, goes after STARTED
(with one, the source line names it). Without its column (a view that leaves it out), a
run's damaged lines are said in DOING NOW."""
COUNTS: Final = frozenset({"events"})
"""The figures that go, once DOING NOW is gone, before the names and ids give up cells
(the count of events: the run's screen lists them; a damaged line is news, it stays)."""

SQUEEZED: Final = (("run", 7), ("status", 11), ("agent", 8), ("status", 8))
"""Narrower still (the keys help open beside the table), once DOING NOW is gone: columns
that give up cells, in this order, down to these widths (a run id's last six characters;
a status's glyph and a word of up to nine letters, ``◐ awaiting…``, before the skill gives
any: at 80 columns with ``?`` open, STATUS kept 19 cells for one ``awaiting_approval`` and
SKILL read ``classifi…``; then a status's glyph and the start of its word); then SKILL /
AGENT goes. Cells left over once DOING NOW is gone widen SKILL / AGENT."""

MIN_DOING: Final = 16
"""The cells DOING NOW keeps while other columns give way; below ``MIN_DOING_SQUEEZED``
it goes, before the columns left give up cells."""
MIN_DOING_SQUEEZED: Final = 8
NARROW: Final = 120
"""Below this width the agent column gives up room it rarely fills."""
NARROW_AGENT: Final = 12
STATUS_NARROW: Final = 11
"""The most STATUS takes below :data:`NARROW`: a glyph and a word of up to nine letters
(every word but ``awaiting_approval`` and ``cancelling``, which are cut). With a live run
shown STATUS is as wide as those two, which any live run may come to say: at 80 columns
it grew by eight cells as a run came to wait, and TIME went."""
AGENT_WIDE: Final = 24
"""The most SKILL / AGENT takes of the cells DOING NOW, gone, leaves."""
SOURCE_MAX: Final = 22
"""The widest SOURCE gets for a long name (``127.0.0.1:8765`` is 14): cut at the start."""
FIXED_CELLS: Final = 20_000
"""The most cells that never change kept made (:meth:`RunTable._fixed`): a screenful each
of the widths the table was drawn at, many times over."""
DOING_MAX: Final = 120
"""The most room DOING NOW asks of the empty columns (a question, an error, cut after)."""


class Fill(NamedTuple):
    """What the runs shown put in the columns: STATUS and SOURCE are as wide as their
    widest (STATUS as the words a live run may come to say, :data:`STATUS_NARROW` at most
    below :data:`NARROW`), and a column with nothing in it for every run gives way first."""

    status: int = 19
    source: int = 10
    empty: frozenset[str] = frozenset()
    sources: int = 1
    """How many sources the runs come from."""
    doing: int = 0
    """The cells of the longest DOING NOW of the runs (up to :data:`DOING_MAX`): while it
    has less room than that, the empty columns give theirs."""
    hidden: frozenset[str] = frozenset()
    """The columns the view chosen does not show (:mod:`tui.views`): gone at every width,
    but for the one sorted by."""


UNKNOWN_FILL: Final = Fill()
"""The fill of runs not known (the titles drawn without a table)."""


class LinesWidth(int):
    """The cells a line of the table has, with what its columns are laid out by: the runs'
    :class:`Fill` and the scroll bar's column beside the lines (``gutter``)."""

    fill: Fill
    gutter: int

    def __new__(cls, cells: int, fill: Fill, gutter: int) -> LinesWidth:
        made = super().__new__(cls, cells)
        made.fill, made.gutter = fill, gutter
        return made


def _natural(key: str, title: str, width: int, total: int, keep: str, fill: Fill) -> int:
    if key == "status":
        width = max(fill.status, len(title))
        if total < NARROW:  # ◐ awaiting…: its DOING NOW says what it waits on
            width = min(width, STATUS_NARROW)
    elif key == "source":
        width = max(fill.source, len(title))
    elif key == "agent" and total < NARROW:
        width = NARROW_AGENT
    if key == keep:  # its title whole (or its first half), and the arrow
        width = max(width, len(title.split(" / ")[0]) + 2)
    return width


@functools.cache
def visible_columns(
    total: int, keep: str = "", fill: Fill = UNKNOWN_FILL
) -> tuple[tuple[str, str, int], ...]:
    """The columns that fit ``total`` cells, with their widths (one space between them).

    The columns a view leaves out (:attr:`Fill.hidden`) and those empty for every run go
    first, at every width. Then the text gives way by priority (:data:`DROP_FIRST`) until
    DOING NOW has :data:`MIN_DOING` cells; narrower still, DOING NOW goes, then EVENTS
    (:data:`COUNTS`), and the columns left give up cells (:data:`SQUEEZED`). The one
    sorted by (``keep``) stays, whole, and so do the numbers a view names
    (:func:`staying`): the names give way before them.
    """
    total = int(total)
    titles = {key: title for key, title, _ in COLUMNS}
    widths = {key: _natural(key, title, width, total, keep, fill) for key, title, width in COLUMNS}
    stays = staying(keep, fill)

    def fixed() -> int:  # the cells of every column but DOING NOW, and the spaces between
        return sum(widths.values()) + len(widths) - 1

    # A column with nothing in it for any run shown goes at every width: it would only take
    # room from the names and DOING NOW, and made to go only when DOING NOW's longest text
    # needed its room, it came and went as that text changed, shifting every title after
    # it. A column the view leaves out goes as an empty one does, before any gives way:
    # counted while the others gave way, it took a view's TOKENS / COST off at 80 columns.
    for key in (fill.empty & set(DROP_FIRST)) | (fill.hidden - {"mark", "run"}):
        if key != keep:
            widths.pop(key, None)
    order = DROP_FIRST
    if fill.sources > 1:  # the source tells runs apart: it stays longer
        order = ("started", "source", "events", "damaged", "duration", "tokens")
    least = MIN_DOING if "doing" in widths else 0
    for key in order:  # the text first, while DOING NOW has less than its least
        if key not in NUMERIC and key not in stays and total - fixed() < least:
            widths.pop(key, None)
    most: int | None = None  # the cells the names may take of those left over: all of them
    if "doing" in widths:
        room = total - fixed()
        if room >= MIN_DOING_SQUEEZED or keep == "doing":
            widths["doing"] = room
            return tuple((key, titles[key], width) for key, width in widths.items())
        del widths["doing"]
        most = AGENT_WIDE
    for key in order:  # then the counts, whole, before the names and ids give up cells
        if key in COUNTS and key not in stays and fixed() > total:
            widths.pop(key, None)
    over = fixed() - total
    for key, narrowest in SQUEEZED:
        if key in widths and key != keep and over > 0:
            take = max(0, min(over, widths[key] - narrowest))
            widths[key] -= take
            over -= take
    agent = widths.pop("agent", 0) if over > 0 and keep != "agent" else 0
    over -= agent + 1 if agent else 0
    for key in order:  # the last resort, too narrow even for the names' last cells
        if over <= 0:
            break
        if key != keep and key in widths:
            over -= widths.pop(key) + 1
    if agent and -over - 1 >= agent:  # a view's number gone after all: the names come back
        widths["agent"], over = agent, over + agent + 1
    if over < 0 and "agent" in widths:  # no DOING NOW to take them: the names do
        wider = widths["agent"] - over
        widths["agent"] = max(widths["agent"], wider if most is None else min(wider, most))
    return tuple((key, titles[key], widths[key]) for key in titles if key in widths)


def staying(keep: str, fill: Fill) -> frozenset[str]:
    """The columns that never give way to make room: the one sorted by, and the numbers a
    view names (its TOKENS / COST at 80 columns: the view was chosen for them)."""
    if not fill.hidden:  # every column: none was asked for more than another
        return frozenset({keep})
    named = {key for key, _, _ in COLUMNS} - fill.hidden
    return frozenset({keep, *(named & NUMERIC)})


@functools.cache
def column_layout(
    total: int, keep: str = "", fill: Fill = UNKNOWN_FILL
) -> tuple[tuple[str, int, bool], ...]:
    """Each column's key and width at ``total`` cells, and whether it is right-aligned."""
    return tuple(
        (key, width, key in NUMERIC) for key, _, width in visible_columns(total, keep, fill)
    )


def _fill_of(total: int) -> Fill:
    """The fill a width given by :meth:`RunTable.lines_width` carries (runs not known: none)."""
    return total.fill if isinstance(total, LinesWidth) else UNKNOWN_FILL


def column_widths(total: int) -> list[int]:
    return [width for _, _, width in visible_columns(total, "", _fill_of(total))]


def column_at(total: int, x: int, keep: str = "") -> str | None:
    """The key of the column drawn at cell ``x`` of a line ``total`` cells wide (as
    :meth:`RunTable.lines_width` gives it: laid out for the runs shown)."""
    start = 0
    for key, _, width in visible_columns(total, keep, _fill_of(total)):
        if start <= x < start + width + 1:
            return key
        start += width + 1
    return None


def _titles(total: int, sort: str, reverse: bool, tree: bool, fill: Fill) -> Text:
    text = Text(no_wrap=True)
    for key, title, width in visible_columns(total, sort, fill):
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


class Titles(Visual):
    """The column titles, laid out for the width they are drawn at, as the table's lines
    are: the keys help, opened beside the table, narrows both (the titles stayed laid out
    for the screen, and the sorted column's title was beyond the table's last column)."""

    def __init__(self, total: int, sort: str, reverse: bool, tree: bool) -> None:
        self.fill = _fill_of(total)
        self.gutter = total.gutter if isinstance(total, LinesWidth) else 0
        self.sort, self.reverse, self.tree = sort, reverse, tree
        self.cells = int(total)
        """The cells of a line: as given, then as last drawn."""
        self.markup = f"{sort} {reverse} {tree} {self.fill}"
        """What the titles depend on but the width: unchanged, they need not be set again."""

    def text(self) -> Text:
        return _titles(self.cells, self.sort, self.reverse, self.tree, self.fill)

    @property
    def plain(self) -> str:
        return self.text().plain

    def __str__(self) -> str:
        return self.plain

    def render_strips(
        self, width: int, height: int | None, style: VisualStyle, options: RenderOptions
    ) -> list[Strip]:
        self.cells = max(1, width - self.gutter)
        return Content.from_rich_text(self.text()).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return 1


def header_text(total: int, sort: str, reverse: bool, *, tree: bool = False) -> Titles:
    """The header line, with the sort column marked (its whole title, then the arrow), and
    the runs' column marked ``└`` while child runs are shown under their parents; laid out
    as the lines are where it is drawn (``total``, from :meth:`RunTable.lines_width`, says
    for which runs)."""
    return Titles(total, sort, reverse, tree)
