"""What a command line argument names: a ledger path, a run id, an attach server's URL,
or the default ledger directory; and the one error every command reports in one line.

A leaf: it imports no other command and neither Textual nor the run manager.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

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
    for root in search:
        if not root.is_dir():
            continue
        for candidate in find_ledgers(root, []):
            if candidate.name == wanted:
                return candidate
    session = find_session(target, [str(root) for root in search])
    if session is not None:  # a coding agent's session, named by its own id
        return Path(session)
    places = ", ".join(str(root) for root in search)
    raise CommandError(f"no ledger for run {target} under {places}")


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
    "require_run_id",
    "resolve_ledger",
    "split_targets",
]
