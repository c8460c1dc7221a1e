"""The runs table's tally (its columns' fill, the source line's totals) is kept as its rows
change, by looking at the runs that changed, and says what counting every run says."""

from __future__ import annotations

import random

import msgspec
import pytest

from inspector.model import RunExtras, RunKey, RunView, make_view
from ledger_reader import LlmCall, RunStatus, RunSummary
from ledger_reader.summary import PendingApproval
from tui.widgets.run_table import RowTally

pytestmark = pytest.mark.timeout(60)


def a_run(number: int, chosen: random.Random, *, status: RunStatus | None = None) -> RunView:
    """A run of any status from one of three sources; some with tokens and a cost, damaged
    lines, an error, an approval asked, a cancel asked for, or not detailed yet."""
    status = status or chosen.choice(list(RunStatus))
    extras = None
    if chosen.random() < 0.3:
        extras = RunExtras()
        extras.add(_llm_call(number, chosen.randrange(2000), chosen.random() / 100))
    asked = (
        PendingApproval(approval_id="a1", prompt=f"deploy {number}?")
        if chosen.random() < 0.1
        else None
    )
    summary = RunSummary(
        run_id=f"run_{number}",
        status=status,
        cancel_requested=chosen.random() < 0.3,
        damaged_lines=chosen.choice([None, 0, 2]),
        error=chosen.choice([None, "failed: the disk " + "is full " * chosen.randrange(20)]),
        pending_approval=asked,
        current_node=chosen.choice([None, "llm:claude#1", "tool:web_search#3"]),
    )
    source = chosen.choice(["here", "away", "127.0.0.1:8765"])
    key = RunKey(source, f"run_{number}")
    return make_view(key, summary, extras, detailed=chosen.random() < 0.9)


def _llm_call(seq: int, tokens: int, cost: float) -> LlmCall:
    return msgspec.convert(
        {
            "run_id": f"run_{seq}",
            "seq": seq,
            "time": "2026-11-29T06:45:00Z",
            "type": "llm_call",
            "payload": {"prompt_tokens": tokens, "output_tokens": 7, "cost_usd": cost},
        },
        LlmCall,
    )


@pytest.mark.parametrize("seed", range(8))
def test_a_tally_kept_as_rows_change_says_what_counting_them_afresh_says(seed: int) -> None:
    chosen = random.Random(seed)
    rows = [a_run(number, chosen) for number in range(600)]
    made = len(rows)
    down: frozenset[str] = frozenset()
    tally = RowTally(rows, down)
    for _ in range(40):
        rows = list(rows)
        step = chosen.random()
        if step < 0.5:  # new views of some runs, where they were (a store's flush)
            for place in chosen.sample(range(len(rows)), min(len(rows), chosen.randrange(40))):
                rows[place] = a_run(int(rows[place].run_id[4:]), chosen)
        elif step < 0.7:  # runs come and go
            for place in sorted(chosen.sample(range(len(rows)), min(len(rows), 5)), reverse=True):
                del rows[place]
            rows[:0] = [a_run(made + extra, chosen) for extra in range(chosen.randrange(8))]
            made += 8
        elif step < 0.8:  # sorted another way
            chosen.shuffle(rows)
        elif step < 0.9:  # a source goes away, or comes back
            down = frozenset(chosen.sample(["here", "away"], chosen.randrange(2)))
        else:  # filtered: some rows go
            rows = rows[: chosen.randrange(len(rows) // 2, len(rows) + 1)]
        tally.update(rows, down)
        afresh = RowTally(rows, down)
        assert (tally.fill(), tally.totals()) == (afresh.fill(), afresh.totals())
    assert tally.totals()[0]  # something was said of them
    tally.update([], down)  # a filter nothing matches
    assert (tally.fill(), tally.totals()) == (RowTally().fill(), ("", ""))


def test_a_hundred_live_runs_among_ten_thousand_are_the_runs_looked_at() -> None:
    """The store makes a new view only of a run that changed: those are all the tally looks
    at, however many runs are shown (counting 10,000 was ~25 ms of every refresh)."""
    chosen = random.Random(7)
    ended = [a_run(number, chosen, status=RunStatus.SUCCEEDED) for number in range(9_900)]
    live = [a_run(number, chosen, status=RunStatus.RUNNING) for number in range(9_900, 10_000)]
    tally = RowTally(live + ended, frozenset())
    assert tally.looked_at == 10_000
    for _ in range(3):
        live = [a_run(int(run.run_id[4:]), chosen, status=RunStatus.RUNNING) for run in live]
        tally.update(live + ended, frozenset())
        assert tally.looked_at == 200  # each live run's old view out, its new one in
    assert tally.totals() == RowTally(live + ended, frozenset()).totals()
    assert sum(int(counted[1:]) for counted in tally.totals()[0].split()) == 10_000
