"""One coding agent's session file, read as it grows: its events so far and its summary.

Which agent wrote a file is told by where it is and what it is named
(:func:`agent_of`). A JSONL session (Claude Code, Codex, newer Gemini CLI) is
read forward from where the last read stopped, through the same line
splitting as ledgers (:class:`~ledger_reader.lines.LineAssembler`): a torn
last line waits until it is whole. A Gemini CLI document is read whole each
time it changes; one caught mid-rewrite is read again at the next change.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from ledger_reader.errors import LedgerError, LedgerGone, LedgerUnreadable
from ledger_reader.events import LedgerItem, RunEvent, event_of
from ledger_reader.head_tail import FileKey, file_key
from ledger_reader.lines import LineAssembler, open_ledger_fd
from ledger_reader.sessions.claude_code import ClaudeCodeFold
from ledger_reader.sessions.codex import CodexFold
from ledger_reader.sessions.fold import SessionFold
from ledger_reader.sessions.gemini import GeminiFold
from ledger_reader.sessions.status import judge_session
from ledger_reader.summary import RunSummary, SummaryBuilder

if TYPE_CHECKING:
    from ledger_reader.summary_cache import SummaryCache

CLAUDE_CODE: Final = "claude-code"
CODEX: Final = "codex"
GEMINI_CLI: Final = "gemini-cli"
AGENTS: Final = (CLAUDE_CODE, CODEX, GEMINI_CLI)
READ_CHUNK: Final = 1024 * 1024
QUICK_BYTES: Final = 32 * 1024
"""Bytes read at each end of a large session for a quick summary."""

_decode: Final = msgspec.json.Decoder()
_FOLDS: Final[dict[str, type[SessionFold]]] = {
    CLAUDE_CODE: ClaudeCodeFold,
    CODEX: CodexFold,
    GEMINI_CLI: GeminiFold,
}


def agent_of(path: str | os.PathLike[str]) -> str | None:
    """The coding agent whose session ``path`` is, by its place and name; ``None`` if none.

    Claude Code: ``*.jsonl`` under a ``.claude`` folder, or named by a session's
    UUID or ``agent-*`` elsewhere unless its first line is a ledger event's (another
    writer's ledger named by a UUID stays a ledger, in ``show`` and a replay as in ``ls``);
    Codex: ``rollout-*.jsonl``; Gemini CLI: ``session-*.json`` or ``.jsonl`` under a
    ``.gemini`` folder or a ``chats`` one.
    """
    text = os.fspath(path)
    name = os.path.basename(text)
    parts = text.replace("\\", "/").split("/")
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return CODEX
    gemini = ".gemini" in parts or "chats" in parts
    if name.startswith("session-") and name.endswith((".json", ".jsonl")) and gemini:
        return GEMINI_CLI
    if not name.endswith(".jsonl"):
        return None
    if ".claude" in parts:
        return CLAUDE_CODE
    if name.startswith("agent-") or _uuid_named(name[: -len(".jsonl")]):
        # Named as Claude Code names its sessions, but outside its folder: another
        # writer's ledger may be named by a UUID too, and its first line says which.
        return None if _starts_as_a_ledger(text) else CLAUDE_CODE
    return None


_LEDGER_HEAD: Final = re.compile(
    rb'^\s*\{[^\n]*"run_id"\s*:[^\n]*"seq"\s*:|^\s*\{[^\n]*"seq"\s*:[^\n]*"run_id"\s*:'
)
"""A ledger's first line: an object with ``run_id`` and ``seq`` (no session record has both)."""
HEAD_BYTES: Final = 4096


