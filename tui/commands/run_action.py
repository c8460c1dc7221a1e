"""What ``runtop cancel``, ``approve``, ``deny`` and ``resume`` share: finding the run and
asking it through the source the app would use for the same place.

A directory is read by :class:`~inspector.LedgerDirectorySource` (its request is a control
file beside the ledger), a server's URL by :class:`~inspector.RemoteSource` (its request
goes through the attach API). Either way the run is first seen as that source sees it and
:func:`inspector.actions.refusal` decides, so a run the app greys a key out for is refused
here in the same words, and the request records the same ``source``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from rich.console import Console

from inspector.actions import Action, refusal
from inspector.ledger import RunSummary
from inspector.source import ActionRefused, RunSource, SourceError
from tui.commands.targets import (
    CommandError,
    is_url,
    match_run_id,
    remote_run_id,
    require_run_id,
    resolve_ledger,
)
from tui.settings import Settings
from tui.text import inert, shorten

T = TypeVar("T")

Request = Callable[[RunSource, RunSummary], Awaitable[T]]
"""What is asked of the run once its source may: called with the source and the run as
the source sees it."""


def act(
    where: str, target: str, token: str | None, action: Action, verb: str, request: Request[T]
) -> tuple[str, T]:
    """Ask the run ``target`` names (its id, or a unique part of one) under ``where`` (a
    ledger directory or a server's URL): the run's whole id and what ``request`` returned.

    Raises:
        CommandError: no such run, or the source refuses (``cannot VERB RUN: why``), or it
            cannot be reached.
    """
    require_run_id(target)
    if is_url(where):
        from inspector import RemoteSource

        # Listed first by itself: a server that cannot be reached, or refuses the token, is
        # said as ``ls`` says it (the source would count down to its next try).
        run_id = remote_run_id(where, token, target)
        source: RunSource = RemoteSource(where, token)
        place = f"on {where}"
    else:
        from inspector import LedgerDirectorySource

        # Resolved, as the app's sources for files are: the directory watched holds the file.
        ledger = resolve_ledger(target, [Path(where)]).resolve()
        run_id = ledger.stem  # the whole id, when a part of it was typed
        source = LedgerDirectorySource(ledger.parent, only=[ledger])
        place = f"in {ledger.parent}"
    try:
        return asyncio.run(_ask(source, run_id, place, action, request))
    except (ActionRefused, SourceError) as error:
        raise CommandError(f"cannot {verb} {getattr(error, 'run_id', run_id)}: {error}") from None


class _Refused(ActionRefused):
    """A refusal, with the whole id of the run refused (a part of one may have been typed)."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(reason)
        self.run_id = run_id


async def _ask(
    source: RunSource, target: str, place: str, action: Action, request: Request[T]
) -> tuple[str, T]:
    """The run as ``source`` first sees it, its refusal if it has one, else ``request``."""
    updates = source.updates()
    try:
        async for update in updates:
            if update.error is not None:
                raise update.error
            known = [run.run_id for run in update.runs]
            if target not in known and update.pending:
                continue  # the first load goes on in the next update
            run_id = match_run_id(target, known, place) if target not in known else target
            seen = next(run for run in update.runs if run.run_id == run_id)
            refused = refusal(action, seen.summary, source)
            if refused is not None:
                raise _Refused(run_id, refused)
            try:
                return run_id, await request(source, seen.summary)
            except ActionRefused as error:
                raise _Refused(run_id, str(error)) from None
        raise SourceError(f"no run {target} {place}")
    finally:
        if isinstance(updates, AsyncGenerator):
            await updates.aclose()
        await source.close()


def answer(args: argparse.Namespace, out: Console, *, approved: bool) -> int:
    """Approve (or deny) the approval the run waits on, and say what was answered; who
    answered (``--user``, else ``RUNTOP_USER``, else the OS user) is recorded in the run's
    ``approval_response`` as ``answered_by``."""
    user = getattr(args, "user", None) or Settings.from_env().user
    verb = "approve" if approved else "deny"

    async def decide(source: RunSource, summary: RunSummary) -> str:
        pending = summary.pending_approval
        assert pending is not None  # the refusal says when it waits on none
        await source.approve(summary.run_id, pending.approval_id, approved, args.reason, by=user)
        return pending.prompt or pending.approval_id

    run_id, question = act(args.where, args.run_id, args.token, "approve", verb, decide)
    said = shorten(inert(question, single_line=True), 200)
    how = "" if is_url(args.where) else " (by control file: the runtop writer running it answers)"
    out.print(f"{'approved' if approved else 'denied'}: {run_id}: {said}{how}")
    return 0


__all__ = ["Request", "act", "answer"]
