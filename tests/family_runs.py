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
