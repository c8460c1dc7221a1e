"""``runtop show``: one run's events, readable or as JSON Lines, from a ledger or a server.

Readable, events that belong together are one line, as in the app's event
stream (:mod:`tui.text.entries`): a paragraph of streamed text or thinking, a
tool call with its result; ``--raw`` prints every event on its own line.
``--messages`` prints under each model call what it was sent and answered.
Never loads Textual. ``--follow`` keeps printing until the run ends.

Readable, an OTLP run's nodes are listed as the app lists them: none before the
node it is inside (:class:`inspector.span_order.SpanOrder`), though exporters
wrote the root's chain last. ``--json`` prints the ledger's lines in its own
order, and ``--follow`` prints each line as it lands (a parent arriving late is
printed then).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from inspector.ledger import (
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    CancelRequested,
    DamagedLine,
    LedgerError,
    LedgerGone,
    LedgerTail,
    Line,
    LlmCall,
    LlmChunk,
    Message,
    NodeEnter,
    ReasoningChunk,
    RunCompleted,
    RunEvent,
    RunStarted,
    RunStatus,
    RunSummary,
    RunTotals,
    agent_of,
    conversation,
    descendant_ledgers,
    encode_event,
    family_totals,
    offset_in_run,
    parse_time,
    read_ledger_lines,
    read_session,
    summarize_ledger,
    writer_gone,
)
from inspector.span_order import SpanOrder, ordered_by_spans
from inspector.timeline import Timeline, outcome_of_status
from tui.commands.output import say, write_json
from tui.commands.targets import (
    CommandError,
    NoSuchRun,
    default_places,
    is_url,
    remote_run_id,
    resolve_ledger,
)
from tui.text import compact_json, inert, offset, spent_with_children
from tui.text.conversation import ANSWERED, CALLED, FAILED, THOUGHT
from tui.text.entries import joins
from tui.text.events import describe, describe_entry, glyph
from tui.text.timeline import render_lines

if TYPE_CHECKING:
    from inspector.attach_client import SseFrame

PRINT_BATCH: Final = 4096
"""Lines of a ledger read at start that are printed together (one write as JSON)."""


MESSAGE_INDENT: Final = " " * 14
"""Where a model call's messages start under its line (past the offset and the mark)."""

NOTE_INDENT: Final = " " * 12
"""Where a line that is no event starts (a damaged line's mark, how the run stands)."""

LEAST_ROOM: Final = 20
"""Columns a line's words need beside its offset and mark to hang under them: in a
terminal narrower than that, a line wraps whole, from the left edge."""


