"""A timeline as text: the columns of a row, where a bar falls, the ruler, the summary.

The TUI's timeline view and ``runtop show --timeline`` lay rows out the
same way with these: a label column (the node's name indented under its
parent), a numbers column (duration, tokens), and the bars, scaled so that
a window of the run's time fills the width. Nothing here draws or knows
Textual; every name from a ledger passes through :func:`tui.text.inert`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final, NamedTuple

from inspector.status_words import (
    CALL_CANCELED,
    CALL_ERROR,
    CALL_OK,
    CALL_UNFINISHED,
    STILL_GOING,
)
from inspector.timeline import NodeKind, Outcome, Timeline, TimelineNode, TimelineSummary
from tui.text import cost, duration, inert, offset, tokens, tokens_or_unsaid

KIND_GLYPHS: Final = {
    NodeKind.MODEL: "◆",
    NodeKind.TOOL: "⚙",
    NodeKind.APPROVAL: "?",
    NodeKind.STEP: "▸",
    NodeKind.CHILD_RUN: "▶",
}
"""The mark of each kind of node (the event stream's marks for model and tool calls)."""

OUTCOME_WORDS: Final = {
    Outcome.RUNNING: STILL_GOING,
    Outcome.OK: "",
    Outcome.ERROR: CALL_ERROR,
    Outcome.DENIED: "denied",
    Outcome.CANCELED: CALL_CANCELED,
    Outcome.UNFINISHED: CALL_UNFINISHED,
}

BAR: Final = "█"
POINT: Final = "▏"
"""A node of no length (its start unknown, or instant)."""
OPEN_END: Final = "▸"
"""The right end of a bar still in flight."""
CUT_LEFT: Final = "←"
CUT_RIGHT: Final = "→"
"""A bar that goes on past the window's edge (zoomed in): not :data:`OPEN_END`, which
says the node is still running."""

NUMBERS_WIDTH: Final = 13
"""``0.9s 2.3k tok``: a duration and a model call's tokens (more take the label's cells:
:func:`row_head`)."""
MIN_LABEL: Final = 12
"""The fewest cells a label keeps: its mark and a name's first letters."""
INDENT: Final = 2
"""Cells of indentation per level of nesting."""
MAX_INDENT_LEVELS: Final = 8
"""Deeper nesting is drawn at this depth (the label stays readable)."""


class Columns(NamedTuple):
    """Where a row's parts go, for a width."""

    label: int
    numbers: int
    bars: int

    @property
    def bars_at(self) -> int:
        """The cell the bars start at."""
        return self.label + 1 + self.numbers + 1


def columns(width: int, nodes: Iterable[TimelineNode] = (), now: float | None = None) -> Columns:
    """Split ``width`` cells into label, numbers and bars (names get a third, 12 to 36).

    The numbers are as wide as the widest of the ``nodes``' (a model call's tokens said
    where they fit, taking the labels' cells down to :data:`MIN_LABEL`): every label is
    cut at one width (a model's name was cut a cell shorter beside ``8.0s 16.6k tok``
    than beside ``17s 16.5k tok``).
    """
    said = NUMBERS_WIDTH if width >= 50 else 6
    label = max(MIN_LABEL, min(36, (width - said) // 3))
    room = said + max(0, label - MIN_LABEL)
    widest = max((len(numbers(node, 0, now, room=room)) for node in nodes), default=0)
    more = max(0, min(widest, room) - said)
    said, label = said + more, label - more
    bars = max(1, width - label - said - 2)
    return Columns(label, said, bars)


class BarCells(NamedTuple):
    """Where a node's bar falls in the bars column: cells ``begin`` to ``end`` (exclusive)."""

    begin: int
    end: int
    before: bool
    """The node starts before the window (its bar is cut at the left)."""
    after: bool
    """The node ends after the window (cut at the right)."""
    point: bool
    """Zero length: drawn as a thin mark."""


def bar_cells(
    start: float, end: float, window: tuple[float, float], width: int, *, clamp: bool = False
) -> BarCells | None:
    """The cells ``start``..``end`` covers in ``width`` cells showing ``window``.

    A bar is at least one cell wide, so a short call still shows. A node wholly outside
    the window is ``None`` (zoomed in, it is off to one side), unless ``clamp``: the
    window is the run's whole axis, and a node off it (a sub-agent that began before
    its parent's first event, a writer's clock that differs) is drawn as one cut cell at
    the edge it lies beyond, never lost.
    """
    low, high = window
    span = high - low
    if span <= 0 or width <= 0:
        return BarCells(0, 1, False, False, end <= start) if width > 0 else None
    if end < low or start > high:
        if not clamp:
            return None
        if end < low:
            return BarCells(0, 1, True, False, False)
        return BarCells(width - 1, width, False, True, False)
    scale = width / span
    begin = math.floor((start - low) * scale)
    finish = math.ceil((end - low) * scale)
    before, after = begin < 0, finish > width
    begin = min(max(begin, 0), width - 1)
    finish = min(max(finish, begin + 1), width)
    return BarCells(begin, finish, before, after, end <= start)


def bar_text(cells: BarCells, *, in_flight: bool) -> str:
    """The characters of a bar (its cells, from ``begin``)."""
    size = cells.end - cells.begin
    if cells.point:
        return POINT
    body = [BAR] * size
    if in_flight and not cells.after:
        body[-1] = OPEN_END
    if cells.before:
        body[0] = CUT_LEFT
    if cells.after:
        body[-1] = CUT_RIGHT
    return "".join(body)


def label(node: TimelineNode, width: int) -> str:
    """The node's mark and name, indented under its parent, cut to ``width`` cells."""
    indent = " " * (INDENT * min(node.depth, MAX_INDENT_LEVELS))
    name = inert(node.name or node.id, single_line=True)
    text = f"{indent}{KIND_GLYPHS[node.kind]} {name}"
    return text[: width - 1] + "…" if len(text) > width else text.ljust(width)


def numbers(
    node: TimelineNode, width: int, now: float | None = None, *, room: int | None = None
) -> str:
    """Duration (while in flight, the time so far and ``…``, or ``no end`` without a
    ``now``), then a model call's tokens or an outcome that is not ok, if they fit in
    ``room`` cells (``width`` unless given); right-aligned in ``width``, or longer."""
    if node.duration is not None:
        text = duration(node.duration)
    elif now is not None:
        text = duration(max(0.0, now - node.start)) + "…"
    else:
        text = "no end"
    more = ""
    if node.tokens is not None:
        more = f"{tokens(node.tokens)} tok"
    elif node.outcome not in (Outcome.OK, Outcome.RUNNING):
        more = OUTCOME_WORDS[node.outcome]
    if more and len(text) + 1 + len(more) <= max(width, room or 0):
        text = f"{text} {more}"
    return text[: max(width, room or 0)].rjust(width)


def row_head(node: TimelineNode, cols: Columns, now: float | None = None) -> tuple[str, str]:
    """A row's label and numbers, ``cols.label + 1 + cols.numbers`` cells between them.

    A model call's tokens (or an outcome) that do not fit the numbers column take cells
    from the label, down to its :data:`MIN_LABEL`: ``7.3s 26.0k tok`` is more use than
    the last letters of a model's long name, and a coding agent's calls, sent their whole
    conversation (cache reads included), run to tens of thousands of tokens each.
    """
    said = numbers(node, cols.numbers, now, room=cols.numbers + max(0, cols.label - MIN_LABEL))
    return label(node, cols.label - (len(said) - cols.numbers)), said


def node_facts(node: TimelineNode, origin: float) -> list[str]:
    """What the detail pane says of a node above its event: kind, name, times, outcome, notes."""
    outcome = OUTCOME_WORDS[node.outcome] or CALL_OK
    # A node with no end has no time to give: "running · running" said it twice.
    took = f"  ·  {duration(node.duration)}" if node.duration is not None else ""
    lines = [
        inert(f"{node.kind} {node.name}  ·  {outcome}{took}", single_line=True),
        inert(
            f"node {node.id}  ·  from {offset(node.start - origin)}"
            + (f" to {offset(node.end - origin)}" if node.end is not None else ""),
            single_line=True,
        ),
    ]
    if node.tokens is not None:
        spent = f"  ·  {cost(node.cost_usd)}" if node.cost_usd is not None else ""
        lines.append(
            inert(
                f"{node.model or 'model'}  ·  {tokens_or_unsaid(node.prompt_tokens)} prompt + "
                f"{tokens_or_unsaid(node.output_tokens)} output tokens{spent}",
                single_line=True,
            )
        )
    if node.parent is not None:
        lines.append(inert(f"inside {node.parent.kind} {node.parent.name}", single_line=True))
    if node.run_id is not None:
        lines.append("Enter opens the child run")
    lines.extend(inert(f"note: {note}", single_line=True) for note in node.notes)
    return lines


def _tick_step(seconds: float, ticks: int) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks."""
    if seconds <= 0 or ticks <= 0:
        return 1.0
    raw = seconds / ticks
    power: float = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def _tick_label(offset: float, step: float) -> str:
    """A tick's time in the one way every axis writes it: the fewest digits that say it
    exactly (``0s``, ``0.5s``, ``1s``, ``0.02s``; minutes as durations are, ``1m40s``).

    The start is ``0s`` on every axis, never ``0.0s`` on one and ``0s`` on the next
    (digits that went by the step would write a run of 0.3 s ``0.00s 0.02s`` and one
    of 30 s ``0s 5s``).
    """
    if step >= 60:
        return duration(offset)
    digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    written = f"{offset:.{digits}f}"
    if "." in written:
        written = written.rstrip("0").rstrip(".")
    return f"{written}s"


def ruler(window: tuple[float, float], origin: float, width: int) -> str:
    """Tick labels over the bars column: seconds from ``origin`` (the run's start)."""
    low, high = window
    if high <= low or width < 4:
        return " " * max(0, width)
    step = _tick_step(high - low, max(1, width // 10))
    cells = [" "] * width
    first = math.ceil((low - origin) / step - 1e-9)
    index = first
    scale = width / (high - low)
    while True:
        offset = index * step
        at = round((origin + offset - low) * scale)
        if at >= width:
            break
        text = "┊" + _tick_label(offset, step)
        fits = at + len(text) <= width
        if at >= 0 and fits and all(c == " " for c in cells[max(0, at - 1) : at + len(text)]):
            cells[at : at + len(text)] = text
        index += 1
    return "".join(cells)


def summary_text(summary: TimelineSummary) -> str:
    """One line: wall time, then where it went (each instant counted once; see the model),
    the most telling first, so that a narrow pane cuts the least."""
    parts = [f"wall {duration(summary.wall)}"]
    if summary.model_calls:
        parts.append(f"model {duration(summary.model)}")
    if summary.tool_calls:
        tools = f"tools {duration(summary.tools)}"
        if summary.tool_time > summary.tools + 0.05:
            tools += f" ({duration(summary.tool_time)} summed)"
        parts.append(tools)
    if summary.approval_count:
        parts.append(f"approvals {duration(summary.approvals)}")
    parts.append(f"idle {duration(summary.idle)}")
    if summary.child_run_count:
        inside, outside = summary.child_runs, summary.child_runs_outside
        if outside < 0.0005:
            parts.append(f"child runs {duration(inside)}")
        elif inside < 0.0005:
            parts.append(f"child runs {duration(outside)} outside the run's time")
        else:
            parts.append(f"child runs {duration(inside)} (+{duration(outside)} outside)")
    if summary.steps > 0.05:
        parts.append(f"steps {duration(summary.steps)}")
    used = summary.prompt_tokens + summary.output_tokens
    counts = f"{summary.nodes:,} node{'' if summary.nodes == 1 else 's'}"
    if used:
        counts += f", {tokens(used)} token{'' if used == 1 else 's'}"
    if summary.in_flight:
        counts += f", {summary.in_flight} {STILL_GOING}"
    parts.append(counts)
    return " · ".join(parts)


def damage_text(timeline: Timeline) -> str:
    """What the ledger held that the timeline could not use, or ``""``."""
    parts = []
    if timeline.damaged:
        parts.append(f"{timeline.damaged:,} damaged line{'s' if timeline.damaged != 1 else ''}")
    if timeline.untimed:
        parts.append(
            f"{timeline.untimed:,} event{'s' if timeline.untimed != 1 else ''} without a time"
        )
    noted = sum(1 for node in timeline.nodes() if node.notes)
    if noted:
        parts.append(f"{noted:,} node{'s' if noted != 1 else ''} with a note")
    return ", ".join(parts)


def _wrapped(parts: list[str], width: int) -> list[str]:
    """``parts`` joined by `` · `` into lines of at most ``width`` (a part is never split)."""
    lines: list[str] = []
    current = ""
    for part in parts:
        joined = f"{current} · {part}" if current else part
        if current and len(joined) > width:
            lines.append(current)
            current = part
        else:
            current = joined
    if current:
        lines.append(current)
    return lines


def render_lines(
    timeline: Timeline, width: int, now: float | None = None, *, status: str | None = None
) -> list[str]:
    """The whole timeline as lines of text ``width`` wide (``runtop show --timeline``),
    headed by the run's ``status`` word (its summary's: a stale run is not running) or,
    without one, what the timeline read."""
    window = timeline.span(now)
    end = window[1]
    cols = columns(width, timeline.rows(), now)
    head = summary_text(timeline.summary(now))
    damage = damage_text(timeline)
    status = status or timeline.status or ("running" if timeline.run_end is None else "")
    lines = [inert(f"{timeline.run_id or ''}  {timeline.name or ''}  {status}", single_line=True)]
    lines.extend(_wrapped(head.split(" · "), width))
    if damage:
        lines.append("note: " + damage)
    lines.append((" " * cols.bars_at + ruler(window, window[0], cols.bars)).rstrip())
    for node in timeline.rows():
        cells = bar_cells(node.start, node.end_or(end), window, cols.bars, clamp=True)
        bar = ""
        if cells is not None:
            bar = " " * cells.begin + bar_text(cells, in_flight=node.in_flight)
        name, said = row_head(node, cols, now)
        row = f"{name} {said} {bar}"
        lines.append(row.rstrip())
        for note in node.notes:
            lines.append(" " * (cols.label + 1) + inert(f"  note: {note}", single_line=True))
    if not len(timeline):
        lines.append("(no model calls, tool calls, approvals or steps in this run)")
    return lines


__all__ = [
    "KIND_GLYPHS",
    "OUTCOME_WORDS",
    "BarCells",
    "Columns",
    "bar_cells",
    "bar_text",
    "columns",
    "damage_text",
    "label",
    "node_facts",
    "numbers",
    "render_lines",
    "row_head",
    "ruler",
    "summary_text",
]
