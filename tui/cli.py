"""The ``runtop`` command line: parses the arguments and runs one command.

Each command is a module of :mod:`tui.commands`, imported only when asked
for: ``runtop ls`` and ``runtop show`` never load Textual (they answer in
a fraction of a second), and only ``serve`` and ``demo`` load the run
manager. Every failure a user can cause is one line on stderr and a
non-zero exit; so is a crash, whose traceback is kept in a file.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from inspector.ledger import LedgerError, default_ledger_dir
from tui.commands.output import say
from tui.commands.targets import CommandError
from tui.crash import EXIT_CRASHED, crash_line

if TYPE_CHECKING:
    from rich.console import Console

EXIT_ERROR: Final = 1
EXIT_INTERRUPTED: Final = 130

COMMANDS: Final = {"ls", "show", "cancel", "serve", "demo", "replay", "samples"}
"""The subcommands; anything else is the app's paths (``runtop [PATH_OR_URL...]``)."""


USAGE: Final = """\
runtop [PATH|URL ...] [--token TOKEN] [--theme THEME] [--read-only]
       runtop COMMAND ...     (runtop COMMAND --help: its options)
       runtop --version"""

FORMS: Final = """\
the app (no COMMAND):
  runtop [PATH|URL ...]  watch ledger directories or files and attach servers, live
                         (default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)
    --token TOKEN        the attach servers' token (default: $RUNTOP_TOKEN, else the file
                         runtop serve wrote on this machine); ls, show and cancel take it too
    --theme THEME        a Textual theme (also from the command palette); demo and replay too
    --read-only          turn every action off (cancel, resume, approve); demo and replay too
    --user NAME          who cancels and answers to approvals say asked (default: the OS user)

examples, one a form:
  runtop                                        the runs in ~/.runtop/runs, live
  runtop ~/.runtop/runs http://127.0.0.1:8765   a directory and a server in one table
  runtop demo                                   simulated agents, watched live
  runtop samples                                six sample runs (in ~/.runtop/samples)
  runtop replay ~/.runtop/runs --speed 10       past runs played back, ten times as fast
  runtop ls --json                              the runs as a JSON array
  runtop show RUN_ID --timeline                 where one run's time went
  runtop cancel RUN_ID --reason "runaway"       ask a live run to stop
  runtop serve --agents tui.demo:demo_agents    the attach API on http://127.0.0.1:8765
"""
"""Every form of the command line with an example each: the end of ``runtop --help``."""


DISTRIBUTION: Final = "runtop-agents"
"""The name runtop is installed by: ``runtop`` on the package index is another project."""


