"""``runtop ls`` and ``runtop show`` read coding agents' sessions (tests/sessions_home) as
runs: one per session and sub-agent, their tokens with the cache's parts and an estimated
cost, and a session's events found by its own id."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from ledger_reader import RunStatus, RunSummary, SummaryCache, scan_summaries
from ledger_reader.sessions import agent_of
from ledger_reader.summary_cache import cache_file, reader_fingerprint
from tests.conftest import line, runs_listed
from tui.cli import main

HOME = Path(__file__).parent.parent.parent / "sessions_home"
FOLDERS = [HOME / ".claude" / "projects", HOME / ".codex" / "sessions", HOME / ".gemini" / "tmp"]
SESSION_20 = (
    FOLDERS[0] / "-Users-test_user-agent-sample" / "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
)


def test_ls_json_lists_every_session_with_its_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", "--json", *map(str, FOLDERS)]) == 0
    runs = {run["run_id"]: run for run in runs_listed(capsys.readouterr().out)}
    assert {run["agent"] for run in runs.values()} == {"claude-code", "codex", "gemini-cli"}
    assert len(runs) == 13
    child = runs["ae4a77f8-aedd-4bc1-888f-c94edc91af04.agent-aac57f5"]
    assert child["parent_run_id"] == "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    for run in runs.values():
        assert run["prompt_tokens"] >= run["cache_read_tokens"] + run["cache_write_tokens"]
        assert run["cost_usd"] > 0
        assert run["cost_estimated"] is True
        assert run["model"]


@pytest.mark.parametrize(
    ("run_id", "folder", "said"),
    [
        ("019b04ae-b1c6-7c72-a134-a4c2de66058c", FOLDERS[1], "apply_patch"),
        ("f0a689a6-b0ac-407f-afcc-4fafa9e14e8a", FOLDERS[2], "run_shell_command"),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04.agent-aac57f5", FOLDERS[0], "WebFetch"),
    ],
)
def test_show_finds_a_session_by_its_id(
    capsys: pytest.CaptureFixture[str], run_id: str, folder: Path, said: str
) -> None:
    assert main(["show", run_id, "--from", str(folder)]) == 0
    out = capsys.readouterr().out
    assert said in out
    assert "◆ model" in out


def test_show_json_prints_ledger_events(capsys: pytest.CaptureFixture[str]) -> None:
    session = next(FOLDERS[1].rglob("rollout-*.jsonl"))
    assert main(["show", str(session), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0]["type"] == "run_started"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    assert {"llm_call", "tool_call", "tool_result"} <= {event["type"] for event in events}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home holding the three agents' sessions (written an hour ago) and no runs yet."""
    home = tmp_path / "home"
    for folder in (".claude", ".codex", ".gemini"):
        shutil.copytree(HOME / folder, home / folder)
    hour_ago = time.time() - 3600
    for path in home.rglob("*"):
        os.utime(path, (hour_ago, hour_ago))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RUNTOP_LEDGER_DIR", str(tmp_path / "runs"))
    return home


def test_plain_ls_lists_the_homes_sessions_as_plain_runtop_shows_them(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", "--json"]) == 0
    runs = runs_listed(capsys.readouterr().out)
    assert {run["agent"] for run in runs} == {"claude-code", "codex", "gemini-cli"}
    assert len(runs) == 13
    assert main(["ls", "--json", "--no-sessions"]) == 0
    assert runs_listed(capsys.readouterr().out) == []


def test_ls_of_a_folder_reads_the_session_files_in_it_as_sessions(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gemini CLI's session, one JSON document (``session-*.json``), was left out of the
    folder's walk, silently: it is read as the agents' ``*.jsonl`` are."""
    assert main(["ls", "--json", str(home)]) == 0
    captured = capsys.readouterr()
    runs = runs_listed(captured.out)
    assert len(runs) == len([*home.rglob("*.jsonl"), *home.rglob("session-*.json")]) == 13
    assert {run["agent"] for run in runs} == {"claude-code", "codex", "gemini-cli"}
    assert all(run["damaged_lines"] == 0 and run["model"] for run in runs)
    assert main(["ls", "--json"]) == 0  # as plain ls lists the home
    assert runs_listed(capsys.readouterr().out) == runs


def test_a_second_listing_takes_the_sessions_from_the_summary_cache(home: Path) -> None:
    folders = [home / ".claude" / "projects", home / ".codex" / "sessions"]
    place = cache_file(folders, None)

    def listing() -> tuple[list[RunSummary], SummaryCache]:
        # A file copied just now changed too lately to be kept (its ctime): not here.
        cache = SummaryCache(place, reader_fingerprint(), racy_seconds=0)
        summaries, errors = scan_summaries(folders, cache=cache)
        assert not errors
        return summaries, cache

    first, cache = listing()
    assert (cache.hits, cache.misses) == (0, 12)
    again, cache = listing()
    assert (cache.hits, cache.misses) == (12, 0)
    assert again == first
    assert {summary.status for summary in again} == {RunStatus.IDLE}
    assert {summary.agent for summary in again} == {"claude-code", "codex"}


def test_a_ledger_named_by_a_uuid_outside_the_agents_folders_stays_a_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "runs" / "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
    ledger.parent.mkdir()
    run_id = ledger.stem
    ledger.write_bytes(
        line(1, "run_started", {"skill": "research"}, run_id=run_id)
        + line(2, "run_completed", {"status": "ok"}, run_id=run_id)
    )
    assert main(["ls", "--json", str(ledger.parent)]) == 0
    [run] = runs_listed(capsys.readouterr().out)
    assert (run["run_id"], run["skill"], run["status"]) == (run_id, "research", "succeeded")
    # show, stats and a replay read it as ls does (by agent_of, they read it as a Claude
    # Code session, each line an unknown record, "no end yet: running")
    assert main(["show", run_id, "--from", str(ledger.parent)]) == 0
    shown = capsys.readouterr().out
    assert "started research" in shown
    assert "claude-code" not in shown
    # a Claude Code session copied out of its folder is still one
    session = tmp_path / "elsewhere" / SESSION_20.name
    session.parent.mkdir()
    shutil.copy(SESSION_20, session)
    assert agent_of(session) == "claude-code"
    assert agent_of(ledger) is None


@pytest.fixture
def agents_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home holding the three agents' sessions (a copy: a listing may write its cache)."""
    home = tmp_path / "home"
    shutil.copytree(HOME, home, ignore=shutil.ignore_patterns(".runtop"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "runtop"))
    monkeypatch.delenv("RUNTOP_LEDGER_DIR", raising=False)
    return home


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9", "claude-code"),  # whole, no --from
        ("019b04ae", "apply_patch"),  # a start of a Codex session's id
        ("66058c", "apply_patch"),  # its end
        ("f0a689a6", "run_shell_command"),  # Gemini's
    ],
)
def test_show_finds_a_session_of_the_home_as_ls_lists_it(
    agents_home: Path, capsys: pytest.CaptureFixture[str], typed: str, said: str
) -> None:
    """``ls`` lists the home's sessions with no path; ``show`` looked only in the runs'
    folder, and took no part of a session's id."""
    assert main(["show", typed]) == 0
    assert said in capsys.readouterr().out


