"""What a replay's recording holds is known before its first event is played: whether a
line of it is damaged, whether a model call of it said its tokens or cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import ReplaySource
from inspector.ledger_source import Recording

pytestmark = pytest.mark.timeout(30)

CLASSIFY = "run_20261128T143000063_c5b4a39281706f5e"
"""One damaged line, no model call."""
RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""Model calls that said their tokens and cost."""
DEPLOY = "run_20261128T143000031_9c8b7a6f5e4d3c2b"


@pytest.mark.parametrize(
    ("runs", "held"),
    [
        ((CLASSIFY,), Recording(damage=True)),
        ((RESEARCH,), Recording(spending=True)),
        ((DEPLOY,), Recording()),
        ((DEPLOY, CLASSIFY, RESEARCH), Recording(damage=True, spending=True)),
    ],
)
async def test_the_recording_is_known_before_its_first_event(
    fixtures: Path, runs: tuple[str, ...], held: Recording
) -> None:
    replay = ReplaySource([fixtures / f"{run}.jsonl" for run in runs], step=True)
    updates = replay.updates()
    first = await anext(updates)
    assert first.initial
    assert not first.runs  # nothing played yet
    assert replay.recording == held
    await replay.close()
    await updates.aclose()