def _starts_as_a_ledger(path: str) -> bool:
    """Whether the file's first line is a ledger event's (``run_id`` and ``seq`` in its
    first :data:`HEAD_BYTES`); ``False`` when it cannot be read (it stays a session)."""
    try:
        fd, _ = open_ledger_fd(path)
    except LedgerError:
        return False
    try:
        head = os.read(fd, HEAD_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    return _LEDGER_HEAD.match(head) is not None


def _uuid_named(stem: str) -> bool:
    pieces = stem.split("-")
    return [len(piece) for piece in pieces] == [8, 4, 4, 4, 12] and all(
        all(c in "0123456789abcdef" for c in piece) for piece in pieces
    )


def agent_of_folder(path: str | os.PathLike[str]) -> str | None:
    """The agent whose sessions a folder holds (``~/.claude/projects``, ``~/.codex/sessions``,
    ``~/.gemini/tmp``, or a folder inside them), by its place; ``None`` if none."""
    parts = Path(os.path.abspath(path)).parts
    for folder, agent in ((".claude", CLAUDE_CODE), (".codex", CODEX), (".gemini", GEMINI_CLI)):
        if folder in parts:
            return agent
    return None


def find_sessions(root: str | os.PathLike[str]) -> list[str]:
    """Every session file under ``root``, sub-agents' included, in no particular order."""
    found: list[str] = []
    stack = [os.fspath(root)]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file() and agent_of(entry.path) is not None:
                    found.append(entry.path)
            except OSError:
                continue
    return found


class SessionFile:
    """A session file followed as it grows (or, for Gemini CLI, as it is rewritten).

    Args:
        path: the session file.
        agent: who wrote it (default: told by :func:`agent_of`).
        keep: keep every item read (to serve them by position); a listing keeps none.
    """

    def __init__(
        self, path: str, agent: str | None = None, *, keep: bool = True, priced: bool = True
    ) -> None:
        self.path = path
        self.agent = agent or agent_of(path) or CLAUDE_CODE
        self.keep = keep
        self.priced = priced
        self.items: list[LedgerItem] = []
        self.mtime = 0.0
        self.size = 0
        self.key: FileKey | None = None
        """The file's identity and change stamps at the last read (the summary cache's key)."""
        self._reset()

    def _reset(self) -> None:
        self.fold = _FOLDS[self.agent](path=self.path)
        self.fold.priced = self.priced
        self.builder = SummaryBuilder("", self.path)
        self.items = []
        self._lines = LineAssembler(0, decode=False)
        self._stamp: tuple[int, int, int] | None = None

    @property
    def run_id(self) -> str:
        return self.fold.run_id

    def poll(self, *, final: bool = False) -> tuple[list[LedgerItem], bool]:
        """Read what was written since the last poll: the new items, and whether what was
        read before is void (the file was replaced, truncated or rewritten otherwise).

        ``final`` folds a response still held open (the file is quiet, or read once).

        Raises:
            LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
        """
        fd, stat = open_ledger_fd(self.path)
        try:
            stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            self.mtime, self.size = stat.st_mtime, stat.st_size
            self.key = file_key(stat)
            reset = False
            if self.agent == GEMINI_CLI and not self.path.endswith(".jsonl"):
                if stamp != self._stamp:
                    reset = self._read_document(fd, stat.st_size)
            else:
                if self._stamp is not None and (
                    stamp[0] != self._stamp[0] or stat.st_size < self._lines.read_to
                ):
                    self._reset()
                    reset = True
                self._read_lines(fd, stat.st_size)
            self._stamp = stamp
        except OSError as error:
            raise LedgerUnreadable(self.path, error) from error
        finally:
            os.close(fd)
        self.fold.rest(final=final)
        return self._take(), reset

    def rest(self) -> list[LedgerItem]:
        """Fold what is held open, the file having gone quiet."""
        self.fold.rest(final=True)
        return self._take()

    def _take(self) -> list[LedgerItem]:
        items = self.fold.take()
        for item in items:
            self.builder.add_item(item)
        if self.keep:
            self.items.extend(items)
        return items

    def _read_lines(self, fd: int, size: int) -> None:
        lines = self._lines
        fold = self.fold
        position = lines.read_to
        while position < size:
            data = os.pread(fd, min(READ_CHUNK, size - position), position)
            if not data:
                break
            position += len(data)
            for line in lines.feed(data):
                if line.item is not None:  # over the line limit: damage
                    fold.items.append(line.item)
                    continue
                raw = line.raw
                if not raw.strip():
                    continue
                try:
                    record = _decode.decode(raw)
                except (msgspec.DecodeError, ValueError, RecursionError):
                    fold.damaged(line.start, len(raw), "not valid JSON")
                    continue
                fold.feed(record, line.start, len(raw))

    def _read_tail(self, data: bytes) -> None:
        """Fold the whole lines of a window at the end of the file (a quick summary's)."""
        fold = self.fold
        for line in self._lines.feed(data):
            if line.item is not None or not line.raw.strip():
                continue
            try:
                record = _decode.decode(line.raw)
            except (msgspec.DecodeError, ValueError, RecursionError):
                continue
            fold.feed(record, line.start, len(line.raw))

    def _read_document(self, fd: int, size: int) -> bool:
        """Read a Gemini CLI document whole; whether what was read before is void."""
        data = os.pread(fd, size, 0)
        try:
            document = _decode.decode(data)
        except (msgspec.DecodeError, ValueError, RecursionError):
            return False  # caught mid-rewrite: read it again at the next change
        if not isinstance(document, dict):
            return False
        messages = document.get("messages")
        messages = messages if isinstance(messages, list) else []
        fold = self.fold
        assert isinstance(fold, GeminiFold)
        reset = False
        if not fold.follows_on(messages):
            self._reset()
            fold = self.fold
            assert isinstance(fold, GeminiFold)
            reset = True
        fold.header(document)
        for message in messages[len(fold.folded) :]:
            fold.message(message)
        return reset

    def summary(self, now: float | None = None, *, judged: bool = True) -> RunSummary:
        """The run's summary now: what its events say, its liveness from its last write
        (unless not ``judged``: what the bytes say, for the summary cache)."""
        summary = self.builder.summary()
        summary.path = self.path
        if not summary.run_id:
            summary.run_id = self.fold.run_id
        return judge_session(summary, mtime=self.mtime, now=now) if judged else summary


def read_session(path: str) -> SessionFile:
    """A session file read whole, once (a listing, ``show``, a detail pass).

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    session = SessionFile(path)
    session.poll(final=True)
    return session


def is_session_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a coding agent's session file or a folder of its sessions."""
    if os.path.isdir(path):
        return agent_of_folder(path) is not None
    return agent_of(path) is not None


def session_summaries(
    paths: list[str], now: float | None = None, *, cache: SummaryCache | None = None
) -> tuple[list[RunSummary], list[LedgerError]]:
    """Every session under ``paths`` (session files or folders), read whole, and what could
    not be read.

    With a ``cache`` (a listing's, :mod:`ledger_reader.summary_cache`), a session whose
    file has not changed since it was last listed is not read again: what its bytes said
    is kept there as a ledger's is, and how live it is judged now.
    """
    summaries: list[RunSummary] = []
    errors: list[LedgerError] = []
    now = time.time() if now is None else now
    for path in paths:
        if not os.path.exists(path):
            errors.append(LedgerGone(path))
            continue
        files = find_sessions(path) if os.path.isdir(path) else [path]
        for file in files:
            if cache is not None:
                cached = cache.summary(file, now=now, judge=judge_session)
                if cached is not None:
                    summaries.append(cached)
                    continue
            try:
                session = read_session(file)
            except LedgerError as error:
                errors.append(error)
                continue
            summary = session.summary(now, judged=False)
            if cache is not None and session.key is not None:
                cache.store_summary(file, session.key, summary)
            summaries.append(judge_session(summary, mtime=session.mtime, now=now))
    return summaries, errors


def find_session(run_id: str, roots: list[str]) -> str | None:
    """The session file of the run ``run_id`` under ``roots``, or ``None``."""
    return sessions_named(run_id, roots).get(run_id)


def sessions_named(part: str, roots: list[str]) -> dict[str, str]:
    """The session files under ``roots`` whose run id is ``part``, starts or ends with it,
    by run id: what a run id typed whole or in part may name.

    Files are named by their session's id (a sub-agent's by its agent's), so only files
    whose name holds ``part`` (or, for a sub-agent's whole id, its agent's) are opened, to
    read the id inside.
    """
    session, _, agent = part.partition(".agent-")
    hints = [f"agent-{agent}"] if agent else [session, session[:8]]
    found: dict[str, str] = {}
    for root in roots:
        if not os.path.exists(root):
            continue
        files = find_sessions(root) if os.path.isdir(root) else [root]
        for file in files:
            name = os.path.basename(file)
            if not any(hint and hint in name for hint in hints):
                continue
            try:
                run_id = quick_summary(file).run_id
            except LedgerError:
                continue
            if run_id == part or run_id.startswith(part) or run_id.endswith(part):
                found.setdefault(run_id, file)
    return found


def session_events(path: str) -> list[RunEvent]:
    """Every event of a session file, read whole (damage left out)."""
    return [event for event in map(event_of, read_session(path).items) if event is not None]


def quick_summary(path: str, now: float | None = None) -> RunSummary:
    """A session's summary from its head and tail only (a large home's first screen).

    Its id, project, branch, first prompt, model, last write and whether it waits
    on the person are known; its counts and tokens are not (``partial``), and no cost
    is estimated (a small file, read whole, has its counts and tokens).

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    session = SessionFile(path, keep=False, priced=False)
    fd, stat = open_ledger_fd(path)
    try:
        size = stat.st_size
        session.mtime, session.size = stat.st_mtime, size
        if size <= 2 * QUICK_BYTES or session.agent == GEMINI_CLI:
            os.close(fd)
            fd = -1
            session.poll(final=True)
            return session.summary(now)
        session._read_lines(fd, QUICK_BYTES)
        session.fold.rest(final=True)
        session._take()
        session.builder.skip_gap()
        tail = os.pread(fd, QUICK_BYTES, size - QUICK_BYTES)
        start = tail.find(b"\n") + 1
        session._lines = LineAssembler(size - QUICK_BYTES + start, decode=False)
        session._read_tail(tail[start:])
        session.fold.rest(final=True)
        session._take()
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    finally:
        if fd >= 0:
            os.close(fd)
    summary = session.summary(now)
    summary.event_count = None
    return summary


__all__ = [
    "AGENTS",
    "CLAUDE_CODE",
    "CODEX",
    "GEMINI_CLI",
    "SessionFile",
    "agent_of",
    "agent_of_folder",
    "find_session",
    "find_sessions",
    "is_session_place",
    "quick_summary",
    "read_session",
    "session_events",
    "session_summaries",
    "sessions_named",
]
