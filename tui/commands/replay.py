"""``runtop replay PATH...``: past runs played back in the app as they happened."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from inspector import SPEEDS, ReplaySource
from inspector.ledger import LedgerError, LedgerUnreadable, NotALedgerFile, file_kind, find_ledgers
from tui.app import make_app, run_until_exit
from tui.commands.targets import CommandError, require_terminal
from tui.settings import settings_from


def replay_files(paths: Sequence[str], skipped: list[LedgerError] | None = None) -> list[Path]:
    """The ledgers to play: each file named, and every ledger under each directory named
    (last night's ``~/.runtop/runs`` replayed whole), in order, each once.

    What a directory holds that could not be played (a FIFO named ``*.jsonl``,
    a subdirectory that cannot be read) is added to ``skipped``.

    Raises:
        CommandError: a path that is missing or no regular file, or a directory with
            no ledger in it.
    """
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise CommandError(f"{name}: no such file or directory") from None
        except OSError as error:
            raise CommandError(str(LedgerUnreadable(name, error))) from None
        if stat.S_ISDIR(mode):
            errors: list[LedgerError] = []
            found = sorted(find_ledgers(path, errors, say_skipped=True))
            if not found:
                why = f" ({errors[0]})" if errors else ""
                raise CommandError(f"{name}: no ledgers (*.jsonl) found{why}")
            files.extend(found)
            if skipped is not None:
                skipped.extend(errors)
        elif stat.S_ISREG(mode):
            files.append(path)
        else:
            raise CommandError(str(NotALedgerFile(name, file_kind(mode))))
    return list(dict.fromkeys(files))


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    skipped: list[LedgerError] = []
    files: list[str | os.PathLike[str]] = [*replay_files(args.files, skipped)]
    require_terminal()
    for error in skipped:  # before the app's screen: still there when it closes
        err.print(f"runtop: {error}", markup=False, highlight=False)
    source = ReplaySource(files, speed=SPEEDS[args.speed], name="replay")
    return run_until_exit(make_app(settings_from(args), [source]))
