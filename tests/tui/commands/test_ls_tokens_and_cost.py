"""``runtop ls`` says each run's tokens and cost, summed over its model calls: in the
table (TOKENS, COST) and in ``--json`` (``prompt_tokens``, ``output_tokens``,
``cost_usd``), ``null`` where no call said, never 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import line, runs_listed
from tui.cli import main

CALLED = "run_20261129T064500001_aaaaaaaaaaaaaaaa"
UNPRICED = "run_20261129T064500002_bbbbbbbbbbbbbbbb"
SILENT = "run_20261129T064500003_cccccccccccccccc"
DAMAGED = "run_20261129T064500004_dddddddddddddddd"

CONVERSATION = [{"role": "user", "content": "x" * 20_000}]
"""A model call's messages: the listing counts the call's tokens without reading them."""


def call(seq: int, run_id: str, **usage: Any) -> bytes:
    return line(seq, "llm_call", {"model": "m", "messages": CONVERSATION, **usage}, run_id=run_id)


def write(directory: Path, run_id: str, *lines: bytes) -> None:
    (directory / f"{run_id}.jsonl").write_bytes(b"".join(lines))


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    def begin(run_id: str) -> bytes:
        return line(1, "run_started", {"skill": "s", "input": "q"}, run_id=run_id)

    def end(seq: int, run_id: str) -> bytes:
        return line(seq, "run_completed", {"status": "ok"}, run_id=run_id)

    write(
        tmp_path,
        CALLED,
        begin(CALLED),
        call(2, CALLED, prompt_tokens=1800, output_tokens=36, cost_usd=0.0082),
        call(3, CALLED, prompt_tokens=600, output_tokens=40, cost_usd=0.0024),
        end(4, CALLED),
    )
    write(
        tmp_path,
        UNPRICED,
        begin(UNPRICED),
        call(2, UNPRICED, prompt_tokens=50, output_tokens=4),
        end(3, UNPRICED),
    )
    write(tmp_path, SILENT, begin(SILENT), call(2, SILENT), end(3, SILENT))
    # A damaged line: this ledger is read line by line, not by the fast block fold.
    write(
        tmp_path,
        DAMAGED,
        begin(DAMAGED),
        b"{not json\n",
        call(3, DAMAGED, prompt_tokens=10, output_tokens=5, cost_usd=0.5),
        call(4, DAMAGED, prompt_tokens=20, output_tokens=5, cost_usd=0.25),
    )
    return tmp_path


def listed(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["ls", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "no-cache"])
def test_ls_json_sums_each_run_s_model_calls(
    runs: Path, capsys: pytest.CaptureFixture[str], cache: bool
) -> None:
    flags = [] if cache else ["--no-cache"]
    for _ in range(2):  # the second listing reads the cache it wrote
        by_id = {
            run["run_id"]: run for run in runs_listed(listed(capsys, "--json", *flags, str(runs)))
        }
        usage = {
            run_id: (run["prompt_tokens"], run["output_tokens"], run["cost_usd"])
            for run_id, run in by_id.items()
        }
        assert usage == {
            CALLED: (2400, 76, 0.0106),
            UNPRICED: (50, 4, None),
            SILENT: (None, None, None),
            DAMAGED: (30, 10, 0.75),
        }


def test_ls_table_has_tokens_and_cost_columns(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(capsys, str(runs)).splitlines()
    header = lines[0].split()
    assert header[header.index("EVENTS") + 1 : header.index("EVENTS") + 3] == ["TOKENS", "COST"]
    rows = {row.split()[2]: row for row in lines[1:]}
    assert rows[CALLED].split()[-2:] == ["2.5k", "$0.0106"]
    assert rows[UNPRICED].split()[-1] == "54"
    silent = rows[SILENT].split()
    assert silent[-1] == "3"  # its events, then nothing: no tokens, no cost, not 0
