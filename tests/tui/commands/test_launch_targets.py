"""``runtop FILE``: a ledger named through a symbolic link shows its run (it showed none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource
from tui.commands.watch import sources_for

pytestmark = pytest.mark.timeout(60)

SAMPLE = "run_20261128T143000012_4f1a9c2e7b3d8a60"


async def first_run_ids(source: LedgerDirectorySource) -> list[str]:
    updates = source.updates()
    try:
        update = await anext(updates)
        while update.pending:  # read in steps: the first update may not hold them all
            update = await anext(updates)
        return [run.run_id for run in update.runs]
    finally:
        await updates.aclose()  # type: ignore[attr-defined]
        await source.close()


@pytest.mark.parametrize("through", ["the file", "a link to it"])
async def test_a_ledger_file_shows_its_run(fixtures: Path, tmp_path: Path, through: str) -> None:
    ledger = fixtures / f"{SAMPLE}.jsonl"
    named = ledger
    if through == "a link to it":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        named = elsewhere / "latest.jsonl"
        named.symlink_to(ledger)
    [source] = sources_for([named], default=False)
    assert isinstance(source, LedgerDirectorySource)
    assert source.name == named.name  # what the user typed, not the link's target
    assert await first_run_ids(source) == [SAMPLE]
