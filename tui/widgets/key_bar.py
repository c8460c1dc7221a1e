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

ESSENTIAL: Final = ("question_mark", "q")
"""Keys shown however narrow the bar: the one that lists every key, and quit."""

GIVE_WAY: Final = ("y", "T", "t", "o", "w", "slash", "s", "C")
"""Keys that leave the bar before the others when it is too narrow (a replay's keys stay)."""

REPLAY: Final = ("space", "n", "x", "R")
"""A replay's keys: with one open they stay in the bar while any other key can give way."""


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
        """(key, label, description, enabled) of each shown binding, one per action."""
        seen: set[str] = set()
        shown: list[tuple[str, str, str, bool]] = []
        # A screen may name a key by what it does there now (``n``: a match, or a step).
        named = getattr(self.screen, "key_description", None)
        for _, binding, enabled, _ in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            description = binding.description
            if named is not None:
                description = named(binding.action, description)
            shown.append((binding.key, self.app.get_key_display(binding), description, enabled))
        return tuple(shown)

    def _fitting(
        self, shown: tuple[tuple[str, str, str, bool], ...]
    ) -> list[tuple[str, str, str, bool]]:
        """The keys that fit the bar's width: greyed ones give way first, then the last
        ones; ``?`` (every key) and ``q`` always stay."""
        kept = list(shown)

        def width() -> int:
            return sum(len(label) + len(description) + 3 for _, label, description, _ in kept)

        room = self.size.width or 10_000
        # Greyed keys first (they cannot be pressed now), then those reached through ? as
        # well, then from the end.
        for round_ in ("greyed", "give way", "not a replay's", "any"):
            for entry in reversed(list(kept)):
                if width() <= room:
                    return kept
                key, _, _, enabled = entry
                gives_way = (
                    (round_ == "greyed" and not enabled)
                    or (round_ == "give way" and key in GIVE_WAY)
                    or (round_ == "not a replay's" and key not in REPLAY)
                    or round_ == "any"
                )
                if key not in ESSENTIAL and gives_way:
                    kept.remove(entry)
        return kept

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
