"""Two runs side by side: tallies read from real ledgers, and verdicts honest about unknowns."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore
from inspector.comparison import (
    Comparison,
    RunFacts,
    RunTally,
    Verdict,
    baseline_first,
    compare,
    difference,
    facts_of,
    tally_run,
)
from ledger_reader import LedgerItem, decode_line
from tests.conftest import completed, line, started
from tests.inspector.test_sources_contract import until
from tests.resumed_pair import (
    FIRST,
    FROZEN_AFTER,
    RESUMED,
    RESUMED_START,
    LedgerLines,
    write_pair,
)

pytestmark = pytest.mark.timeout(30)


async def facts(store: RunStore, run_id: str, source: str = "runs") -> RunFacts:
    key = RunKey(source, run_id)
    tally = RunTally()
    total = await tally_run(store, key, tally)
    view = store.get(key)
    assert view is not None
    return facts_of(view, tally, now=FROZEN_AFTER, events_total=total)


async def pair_compared(directory: Path) -> Comparison:
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        await until(store, lambda s: len(s.runs) == 2, "both runs")
        first, resumed = await facts(store, FIRST), await facts(store, RESUMED)
        later, earlier = store.get(RunKey("runs", RESUMED)), store.get(RunKey("runs", FIRST))
        assert later is not None
        assert earlier is not None
        left, right = baseline_first(later, earlier)
        assert (left.run_id, right.run_id) == (FIRST, RESUMED)  # the resumed run goes right
    return compare(first, resumed)


async def test_a_resumed_run_against_the_run_it_resumed(tmp_path: Path) -> None:
    write_pair(tmp_path / "runs")
    comparison = await pair_compared(tmp_path / "runs")
    assert (comparison.left.status, comparison.right.status) == ("failed", "succeeded")
    assert comparison.outcome is Verdict.BETTER
    duration = comparison.measure("duration")
    assert (duration.left, duration.right) == (pytest.approx(32.9), pytest.approx(8.9))
    assert duration.delta == pytest.approx(-24.0)
    assert duration.verdict is Verdict.BETTER
    assert duration.settled
    prompt = comparison.measure("prompt_tokens")
    assert (prompt.left, prompt.right, prompt.delta) == (1200, 1250, 50)
    assert prompt.verdict is Verdict.WORSE
    assert comparison.measure("output_tokens").verdict is Verdict.BETTER
    cost = comparison.measure("cost_usd")
    assert cost.delta == pytest.approx(-0.001)
    assert cost.verdict is Verdict.BETTER
    calls = comparison.measure("tool_calls")
    assert (calls.left, calls.right, calls.verdict) == (2, 4, Verdict.DIFFERENT)
    assert comparison.measure("model_calls").verdict is Verdict.SAME
    errors = comparison.measure("errors")
    assert (errors.left, errors.right, errors.verdict) == (1, 0, Verdict.BETTER)
    assert comparison.left.error == "timed out waiting for the condition"
    assert comparison.right.error is None
    shell, http = comparison.tools
    assert shell.name == "shell"
    assert shell.left is not None
    assert shell.right is not None
    assert (shell.left.calls, shell.left.errors, shell.right.errors) == (2, 1, 0)
    assert shell.left.seconds == pytest.approx(30.4)
    assert shell.seconds.verdict is Verdict.BETTER
    assert shell.calls.verdict is Verdict.SAME
    assert http.name == "http_get"
    assert http.left is None
    assert http.right is not None
    assert (http.right.calls, http.right.seconds) == (2, pytest.approx(0.5))  # overlapping calls
    assert http.seconds.verdict is Verdict.WORSE  # 0.5 s spent where the first spent none
    assert (comparison.only_left, comparison.only_right) == ((), ("http_get",))
    assert not comparison.same_tools


def test_a_run_still_going_is_a_lower_bound() -> None:
    # The right run is live at 40 s against a finished 30 s: slower, whatever comes next.
    slower = difference("duration", 30.0, 40.0, left_final=True, right_final=False)
    assert slower.verdict is Verdict.WORSE
    assert not slower.settled
    assert slower.delta == 10.0
    # Live at 10 s against 30 s: it may yet take longer. Not "faster".
    so_far = difference("duration", 30.0, 10.0, left_final=True, right_final=False)
    assert so_far.verdict is Verdict.UNKNOWN
    assert so_far.delta == -20.0
    # The left one live and already past the right: the right did better.
    assert (
        difference("cost", 5.0, 2.0, left_final=False, right_final=True).verdict is Verdict.BETTER
    )
    both = difference("cost", 5.0, 2.0, left_final=False, right_final=False)
    assert both.verdict is Verdict.UNKNOWN
    assert difference("cost", None, 2.0, left_final=True, right_final=True).verdict is (
        Verdict.UNKNOWN
    )
    assert difference("x", 2, 2, left_final=True, right_final=True).verdict is Verdict.SAME
    neutral = difference("x", 2, 3, left_final=True, right_final=True, lower_is_better=None)
    assert neutral.verdict is Verdict.DIFFERENT


async def test_what_a_ledger_never_recorded_is_unknown_not_zero(tmp_path: Path) -> None:
    directory = tmp_path / "runs"
    directory.mkdir()
    # A model call with tokens but no cost; a tool call and result without times.
    plain = "run_20261128T150000000_cccc3333cccc3333"
    (directory / f"{plain}.jsonl").write_bytes(
        started(run_id=plain)
        + line(2, "llm_call", {"prompt_tokens": 10, "output_tokens": 2}, run_id=plain)
        + (
            b'{"run_id":"%s","seq":3,"type":"tool_call",'
            b'"payload":{"call_id":"c1","name":"grep"}}\n' % plain.encode()
        )  # no time
        + line(4, "tool_result", {"call_id": "c1", "output": "x"}, run_id=plain)
        + completed(5, run_id=plain)
    )
    priced = LedgerLines("run_20261128T150500000_dddd4444dddd4444", RESUMED_START)
    priced.add(0, "run_started", skill="research")
    priced.model(0.0, 1.0, 10, 2, 0.001).tool(1.0, 1.0, "grep", 1, "x")
    priced.add(2.0, "run_completed", status="ok")
    (directory / f"{priced.run_id}.jsonl").write_bytes(priced.data())
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        await until(store, lambda s: len(s.runs) == 2, "both runs")
        left, right = await facts(store, plain), await facts(store, priced.run_id)
    assert left.cost_usd is None
    assert right.cost_usd == pytest.approx(0.001)
    assert (left.prompt_tokens, left.output_tokens) == (10, 2)
    (grep,) = left.tools
    assert grep.calls == 1
    assert grep.untimed == 1
    assert not grep.timed
    comparison = compare(left, right)
    assert comparison.measure("cost_usd").verdict is Verdict.UNKNOWN
    assert comparison.tools[0].seconds.verdict is Verdict.UNKNOWN
    assert comparison.measure("prompt_tokens").verdict is Verdict.SAME


def test_a_model_call_without_tokens_leaves_the_tokens_unknown() -> None:
    tally = RunTally()
    lines = [started(), line(2, "llm_call", {"model": "m"}), completed(3)]
    items: list[LedgerItem] = [item for raw in lines if (item := decode_line(raw.strip()))]
    tally.add_items(items)
    assert tally.model_calls == 1
    assert not tally.tokens_reported


async def test_a_live_run_is_read_on_from_where_it_was(tmp_path: Path) -> None:
    directory = tmp_path / "runs"
    run = LedgerLines("run_20261128T150000000_eeee5555eeee5555", RESUMED_START)
    run.add(0, "run_started", skill="research")
    run.add(0.5, "tool_call", call_id="c1", name="search")
    directory.mkdir()
    path = directory / f"{run.run_id}.jsonl"
    path.write_bytes(run.data())
    key = RunKey("runs", run.run_id)
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        await until(store, lambda s: s.runs and s.runs[0].event_count == 2, "the run")
        tally = RunTally()
        assert await tally_run(store, key, tally) == 2
        (search,) = tally.tools()
        assert (search.calls, search.in_flight) == (1, 1)
        run.add(1.5, "tool_result", call_id="c1", output="found")
        run.add(1.6, "run_completed", status="ok")
        with path.open("ab") as ledger:
            ledger.write(b"".join(run.lines[2:]))
        await until(store, lambda s: s.runs[0].event_count == 4, "the new events")
        assert await tally_run(store, key, tally) == 4
        assert tally.read == 4
        (search,) = tally.tools()
        assert (search.calls, search.in_flight, search.seconds) == (1, 0, pytest.approx(1.0))
        view = store.get(key)
        assert view is not None
        assert facts_of(view, tally, now=FROZEN_AFTER, events_total=4).settled
        assert not facts_of(view, tally, now=FROZEN_AFTER, events_total=5).settled


def test_a_difference_below_what_a_clock_can_tell_is_the_same() -> None:
    close = difference("duration", 0.8, 0.802, left_final=True, right_final=True)
    assert close.verdict is Verdict.SAME
    assert close.delta == pytest.approx(0.002)  # kept: the display says "about the same"
    assert (
        difference("duration", 0.8, 0.9, left_final=True, right_final=True).verdict is Verdict.WORSE
    )
    # A live run 0.01 s past a finished one has not shown it is slower yet.
    assert (
        difference("duration", 0.8, 0.81, left_final=True, right_final=False).verdict
        is Verdict.UNKNOWN
    )
    assert difference("prompt_tokens", 10, 11, left_final=True, right_final=True).verdict is (
        Verdict.WORSE
    )  # tokens are counted exactly


async def test_a_run_without_model_calls_has_no_tokens_recorded(tmp_path: Path) -> None:
    """Its run screen says "no tokens recorded": the comparison says the same, not 0
    (an agent may call models its ledger does not record)."""
    directory = tmp_path / "runs"
    run = LedgerLines("run_20261128T150000000_ffff6666ffff6666", RESUMED_START)
    run.add(0, "run_started", skill="deploy").tool(0.1, 0.5, "shell", 1, "ok")
    run.add(0.7, "run_completed", status="ok")
    directory.mkdir()
    (directory / f"{run.run_id}.jsonl").write_bytes(run.data())
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        await until(store, lambda s: len(s.runs) == 1, "the run")
        found = await facts(store, run.run_id)
    assert (found.model_calls, found.prompt_tokens, found.output_tokens) == (0, None, None)
    assert found.cost_usd is None
