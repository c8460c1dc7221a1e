"""The screens whose one-key actions (cancel, resume, approve, copy) act on a run."""

from __future__ import annotations

from abc import abstractmethod

from textual.screen import Screen

from inspector import RunView


class SelectedRunScreen(Screen[None]):
    """A screen that has a run selected: the runs table, or one run.

    The app asks it which run its keys act on, without importing every such
    screen to recognise it (the run screen and its widgets are imported when
    a run is first opened, not at launch).
    """

    @abstractmethod
    def current_run(self) -> RunView | None:
        """The run the keys act on, if any."""
