"""``runtop deny``: deny the approval a run waits on, as the app's ``d`` does
(:func:`tui.commands.run_action.answer`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from tui.commands.run_arguments import add_answer_arguments

if TYPE_CHECKING:
    from rich.console import Console

HELP: Final = (
    "deny the question a run waits on",
    "Deny the approval a live run waits on, by the same rules as the app's d: from a "
    "directory by a control file its writer acts on, from a server through its attach API.",
    '  runtop deny RUN_ID --reason "not on a Friday"\n'
    "  runtop deny 9c2e7b3d --from http://127.0.0.1:8765",
)
"""``runtop deny``'s summary, description and examples (``runtop deny --help``)."""


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_answer_arguments(command)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from tui.commands.run_action import answer

    return answer(args, out, approved=False)


__all__ = ["HELP", "add_arguments", "run"]
