"""The text of runs and events, for the app and ``runtop show`` alike; Textual draws none of it.

- :mod:`tui.text.runs`: a run's status, times, tokens and cost in the runs table and header;
- :mod:`tui.text.status_glyphs`: the one glyph of each run status;
- :mod:`tui.text.events`: one readable line per event;
- :mod:`tui.text.entries`: which events join into one entry of the event stream;
- :mod:`tui.text.conversation`: a model call's messages;
- :mod:`tui.text.timeline`: a timeline's rows, bars, ruler and summary.

This module holds what they all use: untrusted text made safe to show, and
the words for durations, tokens and cost.

Ledgers carry prompts, tool arguments and outputs: anything at all,
escape sequences included. Every string shown passes through here first,
so that an ESC or a CSI byte appears as visible text and can never move
the cursor, retitle the window or change colours. Markup is a separate
matter: strings are always handed to Rich as :class:`rich.text.Text`,
never parsed as markup.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from inspector.actions import AGENT_RESUME
from inspector.ledger import RunSummary, RunTotals
from inspector.ledger import duration as duration  # the one way a duration is written

_CONTROL: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""C0 (bar tab and newline), DEL, C1, and the bidirectional overrides that reorder a line."""

HOW_TO_START: Final = "To see runtop at work: runtop demo (or runtop samples: six sample runs)"
"""What an empty listing of a fresh home says next, in ``runtop ls`` and the app alike."""

_NAMED: Final = {"\x1b": "␛", "\r": "␍", "\x00": "␀", "\x07": "␇", "\x08": "␈"}

_JSON_UNSAFE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""C0 but tab and newline (ESC among them), DEL, C1, line separators and bidi controls."""


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str, *, single_line: bool = False) -> str:
    """``text`` with every control character replaced by a visible stand-in.

    Args:
        text: untrusted text.
        single_line: also show newlines and tabs as ``⏎`` and ``⇥``, for a table cell.
    """
    cleaned = _CONTROL.sub(_visible, text)
    if single_line:
        cleaned = cleaned.replace("\n", "⏎").replace("\t", "⇥")
    return cleaned


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    # A raw CR in valid JSON can only be whitespace between tokens (inside a string
    # it must be escaped already): a space means the same and cannot rewrite the line.
    return " " if char == "\r" else f"\\u{ord(char):04x}"


def json_safe(line: str) -> str:
    """A JSON text with raw control characters written as ``\\uXXXX`` escapes.

    JSON allows C1 controls, bidi overrides and U+2028/2029 raw inside
    strings, and a terminal would act on them; a ledger's raw line may even
    hold an ESC. Escaped, the JSON means the same and shows inert.
    """
    return _JSON_UNSAFE.sub(_json_escape, line)


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def offset(seconds: float) -> str:
    """``+0.200s``, ``+12.345s``, ``+72h00m05.120s``: when an event happened, from the start
    of its run.

    The one way an event's time within its run is written: the event stream, the
    timeline's detail and ``runtop show`` alike (to the millisecond, so that events
    a few milliseconds apart still read in their order).
    """
    shown = round(seconds, 3) or 0.0  # never -0.000s
    if abs(shown) >= 3600:  # a session taken up again days later: hours, not 259200.000s
        sign = "-" if shown < 0 else "+"
        hours, rest = divmod(abs(shown), 3600)
        minutes, secs = divmod(rest, 60)
        return f"{sign}{int(hours)}h{int(minutes):02d}m{secs:06.3f}s"
    return f"{shown:+.3f}s"  # an event written before its run's start reads -0.200s


def tokens_or_unsaid(count: int | None) -> str:
    """One side of a model call's tokens (``1.9k``), ``?`` where the call did not say."""
    return "?" if count is None else tokens(count)


def tokens(count: int) -> str:
    """``812``, ``1.9k``, ``14.5k``, ``2.3M``: a number of tokens at a glance.

    The one way a token count is written: the runs table, the run's header, the source
    line's totals, the timeline. A count never recorded is not passed here: callers say
    nothing, ``…`` while it is read, or ``not recorded``.
    """
    if count < 1000:
        return str(count)
    if round(count / 1000, 1) < 1000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def cost(usd: float) -> str:
    """``$0.0031``, ``$0.0560``, ``$1.25``, ``$0``: what a run or a call cost, in US dollars.

    The one way a cost is written, in the TUI and ``runtop show`` alike: four decimals
    under a dollar (a model call costs tenths of a cent), cents above. A cost too small
    for four decimals is ``<$0.0001``, never a ``$0.0000`` that reads as free; ``$0`` is
    a cost recorded as nothing. A cost never recorded is not passed here: callers say
    nothing, or ``not recorded``.
    """
    size = abs(usd)
    sign = "-" if usd < 0 else ""
    if size == 0:
        return "$0"
    if size < 0.0001:
        return f"{sign}<$0.0001"
    if size < 1:
        return f"{sign}${size:.4f}"
    if size < 1000:
        return f"{sign}${size:,.2f}"
    return f"{sign}${size:,.0f}"


