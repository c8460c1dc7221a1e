"""``runtop demo``: simulated agents in an embedded run manager, watched in the app.

With ``runtop serve``, the only command that loads the run manager.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from inspector import ManagerSource
from run_manager import Manager
from tui.app import make_app, run_until_exit
from tui.demo import STARTING, start_demo
from tui.settings import settings_from


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    ledger_dir = Path(tempfile.mkdtemp(prefix="runtop-demo-"))
    manager = Manager(ledger_dir=ledger_dir, retained_runs=200)
    tasks: list[asyncio.Task[None]] = []

    async def stop() -> None:
        for task in tasks:
            task.cancel()
        await manager.close(grace=2.0)

    app = make_app(
        settings_from(args),
        [ManagerSource(manager, name="demo")],
        on_exit=stop,
        starting=STARTING,
    )

    async def begin() -> None:
        tasks.append(asyncio.create_task(start_demo(manager, pace=args.pace)))

    app.call_later(lambda: app.run_worker(begin()))
    status = run_until_exit(app)
    sys.stdout.write(
        f"The demo's ledgers are in {ledger_dir}\nWatch them again with: runtop {ledger_dir}\n"
    )
    return status
