"""A run's tokens and cost are one fold: ``runtop ls``, the app and the attach server say
the same of every run, whatever its model calls said or left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore, RunView
from ledger_reader import RunSummary, RunTotals
from ledger_reader.events import LlmCallPayload
from ledger_reader.totals import FIGURES, SAID
from tests.conftest import line, runs_listed
from tui.cli import main
from tui.text.runs import tokens_and_cost, tokens_said

pytestmark = pytest.mark.timeout(60)

CALLS: dict[str, list[dict[str, Any]]] = {
    "priced": [
        {"prompt_tokens": 1800, "output_tokens": 36, "cost_usd": 0.0082},
        {"prompt_tokens": 600, "output_tokens": 40, "cost_usd": 0.0024},
    ],
    "unpriced": [{"prompt_tokens": 50, "output_tokens": 4}],
    "zero": [{"prompt_tokens": 0, "output_tokens": 0}],
    "free": [{"cost_usd": 0.0}],
    "prompt_only": [{"prompt_tokens": 12}, {}],
    "silent": [{}, {}],
    "none": [],
}
"""Each run's model calls, by what they said: all, some, zero, nothing, no calls at all."""


def ledgers(directory: Path) -> dict[str, str]:
    """One finished ledger per entry of :data:`CALLS`; the run ids by name."""
    ids = {}
    for number, (name, calls) in enumerate(CALLS.items(), start=1):
        run_id = f"run_20261129T0645000{number:02d}_{number:016x}"
        ids[name] = run_id
        lines = [line(1, "run_started", {"skill": name, "input": "q"}, run_id=run_id)]
        for seq, usage in enumerate(calls, start=2):
            lines.append(line(seq, "llm_call", {"model": "m", **usage}, run_id=run_id))
        lines.append(line(len(calls) + 2, "run_completed", {"status": "ok"}, run_id=run_id))
        (directory / f"{run_id}.jsonl").write_bytes(b"".join(lines))
    return ids


async def app_views(directory: Path, count: int) -> dict[str, RunView]:
    """The runs as the app's store has them once every event is folded."""
    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(directory, name="dir"))
        changes = store.changes()
        while len(runs := store.snapshot().runs) < count or not all(r.detailed for r in runs):
            await anext(changes)
        return {run.run_id: store.get(RunKey("dir", run.run_id)) or run for run in runs}


async def test_ls_and_the_app_sum_every_run_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ledgers(tmp_path)
    assert main(["ls", "--json", "--no-cache", str(tmp_path)]) == 0
    listed = {run["run_id"]: run for run in runs_listed(capsys.readouterr().out)}
    views = await app_views(tmp_path, len(ids))
    for name, run_id in ids.items():
        said_by_ls = RunTotals(**{figure: listed[run_id][figure] for figure in FIGURES})
        view = views[run_id]
        assert view.totals == said_by_ls, name
        # The app's cell and header are blank or "no tokens recorded" exactly where ls
        # leaves TOKENS and COST blank: a call that said 0 said something.
        assert bool(tokens_and_cost(view)) == said_by_ls.said, name
        assert (tokens_said(view) == "no tokens recorded") == (not said_by_ls.said), name
    assert listed[ids["zero"]]["prompt_tokens"] == 0
    assert listed[ids["free"]]["cost_usd"] == 0.0
    assert listed[ids["silent"]]["prompt_tokens"] is None


def test_a_figure_of_the_totals_is_a_figure_of_a_model_call_and_of_a_summary() -> None:
    """Adding a field to RunTotals is the whole change: the fold and the copies go by name.
    The calls themselves are counted beside what they say (``model_calls``)."""
    assert set(SAID) <= set(LlmCallPayload.__struct_fields__)
    assert set(FIGURES) == {*SAID, "model_calls"}
    assert set(FIGURES) <= set(RunSummary.__struct_fields__)
    totals = RunTotals()
    call = msgspec.convert(dict.fromkeys(SAID, 2), LlmCallPayload)
    totals.add_call(call)
    totals.add_call(LlmCallPayload())
    assert all(getattr(totals, figure) == 2 for figure in FIGURES)
