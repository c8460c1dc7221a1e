"""``runtop show``: one run's events, readable or as JSON Lines, from a ledger or a server.

Never loads Textual. ``--follow`` keeps printing until the run ends.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from rich.console import Console
from rich.text import Text

from ledger_reader import (
    DamagedLine,
    LedgerGone,
    LedgerTail,
    RunCompleted,
    RunEvent,
    encode_event,
)
from ledger_reader.head_tail import summarize_ledger, writer_gone
from ledger_reader.lines import Line, read_ledger_lines
from tui.commands.output import say, write_json
from tui.commands.targets import (
    CommandError,
    default_ledger_dir,
    is_url,
    require_run_id,
    resolve_ledger,
)
from tui.describe import describe, glyph

if TYPE_CHECKING:
    from inspector.attach_client import SseFrame


class EventPrinter:
    """Prints one run's lines, readable or as JSON Lines."""

    def __init__(self, console: Console, *, as_json: bool) -> None:
        self.console = console
        self.as_json = as_json
        self.started: datetime | None = None
        self.finished = False

    def line(self, line: Line) -> None:
        item = line.item
        if item is None:
            return
        if isinstance(item, DamagedLine):
            self._damaged(item)
            if item.recovered is not None:
                self._event(item.recovered, b"")
        else:
            self._event(item, line.raw)

    def _damaged(self, item: DamagedLine) -> None:
        if self.as_json:
            record = {"type": "damaged_line", "offset": item.offset, "reason": item.reason}
            write_json(msgspec.json.encode(record))
        else:
            self.console.print(Text(f"{'':>10}  {glyph(item)} {describe(item)}", style="red"))

    def _event(self, event: RunEvent, raw: bytes) -> None:
        if isinstance(event, RunCompleted):
            self.finished = True
        if self.as_json:
            write_json(raw or encode_event(event).rstrip(b"\n"))
            return
        moment = event.timestamp
        if self.started is None and moment is not None:
            self.started = moment
        since = ""
        if moment is not None and self.started is not None:
            since = f"+{(moment - self.started).total_seconds():.3f}s"
        style = "red" if event.type == "error" else ""
        self.console.print(Text(f"{since:>10}  {glyph(event)} {describe(event)}", style=style))


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    urls = [where for where in args.dir or [] if is_url(where)]
    if urls:
        return _show_remote(args, urls[0], out)
    search = [Path(path) for path in args.dir] if args.dir else [default_ledger_dir()]
    path = resolve_ledger(args.target, search)
    printer = EventPrinter(out, as_json=args.json)
    # A torn last line is damage once the writer is known gone; until then it is a line
    # still being written.
    gone = writer_gone(summarize_ledger(path))
    end = 0
    for line in read_ledger_lines(path, keep_raw=True, torn_tail=gone):
        printer.line(line)
        end = line.end + 1
    if args.follow and not printer.finished:
        asyncio.run(_follow(path, end, printer, err))
    return 0


async def _follow(path: Path, start: int, printer: EventPrinter, err: Console) -> None:
    """Print lines as they land until the run completes (or Ctrl-C)."""
    from watchfiles import awatch

    tail = LedgerTail(path, start=start, keep_raw=True)
    stop = asyncio.Event()
    async for _ in awatch(
        path, debounce=1, step=1, stop_event=stop, rust_timeout=1000, yield_on_timeout=True
    ):
        try:
            batch = await tail.apoll()
        except LedgerGone:
            say(err.file, f"{path}: the ledger was removed")
            return
        if batch.reset is not None:
            say(err.file, f"{path}: the ledger was {batch.reset}; reading it again from the start")
            printer.started = None
        for line in batch.lines:
            printer.line(line)
        if printer.finished:
            stop.set()
            return


def _show_remote(args: argparse.Namespace, url: str, out: Console) -> int:
    """``runtop show RUN_ID --from URL``: the run's events from an attach server."""
    from inspector.attach_client import item_of
    from inspector.source import SourceError

    run_id = require_run_id(args.target, " (a server is asked by run id)")
    printer = EventPrinter(out, as_json=args.json)

    async def show() -> None:
        async for frame in _remote_events(url, args.token, run_id, follow=args.follow):
            item = item_of(frame)
            if item is not None:
                printer.line(Line(0, 0, item, frame.data if frame.event is None else b""))

    try:
        asyncio.run(show())
    except SourceError as error:
        raise CommandError(str(error)) from None
    return 0


async def _remote_events(
    url: str, token: str | None, run_id: str, *, follow: bool
) -> AsyncIterator[SseFrame]:
    """The frames of one run's events, as the attach server sends them."""
    from inspector.attach_client import AttachClient, find_token

    async with AttachClient(url, find_token(url, token)) as client:
        params = {"follow": "1"} if follow else None
        async for frames in client.frames(f"runs/{run_id}/events", params=params):
            for frame in frames:
                yield frame
