"""A program run in a real pseudo-terminal of a given size, as a user would start it.

The launch soak and the crash test start ``runtop`` this way: the same
start-up path as from a shell (a fresh interpreter, Textual's own driver on
a terminal), with what it draws read back as bytes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

REPO = Path(__file__).resolve().parent.parent
RUNTOP = [sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())"]
"""``runtop`` as the console script starts it."""

LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"
"""What a full-screen program writes as it gives the terminal back."""


def _take_controlling_terminal() -> None:
    """In the child, after ``setsid``: make its standard input its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """``argv`` in a pseudo-terminal ``columns`` x ``rows``; everything it writes kept."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        size: tuple[int, int],
        home: Path,
        env: Mapping[str, str] | None = None,
    ) -> None:
        columns, rows = size
        controller, terminal = os.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "RUNTOP_HOME": str(home / ".runtop"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(REPO),
            **(env or {}),
        }
        self.process = subprocess.Popen(
            list(argv),
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=environment,
            cwd=REPO,
            start_new_session=True,
            # As a shell's terminal is, the program's controlling terminal: when
            # the test's side closes (the test process killed), the kernel hangs
            # it up and the program ends, instead of living on with no screen.
            preexec_fn=_take_controlling_terminal,
        )
        os.close(terminal)
        self.controller = controller
        self.output = bytearray()
        self.closed = False

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        os.close(self.controller)

    def _read(self, deadline: float) -> bool:
        """Read what is there (waiting until ``deadline``); ``False`` once the program is gone."""
        if self.closed:
            return False
        ready, _, _ = select.select(
            [self.controller], [], [], max(0.0, deadline - time.monotonic())
        )
        if not ready:
            return True
        try:
            data = os.read(self.controller, 65536)
        except OSError:  # EIO: every holder of the terminal's other side closed it
            data = b""
        if not data:
            self.closed = True
            return False
        self.output += data
        return True

    def text(self, since: int = 0) -> str:
        """What was written (from byte ``since``), escape sequences removed.

        Words that cursor moves split stay split.
        """
        plain = re.sub(
            rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\|\x1b\][^\x07]*\x07",
            b"",
            bytes(self.output[since:]),
        )
        return plain.decode("utf-8", "replace")

    def mark(self) -> int:
        """Where the output is now: ``wait_for(..., since=mark)`` looks only at what follows."""
        return len(self.output)

    def wait_for(self, wanted: str, timeout: float = 20.0, *, since: int = 0) -> None:
        """Read until ``wanted`` was drawn; fail with the screen's text if it never is."""
        deadline = time.monotonic() + timeout
        while wanted not in self.text(since):
            if time.monotonic() >= deadline or not self._read(deadline):
                if wanted in self.text(since):
                    return
                raise AssertionError(
                    f"{wanted!r} never shown (exit status {self.process.poll()}); "
                    f"the terminal got:\n{self.text()[-3000:]}"
                )

    def watch(self, seconds: float) -> None:
        """Keep reading what is drawn for ``seconds``, as a user would watch the screen."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._read(deadline):
            pass

    def press(self, keys: str) -> None:
        os.write(self.controller, keys.encode())

    def wait_exit(self, timeout: float = 20.0) -> int:
        """Read to the end; the exit status (the program is killed after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while self._read(deadline) and time.monotonic() < deadline:
            pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.process.wait(max(0.1, deadline - time.monotonic()))
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        raise AssertionError(f"still running after {timeout}s:\n{self.text()[-3000:]}")