class EventPrinter:
    """Prints one run's lines, readable or as JSON Lines.

    Readable, an event that continues the entry before it (:func:`tui.text.entries.joins`)
    is held until the entry ends (:meth:`flush`), then the entry is printed as one
    line; ``raw`` prints each event as it comes.

    With a ``width`` (a terminal's), a line longer than it is wrapped between words,
    its words hanging under where they start (past the offset and the mark), a word
    longer than the room folded; without one (a pipe, a file), every line is whole,
    for ``grep`` and scripts.
    """

    def __init__(
        self,
        console: Console,
        *,
        as_json: bool,
        live: bool,
        raw: bool = False,
        messages: bool = False,
        width: int | None = None,
    ) -> None:
        self.console = console
        self.width = width
        """The terminal's columns, which lines are wrapped to; ``None``: lines whole."""
        self.as_json = as_json
        self.live = live
        """The run may still write: a tool call with no result is ``running``, else
        ``unfinished`` (:func:`~inspector.status_words.open_call_word`)."""
        self.raw = raw
        self.messages = messages
        self.started: datetime | None = None
        self.finished = False
        self.spent = RunTotals()
        """What the model calls printed said they spent (:meth:`RunTotals.add_call`, as a
        summary adds them up): the run's own, where every line was printed."""
        self.cancel_asked = False
        """The run was asked to cancel in the events printed: a node that fails after it
        was canceled (as the timeline says it)."""
        self._entry: list[RunEvent] = []

    def line(self, line: Line) -> None:
        item = line.item
        if item is None:
            return
        if isinstance(item, DamagedLine):
            self.flush()
            self._damaged(item)
            if item.recovered is not None:
                self._event(item.recovered, b"")
        else:
            self._event(item, line.raw)

    def lines(self, lines: Sequence[Line]) -> None:
        """Print a batch of lines: as JSON, the events' own bytes in one write.

        A follower prints hundreds of MB this way. Each event's line is written
        as the ledger holds it (it decoded, so it is one JSON value) and the
        batch goes through :func:`write_json` once, which escapes what a
        terminal would act on: one check, one write and one flush a batch,
        not a line.
        """
        if not self.as_json:
            for line in lines:
                self.line(line)
            return
        block: list[bytes] = []
        for line in lines:
            item = line.item
            if item is None:
                continue
            if isinstance(item, DamagedLine) or not line.raw:
                if block:
                    write_json(b"\n".join(block))
                    block.clear()
                self.line(line)
                continue
            if isinstance(item, RunCompleted):
                self.finished = True
            block.append(line.raw)
        if block:
            write_json(b"\n".join(block))

    def settle(self) -> None:
        """Print the entry held, unless it is a paragraph still streaming: followed, a run's
        streamed text is printed as ``show`` prints it, a paragraph a line, once it ends
        (a chunk a line was 27 lines for a sentence)."""
        first = self._entry[0] if self._entry else None
        if isinstance(first, LlmChunk | ReasoningChunk) and not self.finished:
            return
        self.flush()

    def flush(self) -> None:
        """Print the entry held so far (a paragraph may go on: the rest is a new line)."""
        items, self._entry = self._entry, []
        if not items:
            return
        first = items[0]
        if isinstance(first, LlmChunk | ReasoningChunk):
            label = "thinking" if isinstance(first, ReasoningChunk) else "text"
            text = "".join(
                item.payload.delta or ""
                for item in items
                if isinstance(item, LlmChunk | ReasoningChunk)
            )
            count = f"  [{len(items):,} chunks]" if len(items) > 1 else ""
            mark, words = glyph(first), f"{label} {inert(text, single_line=True)}{count}"
        else:
            mark, words = describe_entry(
                list(items), live=self.live, after_cancel=self.cancel_asked
            )
        style = "red" if first.type == "error" else ""
        self.print(f"{self._since(first):>10}  {mark} ", words, style=style)
        if self.messages and isinstance(first, LlmCall):
            self._conversation(first)

    def _since(self, event: RunEvent) -> str:
        moment = event.timestamp
        if self.started is None and moment is not None:
            self.started = moment
        if moment is None or self.started is None:
            return ""
        return offset(offset_in_run(moment.timestamp(), self.started.timestamp()))

    def _conversation(self, call: LlmCall) -> None:
        """What the model was sent, then what it answered, a message a line (or more)."""
        sent = conversation(call.payload.messages)
        answer = conversation(call.payload.response)
        if not sent and not answer:
            self._say("messages not recorded", style="dim")
            return
        if call.payload.truncated:
            self._say("… older messages left out (the ledger keeps the newest)", style="dim")
        for message in sent:
            self._message(message)
        if answer:
            self._say("answered:", style="dim")
            for message in answer:
                self._message(message)

    def _message(self, message: Message) -> None:
        role = inert(message.role, single_line=True)[:12]
        if not message.parts:
            self._say(f"{role:<10} (empty)")
        for number, part in enumerate(message.parts):
            said = role if number == 0 else ""
            if part.kind == TOOL_CALL:
                name = inert(part.name or "tool", single_line=True)
                words = f"{CALLED} {name} {compact_json(part.arguments, 400)}"
            elif part.kind == TOOL_RESULT:
                name = inert(part.name or part.call_id or "tool", single_line=True)
                mark = FAILED if part.is_error else ANSWERED
                failed = " error" if part.is_error else ""
                words = f"{mark} {name}{failed}: {inert(part.text)}"
            elif part.kind == THINKING:
                words = f"{THOUGHT}{inert(part.text)}"
            else:
                words = inert(part.text)
            lines = words.split("\n") or [""]
            self.print(f"{MESSAGE_INDENT}{said:<10} ", lines[0])
            for more in lines[1:]:
                self.print(f"{MESSAGE_INDENT}{'':<10} ", more)

    def _say(self, text: str, *, style: str = "") -> None:
        self.print(MESSAGE_INDENT, text, style=style)

    def note(self, words: str, *, style: str = "dim") -> None:
        """A line that is no event (how the run stands, what it spent with its child runs)."""
        self.print(NOTE_INDENT, words, style=style)

    def print(self, prefix: str, words: str, *, style: str = "") -> None:
        """One line: ``prefix`` (an offset and a mark), then ``words``, fitted to the width.

        Both are inert already (every string of a ledger passes :func:`tui.text.inert`):
        wrapping only breaks a line between cells, so what reaches the terminal is
        what was made safe.
        """
        line = Text(prefix + words, style=style)
        if "\t" in line.plain:
            line.expand_tabs()  # measured as the terminal draws it
        width = self.width
        if width is None or line.cell_len <= width:
            self.console.print(line, soft_wrap=True)
            return
        hang = cell_len(prefix)
        if width - hang < LEAST_ROOM:
            # Too narrow to hang the words under their column: wrap the whole line.
            lines = list(line.wrap(self.console, width, overflow="fold"))
            hang = 0
        else:
            body = Text(words, style=style)
            body.expand_tabs()
            lines = list(body.wrap(self.console, width - hang, overflow="fold"))
            lines[0] = Text(prefix, style=style) + lines[0]
        for number, part in enumerate(lines):
            part.rstrip()
            shown = part if number == 0 or not hang else Text(" " * hang) + part
            self.console.print(shown, soft_wrap=True)

    def _damaged(self, item: DamagedLine) -> None:
        if self.as_json:
            record = {"type": "damaged_line", "offset": item.offset, "reason": item.reason}
            write_json(msgspec.json.encode(record))
        else:
            self.print(f"{NOTE_INDENT}{glyph(item)} ", describe(item), style="red")

    def _event(self, event: RunEvent, raw: bytes) -> None:
        if isinstance(event, RunCompleted):
            self.finished = True
        elif isinstance(event, LlmCall):
            self.spent.add_call(event.payload)
        if self.as_json:
            write_json(raw or encode_event(event).rstrip(b"\n"))
            return
        if not self.raw:
            if self._entry and joins(self._entry[-1], event):
                self._entry.append(event)
                return
            self.flush()
            self.cancel_asked = self.cancel_asked or isinstance(event, CancelRequested)
            self._entry.append(event)
            return
        self.cancel_asked = self.cancel_asked or isinstance(event, CancelRequested)
        since = self._since(event)
        style = "red" if event.type == "error" else ""
        said = describe(event, after_cancel=self.cancel_asked)
        self.print(f"{since:>10}  {glyph(event)} ", said, style=style)
        if self.messages and isinstance(event, LlmCall):
            self._conversation(event)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if getattr(args, "timeline", False) and args.follow:
        raise CommandError("--timeline prints the run once; --follow is for its events")
    urls = [where for where in args.dir or [] if is_url(where)]
    if urls:
        return _show_remote(args, urls[0], out)
    # Where the app and ls look by default: the runs, and the coding agents' sessions.
    search = [Path(path) for path in args.dir] if args.dir else default_places()
    try:
        path = resolve_ledger(args.target, search)
    except NoSuchRun as error:
        if args.dir:
            raise
        # Looked only where runs are written by default: say how to look elsewhere.
        raise CommandError(f"{error} (the default; --from DIR_OR_URL looks elsewhere)") from None
    if agent_of(path) is not None:
        return _show_session(path, args, out)
    if getattr(args, "timeline", False):
        return _show_timeline(path, out, as_json=args.json)
    # A torn last line is damage once the writer is known gone; until then it is a line
    # still being written.
    if args.follow:
        # Followed, what is printed is as it stands when it is written: live.
        printer = _printer(args, out, live=True)
        # One reader from the first byte: the file printed is the file followed, even if
        # it is replaced between the two.
        try:
            asyncio.run(_follow(path, printer, err))
        finally:
            printer.flush()  # a paragraph cut short by Ctrl-C, as far as it went
        return 0
    summary = summarize_ledger(path)
    printer = _printer(args, out, live=summary.status.is_live)
    gone = writer_gone(summary)

    def read() -> Iterator[Line]:
        return read_ledger_lines(path, keep_raw=True, torn_tail=gone)

    ordered = ordered_by_spans(summary.writer) and not args.json
    lines = in_span_order(read) if ordered else read()
    while batch := list(itertools.islice(lines, PRINT_BATCH)):
        printer.lines(batch)
    printer.flush()
    if not printer.finished and not args.json:
        printer.note(unended(summary))
    if not args.json:
        # Every line was read to print it: its own figures are known, though a ledger this
        # big is summarised from its head and tail (which counts none of its calls).
        own = printer.spent if summary.partial else None
        family = family_said(path, summary, own)
        if family:
            printer.note(family)
    return 0


