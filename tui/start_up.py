"""What a launch does once in a process, before its first frame."""

from __future__ import annotations

import gc

_start_up_frozen = False


def freeze_start_up() -> None:
    """Move what start-up made out of the garbage collector's way (``gc.freeze``), once in
    a process: the imports' objects live as long as it, and a full collection in the first
    load of many runs would walk them all (``bench/tui.py`` times the launch). Later calls
    (tests make many apps) freeze nothing, or an earlier app's runs would never be freed."""
    global _start_up_frozen
    if not _start_up_frozen:
        _start_up_frozen = True
        gc.freeze()
