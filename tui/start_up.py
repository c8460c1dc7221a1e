"""What a launch does once in a process, before its first frame."""

from __future__ import annotations

import gc
import sys
from typing import Final

_configured = False

YOUNG_COLLECTIONS_PER_MIDDLE: Final = 100
"""Collections of the youngest generation before one of the middle generation (Python's
default is 10). Each line Textual draws ends in a reference cycle (a strip divided at
its own width caches itself) and lives until its line is drawn again, a few frames:
under a live stream, hundreds a second. At the default, many outlived a middle
collection and reached the oldest generation, whose full collections (tens of
milliseconds, every second or two with a run's timeline open) were the longest waits
behind a key. Collected in the middle generation instead, they cost a few milliseconds
a second."""
SWITCH_INTERVAL: Final = 0.001
"""Seconds a thread holds the GIL before the loop's thread may take it back (Python's
default is 5 ms). Ledger pages are read and decoded in worker threads; a key waiting
behind such a read waited up to an interval each time it asked for the GIL, and with
a run's timeline open on a live run, 1 ms took the slowest key presses from ~50 to
~41 ms and the app's CPU from ~36% to ~29% of a core (bench/tui.py --only run)."""


def configure_process() -> None:
    """Set the process up for the app, once in a process (tests make many apps).

    What start-up made is moved out of the garbage collector's way (``gc.freeze``): the
    imports' objects live as long as the process, and a full collection in the first load
    of many runs would walk them all (``bench/tui.py`` times the launch); later calls
    freeze nothing, or an earlier app's runs would never be freed. The middle generation
    is collected less often (:data:`YOUNG_COLLECTIONS_PER_MIDDLE`), and threads hand the
    GIL back sooner (:data:`SWITCH_INTERVAL`).
    """
    global _configured
    if not _configured:
        _configured = True
        gc.freeze()
        young, _, old = gc.get_threshold()
        gc.set_threshold(young, YOUNG_COLLECTIONS_PER_MIDDLE, old)
        sys.setswitchinterval(SWITCH_INTERVAL)
