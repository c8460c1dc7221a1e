"""``runtop serve``: run agents behind the attach API (HTTP + SSE) until a signal.

With ``runtop demo``, the only command that loads the run manager.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import ipaddress
import os
import signal
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from tui.commands.targets import CommandError, UsageError


def load_agents(spec: str) -> list[object]:
    """The agents ``MODULE:ATTR`` names: a list of agents, or a factory returning one.

    The current directory is importable, as for ``python -m``.
    """
    from run_manager.agents import as_runnable

    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"--agents {spec!r}: expected MODULE:ATTR, like myapp.agents:AGENTS")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"--agents: cannot import {module_name}: {error}") from None
    try:
        found: Any = getattr(module, attribute)
    except AttributeError:
        raise UsageError(f"--agents: {module_name} has no {attribute}") from None
    if not isinstance(found, list | tuple) and callable(found):
        try:
            found = found()
        except Exception as error:  # someone else's function: whatever it raises is theirs
            said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            raise UsageError(
                f"--agents {spec}: expected a list of agents or a function returning one; "
                f"{attribute}() failed ({said})"
            ) from None
    if not isinstance(found, list | tuple):
        raise UsageError(
            f"--agents {spec}: expected a list of agents or a function returning one, "
            f"got {type(found).__name__}"
        )
    for agent in found:
        try:
            as_runnable(agent)
        except TypeError as error:
            raise UsageError(f"--agents {spec}: {error}") from None
    return list(found)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from run_manager import BadBudget, Budget, Manager
    from run_manager.manager import LedgerDirShared, prepare_ledger_dir
    from run_manager.server.retention import BadRetention, Retention
    from run_manager.server.standalone import serve
    from tui.text.events import budget_given

    try:
        budget = Budget.parse(args.budget) if args.budget is not None else None
    except BadBudget as error:
        raise UsageError(f"--budget {args.budget}: {error}") from None
    token = choose_token(args)
    page = _browser_view(token, args.read_only) if args.web else None
    try:
        retention = Retention.parse(args.retain)
    except BadRetention as error:
        raise CommandError(f"--retain {args.retain}: {error}") from None
    agents = load_agents(args.agents) if args.agents else []
    ledger_dir = Path(args.ledger_dir).expanduser()
    if not _is_loopback(args.host):
        tell(
            f"runtop serve: listening on {args.host}, beyond this machine: anyone with the "
            "token can start and cancel runs (the token travels in the clear without TLS)"
        )

    try:
        prepare_ledger_dir(ledger_dir, shared=args.shared_ledger_dir)
    except LedgerDirShared as error:
        raise CommandError(
            f"--ledger-dir {ledger_dir}: {error.strerror}; choose a folder of your own, or "
            "give --shared-ledger-dir if it is meant to be shared"
        ) from None
    except OSError as error:
        raise CommandError(f"--ledger-dir {ledger_dir}: {error.strerror or error}") from None

    async def main() -> None:
        executor = await _ray_executor(args.ray, err) if args.ray is not None else None
        manager = Manager(
            ledger_dir=ledger_dir,
            agents=agents,
            executor=executor,
            shared_ledger_dir=args.shared_ledger_dir,
            budget=budget,
        )

        def ready(url: str, token_file: Path) -> None:
            names = ", ".join(sorted(manager.agents)) or "none (runs cannot be started over HTTP)"
            mode = " read-only" if args.read_only else ""
            for line in (
                f"runtop serve: {url}{mode}, ledgers in {ledger_dir}",
                f"  token: {token_file} (clients on this machine find it there; kept for "
                "the next start on this port, --new-token makes another)",
                f"  agents: {names}",
                f"  keeps: {retention.describe()} (--retain)",
                *(
                    [f"  budget, each run's: {budget_given(budget.limits())} (--budget)"]
                    if budget
                    else []
                ),
                f"  watch with: runtop {url}",
                otlp_http_line(url, protobuf_available()),
                "  runs from traces: "
                + (
                    "every trace (--every-trace)"
                    if args.every_trace
                    else "an agent's: an agent, model call, tool call or step in it "
                    "(--every-trace: all)"
                ),
                *(f"  OTLP/gRPC: {address} (the same token)" for address in grpc_address),
                *(
                    [f"  in a browser: {page.address(url, with_token=sys.stderr.isatty())}"]
                    if page is not None
                    else []
                ),
            ):
                tell(line)

        grpc_address: list[str] = []
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
            otlp_grpc_port=_otlp_grpc_port(args.otlp_grpc),
            otlp_grpc_ready=grpc_address.append,
            retention=retention,
            every_trace=args.every_trace,
            token=token,
            mounts={page.prefix: page.app} if page is not None else None,
        )
        err.print("runtop serve: stopped")

    try:
        asyncio.run(main())
    except OSError as error:
        raise CommandError(
            f"cannot listen on {args.host}:{args.port}: {error.strerror or error}"
        ) from None
    return 0


def _browser_view(token: str, read_only: bool) -> Any:
    """``--web``: the app's page, once textual-serve is known to be there to serve it."""
    from tui.commands.browser import BrowserView  # says how to install the extra if missing

    return BrowserView(token, read_only=read_only)


