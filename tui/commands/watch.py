"""``runtop [PATH_OR_URL...]``: the app, watching ledger directories, files and servers live."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from rich.console import Console

from inspector import LedgerDirectorySource, RunSource
from inspector.ledger import is_session_place, make_private_dir
from tui.app import make_app, run_until_exit
from tui.commands.targets import CommandError, is_url, refuse_non_ledger, require_terminal
from tui.settings import settings_from


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    settings = settings_from(args)
    targets: list[Path | str] = list(args.paths)
    sources = sources_for(targets or [settings.ledger_dir], default=not targets, token=args.token)
    if not targets and not getattr(args, "no_sessions", False):
        sources.extend(home_sessions())
    require_terminal()
    if not targets:
        # runtop's own folder, made as a Manager() makes it, so its first runs appear live
        with contextlib.suppress(OSError):  # else the source says why it cannot be read
            make_private_dir(settings.ledger_dir)
    return run_until_exit(make_app(settings, sources))


HOME_SESSIONS = "coding agents"
"""The name of the source of the coding agents' sessions found in the home."""


def home_sessions() -> list[RunSource]:
    """The coding agents' sessions in the home (those of its folders that exist), as one
    source: the source line says it is there."""
    folders = sessions_inside(Path.home())
    if not folders:
        return []
    from inspector.session_source import SessionSource

    return [SessionSource(folders, name=HOME_SESSIONS)]


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
    sessions = [path for path in paths if is_session_place(path)]
    if sessions:
        from inspector.session_source import SessionSource

        folders = [path for path in sessions if path.is_dir()]
        picked = [path for path in sessions if not path.is_dir()]
        if folders:
            sources.append(SessionSource(folders, name=_unique("sessions", names)))
        if picked:
            name = _unique(picked[0].name if len(picked) == 1 else "sessions", names)
            sources.append(SessionSource([], only=picked, name=name))
        paths = [path for path in paths if path not in sessions]
    for path in paths:
        if path.is_dir() or (default and not path.exists()):
            name = path.name or str(path)
            unique, number = name, 2
            while unique in names:
                unique, number = f"{name}-{number}", number + 1
            names.add(unique)
            sources.append(LedgerDirectorySource(path, name=unique))
            held = sessions_inside(path) if not default else []
            if held:
                # A home (runtop ~): its ledgers, and its agents' sessions, as ls ~ lists
                # them; the directory's walk leaves session files out.
                from inspector.session_source import SessionSource

                sources.append(SessionSource(held, name=_unique(f"{unique} sessions", names)))
        elif path.is_file():
            files.append(refuse_non_ledger(path))
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


def sessions_inside(directory: Path) -> list[Path]:
    """The coding agents' session folders a directory holds as a home does
    (``.claude/projects``, ``.codex/sessions``, ``.gemini/tmp``), those that exist."""
    from inspector.ledger import home_session_dirs

    return home_session_dirs({"HOME": str(directory)})


def _unique(name: str, names: set[str]) -> str:
    unique, number = name, 2
    while unique in names:
        unique, number = f"{name}-{number}", number + 1
    names.add(unique)
    return unique
