"""Notices (Textual's toasts) said once, about the screen they were raised on.

A notice said again while it shows replaces it (its time starts again) instead of
stacking a copy (``c`` pressed three times on an ended run); a screen shows a few at
most (a run one, the newest), the oldest giving way; and a notice goes with its screen
(back from a run, the run's notices do not sit over the runs table).
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.notifications import Notification
from textual.screen import ModalScreen, Screen

from tui.runtop_screen import RuntopScreen
from tui.textual_compat import notices_shown, withdraw_notice


class Notices:
    """Which screen each notice on show was raised on, and the rules above."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.raised_on: dict[str, Screen[Any]] = {}
        """The screen each notice on show was raised on (by the notice's identity)."""

    def noticed(self, notice: Notification) -> None:
        """``notice`` is about to show over the screen on top (before Textual's own handler
        adds it, on the main thread)."""
        screen = self.app.screen
        most = (screen if isinstance(screen, RuntopScreen) else RuntopScreen).MOST_NOTICES
        for shown in notices_shown(self.app):
            if self.raised_on.get(shown.identity) is screen and _same(shown, notice):
                self.withdraw(shown)
        here = [
            shown
            for shown in notices_shown(self.app)
            if self.raised_on.get(shown.identity) is screen
        ]
        for oldest in here[: max(0, len(here) + 1 - most)]:
            self.withdraw(oldest)  # the newest in view, none over the header or keys
        showing = {shown.identity for shown in notices_shown(self.app)}
        self.raised_on = {
            identity: on for identity, on in self.raised_on.items() if identity in showing
        }
        self.raised_on[notice.identity] = screen

    def screen_changed(self, screen: Screen[Any]) -> None:
        """``screen`` is on top now: the notices raised on another go. A confirmation,
        shown over its screen, keeps that screen's notices in view."""
        if isinstance(screen, ModalScreen):
            return
        for shown in notices_shown(self.app):
            if self.raised_on.get(shown.identity) is not screen:
                self.withdraw(shown)

    def withdraw(self, notice: Notification) -> None:
        """Take ``notice`` off the screen."""
        self.raised_on.pop(notice.identity, None)
        withdraw_notice(self.app, notice)


def _same(shown: Notification, notice: Notification) -> bool:
    """Whether two notices say the same thing, the same way."""
    return (shown.message, shown.title, shown.severity, shown.markup) == (
        notice.message,
        notice.title,
        notice.severity,
        notice.markup,
    )
