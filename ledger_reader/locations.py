"""Where runtop keeps things: its home, its caches and the default ledger directory, resolved once.

``RUNTOP_HOME`` (default ``~/.runtop``) holds the attach servers' tokens,
the TUI's remembered state and, under ``runs/``, the default ledger
directory; ``RUNTOP_LEDGER_DIR`` moves just the ledgers. Caches go to the
user's cache directory (:func:`cache_dir`). Every command
(plain ``runtop`` included) asks here, so the variables mean the same
everywhere. Directories runtop creates are private (``0700``): ledgers
hold prompts and tool outputs, and the home holds bearer tokens.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
from collections.abc import Mapping
from pathlib import Path


def runtop_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$RUNTOP_HOME``, else ``~/.runtop``."""
    environ = os.environ if environ is None else environ
    configured = environ.get("RUNTOP_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".runtop"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where runtop keeps what it can work out again (``runtop ls``'s summary cache).

    ``cache`` in ``$RUNTOP_HOME`` when that is set (all of runtop's in one place the user
    chose); else the user's cache directory, as the XDG base directory spec names it:
    ``$XDG_CACHE_HOME/runtop`` (an absolute path; a relative one is ignored, as the spec
    says), else ``~/.cache/runtop``. Never ``~/.runtop``, which holds what cannot be
    worked out again (tokens, views, ledgers).
    """
    environ = os.environ if environ is None else environ
    if environ.get("RUNTOP_HOME"):
        return runtop_home(environ) / "cache"
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "runtop"


def default_ledger_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where runs are looked for when no path is given.

    ``$RUNTOP_LEDGER_DIR``, else ``runs`` in :func:`runtop_home`.
    """
    environ = os.environ if environ is None else environ
    configured = environ.get("RUNTOP_LEDGER_DIR")
    return Path(configured).expanduser() if configured else runtop_home(environ) / "runs"


def make_private_dir(directory: Path) -> None:
    """Create ``directory`` and each missing parent with mode ``0700``.

    Existing directories are left as they are (a user's own choice of
    mode is theirs). ``mkdir(parents=True)`` would create the parents with
    the umask's mode (``0755``): a fresh ``$RUNTOP_HOME`` made on the way
    to its ``tokens/`` would be readable by everyone.
    """
    missing: list[Path] = []
    current = directory
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not path.is_dir():
                raise
            continue
        except OSError as error:
            if error.errno != errno.EEXIST:
                raise
            continue
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask


def make_home(environ: Mapping[str, str] | None = None) -> Path:
    """:func:`runtop_home`, created ``0700`` if it does not exist yet."""
    home = runtop_home(environ)
    make_private_dir(home)
    return home


def foreign_access(directory: Path) -> str | None:
    """Why someone other than this user could write into ``directory``, or ``None``.

    Whoever can write into a ledger directory can cancel and resume its runs
    (through ``.control`` files) and remove or replace its ledgers, so a directory
    another user owns, or one its group or everyone may write, is not private.
    A symbolic link counts as what it points at, and its owner as well.
    """
    try:
        linked = directory.lstat()
        found = directory.stat()
    except FileNotFoundError:
        return None
    me = os.geteuid()
    for status in (linked, found):
        if status.st_uid != me:
            return f"{directory} belongs to {_user_name(status.st_uid)}, not to you"
    mode = stat.S_IMODE(found.st_mode)
    if mode & stat.S_IWOTH:
        return f"everyone may write into {directory} (mode {mode:04o})"
    if mode & stat.S_IWGRP:
        return f"its group may write into {directory} (mode {mode:04o})"
    return None


def _user_name(uid: int) -> str:
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"user {uid}"


__all__ = [
    "cache_dir",
    "default_ledger_dir",
    "foreign_access",
    "make_home",
    "make_private_dir",
    "runtop_home",
]