def tell(line: str) -> None:
    """One line of the banner on stderr, whole: never wrapped at the terminal's width (or at
    80 columns into a pipe, where a script reads the URL and the token file from it)."""
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def choose_token(args: argparse.Namespace) -> str:
    """The server's token: ``--token``, else ``$RUNTOP_TOKEN``, else the one kept from this
    port's last start (so watchers elsewhere keep working across a restart), else a new one;
    ``--new-token`` always makes a new one.

    Raises:
        UsageError: ``--token`` and ``--new-token`` together.
    """
    from run_manager.server.tokens import make_token, read_token

    if args.new_token:
        if args.token:
            raise UsageError("--token and --new-token: give one or the other")
        return make_token()
    given: str | None = args.token or os.environ.get("RUNTOP_TOKEN") or None
    if given is not None:
        return given
    kept = read_token(args.host, args.port) if args.port else None
    return kept or make_token()


def protobuf_available() -> bool:
    """Whether OTLP's protobuf bodies can be read here (the ``otlp`` extra is installed)."""
    from importlib.util import find_spec

    try:
        return (
            find_spec("opentelemetry.proto") is not None
            and find_spec("google.protobuf") is not None
        )
    except ImportError:  # find_spec imports the parent package, which may be missing
        return False


def otlp_http_line(url: str, protobuf: bool) -> str:
    """The banner's OTLP/HTTP line: where exporters send traces, and whether they can."""
    if protobuf:
        return f"  OTLP/HTTP: {url}/v1/traces (protobuf or JSON, the same token)"
    return (
        f"  OTLP/HTTP: {url}/v1/traces takes JSON only: exporters send protobuf by default "
        "and get 415 until pip install 'runtop-agents[otlp]'"
    )


def _otlp_grpc_port(port: int | None) -> int | None:
    """``--otlp-grpc [PORT]``: the port, once gRPC is known to be there to serve it."""
    if port is None:
        return None
    try:
        import grpc  # noqa: F401
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2  # noqa: F401
    except ImportError as error:
        raise CommandError(
            f"--otlp-grpc needs pip install 'runtop-agents[otlp]' ({error})"
        ) from None
    return port


async def _ray_executor(address: str, err: Console) -> Any:
    """``--ray [ADDRESS]``: join the cluster (or start a local one) before listening."""
    try:
        from run_manager.executors.ray import RayExecutor
    except ImportError as error:
        raise CommandError(f"--ray needs Ray: pip install 'runtop-agents[ray]' ({error})") from None
    where = address or "the cluster ray.init() finds (or a new local one)"
    err.print(f"runtop serve: joining Ray at {where} ...")
    executor = RayExecutor(address or None)
    try:
        hosts = await executor.placements()  # connects, within executor.connect_timeout
    except Exception as error:
        await executor.close()
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CommandError(f"cannot run on Ray at {where}: {first}") from None
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
