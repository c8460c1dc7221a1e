"""``runtop show --follow --json`` writes what it follows a batch at a time, still inert.

A follower of a fast writer prints hundreds of MB: each event's own line goes
out as the ledger holds it, one write and one flush for the batch, and what a
terminal would act on (a C1 control inside a JSON string) is still escaped; a
damaged line is still reported in its place.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from ledger_reader import LedgerTail
from tui.commands.show import EventPrinter


class CountedStdout(io.StringIO):
    """Stdout that counts its flushes: each is a write the terminal or pipe sees."""

    flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def event(seq: int, kind: str, payload: dict[str, object]) -> bytes:
    record = {
        "run_id": "run_20261204T010000000_abcdefabcdefabcd",
        "seq": seq,
        "time": f"2026-12-04T01:00:{seq % 60:02d}.000000Z",
        "type": kind,
        "payload": payload,
    }
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def test_a_batch_is_written_once_with_its_controls_escaped_and_damage_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "run_20261204T010000000_abcdefabcdefabcd.jsonl"
    lines = [event(1, "run_started", {"skill": "s", "agent": "a", "input": {}})]
    lines += [event(seq, "log", {"message": f"step {seq}"}) for seq in range(2, 500)]
    lines += [event(500, "log", {"message": "csi \u009b2J here"})]
    lines += [b'{"seq": 501, "type": "log", "payload"\n']  # cut short: not JSON
    lines += [event(seq, "log", {"message": f"step {seq}"}) for seq in range(502, 1000)]
    lines += [event(1000, "run_completed", {"status": "succeeded"})]
    ledger.write_bytes(b"".join(lines))
    stdout = CountedStdout()
    monkeypatch.setattr("sys.stdout", stdout)
    printer = EventPrinter(Console(file=io.StringIO()), as_json=True, live=True)

    batch = LedgerTail(ledger, keep_raw=True).poll()
    printer.lines(batch.lines)

    printed = stdout.getvalue().splitlines()
    assert len(printed) == 1000
    assert printed[:499] == [line.decode().rstrip("\n") for line in lines[:499]]
    assert "\u009b" not in stdout.getvalue()
    assert json.loads(printed[499])["payload"]["message"] == "csi \u009b2J here"
    assert json.loads(printed[500])["type"] == "damaged_line"
    assert json.loads(printed[999])["type"] == "run_completed"
    assert printer.finished
    # The events before the damaged line, its report, the events after it.
    assert stdout.flushes == 3
