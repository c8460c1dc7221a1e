"""The ``runtop`` command line.

``runtop ls`` and ``runtop show`` answer without the TUI (and without
importing Textual, so they start fast); ``--json`` gives scripts the
same data. Every failure a user can cause (a missing path, an unreadable
file, a bad run id) is one line on stderr and a non-zero exit, never a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import msgspec
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ledger_reader import (
    DamagedLine,
    LedgerError,
    LedgerGone,
    LedgerTail,
    RunCompleted,
    RunEvent,
    RunStatus,
    RunSummary,
    encode_event,
    find_ledgers,
    is_valid_run_id,
    parse_time,
    scan_summaries,
)
from ledger_reader.head_tail import summarize_ledger, writer_gone
from ledger_reader.lines import Line, read_ledger_lines
from ledger_reader.locations import default_ledger_dir
from tui.describe import describe, glyph
from tui.text import duration, inert, json_safe, shorten

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

STATUS_STYLE: Final = {
    RunStatus.RUNNING: ("●", "cyan"),
    RunStatus.AWAITING_APPROVAL: ("◐", "yellow"),
    RunStatus.SUCCEEDED: ("✔", "green"),
    RunStatus.FAILED: ("✘", "red"),
    RunStatus.CANCELED: ("⊘", "magenta"),
    RunStatus.SUSPENDED: ("‖", "yellow"),
    RunStatus.ABANDONED: ("✝", "red"),
    RunStatus.STALE: ("?", "bright_black"),
    RunStatus.UNKNOWN: ("?", "bright_black"),
}


class CommandError(Exception):
    """A failure to report as one line on stderr."""


def _fail(console: Console, message: str) -> None:
    """One line on stderr, never wrapped: scripts and people both read it."""
    console.file.write(f"runtop: {inert(message, single_line=True)}\n")
    console.file.flush()


def _duration(summary: RunSummary) -> str:
    start = parse_time(summary.started_at or "")
    end = parse_time(summary.completed_at or summary.last_event_at or "")
    if start is None or end is None:
        return ""
    return duration(max(0.0, (end - start).total_seconds()))


def _when(value: str | None) -> str:
    parsed = parse_time(value or "")
    if parsed is None:
        return inert(value or "", single_line=True)
    return parsed.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _note(summary: RunSummary) -> str:
    parts: list[str] = []
    if summary.pending_approval is not None:
        prompt = summary.pending_approval.prompt or summary.pending_approval.approval_id
        parts.append(f"awaiting approval: {prompt}")
    if summary.cancel_requested:
        parts.append("cancelling…")
    if summary.error:
        parts.append(summary.error)
    if summary.warning_count:
        plural = "s" if summary.warning_count != 1 else ""
        parts.append(f"{summary.warning_count} warning{plural}")
    return shorten(inert("; ".join(parts), single_line=True), 80)


_LS_COLUMNS: Final = (
    ("STATUS", False),
    ("RUN ID", False),
    ("SKILL / AGENT", False),
    ("STARTED (UTC)", False),
    ("DURATION", True),
    ("EVENTS", True),
    ("DAMAGED", True),
    ("NOTE", False),
)
"""Title of each column of ``runtop ls``, and whether it is right-aligned."""


def runs_table(summaries: Sequence[RunSummary]) -> Text:
    """The runs as aligned lines, a header first, newest first as given.

    Laid out here rather than by a Rich Table, which measured every cell of
    every row again to lay it out: 13 s for 10,000 runs. Each line is a few
    appends (the status and a damaged count in colour, the rest plain).
    """
    rows: list[list[str]] = []
    for summary in summaries:
        who = " / ".join(part for part in (summary.skill, summary.agent) if part)
        rows.append(
            [
                summary.status.value,
                inert(summary.run_id, single_line=True),
                shorten(inert(who, single_line=True), 32),
                _when(summary.started_at),
                _duration(summary),
                "?" if summary.event_count is None else str(summary.event_count),
                "?" if summary.damaged_lines is None else str(summary.damaged_lines),
                inert(_note(summary), single_line=True),
            ]
        )
    widths = [_cells(title) for title, _ in _LS_COLUMNS]
    for row in rows:
        widths[0] = max(widths[0], 2 + len(row[0]))  # the mark, a space, the status
        for column in range(1, len(widths)):
            widths[column] = max(widths[column], _cells(row[column]))

    def cell(column: int, text: str) -> str:
        room = widths[column] - _cells(text)
        return " " * room + text if _LS_COLUMNS[column][1] else text + " " * room

    table = Text(no_wrap=True, overflow="ellipsis")
    header = "  ".join(cell(column, title) for column, (title, _) in enumerate(_LS_COLUMNS))
    table.append(header.rstrip() + "\n", style="bold")
    for row, summary in zip(rows, summaries, strict=True):
        mark, colour = STATUS_STYLE[summary.status]
        table.append(cell(0, f"{mark} {row[0]}"), style=colour)
        table.append("  " + "  ".join(cell(column, row[column]) for column in range(1, 6)) + "  ")
        table.append(cell(6, row[6]), style="red" if summary.damaged_lines else None)
        table.append(("  " + row[7] if row[7] else "") + "\n")
    table.rstrip()
    return table


def _cells(text: str) -> int:
    """Cells ``text`` takes on screen: its length when it is ASCII (most cells are, and
    ``cell_len`` costs more), else ``cell_len``."""
    return len(text) if text.isascii() else cell_len(text)


def command_ls(args: argparse.Namespace, out: Console, err: Console) -> int:
    from tui.attach_commands import is_url

    targets: list[str] = args.paths or [str(default_ledger_dir())]
    paths = [Path(target) for target in targets if not is_url(target)]
    summaries, errors = scan_summaries(paths) if paths else ([], [])
    failed = bool(errors)
    for error in errors:
        _fail(err, str(error))
    for url in (target for target in targets if is_url(target)):
        from inspector.source import SourceError
        from tui.attach_commands import remote_summaries

        try:
            summaries.extend(asyncio.run(remote_summaries(url, args.token)))
        except SourceError as error:
            _fail(err, str(error))
            failed = True
    summaries.sort(key=lambda summary: (summary.started, summary.run_id), reverse=True)
    if args.json:
        sys.stdout.write(msgspec.json.encode(summaries).decode())
        sys.stdout.write("\n")
    elif summaries:
        table = runs_table(summaries)
        if out.is_terminal:
            out.print(table, crop=True, no_wrap=True, overflow="ellipsis")
        else:  # a pipe or a file: every line whole and no colour, for grep and friends
            sys.stdout.write(table.plain + "\n")
    return EXIT_ERROR if failed else EXIT_OK


def resolve_ledger(target: str, search: Sequence[Path]) -> Path:
    """The ledger a ``show`` argument names: a path, or a run id under ``search``.

    Raises:
        CommandError: nothing matches, in words a user understands.
    """
    path = Path(target)
    if path.exists() or os.sep in target or target.endswith(".jsonl"):
        if not path.exists():
            raise CommandError(f"{target}: no such file")
        if path.is_dir():
            raise CommandError(f"{target}: is a directory; give one ledger file or a run id")
        return path
    if not is_valid_run_id(target):
        raise CommandError(f"{target!r} is neither a ledger file nor a valid run id")
    wanted = f"{target}.jsonl"
    for root in search:
        if not root.is_dir():
            continue
        for candidate in find_ledgers(root, []):
            if candidate.name == wanted:
                return candidate
    places = ", ".join(str(root) for root in search)
    raise CommandError(f"no ledger for run {target} under {places}")


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
            self._write_json(msgspec.json.encode(record))
        else:
            self.console.print(Text(f"{'':>10}  {glyph(item)} {describe(item)}", style="red"))

    def _event(self, event: RunEvent, raw: bytes) -> None:
        if isinstance(event, RunCompleted):
            self.finished = True
        if self.as_json:
            self._write_json(raw or encode_event(event).rstrip(b"\n"))
            return
        moment = event.timestamp
        if self.started is None and moment is not None:
            self.started = moment
        since = ""
        if moment is not None and self.started is not None:
            since = f"+{(moment - self.started).total_seconds():.3f}s"
        style = "red" if event.type == "error" else ""
        self.console.print(Text(f"{since:>10}  {glyph(event)} {describe(event)}", style=style))

    def _write_json(self, data: bytes) -> None:
        sys.stdout.write(json_safe(data.decode("utf-8", "replace")))
        sys.stdout.write("\n")
        sys.stdout.flush()


def command_show(args: argparse.Namespace, out: Console, err: Console) -> int:
    from tui.attach_commands import is_url

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
    return EXIT_OK


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
            _fail(err, f"{path}: the ledger was removed")
            return
        if batch.reset is not None:
            _fail(err, f"{path}: the ledger was {batch.reset}; reading it again from the start")
            printer.started = None
        for line in batch.lines:
            printer.line(line)
        if printer.finished:
            stop.set()
            return


def _show_remote(args: argparse.Namespace, url: str, out: Console) -> int:
    """``runtop show RUN_ID --from URL``: the run's events from an attach server."""
    from inspector.attach_client import item_of
    from tui.attach_commands import remote_events

    if not is_valid_run_id(args.target):
        raise CommandError(f"{args.target!r} is not a run id (a server is asked by run id)")
    printer = EventPrinter(out, as_json=args.json)

    async def show() -> None:
        async for frame in remote_events(url, args.token, args.target, follow=args.follow):
            item = item_of(frame)
            if item is not None:
                printer.line(Line(0, 0, item, frame.data if frame.event is None else b""))

    from inspector.source import SourceError

    try:
        asyncio.run(show())
    except SourceError as error:
        raise CommandError(str(error)) from None
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="runtop",
        description="See, stop and replay AI agent runs from the terminal.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    ls = commands.add_parser("ls", help="list the runs found under ledger files or directories")
    ls.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_URL",
        help="ledger files or directories, or attach servers' URLs "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    ls.add_argument("--json", action="store_true", help="print a JSON array of run summaries")
    show = commands.add_parser("show", help="print the events of one run")
    show.add_argument("target", metavar="PATH_OR_RUN_ID", help="a ledger file or a run id")
    show.add_argument("--json", action="store_true", help="print JSON Lines, one per ledger line")
    show.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="keep printing as the ledger grows, until the run ends or Ctrl-C",
    )
    show.add_argument(
        "--dir",
        "--from",
        dest="dir",
        action="append",
        metavar="DIR_OR_URL",
        help="where to look for a run id: a directory or an attach server's URL "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs); may be repeated",
    )
    cancel = commands.add_parser("cancel", help="ask a run to stop")
    cancel.add_argument("run_id", metavar="RUN_ID")
    cancel.add_argument("--reason", help="why: recorded in the ledger and shown")
    cancel.add_argument(
        "--from",
        dest="where",
        metavar="DIR_OR_URL",
        default=str(default_ledger_dir()),
        help="the run's ledger directory (a control file is written) or an attach "
        "server's URL (default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    serve = commands.add_parser("serve", help="run agents with the attach API (HTTP + SSE)")
    serve.add_argument(
        "--ledger-dir",
        default=str(default_ledger_dir()),
        help="where runs write their ledgers "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    serve.add_argument(
        "--agents",
        metavar="MODULE:ATTR",
        help="the agents POST /api/agent/runs can start and resume re-issues: a list, or a "
        "function returning one (try tui.demo:demo_agents)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (this machine)")
    serve.add_argument("--port", type=int, default=8765, help="default: 8765; 0 picks one")
    serve.add_argument("--read-only", action="store_true", help="refuse every POST (403)")
    serve.add_argument(
        "--finish-runs",
        action="store_true",
        help="on exit, let live runs finish (up to --grace seconds) instead of cancelling them",
    )
    serve.add_argument("--grace", type=float, default=10.0, help="seconds runs get to stop")
    serve.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="execute runs on a Ray cluster (extra runtop[ray]): ADDRESS as ray.init takes it, "
        "default the cluster Ray finds or a new local one",
    )
    for sub in (ls, show, cancel):
        sub.add_argument(
            "--token", help="an attach server's token (default: $RUNTOP_TOKEN or its token file)"
        )
    demo = commands.add_parser("demo", help="watch simulated agents run (ledgers are kept)")
    demo.add_argument("--pace", type=float, default=1.0, help="slower (>1) or faster (<1)")
    replay = commands.add_parser("replay", help="play past runs back as they happened")
    replay.add_argument("files", nargs="+", metavar="FILE", help="ledger files")
    replay.add_argument("--speed", choices=["1", "2", "10", "max"], default="1")
    for sub in (demo, replay):
        sub.add_argument("--theme", help="a Textual theme (also from the command palette)")
        sub.add_argument("--read-only", action="store_true", help="turn every action off")
    return parser


COMMANDS: Final = {"ls", "show", "cancel", "serve", "demo", "replay", "-h", "--help"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    err = Console(stderr=True, highlight=False, markup=False, emoji=False)
    if not arguments or arguments[0] not in COMMANDS:
        return _launch(lambda launch: launch.run_tui(arguments), err)
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command == "demo":
        return _launch(lambda launch: launch.run_demo(args), err)
    if args.command == "replay":
        return _launch(lambda launch: launch.run_replay(args), err)
    out = Console(highlight=False, markup=False, emoji=False, soft_wrap=args.command == "show")
    if not out.is_terminal:
        out.width = 240
    from tui.attach_commands import AttachCommandError, command_cancel, command_serve

    handlers = {
        "ls": command_ls,
        "show": command_show,
        "cancel": command_cancel,
        "serve": command_serve,
    }
    try:
        return handlers[args.command](args, out, err)
    except (CommandError, LedgerError, AttachCommandError) as error:
        _fail(err, str(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `runtop show ... | head`: the reader left; say nothing more.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK


def _launch(start: Callable[[Any], int], err: Console) -> int:
    """Start the TUI (imported only now: ls and show never load Textual)."""
    from tui import launch

    try:
        return start(launch)
    except (launch.LaunchError, LedgerError) as error:
        _fail(err, str(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as error:  # a bug: one line, the traceback kept in a file
        from tui.crash import EXIT_CRASHED, crash_line

        _fail(err, crash_line(error))
        return EXIT_CRASHED


if __name__ == "__main__":
    sys.exit(main())
