"""The runs as ``runtop ls`` prints them: aligned lines, newest first, the status in colour.

Loaded only to print the table: ``runtop ls --json`` needs no Rich.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import UTC
from typing import Final

from rich.cells import cell_len
from rich.text import Text

from inspector.ledger import RunStatus, RunSummary, parse_time
from inspector.status_words import without_status_word
from tui.text import (
    WITH_CHILDREN,
    at_least,
    cost,
    damaged_count,
    duration,
    inert,
    run_name,
    shorten,
    spent,
    tokens,
)
from tui.text.runs import short_id
from tui.text.status_glyphs import STATUS_GLYPHS

STATUS_COLOURS: Final = {
    RunStatus.RUNNING: "cyan",
    RunStatus.AWAITING_APPROVAL: "yellow",
    RunStatus.SUCCEEDED: "green",
    RunStatus.FAILED: "red",
    RunStatus.CANCELED: "magenta",
    RunStatus.SUSPENDED: "yellow",
    RunStatus.ABANDONED: "red",
    RunStatus.STALE: "bright_black",
    RunStatus.IDLE: "bright_black",
    RunStatus.UNKNOWN: "bright_black",
}
"""The terminal colour of each status (its glyph: :data:`tui.text.status_glyphs.STATUS_GLYPHS`)."""


def _duration(summary: RunSummary) -> str:
    """How long it ran, by the rule the app and the timeline use too (so far, while live)."""
    return duration(summary.duration())


def _when(value: str | None) -> str:
    parsed = parse_time(value or "")
    if parsed is None:
        return inert(value or "", single_line=True)
    return parsed.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _note(summary: RunSummary, parent: bool = False) -> str:
    parts: list[str] = []
    if parent and summary.total is not None and summary.total.said:
        parts.append(f"with its child runs; own {spent(summary.totals)}")
    if summary.pending_approval is not None:
        prompt = summary.pending_approval.prompt or summary.pending_approval.approval_id
        waiting = "awaiting approval" if summary.status.waits else "approval unanswered"
        parts.append(f"{waiting}: {prompt}")
    if summary.cancel_requested:
        parts.append("cancelling…")
    if summary.error:  # beside ⊘ canceled, "wrong input file", not "canceled: wrong input file"
        parts.append(without_status_word(summary.error))
    if summary.warning_count:
        plural = "s" if summary.warning_count != 1 else ""
        parts.append(f"{summary.warning_count} warning{plural}")
    return shorten(inert("; ".join(parts), single_line=True), 80)


COLUMNS: Final = (
    ("STATUS", False),
    ("RUN ID", False),
    ("SKILL / AGENT", False),
    ("STARTED (UTC)", False),
    ("DURATION", True),
    ("EVENTS", True),
    ("TOKENS", True),
    ("COST", True),
    ("DAMAGED", True),
    ("NOTE", False),
)
"""Title of each column of ``runtop ls``, and whether it is right-aligned."""

OF_THE_APP: Final = {
    "status": (0,),
    "run": (1,),
    "agent": (2,),
    "started": (3,),
    "duration": (4,),
    "events": (5,),
    "tokens": (6, 7),
    "damaged": (8,),
    "doing": (9,),
    "source": (),
}
"""The columns of ``ls`` each column of the app's table stands for (a view names those):
its TOKENS / COST is two here, its DOING NOW the NOTE; ``ls`` has no SOURCE."""


RUN, AGENT, STARTED, DURATION, NOTE = 1, 2, 3, 4, 9
"""The columns that give way at a narrow terminal (:data:`GIVING_WAY`), by index."""

GIVING_WAY: Final = (
    ("empty", 0),
    ("short", RUN),
    ("short", STARTED),
    ("short", DURATION),
    ("cut", AGENT),
    ("drop", STARTED),
    ("drop", NOTE),
    ("cut", AGENT),
    ("drop", AGENT),
)
"""How the table gives way, a step at a time, while it is wider than the terminal: the
columns empty for every run go; the run's id says its distinctive end (``…9c2e7b3d8a60``,
which ``show`` takes too); STARTED drops its year and seconds; DURATION is titled TIME;
SKILL / AGENT is cut to :data:`AGENT_CUTS`; STARTED goes; NOTE goes (it takes the cells
left, :data:`NOTE_LEAST` at least, cut at the edge); SKILL / AGENT is cut again, then
goes. STATUS, the run and the numbers stay: at 80 columns the table was cut after SKILL /
AGENT and no number showed. A pipe gets every line whole, as wide as it is."""

NAME_CELLS: Final = 48
"""The most cells SKILL / AGENT takes, the terminal as wide as it may be (a coding agent's
session is named by its prompt as well: :func:`~tui.text.run_name`)."""
AGENT_CUTS: Final = (12, 8)
"""The cells SKILL / AGENT is cut to, the first time and the second."""
NOTE_LEAST: Final = 16
"""The cells NOTE needs to stay (its title and a few words; the rest is cut at the edge)."""


def runs_table(
    summaries: Sequence[RunSummary],
    parents: Collection[str] = (),
    columns: Sequence[str] = (),
    *,
    width: int | None = None,
) -> Text:
    """The runs as aligned lines, a header first, newest first as given; only the
    ``columns`` of a view, by the app's keys, when it names them (the run's id always);
    in ``width`` cells when given (a terminal's: the columns give way as
    :data:`GIVING_WAY` says), else every line whole.

    Laid out here rather than by a Rich Table, which measures every cell of
    every row again to lay it out: seconds for 10,000 runs. Each line is a few
    appends (the status and a damaged count in colour, the rest plain).
    """
    kept = sorted({1, *(index for key in columns for index in OF_THE_APP[key])})
    if not columns:
        kept = list(range(len(COLUMNS)))
    rows: list[list[str]] = []
    for summary in summaries:
        who = run_name(summary, NAME_CELLS)
        rows.append(
            [
                summary.status.value,
                inert(summary.run_id, single_line=True),
                who,
                _when(summary.started_at),
                _duration(summary),
                "?" if summary.event_count is None else str(summary.event_count),
                _tokens(summary, summary.run_id in parents),
                _cost(summary),
                damaged_count(summary.damaged_lines),
                inert(_note(summary, summary.run_id in parents), single_line=True),
            ]
        )
    titles = [title for title, _ in COLUMNS]
    widths = [_width(titles, rows, column) for column in range(len(COLUMNS))]
    if width is not None:
        kept = _fit(titles, rows, widths, kept, width)

    def cell(column: int, text: str) -> str:
        if column == kept[-1] and not COLUMNS[column][1]:
            return text  # the last, left-aligned: no blanks after it
        room = widths[column] - _cells(text)
        return " " * room + text if COLUMNS[column][1] else text + " " * room

    table = Text(no_wrap=True, overflow="ellipsis")
    header = "  ".join(cell(column, titles[column]) for column in kept)
    table.append(header.rstrip() + "\n", style="bold")
    for row, summary in zip(rows, summaries, strict=True):
        mark, colour = STATUS_GLYPHS[summary.status], STATUS_COLOURS[summary.status]
        cells: list[tuple[str, str | None]] = []
        for column in kept:
            if column == 0:
                cells.append((cell(0, f"{mark} {row[0]}"), colour))
            elif column == 8:
                cells.append((cell(8, row[8]), "red" if summary.damaged_lines else None))
            else:
                cells.append((cell(column, row[column]), None))
        while len(cells) > 1 and not cells[-1][0].strip():
            cells.pop()  # no trailing blanks where the last cells are empty
        for number, (text, style) in enumerate(cells):
            if number:
                table.append("  ")
            table.append(text.rstrip() if number == len(cells) - 1 else text, style)
        table.append("\n")
    table.rstrip()
    return table


def _width(titles: Sequence[str], rows: Sequence[Sequence[str]], column: int) -> int:
    """The cells ``column`` takes: its title's, or its widest cell's (the status's with its
    mark and a space)."""
    extra = 2 if column == 0 else 0
    return max([_cells(titles[column]), *(extra + _cells(row[column]) for row in rows)])


def _fit(
    titles: list[str], rows: list[list[str]], widths: list[int], kept: list[int], room: int
) -> list[int]:
    """The columns of ``kept`` that stay in ``room`` cells, ``titles``, ``rows`` and
    ``widths`` made narrower as :data:`GIVING_WAY` says."""
    kept = list(kept)
    cuts = iter(AGENT_CUTS)

    def cells() -> int:
        fixed = [widths[column] for column in kept if column != NOTE]
        if NOTE in kept:
            fixed.append(min(widths[NOTE], NOTE_LEAST))
        return sum(fixed) + 2 * (len(kept) - 1)

    for step, column in GIVING_WAY:
        if cells() <= room:
            break
        if step == "empty":
            kept = [c for c in kept if c < 2 or any(row[c] for row in rows)]
            continue
        if column not in kept:
            continue
        if step == "drop":
            kept.remove(column)
        elif step == "cut":
            most = next(cuts)
            for row in rows:
                row[column] = shorten(row[column], most)
            titles[column] = "SKILL / AGENT" if most >= len("SKILL / AGENT") else "SKILL"
        elif column == RUN:
            for row in rows:
                row[column] = short_id(row[column])
        elif column == STARTED:
            for row in rows:  # 2026-11-28 14:30:50: 11-28 14:30
                row[column] = row[column][5:16] if _STAMP.fullmatch(row[column]) else row[column]
            titles[column] = "STARTED UTC"
        else:
            titles[column] = "TIME"
        widths[column] = _width(titles, rows, column)
    return kept


_STAMP: Final = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
"""A start as :func:`_when` writes it (a start not understood is written as it was)."""


def _tokens(summary: RunSummary, parent: bool) -> str:
    """The run's tokens, sent and answered, its child runs' too (``Σ5.8k``) when it has
    some; blank when no model call said (not 0)."""
    totals = summary.total or summary.totals
    if totals.tokens is None:
        return WITH_CHILDREN if parent and _cost(summary) else ""
    return f"{WITH_CHILDREN if parent else ''}{at_least(totals)}{tokens(totals.tokens)}"


def _cost(summary: RunSummary) -> str:
    """What the run's model calls cost, its child runs' too."""
    totals = summary.total or summary.totals
    return "" if totals.cost_usd is None else f"{at_least(totals)}{cost(totals.cost_usd)}"


def _cells(text: str) -> int:
    """Cells ``text`` takes on screen: its length when it is ASCII (most cells are, and
    ``cell_len`` costs more), else ``cell_len``."""
    return len(text) if text.isascii() else cell_len(text)
