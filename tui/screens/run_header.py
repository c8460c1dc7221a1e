"""A run's header on its screen: how it stands, its counts, where it comes from, its input.

Plain text with styles (a :class:`~textual.content.Content`): the run screen shows it, and
tests read it without a screen.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from rich.cells import cell_len
from textual.content import Content

from inspector import RunKey, RunStore, RunView
from inspector.status_words import ended_reason
from tui.text import cell, inert, skill_and_agent
from tui.text.events import input_said, who_said
from tui.text.runs import (
    MODEL_CALL_RUNNING,
    model_call_running,
    now_or,
    replay_moments,
    run_time,
    short_id,
    spent_forms,
    status_mark,
)
from tui.text.spending import budget_said, burn_said, runs_burn

SOURCE_ROOM: Final = 40
"""Cells the run's source and its state have at least (an 80-column screen's half)."""
INPUT_ROOM: Final = 30
"""Cells the source leaves for the run's input, on the header line they share."""
NAME_KEPT: Final = 16
"""Cells a run's skill and agent keep on a crowded first line before its id says only its
end (``…9c2e7b3d8a60``); then the name is cut to the room left."""
CROWDED_SOURCE_ROOM: Final = 32
"""Cells the run's source keeps at least where its line is crowded (a third of the line,
its path cut in its directory): the input and the runs it is linked to have the rest."""
SHORTEST_PATH: Final = 8
"""A path cut to fewer cells than this says nothing: the whole text is cut instead."""


def fit_path(text: str, limit: int) -> str:
    """``text`` in ``limit`` cells, cut where it says least: a path in it (its last word
    with a ``/``) in the middle of its directory, keeping its file name
    (``live, ledgers in /tmp/…/runtop-demo-zd03``); text without one in its middle,
    keeping its end (``run_2026…a60.jsonl``). A cut is marked ``…``.
    """
    if len(text) <= limit:
        return text
    if limit < 2:
        return "…"[:limit]
    before, space, word = text.rpartition(" ")
    if "/" in word:
        room = limit - len(before) - len(space)
        if room >= SHORTEST_PATH:
            return before + space + _fit_one_path(word, room)
    keep = (limit - 1) // 2
    return text[: limit - 1 - keep] + "…" + text[len(text) - keep :]


def _fit_one_path(path: str, limit: int) -> str:
    directory, _, name = path.rpartition("/")
    if len(name) + 2 > limit:  # the name alone is too long: its end, where it differs
        return "…" + path[len(path) - (limit - 1) :]
    keep = limit - len(name) - 2
    return directory[:keep] + "…/" + name


class Said(NamedTuple):
    """A part of a header's line: its forms, longest first (``""``: gone), its style, and
    what stands between it and the part before it (``", "`` binds it to that part: with
    that part gone, two spaces)."""

    forms: tuple[str, ...]
    style: str = ""
    joint: str = "  "


GIVING_WAY: Final = ("spent", "calls", "spent", "events", "calls")
"""The parts of a run's counts that give way, in this order, a form at a time, while the
line is wider than the header: the tokens and cost say ``tok`` (a parent's ``Σ``, its
own in brackets) and the tool calls lose ``(0 errors)``; a parent's own spending goes;
the count of events goes (the list below shows them); the tool calls are said ``⚙3 ✘1``,
as the event list marks them. What a run is doing and what it costs never give way: its
clock, its totals, its damage, a model call running, ``following``. At 80 columns,
``(own 912 tokens $0.00…`` was cut mid-figure and the tool calls were gone."""


