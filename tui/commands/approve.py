"""``runtop approve``: approve the approval a run waits on, as the app's
``a`` does, over HTTP or by a control file beside its ledger.

The run is found and refused as ``runtop cancel`` finds and refuses it, and answered, by
:func:`tui.commands.run_action.answer`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from tui.commands.run_arguments import add_answer_arguments

if TYPE_CHECKING:
    from rich.console import Console

HELP: Final = (
    "approve the question a run waits on",
    "Approve the approval a live run waits on, by the same rules as the app's a: from a "
    "directory by a control file its writer acts on, from a server through its attach API.",
    '  runtop approve RUN_ID --reason "checked the diff"\n'
    "  runtop approve 9c2e7b3d --from http://127.0.0.1:8765",
)
"""``runtop approve``'s summary, description and examples (``runtop approve --help``)."""


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_answer_arguments(command)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from tui.commands.run_action import answer

    return answer(args, out, approved=True)


__all__ = ["HELP", "add_arguments", "run"]
