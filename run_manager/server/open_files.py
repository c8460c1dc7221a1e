"""How many files the server may hold open, and how many of them gRPC may take.

Every connection is an open file. Linux's soft limit is often 1,024 while the hard
limit is far higher; at the soft limit ``accept`` fails, and then every endpoint
(the attach API, OTLP/HTTP and gRPC alike) stops answering new clients. ``runtop
serve`` raises the soft limit to the hard one (at most :data:`WANTED`) and gives
gRPC, whose connections are held by its own core, a quarter of what it has.
"""

from __future__ import annotations

import resource
from typing import Final

WANTED: Final = 65536
"""Open files asked for: far more connections than one server should ever hold."""
GRPC_SHARE: Final = 4
"""gRPC may hold one open file in this many, so idle gRPC peers never starve HTTP."""


def raise_open_file_limit() -> int:
    """Raise the soft limit on open files towards the hard one; the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = WANTED if hard == resource.RLIM_INFINITY else min(hard, WANTED)
    if soft == resource.RLIM_INFINITY or soft >= ceiling:
        return WANTED if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
    except (ValueError, OSError):
        return soft
    return ceiling


def grpc_connection_cap(open_files: int) -> int:
    """Connections gRPC may hold with ``open_files`` open files in all."""
    return max(16, open_files // GRPC_SHARE)


__all__ = ["grpc_connection_cap", "raise_open_file_limit"]
