"""The keys of the screen on top, in one line: what each does, greyed where it cannot.

Textual's ``Footer`` builds a widget per key and rebuilds them all when the
bindings change, which here is on every batch of run updates (an action's
availability follows the selected run): about 0.45 s on each screen's first
frame and a recompose under load. This bar is one widget that draws one
line, and a click on a key presses it.
"""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

from inspector.actions import RUN_ACTIONS, run_action
from tui.run_keys import bound
from tui.runtop_screen import RuntopScreen, key_description

ESSENTIAL: Final = ("help", "quit")
"""Actions shown however narrow the bar, last in it: the list of every key (``?``), and
quit (``q``)."""

APPLY_NOW: Final = frozenset(
    {
        *map(bound, RUN_ACTIONS),
        *(f"replay_{what}" for what in ("toggle", "step", "speed", "restart")),
        "toggle_mark",
    }
)
"""Actions that apply to what is on screen now: the selected run's approval, cancel and
resume (when they can be done), a replay's keys and its ``m`` to mark (shown only with
one open). They stay while any other key can give way."""

REPLAY_KEYS: Final = frozenset({"space", "n", "x", "R"})
"""A replay's keys: while one is open they apply now, whichever screen names them (the
run screen's ``n`` steps the replay until something is searched)."""

PAIRS: Final = {
    bound(action): bound(run_action(action.pair)) for action in RUN_ACTIONS if action.pair
}
"""Keys that stay in a narrow bar or leave it together: ``a`` without ``d`` reads as the
only answer to an approval."""

GIVE_WAY: Final = frozenset({"sort", "tree", "copy", "tools", "show_all", "raw", "timeline"})
"""Actions that leave the bar before the others when it is too narrow (``?`` lists them)."""


def _priority(key: str, action: str, enabled: bool, *, replaying: bool) -> int:
    """How long a key stays in a narrow bar: the highest number gives way first."""
    if action in ESSENTIAL:
        return 0
    if not enabled:
        return 4  # greyed: it cannot be pressed now
    if action in GIVE_WAY:
        return 3
    if action in APPLY_NOW or (replaying and key in REPLAY_KEYS):
        return 1
    return 2


class KeyBar(Widget):
    """Every shown binding of the screen: key and description, dim when disabled."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "key-bar--key",
        "key-bar--description",
        "key-bar--disabled",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keys: list[tuple[int, int, str]] = []
        """Where each key is drawn (start, end) and the key to press when clicked."""
        self._drawn: tuple[tuple[str, str, str, bool], ...] = ()
        self._actions: dict[str, str] = {}
        """The action of each key shown (what decides how long it stays in a narrow bar)."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def on_resize(self) -> None:
        self.refresh()

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if self._shown() != self._drawn:
            self.refresh()

    def _shown(self) -> tuple[tuple[str, str, str, bool], ...]:
        """(key, label, description, enabled) of each shown binding, one per action, in the
        bar's order: the screen's and the app's keys, then ``?`` and ``q``."""
        seen: set[str] = set()
        shown: list[tuple[str, str, str, bool]] = []
        last: list[tuple[str, str, str, bool]] = []
        for _, binding, enabled, _ in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            # A screen may name a key by what it does there now (``n``: a match, or a step).
            description = key_description(self.screen, binding.action, binding.description)
            entry = (binding.key, self.app.get_key_display(binding), description, enabled)
            (last if binding.action in ESSENTIAL else shown).append(entry)
            self._actions[binding.key] = binding.action
        last.sort(key=lambda entry: ESSENTIAL.index(self._actions[entry[0]]))
        return (*shown, *last)

    def _fitting(
        self, shown: tuple[tuple[str, str, str, bool], ...]
    ) -> list[tuple[str, str, str, bool]]:
        """The keys that fit the bar's width, in their order. Too narrow, keys give way by
        priority: greyed ones first, then those ``?`` lists as well (sort, tree, copy),
        then the others, from the end; those that apply now (an approval's ``a`` and
        ``d``, a replay's keys) last; ``?`` and ``q`` never. A pair (``a`` and ``d``)
        stays or goes together."""
        room = self.size.width or 10_000

        def width(entry: tuple[str, str, str, bool]) -> int:
            _, label, description, _ = entry
            return len(label) + len(description) + 3

        total = sum(map(width, shown))
        screen = self.screen
        replaying = isinstance(screen, RuntopScreen) and screen.replaying()
        actions = [self._actions.get(key, "") for key, _, _, _ in shown]
        priority = [
            _priority(key, action, enabled, replaying=replaying)
            for (key, _, _, enabled), action in zip(shown, actions, strict=True)
        ]
        partner = {
            at: actions.index(PAIRS[action])
            for at, action in enumerate(actions)
            if PAIRS.get(action) in actions
        }
        for at, other in partner.items():  # a pair stays as long as the one that stays longer
            priority[at] = min(priority[at], priority[other])
        dropped: set[int] = set()
        for at in sorted(range(len(shown)), key=lambda at: (-priority[at], -at)):
            if total <= room:
                break
            if priority[at] == 0:
                break  # ? and q stay, however narrow
            if at in dropped:
                continue  # gone with its pair
            for going in {at, partner.get(at, at)}:
                dropped.add(going)
                total -= width(shown[going])
        return [entry for at, entry in enumerate(shown) if at not in dropped]

    def render(self) -> Text:
        self._drawn = self._shown()
        shown = self._fitting(self._drawn)
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        disabled = self.get_component_rich_style("key-bar--disabled", partial=True)
        text = Text(no_wrap=True, overflow="crop", end="")
        self._keys = []
        for key, label, description, enabled in shown:
            start = len(text)
            text.append(f" {label} ", key_style + disabled if not enabled else key_style)
            text.append(
                f"{description} ",
                description_style + disabled if not enabled else description_style,
            )
            self._keys.append((start, len(text), key))
        return text

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._keys:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return