def family_said(path: Path, summary: RunSummary, own: RunTotals | None = None) -> str | None:
    """What the run spent with its child runs (and theirs) beside its ledger, and on its
    own (``5.8k tokens $0.0204 with its child runs (own …)``); ``None`` without any.
    ``own``: its figures counted from every line, where its summary has none (partial)."""
    run_id = summary.run_id or path.stem
    descendants = descendant_ledgers(path, run_id)
    if not descendants:
        return None
    mine = _Counted(run_id, summary.parent_run_id, summary.totals)
    if own is not None:
        mine.totals = own.rounded()
        mine.totals.model_calls = mine.totals.model_calls or 0  # all read: none is 0, known
    total = family_totals([mine, *descendants])[run_id]
    return spent_with_children(total, mine.totals)


@dataclass(slots=True)
class _Counted:
    """A run as :func:`~inspector.ledger.family_totals` adds it up: its figures as
    ``show`` counted them."""

    run_id: str
    parent_run_id: str | None
    totals: RunTotals


def in_span_order(read: Callable[[], Iterable[Line]]) -> Iterator[Line]:
    """A run's lines as they are listed: each node after the node it is inside.

    ``read`` is called twice: the first pass places the nodes (keeping only the
    ``node_enter`` lines, which may move), the second yields the lines, as many as
    the first pass saw (a live run's later lines are for the next ``show``).
    """
    order = SpanOrder()
    heads: dict[int, Line] = {}
    for line in read():
        if line.item is None:
            continue
        if isinstance(line.item, NodeEnter):
            heads[order.folded] = line
        order.add(line.item)
    if not order.moved:
        heads.clear()
    position = 0
    for line in read():
        if line.item is None:
            continue
        if position >= order.folded:
            return
        if not order.is_moved(position):
            for head in order.chain(position):
                yield heads[head]
            yield line
        position += 1


