"""``views.toml``: views kept and read back, one wrong view named beside the others, and
a damaged file named and never written over."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tui.views import View, ViewNotSaved, load_views, save_view


def test_a_view_saved_is_read_back_beside_the_others(tmp_path: Path) -> None:
    path = tmp_path / "home" / "views.toml"
    assert load_views(path).views == ()  # no file: no views, nothing wrong
    dear = View("dear", "cost:>0.01 duration:>30s", "tokens", True, ("status", "run", "tokens"))
    save_view(path, dear)
    save_view(path, View("failed", "status:failed", "started", False))
    save_view(path, View('odd "name" ü\x7f', 'has:"say \\"hi\\""'))
    book = load_views(path)
    assert book.problems == ()
    assert book.damaged is None
    assert book.names == ["dear", "failed", 'odd "name" ü\x7f']
    assert book.get("dear") == dear
    assert book.get('odd "name" ü\x7f') == View('odd "name" ü\x7f', 'has:"say \\"hi\\""')
    assert book.get("dear").hidden == {"agent", "started", "duration", "events", "damaged",
                                      "doing", "source"}  # fmt: skip
    save_view(path, View("dear", "cost:>1"))  # saved again: replaced, in its place
    assert load_views(path).names == ["dear", "failed", 'odd "name" ü\x7f']
    assert load_views(path).get("dear") == View("dear", "cost:>1")
    assert path.stat().st_mode & 0o077 == 0 or path.parent.stat().st_mode & 0o077 == 0


def test_a_view_that_cannot_be_used_is_named_and_the_others_are_used(tmp_path: Path) -> None:
    path = tmp_path / "views.toml"
    path.write_text(
        "[views.good]\n"
        'filter = "calls:>5"\n'
        "[views.badfilter]\n"
        'filter = "cost:>lots"\n'
        "[views.badsort]\n"
        'sort = "colour"\n'
        "[views.badcolumn]\n"
        'columns = ["status", "price"]\n'
        "[views.notatable]\n"
        "[other]\n"
        'kept = [1, 2.5, "x", {a = true}]\n'
    )
    book = load_views(path)
    assert book.names == ["good", "notatable"]
    said = "\n".join(book.problems)
    assert "view 'badfilter'" in said
    assert "'lots' is not a number" in said
    assert "view 'badsort'" in said
    assert "sort = 'colour': one of started" in said
    assert "view 'badcolumn'" in said
    assert "no column 'price'" in said
    save_view(path, View("new", "model:claude-*"))  # what runtop does not know is kept
    document = tomllib.loads(path.read_text())
    assert document["other"] == {"kept": [1, 2.5, "x", {"a": True}]}
    assert document["views"]["badsort"] == {"sort": "colour"}
    assert load_views(path).names == ["good", "notatable", "new"]


@pytest.mark.parametrize("damage", [b"[views.a\nfilter = 1", b"\xff\xfe not text", b"views = 3\n"])
def test_a_damaged_file_is_named_and_never_written_over(tmp_path: Path, damage: bytes) -> None:
    path = tmp_path / "views.toml"
    path.write_bytes(damage)
    book = load_views(path)
    assert book.views == ()
    assert book.damaged is not None
    assert str(path) in book.damaged
    with pytest.raises(ViewNotSaved, match="not saved") as refused:
        save_view(path, View("mine", "status:failed"))
    assert "left as it is" in str(refused.value) or "views is not a table" in str(refused.value)
    assert path.read_bytes() == damage
