"""A listing read by two processes says what one process reading it all says, whatever the
second one does.

Each case runs in a fresh interpreter (a real fork of a process with no other
thread, whatever threads this test session has left running) whose forked
reader is made to succeed, fail, die, hang or answer nonsense; the outcomes
must equal reading every ledger in one process, and the reader must really
have been forked (it leaves its pid in a file) or, beside another thread,
not at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ledger_reader.split_read import fork_is_safe
from tests.conftest import REPO, completed, line, started

SCRIPT = r"""
import json, os, signal, sys, threading
from ledger_reader import split_read
from ledger_reader.errors import LedgerError

mode, marker, *files = sys.argv[1:]
real_answer_for = split_read.answer_for

def answer_for(files, max_line_bytes):
    with open(marker, "w") as out:
        out.write(str(os.getpid()))
    if mode == "raises":
        raise RuntimeError("the reader fails")
    if mode == "exits":
        os._exit(0)
    if mode == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hangs":
        signal.pause()
    body = real_answer_for(files, max_line_bytes)
    if mode == "garbage":
        return b"\xc1" + body[1:]
    if mode == "short":
        return split_read._encoder.encode(split_read._decoder.decode(body)[:-1])
    return body

split_read.answer_for = answer_for
read_here = []
real_read_one = split_read.read_one

def read_one(file, max_line_bytes):
    read_here.append(file)
    return real_read_one(file, max_line_bytes)

split_read.read_one = read_one
release = threading.Event()
if mode == "thread":
    threading.Thread(target=release.wait).start()
split = split_read.read_ledgers(files, processes=2, fork_from=1, patience=0.2)
release.set()
read_by_me = len(read_here)
here = split_read.read_here(files, split_read.MAX_LINE_BYTES)

def plain(outcome):
    if isinstance(outcome, LedgerError):
        return [type(outcome).__name__, str(outcome)]
    return outcome

print(json.dumps({
    "same": [plain(a) == plain(b) for a, b in zip(split, here, strict=True)],
    "errors": [plain(a) for a in split if isinstance(a, LedgerError)],
    "statuses": [a.summary.status for a in split if not isinstance(a, LedgerError)],
    "reader": int(open(marker).read()) if os.path.exists(marker) else None,
    "me": os.getpid(),
    "read_by_me": read_by_me,
}))
"""

MODES = ["answers", "raises", "exits", "killed", "hangs", "garbage", "short", "thread"]


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Ledgers of every shape a read tells apart, and two paths that cannot be read."""
    directory = tmp_path_factory.mktemp("split")
    ledgers = {
        # msgpack carries no integer this large: the second process leaves it to the first
        "huge input": started(input={"q": 10**30}) + completed(2),
        "finished": started() + line(2, "llm_chunk") + completed(3),
        "failed": started() + line(2, "error", {"message": "boom"}) + completed(3, "error"),
        "unfinished runtop": started(writer="runtop") + line(2, "node_enter", {"node_id": "a"}),
        "damaged": started() + b"not json\n" + line(2, "llm_chunk"),
        "torn": started() + line(2, "llm_chunk")[:25],
        "bom": b"\xef\xbb\xbf" + started() + completed(2),
        "empty": b"",
        "awaiting": started() + line(2, "approval_request", {"approval_id": "a1"}),
        "large": started()
        + b"".join(line(seq, "llm_chunk", {"delta": "x" * 1000}) for seq in range(2, 400))
        + completed(400),
    }
    fifo = directory / "fifo.jsonl"
    os.mkfifo(fifo)
    files = [str(directory / "gone.jsonl"), str(fifo)]  # first: in the second process's half
    for number, (name, data) in enumerate(ledgers.items()):
        path = directory / f"run_{number:02d}_{name.replace(' ', '_')}.jsonl"
        path.write_bytes(data)
        files.append(str(path))
    return files


def _split_read(mode: str, ledgers: list[str], tmp_path: Path) -> dict[str, object]:
    marker = tmp_path / "reader.pid"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(marker), *ledgers],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=REPO,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("mode", MODES)
def test_the_outcomes_are_one_process_reading_them_all(
    mode: str, ledgers: list[str], tmp_path: Path
) -> None:
    result = _split_read(mode, ledgers, tmp_path)
    assert result["same"] == [True] * len(ledgers)
    assert result["errors"] == [
        ["LedgerGone", f"{ledgers[0]}: no such file or directory"],
        ["LedgerUnreadable", f"{ledgers[1]}: cannot read: not a regular file"],
    ]
    assert len(result["statuses"]) == len(ledgers) - 2  # type: ignore[arg-type]
    if mode == "thread":
        assert result["reader"] is None  # never forked beside another thread
    else:
        assert isinstance(result["reader"], int)
        assert result["reader"] != result["me"]  # read (or tried) in a second process
    half = len(ledgers) // 2
    if mode == "answers":
        # its half taken from its answer, but for what it could not read or send
        assert result["read_by_me"] == len(ledgers) - half + 3
    else:
        assert result["read_by_me"] == len(ledgers)  # its half read again here


def test_another_thread_forbids_the_fork() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not fork_is_safe()
    finally:
        release.set()
        thread.join()
