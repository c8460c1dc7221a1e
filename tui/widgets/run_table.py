"""The live table of runs, drawn line by line.

Textual's DataTable took 1.1 s here to show 10,000 rows (MEASURED.md), so
the table draws only the rows on screen (the line API): showing 10,000
runs costs what showing 40 does. The selection follows its run, not its
row, as rows update and move.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from itertools import compress
from operator import and_, attrgetter, is_not, not_
from typing import ClassVar, Final, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import RenderOptions, Visual

from inspector import RunKey, RunView, SourcesDown
from inspector.events import RunStatus
from inspector.model import UNANSWERED
from inspector.status_words import UNKNOWN, WORDS, ended_reason
from tui.format import cell, now_or, relative, run_time, short_id, status_mark, tokens_and_cost
from tui.text import cost as cost_said
from tui.text import damaged_count, inert, skill_and_agent
from tui.text import tokens as tokens_said
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
"""Key, title and width of each column (0: takes the room left). STATUS and SOURCE are as
wide as what the runs shown put in them (:class:`Fill`): these widths are for runs not
known. A sortable column has room for its title and the sort arrow."""

MARK: Final = "◆"
"""The glyph of a run marked to compare (space, or ``m``, on the runs table)."""

NUMERIC: Final = frozenset({"events", "damaged", "duration", "tokens"})
"""Columns of numbers: right-aligned, titles and all, so their digits line up."""

SORT_KEYS: Final = ("started", "status", "agent", "duration", "events", "tokens", "source")


DROP_FIRST: Final = ("source", "tokens", "damaged", "started", "events", "duration")
"""Columns left out, in this order, when the terminal is too narrow for all (never the one
the table is sorted by: it takes the place of the next one instead). A column empty for
every run shown goes before any with something in it; SOURCE, when the runs shown come
from several sources, after TOKENS and DAMAGED (with one, the source line names it).
Without its column, a run's damaged lines are said in DOING NOW."""

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
    widest, and a column with nothing in it for every run gives way first."""

    status: int = 19
    source: int = 10
    empty: frozenset[str] = frozenset()
    sources: int = 1
    """How many sources the runs come from."""
    doing: int = 0
    """The cells of the longest DOING NOW of the runs (up to :data:`DOING_MAX`): while it
    has less room than that, the empty columns give theirs."""


UNKNOWN_FILL: Final = Fill()
"""The fill of runs not known (the titles drawn without a table)."""

_SUMMARY_OF: Final = attrgetter("summary")
_STATUS_OF: Final = attrgetter("status")
_DAMAGED_OF: Final = attrgetter("damaged_lines")
_KEY_OF: Final = attrgetter("key")
_SOURCE_OF: Final = attrgetter("source")
_PROMPT_OF: Final = attrgetter("prompt_tokens")
_OUTPUT_OF: Final = attrgetter("output_tokens")
_COST_OF: Final = attrgetter("cost_recorded")
_DETAILED_OF: Final = attrgetter("detailed")
_PENDING_OF: Final = attrgetter("pending_approval")


def fill_of(rows: Sequence[RunView], sources_down: frozenset[str] = frozenset()) -> Fill:
    """The :class:`Fill` of ``rows``, every run looked at (:class:`RowTally` keeps it as
    the rows change, looking at the runs that changed)."""
    return RowTally(rows, sources_down).fill()


_COST_USD_OF: Final = attrgetter("cost_usd")
_NANO: Final = 1e9
"""Costs are added in billionths of a dollar, as integers: taken away again as runs change,
a float sum drifts (and would read ``-$0`` with every run gone); a billionth is well below
the four decimals a cost is written with."""


class RowTally:
    """What the rows shown add up to, kept as they change: the :class:`Fill` the table is
    laid out for, and the runs by status, tokens and cost the source line says.

    With 10,000 runs shown and a hundred live, the store has news twenty
    times a second and each time a hundred views are new: counted afresh,
    the table's fill and the source line's totals took ~25 ms of every
    refresh, over half a core. :meth:`update` finds the views that changed
    (by identity: the store makes a new view only for a run that changed)
    and takes each old one out of the counts and puts the new one in; only
    when most rows changed, or the sources down did (a live run's mark
    depends on them), is everything counted again, in passes in C.
    """

    __slots__ = (
        "costs",
        "damaged",
        "doing",
        "down",
        "looked_at",
        "marks",
        "recorded",
        "rows",
        "sources",
        "statuses",
        "tokens",
        "tokens_said",
    )

    def __init__(
        self, rows: Sequence[RunView] = (), sources_down: frozenset[str] = frozenset()
    ) -> None:
        self.rows: Sequence[RunView] = ()
        self.down: frozenset[str] = frozenset()
        self.statuses: Counter[RunStatus] = Counter()
        self.sources: Counter[str] = Counter()
        self.marks: Counter[tuple[str, str]] = Counter()
        """The runs by the glyph and word of their status as shown."""
        self.doing: Counter[int] = Counter()
        """The runs that say something in DOING NOW, by its length (up to DOING_MAX)."""
        self.tokens_said = 0
        """Runs whose TOKENS / COST cell says something (``…`` while counted included)."""
        self.damaged = 0
        """Runs with damaged lines."""
        self.tokens = 0
        self.costs = 0
        """Their costs added up, in billionths of a dollar."""
        self.recorded = 0
        """Runs some model call of which said its cost."""
        self.looked_at = 0
        """The runs the last update looked at (each view that went, each that came)."""
        self.recount(rows, sources_down)

    # -- keeping up ------------------------------------------------------------------

    def update(self, rows: Sequence[RunView], sources_down: frozenset[str]) -> None:
        """Count ``rows`` now shown in place of the last ones."""
        if sources_down != self.down:
            self.recount(rows, sources_down)
            return
        old = self.rows
        limit = 64 + len(rows) // 16
        gone: list[RunView]
        came: list[RunView]
        if len(old) == len(rows):
            # Same runs in the same places (the store patches new views in by position):
            # the places whose view is another object, found in C.
            places = [*compress(range(len(rows)), map(is_not, old, rows))]
            gone = [old[place] for place in places]
            came = [rows[place] for place in places]
        else:
            gone, came = [], []
        if len(old) != len(rows) or len(gone) > limit:
            before = dict(zip(map(id, old), old, strict=True))
            after = dict(zip(map(id, rows), rows, strict=True))
            if len(before.keys() ^ after.keys()) > 2 * limit:
                self.recount(rows, sources_down)
                return
            gone = [before[ident] for ident in before.keys() - after.keys()]
            came = [after[ident] for ident in after.keys() - before.keys()]
        self.looked_at = len(gone) + len(came)
        for run in gone:
            self._count(run, -1)
        for run in came:
            self._count(run, 1)
        self.rows = rows
        for counter in (self.statuses, self.sources, self.marks, self.doing):
            if any(count <= 0 for count in counter.values()):
                for key in [key for key, count in counter.items() if count <= 0]:
                    del counter[key]

    def _count(self, run: RunView, sign: int) -> None:
        summary = run.summary
        status = summary.status
        self.statuses[status] += sign
        self.sources[run.key.source] += sign
        down = status.is_live and run.key.source in self.down
        glyph, word, _ = status_mark(run, source_down=down)
        self.marks[(glyph, word)] += sign
        if status.is_live or status in _SAYS_WHY or summary.pending_approval is not None:
            length = min(DOING_MAX, len(doing_now(run, down=down)))
            if length:
                self.doing[length] += sign
        if run.prompt_tokens or run.output_tokens or run.cost_recorded or not run.detailed:
            self.tokens_said += sign
        if summary.damaged_lines:
            self.damaged += sign
        self.tokens += sign * (run.prompt_tokens + run.output_tokens)
        self.costs += sign * round(run.cost_usd * _NANO)
        self.recorded += sign * run.cost_recorded

    def recount(self, rows: Sequence[RunView], sources_down: frozenset[str]) -> None:
        """Count every run of ``rows``, in passes in C but for the few live runs and those
        that say why they ended (10,000 runs: ~10 ms)."""
        self.rows, self.down = rows, sources_down
        self.looked_at = len(rows)
        summaries = list(map(_SUMMARY_OF, rows))
        statuses = list(map(_STATUS_OF, summaries))
        self.statuses = Counter(statuses)
        self.sources = Counter(map(_SOURCE_OF, map(_KEY_OF, rows)))
        live = frozenset(status for status in self.statuses if status.is_live)
        self.marks = Counter()
        for status, count in self.statuses.items():
            if status not in live:  # an ended run's mark is its status's
                example = next(compress(rows, map(status.__eq__, statuses)))
                glyph, word, _ = status_mark(example)
                self.marks[(glyph, word)] += count
        # The runs DOING NOW says something of: live, ended saying why, or asked an approval.
        says = list(map((live | _SAYS_WHY).__contains__, statuses))
        asked = map(bool, map(_PENDING_OF, summaries))
        few = [*compress(rows, says), *compress(rows, map(and_, asked, map(not_, says)))]
        self.doing = Counter()
        for run in few:
            down = run.live and run.source in sources_down
            if run.live:
                glyph, word, _ = status_mark(run, source_down=down)
                self.marks[(glyph, word)] += 1
            length = min(DOING_MAX, len(doing_now(run, down=down)))
            if length:
                self.doing[length] += 1
        self.tokens_said = sum(
            map(
                any,
                zip(
                    map(_PROMPT_OF, rows),
                    map(_OUTPUT_OF, rows),
                    map(_COST_OF, rows),
                    map(not_, map(_DETAILED_OF, rows)),
                    strict=True,
                ),
            )
        )
        self.damaged = sum(map(bool, map(_DAMAGED_OF, summaries)))
        self.tokens = sum(map(_PROMPT_OF, rows)) + sum(map(_OUTPUT_OF, rows))
        self.costs = sum(map(round, map(_NANO.__mul__, map(_COST_USD_OF, rows))))
        self.recorded = sum(map(_COST_OF, rows))

    # -- what they add up to --------------------------------------------------------

    def fill(self) -> Fill:
        """What the rows put in the columns."""
        if not self.statuses:
            return UNKNOWN_FILL
        words = [status.value for status in self.statuses]
        if any(status.is_live for status in self.statuses):
            words.append("cancelling")  # a live run being canceled says so
            if self.down:
                words.append(UNKNOWN)
        empty = set()
        if not self.tokens_said:
            empty.add("tokens")
        if not self.damaged:
            empty.add("damaged")
        return Fill(
            status=2 + max(map(len, words)),  # the glyph, a space, the word
            source=min(SOURCE_MAX, max(map(len, self.sources))),
            empty=frozenset(empty),
            sources=len(self.sources),
            # Only said while a column is empty: DOING NOW asks their room for it.
            doing=max(self.doing, default=0) if empty else 0,
        )

    def totals(self) -> tuple[str, str]:
        """The runs by status (glyph and count, ``●2 ✔7 ✘1``); and their tokens and cost
        (``14.5k tok $0.0560``): nothing when no run said any, as the table says nothing."""
        if not self.rows:
            return "", ""
        counts = " ".join(
            f"{glyph}{count}" for (glyph, _), count in sorted(self.marks.items(), key=_by_word)
        )
        spent = f"{tokens_said(self.tokens)} tok" if self.tokens or self.recorded else ""
        if self.recorded:  # no run recorded a cost: say nothing, as the table does, never $0
            spent += f" {cost_said(self.costs / _NANO)}"
        return counts, spent


def _by_word(item: tuple[tuple[str, str], int]) -> tuple[int, str, str]:
    """Status words in the help's order; ``cancelling`` (of a run and of one awaiting an
    approval) after them, by glyph: the order never depends on which run was counted first."""
    (glyph, word), _ = item
    return (WORDS.index(word) if word in WORDS else len(WORDS), word, glyph)


_SAYS_WHY: Final = frozenset({RunStatus.FAILED, RunStatus.CANCELED})
"""Ended runs whose DOING NOW says why they ended."""


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

    Columns give way by priority (:data:`DROP_FIRST`), empty ones first, until DOING NOW
    has :data:`MIN_DOING` cells; narrower still, DOING NOW goes and the columns left give
    up cells (:data:`SQUEEZED`). The one sorted by (``keep``) stays, whole.
    """
    total = int(total)
    titles = {key: title for key, title, _ in COLUMNS}
    widths = {key: _natural(key, title, width, total, keep, fill) for key, title, width in COLUMNS}

    def fixed() -> int:  # the cells of every column but DOING NOW, and the spaces between
        return sum(widths.values()) + len(widths) - 1

    order = DROP_FIRST
    if fill.sources > 1:  # the source tells runs apart: it stays longer
        order = ("tokens", "damaged", "source", "started", "events", "duration")
    dropping = [key for key in order if key in fill.empty]
    dropping += [key for key in order if key not in dropping]
    for key in dropping:
        if total - fixed() >= MIN_DOING:
            break
        if key != keep:
            del widths[key]
    for key in dropping:
        # Wide enough for all, an empty column still gives DOING NOW its room, so as not to
        # cut what a run does beside a column with nothing in it (a walk at 160 columns).
        if key not in fill.empty or total - fixed() >= fill.doing:
            break
        if key != keep and key in widths:
            del widths[key]
    room = total - fixed()
    if room < MIN_DOING_SQUEEZED and keep != "doing":
        del widths["doing"]
        over = fixed() - total
        for key, least in SQUEEZED:
            if key in widths and key != keep and over > 0:
                take = max(0, min(over, widths[key] - least))
                widths[key] -= take
                over -= take
        if over > 0 and keep != "agent":
            widths.pop("agent", None)
        if over < 0 and "agent" in widths:  # no DOING NOW to take them: the names do
            widths["agent"] = max(widths["agent"], min(widths["agent"] - over, AGENT_WIDE))
    else:
        widths["doing"] = room
    return tuple((key, titles[key], width) for key, width in widths.items())


