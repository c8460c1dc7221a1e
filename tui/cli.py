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
import difflib
import importlib
import math
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, NoReturn

from inspector.actions import RUN_ACTIONS
from inspector.ledger import LedgerError, default_ledger_dir
from tui.commands.output import say
from tui.commands.samples import named_samples_restored
from tui.commands.targets import CommandError, UsageError, is_url
from tui.crash import DISTRIBUTION, EXIT_CRASHED, crash_line
from tui.settings import SettingsError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
"""A mistake in the command line itself: an unknown command or option, a value out of range."""
EXIT_INTERRUPTED: Final = 130

DECLARED: Final = (*(action.name for action in RUN_ACTIONS if action.command), "stats")
"""Commands whose module declares its own options: ``HELP`` (summary, description,
examples) and ``add_arguments(parser)``: the run actions' (``runtop cancel``, ...), and
``runtop stats``."""

COMMANDS: Final = {"ls", "show", "serve", "demo", "replay", "samples", *DECLARED}
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
  runtop approve RUN_ID                         say yes to the question a run waits on
  runtop deny RUN_ID --reason "not today"       or no
  runtop resume RUN_ID                          a new run with its recorded input
  runtop stats --by model                       model calls across runs: counts, latency, cost
  runtop serve --agents tui.demo:demo_agents    the attach API on http://127.0.0.1:8765
"""
"""Every form of the command line with an example each: the end of ``runtop --help``."""


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


class Parser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (and where to look), exit status 2."""

    def error(self, message: str) -> NoReturn:
        say(sys.stderr, f"{message} (see {self.prog} --help)")
        sys.exit(EXIT_USAGE)


def port_number(text: str) -> int:
    """A TCP port: 0 (one the system picks) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (0 to 65535; 0 picks one)")
    return port


def seconds(text: str) -> float:
    """A number of seconds, 0 or more."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is less than no time")
    return value


def pace(text: str) -> float:
    """A multiple of the demo's pace: more than 0 (``0.5`` twice as fast), at most 100."""
    value = _number(text)
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(
            f"{text} is no pace: more than 0 and at most 100 (0.5 is twice as fast, 2 half)"
        )
    return value


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a number")
    return value


def add_command(
    commands: argparse._SubParsersAction[Parser],
    name: str,
    summary: str,
    description: str,
    examples: str,
) -> Parser:
    """A subcommand whose ``--help`` says what it does and shows it done."""
    return commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=f"examples:\n{examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_places(command: Parser, dest: str, what: str) -> None:
    """Where ``command`` looks for runs: ``PATH_OR_URL`` arguments, and as many ``--from
    DIR_OR_URL`` as given, gathered into ``dest`` by :func:`main`."""
    command.add_argument("places", nargs="*", metavar="PATH_OR_URL", help=f"{what} {WHERE_DEFAULT}")
    command.add_argument(
        "--from",
        dest="more_places",
        action="append",
        default=[],
        metavar="DIR_OR_URL",
        help="a ledger directory or an attach server's URL, as a PATH_OR_URL; may be repeated",
    )
    command.set_defaults(places_into=dest)


TOKEN_HELP: Final = "an attach server's token (default: $RUNTOP_TOKEN or its token file)"
WHERE_DEFAULT: Final = "(default: $RUNTOP_LEDGER_DIR, else $RUNTOP_HOME/runs: ~/.runtop/runs)"