def _ordered(first: object) -> bool:
    """Whether a run whose first event is ``first`` is listed in :func:`in_span_order`."""
    return isinstance(first, RunStarted) and ordered_by_spans(first.payload.writer)


def _show_session(path: Path, args: argparse.Namespace, out: Console) -> int:
    """A coding agent's session, folded into events as every reader reads it."""
    if args.follow:
        raise CommandError("--follow is for ledgers; `runtop PATH` follows a session live")
    session = read_session(str(path))
    items = [Line(0, 0, item) for item in session.items]
    summary = session.summary()
    if getattr(args, "timeline", False):
        timeline = Timeline(summary.run_id or None)
        for line in items:
            timeline.add(line.item)  # type: ignore[arg-type]
        _add_sub_agents(path, timeline)
        now = time.time() if summary.status.is_live else None
        stopped = None if now is not None else parse_time(summary.last_event_at or "")
        if stopped is not None and timeline.run_end is None:
            timeline.stop(stopped.timestamp())  # idle: nothing of it runs, as in the app
        _print_timeline(timeline, out, now, as_json=args.json, status=summary.status.value)
        return 0
    printer = _printer(args, out, live=summary.status.is_live)
    printer.lines(items)
    printer.flush()
    if not args.json:
        printer.note(unended(summary))
    return 0


def _messages(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "messages", False))


def _printer(args: argparse.Namespace, out: Console, *, live: bool) -> EventPrinter:
    """The printer of ``show``'s options, for a run ``live`` or not (its calls' word)."""
    return EventPrinter(
        out,
        as_json=args.json,
        live=live,
        raw=getattr(args, "raw", False),
        messages=_messages(args),
        width=out.width if out.is_terminal else None,
    )


