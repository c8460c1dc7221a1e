"""A crash said in one line on stderr; its full traceback kept in a file.

The app restores the terminal before it returns (Textual does that on its
way out), so the line lands on a normal screen, and the exit status says
the run failed.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path
from typing import Final

from inspector.ledger import make_private_dir, runtop_home

EXIT_CRASHED: Final = 70
"""The exit status of a crash: ``EX_SOFTWARE`` of sysexits.h, an internal error."""


def keep_traceback(error: BaseException) -> Path:
    """Write ``error``'s traceback to a new file (mode 0600); return its path.

    In ``$RUNTOP_HOME`` (``~/.runtop``), else the temporary directory when
    that cannot be written.
    """
    import tempfile  # only on a crash: not on every ``runtop ls``

    text = "".join(traceback.format_exception(error))
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    for directory in (runtop_home(), Path(tempfile.gettempdir())):
        try:
            make_private_dir(directory)
            fd, name = tempfile.mkstemp(prefix=f"crash-{stamp}-", suffix=".txt", dir=directory)
        except OSError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as report:
            report.write(text)
        return Path(name)
    raise OSError("no directory to keep the traceback in")


DISTRIBUTION: Final = "runtop-agents"
"""The name runtop is installed by: ``runtop`` on the package index is another project."""


def issues_address(project_urls: list[str]) -> str | None:
    """The address to report a bug at, from the package's ``Project-URL`` lines (``Issues,
    https://...`` as ``[project.urls]`` writes them), or ``None`` when it names none."""
    for line in project_urls:
        label, _, address = line.partition(",")
        if label.strip().lower() in {"issues", "bug tracker", "bugs"} and address.strip():
            return address.strip()
    return None


def installed_issues_address() -> str | None:
    """:func:`issues_address` of runtop as installed (``None`` from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        return issues_address(metadata(DISTRIBUTION).get_all("Project-URL") or [])
    except PackageNotFoundError:
        return None


def crash_line(error: BaseException) -> str:
    """The one line a crash is said in (its traceback kept in a file first), naming where to
    report it when the package says where."""
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    try:
        where = f"the full traceback is in {keep_traceback(error)}"
    except OSError as failure:
        where = f"and its traceback could not be kept ({failure})"
    address = installed_issues_address()
    report = f"Please report it at {address}" if address else "Please report it"
    return f"crashed with {what}; {where}. {report}."
