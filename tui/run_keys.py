"""The keys of a screen with a run: the run keys (``c``, ``r``, ``a`` and ``d``, from
:data:`inspector.actions.RUN_ACTIONS`), their bindings, and what a screen asks of the
app when one is pressed (:class:`ScreenKeys`, done by :class:`tui.run_actions.RunKeys`).

Below the screens: the screens bind these keys, the app does what they ask.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Final

from textual.binding import Binding

from inspector import RunKey, RunStore, RunView
from inspector.actions import RUN_ACTIONS, Action, RunAction
from tui.textual_compat import CompatApp


def bound(action: RunAction) -> str:
    """The binding's action for the run action ``action``: ``run_key('cancel')``, one
    method of the screens for every run key."""
    return f"run_key({action.name!r})"


KEYED: Final = {action.key: action for action in RUN_ACTIONS}
"""Each run key's action, by its key (what keys typed ahead are held behind)."""

RUN_KEY_BINDINGS: Final = [
    # The screen's ordinary bindings, done as the key comes round, after the keys typed
    # before it: a move onto a run, then c, cancels that run. The keys typed after it (a
    # reason and Enter, in one burst) are held until then (tui.typed_ahead), so they reach
    # the confirmation it opens, not the table under it. An Input focused takes them as
    # letters; over a confirmation the screen under it is not asked.
    Binding(action.key, bound(action), action.word, tooltip=action.says)
    for action in RUN_ACTIONS
]
"""The run keys' bindings, in :data:`~inspector.actions.RUN_ACTIONS`' order: the key bar,
``?`` and the palette say them."""


class ScreenKeys(ABC):
    """What a screen's run keys, ``t`` and Enter on another run ask of the app: done at
    once, in the key's turn (a confirmation pushed then takes the keys typed after it in the
    same burst)."""

    @abstractmethod
    def refusal(self, kind: Action, run: RunView | None) -> str | None:
        """Why ``kind`` (cancel, resume, approve) cannot be done to ``run``, or ``None``."""

    @abstractmethod
    def act(self, action: RunAction, run: RunView | None) -> None:
        """A run key's ``action`` on ``run``: its confirmation, unless refused."""

    @abstractmethod
    def show_tools(self, store: RunStore, clock: float | None) -> None:
        """The tool calls' statistics over ``store``."""

    @abstractmethod
    def show_models(self, store: RunStore, clock: float | None) -> None:
        """The model calls' statistics over ``store``, by model."""

    @abstractmethod
    def open_run(
        self, store: RunStore, key: RunKey, clock: float | None, *, select: int | None = None
    ) -> None:
        """The run screen of ``key``, at its event ``select`` if given: asked by the screens
        the run screen itself opens (the comparison), which cannot import it back."""


class RunKeysApp(CompatApp[None]):
    """An app whose screens' run keys act through its :attr:`run_keys`."""

    run_keys: ScreenKeys
