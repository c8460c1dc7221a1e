"""What a command line argument names: a ledger path, a run id, an attach server's URL,
or the default ledger directory; and the one error every command reports in one line.

A leaf: it imports no other command and neither Textual nor the run manager.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import msgspec

from inspector.ledger import default_ledger_dir, find_ledgers, is_valid_run_id, sessions_named


class CommandError(Exception):
    """A failure a user can cause (a missing path, a bad run id, a port in use): said in
    one line on stderr, with a non-zero exit status."""


class NoSuchRun(CommandError):
    """No run of the id (or the part of one) given is where it was looked for."""


class UsageError(CommandError):
    """A mistake in the command line itself (options that do not go together, an
    ``--agents`` that names no agents): exit status 2, as argparse's own."""


def is_url(target: str) -> bool:
    """An attach server's address rather than a path."""
    return target.startswith(("http://", "https://"))


def default_places(*, sessions: bool = True) -> list[Path]:
    """Where runs are looked for when no place is named, by the app, ``ls``, ``show`` and
    ``stats`` alike: the default ledger directory, and (``sessions``) the coding agents'
    session folders present in the home."""
    from inspector.ledger import home_session_dirs

    return [default_ledger_dir(), *(home_session_dirs() if sessions else [])]


def split_targets(targets: Sequence[str]) -> tuple[list[Path], list[str]]:
    """``targets`` as paths and URLs; the default ledger directory when there are none."""
    chosen = list(targets) or [str(default_ledger_dir())]
    return [Path(target) for target in chosen if not is_url(target)], [
        target for target in chosen if is_url(target)
    ]


FIRST_LINE_BYTES: Final = 64 * 1024
"""How much of a file named as a ledger is read to tell whether it is one."""


def not_a_ledger(path: Path) -> str | None:
    """Why the file ``path`` is not a ledger (``runtop ls /etc/hosts``), or ``None`` when
    it may be one: it is named ``*.jsonl`` (the reader says what is damaged in it), or its
    first line is a ledger event, a JSON object with a ``type``. What cannot be read, or
    is no regular file, is the reader's to report."""
    if path.name.endswith(".jsonl") or not path.is_file():
        return None
    try:
        with path.open("rb") as file:
            head = file.read(FIRST_LINE_BYTES)
    except OSError:
        return None
    first = next((line for line in head.splitlines() if line.strip()), None)
    if first is None:
        return (
            f"{path}: not a ledger: it is empty"
            if not head
            else f"{path}: not a ledger: it is blank"
        )
    if len(first) == len(head) == FIRST_LINE_BYTES:
        return None  # a first line longer than we read: a big event, perhaps
    try:
        event = msgspec.json.decode(first)
    except msgspec.DecodeError:
        why = "its first line is not JSON"
    else:
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            return None
        why = "its first line is not a ledger event, a JSON object with a type"
    return f"{path}: not a ledger: {why} (a ledger is a .jsonl file, one JSON event a line)"


def refuse_non_ledger(path: Path) -> Path:
    """``path``, if it may be a ledger.

    Raises:
        CommandError: it is a file that is not a ledger, with the reason.
    """
    why = not_a_ledger(path)
    if why is not None:
        raise CommandError(why)
    return path


def resolve_ledger(target: str, search: Sequence[Path]) -> Path:
    """The ledger ``target`` names: a path, or a run id found under ``search``.

    Raises:
        CommandError: nothing matches, in words a user understands.
    """
    path = Path(target)
    if path.exists() or os.sep in target or target.endswith(".jsonl"):
        if not path.exists():
            raise CommandError(f"{target}: no such file")
        if path.is_dir():
            raise CommandError(f"{target}: is a directory; give one ledger file or a run id")
        return refuse_non_ledger(path)
    if not is_valid_run_id(target):
        raise CommandError(f"{target!r} is neither a ledger file nor a valid run id")
    wanted = f"{target}.jsonl"
    found: dict[str, Path] = {}
    for root in search:
        if not root.is_dir():
            continue
        for candidate in find_ledgers(root, []):
            if candidate.name == wanted:
                return candidate
            found.setdefault(candidate.name.removesuffix(".jsonl"), candidate)
    # A coding agent's session, named by its own id (whole, or a unique start or end).
    sessions = sessions_named(target, [str(root) for root in search])
    if target in sessions:
        return Path(sessions[target])
    for run_id, session in sessions.items():
        found.setdefault(run_id, Path(session))
    return found[match_run_id(target, found, f"under {places_said(search)}")]