def version() -> str:
    """``runtop X.Y.Z``, as installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return f"runtop {installed(DISTRIBUTION)}"
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "runtop (not installed)"


class VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked (importlib.metadata
    is not paid by every ``runtop ls``)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print runtop's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        sys.stdout.write(f"{version()}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="runtop",
        usage=USAGE,
        description="See, stop and replay AI agent runs from the terminal.",
        epilog=FORMS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", prog="runtop")
    ls = commands.add_parser(
        "ls", help="list the runs under ledger files, directories or attach servers"
    )
    ls.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_URL",
        help="ledger files or directories, or attach servers' URLs "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    ls.add_argument("--json", action="store_true", help="print a JSON array of run summaries")
    ls.add_argument(
        "--filter",
        metavar="FILTER",
        help="only the runs this filter passes, as the app's / takes it: "
        'status:failed, skill:deploy, since:1h, has:"connection refused" (docs/filters.md)',
    )
    ls.add_argument(
        "--no-cache",
        action="store_true",
        help="read every ledger, neither using nor writing the summary cache in "
        "$RUNTOP_HOME/cache (also: RUNTOP_NO_CACHE=1)",
    )
    show = commands.add_parser("show", help="print the events of one run")
    show.add_argument("target", metavar="PATH_OR_RUN_ID", help="a ledger file or a run id")
    show.add_argument("--json", action="store_true", help="print JSON Lines, one per ledger line")
    show.add_argument(
        "--timeline",
        action="store_true",
        help="where the run's time went: a bar per model call, tool call, approval and "
        "child run (with --json, the nodes with their start, end and parent)",
    )
    show.add_argument(
        "--raw",
        action="store_true",
        help="every event on its own line (without it, streamed text and thinking are "
        "gathered into paragraphs and a tool call shares its result's line, as in the app)",
    )
    show.add_argument(
        "--messages",
        action="store_true",
        help="under each model call, the messages it was sent and what it answered",
    )
    show.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="keep printing as the ledger grows, until the run ends or Ctrl-C",
    )
    show.add_argument(
        "--dir",
        "--from",
        dest="dir",
        action="append",
        metavar="DIR_OR_URL",
        help="where to look for a run id: a directory or an attach server's URL "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs); may be repeated",
    )
    cancel = commands.add_parser("cancel", help="ask a run to stop")
    cancel.add_argument("run_id", metavar="RUN_ID")
    cancel.add_argument("--reason", help="why: recorded in the ledger and shown")
    cancel.add_argument("--user", help="who asks, as the ledger records it (default: the OS user)")
    cancel.add_argument(
        "--from",
        dest="where",
        metavar="DIR_OR_URL",
        default=str(default_ledger_dir()),
        help="the run's ledger directory (a control file is written) or an attach "
        "server's URL (default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    serve = commands.add_parser("serve", help="run agents with the attach API (HTTP + SSE)")
    serve.add_argument(
        "--ledger-dir",
        default=str(default_ledger_dir()),
        help="where runs write their ledgers "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    serve.add_argument(
        "--agents",
        metavar="MODULE:ATTR",
        help="the agents POST /api/agent/runs can start and resume re-issues: a list, or a "
        "function returning one (try tui.demo:demo_agents)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (this machine)")
    serve.add_argument("--port", type=int, default=8765, help="default: 8765; 0 picks one")
    serve.add_argument("--read-only", action="store_true", help="refuse every POST (403)")
    serve.add_argument(
        "--retain",
        metavar="RULE",
        default="count=50k,size=20G",
        help="how much of the ledger directory is kept: count=N, size=N[KMGT], age=N[smhd], "
        "comma-separated, or 'all' (default: count=50k,size=20G; the oldest finished "
        "ledgers go first)",
    )
    serve.add_argument(
        "--shared-ledger-dir",
        action="store_true",
        help="take a --ledger-dir another user owns or may write into, with a warning (it is "
        "refused otherwise: whoever can write there can cancel and resume runs)",
    )
    serve.add_argument(
        "--web",
        action="store_true",
        help="also serve the app in a browser, at /web/ behind the same token "
        "(extra runtop-agents[web]); each page runs the app attached to this server",
    )
    serve.add_argument(
        "--finish-runs",
        action="store_true",
        help="on exit, let live runs finish (up to --grace seconds) instead of cancelling them",
    )
    serve.add_argument("--grace", type=float, default=10.0, help="seconds runs get to stop")
    serve.add_argument(
        "--otlp-grpc",
        nargs="?",
        type=int,
        const=4317,
        metavar="PORT",
        help="also receive OpenTelemetry traces over OTLP/gRPC (extra runtop-agents[otlp]), "
        "with the same token as authorization metadata: default port 4317; 0 picks one",
    )
    serve.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="execute runs on a Ray cluster (extra runtop-agents[ray]): ADDRESS as ray.init "
        "takes it, default the cluster Ray finds or a new local one",
    )
    for sub in (ls, show, cancel):
        sub.add_argument(
            "--token", help="an attach server's token (default: $RUNTOP_TOKEN or its token file)"
        )
    demo = commands.add_parser("demo", help="watch simulated agents run (ledgers are kept)")
    demo.add_argument("--pace", type=float, default=1.0, help="slower (>1) or faster (<1)")
    samples = commands.add_parser(
        "samples",
        help="six sample runs, copied into $RUNTOP_HOME/samples (~/.runtop/samples), in the app",
    )
    samples.add_argument(
        "--path", action="store_true", help="copy them and print the folder; no app"
    )
    replay = commands.add_parser("replay", help="play past runs back as they happened")
    replay.add_argument(
        "files", nargs="+", metavar="PATH", help="ledger files, or directories of ledgers"
    )
    replay.add_argument("--speed", choices=["1", "2", "10", "max"], default="1")
    for sub in (demo, replay, samples):
        sub.add_argument("--theme", help="a Textual theme (also from the command palette)")
        sub.add_argument("--read-only", action="store_true", help="turn every action off")
        sub.add_argument("--user", help="who the app's cancels and answers say asked")
    return parser


def watch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="runtop",
        usage=USAGE,
        description="Watch agent runs live in ledger directories or files and attach "
        "servers. Other commands: runtop demo | replay | ls | show | cancel | serve "
        "(each with --help).",
        epilog=FORMS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_URL",
        help="ledger directories or files, or attach servers (http://host:port) "
        "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)",
    )
    parser.add_argument(
        "--token",
        help="the attach servers' bearer token (default: $RUNTOP_TOKEN, else the file "
        "runtop serve wrote on this machine)",
    )
    parser.add_argument("--theme", help="a Textual theme (also from the command palette)")
    parser.add_argument("--read-only", action="store_true", help="turn every action off")
    parser.add_argument(
        "--no-sessions",
        action="store_true",
        help="without paths, leave out the coding agents' sessions found in the home "
        "(~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp)",
    )
    parser.add_argument("--user", help="who the app's cancels and answers say asked")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in COMMANDS | {"-h", "--help", "--version"}:
        args = build_parser().parse_args(arguments)
        command = args.command
    else:
        args = watch_parser().parse_args(arguments)
        command = "watch"
    try:
        module = importlib.import_module(f"tui.commands.{command}")
        if command == "ls" and args.json:
            status: int = module.run_json(args)  # JSON needs no consoles: no Rich loaded
        else:
            status = module.run(args, *_consoles(command))
    except (CommandError, LedgerError) as error:
        say(sys.stderr, str(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `runtop show ... | head`: the reader left; say nothing more. What stdout still
        # buffers goes to /dev/null, or flushing it at exit would fail again, on stderr.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:  # a bug: one line, the traceback kept in a file
        say(sys.stderr, crash_line(error))
        return EXIT_CRASHED
    return status


def _consoles(command: str) -> tuple[Console, Console]:
    """The consoles a command prints on: stdout's and stderr's."""
    from rich.console import Console

    class PipedConsole(Console):
        """A console whose reader may leave: :func:`main` ends quietly, status 0 (Rich's
        own console exits with status 1)."""

        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    out = PipedConsole(highlight=False, markup=False, emoji=False, soft_wrap=command == "show")
    if not out.is_terminal:
        out.width = 240
    return out, Console(stderr=True, highlight=False, markup=False, emoji=False)


if __name__ == "__main__":
    sys.exit(main())
