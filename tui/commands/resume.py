"""``runtop resume``: re-issue a run with its recorded input, as the app's ``r`` does, over
HTTP or by a control file beside its ledger (:mod:`tui.commands.run_action`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from tui.commands.run_arguments import add_run_arguments

if TYPE_CHECKING:
    from rich.console import Console

    from inspector.ledger import RunSummary
    from inspector.source import RunSource

HELP: Final = (
    "re-issue a run with its recorded input",
    "A new run of the same agent with the run's recorded input, by the same rules as the "
    "app's r: from a directory by a control file a runtop manager there (with the run's "
    "agent) acts on, from a server through its attach API.",
    "  runtop resume RUN_ID\n  runtop resume 9c2e7b3d --from http://127.0.0.1:8765",
)
"""``runtop resume``'s summary, description and examples (``runtop resume --help``)."""


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_run_arguments(command, user=False)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from tui.commands.run_action import act

    async def resume(source: RunSource, summary: RunSummary) -> str:
        return await source.resume(summary.run_id)

    run_id, new = act(args.where, args.run_id, args.token, "resume", "resume", resume)
    if new:
        out.print(f"resumed: {run_id} as {new}")
    else:  # a control file: the new run appears when a manager takes it
        out.print(
            f"resume requested: {run_id} (by control file: a runtop manager there with its "
            "agent re-issues it; the new run names it in resumed_from)"
        )
    return 0
