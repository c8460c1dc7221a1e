"""Where an attach server's bearer token is kept, so a client on the same machine finds it.

``runtop serve`` writes its token to ``<home>/tokens/<host>_<port>``
(mode 0600, in a 0700 directory); ``runtop http://host:port`` reads it
from there unless given ``--token`` or ``RUNTOP_TOKEN``. ``<home>`` is
``RUNTOP_HOME``, else ``~/.runtop``.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from ledger_reader.locations import make_private_dir, runtop_home


def make_token() -> str:
    """A fresh bearer token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_path(host: str, port: int, home: Path | None = None) -> Path:
    """The token file of the server on ``host:port``."""
    name = re.sub(r"[^A-Za-z0-9.-]", "_", host.strip("[]")) or "_"
    return (home or runtop_home()) / "tokens" / f"{name}_{port}"


def write_token(host: str, port: int, token: str, home: Path | None = None) -> Path:
    """Write ``token`` for clients, readable by this user only; its path."""
    path = token_path(host, port, home)
    make_private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, token.encode() + b"\n")
    finally:
        os.close(fd)
    os.replace(temporary, path)
    return path


def read_token(host: str, port: int, home: Path | None = None) -> str | None:
    """The token a server on ``host:port`` wrote here, or ``None``."""
    try:
        return token_path(host, port, home).read_text().strip() or None
    except OSError:
        return None
