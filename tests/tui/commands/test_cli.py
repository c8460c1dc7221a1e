"""`runtop ls` and `runtop show`, on the sample ledgers and on hostile ones."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO, RUN_ID, completed, line, runs_listed, started
from tui.cli import COMMANDS, DISTRIBUTION, main
from tui.commands.demo import runtop_as_typed
from tui.commands.output import write_json

REQUIRED_FIELDS = {
    "run_id",
    "path",
    "status",
    "skill",
    "agent",
    "started_at",
    "completed_at",
    "last_event_at",
    "event_count",
    "damaged_lines",
    "warnings",
    "parent_run_id",
    "pending_approval",
    "error",
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ls_table_lists_every_sample_run_newest_first(
    capsys: pytest.CaptureFixture[str], fixtures: Path
) -> None:
    code, out, err = run(capsys, "ls", str(fixtures))
    assert (code, err) == (0, "")
    ids = [row.split()[2] for row in out.splitlines()[1:]]
    assert ids == sorted((p.stem for p in FIXTURES.glob("*.jsonl")), reverse=True)
    assert "failed" in out
    # Asked on 28 November, 24 h to answer: stale, and the note does not say it waits.
    assert "approval unanswered: Apply migration v42 to production?" in out


def test_ls_json_has_the_documented_fields(
    capsys: pytest.CaptureFixture[str], fixtures: Path
) -> None:
    code, out, _ = run(capsys, "ls", "--json", str(fixtures))
    assert code == 0
    runs = runs_listed(out)
    assert len(runs) == 6
    for summary in runs:
        assert summary.keys() >= REQUIRED_FIELDS
    by_id = {summary["run_id"][:29]: summary for summary in runs}
    damaged = by_id["run_20261128T143000063_c5b4a3"]
    assert (damaged["damaged_lines"], damaged["event_count"], damaged["status"]) == (
        1,
        3,
        "succeeded",
    )
    assert by_id["run_20261128T143000052_a0b1c2"]["pending_approval"]["approval_id"] == (
        "ap_7e6d5c4b3a291807"
    )
    assert [s["started_at"] for s in runs] == sorted((s["started_at"] for s in runs), reverse=True)


def test_ls_json_is_a_run_a_line_that_head_and_grep_take_whole(fixtures: Path) -> None:
    """``ls --json | head`` printed one line, the whole listing: each line is now a run."""
    listing = shlex.join([sys.executable, "-m", "tui.cli", "ls", str(fixtures), "--json"])
    piped = subprocess.run(
        f"{listing} | head -n 2",
        shell=True,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=30,
        check=True,
    )
    first, second = (json.loads(text) for text in piped.stdout.splitlines())
    assert (first["skill"], second["skill"]) == ("classify", "research")
    assert piped.stderr == ""
    listed = subprocess.run(
        [sys.executable, "-m", "tui.cli", "ls", str(fixtures), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=30,
        check=True,
    ).stdout
    assert listed.endswith("}\n")
    failed = [json.loads(text) for text in listed.splitlines() if '"status":"failed"' in text]
    assert [run["skill"] for run in failed] == ["deploy"]


def test_ls_lists_with_the_collector_off_and_says_what_the_library_says(
    capsys: pytest.CaptureFixture[str], fixtures: Path
) -> None:
    """``ls`` turns the garbage collector off while it reads (it exits soon after): the same
    JSON as a scan with the collector on, and the collector on again afterwards."""
    import gc

    import msgspec

    from ledger_reader import scan_summaries
    from tui.commands.ls import add_totals

    assert gc.isenabled()
    expected, errors = scan_summaries([fixtures])
    assert errors == []
    add_totals(expected)  # each run's with its child runs': its own, here
    code, out, err = run(capsys, "ls", "--json", str(fixtures))
    assert (code, err) == (0, "")
    assert runs_listed(out) == json.loads(msgspec.json.encode(expected))
    assert len(runs_listed(out)) == 6
    assert gc.isenabled()


@pytest.mark.parametrize("ledger", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name[:29])
def test_show_json_is_the_ledger_line_for_line(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, err = run(capsys, "show", "--json", str(ledger))
    assert (code, err) == (0, "")
    expected: list[object] = []
    offset = 0
    for raw in ledger.read_bytes().split(b"\n"):
        if raw.strip() and raw == ledger.read_bytes()[offset : offset + len(raw)]:
            try:
                expected.append(json.loads(raw))
            except ValueError:
                if ledger.read_bytes()[offset + len(raw) : offset + len(raw) + 1] == b"\n":
                    expected.append(
                        {"type": "damaged_line", "offset": offset, "reason": "not valid JSON"}
                    )
        offset += len(raw) + 1
    assert [json.loads(row) for row in out.splitlines()] == expected


def test_show_readable_and_by_run_id(
    capsys: pytest.CaptureFixture[str], fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_LEDGER_DIR", str(fixtures))
    code, out, _ = run(capsys, "show", "run_20261128T143000031_9c8b7a6f5e4d3c2b")
    assert code == 0
    assert "⚙ shell ✘ error 30s" in out  # the call and its result: one line, as in the app
    assert "error tool shell failed: timed out waiting for the condition" in out
    assert "+30.230s" in out
    code, out, _ = run(capsys, "show", "--raw", "run_20261128T143000031_9c8b7a6f5e4d3c2b")
    assert "call shell(" in out
    code, out, _ = run(capsys, "show", str(fixtures / sorted(os.listdir(fixtures))[-1]))
    assert "damaged line at byte 347" in out


def test_hostile_strings_reach_the_terminal_inert(
    capsys: pytest.CaptureFixture[str], write_ledger: Callable[..., Path]
) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e[bold red]boom[/]"
    path = write_ledger(
        started(skill=evil), line(2, "tool_call", {"name": evil, "arguments": {evil: evil}})
    )
    for args in (("show", str(path)), ("show", "--json", str(path)), ("ls", str(path))):
        code, out, _ = run(capsys, *args)
        assert code == 0
        for byte in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert byte not in out, (args, byte)
    _, out, _ = run(capsys, "show", str(path))
    assert "␛]0;pwned" in out
    assert "[bold red]boom[/]" in out  # markup shown as text


UNSAFE_IN_A_TERMINAL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""C0 (ESC among them) but tab and newline, DEL, C1, line separators, bidi controls."""


