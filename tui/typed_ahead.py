"""Keys typed in one burst (a paste, tmux's send-keys, fast typing): each goes where it
would have gone typed slowly.

The terminal hands the app a burst's keys at once; the app takes each in turn and hands
it on to the focused widget, ahead of what the keys before it did there (a box focused,
a confirmation pushed). What is needed so that those keys still land where they were
meant:

- :class:`TypeAhead`: a run key (``c``, ``r``, ``a``, ``d``: the screen's bindings,
  done in turn as the key comes round), or Tab, holds the keys typed after it (a
  reason, Enter) until it has come round, so they follow it to the confirmation it
  opened or the box it moved to, or are set aside when it is refused.
- :func:`type_into`: a character that reached a screen ahead of its input box's focus
  (a confirmation's reason, a search) typed into the box as the box would have.
- a key that opens a screen as the app takes it (a priority binding: ``v``, ``V``,
  ``ctrl+p``) holds the keys after it until that screen has focused its box, then they
  go to the box: Tab, ctrl+u and Enter as well as letters (handed to the screen before,
  a letter was typed into its box, but Tab and the editing keys were lost).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

from textual.app import App
from textual.dom import DOMNode
from textual.events import Key
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input

from inspector.actions import Action
from tui.run_keys import KEYED

FOCUS_KEYS: Final = frozenset({"tab", "shift+tab"})
"""Keys that move the focus (the app's bindings, done as the key comes round): the keys
typed after one are held until it has, so they reach the box it moved to."""

HELD_AT_MOST: Final = 10.0
"""Seconds keys are held behind a run key at most, should it be lost on its way without
going round (it goes round in milliseconds; a loaded machine takes longer than a second)."""


def type_into(box: Input, character: str) -> None:
    """``character`` typed into ``box``: over its selection if it has one, as a key
    pressed in the box replaces the text selected."""
    selection = box.selection
    if selection.is_empty:
        box.insert_text_at_cursor(character)
    else:
        box.replace(character, *selection)


class TypeAhead:
    """Holds a burst behind a run key on its way round.

    Args:
        app: the app taking the keys.
        refusal: why an action cannot be done to the run the keys act on now, or ``None``.
    """

    def __init__(self, app: App[Any], refusal: Callable[[Action], str | None]) -> None:
        self.app = app
        self.refusal = refusal
        self.held: list[Key] | None = None
        """Keys from the terminal held behind a run key on its way."""
        self.holding_for: Key | None = None
        """The run key held for."""
        self.following: object | None = None
        """The hold, as :meth:`_hop` follows its run key round."""
        self.hold_timer: Timer | None = None
        self.replaying: Key | None = None
        """A key held, handed on again: the rest follow it once it has gone round."""

    async def take(self, event: Key, take: Callable[[Key], Awaitable[None]]) -> None:
        """A key from the terminal: held behind a run key on its way, else taken; a run key
        handed on holds the keys after it."""
        if event is self.replaying:
            self.replaying = None
            await take(event)
            if self.held is not None:  # the keys after it go once it has gone round
                self._follow(event)
            return
        if self.held is not None:
            self.held.append(event)
            return
        before = self.app.screen if self.app.screen_stack else None
        await take(event)
        if not self.app.screen_stack:
            return
        opened = self.app.screen
        if opened is not before and isinstance(opened, ModalScreen) and opened.focused is None:
            self._hold_until_focused(opened)
        elif event.is_forwarded and self._holds_behind(event):
            self._hold_behind(event)

    def _hold_until_focused(self, screen: ModalScreen[Any]) -> None:
        """Hold the keys taken after the one that opened ``screen`` until it has focused
        what it focuses first (its box): queued behind its mounting in its own queue, then
        behind the focus it asked the app for in the app's."""
        self.held = []
        self.following = hold = object()
        self.hold_timer = self.app.set_timer(HELD_AT_MOST, partial(self._release, replay=True))

        def mounted() -> None:
            if hold is self.following:
                self.app.call_later(focused)

        def focused() -> None:
            if hold is self.following:
                self._release(replay=True)

        if not screen.call_later(mounted):
            self._release(replay=True)

    async def reached_app(self, event: Key) -> None:
        """A key has come round to the app (its ``on_key``, before its bindings): a refused
        run key says why; the keys held behind it then follow it to what its binding opens,
        or, refused, are set aside."""
        if event is not self.holding_for:
            self._refused(event)
            return
        refused: str | None = None
        try:
            refused = self._refused(event)
        finally:
            held = self._release(replay=refused is None)
        if refused is not None and held:
            self.app.notify(
                f"{refused}; the {len(held)} keys typed after it were not used",
                severity="warning",
                markup=False,
            )
        elif refused is not None:
            self.app.notify(refused, severity="warning", markup=False)

    def _refused(self, event: Key) -> str | None:
        """A run key come round: why it is refused (said at once unless held for), else
        ``None``, its binding then doing it."""
        action = KEYED.get(event.key)
        if action is None or isinstance(self.app.screen, ModalScreen):
            return None
        focused = self.app.focused
        if focused is not None and focused.check_consume_key(event.key, event.character):
            return None  # a box took the focus meanwhile: the key is its letter
        reason = self.refusal(action.asks)
        if reason is None:
            return None
        said = f"cannot {action.name}: {reason}"  # d: "cannot deny", though it asks approve
        if event is not self.holding_for:
            self.app.notify(said, severity="warning", markup=False)
        return said

    def _holds_behind(self, key: Key) -> bool:
        """Whether ``key``, handed on, is a key whose burst to hold: Tab (the focus
        moves), or a run key not over a confirmation (the keys are its), not a letter a
        focused box types."""
        if key.key in FOCUS_KEYS:
            return True
        if key.key not in KEYED or isinstance(self.app.screen, ModalScreen):
            return False
        focused = self.app.focused
        return focused is None or not focused.check_consume_key(key.key, key.character)

    def _hold_behind(self, key: Key) -> None:
        """Hold the keys taken after ``key``, a run key handed on, until it comes round.

        A key that never comes round to the app (a widget took it: the run screen's search
        typed ahead) lets them go on once it has gone round (:meth:`_hop`), as they would
        have.
        """
        self.held = []
        self._follow(key)

    def _follow(self, key: Key) -> None:
        """Hold the keys after ``key`` until it has gone round (:meth:`_hop`)."""
        self.holding_for = key
        self.following = hold = object()
        if self.hold_timer is None:
            self.hold_timer = self.app.set_timer(HELD_AT_MOST, partial(self._release, replay=True))
        to: DOMNode = self.app.focused or self.app.screen
        self._hop(hold, list(to.ancestors_with_self))

    def _release(self, *, replay: bool) -> list[Key]:
        """Stop holding keys; ``replay`` them, in order, as keys from the terminal: one at a
        time, each once the one before has gone round, so that a Tab in them has moved the
        focus before the keys after it are handed on (at once, they all went to the box
        that had it)."""
        held = self.held or []
        self.holding_for = None
        self.following = None
        going = held if replay else []
        self.held = going[1:] or None
        if self.held is None and self.hold_timer is not None:
            self.hold_timer.stop()
            self.hold_timer = None
        if going:
            self.replaying = Key(going[0].key, going[0].character)
            self.app.post_message(self.replaying)
        return held

    def _hop(self, hold: object, way: list[DOMNode]) -> None:
        """Follow the held-for key round the way it goes, a callback queued behind it in
        each node, hop by hop: it comes after the key there, and after what it did there.
        Past the app, the key has gone round without coming round (or went away with its
        widget): the keys held go on."""
        if hold is not self.following:
            return  # released as it came round
        if not way:
            self._release(replay=True)
            return
        at, *rest = way
        if not at.call_later(self._hop, hold, rest):
            self._release(replay=True)  # its widget is going away, the key too
