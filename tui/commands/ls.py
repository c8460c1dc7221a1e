"""``runtop ls``: the runs under ledger files, directories or attach servers, one a line.

Never loads Textual, and ``--json`` not even Rich (nor asyncio, unless an
attach server is asked): listing 10,000 ledgers is mostly start-up and
reading, and every import is paid on each call (bench/directory.py). What
each ledger's bytes said is kept in the summary cache
(:mod:`ledger_reader.summary_cache`), so a second listing reads only the
ledgers that changed; ``--no-cache`` or ``RUNTOP_NO_CACHE=1`` read them all.
``--filter`` keeps the runs a filter passes, in the language of the app's ``/``
(:mod:`inspector.filters`), ``has:`` included; ``--view NAME`` lists them through a view
kept in ``$RUNTOP_HOME/views.toml`` (:mod:`tui.views`: its filter, sort and columns);
``--watch`` lists them again as they change (:mod:`tui.commands.ls_watch`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from inspector.ledger import (
    MAX_LINE_BYTES,
    LedgerGone,
    NoLedgers,
    RunSummary,
    SummaryCache,
    collector_held,
    family_totals,
    scan_summaries,
)
from tui.commands.output import say, write_json
from tui.commands.run_selection import parse_filter, select, views_of
from tui.commands.targets import (
    CommandError,
    UsageError,
    default_places,
    not_a_ledger,
    split_targets,
)
from tui.text import HOW_TO_START

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.console import Console

    from tui.views import View


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """The table (or, with ``--json``, the JSON Lines) of the runs ``args`` name."""
    if args.json:
        return run_json(args)
    view = chosen_view(args)
    columns = view.columns if view is not None else ()
    if getattr(args, "watch", False):
        from tui.commands.ls_watch import watch

        return watch(args, _listing(args, view), out, columns)
    summaries, failed, parents = _filtered(args, view)
    if summaries:
        from tui.commands.runs_table import runs_table

        if out.is_terminal:  # as wide as the terminal ($COLUMNS, else its size)
            table = runs_table(summaries, parents, columns, width=out.width)
            out.print(table, crop=True, no_wrap=True, overflow="ellipsis")
        else:  # a pipe or a file: every line whole and no colour, for grep and friends
            sys.stdout.write(runs_table(summaries, parents, columns).plain + "\n")
    return 1 if failed else 0


def run_json(args: argparse.Namespace) -> int:
    """``runtop ls --json``, without the consoles (and Rich) the table needs."""
    view = chosen_view(args)
    if getattr(args, "watch", False):
        from tui.commands.ls_watch import watch

        return watch(args, _listing(args, view), None)
    summaries, failed, _ = _filtered(args, view)
    if summaries:
        write_json(json_lines(summaries))
    return 1 if failed else 0


_ENCODER = msgspec.json.Encoder()


def json_lines(summaries: Sequence[RunSummary]) -> bytes:
    """The runs as ``ls --json`` prints them: JSON Lines, a run a line, without the last
    newline.

    A line is a whole run, so ``head``, ``grep`` and ``jq 'select(...)'`` take runs as
    they come, as from ``docker ps --format json``; ``jq -s`` gathers them into an array.
    """
    return _ENCODER.encode_lines(summaries)[:-1]


def chosen_view(args: argparse.Namespace) -> View | None:
    """The view ``--view`` names, from ``$RUNTOP_HOME/views.toml``; ``None`` without one.

    Raises:
        UsageError: there is no view of that name (the views there are are named).
        CommandError: the file cannot be read, or that view cannot be used (why is said).
    """
    name = getattr(args, "view", None)
    if not name:
        return None
    from inspector.ledger import runtop_home
    from tui.views import VIEWS_FILE, load_views

    path = runtop_home() / VIEWS_FILE
    book = load_views(path)
    if book.damaged is not None:
        raise CommandError(f"--view {name}: {book.damaged}")
    view = book.get(name)
    if view is not None:
        return view
    wrong = next((said for said in book.problems if said.startswith(f"view {name!r}")), None)
    if wrong is not None:
        raise CommandError(wrong)
    there = ", ".join(book.names) or "none yet: the app's V saves one"
    raise UsageError(f"no view {name!r} in {path} (views: {there})")


def _filtered(
    args: argparse.Namespace, view: View | None = None, said: set[str] | None = None
) -> tuple[list[RunSummary], bool, set[str]]:
    """The runs ``args`` name that ``--filter`` (and the view's filter) passes, in the
    view's order (newest first, without one), whether anything failed, and the runs with
    child runs among all those named (filtered out or not); what cannot be read is said on
    stderr (once, with ``said``: the messages said already)."""
    text = getattr(args, "filter", None) or ""
    run_filter = parse_filter(text) if text.strip() else None
    if view is not None and view.filter.strip():
        run_filter = parse_filter(f"{view.filter} {text}")
    summaries, failed = _gather(args, said)
    parents = add_totals(summaries)
    ordered = view is not None and (view.sort, view.reverse) != ("started", True)
    if run_filter is None and not ordered:
        return summaries, failed, parents
    roots, _ = split_targets(args.paths)
    views = views_of(summaries, roots)
    if run_filter is not None:
        views = select(run_filter, views)
    if view is not None and ordered:
        import time

        from tui.columns import sort_runs

        views = sort_runs(views, view.sort, view.reverse, time.time())
    return [run.summary for run in views], failed, parents


def _listing(
    args: argparse.Namespace, view: View | None
) -> Callable[[set[str]], tuple[list[RunSummary], set[str]]]:
    """What ``--watch`` lists each time: the runs, and the ids of those with child runs."""

    def listed(said: set[str]) -> tuple[list[RunSummary], set[str]]:
        summaries, _, parents = _filtered(args, view, said)
        return summaries, parents

    return listed


def add_totals(summaries: list[RunSummary]) -> set[str]:
    """Give each run its ``total``: its own figures, with its child runs' (and theirs)
    among ``summaries`` added (:func:`~ledger_reader.totals.family_totals`); the ids of
    the runs that have child runs there."""
    families = family_totals(summaries)
    for summary in summaries:
        summary.total = families.get(summary.run_id) or summary.totals.rounded()
    return set(families)


def _say(message: str, said: set[str] | None) -> None:
    """``message`` on stderr: once only, with ``said`` (``--watch`` lists every second)."""
    if said is None or message not in said:
        say(sys.stderr, message)
    if said is not None:
        said.add(message)


def _gather(
    args: argparse.Namespace, said: set[str] | None = None
) -> tuple[list[RunSummary], bool]:
    """Every run ``args`` name, newest first, and whether anything failed (said on stderr,
    once each with ``said``)."""
    named, urls = split_targets(args.paths)
    if not args.paths:  # as plain runtop shows them
        named = default_places(sessions=not getattr(args, "no_sessions", False))
    paths: list[Path] = []
    refused = False
    for path in named:
        why = not_a_ledger(path)
        if why is None:
            paths.append(path)
        else:
            _say(why, said)
            refused = True
    # A listing keeps every summary it makes until it exits, and frees nothing on the way:
    # the collector would only walk that growing heap again and again (``bench/directory.py``
    # lists 10,000 ledgers). Nothing a scan
    # builds holds a reference cycle (decoded JSON cannot), and the process exits soon after.
    with collector_held():
        cache = (
            SummaryCache.for_listing(paths, max_line_bytes=MAX_LINE_BYTES)
            if paths and use_cache(args)
            else None
        )
        summaries, errors = scan_summaries(paths, cache=cache) if paths else ([], [])
    if not args.paths:
        # The default directory of a fresh home: nothing has run yet, which is no failure
        # (the coding agents' sessions beside it may be all there is).
        default = str(paths[0])
        fresh = [
            e for e in errors if isinstance(e, LedgerGone | NoLedgers) and str(e.path) == default
        ]
        errors = [e for e in errors if e not in fresh]
        if not summaries and not errors:
            _say(f"no runs yet in {paths[0]}. {HOW_TO_START}", said)
    failed = bool(errors) or refused
    for error in errors:
        _say(str(error), said)
    for url in urls:
        import asyncio

        from inspector.source import SourceError

        try:
            listed = asyncio.run(_remote_summaries(url, args.token))
        except SourceError as error:
            _say(str(error), said)
            failed = True
        else:
            if not listed:
                _say(f"no runs yet on {url}", said)
            summaries.extend(listed)
    if urls:
        summaries.sort(key=lambda summary: (summary.started, summary.run_id), reverse=True)
    return summaries, failed


def use_cache(args: argparse.Namespace) -> bool:
    """Whether the summary cache is used: not with ``--no-cache`` nor ``RUNTOP_NO_CACHE=1``."""
    if getattr(args, "no_cache", False):
        return False
    return os.environ.get("RUNTOP_NO_CACHE", "") in ("", "0")


async def _remote_summaries(url: str, token: str | None) -> list[RunSummary]:
    from inspector.attach_client import AttachClient, find_token

    async with AttachClient(url, find_token(url, token)) as client:
        return await client.runs()
