"""``runtop [PATH_OR_URL...]``: the app, watching ledger directories, files and servers live."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from inspector import LedgerDirectorySource, RunSource
from tui.app import make_app, run_until_exit
from tui.commands.targets import CommandError, is_url
from tui.settings import settings_from


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    settings = settings_from(args)
    targets: list[Path | str] = list(args.paths)
    sources = sources_for(targets or [settings.ledger_dir], default=not targets, token=args.token)
    return run_until_exit(make_app(settings, sources))


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
                raise CommandError(str(error)) from None
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
            raise CommandError(f"{path}: no such file or directory")
    by_directory: dict[Path, list[tuple[Path, Path]]] = {}
    for path in files:
        real = path.resolve()  # a link's target, in the directory that is watched
        by_directory.setdefault(real.parent, []).append((path, real))
    for directory, chosen in by_directory.items():
        # Ledger files given by name are followed like a directory of just them: a 1 GB
        # ledger opens from its head and tail, and keeps growing on screen if it grows.
        name = chosen[0][0].name if len(chosen) == 1 else directory.name
        unique, number = name, 2
        while unique in names:
            unique, number = f"{name}-{number}", number + 1
        names.add(unique)
        sources.append(
            LedgerDirectorySource(directory, name=unique, only=[str(real) for _, real in chosen])
        )
    return sources
