"""``runtop cancel``: ask a run to stop, over HTTP or by a control file beside its ledger."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from rich.console import Console

from ledger_reader import RunStatus, summarize_ledger
from ledger_reader.control import request_cancel
from ledger_reader.errors import LedgerError
from tui.commands.targets import CommandError, is_url, require_run_id, resolve_ledger


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    run_id = require_run_id(args.run_id)
    where: str = args.where
    if is_url(where):
        from inspector.attach_client import AttachClient, find_token
        from inspector.source import ActionRefused, SourceError

        async def cancel() -> None:
            async with AttachClient(where, find_token(where, args.token)) as client:
                await client.cancel(run_id, args.reason)

        try:
            asyncio.run(cancel())
        except (ActionRefused, SourceError) as error:
            raise CommandError(f"cannot cancel {run_id}: {error}") from None
        out.print(f"cancel requested: {run_id} (the run shows canceled once it has stopped)")
        return 0
    ledger = resolve_ledger(run_id, [Path(where)])
    try:
        status = summarize_ledger(ledger).status
    except LedgerError as error:
        raise CommandError(f"cannot cancel {run_id}: {error}") from None
    if status in _ENDED:
        # As the attach API answers (409): a control file left for a run that ended would
        # say 'cancel requested' of it, and lie there for good.
        raise CommandError(f"cannot cancel {run_id}: {_ENDED[status]} ({status})")
    request_cancel(ledger.parent, run_id, reason=args.reason, source="cli")
    out.print(f"cancel requested: {run_id} (by control file: a runtop writer there acts on it)")
    return 0


_ENDED = {
    RunStatus.SUCCEEDED: "the run already ended",
    RunStatus.FAILED: "the run already ended",
    RunStatus.CANCELED: "the run already ended",
    RunStatus.ABANDONED: "its writer is gone: nothing is left to stop",
}
"""Statuses a cancel cannot change, and why."""