def test_every_json_runtop_prints_is_inert_and_means_the_same(
    capsys: pytest.CaptureFixture[str], write_ledger: Callable[..., Path]
) -> None:
    """C1 controls, bidi overrides and U+2028/2029 are legal raw in JSON strings, and a
    writer that does not escape non-ASCII leaves them raw in the ledger; a raw ESC
    makes a line damaged. Printed JSON has them all as \\u escapes, same meaning."""
    evil = "\x9b31m\u202eevil\u2066\u2028\u2029\x85\x1b[2J"
    record = {"run_id": RUN_ID, "seq": 2, "time": "2026-11-29T06:45:02Z", "type": "tool_call"}
    raw = json.dumps(
        {**record, "payload": {"name": evil, "arguments": {evil: evil}}}, ensure_ascii=False
    )
    path = write_ledger(
        json.dumps(json.loads(started(skill=evil)), ensure_ascii=False).encode() + b"\n",
        raw.encode() + b"\n",
        b'{"run_id": "\x1b]0;pwned\x07", "seq": 3}\n',  # a raw ESC: not JSON, a damaged line
    )
    assert "\x9b".encode() in path.read_bytes()
    assert b"\x1b]0;" in path.read_bytes()
    code, out, _ = run(capsys, "ls", "--json", str(path))
    assert code == 0
    assert UNSAFE_IN_A_TERMINAL.search(out) is None, out
    assert runs_listed(out)[0]["skill"] == evil
    code, out, _ = run(capsys, "show", "--json", str(path))
    assert code == 0
    assert UNSAFE_IN_A_TERMINAL.search(out) is None, out
    shown = [json.loads(line) for line in out.splitlines()]
    assert shown[0]["payload"]["skill"] == evil
    assert shown[1]["payload"]["arguments"] == {evil: evil}
    assert shown[2]["type"] == "damaged_line"


@pytest.mark.parametrize(
    "document",
    [
        b'{"skill":"del\x7fhere"}',
        b'{"skill":"esc\x1b[2J"}',
        b'{"a":1}\r',
        b'{"skill":"nul\x00bell\x07"}',
        '{"skill":"c1 \x9b and bidi \u202e"}'.encode(),
    ],
)
def test_json_written_ascii_or_not_is_inert(document: bytes) -> None:
    """The ASCII fast path of the one JSON writer lets no control byte through either."""
    stream = io.StringIO()
    write_json(document, stream)
    assert UNSAFE_IN_A_TERMINAL.search(stream.getvalue()) is None, stream.getvalue()