def places_said(search: Sequence[Path]) -> str:
    """The places a run was looked for, each that is no directory said so (a ``--from``
    typed wrong: ``under /tmp/rnus: no such directory``), not left to look empty."""

    def wrong(root: Path) -> str | None:
        if not root.exists():
            return "no such directory"
        if not root.is_dir():
            return "not a directory; give the folder that holds the ledger"
        return None

    if len(search) == 1:
        why = wrong(search[0])
        return f"{search[0]}: {why}" if why else str(search[0])
    return ", ".join(f"{root} ({why})" if (why := wrong(root)) else str(root) for root in search)


SHORTEST_PART: Final = 4
"""Characters a part of a run id needs to name it (git's shortest commit too)."""
SHOWN_AMBIGUOUS: Final = 4
"""Run ids an ambiguous part of one names in its error (then how many more)."""


def match_run_id(target: str, run_ids: Iterable[str], where: str) -> str:
    """The one run id of ``run_ids`` that ``target`` names: the whole id, or (as git takes a
    commit's) any unique start or end of it, or a start of its last part (the hex the app
    shows, ``…9c2e7b3d8a60``).

    Raises:
        CommandError: no run id matches, or more than one does (they are named).
    """
    ids = list(run_ids)
    if target in ids:
        return target
    matching = sorted(
        run_id
        for run_id in ids
        if run_id.startswith(target)
        or run_id.endswith(target)
        or run_id.rpartition("_")[2].startswith(target)
    )
    if not matching or len(target) < SHORTEST_PART:
        short = f" (a part of a run id: {SHORTEST_PART} characters at least)"
        said = short if matching else ""
        raise NoSuchRun(f"no ledger for run {target} {where}{said}")
    if len(matching) == 1:
        return matching[0]
    named = ", ".join(matching[:SHOWN_AMBIGUOUS])
    more = len(matching) - SHOWN_AMBIGUOUS
    also = f" and {more} more" if more > 0 else ""
    raise CommandError(f"{target} is ambiguous {where}: it names {named}{also}")


NO_TERMINAL: Final = (
    "the app needs a terminal (its input and its stderr are not one); "
    "as text: runtop ls, runtop show RUN_ID"
)


def require_terminal() -> None:
    """Before the app starts: Textual reads keys from stdin and draws on stderr, and
    without a terminal would draw its escape codes into a pipe and wait for keys forever
    (unless another driver is named, as textual-serve does for a page in a browser).

    Raises:
        CommandError: stdin or stderr is not a terminal.
    """
    if os.environ.get("TEXTUAL_DRIVER"):
        return  # another driver draws (textual-serve's, for a page in a browser): no terminal
    stderr = sys.__stderr__
    if not (sys.stdin is not None and sys.stdin.isatty() and stderr and stderr.isatty()):
        raise CommandError(NO_TERMINAL)


def remote_run_id(url: str, token: str | None, target: str) -> str:
    """The whole id of the run ``target`` names (whole, or a unique part) on the attach
    server at ``url``, as the server lists its runs.

    Raises:
        CommandError: no such run there, or several, or the server cannot be asked.
    """
    import asyncio

    from inspector.attach_client import AttachClient, find_token
    from inspector.source import SourceError

    require_run_id(target, " (a server is asked by run id)")

    async def listed() -> list[str]:
        async with AttachClient(url, find_token(url, token)) as client:
            return [summary.run_id for summary in await client.runs()]

    try:
        run_ids = asyncio.run(listed())
    except SourceError as error:
        raise CommandError(str(error)) from None
    return match_run_id(target, run_ids, f"on {url}")


def require_run_id(target: str, why: str = "") -> str:
    """``target`` if it is a run id.

    Raises:
        CommandError: it is not.
    """
    if not is_valid_run_id(target):
        raise CommandError(f"{target!r} is not a run id{why}")
    return target


__all__ = [
    "CommandError",
    "NoSuchRun",
    "UsageError",
    "default_ledger_dir",
    "default_places",
    "is_url",
    "match_run_id",
    "not_a_ledger",
    "refuse_non_ledger",
    "remote_run_id",
    "require_run_id",
    "require_terminal",
    "resolve_ledger",
    "split_targets",
]
