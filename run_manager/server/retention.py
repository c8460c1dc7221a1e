"""Keeping a ledger directory bounded: the oldest finished ledgers removed past a count,
an age or a size.

A server that takes every trace a collector forwards writes a ledger per trace, without
end. ``runtop serve`` applies a :class:`Retention` to its ledger directory when it starts
and every :data:`EVERY` seconds: past ``max_ledgers`` ledgers or ``max_bytes`` in all, the
oldest (by their last write) are removed until the directory is back within both; a
ledger last written over ``max_age`` seconds ago is removed as well. A ledger is never
removed while a writer holds its lock or within :data:`QUIET` seconds of its last write,
so no live run loses its ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ledger_reader import quantities
from ledger_reader.liveness import ledger_lock_held

log = logging.getLogger(__name__)

EVERY: Final = 60.0
"""Seconds between two prunings of a served directory."""
QUIET: Final = 600.0
"""Seconds a ledger must have gone unwritten before it may be removed."""
DEFAULT_LEDGERS: Final = 50_000
DEFAULT_BYTES: Final = 20 * 1024**3


class BadRetention(ValueError):
    """A retention rule that cannot be read, said for the user."""


@dataclass(frozen=True, slots=True)
class Retention:
    """How much of a ledger directory is kept. ``None`` leaves that bound off."""

    max_ledgers: int | None = DEFAULT_LEDGERS
    max_bytes: int | None = DEFAULT_BYTES
    max_age: float | None = None

    @classmethod
    def parse(cls, text: str) -> Retention:
        """``count=10k,size=5G,age=30d`` (any of them; ``off`` for none; ``all`` alone: keep
        everything)."""
        if text.strip().lower() in ("all", "none", "off"):
            return cls(None, None, None)
        bounds: dict[str, str] = {}
        for part in text.split(","):
            name, equals, value = part.strip().partition("=")
            if not equals or name not in ("count", "size", "age") or not value:
                raise BadRetention(
                    f"{part.strip()!r}: expected count=N, size=N[KMGT] or age=N[smhd] "
                    "(or 'all' to keep everything)"
                )
            bounds[name] = value.strip().lower()
        try:
            count = quantities.count(bounds["count"]) if "count" in bounds else None
            size = quantities.size(bounds["size"]) if "size" in bounds else None
            age = quantities.seconds(bounds["age"], bare=False) if "age" in bounds else None
        except quantities.BadQuantity as error:
            raise BadRetention(str(error)) from None
        return cls(None if count == 0 else count, None if size == 0 else size, age or None)

    def describe(self) -> str:
        said = []
        if self.max_ledgers is not None:
            said.append(f"{self.max_ledgers:,} ledgers")
        if self.max_bytes is not None:
            said.append(f"{self.max_bytes / 1024**3:g} GiB")
        if self.max_age is not None:
            said.append(f"{self.max_age / 86400:g} days")
        return "the newest " + ", ".join(said) if said else "every ledger"


def prune(ledger_dir: Path, retention: Retention, *, now: float | None = None) -> list[Path]:
    """Remove the ledgers ``retention`` does not keep; the ones removed."""
    now = time.time() if now is None else now
    found: list[tuple[float, int, Path]] = []
    with contextlib.suppress(FileNotFoundError), os.scandir(ledger_dir) as entries:
        for entry in entries:
            if not entry.name.endswith(".jsonl") or not entry.is_file(follow_symlinks=False):
                continue
            with contextlib.suppress(FileNotFoundError):
                status = entry.stat(follow_symlinks=False)
                found.append((status.st_mtime, status.st_size, Path(entry.path)))
    found.sort()  # oldest first
    count = len(found)
    total = sum(size for _, size, _ in found)
    removed: list[Path] = []
    for written, size, path in found:
        too_many = retention.max_ledgers is not None and count > retention.max_ledgers
        too_big = retention.max_bytes is not None and total > retention.max_bytes
        too_old = retention.max_age is not None and now - written > retention.max_age
        if not (too_many or too_big or too_old):
            if retention.max_age is None:
                break  # the rest are newer and the bounds hold
            continue
        if now - written < QUIET or ledger_lock_held(path) is True:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        removed.append(path)
        count -= 1
        total -= size
    return removed


async def keep_bounded(ledger_dir: Path, retention: Retention, every: float = EVERY) -> None:
    """Prune ``ledger_dir`` now and every ``every`` seconds, in a worker thread, until
    cancelled; each pruning that removes something says so once in the log."""
    if retention == Retention(None, None, None):
        return
    while True:
        try:
            removed = await asyncio.to_thread(prune, ledger_dir, retention)
        except OSError as error:
            log.warning("retention: %s could not be pruned: %s", ledger_dir, error)
        else:
            if removed:
                log.warning(
                    "retention: removed %d ledger(s) of %s to keep %s",
                    len(removed),
                    ledger_dir,
                    retention.describe(),
                )
        await asyncio.sleep(every)


__all__ = ["BadRetention", "Retention", "keep_bounded", "prune"]
