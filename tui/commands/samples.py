"""``runtop samples``: the six sample ledgers runtop ships, opened in the app.

They are copied into ``$RUNTOP_HOME/samples`` (``~/.runtop/samples``) first: an
installed package may be read-only, and a copy of one's own can be listed,
shown, replayed and changed. ``--path`` copies them and prints that folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from inspector.ledger import make_private_dir, runtop_home
from tui.commands.targets import CommandError, require_terminal

if TYPE_CHECKING:
    from rich.console import Console

SHIPPED: Final = Path(__file__).resolve().parent.parent / "samples"
"""The sample ledgers as the package holds them."""


def samples_dir() -> Path:
    """Where ``runtop samples`` puts its copy: ``samples`` in ``$RUNTOP_HOME``."""
    return runtop_home() / "samples"


def copy_samples(target: Path | None = None) -> Path:
    """Copy the shipped samples into ``target`` (default :func:`samples_dir`); the folder.

    Each copy is written afresh (a sample changed by hand is restored); files beside
    them are left alone. A copy is as new as the copying: how live its run looks is
    judged from the ledger's own times too, so a sample never looks running.

    Raises:
        CommandError: the folder cannot be made or written.
    """
    target = samples_dir() if target is None else target
    try:
        make_private_dir(target)
        for sample in sorted(SHIPPED.glob("*.jsonl")):
            shutil.copyfile(sample, target / sample.name)
    except OSError as error:
        raise CommandError(
            f"cannot copy the samples to {target}: {error.strerror or error}"
        ) from None
    return target


def named_samples_restored(arguments: Sequence[str]) -> Path | None:
    """Copy the samples if ``arguments`` name their folder, or a file in it, and it is missing.

    The documents show ``runtop ls ~/.runtop/samples`` and ``--from ~/.runtop/samples``
    after ``runtop samples``; each such line works on its own too, in a new home or after
    the folder was removed, rather than saying there is no such folder.

    Returns:
        The folder, when it was copied now; ``None`` when nothing was named or it exists.

    Raises:
        CommandError: it was named, is missing and cannot be made.
    """
    # The documents' ~/.runtop/samples, and runtop's own home's where $RUNTOP_HOME is set
    # elsewhere: the folder named is the one made.
    places = {samples_dir(), Path.home() / ".runtop" / "samples"}
    for argument in arguments:
        named = Path(argument.partition("=")[2] if argument.startswith("--") else argument)
        named = named.expanduser().absolute()
        for home in places:
            if named in (home, home / named.name) and not home.exists():
                return copy_samples(home)
    return None


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.path:
        sys.stdout.write(f"{copy_samples()}\n")
        return 0
    from inspector import LedgerDirectorySource
    from tui.app import make_app, run_until_exit
    from tui.settings import settings_from

    settings = settings_from(args)
    require_terminal()
    source = LedgerDirectorySource(copy_samples(), name="samples")
    return run_until_exit(make_app(settings, [source]))