def unended(summary: RunSummary) -> str:
    """The last line of a run that has no end in its ledger: where it stands, as ``ls``
    says it (the stale migrate-db's events ended at its question, nothing said it
    was stale, or that nobody answered)."""
    status = summary.status
    approval = summary.pending_approval
    question = approval.prompt if approval is not None and approval.prompt else None
    if status.is_live:
        said = f"no end yet: {status}"
    elif status is RunStatus.UNKNOWN:
        said = "nothing in it could be read: unknown"
    else:
        why = "its writer is gone" if status is RunStatus.ABANDONED else "its writer went quiet"
        said = f"no end recorded: {status} ({why})"
    if question:
        said += f", {'awaiting approval' if status.waits else 'approval unanswered'}: {question}"
    return inert(said, single_line=True)


TIMELINE_WIDTH: Final = 100
"""Columns of ``--timeline`` when the output is not a terminal (a file, a bug report)."""


def _show_timeline(path: Path, out: Console, *, as_json: bool) -> int:
    """``runtop show RUN --timeline``: the run's timeline as bars, or its nodes as JSON."""
    summary = summarize_ledger(path)
    timeline = Timeline(summary.run_id or None)
    for line in read_ledger_lines(path, torn_tail=writer_gone(summary)):
        if line.item is not None:
            timeline.add(line.item)
    _add_child_ledgers(path, timeline)
    now = time.time() if summary.status.is_live else None
    stopped = None if now is not None else parse_time(summary.last_event_at or "")
    if stopped is not None and timeline.run_end is None:
        # It stopped writing without ending (stale, abandoned): nothing of it runs, and it
        # ends where it stopped, as the app's timeline does, not at its last timed node.
        timeline.stop(stopped.timestamp())
    _print_timeline(timeline, out, now, as_json=as_json, status=summary.status.value)
    return 0


def _add_child_ledgers(path: Path, timeline: Timeline) -> None:
    """The run's child runs: the ledgers beside it whose ``run_started`` names it as parent."""
    run_id = timeline.run_id
    if not run_id:
        return
    for child in descendant_ledgers(path, run_id):
        if child.parent_run_id != run_id:
            continue
        _set_child_run(timeline, child)


def _add_sub_agents(path: Path, timeline: Timeline) -> None:
    """A session's sub-agents' runs: their files in ``<session>/subagents/`` or, as older
    Claude Code wrote them, beside the session, whose runs name it as their parent."""
    run_id = timeline.run_id
    if not run_id:
        return
    for place in (path.with_suffix("") / "subagents", path.parent):
        for file in sorted(place.glob("agent-*.jsonl")):
            try:
                child = read_session(str(file)).summary()
            except LedgerError:
                continue
            if child.parent_run_id == run_id:
                _set_child_run(timeline, child)


def _set_child_run(timeline: Timeline, child: RunSummary) -> None:
    start = parse_time(child.started_at or "")
    if start is None:
        return
    end = parse_time(child.completed_at or child.last_event_at or "")
    timeline.set_child_run(
        child.run_id,
        child.agent or child.skill,
        start.timestamp(),
        None if child.status.is_live or end is None else end.timestamp(),
        outcome_of_status(child.status.value),
    )


def _print_timeline(
    timeline: Timeline,
    out: Console,
    now: float | None,
    *,
    as_json: bool,
    status: str | None = None,
) -> None:
    if as_json:
        summary = {
            name: round(value, 6) if isinstance(value, float) else value
            for name, value in msgspec.to_builtins(timeline.summary(now)).items()
        }
        document = {
            "run_id": timeline.run_id,
            "damaged_lines": timeline.damaged,
            "untimed_events": timeline.untimed,
            "summary": summary,
            "nodes": timeline.to_json(now),
        }
        write_json(msgspec.json.encode(document))
        return
    width = out.width if out.is_terminal else TIMELINE_WIDTH
    for text in render_lines(timeline, max(40, width), now, status=status):
        out.print(Text(text), no_wrap=True, overflow="crop")