@functools.cache
def _layout(
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


QUESTION_ROOM: Final = 16
"""Cells of an unanswered question DOING NOW keeps, the word ``approval`` dropped for them
(at 80 columns the cell read ``approval unanswer…``, the question gone)."""

LAST_KNOWN: Final = "last known: "
"""Before what a run of a source down was last known to do: nobody knows what it does now."""


def doing_now(run: RunView, *, damage: bool = False, down: bool = False) -> str:
    """The DOING NOW cell: what a live run does, why an ended one failed or was canceled;
    with ``damage`` (no DAMAGED column on screen), a finished run's damaged lines. A live
    run of a source ``down`` (its status ``unknown``) did that when last heard of: said so
    (a walk read ``llm default`` beside ``unknown``, as if it were under way)."""
    doing = run.doing
    if down and doing:
        return LAST_KNOWN + doing
    if run.live or run.pending_approval is not None:  # what it waits on, or waited on
        return doing
    if run.status in _SAYS_WHY:
        return ended_reason(run)
    if damage and run.damaged_lines:
        return f"{run.damaged_lines} damaged line{'s' if run.damaged_lines != 1 else ''}"
    return ""


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

    cursor: reactive[int] = reactive(0, always_update=True)
    """The selected row."""
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
        self.tally = RowTally()
        """What the rows add up to, kept as they change: :attr:`fill`, and the totals the
        source line says."""
        self._selected_key: RunKey | None = None
        self._fixed_cells: dict[tuple[str, RunKey, str | None, str | None, int], str] = {}
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
        fill = self.tally.fill()
        if fill != self.fill:
            self.fill = fill
            self.refresh()  # every line is laid out again
        self.virtual_size = Size(self.size.width, len(rows))
        if self._selected_key is not None:
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
            # watch_cursor or the scroll redraws; if a run in view (where it was, or where the
            # selection went) wrote after the frame's instant, every line moves on first: a run
            # inserted above the selection read "now" beside a TIME of 0.2s.
            low, high = max(0, min(top, self.cursor - height)), max(top, self.cursor) + height
            if any((run.last_event_at or 0.0) > self.now for run in rows[low:high]):
                self._move_on()
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
        key = (column, run.key, run.skill, run.agent, size)
        text = self._fixed_cells.get(key)
        if text is None:
            if len(self._fixed_cells) > FIXED_CELLS:
                self._fixed_cells.clear()
            match column:
                case "run":
                    text = _cut_start(short_id(run.run_id), size)  # its distinctive end
                case "agent":
                    text = cell(skill_and_agent(run.skill, run.agent), size)
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
        columns = _layout(width, self.sort_key, self.fill)
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
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        if self.rows:
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