def test_stats_counts_the_homes_sessions_model_calls(
    agents_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--by", "model", "--json"]) == 0
    models = {row["model"] for row in json.loads(capsys.readouterr().out)}
    assert {"gpt-5.1-codex-max", "gemini-2.5-flash", "claude-opus-4-6"} <= models


def test_a_sub_agent_begun_before_its_session_is_drawn_on_its_timeline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Claude Code 2.0's start-up sub-agent began 141 s before its session's first record:
    it sat at -141 s with no bar; it is drawn at the axis' left edge, cut (←)."""
    session = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
    assert main(["show", session, "--from", str(FOLDERS[0]), "--timeline"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ruler = next(line for line in lines if "┊0s" in line)
    child = next(line for line in lines if line.startswith("▶ claude-code"))
    assert child[ruler.index("┊0s")] == "←"
    # its offset says where it began, as the app's event list and detail say it: before
    assert main(["show", session, "--from", str(FOLDERS[0]), "--timeline", "--json"]) == 0
    nodes = json.loads(capsys.readouterr().out)["nodes"]
    (sub_agent,) = [node for node in nodes if node["kind"] == "child_run"]
    assert sub_agent["offset"] == pytest.approx(-141, abs=1)


@pytest.mark.parametrize(
    ("run_id", "folder"),
    [
        ("7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9", FOLDERS[0]),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04", FOLDERS[0]),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04.agent-aac57f5", FOLDERS[0]),
        ("019b04ae-b1c6-7c72-a134-a4c2de66058c", FOLDERS[1]),
        ("f0a689a6-b0ac-407f-afcc-4fafa9e14e8a", FOLDERS[2]),
    ],
)
def test_every_model_call_of_a_session_says_its_tokens_on_its_timeline(
    capsys: pytest.CaptureFixture[str], run_id: str, folder: Path
) -> None:
    """Tens of thousands of tokens a call (a whole conversation sent, cache reads
    included): ``7.3s 26.2k tok`` did not fit the numbers column, and only calls of 10 s
    or more (``40s 32.5k tok``) said their tokens; the label gives up cells for them."""
    assert main(["show", run_id, "--from", str(folder), "--timeline"]) == 0
    models = [line for line in capsys.readouterr().out.splitlines() if line.startswith("◆")]
    assert models
    assert all(" tok " in line for line in models), models
    assert not any("unfinished" in line for line in models)


@pytest.mark.parametrize("xdg", [True, False], ids=["XDG_CACHE_HOME", "~/.cache"])
def test_ls_keeps_its_cache_in_the_users_cache_dir_not_beside_the_sessions(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: bool
) -> None:
    """``HOME=tests/sessions_home runtop ls`` wrote its summary cache into that folder of
    the repository (``~/.runtop/cache``): a cache goes to ``$XDG_CACHE_HOME/runtop``, else
    ``~/.cache/runtop``; only ``$RUNTOP_HOME``, set, keeps it in runtop's own home."""
    monkeypatch.delenv("RUNTOP_HOME")
    cache = tmp_path / "xdg"
    if xdg:
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    else:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        cache = home / ".cache"
    before = sorted(home.rglob("*"))
    assert main(["ls", "--json"]) == 0
    kept = list((cache / "runtop").iterdir())
    assert [path.suffix for path in kept] == [".cache"]
    written = sorted(set(home.rglob("*")) - set(before))
    assert written == ([] if xdg else [home / ".cache", *sorted((home / ".cache").rglob("*"))])
    assert not (home / ".runtop").exists()


def test_show_says_an_idle_sessions_unanswered_call_is_unfinished(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As the app says it (its timeline did; its event stream said ``running``)."""
    assert main(["show", "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "--from", str(FOLDERS[0])]) == 0
    out = capsys.readouterr().out
    assert "⚙ Bash … unfinished" in out
    assert "… running" not in out
    assert "no end recorded: idle" in out
