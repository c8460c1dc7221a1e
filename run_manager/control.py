"""Control files: cancel or resume a run from outside the process (LEDGER.md).

A process that only sees the ledger directory creates
``.control/<run_id>.cancel`` (holding ``{"reason", "source",
"requested_at"}``) or ``.control/<run_id>.resume``. The manager that owns
the run acts and removes the file. A resume is claimed first by renaming
the file to ``<run_id>.resume.<pid>``, so two managers sharing a directory
never both re-issue a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ledger_reader import is_valid_run_id
from ledger_reader.locations import make_private_dir

if TYPE_CHECKING:
    from run_manager.manager import Manager

CONTROL_DIR: Final = ".control"
_MAX_REQUEST_BYTES: Final = 64 * 1024

log = logging.getLogger(__name__)


def control_dir(ledger_dir: Path) -> Path:
    return ledger_dir / CONTROL_DIR


def request_cancel_file(
    ledger_dir: Path, run_id: str, *, reason: str | None = None, source: str = "control-file"
) -> Path:
    """Write a cancel request for ``run_id`` (what ``runtop cancel`` does with a directory)."""
    if not is_valid_run_id(run_id):
        raise ValueError(f"invalid run id: {run_id!r}")
    directory = control_dir(ledger_dir)
    make_private_dir(directory)
    from run_manager.ids import utc_now

    body = msgspec.json.encode({"reason": reason, "source": source, "requested_at": utc_now()})
    target = directory / f"{run_id}.cancel"
    partial = directory / f".{run_id}.cancel.{os.getpid()}"
    partial.write_bytes(body)
    os.replace(partial, target)  # whole or nothing: the watcher never reads half a request
    return target


def _read_request(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_REQUEST_BYTES)
        request = msgspec.json.decode(data) if data.strip() else {}
    except (OSError, msgspec.DecodeError):
        return {}
    return request if isinstance(request, dict) else {}


def handle_control_file(manager: Manager, path: Path) -> None:
    """Act on one control file if it names a run this manager can act on."""
    name = path.name
    if name.endswith(".cancel"):
        run_id = name[: -len(".cancel")]
        if not is_valid_run_id(run_id) or run_id not in {i.run_id for i in manager.active()}:
            return  # not ours (another manager may own it)
        request = _read_request(path)
        reason = request.get("reason")
        source = request.get("source")
        manager.cancel(
            run_id,
            reason if isinstance(reason, str) else None,
            source=source if isinstance(source, str) else "control-file",
        )
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    elif name.endswith(".resume"):
        run_id = name[: -len(".resume")]
        if not is_valid_run_id(run_id):
            return
        claimed = path.with_name(f"{name}.{os.getpid()}")
        try:
            os.rename(path, claimed)
        except FileNotFoundError:
            return  # another manager claimed it
        try:
            manager.resume(run_id)
        except Exception as error:
            log.warning("cannot resume %s from a control file: %s", run_id, error)
            with contextlib.suppress(OSError):
                os.rename(claimed, path)  # leave it for a manager that can
            return
        with contextlib.suppress(FileNotFoundError):
            claimed.unlink()


async def watch_control_dir(manager: Manager, ledger_dir: Path, stop: asyncio.Event) -> None:
    """Act on control files as they appear, until ``stop`` is set."""
    from watchfiles import Change, awatch

    directory = control_dir(ledger_dir)
    make_private_dir(directory)
    for path in sorted(directory.iterdir()):
        handle_control_file(manager, path)
    async for changes in awatch(
        directory,
        stop_event=stop,
        debounce=1,
        step=1,
        recursive=False,
        rust_timeout=1000,
        yield_on_timeout=True,
    ):
        for change, name in sorted(changes):
            if change != Change.deleted:
                handle_control_file(manager, Path(name))
        if not changes:
            # A request whose run started after it was written: look again now and then.
            for path in sorted(directory.iterdir()):
                if path.name.endswith(".cancel"):
                    handle_control_file(manager, path)
