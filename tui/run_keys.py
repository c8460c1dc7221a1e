"""The keys of a screen with a run: ``c``, ``r``, ``a`` and ``d`` (the run keys), their
bindings, and what a screen asks of the app when one is pressed (:class:`ScreenKeys`,
done by :class:`tui.run_actions.RunKeys`).

Below the screens: the screens bind these keys, the app does what they ask.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Final

from textual.binding import Binding

from inspector import RunKey, RunStore, RunView
from inspector.actions import Action
from tui.textual_compat import CompatApp

RUN_KEYS: Final = {
    "c": ("cancel", "Cancel run", "Cancel the selected run, with a reason"),
    "r": ("resume", "Resume", "Re-issue the selected run with its input"),
    "a": ("approve", "Approve", "Approve the selected run's pending approval"),
    "d": ("deny", "Deny", "Deny the selected run's pending approval"),
}
"""Each key that opens a confirmation over the run selected: its action, the key bar's word
for it, and what it does (the palette's)."""

REFUSED_AS: Final[dict[str, Action]] = {
    "cancel": "cancel",
    "resume": "resume",
    "approve": "approve",
    "deny": "approve",
}
"""What the store is asked it can do to the run for each run key's action (a denial
answers an approval too): why the key is greyed or refused, if it is."""

RUN_KEY_BINDINGS: Final = [
    # The screen's ordinary bindings, done as the key comes round, after the keys typed
    # before it: a move onto a run, then c, cancels that run. The keys typed after it (a
    # reason and Enter, in one burst) are held until then (tui.typed_ahead), so they reach
    # the confirmation it opens, not the table under it. An Input focused takes them as
    # letters; over a confirmation the screen under it is not asked.
    Binding(key, action, word, tooltip=says)
    for key, (action, word, says) in RUN_KEYS.items()
]


class ScreenKeys(ABC):
    """What a screen's run keys, ``t`` and Enter on another run ask of the app: done at
    once, in the key's turn (a confirmation pushed then takes the keys typed after it in the
    same burst)."""

    @abstractmethod
    def refusal(self, kind: Action, run: RunView | None) -> str | None:
        """Why ``kind`` (cancel, resume, approve) cannot be done to ``run``, or ``None``."""

    @abstractmethod
    def act(self, action: str, run: RunView | None) -> None:
        """A run key's ``action`` on ``run``: its confirmation, unless refused."""

    @abstractmethod
    def show_tools(self, store: RunStore, clock: float | None) -> None:
        """The tool calls' statistics over ``store``."""

    @abstractmethod
    def open_run(
        self, store: RunStore, key: RunKey, clock: float | None, *, select: int | None = None
    ) -> None:
        """The run screen of ``key``, at its event ``select`` if given: asked by the screens
        the run screen itself opens (the comparison), which cannot import it back."""


class RunKeysApp(CompatApp[None]):
    """An app whose screens' run keys act through its :attr:`run_keys`."""

    run_keys: ScreenKeys
