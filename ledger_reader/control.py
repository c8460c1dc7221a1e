"""Control files: asking a run's writer, through its ledger directory, to cancel or resume
it, or to answer the approval it waits on.

The protocol (LEDGER.md, *Control files*) in one place, for both sides:

- a client writes ``.control/<run_id>.cancel``, ``.resume`` or ``.approve``
  whole or not at all (:func:`request_cancel`, :func:`request_resume`,
  :func:`request_approve`: a temporary file renamed into place);
- the writer reads a request only if it is a regular file, opened without
  following a symlink and without blocking (a FIFO named like a request
  must not freeze the process that reads it), and no bigger than
  :data:`MAX_REQUEST_BYTES` (:func:`read_request`);
- a resume is claimed before it is acted on, by renaming it to
  ``<name>.<pid>`` (:func:`claim`), so two managers sharing a directory
  never both re-issue a run; a request acted on is removed
  (:func:`complete`);
- a request that cannot be carried out is answered once (:func:`fail`):
  moved aside as ``<name>.failed``, which holds the reason, with one log
  line. It is never left where it would be tried again.

This module reads and writes files only; what a request does is the run
manager's business (``run_manager.control`` yields these requests as typed
values).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

import msgspec

from ledger_reader.errors import file_kind
from ledger_reader.events import is_valid_run_id
from ledger_reader.locations import make_private_dir
from ledger_reader.scan import CONTROL_DIR

MAX_REQUEST_BYTES: Final = 64 * 1024
"""A request holds a reason and two short strings; anything bigger is refused unread."""
FAILED_SUFFIX: Final = ".failed"

log = logging.getLogger(__name__)


class RequestKind(StrEnum):
    """What a control file asks for; its name ends in ``.<kind>``."""

    CANCEL = "cancel"
    RESUME = "resume"
    APPROVE = "approve"
    """Approve or deny (``"approved": false``) the approval the live run waits on."""


class ControlFileError(Exception):
    """A control file that is not a request runtop can read (the message says why)."""


@dataclass(frozen=True, slots=True)
class CancelRequest:
    """Stop the live run ``run_id``; the file at ``path`` is removed once that is asked."""

    run_id: str
    path: Path
    reason: str | None = None
    source: str | None = None
    requested_by: str | None = None


@dataclass(frozen=True, slots=True)
class ResumeRequest:
    """Re-issue the finished run ``run_id``; ``path`` is the request as claimed."""

    run_id: str
    path: Path
    source: str | None = None


@dataclass(frozen=True, slots=True)
class ApproveRequest:
    """Answer an approval of the live run ``run_id`` (``approval_id`` ``None``: the one it
    waits on); the file at ``path`` is removed once answered."""

    run_id: str
    path: Path
    approved: bool
    approval_id: str | None = None
    reason: str | None = None
    source: str | None = None
    answered_by: str | None = None


ControlRequest = CancelRequest | ResumeRequest | ApproveRequest


def control_dir(ledger_dir: str | os.PathLike[str]) -> Path:
    """The ``.control`` directory of a ledger directory."""
    return Path(ledger_dir) / CONTROL_DIR


def parse_name(name: str) -> tuple[RequestKind, str] | None:
    """The kind and run id a file name asks about, or ``None`` if it is not a request.

    Claimed (``.cancel.<pid>``), failed and temporary (dot-first) files are
    not requests; nor is a name whose run id is not a valid id.
    """
    if name.startswith("."):
        return None
    stem, dot, suffix = name.rpartition(".")
    if not dot or suffix not in RequestKind.__members__.values():
        return None
    if not is_valid_run_id(stem):
        return None
    return RequestKind(suffix), stem


# -- writing a request (a client: the TUI, the command line) --------------------------------


def write_request(
    ledger_dir: str | os.PathLike[str], run_id: str, kind: RequestKind, body: dict[str, Any]
) -> Path:
    """Write a request whole or not at all; its path.

    Raises:
        ValueError: ``run_id`` is not a valid id.
        OSError: the control directory cannot be made or written.
    """
    if not is_valid_run_id(run_id):
        raise ValueError(f"invalid run id: {run_id!r}")
    directory = control_dir(ledger_dir)
    make_private_dir(directory)
    target = directory / f"{run_id}.{kind.value}"
    partial = directory / f".{target.name}.{os.getpid()}"
    fd = os.open(
        partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
    )
    try:
        data = msgspec.json.encode(body)
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    os.close(fd)
    os.replace(partial, target)  # the watcher never reads half a request
    return target


def request_cancel(
    ledger_dir: str | os.PathLike[str],
    run_id: str,
    *,
    reason: str | None = None,
    source: str = "control-file",
    requested_by: str | None = None,
    requested_at: str | None = None,
) -> Path:
    """Ask the writer of ``run_id`` to cancel it (what ``runtop cancel DIR RUN`` does);
    ``requested_by``: who asks (a user's name), recorded with the cancel."""
    body = {
        "reason": reason,
        "source": source,
        "requested_by": requested_by,
        "requested_at": requested_at or _now(),
    }
    return write_request(ledger_dir, run_id, RequestKind.CANCEL, body)


def request_resume(
    ledger_dir: str | os.PathLike[str],
    run_id: str,
    *,
    source: str = "control-file",
    requested_at: str | None = None,
) -> Path:
    """Ask a manager writing into ``ledger_dir`` that knows the run's agent to re-issue it."""
    body = {"source": source, "requested_at": requested_at or _now()}
    return write_request(ledger_dir, run_id, RequestKind.RESUME, body)


def request_approve(
    ledger_dir: str | os.PathLike[str],
    run_id: str,
    *,
    approved: bool,
    approval_id: str | None = None,
    reason: str | None = None,
    source: str = "control-file",
    answered_by: str | None = None,
    requested_at: str | None = None,
) -> Path:
    """Ask the writer of the live run ``run_id`` to approve or deny the approval it waits on
    (what ``runtop approve`` and ``runtop deny`` do with a directory); ``answered_by``: who
    decided, recorded in the run's ``approval_response``."""
    body = {
        "approved": approved,
        "approval_id": approval_id,
        "reason": reason,
        "source": source,
        "answered_by": answered_by,
        "requested_at": requested_at or _now(),
    }
    return write_request(ledger_dir, run_id, RequestKind.APPROVE, body)


# -- reading, claiming and answering (the writer) --------------------------------------------


def check_regular(path: Path) -> None:
    """Refuse anything but a regular file, without opening it (no FIFO, device or symlink).

    Raises:
        ControlFileError: it is something else, or it cannot be looked at.
    """
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise ControlFileError(f"cannot look at it: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ControlFileError(f"not a regular file ({file_kind(mode)}); it was not opened")


def read_request(path: Path) -> dict[str, Any]:
    """A request's body: a JSON object, or ``{}`` for an empty file.

    Opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` after
    opening, so a symlink, a FIFO, a directory or a device swapped in after
    a first look is refused, and nothing blocks.

    Raises:
        ControlFileError: not a regular file, too big, unreadable, or not a JSON object.
    """
    check_regular(path)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ControlFileError("a symlink; it was not followed") from None
        raise ControlFileError(f"cannot open it: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ControlFileError(f"not a regular file ({file_kind(info.st_mode)})")
        if info.st_size > MAX_REQUEST_BYTES:
            raise ControlFileError(
                f"{info.st_size} bytes, over the {MAX_REQUEST_BYTES} a request may hold"
            )
        data = os.read(fd, MAX_REQUEST_BYTES + 1)
    except OSError as error:
        raise ControlFileError(f"cannot read it: {error.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_REQUEST_BYTES:
        raise ControlFileError(f"over the {MAX_REQUEST_BYTES} bytes a request may hold")
    if not data.strip():
        return {}
    try:
        body = msgspec.json.decode(data)
    except msgspec.DecodeError as error:
        raise ControlFileError(f"not JSON: {error}") from None
    if not isinstance(body, dict):
        raise ControlFileError("not a JSON object")
    return body


def text_field(body: dict[str, Any], key: str) -> str | None:
    """A string field of a request, ``None`` when absent or not a string."""
    value = body.get(key)
    return value if isinstance(value, str) else None


def claim(path: Path) -> Path | None:
    """Take a request for this process: rename it ``<name>.<pid>``; ``None`` if it is gone.

    Raises:
        OSError: it could not be renamed for another reason.
    """
    claimed = path.with_name(f"{path.name}.{os.getpid()}")
    try:
        os.rename(path, claimed)
    except FileNotFoundError:
        return None  # another manager took it first
    return claimed


def complete(path: Path) -> None:
    """A request was acted on: remove it."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def failed_name(path: Path) -> str:
    """``<run_id>.<kind>.failed`` for a request or its claimed form."""
    name = path.name
    stem, dot, suffix = name.rpartition(".")
    if dot and suffix.isdigit() and parse_name(stem) is not None:
        name = stem  # claimed: <run_id>.resume.<pid>
    return name + FAILED_SUFFIX


def fail(path: Path, reason: str) -> Path | None:
    """Answer a request that cannot be carried out, once: set it aside with the reason.

    A regular file becomes ``<name>.failed`` holding ``{"error": reason,
    "request": <its body, if it was one>}``; anything else (a directory, a
    FIFO, a symlink) is renamed to that name untouched, since there is no
    reason to write into it. Either way it no longer looks like a request,
    and one warning is logged. Returns where it went, or ``None`` if it
    could not be moved (also logged).
    """
    target = path.with_name(failed_name(path))
    log.warning("control file %s not carried out: %s", path, reason)
    try:
        regular = stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError as error:
        log.warning("control file %s could not be set aside: %s", path, error.strerror)
        return None
    try:
        if regular:
            try:
                request: Any = read_request(path)
            except ControlFileError:
                request = None
            answer = msgspec.json.encode({"error": reason, "request": request})
            partial = path.with_name(f".{target.name}.{os.getpid()}")
            fd = os.open(
                partial,
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            try:
                os.write(fd, answer)
            finally:
                os.close(fd)
            os.replace(partial, target)
            os.unlink(path)
        else:
            _rename_aside(path, target)
    except OSError as error:
        log.warning("control file %s could not be set aside: %s", path, error.strerror)
        return None
    return target


def _rename_aside(path: Path, target: Path) -> None:
    """Rename a non-request out of the way without replacing anything already there."""
    if os.path.lexists(target):
        for number in range(1, 1000):
            candidate = target.with_name(f"{target.name}.{number}")
            if not os.path.lexists(candidate):
                target = candidate
                break
    os.rename(path, target)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


__all__ = [
    "CONTROL_DIR",
    "MAX_REQUEST_BYTES",
    "ApproveRequest",
    "CancelRequest",
    "ControlFileError",
    "ControlRequest",
    "RequestKind",
    "ResumeRequest",
    "check_regular",
    "claim",
    "complete",
    "control_dir",
    "fail",
    "parse_name",
    "read_request",
    "request_approve",
    "request_cancel",
    "request_resume",
    "text_field",
    "write_request",
]
