"""Every example a reader can copy from README.md and docs/*.md runs as written, offline.

- A ```python block runs whole in a fresh interpreter, in an empty directory
  that is also ``HOME`` (so ``~/.runtop/runs`` is a new one), and must exit 0.
- A ``runtop ...`` line of a shell block (```sh, and ``$ runtop ...`` lines of an
  unlabelled block, which show a command with its output) runs as a shell would
  type it after ``source .venv/bin/activate``: split by shlex, ``#`` comments
  dropped, ``~`` expanded, from the checkout (the examples' paths are relative to
  it). A command runs to its end and must exit 0. A line that opens the app (no
  command, ``demo``, ``replay``) runs in a pseudo-terminal until the app has drawn
  its key bar, then ``q`` must end it with status 0: that it started, drew and
  quit, not what it showed. ``runtop serve`` starts, stays up for the lines after
  it in its block, and must stop with status 0 on SIGTERM; its port (8765 when
  none is given) is replaced by a free one throughout the block, since a test may
  not hold a fixed port another may be using.
- A block preceded by ``<!-- no-run: reason -->`` is skipped; the reason is
  required.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.terminal import Terminal
from tui.cli import COMMANDS

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUNTOP = str(Path(sys.executable).parent / "runtop")
APP_COMMANDS = {"demo", "replay", "samples"}
"""Commands that open the app (as does no command at all)."""
DEFAULT_PORT = "8765"

FENCE = re.compile(
    r"^(?P<before>(?:<!--(?P<note>.*?)-->\n)?)```(?P<lang>\w*)\n(?P<body>.*?)^```", re.M | re.S
)


@dataclass
class Block:
    document: Path
    line: int
    lang: str
    body: str
    skipped: str | None

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(REPO)}:{self.line}"


def blocks() -> list[Block]:
    found: list[Block] = []
    for document in DOCUMENTS:
        text = document.read_text()
        for match in FENCE.finditer(text):
            note = (match["note"] or "").strip()
            skipped = note.removeprefix("no-run:").strip() if note.startswith("no-run") else None
            line = text.count("\n", 0, match.start("body")) + 1
            found.append(Block(document, line, match["lang"], match["body"], skipped))
    return found


def python_blocks() -> list[Block]:
    return [block for block in blocks() if block.lang == "python"]


def command_lines(block: Block) -> list[list[str]]:
    """The ``runtop`` lines of a shell block, split as a shell would."""
    lines: list[list[str]] = []
    for text in block.body.splitlines():
        if block.lang in {"sh", "shell", "bash"} and text.startswith("runtop"):
            lines.append(shlex.split(text, comments=True))
        elif block.lang in {"", "console"} and text.startswith("$ runtop"):
            lines.append(shlex.split(text.removeprefix("$ "), comments=True))
    return lines


def shell_blocks() -> list[Block]:
    return [block for block in blocks() if command_lines(block)]


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A new home, as a new user's: nothing in it, not even the samples (a line that reads
    them in ``~/.runtop/samples`` works without ``runtop samples`` first)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


NEW_USERS_UNSET = frozenset(
    {"RUNTOP_HOME", "RUNTOP_LEDGER_DIR", "RUNTOP_TOKEN", "PYTHONPATH", "XDG_CACHE_HOME"}
)
"""What a new user has not set: the examples keep everything of runtop's in their home."""


def environment(home: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in NEW_USERS_UNSET}
    env["HOME"] = str(home)
    env["PATH"] = os.pathsep.join([str(Path(RUNTOP).parent), env.get("PATH", "")])
    return env


def test_the_documents_have_examples_of_each_kind() -> None:
    assert len(python_blocks()) >= 5
    assert len(shell_blocks()) >= 5
    assert all(block.skipped for block in blocks() if block.skipped is not None)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("block", python_blocks(), ids=lambda block: block.name)
def test_python_example_runs(block: Block, home: Path) -> None:
    if block.skipped is not None:
        pytest.skip(block.skipped)
    ran = subprocess.run(
        [sys.executable, "-c", block.body],
        capture_output=True,
        text=True,
        cwd=home,
        env=environment(home),
        timeout=200,
        check=False,
    )
    assert ran.returncode == 0, f"{block.name}:\n{ran.stdout}\n{ran.stderr[-3000:]}"


def expanded(words: list[str], home: Path, port: str) -> list[str]:
    """``words`` as the shell hands them over: ``~`` is the home, the port the free one."""
    out = [RUNTOP if words[0] in {"runtop", ".venv/bin/runtop"} else words[0]]
    for word in words[1:]:
        if word == "~" or word.startswith("~/"):
            word = str(home) + word[1:]
        out.append(word.replace(f":{DEFAULT_PORT}", f":{port}"))
    return out


def opens_the_app(words: list[str]) -> bool:
    command = words[1] if len(words) > 1 else None
    if command in COMMANDS or command in {"-h", "--help", "--version"}:
        return command in APP_COMMANDS and "--path" not in words
    return True  # paths and URLs to watch, or none


@pytest.mark.timeout(180)
@pytest.mark.parametrize("block", shell_blocks(), ids=lambda block: block.name)
def test_runtop_lines_run(block: Block, home: Path) -> None:
    if block.skipped is not None:
        pytest.skip(block.skipped)
    env = environment(home)
    # The demo's ledgers go to a temporary directory: this test's. (Not for the Python
    # blocks: Ray puts its sockets there, and a socket's path is limited to 107 bytes.)
    env["TMPDIR"] = str(home)
    port = free_port()
    servers: list[subprocess.Popen[str]] = []
    try:
        for words in command_lines(block):
            argv = expanded(words, home, port)
            if words[1:2] == ["serve"]:
                if "--port" not in argv:
                    argv += ["--port", port]
                servers.append(serve(argv, env))
            elif opens_the_app(words):
                open_and_quit(argv, home, env)
            else:
                ran = subprocess.run(
                    argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=60, check=False
                )
                assert ran.returncode == 0, f"{shlex.join(words)}:\n{ran.stderr}"
    finally:
        for server in servers:
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
        statuses = [server.wait(30) for server in servers]
        for server in servers:
            assert server.stderr is not None
            server.stderr.close()
    assert statuses == [0] * len(servers)


def serve(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """``runtop serve``, once it says it listens."""
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    assert server.stderr is not None
    first = server.stderr.readline()
    assert first.startswith("runtop serve: http://"), first + server.stderr.read()
    return server


def open_and_quit(argv: list[str], home: Path, env: dict[str, str]) -> None:
    with Terminal(argv, size=(120, 30), home=home, env=env) as terminal:
        terminal.wait_for("Quit", timeout=60)
        terminal.press("q")
        status = terminal.wait_exit(30)
        text = terminal.text()
    assert status == 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