def build_parser() -> Parser:
    parser = Parser(
        prog="runtop",
        usage=USAGE,
        description="See, stop and replay AI agent runs from the terminal.",
        epilog=FORMS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", prog="runtop")
    ls = add_command(
        commands,
        "ls",
        "list the runs under ledger files, directories or attach servers",
        "One row per run, newest first: its status, id, skill, start, duration, events, "
        "tokens and cost. Into a pipe, plain text, one run a line.",
        "  runtop ls                                  the runs in ~/.runtop/runs\n"
        "  runtop ls ~/.runtop/samples --json         the samples, as a JSON array\n"
        "  runtop ls --from http://127.0.0.1:8765     a server's runs\n"
        "  runtop ls --filter status:failed           only the failed ones\n"
        "  runtop ls --view expensive --watch         through a view, as the runs change",
    )
    add_places(ls, "paths", "ledger files or directories, or attach servers' URLs")
    ls.add_argument("--json", action="store_true", help="print a JSON array of run summaries")
    ls.add_argument(
        "--filter",
        metavar="FILTER",
        help="only the runs this filter passes, as the app's / takes it: "
        'status:failed, skill:deploy, since:1h, has:"connection refused" (docs/filters.md)',
    )
    ls.add_argument(
        "--no-sessions",
        action="store_true",
        help="without paths, leave out the coding agents' sessions found in the home "
        "(~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp), as the app's option does",
    )
    ls.add_argument(
        "--view",
        metavar="NAME",
        help="the runs through a view kept in $RUNTOP_HOME/views.toml: its filter (with "
        "--filter's), sort and columns (the app's V saves one)",
    )
    ls.add_argument(
        "--watch",
        action="store_true",
        help="list again every second, as the runs change, until Ctrl-C",
    )
    ls.add_argument(
        "--no-cache",
        action="store_true",
        help="read every ledger, neither using nor writing the summary cache in "
        "~/.cache/runtop ($XDG_CACHE_HOME/runtop; $RUNTOP_HOME/cache when that is set; "
        "also: RUNTOP_NO_CACHE=1)",
    )
    show = add_command(
        commands,
        "show",
        "print the events of one run",
        "One run's events as the app's event stream reads them: streamed text gathered "
        "into paragraphs, a tool call on its result's line. A run id may be any unique "
        "start or end of it.",
        "  runtop show 7b3d8a60 --from ~/.runtop/samples        a run, by the end of its id\n"
        "  runtop show RUN_ID --timeline                        where its time went\n"
        "  runtop show RUN_ID --follow                          as it runs, until it ends\n"
        "  runtop show path/to/run.jsonl --json                 a ledger file, as JSON Lines",
    )
    show.add_argument(
        "target", metavar="PATH_OR_RUN_ID", help="a ledger file, or a run id (or part of one)"
    )
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
        "--from",
        dest="dir",
        action="append",
        metavar="DIR_OR_URL",
        help="where to look for a run id: a directory or an attach server's URL "
        f"{WHERE_DEFAULT}; may be repeated",
    )
    show.add_argument("--dir", dest="dir", action="append", help=argparse.SUPPRESS)
    serve = add_command(
        commands,
        "serve",
        "run agents with the attach API (HTTP + SSE)",
        "A run manager behind the attach API and OTLP ingest, until a signal. Clients on "
        "this machine find its token in ~/.runtop/tokens; it is kept for the next start "
        "on the same port.",
        "  runtop serve --agents tui.demo:demo_agents     the demo's agents, on port 8765\n"
        "  runtop serve --port 0 --otlp-grpc              any free port, and OTLP/gRPC\n"
        "  RUNTOP_TOKEN=secret runtop serve --host 0.0.0.0   beyond this machine",
    )
    serve.add_argument(
        "--ledger-dir",
        default=str(default_ledger_dir()),
        help=f"where runs write their ledgers {WHERE_DEFAULT}",
    )
    serve.add_argument(
        "--agents",
        metavar="MODULE:ATTR",
        help="the agents POST /api/agent/runs can start and resume re-issues: a list, or a "
        "function returning one (try tui.demo:demo_agents)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (this machine)")
    serve.add_argument("--port", type=port_number, default=8765, help="default: 8765; 0 picks one")
    serve.add_argument(
        "--token",
        help="the bearer token clients must send (default: $RUNTOP_TOKEN, else the one "
        "kept from this port's last start, else a new one)",
    )
    serve.add_argument(
        "--new-token",
        action="store_true",
        help="make a new token, even if one is kept or given (every client must learn it)",
    )
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
        "--budget",
        metavar="LIMITS",
        help="what each run it starts may spend: cost=DOLLARS, tokens=N[k|M], calls=N, "
        "time=N[s|m|h], ask=0.8 (or ask=off), comma-separated; at ask of a limit the run "
        "asks to go on, at the limit it is cancelled (example: cost=1.00,tokens=200k)",
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
    serve.add_argument(
        "--grace", type=seconds, default=10.0, help="seconds runs get to stop (default: 10)"
    )
    serve.add_argument(
        "--otlp-grpc",
        nargs="?",
        type=port_number,
        const=4317,
        metavar="PORT",
        help="also receive OpenTelemetry traces over OTLP/gRPC (extra runtop-agents[otlp]), "
        "with the same token as authorization metadata: default port 4317; 0 picks one",
    )
    serve.add_argument(
        "--every-trace",
        action="store_true",
        help="make every OpenTelemetry trace a run (by default only a trace with an agent, "
        "a model call, a tool call or an agent framework's step is one: a web service's "
        "own requests are not)",
    )
    serve.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="execute runs on a Ray cluster (extra runtop-agents[ray]): ADDRESS as ray.init "
        "takes it, default the cluster Ray finds or a new local one",
    )
    for sub in (ls, show):
        sub.add_argument("--token", help=TOKEN_HELP)
    demo = add_command(
        commands,
        "demo",
        "watch simulated agents run (their ledgers kept in ~/.runtop/runs)",
        "Simulated agents in an embedded run manager, watched in the app: they think, "
        "call tools, ask approvals and fail now and then. Their ledgers are written where "
        "runtop looks by default, so runtop and runtop ls show them again afterwards.",
        "  runtop demo\n  runtop demo --pace 0.5          twice as fast",
    )
    demo.add_argument(
        "--pace", type=pace, default=1.0, help="slower (>1) or faster (<1); default 1"
    )
    samples = add_command(
        commands,
        "samples",
        "six sample runs, copied into $RUNTOP_HOME/samples (~/.runtop/samples), in the app",
        "The six sample ledgers runtop ships (a finished research run, a failed deploy, a "
        "cancelled run, one waiting on an approval, a torn and a damaged ledger), copied "
        "into ~/.runtop/samples and opened in the app.",
        "  runtop samples\n"
        "  runtop samples --path                       copy them and print where\n"
        "  runtop ls ~/.runtop/samples                 then list them as text",
    )
    samples.add_argument(
        "--path", action="store_true", help="copy them and print the folder; no app"
    )
    replay = add_command(
        commands,
        "replay",
        "play past runs back as they happened",
        "Past runs played back in the app at their own pace (or faster): ledger files, "
        "directories of them, or an attach server's runs.",
        "  runtop replay ~/.runtop/runs --speed 10\n"
        "  runtop replay ~/.runtop/samples/run_20261128T143000012_4f1a9c2e7b3d8a60.jsonl\n"
        "  runtop replay http://127.0.0.1:8765 --speed max",
    )
    add_places(replay, "files", "ledger files, directories of ledgers, or attach servers' URLs")
    replay.add_argument("--speed", choices=["1", "2", "10", "max"], default="1")
    replay.add_argument("--token", help=TOKEN_HELP)
    for sub in (demo, replay, samples):
        sub.add_argument("--theme", help="a Textual theme (also from the command palette)")
        sub.add_argument("--read-only", action="store_true", help="turn every action off")
        sub.add_argument("--user", help="who the app's cancels and answers say asked")
    for name in DECLARED:
        module = importlib.import_module(f"tui.commands.{name}")
        module.add_arguments(add_command(commands, name, *module.HELP))
    return parser


