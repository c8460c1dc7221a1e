"""What runtop is pointed at is named for what it is: a file that is not a ledger is refused
with the reason, a server that is not runtop's is said to be so (not ``HTTP 404``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, runs_listed
from tui.cli import main

SAMPLE = FIXTURES / "run_20261128T143000012_4f1a9c2e7b3d8a60.jsonl"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def not_ledgers(tmp_path: Path) -> dict[str, Path]:
    files = {
        "hosts": b"127.0.0.1 localhost\n::1 localhost\n",
        "empty.txt": b"",
        "blank.log": b"\n\n  \n",
        "array.json": b"[1, 2, 3]\n",
        "object.json": b'{"name": "not an event"}\n',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return {name: tmp_path / name for name in files}


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("hosts", "its first line is not JSON"),
        ("empty.txt", "it is empty"),
        ("blank.log", "it is blank"),
        ("array.json", "its first line is not a ledger event, a JSON object with a type"),
        ("object.json", "its first line is not a ledger event, a JSON object with a type"),
    ],
)
def test_ls_refuses_a_file_that_is_not_a_ledger_with_the_reason(
    capsys: pytest.CaptureFixture[str], not_ledgers: dict[str, Path], name: str, why: str
) -> None:
    code, out, err = run(capsys, "ls", str(not_ledgers[name]), str(SAMPLE))
    assert code == 1
    assert (
        err
        == f"runtop: {not_ledgers[name]}: not a ledger: {why}"
        + ("" if why.startswith("it is") else " (a ledger is a .jsonl file, one JSON event a line)")
        + "\n"
    )
    assert SAMPLE.stem in out  # the ledger beside it is listed still
    assert name not in out


@pytest.mark.parametrize("command", [["show"], ["replay"], []], ids=["show", "replay", "app"])
def test_every_command_refuses_it_alike(
    capsys: pytest.CaptureFixture[str], not_ledgers: dict[str, Path], command: list[str]
) -> None:
    code, _, err = run(capsys, *command, str(not_ledgers["hosts"]))
    assert code == 1
    assert err.startswith(f"runtop: {not_ledgers['hosts']}: not a ledger: its first line")


def test_a_ledger_with_another_name_is_taken(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    renamed = tmp_path / "last-night.log"
    renamed.write_bytes(SAMPLE.read_bytes())
    code, out, _ = run(capsys, "ls", str(renamed))
    assert code == 0
    assert "✔ succeeded  last-night  research" in out


class NotRuntop(BaseHTTPRequestHandler):
    """A web server of some other kind: HTML for everything, 404 for what it lacks."""

    def do_GET(self) -> None:
        found = self.path == "/"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body>Not Found</body></html>")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def other_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotRuntop)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "command",
    [["ls", "URL"], ["ls", "URL", "--json"], ["show", "abcd1234", "--from", "URL"]],
    ids=" ".join,
)
def test_a_server_that_is_not_runtops_is_named_so(
    capsys: pytest.CaptureFixture[str], other_server: str, command: list[str]
) -> None:
    code, _, err = run(capsys, *[other_server if word == "URL" else word for word in command])
    assert code == 1
    assert f"{other_server} is not a runtop server" in err
    assert "/api/agent/runs" in err
    assert err.count("\n") == 1


def test_ls_json_of_a_fresh_sample_copy_has_no_running_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    torn = FIXTURES / "run_20261128T143000058_5e6f708192a3b4c5.jsonl"  # its last line torn
    (tmp_path / torn.name).write_bytes(torn.read_bytes())  # copied just now
    code, out, _ = run(capsys, "ls", str(tmp_path), "--json")
    assert code == 0
    assert [summary["status"] for summary in runs_listed(out)] == ["stale"]
