"""What can go wrong with a run, as a caller of the manager meets it."""

from __future__ import annotations


class RunNotFound(LookupError):
    """No run with that id is live or retained."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"no run {run_id!r}")


class RunFailed(Exception):
    """:meth:`Handle.result` of a run that failed."""


class RunCanceled(Exception):
    """:meth:`Handle.result` of a run that was cancelled."""


class RunNotResumable(Exception):
    """A run cannot be re-issued: still live, agent unknown, or input not recorded whole."""


__all__ = ["RunCanceled", "RunFailed", "RunNotFound", "RunNotResumable"]
