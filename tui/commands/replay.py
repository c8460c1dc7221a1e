"""``runtop replay FILE...``: past runs played back in the app as they happened."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from inspector import SPEEDS, ReplaySource
from tui.app import make_app, run_until_exit
from tui.commands.targets import CommandError
from tui.settings import settings_from


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    files = [Path(path) for path in args.files]
    for path in files:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
    source = ReplaySource(list(files), speed=SPEEDS[args.speed], name="replay")
    return run_until_exit(make_app(settings_from(args), [source]))
