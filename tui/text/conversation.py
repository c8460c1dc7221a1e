"""A model call as a chat reads: its facts, then each message by role, the answer last.

The detail pane shows a selected ``llm_call`` with this: the model, its
tokens, cost, duration, time to the first token and tokens per second (only
what was recorded: a figure never written is left out, not said as 0), then
the messages the model was sent and what it answered, as
:func:`ledger_reader.messages.conversation` reads them. A long part is
folded to its start (``o`` shows it whole), or, where the run's search
matched past its start, to the part around the match.

Only the selected call is laid out, when it is selected: a run of 10,000
model calls costs no more to open than a run of one. Every string from the
ledger passes through :func:`tui.text.inert` and reaches Rich as
:class:`~rich.text.Text`, never as markup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.padding import Padding
from rich.style import Style
from rich.text import Text

from inspector.ledger import THINKING, TOOL_CALL, TOOL_RESULT, LlmCall, Message, conversation
from inspector.status_words import open_call_word, unanswered
from tui.text import cost, duration, inert, tokens
from tui.text.events import model_named

CALLED: Final = "⚙"
"""The mark of a tool call in a model's conversation (here and in ``show --messages``)."""
ANSWERED: Final = "↩"
"""The mark of a tool's result handed back to the model."""
FAILED: Final = "✘"
"""The mark of a tool's result that is an error."""
THOUGHT: Final = "thinking: "
"""What a model's thinking is headed with."""

PART_PREVIEW: Final = 240
"""Characters of a long message part shown before "o shows all": a few rows of a wide
pane, ten of the 27 columns an 80-column screen leaves it (400 took 16 of its 19 rows,
the user's question out of sight below the system prompt). Not measured on the pane:
its width changes as the screen lays out, and a fold must not change with it."""
PART_LINES: Final = 6
"""Lines of a long message part shown before "o shows all", at most."""
SHORTEST_STREAM: Final = 0.05
"""Seconds of streaming below which a rate is not said: too few ticks to measure."""

NEWEST_MESSAGES: Final = 6
"""Messages sent shown before "o shows all", the newest (with the system's, and any
the run's search matched): a call that carries the whole conversation so far is laid
out in a few dozen lines, not a thousand."""
MATCH_LEAD: Final = 80
"""Characters shown before a search's match when a fold starts at it."""
INDENT: Final = 2
"""Cells a message's words are indented under its role, every line they wrap to."""

SEPARATOR: Final = "  ·  "
"""Between the facts of one line."""
BREAK: Final = "  · \n"
"""Between two facts on two lines: as long as :data:`SEPARATOR`."""
ROLES: Final = ("system", "user", "assistant", "tool")
"""The roles drawn in a colour of their own (:class:`ConversationStyles`)."""

_encoder: Final = msgspec.json.Encoder()


@dataclass(frozen=True)
class ConversationStyles:
    """The styles a conversation is drawn in, resolved from the theme by its widget."""

    roles: Mapping[str, Style] = field(default_factory=dict)
    """Each role's heading (:data:`ROLES`); any other role is drawn bold."""
    error: Style = field(default_factory=Style)
    """A tool result that reports a failure."""
    mark: Style = field(default_factory=Style)
    """What the run's search found."""


@dataclass(frozen=True)
class CallTiming:
    """What the ledger says of the call's time beyond its ``llm_call``: its model node."""

    seconds: float | None = None
    """From the request to the answer (the model node's enter to its ``llm_call``)."""
    waiting: bool = False
    """Its node is open and it has no ``llm_call`` yet: the model has not answered."""


@dataclass(frozen=True)
class ConversationLine:
    """A line of the detail (wrapped as wide as it is drawn), indented ``indent`` cells."""

    text: Text
    indent: int = 0
    facts: bool = False
    """Facts joined by :data:`SEPARATOR`: broken between them in a narrow pane."""

    @property
    def plain(self) -> str:
        pad = " " * self.indent
        return pad + self.text.plain.replace("\n", "\n" + pad)

    @property
    def renderable(self) -> RenderableType:
        if self.facts:
            return FittedText(self.text)
        return Padding(self.text, (0, 0, 0, self.indent)) if self.indent else self.text


