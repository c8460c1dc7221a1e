"""A coding agent's session reads in words in the event stream and ``runtop show``: what the
person typed, and a session taken up again days later (its gap said, its offsets in hours)."""

from __future__ import annotations

import pytest

from ledger_reader import UnknownEvent
from ledger_reader.sessions import SESSION_RESUMED, USER_MESSAGE
from tui.text import offset
from tui.text.events import describe, glyph


def event(kind: str, payload: object) -> UnknownEvent:
    return UnknownEvent(run_id="s", seq=2, time="2025-12-09T19:48:17Z", type=kind, payload=payload)


def test_a_prompt_reads_as_the_persons_words() -> None:
    said = event(USER_MESSAGE, {"text": "cd to myapp\x1b[31m and run it"})
    assert describe(said) == "user cd to myapp␛[31m and run it"  # inert, never an escape
    assert glyph(said) == "»"


def test_a_resumed_session_says_its_gap() -> None:
    assert describe(event(SESSION_RESUMED, {"after_seconds": 3 * 86400 + 65.0})) == (
        "session resumed after 72h01m"
    )
    assert describe(event(SESSION_RESUMED, {"after_seconds": "x"})) == (
        "session resumed after a while"
    )


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.2, "+0.200s"),
        (3599.9994, "+3599.999s"),
        (3600.0, "+1h00m00.000s"),
        (259205.12, "+72h00m05.120s"),
        (-7200.5, "-2h00m00.500s"),
    ],
)
def test_offsets_of_hours_read_in_hours(seconds: float, shown: str) -> None:
    assert offset(seconds) == shown