def fitted(
    parts: dict[str, Said],
    room: int,
    order: tuple[str, ...] = GIVING_WAY,
    *,
    elastic: str = "",
) -> Content:
    """``parts`` on one line of ``room`` cells: their longest forms that fit, the parts
    giving way in ``order``; then the ``elastic`` one (text, not a figure) is cut to the
    cells left, :data:`SHORTEST_PATH` at least; what still does not fit is cut at the
    edge."""
    step = dict.fromkeys(parts, 0)
    chosen = {name: part.forms[0] for name, part in parts.items()}

    def pieces() -> list[tuple[str, str]]:
        shown: list[tuple[str, str]] = []
        bound = False  # the part just before is shown: a ", " joint binds to it
        for name, part in parts.items():
            text = chosen[name]
            if text and shown and bound and part.joint != "  ":  # bound: said as the part
                text = part.joint + text
            elif text and shown:
                shown.append(("  ", ""))
            if text:
                shown.append((text, part.style))
            bound = bool(text)
        return shown

    def over() -> int:
        return sum(cell_len(text) for text, _ in pieces()) - room

    for name in order:
        if over() <= 0:
            break
        if name in parts and step[name] + 1 < len(parts[name].forms):
            step[name] += 1
            chosen[name] = parts[name].forms[step[name]]
    if elastic in chosen and over() > 0:
        text = chosen[elastic]
        chosen[elastic] = cell(text, max(SHORTEST_PATH, cell_len(text) - over()))
    return Content.assemble(*pieces())


def counts_line(run: RunView, took: str, *, following: bool, down: bool, room: int) -> Content:
    """``following  7 events  13s  2.9k tokens $0.0102  3 tool calls (1 error)``: how a
    run stands, in ``room`` cells (the parts give way as :data:`GIVING_WAY` says)."""
    running = model_call_running(run, source_down=down)
    count = "?" if run.event_count is None else f"{run.event_count:,}"
    calls, errors = run.tool_calls, run.tool_errors
    said_calls = f"{calls:,} tool call{'' if calls == 1 else 's'}"
    said_errors = f"{errors:,} error{'' if errors == 1 else 's'}"
    whole = f"{said_calls} ({said_errors})"
    parts = {
        "following": Said(("following",) if following else ("",), "bold"),
        "events": Said((f"{count} events", "")),
    }
    if run.damaged_lines:  # beside the events, not last: it stays in view at 80x24
        lines = f"{run.damaged_lines:,} damaged line{'' if run.damaged_lines == 1 else 's'}"
        parts["damaged"] = Said((lines,), "bold $error", ", ")
    parts["took"] = Said((took,))  # nothing known yet: "" (a replay's first event)
    parts["spent"] = Said(spent_forms(run, running=running))
    if running:
        parts["running"] = Said((MODEL_CALL_RUNNING,), joint=", ")
    parts["calls"] = Said(
        (
            whole,
            whole if errors else said_calls,
            f"⚙{calls:,} ✘{errors:,}" if errors else f"⚙{calls:,}",
        )
    )
    return fitted(parts, room)


SOURCE_GIVING_WAY: Final = ("children", "source", "parent", "resumed")
"""The parts of a header's source line that give way, in this order, a form at a time:
the child runs' hint says only its key (``2 child runs (T)``); the source has a third of
the line (:data:`CROWDED_SOURCE_ROOM` at least: its path cut in its directory); the links
to a parent and a run resumed say their id's end (``parent …9c2e7b3d8a60 (p)``, an id
``show`` takes too); then the input is cut to the room left. At 80 columns the links were
cut off the line's end, ``(p)`` and all."""


