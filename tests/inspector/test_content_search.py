"""``has:`` in the filter language, and the search of runs' files that answers it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector.content_search import ContentSearch
from inspector.filters import FilterError, RunFilter
from ledger_reader import RunSummary


def ledger(path: Path, *outputs: str) -> RunSummary:
    path.write_text(
        "".join(
            json.dumps({"run_id": "r", "seq": n, "type": "tool_result", "payload": {"output": o}})
            + "\n"
            for n, o in enumerate(outputs, 1)
        )
    )
    return RunSummary(run_id=path.stem, path=str(path))


@pytest.mark.parametrize(
    ("typed", "phrase", "negated"),
    [
        ('has:"connection refused"', "connection refused", False),
        ("has:'say \"hi\"'", 'say "hi"', False),
        ('has:"it\'s"', "it's", False),
        ("-has:retry", "retry", True),
        ("!has:Timeout", "Timeout", True),
    ],
)
def test_has_takes_one_phrase_with_the_quotes_inside_it(
    typed: str, phrase: str, negated: bool
) -> None:
    parsed = RunFilter.parse(f"status:failed {typed}")
    assert [(p.text, n) for p, n in parsed.phrases] == [(phrase, negated)]
    assert [term.field for term in parsed.terms] == ["status"]


@pytest.mark.parametrize("typed", ["has:", 'has:"unclosed', "has:'x"])
def test_a_has_without_words_or_with_a_quote_open_is_refused(typed: str) -> None:
    with pytest.raises(FilterError):
        RunFilter.parse(typed)


def test_runs_pass_when_their_files_hold_every_phrase_and_no_negated_one(
    tmp_path: Path,
) -> None:
    both = ledger(tmp_path / "a.jsonl", "connection refused", "then a retry")
    one = ledger(tmp_path / "b.jsonl", "connection refused")
    none = ledger(tmp_path / "c.jsonl", "all fine")
    fileless = RunSummary(run_id="remote")
    search = ContentSearch(RunFilter.parse('has:"connection refused" -has:retry').phrases)
    assert [search.passes(run) for run in (both, one, none, fileless)] == [
        False,
        True,
        False,
        False,
    ]
    unlike = ContentSearch(RunFilter.parse("-has:retry").phrases)
    assert [unlike.passes(run) for run in (both, one, fileless)] == [False, True, False]


def test_a_growing_run_is_searched_again_from_where_the_search_ended(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    run = ledger(path, "working")
    search = ContentSearch(RunFilter.parse("has:done").phrases)
    assert not search.passes(run)
    with path.open("a") as file:
        file.write('{"run_id":"r","seq":2,"type":"error","payload":{"message":"done at last"}}\n')
    assert search.passes(run)
    ledger(path, "begun again")  # truncated and written again: searched from the start
    assert not search.passes(run)
    replaced = tmp_path / "new.jsonl"
    ledger(replaced, "begun again, and done " + "x" * 200)  # longer than before
    replaced.rename(path)
    assert search.passes(run)


def test_a_document_rewritten_whole_is_searched_again_from_its_start(tmp_path: Path) -> None:
    """A Gemini CLI session is one JSON document, rewritten in place as it changes."""
    path = tmp_path / "session-1.json"
    run = RunSummary(run_id="gemini", path=str(path))
    search = ContentSearch(RunFilter.parse("has:beta").phrases)
    path.write_text(json.dumps({"messages": [{"content": "alpha"}]}))
    assert not search.passes(run)
    path.write_text(json.dumps({"messages": [{"content": "beta!"}]}))  # the same size
    os.utime(path, ns=(1, 1))  # and a clock that did not tick between the writes would not
    assert search.passes(run)
    path.write_text(json.dumps({"messages": [{"content": "gamma"}]}))
    assert not search.passes(run)
