"""A parent run whose child runs (and a grandchild) spend: real runs of a real manager,
for the tests of a parent's totals with its child runs'."""

from __future__ import annotations

from pathlib import Path

from run_manager import Manager, model_call

PARENT_COST, CHILD_COST, GRANDCHILD_COST = 0.0100, 0.0200, 0.0040
"""What each run's one model call costs: the parent's total is 0.0100 + 2 × 0.0200 + 0.0040."""
PARENT_TOKENS, CHILD_TOKENS, GRANDCHILD_TOKENS = 110, 220, 44


class Leaf:
    """A run that makes one model call, of the cost its input names."""

    name = "leaf"

    async def run(self, input: str) -> str:
        cost, tokens = {"child": (CHILD_COST, CHILD_TOKENS)}.get(
            input, (GRANDCHILD_COST, GRANDCHILD_TOKENS)
        )
        async with model_call("m-small", provider="p") as call:
            call.usage(prompt_tokens=tokens - 10, output_tokens=10, cost_usd=cost)
        return input


class Middle:
    """A child run that spends, then starts a grandchild."""

    name = "middle"

    def __init__(self, manager: Manager) -> None:
        self.manager = manager

    async def run(self, input: str) -> str:
        async with model_call("m-small", provider="p") as call:
            call.usage(prompt_tokens=CHILD_TOKENS - 10, output_tokens=10, cost_usd=CHILD_COST)
        return await self.manager.start(Leaf(), "grandchild").result()


class Parent:
    """Spends, then starts two child runs, one of which starts a grandchild."""

    name = "parent"

    def __init__(self, manager: Manager) -> None:
        self.manager = manager

    async def run(self, input: str) -> str:
        async with model_call("m-large", provider="p") as call:
            call.usage(prompt_tokens=PARENT_TOKENS - 10, output_tokens=10, cost_usd=PARENT_COST)
        await self.manager.start(Leaf(), "child").result()
        await self.manager.start(Middle(self.manager), "child").result()
        return "planned"


async def family(ledger_dir: Path) -> str:
    """Run a parent and its family into ``ledger_dir``; the parent's run id."""
    async with Manager(ledger_dir=ledger_dir) as manager:
        handle = manager.start(Parent(manager), "plan")
        await handle.result()
        return handle.run_id


FAMILY_COST = PARENT_COST + 2 * CHILD_COST + GRANDCHILD_COST
FAMILY_TOKENS = PARENT_TOKENS + 2 * CHILD_TOKENS + GRANDCHILD_TOKENS


BIG_PARENT = "run_20261129T064500001_b16b16b16b16b16a"
BIG_CHILD = "run_20261129T064500002_b16b16b16b16b16c"
BIG_OWN = {BIG_PARENT: (PARENT_TOKENS, PARENT_COST), BIG_CHILD: (CHILD_TOKENS, CHILD_COST)}
"""Each run's own tokens and cost in :func:`family_with_a_big_ledger`: two calls each."""
FILLER = 80
"""Lines of 4 KiB of streamed text between a run's two model calls: 320 KiB, over the
256 KiB past which a ledger is summarised from its head and tail."""


def family_with_a_big_ledger(directory: Path, big: str) -> None:
    """A parent and its child run, written as another writer would, each making two model
    calls; the run ``big`` (:data:`BIG_PARENT` or :data:`BIG_CHILD`) streams 320 KiB of
    text between them, so that its summary is read at its head and tail only."""
    from tests.conftest import line

    directory.mkdir(parents=True, exist_ok=True)
    for run_id, parent in ((BIG_PARENT, None), (BIG_CHILD, BIG_PARENT)):
        tokens, cost = BIG_OWN[run_id]
        call = {"model": "m", "prompt_tokens": tokens // 2 - 5, "output_tokens": 5}
        call["cost_usd"] = cost / 2  # type: ignore[assignment]
        started = {"skill": "plan", "input": "q", "parent_run_id": parent}
        lines = [line(1, "run_started", started, run_id=run_id)]
        lines.append(line(2, "llm_call", call, run_id=run_id))
        filler = FILLER if run_id == big else 1
        for seq in range(3, 3 + filler):
            chunk = {"node_id": "llm:m#2", "delta": "x" * 4096}
            lines.append(line(seq, "llm_chunk", chunk, run_id=run_id))
        lines.append(line(3 + filler, "llm_call", call, run_id=run_id))
        lines.append(line(4 + filler, "run_completed", {"status": "ok"}, run_id=run_id))
        (directory / f"{run_id}.jsonl").write_bytes(b"".join(lines))
