"""Where a run's code executes: in the manager's process (the default) or elsewhere.

An :class:`Executor` takes over one step of a run's task: calling the
agent. Everything else stays with the manager: the run's id and handle,
its ledger and the live hub (an executor records through the run's own
methods), cancel (the run's task is cancelled as for any run; the
executor passes that on to wherever the agent is) and the timeout.
``run_manager.executors.ray.RayExecutor`` is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from run_manager.run import Run


@runtime_checkable
class Executor(Protocol):
    """Executes agents somewhere other than the manager's event loop."""

    name: str
    """What ``run_started`` records as the run's ``executor`` (``ray``)."""

    async def execute(self, run: Run, runnable: object, streamed: bool) -> str:
        """Call the agent of ``run``, recording through ``run``; its output.

        Raises as the in-process path does: ``asyncio.CancelledError`` or
        :class:`~run_manager.agents.Canceled` when the run was cancelled,
        :class:`StreamFailed` when a streamed agent reported an error (already
        recorded), any other exception when the agent (or the place it ran)
        failed; its message becomes the run's error.
        """
        ...

    async def close(self) -> None:
        """Release what the executor holds; the manager calls it last in ``close()``."""
        ...


class StreamFailed(Exception):
    """A streamed run reported an error (already recorded in its ledger)."""


__all__ = ["Executor", "StreamFailed"]
