"""What every runtop screen offers the app, its key bar, ``?`` and the palette.

Outside the screens' package: the widgets that show a screen's keys (the key bar,
``?``) read these too, and they sit under the screens.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from textual.message import Message
from textual.screen import ModalScreen, Screen

from inspector import RunStore, RunView

ResultType = TypeVar("ResultType")


class RuntopScreen(Screen[None]):
    """A screen of runtop's over its store: the run its keys act on, what ``y`` copies, and
    what its keys are called and do now."""

    MOST_NOTICES: ClassVar[int] = 5
    """Notices on show at once over this screen, at most: a newer one takes the oldest's
    place (a burst of them rose over the runs' source line and counts at 80x24)."""

    LISTS_TOOL_CALLS: ClassVar[bool] = False
    """This screen lists tool calls: ``t`` (the tool calls) would stack it again."""

    COPIES_ITS_TEXT: ClassVar[bool] = False
    """``y`` copies what the screen shows (:meth:`copy_text`), not a run's id."""

    store: RunStore

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
