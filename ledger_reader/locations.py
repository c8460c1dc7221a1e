"""Where runtop keeps things: its home and the default ledger directory, resolved once.

``RUNTOP_HOME`` (default ``~/.runtop``) holds the attach servers' tokens,
the TUI's remembered state and, under ``runs/``, the default ledger
directory; ``RUNTOP_LEDGER_DIR`` moves just the ledgers. Every command
(plain ``runtop`` included) asks here, so the variables mean the same
everywhere. Directories runtop creates are private (``0700``): ledgers
hold prompts and tool outputs, and the home holds bearer tokens.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path


def runtop_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$RUNTOP_HOME``, else ``~/.runtop``."""
    environ = os.environ if environ is None else environ
    configured = environ.get("RUNTOP_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".runtop"


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


__all__ = ["default_ledger_dir", "make_home", "make_private_dir", "runtop_home"]
