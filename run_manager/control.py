"""Watching a ledger directory's ``.control`` files, as typed requests for the manager.

The protocol itself (what a request is, how it is read safely, claimed,
completed or answered as failed) is :mod:`ledger_reader.control`. This
module only finds requests and hands them over: :class:`ControlWatcher`
yields :class:`~ledger_reader.control.CancelRequest`,
:class:`~ledger_reader.control.ApproveRequest` and
:class:`~ledger_reader.control.ResumeRequest` values, and the manager acts
on them and completes or fails each one. It knows nothing of the manager
beyond one question, whether a run is live here (a cancel or an answer for
a run another manager owns is left for that manager).

The watcher survives whatever it finds: a directory, FIFO or symlink
named like a request is never opened, a request it cannot read is set
aside as ``.failed`` with the reason, and anything it skips is logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Final

from ledger_reader.control import (
    FAILED_SUFFIX,
    ApproveRequest,
    CancelRequest,
    ControlFileError,
    ControlRequest,
    RequestKind,
    ResumeRequest,
    check_regular,
    claim,
    control_dir,
    fail,
    parse_name,
    read_request,
    text_field,
)
from ledger_reader.locations import make_private_dir

RESCAN_EVERY: Final = 1.0
"""Seconds between looks at the whole directory: a cancel whose run started after it was written."""
RETRY_AFTER: Final = 1.0
"""Seconds before watching again after the directory could not be watched."""
_REMEMBERED: Final = 10_000
"""Skipped entries remembered (so each is logged once) before the memory is cleared."""

log = logging.getLogger(__name__)


class ControlWatcher:
    """The requests that appear in ``<ledger_dir>/.control``.

    Args:
        ledger_dir: the ledger directory the manager writes into.
        is_live: whether a run is live in this manager (only such runs'
            cancels and answers are taken; another manager may own the rest).
    """

    def __init__(self, ledger_dir: Path, is_live: Callable[[str], bool]) -> None:
        self.directory = control_dir(ledger_dir)
        self.is_live = is_live
        self._skipped: set[tuple[str, int, int]] = set()

    async def requests(self, stop: asyncio.Event) -> AsyncIterator[ControlRequest]:
        """Requests as they appear, until ``stop`` is set; never raises for what it finds."""
        from watchfiles import Change, awatch

        while not stop.is_set():
            try:
                make_private_dir(self.directory)
                for request in self.scan():
                    yield request
                async for changes in awatch(
                    self.directory,
                    stop_event=stop,
                    debounce=1,
                    step=1,
                    recursive=False,
                    rust_timeout=int(RESCAN_EVERY * 1000),
                    yield_on_timeout=True,
                ):
                    if changes:
                        names = {Path(name).name for change, name in changes}
                        names -= {Path(n).name for c, n in changes if c == Change.deleted}
                        for request in self._take(sorted(names)):
                            yield request
                    else:
                        for request in self.scan():
                            yield request
            except Exception as error:  # the directory went away, inotify ran out, ...
                log.warning("watching %s for control files: %s", self.directory, error)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RETRY_AFTER)

    def scan(self) -> list[ControlRequest]:
        """The requests in the directory now (blocking for a moment: a directory listing)."""
        try:
            names = sorted(os.listdir(self.directory))
        except OSError as error:
            log.warning("cannot list %s: %s", self.directory, error.strerror)
            return []
        return list(self._take(names))

    def _take(self, names: Iterable[str]) -> Iterable[ControlRequest]:
        for name in names:
            try:
                request = self._request(self.directory / name)
            except Exception as error:  # never let one file end the watcher
                log.warning("control file %s skipped: %s", name, error)
                continue
            if request is not None:
                yield request

    def _skip_once(self, path: Path, why: str) -> None:
        """Log a file that is no request once (ours in passing are not logged at all)."""
        name = path.name
        if name.startswith(".") or name.endswith(FAILED_SUFFIX) or _is_claimed(name):
            return  # a request being written, one answered, or one another manager holds
        try:
            info = os.lstat(path)
        except OSError:
            return
        key = (name, info.st_dev, info.st_ino)
        if key in self._skipped:
            return
        if len(self._skipped) >= _REMEMBERED:
            self._skipped.clear()
        self._skipped.add(key)
        log.warning("control file %s left alone: %s", path, why)

    def _request(self, path: Path) -> ControlRequest | None:
        parsed = parse_name(path.name)
        if parsed is None:
            self._skip_once(
                path, "its name asks for nothing (<run_id>.cancel, .resume or .approve)"
            )
            return None
        kind, run_id = parsed
        if kind is not RequestKind.RESUME:
            if not self.is_live(run_id):
                return None  # not a run of ours (yet): another manager's, or a later one
            try:
                body = read_request(path)
            except ControlFileError as error:
                fail(path, str(error))
                return None
            except FileNotFoundError:
                return None
            if kind is RequestKind.APPROVE:
                return ApproveRequest(
                    run_id,
                    path,
                    body.get("approved") is True,  # anything but a plain yes is no
                    text_field(body, "approval_id"),
                    text_field(body, "reason"),
                    text_field(body, "source"),
                    text_field(body, "answered_by"),
                )
            return CancelRequest(
                run_id,
                path,
                text_field(body, "reason"),
                text_field(body, "source"),
                text_field(body, "requested_by"),
            )
        try:
            check_regular(path)
        except ControlFileError as error:
            if os.path.lexists(path):
                fail(path, str(error))
            return None
        claimed = claim(path)
        if claimed is None:
            return None
        try:
            body = read_request(claimed)
        except ControlFileError as error:
            fail(claimed, str(error))
            return None
        return ResumeRequest(run_id, claimed, text_field(body, "source"))


def _is_claimed(name: str) -> bool:
    stem, dot, pid = name.rpartition(".")
    return bool(dot) and pid.isdigit() and parse_name(stem) is not None


__all__ = ["RESCAN_EVERY", "ControlWatcher"]
