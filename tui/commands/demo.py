"""``runtop demo``: simulated agents in an embedded run manager, watched in the app.

Its runs write their ledgers where every runtop looks by default
(``$RUNTOP_LEDGER_DIR``, else ``~/.runtop/runs``), so plain ``runtop`` and
``runtop ls`` show them again after it. With ``runtop serve``, the only
command that loads the run manager.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import shutil
import sys
from pathlib import Path

from rich.console import Console

from inspector import ManagerSource
from run_manager import Manager
from tui.app import make_app, run_until_exit
from tui.commands.targets import require_terminal
from tui.demo import STARTING, start_demo
from tui.settings import settings_from


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    settings = settings_from(args)
    require_terminal()
    manager = Manager(retained_runs=200)  # the default ledger folder
    ledger_dir = manager.ledger_dir
    tasks: list[asyncio.Task[None]] = []

    async def stop() -> None:
        for task in tasks:
            task.cancel()
        await manager.close(grace=2.0)

    app = make_app(
        settings,
        [ManagerSource(manager, name="demo")],
        on_exit=stop,
        starting=STARTING,
    )

    async def begin() -> None:
        tasks.append(asyncio.create_task(start_demo(manager, pace=args.pace)))

    app.call_later(lambda: app.run_worker(begin()))
    status = run_until_exit(app)
    typed = runtop_as_typed()
    watch, listing = shlex.join(typed), shlex.join([*typed, "ls"])
    sys.stdout.write(
        f"The demo's runs are in {ledger_dir}\n"
        f"Watch them again with: {watch}  (or list them: {listing})\n"
    )
    return status


def runtop_as_typed(
    argv0: str | None = None, path: str | None = None, executable: str = sys.executable
) -> list[str]:
    """The command that starts this runtop again, as a user can type it where they are:
    ``runtop`` when that is the one on ``PATH``, else the path it was started by
    (``.venv/bin/runtop`` after ``make run``), else the interpreter with ``-m``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if Path(argv0).name != "runtop":  # python -m tui.cli
        return [executable, "-m", "tui.cli"]
    found = shutil.which("runtop", path=path)
    with contextlib.suppress(OSError):  # a path that went away since: say the one started
        if found is not None and os.path.samefile(found, argv0):
            return ["runtop"]
    return [argv0]
