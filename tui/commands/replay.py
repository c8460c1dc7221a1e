"""``runtop replay PATH...``: past runs played back in the app as they happened."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from inspector import SPEEDS, ReplaySource
from ledger_reader import LedgerError, find_ledgers
from tui.app import make_app, run_until_exit
from tui.commands.targets import CommandError
from tui.settings import settings_from


def replay_files(paths: Sequence[str]) -> list[Path]:
    """The ledgers to play: each file named, and every ledger under each directory named
    (last night's ``~/.runtop/runs`` replayed whole), in order, each once.

    Raises:
        CommandError: a path that is missing, or a directory with no ledger in it.
    """
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            errors: list[LedgerError] = []
            found = sorted(find_ledgers(path, errors))
            if not found:
                why = f" ({errors[0]})" if errors else ""
                raise CommandError(f"{name}: no ledgers (*.jsonl) found{why}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CommandError(f"{name}: no such file or directory")
    return list(dict.fromkeys(files))


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    files: list[str | os.PathLike[str]] = [*replay_files(args.files)]
    source = ReplaySource(files, speed=SPEEDS[args.speed], name="replay")
    return run_until_exit(make_app(settings_from(args), [source]))
