"""The one glyph of each run status, wherever a status is shown with its mark.

The runs table and a run's header (:mod:`tui.text.runs`, in theme colours) and
``runtop ls`` (:mod:`tui.commands.runs_table`, in terminal colours) take the
glyphs from here and keep only their colours. Plain strings: importing this
loads neither Textual nor Rich.
"""

from __future__ import annotations

from typing import Final

from inspector.ledger import RunStatus

STATUS_GLYPHS: Final = {
    RunStatus.RUNNING: "●",
    RunStatus.AWAITING_APPROVAL: "◐",
    RunStatus.SUCCEEDED: "✔",
    RunStatus.FAILED: "✘",
    RunStatus.CANCELED: "⊘",
    RunStatus.SUSPENDED: "‖",
    RunStatus.ABANDONED: "✝",
    RunStatus.STALE: "?",
    RunStatus.IDLE: "○",
    RunStatus.UNKNOWN: "?",
}
"""The glyph of each status; the word is the status's own (``succeeded``, ``stale``)."""
