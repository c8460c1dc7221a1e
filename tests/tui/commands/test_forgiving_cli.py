"""A command line that forgives: every option checked, in one line and exit status 2 (never
"crashed"); a typo of a command gets "did you mean"; the app's options may come before a
command; --from wherever runs are looked up; each command's --help has an example."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO
from tui.cli import COMMANDS, EXIT_USAGE, main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exit:  # argparse's own exit, after --help or an error it said
        code = int(exit.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


BAD = [
    ["--theme", "nosuch"],
    ["demo", "--theme", "draculla"],
    ["replay", str(FIXTURES), "--theme", "nosuch"],
    ["serve", "--port", "99999"],
    ["serve", "--port", "-1"],
    ["serve", "--port", "eighty"],
    ["serve", "--otlp-grpc", "65536"],
    ["serve", "--grace", "-1"],
    ["serve", "--grace", "nan"],
    ["serve", "--agents", "json:dumps"],
    ["serve", "--agents", "json:loads"],
    ["serve", "--agents", "os:sep"],
    ["serve", "--agents", "tui.demo"],
    ["serve", "--agents", "no_such_module:agents"],
    ["serve", "--agents", "tui.demo:no_such_name"],
    ["serve", "--token", "abc", "--new-token"],
    ["demo", "--pace", "-1"],
    ["demo", "--pace", "0"],
    ["demo", "--pace", "inf"],
    ["demo", "--pace", "fast"],
    ["replay", str(FIXTURES), "--speed", "3"],
    ["ls", "--no-such-option"],
    ["show"],
    ["cancel"],
    ["--read-only", "ls", str(FIXTURES)],  # an option of the app, which ls has not
]


@pytest.mark.parametrize("arguments", BAD, ids=" ".join)
def test_a_bad_option_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], arguments: list[str]
) -> None:
    code, out, err = run(capsys, *arguments)
    assert (code, out) == (EXIT_USAGE, ""), err
    assert err.startswith("runtop: "), err
    assert err.count("\n") == 1, err
    assert "crashed" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("variable", "value"), [("RUNTOP_THEME", "nosuch"), ("RUNTOP_STALE_AFTER", "soon")]
)
def test_a_bad_setting_from_the_environment_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    code, out, err = run(capsys, str(FIXTURES))
    assert (code, out) == (EXIT_USAGE, "")
    assert variable in err
    assert err.count("\n") == 1, err


def test_a_theme_typo_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "--theme", "draculla")
    assert "did you mean dracula?" in err


@pytest.mark.parametrize(
    ("typed", "meant"), [("lss", "ls"), ("shwo", "show"), ("sevre", "serve"), ("replya", "replay")]
)
def test_a_typo_of_a_command_says_did_you_mean(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    typed: str,
    meant: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, typed)
    assert code == EXIT_USAGE
    assert (
        err == f"runtop: {typed} is no command, file or directory; did you mean runtop {meant}?\n"
    )
    (tmp_path / typed).mkdir()  # a directory of that name is watched, as asked
    assert "did you mean" not in run(capsys, typed, "--version")[2]


def test_the_apps_options_may_come_before_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--token", "abc", "ls", str(FIXTURES))
    assert (code, err) == (0, "")
    assert "run_20261128T143000012_4f1a9c2e7b3d8a60" in out
    assert run(capsys, "--token=abc", "ls", str(FIXTURES))[0] == 0


def test_ls_takes_from_as_show_and_cancel_do(capsys: pytest.CaptureFixture[str]) -> None:
    by_path = run(capsys, "ls", str(FIXTURES), "--json")
    by_from = run(capsys, "ls", "--from", str(FIXTURES), "--json")
    assert by_path == by_from
    assert by_from[0] == 0


def test_show_says_from_and_still_takes_dir(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "--help")
    assert code == 0
    assert "--from DIR_OR_URL" in out
    assert "--dir" not in out
    assert run(capsys, "show", "3c2b", "--dir", str(FIXTURES))[0] == 0


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_says_what_it_does_with_an_example(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    description = out.split("\n\n")[1]
    assert len(description.split()) >= 8, description
    examples = out[out.index("examples:") :].splitlines()[1:]
    assert any(line.split()[:2] == ["runtop", command] for line in examples), out


def test_serve_keeps_its_token_across_restarts_until_a_new_one_is_asked(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "COLUMNS": "80"}
    env.pop("RUNTOP_TOKEN", None)
    port = free_port()

    def start(*more: str) -> list[str]:
        command = [sys.executable, "-m", "tui.cli", "serve", "--port", port, *more]
        command += ["--ledger-dir", str(tmp_path / "runs")]
        server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
        assert server.stderr is not None
        lines = [server.stderr.readline()]
        while "OTLP/HTTP:" not in lines[-1]:  # the line after those a script reads
            lines.append(server.stderr.readline())
        server.terminate()
        assert server.wait(20) == 0
        server.stderr.close()
        return lines

    token_file = tmp_path / "home" / "tokens" / f"127.0.0.1_{port}"
    banner = start()
    first = token_file.read_text()
    # at 80 columns in a pipe, each line whole: the URL and the token file parse
    assert banner[0].startswith(f"runtop serve: http://127.0.0.1:{port}, ledgers in ")
    assert banner[1].split()[:2] == ["token:", str(token_file)]
    assert banner[1].rstrip().endswith("--new-token makes another)")
    assert (
        banner[-1]
        == f"  OTLP/HTTP: http://127.0.0.1:{port}/v1/traces (protobuf or JSON, the same token)\n"
    )
    start()
    assert token_file.read_text() == first
    start("--new-token")
    assert token_file.read_text() != first
    env["RUNTOP_TOKEN"] = "given-by-the-environment"
    start()
    assert token_file.read_text().strip() == "given-by-the-environment"
    start("--token", "given-on-the-line")
    assert token_file.read_text().strip() == "given-on-the-line"


def test_the_banner_warns_when_otlp_protobuf_cannot_be_read() -> None:
    from tui.commands.serve import otlp_http_line

    said = otlp_http_line("http://127.0.0.1:8765", protobuf=False)
    assert "http://127.0.0.1:8765/v1/traces takes JSON only" in said
    assert "415" in said
    assert "pip install 'runtop-agents[otlp]'" in said


def free_port() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])