def test_plain_ascii_json_is_written_as_it_is() -> None:
    stream = io.StringIO()
    write_json(b'{"run_id":"r","tab":"a\\tb","n":[1,2.5,null]}', stream)
    assert stream.getvalue() == '{"run_id":"r","tab":"a\\tb","n":[1,2.5,null]}\n'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ls", "/no/such/dir"), "runtop: /no/such/dir: no such file or directory"),
        (("show", "/no/such.jsonl"), "runtop: /no/such.jsonl: no such file"),
        (("show", "../run_x"), "runtop: ../run_x: no such file"),
        (("show", "run with spaces"), "neither a ledger file nor a valid run id"),
    ],
)
def test_errors_are_one_line_and_non_zero(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code != 0
    assert out == ""
    assert len(err.splitlines()) == 1
    assert message in err


def test_ls_of_an_empty_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "ls", str(tmp_path))
    assert code == 1
    assert err == f"runtop: {tmp_path}: no ledgers (*.jsonl) found\n"


@pytest.mark.timeout(30)
def test_show_follow_prints_until_the_run_ends(tmp_path: Path) -> None:
    path = tmp_path / "run_live.jsonl"
    path.write_bytes(started() + line(2, "llm_chunk", {"delta": "x"})[:12])
    follower = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "show", "--json", "--follow", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert follower.stdout is not None
        assert json.loads(follower.stdout.readline())["seq"] == 1
        # Written whenever: before the watch starts or after, the follower reads on from
        # the end of the last whole line it printed.
        with path.open("ab") as handle:
            handle.write(line(2, "llm_chunk", {"delta": "x"})[12:])
        assert json.loads(follower.stdout.readline())["seq"] == 2
        with path.open("ab") as handle:
            handle.write(completed(3))
        assert json.loads(follower.stdout.readline())["type"] == "run_completed"
        assert follower.wait(timeout=10) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
        follower.communicate()


def test_ls_lines_up_its_columns_and_keeps_each_run_on_one_line(
    capsys: pytest.CaptureFixture[str], fixtures: Path
) -> None:
    code, out, _ = run(capsys, "ls", str(fixtures))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 7  # the header and six runs, none wrapped
    header = lines[0]
    for title in ("RUN ID", "STARTED (UTC)", "EVENTS", "NOTE"):
        assert title in header
    starts = {line.index("run_20261128T") for line in lines[1:]}
    assert starts == {header.index("RUN ID")}
    events = header.index("EVENTS") + len("EVENTS")  # right-aligned under their title
    assert all(line[events - 1].isdigit() for line in lines[1:])
    assert all(line == line.rstrip() for line in lines)
    canceled = next(line for line in lines if line.startswith("⊘ canceled"))
    assert canceled.endswith("  wrong input file"), canceled  # the status word said once


def test_replay_takes_directories_of_ledgers(tmp_path: Path) -> None:
    """``runtop replay ~/.runtop/runs``: last night's directory, replayed whole (it said
    "no such file" of a directory that was there)."""
    from tui.commands.replay import replay_files

    samples = sorted(FIXTURES.glob("*.jsonl"))
    nested = tmp_path / "more" / "deeper"
    nested.mkdir(parents=True)
    (nested / "extra.jsonl").write_bytes(samples[0].read_bytes())
    (tmp_path / "more" / "notes.txt").write_text("not a ledger")
    files = replay_files([str(FIXTURES), str(samples[0]), str(tmp_path / "more")])
    assert files == [*samples, nested / "extra.jsonl"]  # each once, in order


@pytest.mark.parametrize(
    ("made", "message"),
    [
        ("missing", "no such file or directory"),
        ("empty", "no ledgers (*.jsonl) found"),
    ],
)
def test_replay_says_what_is_wrong_with_a_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, made: str, message: str
) -> None:
    path = tmp_path / made
    if made == "empty":
        path.mkdir()
    code, out, err = run(capsys, "replay", str(path))
    assert code != 0
    assert out == ""
    assert err == f"runtop: {path}: {message}\n"


def odd_entries(directory: Path) -> tuple[Path, Path]:
    """A FIFO and a link to nothing, both named like ledgers, beside a real ledger."""
    directory.mkdir(exist_ok=True)
    (directory / f"{RUN_ID}.jsonl").write_bytes(started())
    fifo, broken = directory / "pipe.jsonl", directory / "broken.jsonl"
    os.mkfifo(fifo)
    broken.symlink_to(directory / "gone")
    return fifo, broken


