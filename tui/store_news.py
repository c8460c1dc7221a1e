"""The store's changes, delivered to the screen on top as a Textual message.

The app reads :meth:`RunStore.changes` and hands each batch to
:class:`StoreNews`, which keeps at most one :class:`StoreChanged` in flight:
changes that come while the screen is still busy with the last message are
merged into the next one, so a slow screen gets fewer, larger messages, never
a queue. Screens handle it with an ordinary ``on_store_changed`` handler.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakSet

from textual.app import App, ScreenStackError
from textual.message import Message
from textual.screen import Screen

from inspector import StoreChange


class StoreChanged(Message, bubble=False):
    """What changed in the store since the screen's last ``StoreChanged``."""

    def __init__(self, change: StoreChange) -> None:
        super().__init__()
        self.change = change


class StoreNews:
    """Posts the store's changes to ``app``'s screen on top, one message in flight."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.unread: StoreChange | None = None
        """Changes not yet posted (merged)."""
        self.in_flight: tuple[Screen[Any], StoreChanged] | None = None
        """The message posted and not handled yet, and the screen it went to."""
        self._heard: WeakSet[Screen[Any]] = WeakSet()
        """The screens whose handled messages are listened to."""

    def offer(self, change: StoreChange) -> None:
        """A batch of store changes: posted now, or merged into the next message."""
        self.unread = change if self.unread is None else self.unread.merge(change)
        self._post()

    def _post(self) -> None:
        try:
            screen = self.app.screen
        except ScreenStackError:
            return  # no screen yet or none any more: the app is starting or closing
        if not self.app.is_running:
            return  # closing: a screen can no longer be listened to (nor shown anything)
        if self.in_flight is not None:
            target, _ = self.in_flight
            if target is screen and target.is_attached:
                return  # the screen has not handled the last one yet: this one waits
            # That screen went away or is covered; a screen that comes back on top
            # redraws from the store (on_screen_resume), so what it missed is not lost.
            self.in_flight = None
        if self.unread is None:
            return
        if screen not in self._heard:
            self._heard.add(screen)
            screen.message_signal.subscribe(self.app, self._handled, immediate=True)
        message = StoreChanged(self.unread)
        self.unread = None
        self.in_flight = (screen, message)
        screen.post_message(message)

    def _handled(self, message: Message) -> None:
        if self.in_flight is not None and message is self.in_flight[1]:
            self.in_flight = None
            self._post()
