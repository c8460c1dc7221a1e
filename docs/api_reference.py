"""Build the API reference from the docstrings: ``make docs`` (``docs/api_reference.py DIR``).

pdoc renders the modules below as HTML, reading their Google-style docstrings.
Any warning it gives (an annotation it cannot resolve, a docstring it cannot
parse) fails the build, and so does a public class, function or method
without a docstring: ``make test`` builds it, so the reference cannot rot
unnoticed.

pdoc rather than MkDocs with mkdocstrings: the reference is the docstrings and
nothing else (the guides are these Markdown files, read where they are), and
pdoc makes it from the modules as they import, ``__all__`` and all, with one
package and no site, theme or configuration to keep.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Final

MODULES: Final = (
    "run_manager",
    "ledger_reader.events",
    "run_manager.server.standalone",
    "run_manager.server.attach",
    "run_manager.server.tokens",
    "run_manager.executors",
    "run_manager.executors.ray",
    "inspector.source",
    "inspector.ledger_source",
    "inspector.remote_source",
    "inspector.manager_source",
)
"""The public API, a page each: the manager and what runs record with, the events its
hub and ledgers carry, the attach server, the executors, and the inspector's sources."""


def own_docstring(cls: type) -> str:
    """The docstring a class says itself: pdoc shows a base class's where a class has none
    (every ledger event would read "An event of a type the ledger defines"), and a
    dataclass without one is given its signature."""
    said = vars(cls).get("__doc__") or ""
    return "" if said.startswith(f"{cls.__name__}(") else said


def undocumented(modules: list[object]) -> Iterator[str]:
    """The public classes, functions and methods of ``modules`` that have no docstring."""
    import pdoc.doc

    for module in modules:
        assert isinstance(module, pdoc.doc.Module)
        for member in module.members.values():
            if member.name.startswith("_") or isinstance(member, pdoc.doc.Variable):
                continue
            if not member.docstring or (
                isinstance(member, pdoc.doc.Class) and not own_docstring(member.obj)
            ):
                yield member.fullname
            if isinstance(member, pdoc.doc.Class):
                for own in member.own_members:
                    public = not own.name.startswith("_")
                    if public and not isinstance(own, pdoc.doc.Variable) and not own.docstring:
                        yield own.fullname


def build(output: Path, modules: tuple[str, ...] = MODULES) -> list[str]:
    """Write the reference of ``modules`` to ``output``; what is wrong with it (nothing,
    when it is built clean)."""
    import pdoc
    import pdoc.doc
    import pdoc.render

    pdoc.render.configure(docformat="google", footer_text="runtop: the run manager's API")
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*modules, output_directory=output)
        documented = [pdoc.doc.Module.from_name(name) for name in modules]
    problems += [f"pdoc: {warning.message}" for warning in caught]
    problems += [f"no docstring: {name}" for name in undocumented(list(documented))]
    return problems


def main(argv: list[str]) -> int:
    """Build into ``argv[0]`` (default ``build/api``); exit status 1 on any problem."""
    output = Path(argv[0] if argv else "build/api")
    problems = build(output)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"the API reference has {len(problems)} problems", file=sys.stderr)
        return 1
    print(f"the API reference: {output / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
