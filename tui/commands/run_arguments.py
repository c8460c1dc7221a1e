"""The options ``runtop approve``, ``deny`` and ``resume`` share: which run, where, as whom.

Light on purpose: every command's options are built for each ``runtop`` call (``runtop ls
--json`` included), while :mod:`tui.commands.run_action`, which asks the run, is imported
only by the command that runs.
"""

from __future__ import annotations

import argparse
from typing import Final

from inspector.ledger import default_ledger_dir

WHERE_HELP: Final = (
    "the run's ledger directory (a control file is written) or an attach server's URL "
    "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)"
)


def add_run_arguments(command: argparse.ArgumentParser, *, user: bool = True) -> None:
    """``RUN_ID``, ``--from DIR_OR_URL``, ``--token`` (and ``--user``), as ``cancel`` has."""
    command.add_argument("run_id", metavar="RUN_ID", help="a run id, or a unique part of one")
    command.add_argument(
        "--from",
        dest="where",
        metavar="DIR_OR_URL",
        default=str(default_ledger_dir()),
        help=WHERE_HELP,
    )
    command.add_argument(
        "--token", help="an attach server's token (default: $RUNTOP_TOKEN or its token file)"
    )
    if user:
        command.add_argument(
            "--user", help="who asks, as the ledger records it (default: the OS user)"
        )


def add_answer_arguments(command: argparse.ArgumentParser) -> None:
    """``approve``'s and ``deny``'s: the run's, and ``--reason``."""
    add_run_arguments(command)
    command.add_argument("--reason", help="why: recorded in the ledger with the answer")


__all__ = ["WHERE_HELP", "add_answer_arguments", "add_run_arguments"]
