"""The app in a browser (``runtop serve --web``): textual-serve's page, behind the token.

Each page that opens starts the app in a process of its own, as
``textual-serve`` does (``AppService``: Textual's web driver speaks to the
page over a websocket), attached to the server that serves the page, over
the address the browser reached it by. So a page shows and acts on exactly
the runs ``runtop <url>`` would, with the same token, and nothing in the
server's own process draws.

The page asks for the server's token once: given in the address
(``/web/?token=...``, what the banner prints) or in its form, it is swapped
for a cookie that holds a keyed digest of it, never the token itself
(``HttpOnly``, ``SameSite=Strict``, this path only), and the address is cleared
of it. The websocket needs that cookie, from a page of the same origin. The app
process is handed the token in its environment (``RUNTOP_TOKEN``), never on a
command line another user could read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import html
import shlex
import sys
from collections.abc import Awaitable, Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from tui.commands.targets import CommandError

try:
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager
except ImportError as error:  # the extra is not installed: serve --web says how to get it
    raise CommandError(f"--web needs pip install 'runtop-agents[web]' ({error})") from None

PREFIX: Final = "/web"
"""Where the page is served, beside the attach API's ``/api/agent/``."""
COOKIE: Final = "runtop_page"
"""The cookie a page proves the token with, once given."""
STATIC: Final = Path(str(files("textual_serve") / "static"))
"""textual-serve's script, styles and fonts: the page needs nothing from elsewhere."""
HEARTBEAT: Final = 15.0
"""Seconds between websocket pings: a page closed without a word is noticed, its app ended."""
APP_START: Final = (
    "import ctypes, runpy, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGTERM)\n"
    "sys.argv[0] = 'runtop'\n"
    "runpy.run_module('tui.cli', run_name='__main__')\n"
)
"""The page's app, started so that it ends with the server: Textual's web driver does
not end at the end of its input, and a server killed outright (no time to tell its
pages' apps to quit) left them running. ``prctl(PR_SET_PDEATHSIG)`` asks Linux to send
the app SIGTERM when its parent goes."""
QUIT_GRACE: Final = 5.0
"""Seconds an app is given to quit when its page goes, before it is killed."""


