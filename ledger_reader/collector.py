"""The cyclic collector held off while many objects are made and none is a cycle.

Python's collector runs every few hundred containers made, and each run of its older
generations walks every object the process holds: 100,000 runs' views and summaries in
the app, a server's runs and traces. Where a step makes many containers and no cycle (a
listing's summaries, a request's decoded spans, a store's filter columns or the keys of
a sort of its runs), it holds the collector off for that step (:func:`collector_held`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_held() -> Iterator[None]:
    """The cyclic collector off for the step, and on again after it; held already (a
    caller holds it around a larger step), it is left as it is."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


__all__ = ["collector_held"]
