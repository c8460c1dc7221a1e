"""``runtop cancel``: ask a run to stop, over HTTP or by a control file beside its ledger.

Either way the request goes through the source the app would use for the
same place (:class:`~inspector.LedgerDirectorySource` for a directory, the
attach server's answer for a URL): a run the app greys ``c`` out for is
refused here in the same words, and the request records the same ``source``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

from rich.console import Console

from inspector import LedgerDirectorySource
from inspector.actions import refusal
from inspector.source import ActionRefused, SourceError
from tui.commands.targets import (
    CommandError,
    is_url,
    remote_run_id,
    require_run_id,
    resolve_ledger,
)
from tui.settings import Settings


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    run_id = require_run_id(args.run_id)
    where: str = args.where
    user = getattr(args, "user", None) or Settings.from_env().user
    if is_url(where):
        from inspector.attach_client import AttachClient, find_token

        run_id = remote_run_id(where, args.token, run_id)

        async def cancel() -> None:
            async with AttachClient(where, find_token(where, args.token)) as client:
                await client.cancel(run_id, args.reason, by=user)

        try:
            asyncio.run(cancel())
        except (ActionRefused, SourceError) as error:
            raise CommandError(f"cannot cancel {run_id}: {error}") from None
        out.print(f"cancel requested: {run_id} (the run shows canceled once it has stopped)")
        return 0
    # Resolved, as the app's sources for files are: the directory watched holds the real file.
    ledger = resolve_ledger(run_id, [Path(where)]).resolve()
    run_id = ledger.stem  # the whole id, when a part of it was typed
    try:
        asyncio.run(cancel_in_directory(ledger, run_id, args.reason, by=user))
    except (ActionRefused, SourceError) as error:
        raise CommandError(f"cannot cancel {run_id}: {error}") from None
    out.print(f"cancel requested: {run_id} (by control file: a runtop writer there acts on it)")
    return 0


async def cancel_in_directory(
    ledger: Path, run_id: str, reason: str | None, *, by: str | None = None
) -> None:
    """Cancel the run of ``ledger`` as the app does from a directory it watches: the run
    as the source first sees it, the source's refusal if it has one, else its request
    (``by``: who asks).

    Raises:
        ActionRefused: the source refuses, with its reason.
        SourceError: the ledger could not be read.
    """
    source = LedgerDirectorySource(ledger.parent, only=[ledger])
    updates = source.updates()
    try:
        async for update in updates:
            if update.error is not None:
                raise update.error
            seen = next((run for run in update.runs if run.run_id == run_id), None)
            if seen is None:
                if update.pending:
                    continue  # the first load goes on in the next update
                raise SourceError(f"no ledger for run {run_id} in {ledger.parent}")
            refused = refusal("cancel", seen.summary, source)
            if refused is not None:
                raise ActionRefused(refused)
            await source.cancel(run_id, reason, by=by)
            return
    finally:
        if isinstance(updates, AsyncGenerator):
            await updates.aclose()
        await source.close()
