"""``runtop stats``: calls across runs by model, tool or agent: how many, how many failed,
how long they took (median, p95), what they spent.

By model and by tool, each run's ledger is read into its timeline
(:class:`~inspector.timeline.Timeline`, as ``show --timeline`` and the app read it) and its
model or tool nodes are fed to the one fold of such tables
(:mod:`inspector.call_stats`); by agent, each run is one call of its agent, from its
summary. ``--filter`` keeps the runs a filter passes, in the language of the app's ``/``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tui.commands.output import say

if TYPE_CHECKING:
    from rich.console import Console

    from inspector.call_stats import CallStats, CallTally
    from inspector.filters import RunFilter
    from inspector.ledger import LedgerItem, RunSummary
    from inspector.timeline import Timeline
    from inspector.timeline_nodes import NodeKind

BY: Final = ("model", "tool", "agent")
"""What the calls are grouped by: a model call's model, a tool call's tool, or a run's
agent (its calls are its runs). Everything else is imported when the command runs: every
``runtop`` command line builds this one's options."""

HELP: Final = (
    "calls across runs by model, tool or agent: counts, errors, latency, tokens, cost",
    "Model calls by model, tool calls by tool, or runs by agent, across the runs under "
    "ledger files, directories or attach servers: how many, how many failed, how long "
    "they took (median and p95), the tokens and cost they said, in how many runs.",
    "  runtop stats --by model                      model calls in ~/.runtop/runs\n"
    "  runtop stats ~/.runtop/samples --by tool     tool calls of the samples\n"
    "  runtop stats --by agent --filter since:1h    the last hour's runs by agent\n"
    "  runtop stats --from http://127.0.0.1:8765 --json",
)
"""``runtop stats``'s summary, description and examples (``runtop stats --help``)."""


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "places",
        nargs="*",
        metavar="PATH_OR_URL",
        help="ledger files or directories, or attach servers' URLs (default: "
        "$RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    command.add_argument(
        "--from",
        dest="more_places",
        action="append",
        default=[],
        metavar="DIR_OR_URL",
        help="a ledger directory or an attach server's URL, as a PATH_OR_URL; may be repeated",
    )
    command.set_defaults(places_into="paths")
    command.add_argument(
        "--by", choices=list(BY), default="model", help="what to group by (default: model)"
    )
    command.add_argument(
        "--filter",
        metavar="FILTER",
        help="only the runs this filter passes, as the app's / takes it (docs/filters.md)",
    )
    command.add_argument("--json", action="store_true", help="print a JSON array, one per group")
    command.add_argument(
        "--token", help="an attach server's token (default: $RUNTOP_TOKEN or its token file)"
    )


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    import msgspec

    from tui.commands.output import write_json

    stats, failed = gather(args)
    if args.json:
        write_json(msgspec.json.encode([_as_json(row, args.by) for row in stats]))
    elif stats:
        table = stats_table(stats, args.by)
        if out.is_terminal:
            out.print(table, crop=True, no_wrap=True, overflow="ellipsis", markup=False)
        else:
            sys.stdout.write(table + "\n")
    elif not failed:  # after a failure, what failed is what was wrong: said already
        say(sys.stderr, f"no {'runs' if args.by == 'agent' else args.by + ' calls'} found")
    return 1 if failed else 0


def gather(args: argparse.Namespace) -> tuple[list[CallStats], bool]:
    """Each group's statistics over the runs ``args`` name that ``--filter`` passes, and
    whether anything could not be read (said on stderr)."""
    from inspector.call_stats import add_nodes, call_stats
    from inspector.ledger import LedgerError, scan_summaries
    from inspector.timeline_nodes import NodeKind
    from tui.commands.run_selection import parse_filter
    from tui.commands.targets import default_places, not_a_ledger, split_targets

    text = getattr(args, "filter", None) or ""
    run_filter = parse_filter(text) if text.strip() else None
    named, urls = split_targets(args.paths)
    if not args.paths:  # the runs and the coding agents' sessions, as ls lists them
        named = [place for place in default_places() if place.exists()]
    failed = False
    paths = []
    for path in named:
        why = not_a_ledger(path)
        if why is None:
            paths.append(path)
        else:
            say(sys.stderr, why)
            failed = True
    tallies: dict[str, CallTally] = {}
    kind = {"model": NodeKind.MODEL, "tool": NodeKind.TOOL}.get(args.by)
    if paths:
        summaries, errors = scan_summaries(paths)
        for error in errors:
            say(sys.stderr, str(error))
        failed = failed or bool(errors)
        for summary in _passing(summaries, run_filter, paths):
            if kind is None:
                _add_run(tallies, summary)
            elif summary.path is not None:
                try:
                    items = _ledger_items(summary)
                except LedgerError as error:
                    say(sys.stderr, str(error))
                    failed = True
                    continue
                add_nodes(tallies, summary.run_id, _timeline(summary, items).nodes(), kind)
    for url in urls:
        failed = _add_server(tallies, url, args, run_filter, kind) or failed
    return call_stats(tallies), failed