@dataclass
class ConversationText:
    """The lines of a model call's detail: ``lines`` to draw, ``cut`` when a part is folded."""

    lines: list[ConversationLine] = field(default_factory=list)
    cut: bool = False

    def add(self, text: Text, indent: int = 0, *, facts: bool = False) -> None:
        self.lines.append(ConversationLine(text, indent, facts))

    @property
    def plain(self) -> str:
        return "\n".join(line.plain for line in self.lines)


def call_facts(call: LlmCall, timing: CallTiming | None = None, *, live: bool = True) -> list[str]:
    """The model call in a few lines: model and provider, tokens and cost, times.

    Only what was recorded: a call that said no tokens has no tokens line, one that
    was not streamed no first token (never a ``0`` for what nobody measured). One with
    no answer yet waits for it while its run is ``live``; in a run that no longer
    writes it is ``unfinished`` (:func:`~inspector.status_words.open_call_word`).
    """
    payload = call.payload
    named = model_named(payload.model, payload.node_id)
    model = inert(named if named != "?" else "model", single_line=True)
    if payload.provider:
        model += f"  ·  {inert(payload.provider, single_line=True)}"
    lines = [f"◆ {model}"]
    ended = unanswered(payload.status)
    if timing is not None and timing.waiting:
        waits = "waiting for its answer" if live else "no answer was written"
        lines.append(f"{open_call_word(live=live)}: {waits}")
    elif ended is not None:
        lines.append(f"{ended} before it answered")
    spent: list[str] = []
    if payload.prompt_tokens is not None:
        cached = (
            f" ({tokens(payload.cache_read_tokens)} cached)" if payload.cache_read_tokens else ""
        )
        spent.append(f"{tokens(payload.prompt_tokens)} prompt{cached}")
    if payload.output_tokens is not None:
        spent.append(f"{tokens(payload.output_tokens)} output")
    said = " + ".join(spent) + " tokens" if spent else ""
    if payload.cost_usd is not None:
        said = f"{said}  ·  {cost(payload.cost_usd)}" if said else cost(payload.cost_usd)
    if said:
        lines.append(said)
    times: list[str] = []
    took = timing.seconds if timing is not None else None
    if took is not None:
        times.append(duration(took))
    first = payload.first_token_micros / 1e6 if payload.first_token_micros is not None else None
    if first is not None:
        times.append(f"first token {duration(first)}")
    rate = tokens_per_second(payload.output_tokens, took, first)
    if rate is not None:
        times.append(rate)
    if times:
        lines.append("  ·  ".join(times))
    return lines


def fitted(line: str, width: int) -> str:
    """A line of facts joined by ``  ·  `` broken between them to fit ``width`` cells,
    the dot ending a line (a pane's own wrap began the next with it: ``·  9.7 tok/s``).
    As long as ``line``, so what is marked in it keeps its place."""
    parts = line.split(SEPARATOR)
    if width <= 0 or len(line) <= width or len(parts) == 1:
        return line
    lines: list[str] = []
    current = parts[0]
    ends = len(BREAK.rstrip())  # a line that goes on ends in its dot (a space past it folds)
    for number, part in enumerate(parts[1:], start=2):
        room = width - (ends if number < len(parts) else 0)
        if len(current) + len(SEPARATOR) + len(part) <= room:
            current += SEPARATOR + part
        else:
            lines.append(current)
            current = part
    lines.append(current)
    return BREAK.join(lines)


