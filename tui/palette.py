"""The command palette (``ctrl+p``): what can be done on the screen now, from its keys.

Each entry is titled with the key bar's word for the action (what ``?`` lists too: one
word for one action), then what it does (its binding's ``tooltip``, said once, where the
key is bound) and the key that does it. Built from the screen's keys, not Textual's own
list (whose Keys, Quit, Maximize and Screenshot named no key and spoke Textual's words):
an action is offered where its key is bound and not greyed, so a key that does not apply
on a screen is not offered there. Theme and Screenshot, which have no key, follow.

:class:`RuntopCommands` is the palette's one provider (the app's ``COMMANDS``);
:class:`Palette` is the palette itself, here and for the views (``v``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

from textual import on
from textual.app import App
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from tui.runtop_screen import RuntopScreen, key_description

HELP_OPEN_SAYS = "Close the list of keys"
"""What ``?`` does while the list of keys is open."""


class PaletteKey(NamedTuple):
    """An action a key does on a screen now, as the palette offers it."""

    key: str
    """The key as the key bar shows it."""
    namespace: DOMNode
    """Where the action is (the screen, a widget on it, the app)."""
    word: str
    """What the bar calls it there."""
    says: str
    """What it does (the binding's tooltip)."""
    shown: bool
    """Whether the bar shows it."""


def keys_on(app: App[Any], screen: Screen[Any]) -> dict[str, PaletteKey]:
    """Each action that a key does on ``screen`` now, not greyed (a shown key before a
    hidden one)."""
    keys: dict[str, PaletteKey] = {}
    active = sorted(screen.active_bindings.values(), key=lambda bound: not bound.binding.show)
    for namespace, binding, enabled, tooltip in active:
        if not enabled or binding.action in keys:
            continue
        word = key_description(screen, binding.action, binding.description)
        says = tooltip or binding.tooltip
        if isinstance(screen, RuntopScreen):
            says = screen.key_tooltip(binding.action, says)
        if binding.action == "help" and screen.query("HelpPanel"):
            says = HELP_OPEN_SAYS
        keys[binding.action] = PaletteKey(
            app.get_key_display(binding), namespace, word, says, binding.show
        )
    return keys


def offered(screen: Screen[Any], action: str) -> bool:
    """Whether the palette offers ``action``, enabled on ``screen``: Open and Copy only
    with something to open or copy (their keys would do nothing)."""
    if not isinstance(screen, RuntopScreen):
        return action not in {"open", "copy"}
    if action == "open":
        return screen.current_run() is not None
    if action == "copy":
        return bool(screen.copy_text())
    return True


class PaletteEntry(NamedTuple):
    """One thing the palette offers."""

    title: str
    """The key bar's word for it."""
    help: str
    """What it does, and the key that does it."""
    callback: Callable[[], Any]
    """Does it."""


def palette_commands(app: App[Any], screen: Screen[Any]) -> Iterable[PaletteEntry]:
    """The palette's entries over ``screen``."""
    for action, key in keys_on(app, screen).items():
        if (not key.says and not key.shown) or action == "command_palette":
            continue  # a key only ? lists (the cursor's), or the palette's own: not to pick
        if not offered(screen, action):
            continue
        yield PaletteEntry(
            key.word,
            f"{key.says} ({key.key})" if key.says else f"({key.key})",
            partial(app.run_action, action, key.namespace),
        )
    yield PaletteEntry(
        "Theme", "The colours; runtop --theme picks them at launch", app.action_change_theme
    )
    yield PaletteEntry(
        "Screenshot",
        "Save this screen as an SVG file in the current directory",
        lambda: app.set_timer(0.1, app.deliver_screenshot),
    )


class RuntopCommands(Provider):
    """The palette's entries over the screen it was opened on, listed and searched by title."""

    async def discover(self) -> Hits:
        for entry in sorted(palette_commands(self.app, self.screen), key=lambda e: e.title):
            yield DiscoveryHit(entry.title, entry.callback, help=entry.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in palette_commands(self.app, self.screen):
            if (score := matcher.match(entry.title)) > 0:
                yield Hit(score, matcher.highlight(entry.title), entry.callback, help=entry.help)


class Palette(CommandPalette):
    """Textual's command palette, but Enter taken while it still searches what was typed
    acts once the search has listed what it found (its best first, chosen).

    Enter taken first acted on the list as it stood: none yet (nothing chosen, a second
    Enter needed: ``v``, a view's name and Enter in one burst) or the list of what was
    typed before (its first entry chosen, not the one typed). The search is the
    palette's worker; Enter waits for it to end, then goes on as typed then.
    """

    waiting: Input.Submitted | None = None
    """Enter, taken while the search ran: handed on once it has ended."""

    def searching(self) -> bool:
        return any(
            worker.node is self and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in self.workers
        )

    @on(Input.Submitted)
    def wait_for_the_search(self, event: Input.Submitted) -> None:
        if self.searching():
            event.prevent_default()  # not Textual's choice yet
            event.stop()
            self.waiting = event

    @on(Worker.StateChanged)
    def search_ended(self, event: Worker.StateChanged) -> None:
        if self.waiting is not None and not self.searching():
            box, self.waiting = self.waiting.input, None
            self.call_after_refresh(box.action_submit)
