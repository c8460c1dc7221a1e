"""``runtop cancel``: ask a run to stop, over HTTP or by a control file beside its ledger.

Either way the request goes through the source the app would use for the same place
(:mod:`tui.commands.run_action`): a run the app greys ``c`` out for is refused here in the
same words, and the request records the same ``source``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from tui.commands.run_arguments import add_run_arguments
from tui.commands.targets import is_url
from tui.settings import Settings

if TYPE_CHECKING:
    from rich.console import Console

    from inspector.ledger import RunSummary
    from inspector.source import RunSource

HELP: Final = (
    "ask a run to stop",
    "Ask a live run to stop, by the same rules as the app's c: from a directory by a "
    "control file its writer acts on, from a server through its attach API.",
    '  runtop cancel RUN_ID --reason "runaway"\n'
    "  runtop cancel 9c2e7b3d --from http://127.0.0.1:8765",
)
"""``runtop cancel``'s summary, description and examples (``runtop cancel --help``)."""


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_run_arguments(command)
    command.add_argument("--reason", help="why: recorded in the ledger and shown")


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from tui.commands.run_action import act

    user = getattr(args, "user", None) or Settings.from_env().user

    async def cancel(source: RunSource, summary: RunSummary) -> None:
        await source.cancel(summary.run_id, args.reason, by=user)

    run_id, _ = act(args.where, args.run_id, args.token, "cancel", "cancel", cancel)
    if is_url(args.where):
        how = " (the run shows canceled once it has stopped)"
    else:
        how = " (by control file: a runtop writer there acts on it)"
    out.print(f"cancel requested: {run_id}{how}")
    return 0


__all__ = ["HELP", "add_arguments", "run"]