class FittedText:
    """A line of facts, broken between them as wide as it is drawn (:func:`fitted`)."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text
        yield Text(fitted(text.plain, options.max_width), style=text.style, spans=text.spans)


def tokens_per_second(
    output: int | None, took: float | None, first: float | None = None
) -> str | None:
    """``42 tok/s``: output tokens over the time they streamed in, from the ``first``
    token to the call's end (the whole call when it was not streamed); ``None`` when the
    tokens or the time were not recorded, or they streamed too briefly to measure
    (:data:`SHORTEST_STREAM`: three tokens in 5 ms are not 600 tok/s). The wait for the
    first token is the model thinking or queued, not writing: it has its own figure."""
    if not output or took is None:
        return None
    writing = took - first if first is not None else took
    if writing < SHORTEST_STREAM:
        return None
    rate = output / writing
    return f"{rate:.1f} tok/s" if rate < 10 else f"{rate:,.0f} tok/s"


def conversation_text(
    call: LlmCall,
    *,
    timing: CallTiming | None = None,
    facts: bool = True,
    whole: bool = False,
    found: re.Pattern[str] | None = None,
    styles: ConversationStyles | None = None,
    live: bool = True,
) -> ConversationText:
    """The call's facts (unless ``facts`` is false: a heading says them already), then its
    messages and its answer, each part folded unless ``whole``; ``live``: its run may still
    write (a call waiting for its answer, else unfinished)."""
    styles = styles or ConversationStyles()
    limit = None if whole else PART_PREVIEW
    shown = ConversationText()
    if facts:
        lines = call_facts(call, timing, live=live)
        shown.add(Text(lines[0], style="bold"), facts=True)
        for line in lines[1:]:
            shown.add(Text(line), facts=True)
    elif (extra := _times_only(call, timing)) is not None:
        shown.add(Text(extra), facts=True)
    payload = call.payload
    stamp = f"seq {call.seq}  ·  {call.time}" if call.time else f"seq {call.seq}"
    shown.add(Text(inert(stamp, single_line=True), style="dim"), facts=True)
    sent, answer = conversation(payload.messages), conversation(payload.response)
    if not sent and not answer:
        shown.add(Text("messages not recorded", style="dim"))
        return _marked_all(shown, found, styles.mark)
    if payload.truncated:
        shown.add(Text("older messages were left out to keep the call under the cap", style="dim"))
    kept = range(len(sent)) if limit is None else kept_messages(sent, found)
    hidden = 0
    for number, message in enumerate(sent):
        if number not in kept:
            hidden += 1
            continue
        _hidden(shown, hidden)
        hidden = 0
        _message(shown, message, message.role, limit=limit, found=found, styles=styles)
    _hidden(shown, hidden)
    for message in answer:
        role = message.role if message.role not in ("assistant", "?") else ""
        heading = f"answer · {role}" if role else "answer"
        _message(shown, message, heading, limit=limit, found=found, styles=styles)
    return _marked_all(shown, found, styles.mark)


def kept_messages(sent: list[Message], found: re.Pattern[str] | None) -> set[int]:
    """The messages a folded conversation shows: the system's, the newest
    :data:`NEWEST_MESSAGES` (what led to the answer), and any the run's search matched.

    An agent sends each call the whole conversation so far: its tenth call holds
    the nine before it, and a chat reads from its end.
    """
    kept = set(range(max(0, len(sent) - NEWEST_MESSAGES), len(sent)))
    kept.update(number for number, message in enumerate(sent) if message.role == "system")
    if found is not None:
        kept.update(number for number, message in enumerate(sent) if found.search(message.text))
    return kept


def _hidden(shown: ConversationText, count: int) -> None:
    """Where folded messages were: how many (``o`` shows them)."""
    if count:
        noun = "message" if count == 1 else "messages"
        shown.add(Text(""))
        shown.add(Text(f"… {count:,} earlier {noun} (o shows all)", style="dim"))
        shown.cut = True


def _times_only(call: LlmCall, timing: CallTiming | None) -> str | None:
    """The facts a timeline node's heading does not say: the first token and the rate."""
    first_micros = call.payload.first_token_micros
    first = first_micros / 1e6 if first_micros is not None else None
    took = timing.seconds if timing is not None else None
    parts = [f"first token {duration(first)}"] if first is not None else []
    rate = tokens_per_second(call.payload.output_tokens, took, first)
    if rate is not None:
        parts.append(rate)
    return "  ·  ".join(parts) if parts else None


