"""The runs table's columns by key and title, the ones it sorts by, and the sort itself:
what the app's table, a view (:mod:`tui.views`) and ``runtop ls --view`` share. Draws
nothing, and loads neither Textual nor Rich (``runtop ls --json`` reads the settings,
which name the views' file); the widths and the layout are
:mod:`tui.widgets.run_columns`'."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from inspector import RunView

COLUMNS: Final = (
    ("mark", "", 1),
    ("status", "STATUS", 19),
    ("run", "RUN", 14),
    ("agent", "SKILL / AGENT", 24),
    ("started", "STARTED", 9),
    ("duration", "TIME", 8),
    ("events", "EVENTS", 8),
    ("damaged", "DAMAGED", 7),
    ("doing", "DOING NOW", 0),
    ("tokens", "TOKENS / COST", 15),
    ("source", "SOURCE", 10),
)
"""Key, title and width of each column (0: takes the room left). STATUS and SOURCE are as
wide as what the runs shown put in them (:class:`~tui.widgets.run_columns.Fill`): these
widths are for runs not known. A sortable column has room for its title and the sort
arrow."""

COLUMN_KEYS: Final = tuple(key for key, _, _ in COLUMNS if key != "mark")
"""The columns a view may name (the mark of a run to compare is no column of its own)."""

SORT_KEYS: Final = ("started", "status", "agent", "duration", "events", "tokens", "source")


def sort_runs(runs: Sequence[RunView], key: str, reverse: bool, now: float) -> list[RunView]:
    """``runs`` sorted by the column ``key`` (ties by start), ``reverse``: largest first."""
    from tui.text import run_name  # here: a view read without a sort needs no Rich

    def value(run: RunView) -> tuple[object, ...]:
        match key:
            case "status":
                return (run.status.value, run.started_at or 0.0)
            case "agent":
                return (run_name(run.summary), run.started_at or 0.0)
            case "duration":
                return (run.duration(now) or 0.0,)
            case "events":
                return (-1 if run.event_count is None else run.event_count,)
            case "tokens":  # as the cell says them: a parent's with its child runs'
                return (run.total.tokens or 0, run.total.cost_usd or 0.0)
            case "source":
                return (run.source, run.started_at or 0.0)
            case _:
                return (run.started_at or 0.0, run.run_id)

    return sorted(runs, key=value, reverse=reverse)
