"""What ``c``, ``r``, ``a``, ``d`` and ``t`` do: a confirmation over the run the keys act
on, then, confirmed, the store asked and the outcome said; the tool calls' screen.

Each run action of :data:`inspector.actions.RUN_ACTIONS` is done by the method of
:class:`RunKeys` of its name.

The confirmation is pushed at once, in the turn of the key that asked for it: keys typed
in the same burst (a reason, Enter) then reach it, not the screen under it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App

from inspector import ActionRefused, RunKey, RunStore, RunView
from inspector.actions import Action, RunAction
from tui.run_keys import ScreenKeys
from tui.text.runs import short_id


class RunKeys(ScreenKeys):
    """The run keys' confirmations and requests, for ``app`` over ``store``.

    Args:
        app: the app the confirmations are pushed on.
        store: the runs the keys act on.
        read_only: runtop was started with ``--read-only``: every run key is refused.
    """

    def __init__(
        self,
        app: App[Any],
        store: RunStore,
        *,
        read_only: bool = False,
    ) -> None:
        self.app = app
        self.store = store
        self.read_only = read_only

    def refusal(self, kind: Action, run: RunView | None) -> str | None:
        """Why ``kind`` (cancel, resume, approve) cannot be done to ``run``, or ``None``."""
        if self.read_only:
            return "runtop was started with --read-only"
        if run is None:
            return "no run is selected"
        return self.store.refusal(run.key, kind)

    def act(self, action: RunAction, run: RunView | None) -> None:
        """``action`` (a run key's) on ``run``, unless refused: the method of its name."""
        if run is None or self.refusal(action.asks, run):
            return
        confirm: Callable[[RunView], None] = getattr(self, action.name)
        confirm(run)

    def show_tools(self, store: RunStore, clock: float | None) -> None:
        from tui.screens.tools import ToolsScreen  # its DataTable: not needed at launch

        self.app.push_screen(ToolsScreen(store, clock=clock))

    def show_models(self, store: RunStore, clock: float | None) -> None:
        from tui.screens.models import ModelsScreen  # its DataTable: not needed at launch

        self.app.push_screen(ModelsScreen(store, clock=clock))

    def open_run(
        self, store: RunStore, key: RunKey, clock: float | None, *, select: int | None = None
    ) -> None:
        from tui.screens.run import RunScreen  # imported ahead by the app, after its first frame

        self.app.push_screen(RunScreen(store, key, clock=clock, select=select))

    def cancel(self, run: RunView) -> None:
        """Cancel ``run``, with the reason the confirmation takes."""
        from tui.screens.cancel import CANCELED_WITHOUT_REASON, CancelScreen  # when first asked

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self._act(
                    self.store.cancel(run.key, reason or CANCELED_WITHOUT_REASON),
                    f"cancel requested: {short_id(run.run_id)}",  # as approved: and denied: say it
                )

        self.app.push_screen(CancelScreen(run), confirmed)

    def resume(self, run: RunView) -> None:
        """Resume ``run`` (a new run with its input), once confirmed."""
        from tui.screens.resume import ResumeScreen

        async def resumed() -> None:
            try:
                new_id = await self.store.resume(run.key)
            except ActionRefused as error:
                self.app.notify(str(error), severity="error", markup=False)
                return
            said = (
                f"resumed as {short_id(new_id)}"
                if new_id
                # A control file: only a runtop manager writing there takes it, if one runs.
                else "resume requested: the new run appears when a runtop manager there takes it"
            )
            self.app.notify(said, markup=False)

        def confirmed(resume: bool | None) -> None:
            if resume:
                self.app.run_worker(resumed(), group="actions")

        self.app.push_screen(ResumeScreen(run), confirmed)

    def approve(self, run: RunView) -> None:
        """Approve ``run``'s pending approval, once confirmed."""
        self.answer(run, approve=True)

    def deny(self, run: RunView) -> None:
        """Deny ``run``'s pending approval, once confirmed."""
        self.answer(run, approve=False)

    def answer(self, run: RunView, *, approve: bool) -> None:
        """Approve or deny ``run``'s pending approval, after a confirmation that shows the
        question and takes a reason."""
        from tui.screens.approval import ApprovalScreen

        verdict = "approved" if approve else "denied"

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self._act(
                    self.store.approve(run.key, approve, reason or f"{verdict} in runtop"),
                    f"{verdict}: {short_id(run.run_id)}",  # short: the preview stays in view
                )

        self.app.push_screen(ApprovalScreen(run, approve=approve), confirmed)

    def _act(self, action: Awaitable[None], done: str) -> None:
        async def run_it() -> None:
            try:
                await action
            except ActionRefused as error:
                self.app.notify(str(error), severity="error", markup=False)
                return
            self.app.notify(done, markup=False)

        self.app.run_worker(run_it(), group="actions")
