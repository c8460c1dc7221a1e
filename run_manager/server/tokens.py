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


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
"""The names of this machine's loopback: a server bound to one is asked for by any."""


def read_token(host: str, port: int, home: Path | None = None) -> str | None:
    """The token a server on ``host:port`` wrote here, or ``None``.

    A loopback server is found under any of its names: ``runtop serve`` writes the
    token under the name it was told to bind (``127.0.0.1`` by default), and a
    user types ``localhost`` as often.
    """
    bare = host.strip("[]")
    names = [bare, *(n for n in LOOPBACK_NAMES if n != bare)] if bare in LOOPBACK_NAMES else [bare]
    for name in names:
        try:
            token = token_path(name, port, home).read_text().strip()
        except OSError:
            continue
        if token:
            return token
    return None