def source_line(store: RunStore, run: RunView, key: RunKey, width: int) -> Content:
    """``demo (live)  input {"q": "…"}  parent …9c2e7b3d8a60 (p)  2 child runs (T)``:
    where the run comes from, what it was given, and the runs it is linked to."""
    # The source first on its line: a replay's state (paused, at 2x) reads whole at 80x24.
    parts = {
        "source": Said(
            (
                source_said(store, run.source, width),
                source_said(store, run.source, width, room=max(CROWDED_SOURCE_ROOM, width // 3)),
            )
        ),
        "input": Said((input_said(run.input, 100),)),
    }
    if run.parent_run_id:
        parent = f"parent {cell(run.parent_run_id, 40)} (p)"
        parts["parent"] = Said((parent, f"parent {short_id(run.parent_run_id)} (p)"))
    if run.resumed_from:
        to = "" if run.parent_run_id else " (p)"  # p goes to the parent first
        resumed = f"resumed from {cell(run.resumed_from, 40)}{to}"
        parts["resumed"] = Said((resumed, f"resumed from {short_id(run.resumed_from)}{to}"))
    children = len(store.children(key))
    if children:
        runs = f"{children} child run{'s' if children != 1 else ''}"
        parts["children"] = Said((f"{runs} (T on the runs list)", f"{runs} (T)"))
    return fitted(parts, width, SOURCE_GIVING_WAY, elastic="input")


def run_header(
    store: RunStore, key: RunKey, clock: float | None, *, following: bool, width: int
) -> Content:
    """The run's status, ids, counts, input and error; errors in the theme's $error
    (a style resolved as it is drawn, so a new theme restyles it). ``following``: the
    event stream keeps the newest event selected; ``width``: the cells of its lines (the
    screen's but its padding, fewer with the keys help open)."""
    run = store.get(key)
    if run is None:
        gone = inert(f"{key.run_id}: no longer in {key.source}", single_line=True)
        return Content.styled(gone, "bold")
    snapshot = store.snapshot()
    sources_down = snapshot.sources_down()
    down = run.source in sources_down
    glyph, word, _ = status_mark(run, source_down=down)
    agent = cell(skill_and_agent(run.skill, run.agent), 60)
    named = {
        "status": Said((f"{glyph} {word}",), "bold"),
        "run": Said((cell(run.run_id, 60), short_id(run.run_id)), "bold"),
        "agent": Said((agent, cell(agent, NAME_KEPT))),
    }
    parts: list[str | tuple[str, str] | Content] = [
        fitted(named, width, ("agent", "run"), elastic="agent"),
        "\n",
    ]
    replaying = any(not source.live for source in snapshot.sources)
    moment = replay_moments(snapshot.runs).get(run.source) if replaying else None
    took = run_time(run, now_or(clock), sources_down.since.get(run.source), moment)
    parts.append(
        counts_line(run, took, following=following and run.live and not down, down=down, room=width)
    )
    parts.append("\n")
    parts.append(source_line(store, run, key, width))
    now = now_or(clock)
    burn = runs_burn((run,), now)
    spending = [part for part in (burn_said(burn), budget_said(run, burn, now)) if part]
    if spending:  # over the last minute, and what it leaves of a budget
        parts.append("\n" + "  ".join(spending))
    described = who_said(run.summary)
    if described:  # who it was for, which conversation: OpenTelemetry runs say it
        parts.append(f"\n{described}")
    if run.pending_approval is not None:  # what it asks, as the table's DOING NOW says it
        parts.append((f"\n{cell(run.doing, 200)}", "bold $warning"))
    if run.error:  # why it ended, the status word said once (above), as the table says it
        parts.append((f"\n{cell(ended_reason(run), 200)}", "$error"))
    return Content.assemble(*parts)


def source_said(store: RunStore, name: str, width: int, *, room: int | None = None) -> str:
    """The run's source and how it stands, as the runs screen's source line says it:
    ``demo (live)``, ``sample (paused, at 2x)``, in the room the screen has (all but
    :data:`INPUT_ROOM`; ``room`` cells when given), a path in it cut in its directory, never
    in its file name."""
    if room is None:
        room = max(SOURCE_ROOM, width - INPUT_ROOM)
    shown = inert(name, single_line=True)
    state = next((s for s in store.snapshot().sources if s.name == name), None)
    if state is None:
        return fit_path(shown, room)
    if state.error:
        said = state.error
    elif not state.available:
        said = "unavailable"
    else:
        said = state.status or ("live" if state.live else "replay")
    said = inert(said, single_line=True)
    if len(shown) + len(said) + 3 > room:  # the name its half at least, the state the rest
        shown = fit_path(shown, max(room // 2, room - len(said) - 3))
    return f"{shown} ({fit_path(said, room - len(shown) - 3)})"
