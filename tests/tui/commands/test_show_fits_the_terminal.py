"""``runtop show`` in a terminal fits its lines to the width: wrapped between words, the
words hanging under their column, a word longer than the room folded; into a pipe every
line is whole, whatever the terminal's width. Wrapping never lets an escape through.

Before, a terminal wrapped the lines itself, mid-word and back at the left edge.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.conftest import REPO, completed, line
from tests.terminal import RUNTOP, Terminal

pytestmark = pytest.mark.timeout(60)

HANG = " " * 14
"""Where an event's words start: past its offset (10 columns), two spaces and its mark."""
MESSAGE_HANG = " " * 25
"""Where a message's words start under its model call: past its role."""
URL = "https://example.com/" + "a" * 150 + "/end"
"""A word longer than any terminal's room for it: folded, never cut off."""
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"
"""What a hostile tool or model may write: a title, a clear screen, a C1 CSI, a bidi flip."""
WORDS = " ".join(f"word{number}" for number in range(40))
WIDE = "漢字" * 30
"""Characters two cells wide: a line of them is half as many characters as cells."""


def a_run(directory: Path) -> Path:
    """A run with long arguments, a long paragraph, a long message and hostile strings."""
    messages = [{"role": "user", "content": f"please read {WORDS} then {URL}{ESCAPES}"}]
    lines = [
        line(1, "run_started", {"skill": "research", "input": {"question": WORDS}}),
        line(2, "tool_call", {"call_id": "c1", "name": "fetch", "arguments": {"url": URL}}),
        line(3, "tool_result", {"call_id": "c1", "output": f"{ESCAPES} fetched {WORDS}"}),
        line(4, "llm_chunk", {"node_id": "llm:m#1", "delta": f"Read {URL} and {WORDS} "}),
        line(5, "llm_chunk", {"node_id": "llm:m#1", "delta": f"{WIDE} {ESCAPES}"}),
        line(6, "llm_call", {"model": "m", "prompt_tokens": 5, "messages": messages}),
        line(7, "error", {"message": f"failed on {WORDS}{ESCAPES}"}),
        completed(8, "error", error=f"it failed: {WORDS}"),
    ]
    path = directory / "run_20261129T064500123_9f2c4e1a0b3d5e7f.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def piped(ledger: Path, *options: str, columns: str | None = None) -> str:
    env = {"PYTHONPATH": str(REPO), "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run(
        [*RUNTOP, "show", str(ledger), *options],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=30,
        check=True,
    )
    return done.stdout


def in_a_terminal(ledger: Path, home: Path, width: int, *options: str) -> bytes:
    with Terminal([*RUNTOP, "show", str(ledger), *options], size=(width, 24), home=home) as tty:
        assert tty.wait_exit() == 0, tty.text()
        return bytes(tty.output)


def shown(raw: bytes) -> list[str]:
    """The lines the terminal got, its colours taken off (a pty turns ``\\n`` into CRLF)."""
    text = re.sub(rb"\x1b\[[0-9;]*m", b"", raw).decode()
    return text.replace("\r\n", "\n").splitlines()


@pytest.mark.parametrize("width", [50, 80, 132])
@pytest.mark.parametrize("options", [(), ("--messages",), ("--raw",)])
def test_every_line_fits_and_wraps_between_words(
    tmp_path: Path, width: int, options: tuple[str, ...]
) -> None:
    ledger = a_run(tmp_path)
    whole = piped(ledger, *options).splitlines()
    lines = shown(in_a_terminal(ledger, tmp_path, width, *options))
    assert lines, lines
    assert all(cell_len(each) <= width for each in lines), [
        each for each in lines if cell_len(each) > width
    ]
    assert len(lines) > len(whole)  # something was long enough to wrap at every width
    # Nothing lost, nothing moved: the same characters in the same order.
    assert "".join("".join(lines).split()) == "".join("".join(whole).split())
    # A line goes on hanging under its words, never from the left edge: a message's
    # under the message, past its role.
    hang = HANG
    for each in lines:
        if any(full.startswith(each.rstrip()) for full in whole):
            hang = MESSAGE_HANG if each.startswith(f"{HANG}user ") else HANG
        else:
            assert each.startswith(hang), each
    # Between words: each word is a word of the piped text, or a piece of one too long
    # for the room beside a message's role (the URL, the wide characters).
    words = {word for each in whole for word in each.split()}
    room = width - len(MESSAGE_HANG)
    for word in (word for each in lines for word in each.split()):
        assert word in words or any(word in long and cell_len(long) > room for long in words), word


def test_a_pipe_gets_every_line_whole_whatever_the_width(tmp_path: Path) -> None:
    ledger = a_run(tmp_path)
    whole = piped(ledger)
    assert piped(ledger, columns="40") == whole
    assert any(URL in each for each in whole.splitlines())
    assert max(cell_len(each) for each in whole.splitlines()) > 200


@pytest.mark.parametrize("width", [30, 50, 80])
def test_no_escape_reaches_the_terminal(tmp_path: Path, width: int) -> None:
    """Only Rich's own colours: the ledger's title, clear screen, C1 and bidi show as text."""
    raw = in_a_terminal(a_run(tmp_path), tmp_path, width, "--messages")
    bare = re.sub(rb"\x1b\[[0-9;]*m", b"", raw)
    assert b"\x1b" not in bare
    assert b"\x07" not in bare
    text = bare.decode()
    assert "\x9b" not in text
    assert "\u202e" not in text
    assert "␛]0;pwned␇" in text
    assert all(cell_len(each) <= width for each in shown(raw)), shown(raw)


def test_a_terminal_too_narrow_to_hang_the_words_wraps_from_the_edge(tmp_path: Path) -> None:
    lines = shown(in_a_terminal(a_run(tmp_path), tmp_path, 28))
    assert all(cell_len(each) <= 28 for each in lines), lines
    assert any(each and not each[0].isspace() for each in lines), lines
