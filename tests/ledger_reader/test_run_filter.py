"""The filter language's one parser: numbers, ranges, globs, and a wrong term named."""

from __future__ import annotations

import re

import pytest

from ledger_reader import RunStatus, RunSummary
from ledger_reader.run_filter import (
    FilterError,
    RunFilter,
    lowered_regex,
    regex_search,
    summary_fields,
)

NOW = 1_764_400_000.0  # 2025-11-29T07:06:40Z


def at(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(NOW + seconds, UTC).isoformat().replace("+00:00", "Z")


RUNS = [
    RunSummary(
        run_id="run_cheap",
        status=RunStatus.SUCCEEDED,
        started_at=at(-100),
        last_event_at=at(-95),  # 5 s
        completed_at=at(-95),
        event_count=12,
        cost_usd=0.004,
        prompt_tokens=800,
        output_tokens=200,
        model="claude-haiku-4-5",
        models=["claude-haiku-4-5"],
        model_calls=2,
    ),
    RunSummary(
        run_id="run_dear",
        status=RunStatus.FAILED,
        started_at=at(-200),
        last_event_at=at(-140),  # 60 s
        completed_at=at(-140),
        event_count=240,
        cost_usd=0.05,
        prompt_tokens=12_000,
        output_tokens=3_000,
        model="gpt-5.2",
        models=["claude-sonnet-4-5", "gpt-5.2"],
        model_calls=9,
    ),
    RunSummary(  # no model call said its cost or tokens: not known, never 0
        run_id="run_unsaid",
        status=RunStatus.RUNNING,
        started_at=at(-45),  # running: 45 s so far
        event_count=3,
        model_calls=0,
    ),
    RunSummary(  # read by head and tail: its counts are not known
        run_id="run_partial",
        status=RunStatus.SUCCEEDED,
        started_at=at(-3600),
        last_event_at=at(-3000),
        completed_at=at(-3000),
        event_count=None,
        partial=True,
    ),
]


def ids(text: str) -> list[str]:
    run_filter = RunFilter.parse(text, now=NOW)
    fields = summary_fields(now=NOW)
    chosen = [run.run_id for run in run_filter.select(RUNS, fields)]
    # One run at a time says the same as all at once.
    assert chosen == [run.run_id for run in RUNS if run_filter.passes(run, fields)]
    return chosen


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cost:>0.01", ["run_dear"]),
        ("cost:>$0.001", ["run_cheap", "run_dear"]),
        ("cost:<0.01", ["run_cheap"]),  # unknown costs are not below a cent
        ("-cost:>0.01", ["run_cheap", "run_unsaid", "run_partial"]),
        ("cost:0.004", ["run_cheap"]),
        ("cost:=0.004", ["run_cheap"]),
        ("cost:0.001..0.01", ["run_cheap"]),
        ("cost:0.004..0.05", ["run_cheap", "run_dear"]),  # both ends in
        ("cost:..0.01", ["run_cheap"]),
        ("tokens:>=10k", ["run_dear"]),
        ("tokens:>=1k", ["run_cheap", "run_dear"]),
        ("tokens:>1k", ["run_dear"]),
        ("tokens:<0.01M", ["run_cheap"]),
        ("duration:>30s", ["run_dear", "run_unsaid", "run_partial"]),
        ("duration:>1m", ["run_partial"]),
        ("duration:<=5s", ["run_cheap"]),
        ("duration:500ms..1.5m", ["run_cheap", "run_dear", "run_unsaid"]),
        ("duration:>50", ["run_dear", "run_partial"]),  # seconds when no unit is said
        ("calls:>5", ["run_dear"]),
        ("calls:<5", ["run_cheap", "run_unsaid"]),
        ("calls:0", ["run_unsaid"]),
        ("events:<100", ["run_cheap", "run_unsaid"]),
        ("events:>=240", ["run_dear"]),
        ("cost:>0.01 duration:>30s", ["run_dear"]),
        ("model:claude-*", ["run_cheap", "run_dear"]),  # any model the run used
        ("model:gpt-5.?", ["run_dear"]),
        ("model:CLAUDE-HAIKU*", ["run_cheap"]),
        ("model:sonnet", ["run_dear"]),  # no wildcard: the text it holds
        ("model:haiku*", []),  # a glob is of the whole name
        ("-model:claude-*", ["run_unsaid", "run_partial"]),
        ("model:/^gpt/", ["run_dear"]),
        ("status:running cost:<1", []),
        ("status:fail calls:>1", ["run_dear"]),
    ],
)
def test_numbers_ranges_and_globs(text: str, expected: list[str]) -> None:
    assert ids(text) == expected


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("cost:>abc", "cost:>abc: 'abc' is not a number: cost:>0.01"),
        ("cost:>10k", "'10k' is not a number"),  # dollars have no k
        ("tokens:>$5", "'$5' is not a number: tokens:>=10k"),
        ("duration:>30x", "duration:>30x: '30x' is not a duration: duration:>30s"),
        ("calls:>", "calls:>: '' is not a number"),
        ("events:..", "a range needs an end"),
        ("cost:0.10..0.01", "the range 0.10..0.01 is empty"),
        ("-tokens:lots", "-tokens:lots: 'lots' is not a number"),
        ("cots:>0.01", "unknown field cots: (did you mean cost:?)"),
        ("modle:gpt-5", "unknown field modle: (did you mean model:?)"),
        ("status:bogus", "unknown status 'bogus'"),
        ("model:/(/", "bad regular expression"),
        ("duration:", "duration: needs a value"),
    ],
)
def test_a_wrong_term_is_named(text: str, said: str) -> None:
    with pytest.raises(FilterError) as refused:
        RunFilter.parse(text, now=NOW)
    assert said in str(refused.value)