def watch_parser() -> Parser:
    parser = Parser(
        prog="runtop",
        usage=USAGE,
        description="Watch agent runs live in ledger directories or files and attach "
        "servers. Other commands: runtop demo | samples | replay | ls | show | cancel | "
        "approve | deny | resume | stats | serve (each with --help).",
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


APP_OPTIONS: Final = {"--token": True, "--theme": True, "--read-only": False}
"""The app's options, each with whether it takes a value: before a command, they are its."""


def command_first(arguments: list[str]) -> list[str]:
    """``runtop --token abc ls DIR`` as ``runtop ls DIR --token abc``: the app's options
    typed before a command go to the command (which says so if it has no such option)."""
    at = 0
    while at < len(arguments):
        name, has_value, _ = arguments[at].partition("=")
        if name not in APP_OPTIONS:
            break
        at += 1 + (APP_OPTIONS[name] and not has_value)
    if 0 < at < len(arguments) and arguments[at] in COMMANDS:
        return [arguments[at], *arguments[at + 1 :], *arguments[:at]]
    return arguments


def meant_command(word: str) -> str | None:
    """The command ``word`` is a typo of (``lss``: ``ls``), when it names no path either."""
    if (
        word in COMMANDS
        or word.startswith("-")
        or is_url(word)
        or os.sep in word
        or os.path.lexists(word)
    ):
        return None
    close = difflib.get_close_matches(word, sorted(COMMANDS), n=1, cutoff=0.6)
    return close[0] if close else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    arguments = command_first(list(sys.argv[1:] if argv is None else argv))
    try:
        copied = named_samples_restored(arguments)
    except CommandError as error:
        say(sys.stderr, str(error))
        return EXIT_ERROR
    if copied is not None:
        say(sys.stderr, f"copied the sample runs runtop ships to {copied}")
    meant = meant_command(arguments[0]) if arguments else None
    if meant is not None:
        said = f"{arguments[0]} is no command, file or directory; did you mean runtop {meant}?"
        say(sys.stderr, said)
        return EXIT_USAGE
    if arguments and arguments[0] in COMMANDS | {"-h", "--help", "--version"}:
        parser = build_parser()
        args, extra = parser.parse_known_args(arguments)
        command = args.command
        if extra:  # said by the command's own parser, whose options they are not
            subparser = f"runtop {command}" if command else "runtop"
            said = f"unrecognized arguments: {' '.join(extra)} (see {subparser} --help)"
            say(sys.stderr, said)
            return EXIT_USAGE
        if hasattr(args, "places_into"):  # --from DIR_OR_URL: one more place to look
            setattr(args, args.places_into, [*args.places, *args.more_places])
    else:
        args = watch_parser().parse_args(arguments)
        command = "watch"
    try:
        module = importlib.import_module(f"tui.commands.{command}")
        if command == "ls" and args.json:
            status: int = module.run_json(args)  # JSON needs no consoles: no Rich loaded
        else:
            status = module.run(args, *_consoles(command))
    except (UsageError, SettingsError) as error:
        say(sys.stderr, str(error))
        return EXIT_USAGE
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
