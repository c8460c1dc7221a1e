"""Keys typed in one burst (a paste, tmux's send-keys, fast typing): each goes where it
would have gone typed slowly.

The terminal hands the app a burst's keys at once; the app takes each in turn, runs its
priority bindings, and hands it on to the focused widget, ahead of what the keys before
it did there (a box focused, a confirmation pushed). What is needed so that those keys
still land where they were meant:

- :class:`KeysOnTheirWay`: a run key (``c``, ``r``, ``a``, ``d``) taken while keys typed
  before it are still on their way waits its turn behind them; the keys typed after it
  (a reason, Enter) are held until it has come round, then follow it to the
  confirmation it opened, or are set aside when it is refused.
- :func:`type_into`: a character that reached a screen ahead of its input box's focus
  (a confirmation's reason, a search) typed into the box as the box would have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from time import monotonic
from typing import Any, Final

from textual.app import App
from textual.dom import DOMNode
from textual.events import Key
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input

from tui.run_keys import REFUSED_AS, RUN_KEYS

KEY_ON_ITS_WAY_AT_MOST: Final = 1.0
"""Seconds a key handed on is taken to be on its way, at most: one whose widget went away
with it (a screen popped) never says it has gone round."""

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


class KeysOnTheirWay:
    """Follows the keys the app hands on, and holds a burst behind a run key on its way.

    Args:
        app: the app taking the keys.
        refusal: why an action cannot be done to the run the keys act on now, or ``None``.
    """

    def __init__(self, app: App[Any], refusal: Callable[[str], str | None]) -> None:
        self.app = app
        self.refusal = refusal
        self.on_their_way: dict[object, tuple[DOMNode, float]] = {}
        """The keys handed on to a widget that have not yet gone round it, its screen and
        the app: where each is, and when it was handed on."""
        self.taking_a_key = False
        """A key from the terminal is being taken (its priority bindings run now)."""
        self.held: list[Key] | None = None
        """Keys from the terminal held behind a run key on its way."""
        self.holding_for: Key | None = None
        self.hold_token: object | None = None
        """The run key held for, as :meth:`follow_round` follows it."""
        self.last_followed: object | None = None
        self.hold_timer: Timer | None = None

    async def take(self, event: Key, take: Callable[[Key], Awaitable[None]]) -> None:
        """A key from the terminal: held behind a run key on its way, else taken (its
        priority bindings run now); handed on, it is followed round."""
        if self.held is not None:
            self.held.append(event)
            return
        self.taking_a_key = True
        try:
            await take(event)
        finally:
            self.taking_a_key = False
        if event.is_forwarded and self.app.screen_stack:
            self.follow_round(self.app.focused or self.app.screen)
            if event.key in RUN_KEYS and self._holds_behind(event):
                self._hold_behind(event)

    def run_key_now(self) -> bool:
        """Whether the run key being taken acts now.

        Taken while keys typed before it are still on their way (``/`` then ``error`` on a
        run: its ``r``), acting now would overtake them (``r`` would resume the run the
        search was typed on): it waits its turn, handed on as they were, and acts as it
        comes round (:meth:`came_round`), if they left it the screen's. (Over a
        confirmation or the palette the run keys are not bound: they are the screen's
        under it, out of Textual's binding chain, and go on to the box as letters.)
        """
        return not (self.taking_a_key and self._keys_ahead())

    async def came_round(self, event: Key) -> None:
        """A key has come round to the app (its ``on_key``): a run key that waited its turn
        acts now; the keys held behind it then follow it, or, refused, are set aside."""
        if event is not self.holding_for:
            await self._act_on(event)
            return
        refused: str | None = None
        try:
            refused = await self._act_on(event)
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

    async def _act_on(self, event: Key) -> str | None:
        """A run key come round: act on it; what was refused."""
        action = RUN_KEYS[event.key][0] if event.key in RUN_KEYS else None
        if action is None or isinstance(self.app.screen, ModalScreen):
            return None
        reason = self.refusal(REFUSED_AS[action])
        if reason is not None:
            said = f"cannot {REFUSED_AS[action]}: {reason}"
            if event is not self.holding_for:
                self.app.notify(said, severity="warning", markup=False)
            return said
        focused = self.app.focused
        if focused is not None and focused.check_consume_key(event.key, event.character):
            return None  # a box took the focus meanwhile: the key is its letter
        await self.app.run_action(action, self.app.screen)
        return None

    def _holds_behind(self, key: Key) -> bool:
        """Whether ``key``, a run key handed on, is one whose burst to hold: not over a
        confirmation (the keys are its), not a letter a focused box types."""
        focused = self.app.focused
        if isinstance(self.app.screen, ModalScreen):
            return False
        return focused is None or not focused.check_consume_key(key.key, key.character)

    def _hold_behind(self, key: Key) -> None:
        """Hold the keys taken after ``key``, a run key handed on, until it comes round.

        A key that never comes round to the app (a widget took it) lets them go on once it
        has gone round (:meth:`_gone_round`), as they would have.
        """
        self.held = []
        self.holding_for = key
        self.hold_token = self.last_followed
        self.hold_timer = self.app.set_timer(HELD_AT_MOST, partial(self._release, replay=True))

    def _release(self, *, replay: bool) -> list[Key]:
        """Stop holding keys; ``replay`` them, in order, as keys from the terminal."""
        held, self.held, self.holding_for = self.held or [], None, None
        self.hold_token = None
        if self.hold_timer is not None:
            self.hold_timer.stop()
            self.hold_timer = None
        if replay:
            for key in held:
                self.app.post_message(Key(key.key, key.character))
        return held

    def follow_round(self, to: DOMNode) -> None:
        """Follow a key just handed on to ``to`` round the way it goes: ``to``, then each
        node above it, to the app. A callback queued behind it in each, hop by hop, comes
        after the key there, and after whatever it did there."""
        key = object()
        self.on_their_way[key] = (to, monotonic())
        self.last_followed = key
        self._hop(key, list(to.ancestors_with_self))

    def _hop(self, key: object, way: list[DOMNode]) -> None:
        if not way or key not in self.on_their_way:
            self.on_their_way.pop(key, None)  # gone round
            self._gone_round(key)
            return
        at, *rest = way
        self.on_their_way[key] = (at, self.on_their_way[key][1])
        if not at.call_later(self._hop, key, rest):
            self.on_their_way.pop(key, None)  # its widget is going away, the key too
            self._gone_round(key)

    def _gone_round(self, key: object) -> None:
        if key is self.hold_token and self.held is not None:
            self._release(replay=True)

    def _keys_ahead(self) -> bool:
        """Whether a key handed on before the one being taken is still on its way."""
        now = monotonic()
        for key, (at, since) in list(self.on_their_way.items()):
            if now - since > KEY_ON_ITS_WAY_AT_MOST or not (at is self.app or at.is_attached):
                del self.on_their_way[key]
        return bool(self.on_their_way)