def test_a_number_quoted_is_text() -> None:
    assert RunFilter.parse('"cost:>0.01"').terms[0].field == "text"


@pytest.mark.parametrize(
    ("before", "after", "left"),
    [
        ("deplo", "deploy", ["deploy"]),  # a word typed on: only it is tested again
        ("deploy", "deploy status:failed", ["status:failed"]),  # a term added
        ("cost:>0.01", "tag:eu cost:>0.01", ["tag:eu"]),
        ("skill:dep", "skill:depl -model:gpt-*", ["skill:depl", "-model:gpt-*"]),
        ("model:son", "model:sonnet", ["model:sonnet"]),
        ("status:failed", "status:failed", []),
        ("deploy", "deplo", None),  # fewer letters: more runs
        ("-deplo", "-deploy", None),  # a negation typed on passes more
        ("skill:a,b", "skill:a,bc", None),  # a comma's texts: not one text
        ("skill:a,", "skill:a,b", None),
        ("model:claude-*", "model:claude-*x", None),  # a glob is not a text held
        ("/dep/", "/depl/", None),
        ("cost:>0.01", "cost:>0.011", None),  # numbers: read again from scratch
        ("since:1h", "since:1h", None),  # counts back from when it was read
        ("deploy", "skill:deploy", None),
        ("skill:dep", "agent:deploy", None),
    ],
)
def test_a_filter_typed_on_narrows_what_it_tests(
    before: str, after: str, left: list[str] | None
) -> None:
    narrowing = RunFilter.parse(after).narrowing(RunFilter.parse(before))
    assert (None if narrowing is None else sorted(term.text for term in narrowing)) == (
        None if left is None else sorted(left)
    )


PATTERNS = {
    # Searched for in lower-cased text, without ignoring case (the engine's fast path):
    "/dep.oy/": True,
    "/Deploy-EU$/": True,
    "/^RUN_\\d+$/": True,
    "/\\D+\\W\\S/": True,
    "/\\bFoo\\b/": True,
    "/[^A]b/": True,
    "/[A-Z]X/": False,
    "/[a-z]-[A-Z]/": False,
    "/[]A]/": True,
    "/ÉTÉ|straße/": True,
    "/(a)\\1/": False,
    # Ignoring case, as written: lowering might change what they find.
    "/(?-i:Deploy)/": False,
    "/\\x41/": False,
    "/[A-z]/": False,
    "/(?P<n>a)(?P=n)/": False,
    "/\\N{LATIN CAPITAL LETTER A}/": False,
}
TEXTS = (
    *("Deploy-EU", "deploy-eu", "RUN_0001", "run_0001", "été ÉTÉ", "STRASSE", "straße"),
    *("aA", "Ab", "AB", "[]", "x-Y", "A", "a", "", "foo Foo", "FOO-bar", "\\", "_", "aa", "AA"),
)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_regular_expression_finds_in_lower_cased_text_what_it_finds_ignoring_case(
    pattern: str,
) -> None:
    assert (lowered_regex(pattern) is not None) is PATTERNS[pattern]
    search = regex_search(pattern)
    written = re.compile(pattern[1:-1], re.IGNORECASE)
    for text in TEXTS:
        assert search(text) is (written.search(text) is not None), (pattern, text)


def test_a_source_is_found_by_part_of_its_name() -> None:
    """As a skill or an agent is: ``runtop ~`` names its source ``/home/ada sessions``."""
    fields = summary_fields(source="/home/ada sessions", now=NOW)
    for text, passes in (("source:sessions", True), ("source:ADA", True), ("source:bob", False)):
        assert RunFilter.parse(text).passes(RUNS[0], fields) is passes, text
