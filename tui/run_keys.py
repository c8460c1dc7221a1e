"""What ``c``, ``r``, ``a`` and ``d`` do: a confirmation over the run the keys act on, then,
confirmed, the store asked and the outcome said.

The confirmation is pushed at once, in the turn of the key that asked for it: keys typed
in the same burst (a reason, Enter) then reach it, not the screen under it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Final

from textual.app import App
from textual.binding import Binding

from inspector import ActionRefused, RunStore, RunView
from tui.format import short_id

RUN_KEYS: Final = {
    "c": ("cancel", "Cancel run", "Cancel the selected run, with a reason"),
    "r": ("resume", "Resume", "Re-issue the selected run with its input"),
    "a": ("approve", "Approve", "Approve the selected run's pending approval"),
    "d": ("deny", "Deny", "Deny the selected run's pending approval"),
}
"""Each key that opens a confirmation over the run selected: its action, the key bar's word
for it, and what it does (the palette's)."""

REFUSED_AS: Final = {
    "cancel": "cancel",
    "resume": "resume",
    "approve": "approve",
    "deny": "approve",
}
"""What the store is asked it can do to the run for each run key's action (a denial
answers an approval too): why the key is greyed or refused, if it is."""

RUN_KEY_BINDINGS: Final = [
    # Priority bindings: run as the app takes the key from the terminal, before it hands on
    # the keys that came after it (a reason and Enter, typed in one burst), so those reach
    # the confirmation, not the table under it. An Input focused takes them as letters first
    # (Textual leaves a priority binding out where the focused Input would take its key).
    # See tui.typed_ahead for when they wait their turn instead.
    Binding(key, action, word, priority=True, tooltip=says)
    for key, (action, word, says) in RUN_KEYS.items()
]


class RunKeys:
    """The run keys' confirmations and requests, for ``app`` over ``store``."""

    def __init__(self, app: App[Any], store: RunStore) -> None:
        self.app = app
        self.store = store

    def cancel(self, run: RunView) -> None:
        """Cancel ``run``, with the reason the confirmation takes."""
        from tui.screens.cancel import CANCELED_WITHOUT_REASON, CancelScreen  # when first asked

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self._act(
                    self.store.cancel(run.key, reason or CANCELED_WITHOUT_REASON),
                    f"cancel requested for {run.run_id}",
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
            said = f"resumed as {new_id}" if new_id else "resume requested"
            self.app.notify(said, markup=False)

        def confirmed(resume: bool | None) -> None:
            if resume:
                self.app.run_worker(resumed(), group="actions")

        self.app.push_screen(ResumeScreen(run), confirmed)

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
