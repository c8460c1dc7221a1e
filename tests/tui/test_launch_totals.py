"""The source line's totals, counted by status in C, say what marking every run says."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import msgspec
import pytest

from inspector.model import RunExtras, RunKey, RunView, make_view
from ledger_reader import LlmCall, RunStatus, RunSummary
from tui.screens.runs import _totals
from tui.text.runs import status_mark

pytestmark = pytest.mark.timeout(60)


def every_kind_of_run(count: int, seed: int) -> list[RunView]:
    """Runs of every status from two sources, some live with a cancel asked for, some with
    tokens and cost, in a random order."""
    chosen = random.Random(seed)
    runs = []
    for number in range(count):
        status = chosen.choice(list(RunStatus))
        extras = None
        if chosen.random() < 0.3:
            extras = RunExtras()
            extras.add(_llm_call(number, chosen.randrange(2000), chosen.random()))
        summary = RunSummary(
            run_id=f"run_{number}",
            status=status,
            cancel_requested=chosen.random() < 0.4,
        )
        source = chosen.choice(["here", "away"])
        runs.append(make_view(RunKey(source, f"run_{number}"), summary, extras, detailed=True))
    return runs


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


def marked_one_by_one(runs: list[RunView], down: frozenset[str]) -> Counter[tuple[str, str]]:
    """The plain way: every run marked as the table marks it."""
    marks: Counter[tuple[str, str]] = Counter()
    for run in runs:
        glyph, word, _ = status_mark(run, source_down=run.source in down)
        marks[(glyph, word)] += 1
    return marks


@pytest.mark.parametrize(
    ("seed", "down"),
    itertools.product(range(6), [frozenset(), frozenset({"away"})]),
)
def test_totals_agree_with_every_run_marked(seed: int, down: frozenset[str]) -> None:
    runs = every_kind_of_run(400, seed)
    said = _totals(runs, down)
    text = said if isinstance(said, str) else "  ".join(said)  # one line, or counts and spent
    expected = marked_one_by_one(runs, down)
    assert len(expected) >= 8  # cancelling and unknown (source away) among them
    glyphs = {glyph for glyph, _ in expected}
    counts = [part for part in text.split() if part.rstrip("0123456789") in glyphs]
    assert sorted(counts) == sorted(f"{glyph}{count}" for (glyph, _), count in expected.items())
    tokens = sum(run.prompt_tokens + run.output_tokens for run in runs)
    assert f"{tokens / 1000:.1f}k tok" in text


def test_no_runs_no_totals() -> None:
    assert _totals([], frozenset()) in ("", ("", ""))
