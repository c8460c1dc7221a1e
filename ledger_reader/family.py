"""A run's descendants among the ledgers beside its own, for what shows one run with its
child runs' totals (``runtop show``, ``show --timeline``).

Each sibling's first event is read to learn whose child it is (a child run's
``run_started`` names its parent), and only the descendants are summarised whole: a
directory of 10,000 ledgers costs 10,000 first lines, not 10,000 summaries.
"""

from __future__ import annotations

from pathlib import Path

from ledger_reader.errors import LedgerError
from ledger_reader.events import RunStarted
from ledger_reader.file import LedgerFile
from ledger_reader.head_tail import summarize_ledger
from ledger_reader.scan import LEDGER_SUFFIX
from ledger_reader.summary import RunSummary


def descendant_ledgers(path: Path, run_id: str) -> list[RunSummary]:
    """The summaries of the run ``run_id``'s child runs, theirs, and so on, among the
    ledgers in ``path``'s directory (``path`` itself left out), by start; ledgers that
    cannot be read are not this run's to report, and are skipped."""
    parents: dict[str, list[Path]] = {}
    for sibling in sorted(path.parent.glob(f"*{LEDGER_SUFFIX}")):
        if sibling == path:
            continue
        try:
            with LedgerFile(sibling) as ledger:
                first = ledger.first_event()
        except LedgerError:
            continue
        if isinstance(first, RunStarted) and first.payload.parent_run_id:
            parents.setdefault(first.payload.parent_run_id, []).append(sibling)
    found: list[RunSummary] = []
    seen = {run_id}
    waiting = [run_id]
    while waiting:
        for child in parents.get(waiting.pop(), []):
            try:
                summary = summarize_ledger(child)
            except LedgerError:
                continue
            child_id = summary.run_id or child.stem
            if child_id in seen:
                continue  # ids that loop: each run once
            seen.add(child_id)
            found.append(summary)
            waiting.append(child_id)
    found.sort(key=lambda summary: (summary.started, summary.run_id))
    return found


__all__ = ["descendant_ledgers"]
