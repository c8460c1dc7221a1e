"""The runs as ``runtop ls`` prints them: aligned lines, newest first, the status in colour.

Loaded only to print the table: ``runtop ls --json`` needs no Rich.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC
from typing import Final

from rich.cells import cell_len
from rich.text import Text

from inspector.ledger import RunStatus, RunSummary, parse_time
from inspector.status_words import without_status_word
from tui.text import (
    WITH_CHILDREN,
    cost,
    damaged_count,
    duration,
    inert,
    shorten,
    skill_and_agent,
    spent,
    tokens,
)
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


def runs_table(
    summaries: Sequence[RunSummary], parents: Collection[str] = (), columns: Sequence[str] = ()
) -> Text:
    """The runs as aligned lines, a header first, newest first as given; only the
    ``columns`` of a view, by the app's keys, when it names them (the run's id always).

    Laid out here rather than by a Rich Table, which measures every cell of
    every row again to lay it out: seconds for 10,000 runs. Each line is a few
    appends (the status and a damaged count in colour, the rest plain).
    """
    kept = sorted({1, *(index for key in columns for index in OF_THE_APP[key])})
    if not columns:
        kept = list(range(len(COLUMNS)))
    rows: list[list[str]] = []
    for summary in summaries:
        who = skill_and_agent(summary.skill, summary.agent)
        rows.append(
            [
                summary.status.value,
                inert(summary.run_id, single_line=True),
                shorten(inert(who, single_line=True), 32),
                _when(summary.started_at),
                _duration(summary),
                "?" if summary.event_count is None else str(summary.event_count),
                _tokens(summary, summary.run_id in parents),
                _cost(summary),
                damaged_count(summary.damaged_lines),
                inert(_note(summary, summary.run_id in parents), single_line=True),
            ]
        )
    widths = [_cells(title) for title, _ in COLUMNS]
    for row in rows:
        widths[0] = max(widths[0], 2 + len(row[0]))  # the mark, a space, the status
        for column in range(1, len(widths)):
            widths[column] = max(widths[column], _cells(row[column]))

    def cell(column: int, text: str) -> str:
        if column == kept[-1] and not COLUMNS[column][1]:
            return text  # the last, left-aligned: no blanks after it
        room = widths[column] - _cells(text)
        return " " * room + text if COLUMNS[column][1] else text + " " * room

    table = Text(no_wrap=True, overflow="ellipsis")
    header = "  ".join(cell(column, COLUMNS[column][0]) for column in kept)
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


def _tokens(summary: RunSummary, parent: bool) -> str:
    """The run's tokens, sent and answered, its child runs' too (``Σ5.8k``) when it has
    some; blank when no model call said (not 0)."""
    total = (summary.total or summary.totals).tokens
    if total is None:
        return WITH_CHILDREN if parent and _cost(summary) else ""
    return f"{WITH_CHILDREN if parent else ''}{tokens(total)}"


def _cost(summary: RunSummary) -> str:
    """What the run's model calls cost, its child runs' too."""
    usd = (summary.total or summary.totals).cost_usd
    return "" if usd is None else cost(usd)


def _cells(text: str) -> int:
    """Cells ``text`` takes on screen: its length when it is ASCII (most cells are, and
    ``cell_len`` costs more), else ``cell_len``."""
    return len(text) if text.isascii() else cell_len(text)
