"""``runtop replay PATH...``: past runs played back in the app as they happened (ledgers,
and coding agents' sessions read as every reader reads them)."""

from __future__ import annotations

import argparse
import asyncio
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from rich.console import Console

from inspector import SPEEDS, ReplaySource
from inspector.ledger import (
    LedgerError,
    LedgerUnreadable,
    NotALedgerFile,
    agent_of,
    file_kind,
    find_ledgers,
    find_sessions,
    is_valid_run_id,
)
from tui.app import make_app, run_until_exit
from tui.commands.targets import (
    CommandError,
    refuse_non_ledger,
    require_terminal,
    split_targets,
)
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
            found.extend(sorted(Path(session) for session in find_sessions(path)))
            if not found:
                why = f" ({errors[0]})" if errors else ""
                raise CommandError(f"{name}: no ledgers (*.jsonl) found{why}")
            files.extend(found)
            if skipped is not None:
                skipped.extend(errors)
        elif stat.S_ISREG(mode):
            files.append(path if agent_of(path) is not None else refuse_non_ledger(path))
        else:
            raise CommandError(str(NotALedgerFile(name, file_kind(mode))))
    return list(dict.fromkeys(files))


SERVER_RUNS: Final = 200
"""The newest runs of an attach server a replay plays (each one's events are fetched)."""


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    skipped: list[LedgerError] = []
    paths, urls = split_targets(args.files)
    files: list[str | os.PathLike[str]] = [*replay_files([str(p) for p in paths], skipped)]
    settings = settings_from(args)
    require_terminal()
    with tempfile.TemporaryDirectory(prefix="runtop-replay-") as into:
        fetched: list[Path] = []
        for url in urls:
            fetched.extend(asyncio.run(fetch_runs(url, args.token, Path(into))))
        files.extend(fetched)
        if not files:
            raise CommandError(f"no runs to replay on {', '.join(urls)}")
        for error in skipped:  # before the app's screen: still there when it closes
            err.print(f"runtop: {error}", markup=False, highlight=False)
        source = ReplaySource(files, speed=SPEEDS[args.speed], name="replay", fetched=fetched)
        return run_until_exit(make_app(settings, [source]))


async def fetch_runs(url: str, token: str | None, into: Path) -> list[Path]:
    """The newest :data:`SERVER_RUNS` runs of the attach server at ``url``, each written
    into ``into`` as a ledger of the events the server sends for it.

    Raises:
        CommandError: the server cannot be reached or refuses.
    """
    from inspector.attach_client import AttachClient, find_token
    from inspector.source import SourceError

    written: list[Path] = []
    try:
        async with AttachClient(url, find_token(url, token)) as client:
            for summary in (await client.runs())[:SERVER_RUNS]:
                if not is_valid_run_id(summary.run_id):
                    continue  # never joined to a path
                lines: list[bytes] = []
                async for frames in client.frames(f"runs/{summary.run_id}/events"):
                    lines.extend(f.data + b"\n" for f in frames if f.event is None and f.data)
                path = into / f"{summary.run_id}.jsonl"
                path.write_bytes(b"".join(lines))
                written.append(path)
    except SourceError as error:
        raise CommandError(str(error)) from None
    return sorted(written)
