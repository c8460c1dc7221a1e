"""Who a run was for and which conversation (OpenTelemetry runs carry them), as the run's
header, ``show`` and the event list say it."""

from __future__ import annotations

from ledger_reader import RunStarted, RunSummary, RunUpdated
from ledger_reader.events import RunStartedPayload, RunUpdatedPayload
from tui.text.events import describe, who_said


def test_who_a_run_was_for_is_said_where_it_is_known() -> None:
    summary = RunSummary(
        run_id="run_1",
        session_id="session-7",
        user_id="ada",
        tags=["nightly", "eu"],
        service="weather-api",
    )
    assert who_said(summary) == "session session-7  user ada  tags nightly, eu  service weather-api"
    assert who_said(RunSummary(run_id="run_2")) == ""


def test_a_run_started_says_who_and_a_run_updated_what_it_learned() -> None:
    started = RunStarted(
        payload=RunStartedPayload(agent="weather-service", conversation_id="thread-9")
    )
    assert describe(started).endswith("input not recorded  conversation thread-9")
    named = RunUpdated(payload=RunUpdatedPayload(agent="weather", input="Paris?"))
    assert describe(named) == "updated named weather  input Paris?"
    hostile = RunUpdated(payload=RunUpdatedPayload(session_id="\x1b[31mred\x1b[0m"))
    assert "\x1b" not in describe(hostile)
