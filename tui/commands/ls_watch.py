"""``runtop ls --watch``: the table listed again every second, shown as it changes, until
Ctrl-C (which ends it with status 0).

On a terminal the table is redrawn in place (as ``watch`` does, cut to the screen's
height, the clock of live runs ticking). Into a pipe or a file, each listing that
differs from the one before is written whole after a line that says when, and only
then: a listing unchanged but for the clock of a live run is not written again. With
``--json``, the first listing is ``ls --json``'s lines (a run a line), then each run
that changed or came is a line again, and one that left the listing (its ledger gone,
or no longer passing ``--filter``) is ``{"run_id": …, "path": …, "removed": true}``:
one stream of runs, as ``kubectl get --watch`` writes each object that changed. What
cannot be read is said on stderr once, not every second; the listing goes on.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import msgspec

from tui.commands.output import write_json

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.console import Console

    from inspector.ledger import RunSummary

INTERVAL: Final = 1.0
"""Seconds between two listings."""


def watch(
    args: argparse.Namespace,
    listing: Callable[[set[str]], tuple[list[RunSummary], set[str]]],
    out: Console | None,
    columns: Sequence[str] = (),
    *,
    interval: float = INTERVAL,
) -> int:
    """List with ``listing`` every ``interval`` seconds, until interrupted, in a table of
    ``columns`` (a view's; none: every one); ``out`` is ``None`` for ``--json``.
    ``listing`` gives the runs and the ids of those with child runs, and says what cannot
    be read on stderr once (the set it is given holds what was said)."""
    said: set[str] = set()
    try:
        if out is not None and out.is_terminal and not args.json:
            _redraw(listing, said, out, interval, columns)
        else:
            _append(listing, said, interval, columns, as_json=args.json)
    except KeyboardInterrupt:
        pass
    return 0


def _redraw(
    listing: Callable[[set[str]], tuple[list[RunSummary], set[str]]],
    said: set[str],
    out: Console,
    interval: float,
    columns: Sequence[str],
) -> None:
    from rich.console import Group
    from rich.live import Live
    from rich.text import Text

    from tui.commands.runs_table import runs_table

    with Live(console=out, auto_refresh=False, vertical_overflow="crop") as live:
        while True:
            summaries, parents = listing(said)
            top = Text(f"{_heading(summaries)} · Ctrl-C ends", style="dim", no_wrap=True)
            table = runs_table(summaries, parents, columns, width=out.width) if summaries else None
            body = table if table is not None else Text("no runs")
            live.update(Group(top, body), refresh=True)
            time.sleep(interval)


def _append(
    listing: Callable[[set[str]], tuple[list[RunSummary], set[str]]],
    said: set[str],
    interval: float,
    columns: Sequence[str],
    *,
    as_json: bool,
) -> None:
    if as_json:
        _stream(listing, said, interval)
        return
    from tui.commands.runs_table import runs_table

    last = b""
    while True:
        summaries, parents = listing(said)
        encoded = msgspec.json.encode(summaries)
        if encoded != last:
            table = runs_table(summaries, parents, columns).plain if summaries else "no runs"
            prefix = "\n" if last else ""
            sys.stdout.write(f"{prefix}{_heading(summaries)}\n{table}\n")
            sys.stdout.flush()
            last = encoded
        time.sleep(interval)


def _stream(
    listing: Callable[[set[str]], tuple[list[RunSummary], set[str]]],
    said: set[str],
    interval: float,
) -> None:
    """``--watch --json``: the runs as ``ls --json`` writes them, then each run that
    changed, came or left, a line each, as it does."""
    last: dict[tuple[str, str | None], bytes] = {}
    while True:
        summaries, _ = listing(said)
        now = {(run.run_id, run.path): msgspec.json.encode(run) for run in summaries}
        lines = [encoded for key, encoded in now.items() if last.get(key) != encoded]
        lines.extend(
            msgspec.json.encode({"run_id": run_id, "path": path, "removed": True})
            for run_id, path in last
            if (run_id, path) not in now
        )
        if lines:
            write_json(b"\n".join(lines))
        last = now
        time.sleep(interval)


def _heading(summaries: list[RunSummary]) -> str:
    """When the listing was taken, and how many runs it holds."""
    moment = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    count = len(summaries)
    return f"{moment} · {count:,} run{'s' if count != 1 else ''}"
