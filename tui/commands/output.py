"""How every command writes: a failure as one inert line on stderr, JSON inert on stdout.

JSON may carry any text a ledger holds. Raw C1 controls, bidi overrides and
line separators are legal inside JSON strings and a terminal acts on them;
every JSON document a command prints goes through :func:`write_json`, which
writes them as ``\\uXXXX`` escapes (the same JSON, shown inert).
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console

from tui.text import inert, json_safe


def say(err: Console, message: str) -> None:
    """One line on stderr, never wrapped: scripts and people both read it."""
    err.file.write(f"runtop: {inert(message, single_line=True)}\n")
    err.file.flush()


def write_json(data: bytes, stream: TextIO | None = None) -> None:
    """One JSON document and a newline, every control character in it escaped."""
    stream = sys.stdout if stream is None else stream
    stream.write(json_safe(data.decode("utf-8", "replace")))
    stream.write("\n")
    stream.flush()
