"""How every command writes: a failure as one inert line on stderr, JSON inert on stdout.

JSON may carry any text a ledger holds. Raw C1 controls, bidi overrides and
line separators are legal inside JSON strings and a terminal acts on them;
every JSON document a command prints goes through :func:`write_json`, which
writes them as ``\\uXXXX`` escapes (the same JSON, shown inert).
"""

from __future__ import annotations

import sys
from typing import IO, Final, TextIO

from tui.text import inert, json_safe


def say(stream: IO[str], message: str) -> None:
    """One line on ``stream`` (stderr: a console's ``file``), never wrapped: scripts and people
    both read it."""
    stream.write(f"runtop: {inert(message, single_line=True)}\n")
    stream.flush()


_UNSAFE_ASCII: Final = bytes(range(0x09)) + bytes(range(0x0B, 0x20)) + b"\x7f"
"""The ASCII bytes :func:`~tui.text.json_safe` rewrites: C0 but tab and newline, and DEL."""


def write_json(data: bytes, stream: TextIO | None = None) -> None:
    """One JSON document and a newline, every control character in it escaped.

    ASCII without a control byte (a listing of ordinary runs) is written as
    it is: two C-speed passes over it instead of a regular expression over
    every character (``runtop ls --json`` of 10,000 runs is megabytes).
    """
    stream = sys.stdout if stream is None else stream
    if data.isascii() and len(data.translate(None, _UNSAFE_ASCII)) == len(data):
        stream.write(data.decode("ascii"))
    else:
        stream.write(json_safe(data.decode("utf-8", "replace")))
    stream.write("\n")
    stream.flush()
