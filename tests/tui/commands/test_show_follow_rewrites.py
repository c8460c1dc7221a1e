"""``runtop show --follow`` follows the ledger under its name: recreated after a rename
(logrotate's ``create``) or truncated and rewritten in place, it prints every line of the
new content and goes on until the run ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, line

pytestmark = pytest.mark.timeout(30)


def started() -> bytes:
    return line(1, "run_started", {"agent_name": "rotated", "input": "go"})


@pytest.fixture
def follow(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    path = tmp_path / "run_rotated.jsonl"
    path.write_bytes(started() + line(2, "note", {"text": "the old file"}))
    follower = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "show", "--json", "--follow", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert follower.stdout is not None
        assert [json.loads(follower.stdout.readline())["seq"] for _ in range(2)] == [1, 2]
        yield path, follower
    finally:
        if follower.poll() is None:
            follower.kill()
        follower.communicate()


def read_to_the_end(follower: subprocess.Popen[str]) -> list[dict[str, object]]:
    assert follower.stdout is not None
    printed = [json.loads(text) for text in follower.stdout]
    assert follower.wait(timeout=10) == 0
    return printed


def test_a_ledger_recreated_under_its_name_is_followed_on(
    follow: tuple[Path, subprocess.Popen[str]],
) -> None:
    path, follower = follow
    path.rename(path.with_suffix(".jsonl.1"))
    path.write_bytes(started())
    with path.open("ab") as ledger:
        ledger.write(line(2, "note", {"text": "the new file"}))
        ledger.write(line(3, "run_completed", {"status": "ok", "output": "done"}))
    printed = read_to_the_end(follower)
    assert [event["seq"] for event in printed] == [1, 2, 3]
    assert printed[1]["payload"] == {"text": "the new file"}


def test_a_ledger_rewritten_longer_with_the_same_first_bytes_is_read_again(
    follow: tuple[Path, subprocess.Popen[str]],
) -> None:
    path, follower = follow
    rewritten = started() + b"".join(
        line(seq, "note", {"text": f"rewritten {seq}"}) for seq in range(2, 6)
    )
    rewritten += line(6, "run_completed", {"status": "ok", "output": "done"})
    with path.open("r+b") as ledger:  # truncated and at once written again, in place
        ledger.truncate(0)
        ledger.write(rewritten)
        ledger.flush()
        os.fsync(ledger.fileno())
    printed = read_to_the_end(follower)
    assert [event["seq"] for event in printed] == [1, 2, 3, 4, 5, 6]
    assert printed[1]["payload"] == {"text": "rewritten 2"}