WITH_CHILDREN: Final = "Σ"
"""Before a run's tokens (or its cost, when it stands alone) where they include its child
runs': the runs table and ``runtop ls`` alike."""


AT_LEAST: Final = "≥"
"""Before a figure that may be short of the whole (:attr:`RunTotals.partial`: a ledger
read at its head and tail only, its own or a child run's): the runs table, ``runtop ls``
and the run's header alike."""


def at_least(totals: RunTotals) -> str:
    """:data:`AT_LEAST` where ``totals`` may leave out model calls not read, else nothing."""
    return AT_LEAST if totals.partial else ""


def spent(totals: RunTotals) -> str:
    """``2.9k tokens $0.0102``: what a run spent, in words (``no tokens recorded`` when no
    model call said: not 0); ``at least 2.9k tokens $0.0102`` where not every call was
    read, ``tokens not counted`` where none was."""
    if not totals.said:
        return "tokens not counted" if totals.partial else "no tokens recorded"
    count = totals.tokens or 0
    said = f"{tokens(count)} token{'' if count == 1 else 's'}"
    said = f"{said} {cost(totals.cost_usd)}" if totals.cost_usd is not None else said
    return f"at least {said}" if totals.partial else said


def spent_with_children(total: RunTotals, own: RunTotals) -> str:
    """``5.8k tokens $0.0204 with its child runs (own 2.9k tokens $0.0102)``: a parent
    run's total and its own, as its header, ``runtop show`` and ``ls``'s NOTE say them."""
    return f"{spent(total)} with its child runs (own {spent(own)})"


def skill_and_agent(skill: str | None, agent: str | None) -> str:
    """``summarize / summarizer``: a run's skill and the agent that ran it, each once.

    The one way the SKILL / AGENT column is written, by ``runtop ls`` and the runs table
    alike (an agent named for its skill, ``planner / planner``, is said once).
    """
    if skill and agent and skill != agent:
        return f"{skill} / {agent}"
    return skill or agent or ""


PROMPT_CELLS: Final = 200
"""The most of a session's first prompt its name takes (a prompt can be pages long)."""
PROMPT_LEAST: Final = 16
"""The cells a session's prompt keeps before its project and agent where the name is cut:
with fewer, the prompt alone leads, cut at the name's end."""


def run_name(summary: RunSummary, width: int | None = None) -> str:
    """What names a run in the runs table and ``runtop ls``'s SKILL / AGENT (inert, cut to
    ``width``): its skill and agent (:func:`skill_and_agent`); a coding agent's session, what
    it was first asked before them (``Search hex.pm for … · spotter-4te / claude-code``).

    A project's sessions share its name and their agent's: at 80 columns every one read
    ``spotter-4te…``, while their prompts tell them apart, as the agents' own lists of
    sessions do. Cut, the prompt gives up its end first while it keeps
    :data:`PROMPT_LEAST` cells, then the whole name is cut at its end.
    """
    who = inert(skill_and_agent(summary.skill, summary.agent), single_line=True)
    asked = summary.input
    prompt = ""
    if summary.writer in AGENT_RESUME and isinstance(asked, str):
        lines = (line.strip() for line in asked[:PROMPT_CELLS].splitlines())
        prompt = inert(" ".join(next((line for line in lines if line), "").split()))
    if not prompt or not who:
        text = prompt or who
    else:
        text = f"{prompt} · {who}"
        room = (width or 0) - len(" · ") - len(who)
        if width is not None and len(text) > width and room >= PROMPT_LEAST:
            text = f"{shorten(prompt, room)} · {who}"
    return text if width is None else shorten(text, width)


def damaged_count(lines: int | None) -> str:
    """The DAMAGED cell, in ``runtop ls`` and the runs table: how many lines of the run's
    ledger could not be read, ``?`` when not known (a ledger read only at its head and
    tail), nothing when none."""
    if lines is None:
        return "?"
    return str(lines) if lines else ""


def cell(text: str | None, width: int) -> str:
    """Untrusted text on one line, cut to ``width``: a table's cell, a header's field."""
    return shorten(inert(text or "", single_line=True), width)


DETAIL_LIMIT: Final = 160
"""Characters of an event's value said on its one line."""


def compact_json(value: Any, limit: int = DETAIL_LIMIT) -> str:
    """A one-line, inert rendering of any JSON value, cut to ``limit``."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = msgspec.json.encode(value).decode()
        except (TypeError, ValueError, msgspec.EncodeError):
            text = repr(value)
    return shorten(inert(text, single_line=True), limit)
