"""The command line's attach side: ``runtop serve``, ``runtop cancel``, and URLs for ls/show.

Nothing here loads Textual; aiohttp is imported only by the commands that
talk HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import ipaddress
import signal
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ledger_reader import RunSummary, is_valid_run_id


class AttachCommandError(Exception):
    """A failure to report as one line on stderr."""


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def load_agents(spec: str) -> list[object]:
    """The agents ``MODULE:ATTR`` names: a list of agents, or a factory returning one.

    The current directory is importable, as for ``python -m``.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AttachCommandError(
            f"--agents {spec!r}: expected MODULE:ATTR, like myapp.agents:AGENTS"
        )
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise AttachCommandError(f"--agents: cannot import {module_name}: {error}") from None
    try:
        found: Any = getattr(module, attribute)
    except AttributeError:
        raise AttachCommandError(f"--agents: {module_name} has no {attribute}") from None
    if not isinstance(found, list | tuple) and callable(found):
        found = found()
    if not isinstance(found, list | tuple):
        raise AttachCommandError(
            f"--agents {spec}: expected a list of agents or a function returning one, "
            f"got {type(found).__name__}"
        )
    return list(found)


def command_serve(args: argparse.Namespace, out: Console, err: Console) -> int:
    from run_manager import Manager
    from run_manager.standalone import serve

    agents = load_agents(args.agents) if args.agents else []
    ledger_dir = Path(args.ledger_dir).expanduser()
    if not _is_loopback(args.host):
        err.print(
            f"runtop serve: listening on {args.host}, beyond this machine: anyone with the "
            "token can start and cancel runs (the token travels in the clear without TLS)"
        )

    async def main() -> None:
        executor = await _ray_executor(args.ray, err) if args.ray is not None else None
        manager = Manager(ledger_dir=ledger_dir, agents=agents, executor=executor)

        def ready(url: str, token_file: Path) -> None:
            names = ", ".join(sorted(manager.agents)) or "none (runs cannot be started over HTTP)"
            mode = " read-only" if args.read_only else ""
            err.print(f"runtop serve: {url}{mode}, ledgers in {ledger_dir}")
            err.print(f"  token: {token_file} (clients on this machine find it there)")
            err.print(f"  agents: {names}")
            err.print(f"  watch with: runtop {url}")

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(number, stop.set)
        await serve(
            manager,
            host=args.host,
            port=args.port,
            read_only=args.read_only,
            ready=ready,
            stop=stop,
            finish_runs=args.finish_runs,
            grace=args.grace,
        )
        err.print("runtop serve: stopped")

    try:
        asyncio.run(main())
    except OSError as error:
        raise AttachCommandError(
            f"cannot listen on {args.host}:{args.port}: {error.strerror or error}"
        ) from None
    return 0


async def _ray_executor(address: str, err: Console) -> Any:
    """``--ray [ADDRESS]``: join the cluster (or start a local one) before listening."""
    try:
        from run_manager.ray import RayExecutor
    except ImportError as error:
        raise AttachCommandError(f"--ray needs Ray: pip install 'runtop[ray]' ({error})") from None
    where = address or "the cluster ray.init() finds (or a new local one)"
    err.print(f"runtop serve: joining Ray at {where} ...")
    executor = RayExecutor(address or None)
    try:
        hosts = await executor.placements()  # connects, within executor.connect_timeout
    except Exception as error:
        await executor.close()
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise AttachCommandError(f"cannot run on Ray at {where}: {first}") from None
    nodes = sorted({str(host["address"]) for host in hosts})
    err.print(f"runtop serve: runs execute on Ray, {len(hosts)} hosts on {', '.join(nodes)}")
    return executor


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def remote_summaries(url: str, token: str | None) -> list[RunSummary]:
    from inspector.attach_client import AttachClient, find_token

    async with AttachClient(url, find_token(url, token)) as client:
        return await client.runs()


def command_cancel(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Ask a run to stop: over HTTP for a URL, by control file for a ledger directory."""
    run_id = args.run_id
    if not is_valid_run_id(run_id):
        raise AttachCommandError(f"{run_id!r} is not a run id")
    where: str = args.where
    if is_url(where):
        from inspector.attach_client import AttachClient, find_token
        from inspector.source import ActionRefused, SourceError

        async def cancel() -> None:
            async with AttachClient(where, find_token(where, args.token)) as client:
                await client.cancel(run_id, args.reason)

        try:
            asyncio.run(cancel())
        except (ActionRefused, SourceError) as error:
            raise AttachCommandError(f"cannot cancel {run_id}: {error}") from None
        out.print(f"cancel requested: {run_id} (the run shows canceled once it has stopped)")
        return 0
    from run_manager.control import request_cancel_file
    from tui.cli import resolve_ledger

    ledger = resolve_ledger(run_id, [Path(where)])
    request_cancel_file(ledger.parent, run_id, reason=args.reason, source="cli")
    out.print(f"cancel requested: {run_id} (by control file: a runtop writer there acts on it)")
    return 0


async def remote_events(url: str, token: str | None, run_id: str, *, follow: bool) -> Any:
    """The frames of one run's events as an async iterator of ledger lines (bytes)."""
    from inspector.attach_client import AttachClient, find_token

    async with AttachClient(url, find_token(url, token)) as client:
        params = {"follow": "1"} if follow else None
        async for frames in client.frames(f"runs/{run_id}/events", params=params):
            for frame in frames:
                yield frame
