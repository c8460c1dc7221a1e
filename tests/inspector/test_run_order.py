"""The store's order of its runs, kept in place as runs come, change, move and go: always
the order a sort of every run gives, and each order shown keeps its places."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from inspector.model import RunKey, RunView
from inspector.run_order import Places, RunOrder
from ledger_reader import RunStatus, RunSummary


def view(key: RunKey, started: float | None, version: int = 0) -> RunView:
    summary = RunSummary(run_id=key.run_id, status=RunStatus.RUNNING, event_count=version)
    return RunView(key, summary, started_at=started)


def sorted_newest_first(views: dict[RunKey, RunView]) -> list[RunView]:
    return sorted(views.values(), key=lambda v: (v.started_at or 0.0, v.key), reverse=True)


@pytest.mark.parametrize("seed", range(8))
def test_the_order_is_a_sort_of_every_run_and_each_shown_keeps_its_places(seed: int) -> None:
    rng = random.Random(seed)
    order = RunOrder()
    views: dict[RunKey, RunView] = {}
    shown_before: list[tuple[tuple[RunView, ...], Places]] = []
    made = 0

    def start() -> float | None:
        # Most start after the others (live runs); some before, some among them, some
        # not known yet (as the oldest).
        return rng.choice((1000.0 + made, 1000.0 + made, -float(made), rng.uniform(0, 1000), None))

    for step in range(300):
        for _ in range(rng.choice((1, 1, 2, 5, 80))):  # now and then more than FEW_MOVES
            what = rng.random()
            if what < 0.45 or not views:
                made += 1
                key = RunKey(rng.choice("ab"), f"run_{made:05d}")
                views[key] = view(key, start())
                order.put(views[key])
            elif what < 0.7:  # its view changes, not its start
                key = rng.choice(list(views))
                views[key] = view(key, views[key].started_at, step)
                order.put(views[key])
            elif what < 0.85:  # it starts at another time: it moves
                key = rng.choice(list(views))
                views[key] = view(key, start(), step)
                order.put(views[key])
            else:  # it goes, and at times comes back at once
                key = rng.choice(list(views))
                order.remove(key)
                del views[key]
                if rng.random() < 0.3:
                    views[key] = view(key, start(), step)
                    order.put(views[key])
        if rng.random() < 0.7:
            shown, places = order.shown()
            assert list(shown) == sorted_newest_first(views)
            assert order.current() == (shown, places)
            assert order.counts == Counter(key.source for key in views)
            shown_before.append((shown, places))
        for earlier, places in shown_before[-5:]:  # the places of an order shown hold
            assert all(places.get(run.key) == at for at, run in enumerate(earlier))
            assert len(places) == len(earlier)


def test_a_run_that_starts_after_every_other_joins_without_the_others_numbered_again() -> None:
    order = RunOrder()
    for number in range(1000):
        order.put(view(RunKey("a", f"run_{number:04d}"), float(number + 1)))
    order.shown()
    numbers = order._numbers  # the mapping the places read
    order.put(view(RunKey("a", "run_new"), 5000.0))
    order.put(view(RunKey("a", "run_unknown"), None))
    shown, places = order.shown()
    assert order._numbers is numbers  # neither copied nor numbered again
    assert shown[0].key.run_id == "run_new"
    assert shown[-1].key.run_id == "run_unknown"
    assert places.get(RunKey("a", "run_0999")) == 1
