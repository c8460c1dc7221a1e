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

from inspector.ledger import default_ledger_dir, find_ledgers, find_session, is_valid_run_id


class CommandError(Exception):
    """A failure a user can cause (a missing path, a bad run id, a port in use): said in
    one line on stderr, with a non-zero exit status."""


def is_url(target: str) -> bool:
    """An attach server's address rather than a path."""
    return target.startswith(("http://", "https://"))


def split_targets(targets: Sequence[str]) -> tuple[list[Path], list[str]]:
    """``targets`` as paths and URLs; the default ledger directory when there are none."""
    chosen = list(targets) or [str(default_ledger_dir())]
    return [Path(target) for target in chosen if not is_url(target)], [
        target for target in chosen if is_url(target)
    ]


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
        return path
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
    session = find_session(target, [str(root) for root in search])
    if session is not None:  # a coding agent's session, named by its own id
        return Path(session)
    places = ", ".join(str(root) for root in search)
    return found[match_run_id(target, found, f"under {places}")]


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
        raise CommandError(f"no ledger for run {target} {where}{said}")
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
    "default_ledger_dir",
    "is_url",
    "match_run_id",
    "require_run_id",
    "require_terminal",
    "resolve_ledger",
    "split_targets",
]
