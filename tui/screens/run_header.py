"""A run's header on its screen: how it stands, its counts, where it comes from, its input.

Plain text with styles (a :class:`~textual.content.Content`): the run screen shows it, and
tests read it without a screen.
"""

from __future__ import annotations

from typing import Final

from textual.content import Content

from inspector import RunKey, RunStore
from inspector.status_words import ended_reason
from tui.text import cell, inert, skill_and_agent
from tui.text.events import input_said, who_said
from tui.text.runs import now_or, replay_moments, run_time, status_mark, tokens_said
from tui.text.spending import budget_said, burn_said, runs_burn

SOURCE_ROOM: Final = 40
"""Cells the run's source and its state have at least (an 80-column screen's half)."""
INPUT_ROOM: Final = 30
"""Cells the source leaves for the run's input, on the header line they share."""
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


def run_header(
    store: RunStore, key: RunKey, clock: float | None, *, following: bool, width: int
) -> Content:
    """The run's status, ids, counts, input and error; errors in the theme's $error
    (a style resolved as it is drawn, so a new theme restyles it). ``following``: the
    event stream keeps the newest event selected; ``width``: the screen's."""
    run = store.get(key)
    if run is None:
        gone = inert(f"{key.run_id}: no longer in {key.source}", single_line=True)
        return Content.styled(gone, "bold")
    snapshot = store.snapshot()
    sources_down = snapshot.sources_down()
    down = run.source in sources_down
    glyph, word, _ = status_mark(run, source_down=down)
    parts: list[str | tuple[str, str]] = [
        (f"{glyph} {word}  ", "bold"),
        (cell(run.run_id, 60), "bold"),
        f"  {cell(skill_and_agent(run.skill, run.agent), 60)}\n",
    ]
    replaying = any(not source.live for source in snapshot.sources)
    moment = replay_moments(snapshot.runs).get(run.source) if replaying else None
    took = run_time(run, now_or(clock), sources_down.since.get(run.source), moment)
    count = "?" if run.event_count is None else run.event_count
    # Said first: it stays in view at 80x24. Only of a live run whose source is up:
    # beside "? stale", "◌ unknown" or a finished run's status, "following" would say
    # more events are on their way.
    if following and run.live and not down:
        parts.append(("following  ", "bold"))
    took = f"{took}  " if took else ""  # nothing known yet (a replay's first event)
    parts.append(f"{count} events")
    if run.damaged_lines:  # beside the events, not last: it stays in view at 80x24
        lines = f"{run.damaged_lines} damaged line{'' if run.damaged_lines == 1 else 's'}"
        parts.append((f", {lines}", "bold $error"))
    parts.append(f"  {took}{tokens_said(run, source_down=down)}")
    calls = f"{run.tool_calls} tool call{'' if run.tool_calls == 1 else 's'}"
    errors = f"{run.tool_errors} error{'' if run.tool_errors == 1 else 's'}"
    parts.append(f"  {calls} ({errors})")
    links = []
    if run.parent_run_id:
        links.append(f"parent {cell(run.parent_run_id, 40)} (p)")
    if run.resumed_from:
        to = "" if run.parent_run_id else " (p)"  # p goes to the parent first
        links.append(f"resumed from {cell(run.resumed_from, 40)}{to}")
    children = len(store.children(key))
    if children:
        links.append(f"{children} child run{'s' if children != 1 else ''} (T on the runs list)")
    # The source first on its line: a replay's state (paused, at 2x) reads whole at 80x24.
    where = source_said(store, run.source, width)
    parts.append(f"\n{where}  {input_said(run.input, 100)}  " + "  ".join(links))
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


def source_said(store: RunStore, name: str, width: int) -> str:
    """The run's source and how it stands, as the runs screen's source line says it:
    ``demo (live)``, ``sample (paused, at 2x)``, in the room the screen has (all but
    :data:`INPUT_ROOM`), a path in it cut in its directory, never in its file name."""
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