def _passing(
    summaries: list[RunSummary], run_filter: RunFilter | None, roots: list[Path]
) -> list[RunSummary]:
    """The runs ``run_filter`` passes (every run, without one)."""
    from tui.commands.run_selection import select, views_of

    if run_filter is None:
        return summaries
    return [view.summary for view in select(run_filter, views_of(summaries, roots))]


def _ledger_items(summary: RunSummary) -> list[LedgerItem]:
    from inspector.ledger import agent_of, read_ledger_lines, session_events, writer_gone

    assert summary.path is not None
    if agent_of(summary.path) is not None:  # a coding agent's session, folded as ls folds it
        return list(session_events(summary.path))
    lines = read_ledger_lines(summary.path, torn_tail=writer_gone(summary))
    return [line.item for line in lines if line.item is not None]


def _timeline(summary: RunSummary, items: Iterable[LedgerItem]) -> Timeline:
    """The run's timeline, ended where a run that stopped writing stopped (as ``show
    --timeline`` ends it)."""
    from inspector.ledger import parse_time
    from inspector.timeline import Timeline

    timeline = Timeline(summary.run_id)
    timeline.extend(items)
    if timeline.run_end is None and not summary.status.is_live:
        stopped = parse_time(summary.last_event_at or "")
        if stopped is not None:
            timeline.stop(stopped.timestamp())
    return timeline


def _add_run(tallies: dict[str, CallTally], summary: RunSummary) -> None:
    """One run of its agent: how long it took, whether it failed, what it spent."""
    from inspector.call_stats import CallTally
    from inspector.ledger import RunStatus
    from tui.text import skill_and_agent

    name = skill_and_agent(summary.skill, summary.agent) or "(no agent named)"
    tally = tallies.get(name)
    if tally is None:
        tally = tallies[name] = CallTally()
    spent = summary.totals
    tally.add(
        summary.run_id,
        seconds=summary.duration(),
        failed=summary.status is RunStatus.FAILED,
        running=summary.status.is_live,
        spent=spent if spent.said else None,
    )


def _add_server(
    tallies: dict[str, CallTally],
    url: str,
    args: argparse.Namespace,
    run_filter: RunFilter | None,
    kind: NodeKind | None,
) -> bool:
    """Feed the runs of the attach server at ``url``; whether it failed (said on stderr)."""
    import asyncio

    from inspector.attach_client import AttachClient, find_token
    from inspector.call_stats import add_nodes
    from inspector.source import SourceError

    async def fetch() -> None:
        async with AttachClient(url, find_token(url, args.token)) as client:
            for summary in _passing(await client.runs(), run_filter, []):
                if kind is None:
                    _add_run(tallies, summary)
                    continue
                _, items = await client.run(summary.run_id)
                add_nodes(tallies, summary.run_id, _timeline(summary, items).nodes(), kind)

    try:
        asyncio.run(fetch())
    except SourceError as error:
        say(sys.stderr, str(error))
        return True
    return False


def _as_json(row: CallStats, by: str) -> dict[str, object]:
    totals = row.totals
    return {
        by: row.name,
        "calls" if by != "agent" else "runs_made": row.calls,
        "errors": row.errors,
        "running": row.running,
        "runs": row.runs,
        "median_seconds": None if row.median is None else round(row.median, 6),
        "p95_seconds": None if row.p95 is None else round(row.p95, 6),
        "prompt_tokens": totals.prompt_tokens,
        "output_tokens": totals.output_tokens,
        "cost_usd": totals.cost_usd,
    }


def stats_table(stats: list[CallStats], by: str) -> str:
    """The groups as aligned lines, a header first, busiest first."""
    from tui.text import cost, duration, inert, shorten, tokens

    titles = [by.upper(), "RUNS" if by == "agent" else "CALLS", "ERRORS", "MEDIAN", "P95"]
    titles += ["TOKENS", "COST"] + ([] if by == "agent" else ["RUNS"])
    rows = []
    for row in stats:
        said = row.totals
        cells = [
            shorten(inert(row.name, single_line=True), 40),
            str(row.calls) + (f" ({row.running} running)" if row.running else ""),
            str(row.errors) if row.errors else "",
            duration(row.median) if row.median is not None else "",
            duration(row.p95) if row.p95 is not None else "",
            tokens(said.tokens) if said.tokens is not None else "",
            cost(said.cost_usd) if said.cost_usd is not None else "",
        ]
        if by != "agent":
            cells.append(str(row.runs))
        rows.append(cells)
    # TOKENS and COST said by no group go, as ls leaves out a column empty for every run
    # (a tool's calls never say them)
    said_at = [at for at in (5, 6) if any(cells[at] for cells in rows)]
    kept = [at for at in range(len(titles)) if at not in (5, 6) or at in said_at]
    titles = [titles[at] for at in kept]
    rows = [[cells[at] for at in kept] for cells in rows]
    widths = [
        max(len(title), *(len(cells[at]) for cells in rows)) for at, title in enumerate(titles)
    ]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (text.rjust(widths[at + 1]) for at, text in enumerate(cells[1:]))
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([line(titles), *(line(cells) for cells in rows)])


__all__ = ["HELP", "add_arguments", "gather", "run", "stats_table"]
