"""A coding agent's session reads in words in the event stream and ``runtop show``: what the
person typed, and a session taken up again days later (its gap said, its offsets in hours)."""

from __future__ import annotations

import pytest

from ledger_reader import UnknownEvent
from ledger_reader.sessions import AGENT_NOTICE, CONTEXT_COMPACTED, SESSION_RESUMED, USER_MESSAGE
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
    ("payload", "shown"),
    [
        (
            {"kind": "interrupted", "text": "[Request interrupted by user]"},
            "interrupted by the person",
        ),
        (
            {"kind": "interrupted", "text": "[Request interrupted by user for tool use]"},
            "interrupted by the person at a tool use",
        ),
        (
            {"kind": "command_output", "text": "\x1b[2mCompacted (ctrl+o to see full summary)"},
            "command output: ␛[2mCompacted (ctrl+o to see full summary)",
        ),
        (
            {"kind": "task_notification", "text": 'Background command "tests" completed'},
            'background task: Background command "tests" completed',
        ),
        (
            {"kind": "compact_summary", "text": "This session is being continued"},
            "summary of the compacted conversation: This session is being continued",
        ),
    ],
)
def test_what_the_agent_put_in_the_persons_turn_reads_as_its_own(
    payload: dict[str, str], shown: str
) -> None:
    said = event(AGENT_NOTICE, payload)
    assert describe(said) == shown
    assert glyph(said) == "·"


def test_a_compaction_says_who_and_at_how_many_tokens() -> None:
    assert describe(event(CONTEXT_COMPACTED, {"trigger": "auto", "tokens_before": 167094})) == (
        "conversation compacted at 167.1k tokens"
    )
    assert describe(event(CONTEXT_COMPACTED, {"trigger": "manual"})) == (
        "conversation compacted by the person"
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
