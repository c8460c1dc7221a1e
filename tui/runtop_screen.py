"""What every runtop screen offers the app, its key bar, ``?`` and the palette.

Outside the screens' package: the widgets that show a screen's keys (the key bar,
``?``) read these too, and they sit under the screens.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import ModalScreen, Screen

from inspector import RunStore, RunView
from inspector.actions import run_action
from tui.run_keys import RUN_KEY_BINDINGS, RunKeysApp, ScreenKeys

ResultType = TypeVar("ResultType")


class RuntopScreen(Screen[None]):
    """A screen of runtop's over its store: the run its keys act on, what ``y`` copies, and
    what its keys are called and do now."""

    RUN_SCREEN_BINDINGS: ClassVar[list[BindingType]] = [
        *RUN_KEY_BINDINGS,
        Binding("y", "copy", "Copy", tooltip="Copy the selected run's id"),
        Binding("t", "tools", "Tool calls", tooltip="Per-tool counts, errors and latencies"),
        Binding(
            "M",
            "models",
            "Model calls",
            tooltip="Per-model calls, errors, latencies, tokens and cost",
            show=False,
        ),
    ]
    """The keys of a screen with a run to act on: the run keys, copy, the tool calls. Such
    a screen lists them last in its ``BINDINGS``, after its own: Textual puts a class's
    bindings before its subclass's, and the bar and ``?`` keep that order."""

    MOST_NOTICES: ClassVar[int] = 5
    """Notices on show at once over this screen, at most: a newer one takes the oldest's
    place (a burst of them rose over the runs' source line and counts at 80x24)."""

    LISTS_TOOL_CALLS: ClassVar[bool] = False
    """This screen lists tool calls: ``t`` (the tool calls) would stack it again."""

    LISTS_MODEL_CALLS: ClassVar[bool] = False
    """This screen lists the model calls: ``M`` would stack it again."""

    COPIES_ITS_TEXT: ClassVar[bool] = False
    """``y`` copies what the screen shows (:meth:`copy_text`), not a run's id."""

    RUN_KEYS_WITHOUT_A_RUN: ClassVar[bool] = False
    """The run keys stay in the bar, greyed, while no run is selected (the runs table);
    elsewhere a screen of no run (the tool calls) does not show them."""

    store: RunStore
    clock: float | None

    class ReplayStep(Message):
        """One more event of the replay, please (``n`` on a run with nothing searched)."""

    def current_run(self) -> RunView | None:
        """The run the keys act on, if any."""
        return None

    def copy_text(self) -> str:
        """What ``y`` copies here: the run the keys act on's id, else nothing."""
        run = self.current_run()
        return run.run_id if run is not None else ""

    def key_description(self, action: str, description: str) -> str:
        """What the key bar and ``?`` call ``action``'s key here now."""
        return description

    def key_tooltip(self, action: str, tooltip: str) -> str:
        """What the palette says ``action`` does here now."""
        return tooltip

    @property
    def run_keys(self) -> ScreenKeys | None:
        """What the run keys do, the app's (``None`` under an app of no run keys)."""
        app = self.app
        return app.run_keys if isinstance(app, RunKeysApp) else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.is_attached:
            return False
        if action == "tools":  # not on the tool calls' own screens, where t would stack them
            return not self.LISTS_TOOL_CALLS
        if action == "models":
            return not self.LISTS_MODEL_CALLS
        if action == "copy":  # not where there is nothing to copy (the tools' stats)
            return self.COPIES_ITS_TEXT or self.current_run() is not None
        if action != "run_key":
            return True
        run = self.current_run()
        if run is None and not self.RUN_KEYS_WITHOUT_A_RUN:
            return False  # a screen of no run (the tool calls): the keys do not apply there
        keys = self.run_keys
        if keys is None:
            return False
        asks = run_action(str(parameters[0])).asks
        return None if keys.refusal(asks, run) else True

    def action_run_key(self, name: str) -> None:
        """The run action ``name`` (:data:`inspector.actions.RUN_ACTIONS`) on the run the
        keys act on."""
        if (keys := self.run_keys) is not None:
            keys.act(run_action(name), self.current_run())

    def action_copy(self) -> None:
        if text := self.copy_text():
            self.app.copy_to_clipboard(text)
            self.app.notify("copied to the clipboard", timeout=1.5)

    def action_tools(self) -> None:
        if (keys := self.run_keys) is not None:
            keys.show_tools(self.store, self.clock)

    def action_models(self) -> None:
        if (keys := self.run_keys) is not None:
            keys.show_models(self.store, self.clock)

    def replaying(self) -> bool:
        """Whether a replay is open (space, ``n``, ``x`` and ``R`` are its keys then)."""
        return any(state.can_replay for state in self.store.sources())


class RuntopModal(ModalScreen[ResultType]):
    """A confirmation over a runtop screen, naming its keys for what they do in it."""

    def key_description(self, action: str, description: str) -> str:
        """What the key bar calls ``action``'s key here now."""
        return description


def key_description(screen: Screen[Any], action: str, description: str) -> str:
    """What ``screen`` calls ``action``'s key now (Textual's own screens: its description)."""
    if isinstance(screen, RuntopScreen | RuntopModal):
        return screen.key_description(action, description)
    return description
