"""The run a piece of code is part of, carried by its context.

Two context variables, set together when a run's task is created: the
run's id, which any code may read (:func:`current_run_id`), and the run
itself, which only the call recorders of this package use. A tool (or a
remote MCP tool) running inside a run gets the id, never the run: it must
not be able to mark the run done or forge its result.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from run_manager.run import Run

_run_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("runtop_run_id", default=None)
_run: contextvars.ContextVar[Run | None] = contextvars.ContextVar("runtop_run", default=None)


def current_run_id() -> str | None:
    """The id of the run this code is part of, or ``None`` outside any run."""
    return _run_id.get()


def current_run() -> Run | None:
    """The run this code is part of (for the recorders of this package only)."""
    return _run.get()


def context_of(run: Run) -> contextvars.Context:
    """A copy of the caller's context in which ``run`` is the current run."""
    context = contextvars.copy_context()
    context.run(_run_id.set, run.id)
    context.run(_run.set, run)
    return context


__all__ = ["context_of", "current_run", "current_run_id"]