def test_ls_says_which_entries_of_a_directory_it_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A FIFO or a dangling link named ``*.jsonl`` in a directory was passed over without
    a word (a named one was refused): each is named with what it is, the ledgers beside
    it still listed."""
    fifo, broken = odd_entries(tmp_path / "runs")
    code, out, err = run(capsys, "ls", str(tmp_path / "runs"), "--json")
    assert [run["run_id"] for run in runs_listed(out)] == [RUN_ID]
    assert code == 1
    assert sorted(err.splitlines()) == [
        f"runtop: {broken}: skipped: not a regular file (a link to {tmp_path / 'runs' / 'gone'},"
        " which is not there)",
        f"runtop: {fifo}: skipped: not a regular file (a FIFO)",
    ]


def test_replay_names_what_it_skipped_and_refuses_a_fifo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``runtop replay DIR`` said nothing of a FIFO in it, and called a FIFO named on the
    command line "no such file or directory" (it is there: it is no regular file)."""
    from ledger_reader import LedgerError
    from tui.commands.replay import replay_files

    fifo, broken = odd_entries(tmp_path / "runs")
    skipped: list[LedgerError] = []
    assert replay_files([str(tmp_path / "runs")], skipped) == [
        tmp_path / "runs" / f"{RUN_ID}.jsonl"
    ]
    assert sorted(error.path for error in skipped) == [broken, fifo]
    code, out, err = run(capsys, "replay", str(fifo))
    assert (code, out) == (1, "")
    assert err == f"runtop: {fifo}: skipped: not a regular file (a FIFO)\n"


def test_version_is_the_installed_one(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"runtop {version(DISTRIBUTION)}\n"


def test_help_shows_every_form_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    said = capsys.readouterr().out
    assert "runtop [PATH|URL ...]" in said
    for option in ("--token", "--theme", "--read-only", "--version"):
        assert option in said, option
    examples = said[said.index("examples") :].splitlines()[1:]
    for command in sorted(COMMANDS):
        assert any(line.split()[:2] == ["runtop", command] for line in examples), command
    app = [line for line in examples if line.split()[:1] == ["runtop"]]
    app = [line for line in app if line.split()[1] not in COMMANDS]
    assert any(" http://" in line for line in app), app  # the app, watching a server


def test_ls_on_a_fresh_home_says_how_to_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "fresh"))
    monkeypatch.delenv("RUNTOP_LEDGER_DIR", raising=False)
    code, out, err = run(capsys, "ls")
    assert (code, out) == (0, "")
    assert err.endswith("To see runtop at work: runtop demo (or runtop samples: six sample runs)\n")
    assert str(tmp_path / "fresh" / "runs") in err
    code, out, _ = run(capsys, "ls", "--json")
    assert (code, runs_listed(out)) == (0, [])


def test_show_of_a_run_not_in_the_default_directory_says_where_else_to_look(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "fresh"))
    monkeypatch.delenv("RUNTOP_LEDGER_DIR", raising=False)
    run_id = "run_20261128T143000012_4f1a9c2e7b3d8a60"
    code, out, err = run(capsys, "show", run_id)
    assert (code, out) == (1, "")
    assert "--from DIR_OR_URL looks elsewhere" in err
    code, _, err = run(capsys, "show", run_id, "--from", str(tmp_path))
    assert code == 1
    assert "--from" not in err  # asked where to look: told only what was not there


@pytest.mark.parametrize(
    "options", [[], ["--json"], ["--timeline"]], ids=["readable", "json", "timeline"]
)
def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path, options: list[str]) -> None:
    """``runtop show RUN | head -1``: the reader leaves after a line; runtop ends with
    status 0 (or SIGPIPE's), and nothing on stderr."""
    ledger = tmp_path / f"{RUN_ID}.jsonl"
    chunks = b"".join(line(seq, "llm_chunk", {"delta": "x" * 60}) for seq in range(2, 40_000))
    ledger.write_bytes(started() + chunks + completed(40_000))
    shown = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "show", str(ledger), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert shown.stdout is not None
    assert shown.stderr is not None
    assert shown.stdout.readline()
    shown.stdout.close()
    status = shown.wait(30)
    assert shown.stderr.read() == b""
    shown.stderr.close()
    assert status in (0, -signal.SIGPIPE), status


def test_the_demo_says_how_to_start_this_runtop_as_typed(tmp_path: Path) -> None:
    """After ``make run`` runtop is in .venv/bin, not on PATH: the demo's last line names
    it so, and the command it names runs."""
    installed = str(Path(sys.executable).parent / "runtop")
    elsewhere = str(tmp_path)  # a PATH with no runtop on it
    typed = runtop_as_typed(installed, path=elsewhere)
    assert typed == [installed]
    said = subprocess.run([*typed, "--version"], capture_output=True, text=True, check=False)
    assert (said.returncode, said.stdout.split()[0]) == (0, "runtop"), said.stderr
    assert runtop_as_typed(installed, path=str(Path(installed).parent)) == ["runtop"]
    by_module = runtop_as_typed(str(REPO / "tui" / "cli.py"))
    assert by_module == [sys.executable, "-m", "tui.cli"]
