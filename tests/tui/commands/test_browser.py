"""``runtop serve --web``: the app in a browser, behind the server's token.

A real ``runtop serve --web`` process on a free loopback port; the page's
token handshake over plain HTTP; and the page driven in Debian's headless
Chromium through Playwright, from the runs table to a run cancelled.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import aiohttp
import pytest

from tests.conftest import REPO
from tests.tui.commands.test_serve import AGENTS, post

pytestmark = pytest.mark.timeout(60)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ESCAPES = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
"""A terminal's control sequences: what the app's output is once they are taken out."""


@dataclass
class Served:
    url: str
    token: str
    banner: str
    process: subprocess.Popen[str]
    ledgers: Path


def start_serve(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    (tmp_path / "my_agents.py").write_text(AGENTS)
    env = {
        **os.environ,
        "RUNTOP_HOME": str(tmp_path / "home"),
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
    }
    env.pop("RUNTOP_TOKEN", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--web", "--port", "0", *extra]
    command += ["--agents", "my_agents:agents", "--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    return process, env


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    process, _ = start_serve(tmp_path)
    assert process.stderr is not None
    banner = ""
    while "in a browser:" not in banner:
        line = process.stderr.readline()
        assert line, f"runtop serve --web ended: {banner}"
        banner += line
    url = re.search(r"runtop serve: (http://127\.0\.0\.1:\d+)", banner)
    assert url is not None, banner
    port = url[1].rsplit(":", 1)[1]
    token = (tmp_path / "home" / "tokens" / f"127.0.0.1_{port}").read_text().strip()
    try:
        yield Served(url[1], token, banner, process, tmp_path / "runs")
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(15)
        process.stderr.close()


def test_the_banner_names_the_page_without_its_token_where_it_may_be_kept(
    served: Served,
) -> None:
    assert f"in a browser: {served.url}/web/ (it asks for the token)" in served.banner
    assert served.token not in served.banner  # stderr is a pipe here: a log may keep it


async def test_the_page_and_its_terminal_need_the_token(served: Served) -> None:
    page = f"{served.url}/web/"
    # A browser keeps a cookie of 127.0.0.1; aiohttp's jar does only when told to.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(page.rstrip("/"), allow_redirects=False) as bare:
            assert bare.status == 308  # as typed, without the slash: sent on
            assert bare.headers["Location"] == "/web/"
        async with session.get(page) as asked:
            assert asked.status == 401
            assert 'name="token"' in await asked.text()
            assert "data-session-websocket-url" not in await asked.text()
        async with session.get(page, params={"token": "not-it"}) as wrong:
            assert wrong.status == 401
            assert "not this server's token" in await wrong.text()
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(f"{page}ws")
        assert refused.value.status == 401

        async with session.get(page, params={"token": served.token}, allow_redirects=False) as ok:
            assert ok.status == 303
            assert ok.headers["Location"] == "/web/"  # the token leaves the address bar
            cookie = ok.cookies["runtop_page"]
            assert cookie.value != served.token  # a digest of it, not the token
            assert cookie["httponly"]
            assert cookie["samesite"] == "Strict"
            assert cookie["path"] == "/web/"
        async with session.get(page) as opened:
            assert opened.status == 200
            assert "data-session-websocket-url" in await opened.text()
        with pytest.raises(aiohttp.WSServerHandshakeError) as foreign:
            await session.ws_connect(f"{page}ws", origin="http://elsewhere.example")
        assert foreign.value.status == 403
        # The attach API still wants its bearer token: the page's cookie opens the page only.
        async with session.get(f"{served.url}/api/agent/runs") as api:
            assert api.status == 401


async def test_each_page_runs_its_own_app_and_hears_when_it_dies(served: Served) -> None:
    page = f"{served.url}/web/"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(page, params={"token": served.token}):
            pass
        async with session.ws_connect(f"{page}ws?width=100&height=30") as terminal:
            first = await terminal.receive(timeout=40)  # the app's first output
            assert first.type == aiohttp.WSMsgType.BINARY
            apps = children_of(served.process.pid)
            assert len(apps) == 1
            command = Path(f"/proc/{apps[0]}/cmdline").read_bytes().split(b"\0")
            assert served.url.encode() in command  # attached to this server
            assert served.token.encode() not in b" ".join(command)  # its token not shown
            os.kill(apps[0], signal.SIGKILL)  # the app dies without a word
            while (await terminal.receive(timeout=30)).type not in {
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
            }:
                pass  # what it drew before it died
        wait_until(lambda: not children_of(served.process.pid), 10, "no app left")


async def test_a_server_killed_outright_takes_its_pages_apps_with_it(served: Served) -> None:
    page = f"{served.url}/web/"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(page, params={"token": served.token}):
            pass
        async with session.ws_connect(f"{page}ws") as terminal:
            await terminal.receive(timeout=40)  # the app is up
            (app,) = children_of(served.process.pid)
            served.process.kill()  # no time to tell anyone
            served.process.wait(10)
            wait_until(lambda: not Path(f"/proc/{app}").exists() or zombie(app), 20, "app gone")


def zombie(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_without_the_web_extra_serve_says_how_to_get_it(tmp_path: Path) -> None:
    # A textual_serve that cannot be imported, ahead of the installed one on the path.
    (tmp_path / "textual_serve").mkdir()
    (tmp_path / "textual_serve" / "__init__.py").write_text("raise ImportError('not here')\n")
    process, _ = start_serve(tmp_path)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 1
    assert stderr.strip().splitlines() == [
        "runtop: --web needs pip install 'runtop-agents[web]' (not here)"
    ]


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended while looked at
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def wait_until(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def run_summary(served: Served, run_id: str) -> dict[str, object]:
    request = urllib.request.Request(
        f"{served.url}/api/agent/runs/{run_id}",
        headers={"Authorization": f"Bearer {served.token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        summary: dict[str, object] = json.load(response)["run"]
        return summary


@pytest.fixture
def playwright_api() -> ModuleType:
    """Playwright's sync API, for Debian's Chromium; the test skips, saying why, without it."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium): the page is not driven")
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.mark.timeout(150)
def test_in_chromium_the_page_opens_a_run_of_the_server_and_cancels_it(
    playwright_api: ModuleType, served: Served
) -> None:
    run_id = str(
        post(served.url, "runs", {"skill_name": "slow", "input": "600"}, served.token)["run_id"]
    )
    output: list[bytes] = []

    def screen_text() -> str:
        return ESCAPES.sub(b"", b"".join(output)).decode("utf-8", "replace")

    with playwright_api.sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        browser = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 800},
        )
        try:
            page = browser.new_page()
            page.on(
                "websocket",
                lambda socket: socket.on(
                    "framereceived",
                    lambda frame: output.append(frame) if isinstance(frame, bytes) else None,
                ),
            )

            def shown(text: str, timeout: float = 40) -> None:
                deadline = time.monotonic() + timeout
                while text not in screen_text():
                    assert time.monotonic() < deadline, f"the page never showed {text!r}"
                    page.wait_for_timeout(50)

            page.goto(f"{served.url}/web/?token={served.token}")
            assert page.url == f"{served.url}/web/"
            shown(run_id[-12:])  # the runs table, with the server's run
            shown(served.url.removeprefix("http://"))  # its source: this server
            page.click("#terminal")  # the keys go to the terminal
            page.keyboard.press("Enter")
            shown("Follow")  # the run's screen: its key bar
            page.keyboard.press("c")
            shown("why cancel it")
            page.keyboard.type("from the browser")
            page.keyboard.press("Enter")
            wait_until(
                lambda: run_summary(served, run_id)["status"] == "canceled",
                40,
                "the run canceled",
            )
            assert run_summary(served, run_id)["error"] == "canceled: from the browser"
            shown("canceled")
        finally:
            browser.close()

    ledger = served.ledgers / f"{run_id}.jsonl"
    events = [json.loads(line) for line in ledger.read_text().splitlines()]
    asked = [event["payload"] for event in events if event["type"] == "cancel_requested"]
    # By the app, as the user the server runs as.
    said = {"reason": "from the browser", "source": "runtop", "requested_by": getpass.getuser()}
    assert asked == [said]
    # The page is gone, and so is the app it ran.
    wait_until(lambda: not children_of(served.process.pid), 30, "the page's app ended")