def _role_style(role: str, styles: ConversationStyles) -> Style:
    return styles.roles.get(role, Style()) + Style(bold=True)


def _message(
    shown: ConversationText,
    message: Message,
    heading: str,
    *,
    limit: int | None,
    found: re.Pattern[str] | None,
    styles: ConversationStyles,
) -> None:
    shown.add(Text(""))
    role = "assistant" if heading.startswith("answer") else message.role
    shown.add(Text(inert(heading, single_line=True), style=_role_style(role, styles)))
    if not message.parts:
        shown.add(Text("(nothing)", style="dim"), INDENT)
    for part in message.parts:
        if part.kind == TOOL_CALL:
            name = inert(part.name or "tool", single_line=True)
            _folded(shown, f"{CALLED} {name} ", _arguments(part.arguments), "bold", limit, found)
        elif part.kind == TOOL_RESULT:
            name = inert(part.name or part.call_id or "tool", single_line=True)
            if part.is_error:
                _folded(shown, f"{FAILED} {name} error: ", part.text, styles.error, limit, found)
            else:
                _folded(shown, f"{ANSWERED} {name}: ", part.text, "", limit, found)
        elif part.kind == THINKING:
            _folded(shown, THOUGHT, part.text, "italic dim", limit, found)
        else:
            _folded(shown, "", part.text, "", limit, found)


def _arguments(value: Any) -> str:
    """A tool call's arguments as compact JSON (a string of JSON as it was written)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "{}"
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        return repr(value)


def fold(text: str, found: re.Pattern[str] | None, limit: int = PART_PREVIEW) -> slice:
    """The part of ``text`` a folded part shows: its first ``limit`` characters and
    :data:`PART_LINES` lines, or the part around the search's first match when that
    lies further on (a match the search counted is shown, not folded away)."""
    at = -1
    for _ in range(PART_LINES):
        at = text.find("\n", at + 1)
        if at < 0:
            break
    if at >= 0:
        limit = min(limit, at)
    if len(text) <= limit:
        return slice(0, len(text))
    match = found.search(text) if found is not None else None
    if match is None or match.end() <= limit:
        return slice(0, limit)
    start = max(0, min(match.start() - min(MATCH_LEAD, limit // 3), len(text) - limit))
    space = text.find(" ", start, match.start())  # from a whole word, where one is near
    if 0 <= space < match.start():
        start = space + 1
    return slice(start, start + limit)


def _folded(
    shown: ConversationText,
    lead: str,
    text: str,
    style: str | Style,
    limit: int | None,
    found: re.Pattern[str] | None,
) -> None:
    """One part, indented under its role, folded to ``limit`` characters (``None``: whole)."""
    window = slice(0, len(text)) if limit is None else fold(text, found, limit)
    if window.start:
        shown.add(Text(f"… {window.start:,} earlier characters (o shows all)", style="dim"), INDENT)
    line = Text()
    if lead:
        line.append(lead, style="bold" if not isinstance(style, Style) else style)
    line.append(inert(text[window]), style=style)
    shown.add(line, INDENT)
    after = len(text) - window.stop
    if after > 0:
        shown.add(Text(f"… {after:,} more characters (o shows all)", style="dim"), INDENT)
    if window.start or after > 0:
        shown.cut = True


def _marked_all(
    shown: ConversationText, found: re.Pattern[str] | None, mark: Style
) -> ConversationText:
    if found is not None:
        for line in shown.lines:
            line.text.highlight_regex(found, mark)
    return shown
