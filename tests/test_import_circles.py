"""No module imports itself round a circle, in any package: each arrow points one way.

A circle of modules, even one drawn only under ``TYPE_CHECKING`` or inside a method, is two
modules that each need the other: neither can be read, moved or tested alone. The
contracts in ``pyproject.toml`` order the packages; this finds the circles they cannot
name, between any two modules of one package.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

PACKAGES = ("ledger_reader", "run_manager", "inspector", "tui")


def circles(*packages: str) -> list[list[str]]:
    """Every set of modules that import each other round a circle (the strongly connected
    components of the import graph with more than one module, or a module importing
    itself), each sorted, found by Tarjan's algorithm without recursion."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step = next(imported, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(step)))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                itself = module in graph.find_modules_directly_imported_by(module)
                if len(component) > 1 or itself:
                    found.append(sorted(component))
    return sorted(found)


def test_no_package_has_an_import_circle() -> None:
    assert circles(*PACKAGES) == []


def test_a_circle_of_two_files_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "timeline.py").write_text("from circled import fill\n")
    (package / "fill.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from circled import timeline\n"
    )
    (package / "alone.py").write_text("import circled.fill\n")
    (package / "screen.py").write_text("def open_it():\n    from circled import screen_b\n")
    (package / "screen_b.py").write_text("def open_it():\n    from circled import screen\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert circles("circled") == [
        ["circled.fill", "circled.timeline"],
        ["circled.screen", "circled.screen_b"],
    ]