class AttachedApp(AppService):
    """One page's app process: textual-serve's, with the server's token in its environment.

    ``AppService._build_environment`` and ``_process`` are textual-serve's (1.1):
    this class is the one place its private parts are touched, so that the token
    never appears on a command line and an app that does not quit is killed.
    """

    def __init__(self, command: str, token: str, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self._token = token

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment["RUNTOP_TOKEN"] = self._token
        return environment

    async def exited(self) -> None:
        """Return once the app's process has ended, however it ended."""
        if self._process is not None:
            await self._process.wait()

    async def end(self) -> None:
        """Ask the app to quit; kill it if it has not within :data:`QUIT_GRACE` seconds."""
        try:
            await asyncio.wait_for(self.stop(), QUIT_GRACE)
        except (TimeoutError, ConnectionError, RuntimeError):
            process = self._process
            if process is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()


class BrowserView:
    """The page and its websocket, as an aiohttp application to mount at :data:`PREFIX`.

    Args:
        token: the server's bearer token: the page asks for it, and the app
            processes attach with it.
        read_only: the app in each page turns every action off (the server
            refuses them anyway).
        command: how to start the app, before its arguments (default: this
            Python running runtop's command line).
    """

    prefix: Final = PREFIX
    """Where :attr:`app` is mounted."""

    def __init__(
        self, token: str, *, read_only: bool = False, command: list[str] | None = None
    ) -> None:
        self._token = token
        self._session = hmac.new(token.encode(), b"runtop page", hashlib.sha256).hexdigest()
        self.read_only = read_only
        """The pages' apps start with ``--read-only``."""
        self.command = command or [sys.executable, "-c", APP_START]
        """The app's command line, before the server's address."""
        self._pages: set[AttachedApp] = set()
        self._downloads = DownloadManager()
        self.app = web.Application()
        """The aiohttp application: ``root.add_subapp(PREFIX, view.app)``."""
        self.app.router.add_get("/", self.page)
        self.app.router.add_post("/", self.page)
        self.app.router.add_get("/ws", self.websocket)
        self.app.router.add_static("/static", STATIC)
        self.app.on_shutdown.append(self._close_pages)

    def address(self, url: str, *, with_token: bool) -> str:
        """The page's address on the server at ``url``.

        With the token for a first visit on a terminal the user reads; without it
        where the banner may be kept (a log), and the page asks for it.
        """
        if with_token:
            return f"{url}{PREFIX}/?token={self._token}"
        return f"{url}{PREFIX}/ (it asks for the token)"

    def _signed_in(self, request: web.Request) -> bool:
        given = request.cookies.get(COOKIE, "")
        return hmac.compare_digest(given.encode(), self._session.encode())

    async def page(self, request: web.Request) -> web.StreamResponse:
        """``GET /web/``: the app's page; the token's form until the token is given.

        ``?token=`` (or the form's ``POST``) with the right token sets the cookie
        and sends the browser back to the bare address.
        """
        given = request.query.get("token")
        if request.method == "POST":
            given = str((await request.post()).get("token", ""))
        if given is not None:
            if not hmac.compare_digest(given.strip().encode(), self._token.encode()):
                return _token_form("That is not this server's token.")
            response = web.Response(status=303, headers={"Location": f"{PREFIX}/"})
            response.set_cookie(
                COOKIE, self._session, path=f"{PREFIX}/", httponly=True, samesite="Strict"
            )
            return response
        if not self._signed_in(request):
            return _token_form("")
        return web.Response(text=_page(request), content_type="text/html")

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        """``GET /web/ws``: the page's terminal, driving an app process of its own."""
        if not self._signed_in(request):
            raise web.HTTPUnauthorized(text="open the page first and give the server's token")
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise web.HTTPForbidden(text="this page belongs to another site")
        width = _dimension(request.query.get("width"), 80)
        height = _dimension(request.query.get("height"), 24)
        socket = web.WebSocketResponse(heartbeat=HEARTBEAT)
        await socket.prepare(request)
        app = AttachedApp(
            self._app_command(request),
            self._token,
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=socket.close,
            download_manager=self._downloads,
        )
        self._pages.add(app)
        try:
            await app.start(width, height)
            # Until the page goes (or the app quits, and textual-serve closes the socket),
            # or the app's process ends without a word (it crashed): then the page is told.
            relay = asyncio.ensure_future(_relay(socket, app))
            exited = asyncio.ensure_future(app.exited())
            try:
                await asyncio.wait({relay, exited}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                relay.cancel()
                exited.cancel()
        finally:
            self._pages.discard(app)
            await app.end()
            await socket.close()
        return socket

    def _app_command(self, request: web.Request) -> str:
        """The app attached to this server, at the address the page reached it by."""
        host, port = request.transport.get_extra_info("sockname")[:2]  # type: ignore[union-attr]
        shown = f"[{host}]" if ":" in host else host
        arguments = [*self.command, f"http://{shown}:{port}"]
        if self.read_only:
            arguments.append("--read-only")
        # textual-serve runs a shell command: exec makes the app the shell's process
        # itself, so that it is the one told to quit, waited for, or killed.
        return f"exec {shlex.join(arguments)}"

    async def _close_pages(self, app: web.Application) -> None:
        """Ask every page's app to quit, as the server stops."""
        await asyncio.gather(*(page.end() for page in list(self._pages)))


async def _relay(socket: web.WebSocketResponse, app: AttachedApp) -> None:
    """What the page sends, to the app: keys, its size, focus (textual-serve's protocol)."""
    actions: dict[str, Callable[[Any], Awaitable[Any]]] = {
        "stdin": lambda data: app.send_bytes(str(data).encode()),
        "resize": lambda data: app.set_terminal_size(
            _dimension(data.get("width"), 80), _dimension(data.get("height"), 24)
        ),
        "ping": lambda data: socket.send_json(["pong", data]),
        "blur": lambda data: app.blur(),
        "focus": lambda data: app.focus(),
    }
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            kind, *rest = message.json()
            action = actions.get(kind)
            if action is not None:
                await action(rest[0] if rest else None)
        except (ValueError, TypeError, AttributeError):
            continue  # not textual.js: ignored, as textual-serve would


def _dimension(value: object, default: int) -> int:
    """A terminal dimension from the page, within reason."""
    try:
        number = int(str(value))
    except ValueError:
        return default
    return min(max(number, 10), 1000)


def _token_form(problem: str) -> web.Response:
    """The page that asks for the token (401), saying ``problem`` if there is one."""
    said = f'<p class="problem">{html.escape(problem, quote=False)}</p>' if problem else ""
    body = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>runtop</title>
<style>body{{background:#0c181f;color:#e0e0e0;font-family:monospace;margin:4em}}
input{{font-family:monospace;width:40em}} .problem{{color:#ff8080}}</style></head>
<body><h1>runtop</h1>{said}
<form method="post" action="{PREFIX}/">
<p><label for="token">This server's token</label> (<code>runtop serve</code> printed the
page's address with it, and keeps it in <code>~/.runtop/tokens/</code>):</p>
<p><input id="token" name="token" type="password" autofocus autocomplete="off">
<button type="submit">Open</button></p></form></body></html>"""
    return web.Response(text=body, status=401, content_type="text/html")


def _page(request: web.Request) -> str:
    """The app's page: textual-serve's terminal, told where its websocket is."""
    scheme = "wss" if request.secure else "ws"
    socket_url = html.escape(f"{scheme}://{request.host}{PREFIX}/ws", quote=True)
    static = f"{PREFIX}/static"
    font_size = _dimension(request.query.get("fontsize"), 16)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>runtop</title>
<link rel="stylesheet" href="{static}/css/xterm.css">
<script src="{static}/js/textual.js"></script>
<style>
@font-face {{font-family: "Roboto Mono";
  src: url("{static}/fonts/RobotoMono-VariableFont_wght.ttf");}}
body {{background: #0c181f; margin: 0;}}
.closed {{display: none; color: #e0e0e0; font-family: monospace; padding: 2em;}}
body.-closed .closed {{display: block;}}
body.-closed .textual-terminal {{display: none;}}
</style></head>
<body>
<div class="closed">The app has ended.
 <a href="{PREFIX}/" style="color:#8ab4f8">Open it again</a>.</div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{socket_url}"
 data-font-size="{font_size}"></div>
</body></html>"""
