"""A ledger directory kept bounded: the oldest finished ledgers go past a count, a size or
an age; a ledger being written, or written lately, stays whatever the rule."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from run_manager.ledger import LedgerWriter
from run_manager.server.retention import QUIET, BadRetention, Retention, prune
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(30)

DAY = 86400.0


def ledgers(directory: Path, count: int, *, size: int = 100, age: float = DAY) -> list[Path]:
    """``count`` ledgers, the first the oldest, the last ``age`` seconds old."""
    made = []
    now = time.time()
    for number in range(count):
        path = directory / f"run_20261201T000000000_{number:016x}.jsonl"
        path.write_bytes(b"x" * (size - 1) + b"\n")
        written = now - age - (count - number) * 60
        os.utime(path, (written, written))
        made.append(path)
    return made


def test_past_a_count_the_oldest_go(tmp_path: Path) -> None:
    made = ledgers(tmp_path, 10)
    removed = prune(tmp_path, Retention(max_ledgers=4, max_bytes=None))
    assert removed == made[:6]
    assert sorted(tmp_path.iterdir()) == made[6:]


def test_past_a_size_the_oldest_go(tmp_path: Path) -> None:
    made = ledgers(tmp_path, 10, size=1000)
    prune(tmp_path, Retention(max_ledgers=None, max_bytes=3500))
    assert sorted(tmp_path.iterdir()) == made[7:]


def test_past_an_age_every_older_ledger_goes(tmp_path: Path) -> None:
    old = ledgers(tmp_path, 3, age=40 * DAY)
    recent = [each.rename(each.with_name("new_" + each.name)) for each in ledgers(tmp_path, 2)]
    prune(tmp_path, Retention(max_ledgers=None, max_bytes=None, max_age=30 * DAY))
    assert sorted(tmp_path.iterdir()) == sorted(recent)
    assert not any(each.exists() for each in old)


def test_a_ledger_being_written_or_written_lately_stays(tmp_path: Path) -> None:
    made = ledgers(tmp_path, 3)
    writer = LedgerWriter(tmp_path, "run_20261201T000000000_00000000000000ff")
    try:
        writer.write(b'{"type": "run_started"}\n')
        held = tmp_path / "run_20261201T000000000_00000000000000ff.jsonl"
        old = time.time() - DAY
        os.utime(held, (old, old))
        fresh = ledgers(tmp_path, 1, age=QUIET / 2)[0].rename(tmp_path / "fresh.jsonl")
        prune(tmp_path, Retention(max_ledgers=1, max_bytes=None))
        assert held.exists()
        assert fresh.exists()
        assert not any(each.exists() for each in made)
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("rule", "kept"),
    [
        ("count=10k", Retention(10_000, None, None)),
        ("size=5G,age=30d", Retention(None, 5 * 1024**3, 30 * DAY)),
        ("count=100, size=512M", Retention(100, 512 * 1024**2, None)),
        ("all", Retention(None, None, None)),
    ],
)
def test_rules_read_as_written(rule: str, kept: Retention) -> None:
    assert Retention.parse(rule) == kept


@pytest.mark.parametrize("rule", ["count", "count=lots", "age=30", "size=-1G", "keep=3", ""])
def test_a_rule_that_cannot_be_read_says_why(rule: str) -> None:
    with pytest.raises(BadRetention, match=r"expected|not a|negative"):
        Retention.parse(rule)


def test_serve_keeps_its_directory_to_the_rule_and_refuses_a_bad_one(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    made = ledgers(runs, 5)
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--ledger-dir", str(runs)]
    refused = subprocess.run(
        [*command, "--retain", "forever"], capture_output=True, text=True, env=env, timeout=20
    )
    assert refused.returncode in (1, 2)
    assert "--retain forever" in refused.stderr
    serving = subprocess.Popen(
        [*command, "--retain", "count=2"], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert serving.stderr is not None
        said = ""
        while "keeps:" not in said:
            line = serving.stderr.readline()
            assert line, said
            said += line
        assert "keeps: the newest 2 ledgers" in said
        deadline = time.monotonic() + 10
        while any(each.exists() for each in made[:3]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sorted(runs.glob("*.jsonl")) == made[3:]
    finally:
        serving.terminate()
        serving.communicate(timeout=20)