async def _follow(path: Path, printer: EventPrinter, err: Console) -> None:
    """Print lines as they land until the run completes (or Ctrl-C), following the name as
    ``tail -F`` does: a ledger renamed away (rotated) or removed is waited for, and one
    that comes back under the name is read from its start."""
    tail = LedgerTail(path, keep_raw=True)
    while True:
        try:
            async with contextlib.aclosing(tail.follow()) as batches:
                async for batch in batches:
                    if batch.reset is not None:
                        again = "reading it again from the start"
                        say(err.file, f"{path}: the ledger was {batch.reset}; {again}")
                        printer.started = None
                    printer.lines(batch.lines)
                    printer.settle()
                    if printer.finished:
                        printer.flush()
                        return
        except LedgerGone:
            printer.flush()  # a paragraph cut short, as far as it went
            say(err.file, f"{path}: the ledger was moved or removed; waiting for it to return")
        else:
            # The file it watched went away (renamed): read on from what the name holds now.
            if _present(path):
                continue
            say(err.file, f"{path}: the ledger was moved or removed; waiting for it to return")
        await _reappears(path)
        tail = LedgerTail(path, keep_raw=True)
        printer.started = None
        say(err.file, f"{path}: the ledger is back; reading it from the start")


def _present(path: Path) -> bool:
    """Whether a file is at ``path``: one stat, on the loop, which a follower has to itself."""
    return os.path.exists(path)


async def _reappears(path: Path) -> None:
    """Return once a file is at ``path`` again."""
    from watchfiles import awatch

    if _present(path):
        return
    async for _ in awatch(
        path.parent,
        watch_filter=lambda _, changed: Path(changed).name == path.name,
        recursive=False,
        debounce=1,
        step=1,
        rust_timeout=1000,
        yield_on_timeout=True,
    ):
        if _present(path):
            return


def _show_remote(args: argparse.Namespace, url: str, out: Console) -> int:
    """``runtop show RUN_ID --from URL``: the run's events from an attach server."""
    from inspector.attach_client import item_of
    from inspector.source import SourceError

    run_id = remote_run_id(url, args.token, args.target)
    if getattr(args, "timeline", False):
        return _remote_timeline(args, url, run_id, out)
    # The server's run as it sends it: its status is not asked for here, so a call with no
    # result reads as the run would say it while live.
    printer = _printer(args, out, live=True)

    # Read whole first where its nodes are listed in their order (not as JSON, not followed).
    held: list[Line] | None = None if args.follow or args.json else []

    async def show() -> None:
        nonlocal held
        async for frames in _remote_batches(url, args.token, run_id, follow=args.follow):
            for frame in frames:
                item = item_of(frame)
                if item is None:
                    continue
                line = Line(0, 0, item, frame.data if frame.event is None else b"")
                if held is not None and not held and not _ordered(item):
                    held = None  # its writer's nodes come in order: print as they come
                if held is not None:
                    held.append(line)
                else:
                    printer.line(line)
            if args.follow:
                printer.settle()
        if held:
            printer.lines(list(in_span_order(lambda: held or [])))
        printer.flush()

    try:
        asyncio.run(show())
    except SourceError as error:
        raise CommandError(str(error)) from None
    return 0


def _remote_timeline(args: argparse.Namespace, url: str, run_id: str, out: Console) -> int:
    """``--timeline --from URL``: the run's timeline from the server's events (its child
    runs, in ledgers of their own, are not asked for)."""
    from inspector.attach_client import item_of
    from inspector.source import SourceError

    timeline = Timeline(run_id)

    async def fold() -> None:
        async for frames in _remote_batches(url, args.token, run_id, follow=False):
            for frame in frames:
                item = item_of(frame)
                if item is not None:
                    timeline.add(item)

    try:
        asyncio.run(fold())
    except SourceError as error:
        raise CommandError(str(error)) from None
    live = timeline.run_end is None and timeline.damaged == 0
    _print_timeline(timeline, out, time.time() if live else None, as_json=args.json)
    return 0


async def _remote_batches(
    url: str, token: str | None, run_id: str, *, follow: bool
) -> AsyncIterator[list[SseFrame]]:
    """The frames of one run's events, in the batches the attach server sends them."""
    from inspector.attach_client import AttachClient, find_token

    async with AttachClient(url, find_token(url, token)) as client:
        params = {"follow": "1"} if follow else None
        async for frames in client.frames(f"runs/{run_id}/events", params=params):
            yield frames
