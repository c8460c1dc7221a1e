"""The commands that open the TUI: ``runtop [PATH...]``, ``runtop demo``, ``runtop replay``.

Kept apart from :mod:`tui.cli` so that ``runtop ls`` never imports Textual.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from inspector import SPEEDS, LedgerDirectorySource, ReplaySource, RunSource
from tui.app import RuntopApp, make_app
from tui.attach_commands import is_url
from tui.settings import Settings


class LaunchError(Exception):
    """A path or option the TUI cannot open; said in one line."""


def add_app_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", help="a Textual theme (also from the command palette)")
    parser.add_argument("--read-only", action="store_true", help="turn every action off")


def tui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="runtop",
        description="Watch agent runs live in ledger directories or files. Other commands: "
        "runtop ls | show | demo | replay (each with --help).",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_URL",
        help="ledger directories or files, or attach servers (http://host:port) "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    parser.add_argument(
        "--token",
        help="the attach servers' bearer token (default: $RUNTOP_TOKEN, else the file "
        "runtop serve wrote on this machine)",
    )
    add_app_options(parser)
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    values: dict[str, Any] = {}
    if getattr(args, "theme", None):
        values["theme"] = args.theme
    if getattr(args, "read_only", False):
        values["read_only"] = True
    return Settings.from_env(**values)


def sources_for(
    targets: list[Path | str], *, default: bool, token: str | None = None
) -> list[RunSource]:
    """Directories are followed, files followed together by directory, URLs attached to."""
    sources: list[RunSource] = []
    files: list[Path] = []
    names: set[str] = set()
    paths: list[Path] = []
    for target in targets:
        if isinstance(target, str) and is_url(target):
            from inspector import RemoteSource

            try:
                remote = RemoteSource(target, token)
            except ValueError as error:
                raise LaunchError(str(error)) from None
            unique, number = remote.name, 2
            while unique in names:
                unique, number = f"{remote.name}-{number}", number + 1
            remote.name = unique
            names.add(unique)
            sources.append(remote)
        else:
            paths.append(Path(target))
    for path in paths:
        if path.is_dir() or (default and not path.exists()):
            name = path.name or str(path)
            unique, number = name, 2
            while unique in names:
                unique, number = f"{name}-{number}", number + 1
            names.add(unique)
            sources.append(LedgerDirectorySource(path, name=unique))
        elif path.is_file():
            files.append(path)
        else:
            raise LaunchError(f"{path}: no such file or directory")
    by_directory: dict[Path, list[Path]] = {}
    for path in files:
        by_directory.setdefault(path.resolve().parent, []).append(path)
    for directory, chosen in by_directory.items():
        # Ledger files given by name are followed like a directory of just them: a 1 GB
        # ledger opens from its head and tail, and keeps growing on screen if it grows.
        name = chosen[0].name if len(chosen) == 1 else directory.name
        unique, number = name, 2
        while unique in names:
            unique, number = f"{name}-{number}", number + 1
        names.add(unique)
        sources.append(
            LedgerDirectorySource(directory, name=unique, only=[str(path) for path in chosen])
        )
    return sources


def run_app(app: RuntopApp) -> int:
    """Run ``app`` until it exits; re-raise what it died of, if it crashed."""
    app.run()
    if app.crash is not None:
        raise app.crash
    return app.return_code or 0


def run_tui(arguments: list[str]) -> int:
    args = tui_parser().parse_args(arguments)
    settings = settings_from(args)
    targets: list[Path | str] = list(args.paths)
    sources = sources_for(targets or [settings.ledger_dir], default=not targets, token=args.token)
    return run_app(make_app(settings, sources))


def run_demo(args: argparse.Namespace) -> int:
    from inspector import ManagerSource
    from run_manager import Manager
    from tui.demo import start_demo

    ledger_dir = Path(tempfile.mkdtemp(prefix="runtop-demo-"))
    manager = Manager(ledger_dir=ledger_dir, retained_runs=200)
    tasks: list[asyncio.Task[None]] = []

    async def stop() -> None:
        for task in tasks:
            task.cancel()
        await manager.close(grace=2.0)

    app = make_app(settings_from(args), [ManagerSource(manager, name="demo")], on_exit=stop)

    async def begin() -> None:
        tasks.append(asyncio.create_task(start_demo(manager, pace=args.pace)))

    app.call_later(lambda: app.run_worker(begin()))
    status = run_app(app)
    sys.stdout.write(
        f"The demo's ledgers are in {ledger_dir}\nWatch them again with: runtop {ledger_dir}\n"
    )
    return status


def run_replay(args: argparse.Namespace) -> int:
    files = [Path(path) for path in args.files]
    for path in files:
        if not path.is_file():
            raise LaunchError(f"{path}: no such file")
    source = ReplaySource(list(files), speed=SPEEDS[args.speed], name="replay")
    return run_app(make_app(settings_from(args), [source]))
