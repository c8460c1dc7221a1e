"""Which runs hold a filter's ``has:`` phrases: their files searched, bytes first.

A run is read from files (:func:`files_of`); the phrases are looked for in
them with :class:`ledger_reader.text_search.FileSearch`, which decodes only the
lines that may hold them. What was searched is remembered per file: a file of
JSON lines only grows, so a run found stays found, and a live run not found
yet is searched again only from where the last search ended. Any other file
(a Gemini CLI session, one JSON document rewritten whole as it changes) is
searched again from its start whenever it changed.
"""

from __future__ import annotations

import os
import threading

from ledger_reader import LedgerError, RunSummary
from ledger_reader.text_search import Phrase, file_holds


def files_of(summary: RunSummary) -> tuple[str, ...]:
    """The files a run is read from: its ledger, or the session file of a coding agent.

    A run that comes from no file (an attach server's, an in-process manager's
    without a ledger directory) has none, and no ``has:`` finds it.
    """
    return (summary.path,) if summary.path else ()


class ContentSearch:
    """Whether runs pass a filter's ``has:`` phrases, each negated or not.

    Args:
        phrases: the phrases, each with whether it is negated (``-has:``).
    """

    def __init__(self, phrases: tuple[tuple[Phrase, bool], ...]) -> None:
        self.phrases = phrases
        self._searched: dict[str, tuple[tuple[int, ...], list[tuple[bool, int]]]] = {}
        """Per file: its identity, and per phrase whether it was found and how far the file
        was searched."""

    def passes(self, summary: RunSummary, *, stop: threading.Event | None = None) -> bool:
        """Whether the run's files hold every phrase (and none negated); searches what
        it has not searched yet. A run with no files cannot be searched and never passes
        (not even ``-has:``); one whose files cannot be read holds none.
        """
        files = files_of(summary)
        if not files:
            return False
        found = [False] * len(self.phrases)
        for path in files:
            for index, held in enumerate(self._search(path, stop)):
                found[index] = found[index] or held
        return all(held != negated for held, (_, negated) in zip(found, self.phrases, strict=True))

    def _search(self, path: str, stop: threading.Event | None) -> list[bool]:
        try:
            stat = os.stat(path)
        except OSError:
            return [False] * len(self.phrases)
        appended = path.endswith(".jsonl")
        size = stat.st_size
        identity = (
            stat.st_dev,
            stat.st_ino,
            0 if appended else stat.st_mtime_ns,
            0 if appended else size,
        )
        known, searched = self._searched.get(path, (identity, []))
        if known != identity or not searched or any(size < offset for _, offset in searched):
            searched = [(False, 0)] * len(self.phrases)  # new, replaced, truncated, rewritten
        for index, ((phrase, _), (held, offset)) in enumerate(
            zip(self.phrases, searched, strict=True)
        ):
            if held or offset >= size:
                continue
            try:
                searched[index] = file_holds(
                    path, phrase, start=offset, stop=stop, last_line=not appended
                )
            except (LedgerError, OSError):  # gone, or unreadable: it holds nothing now
                return [False] * len(self.phrases)
        self._searched[path] = (identity, searched)
        return [held for held, _ in searched]
