"""Words found in JSON lines by their bytes first: escaped as writers escape them, in
any case the smart case allows, across read blocks, past torn, damaged and huge lines."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from ledger_reader.text_search import FileSearch, Phrase, file_holds


def event(seq: int, output: Any, **extra: Any) -> dict[str, Any]:
    return {
        "run_id": "r",
        "seq": seq,
        "type": "tool_result",
        "payload": {"output": output, **extra},
    }


def write(path: Path, *lines: bytes | dict[str, Any], ascii_only: bool = False) -> Path:
    path.write_bytes(
        b"".join(
            item
            if isinstance(item, bytes)
            else json.dumps(item, ensure_ascii=ascii_only).encode() + b"\n"
            for item in lines
        )
    )
    return path


def found(path: Path, text: str, **options: Any) -> list[int]:
    """The numbers of the lines holding ``text``."""
    data = path.read_bytes()
    hits = list(FileSearch(path, Phrase(text), **options))
    numbers = [data.count(b"\n", 0, hit.start) for hit in hits]
    if options.get("start", 0) == 0:  # numbered by the search as counted here
        numbered = list(FileSearch(path, Phrase(text), numbered=True, **options))
        assert [hit.number for hit in numbered] == numbers
    assert all(data[hit.start : hit.end] == hit.line for hit in hits)
    return numbers


@pytest.mark.parametrize(
    "words",
    ['say "hi"', "C:\\temp\\new", "café", "日本語", "two\nlines", 'a"b', "tab\there", "x/y", "<&>"],
)
@pytest.mark.parametrize("writer", ["raw", "ascii", "ascii-upper", "msgspec"])
def test_words_escaped_in_the_file_are_found_as_typed(
    tmp_path: Path, words: str, writer: str
) -> None:
    text = f"before {words} after"
    if writer == "msgspec":
        held = msgspec.json.encode(event(2, text)) + b"\n"
    else:
        held = json.dumps(event(2, text), ensure_ascii=writer != "raw").encode() + b"\n"
        if writer == "ascii-upper":  # \u00e9 as \u00E9: some writers use capital hex
            held = held.replace(b"\\u00e9", b"\\u00E9").replace(b"\\u65e5", b"\\u65E5")
    path = write(tmp_path / "run.jsonl", event(1, "nothing here"), held, event(3, "nor here"))
    assert found(path, words) == [1]
    assert found(path, words + " after") == [1]


def test_a_phrase_is_found_in_strings_not_in_field_names(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", event(1, "the output"), event(2, "said payload"))
    assert found(path, "payload") == [1]
    assert found(path, "output") == [0]  # the value, not the key of line 2
    assert found(path, "run_id") == []


def test_without_a_capital_case_is_ignored_and_with_one_it_is_not(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", event(1, "Timeout"), event(2, "timeout"), event(3, "TIME"))
    assert found(path, "timeout") == [0, 1]
    assert found(path, "Timeout") == [0]
    assert found(path, "time") == [0, 1, 2]
    # The fold of the bytes sets 0x20 on every byte: "@" folds to "`"; the check decides.
    path = write(tmp_path / "marks.jsonl", event(1, "a@b"), event(2, "a`b"))
    assert found(path, "a`b") == [1]


def test_a_phrase_across_every_read_block_boundary_is_found(tmp_path: Path) -> None:
    """Blocks end at a line end, so no phrase is cut: tried at every offset across one."""
    for pad in range(80):
        path = write(
            tmp_path / "run.jsonl", event(1, "x" * pad), event(2, "y" * pad + " quetzalcoatl z")
        )
        assert found(path, "quetzalcoatl", block=64) == [1], pad
        assert found(path, "Quetzalcoatl".lower(), block=97) == [1], pad


def test_a_torn_last_line_is_not_searched_until_it_is_whole(tmp_path: Path) -> None:
    whole = json.dumps(event(2, "late words")).encode()
    path = write(tmp_path / "run.jsonl", event(1, "early"), whole[:-5])
    search = FileSearch(path, Phrase("late words"))
    assert list(search) == []
    first_line_end = len(path.read_bytes()) - len(whole[:-5])
    assert search.searched == first_line_end  # the torn line is searched again, later
    with path.open("ab") as file:
        file.write(whole[-5:] + b"\n")
    assert found(path, "late words", start=search.searched) == [1]


def test_a_damaged_line_is_searched_in_its_strings_and_the_event_it_ends_in(
    tmp_path: Path,
) -> None:
    torn_then_whole = (
        b'{"run_id":"r","seq":2,"payload":{"output":"half a sen'
        + json.dumps(event(3, "recovered words")).encode()
    )
    path = write(
        tmp_path / "run.jsonl",
        event(1, "fine"),
        torn_then_whole + b"\n",
        b'{"not json at all", "but it says \\"quoted words\\"" ,,,\n',
        event(4, "fine again"),
    )
    assert found(path, "recovered words") == [1]
    assert found(path, 'says "quoted words"') == [2]
    assert found(path, "fine again") == [3]


def test_a_huge_line_is_skipped_unread_and_the_lines_after_it_are_searched(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "run.jsonl",
        event(1, "needle " + "x" * 5000),  # over the limit: the readers skip it too
        event(2, "y" * 3000 + " needle"),  # longer than a block, under the limit
        event(3, "needle at the end"),
    )
    assert found(path, "needle", block=1024, max_line_bytes=4096) == [1, 2]


def test_a_json_document_written_over_many_lines_is_searched_line_by_line(
    tmp_path: Path,
) -> None:
    """A Gemini CLI session is one JSON document, pretty-printed."""
    document = {"messages": [{"type": "user", "content": 'find "the answer"'}, {"text": "ok"}]}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(document, indent=2))
    assert len(found(path, 'find "the answer"')) == 1
    assert found(path, "messages") == []


def test_a_stopped_search_says_so(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", *[event(n, "nothing") for n in range(1, 100)])
    stop = threading.Event()
    stop.set()
    search = FileSearch(path, Phrase("nothing at all"), stop=stop)
    assert list(search) == []
    assert search.stopped
    assert search.searched == 0


def test_file_holds_says_how_far_it_searched(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", event(1, "one"), event(2, "two"), event(3, "three"))
    size = path.stat().st_size
    assert file_holds(path, Phrase("four")) == (False, size)
    held, end = file_holds(path, Phrase("two"))
    assert held
    assert path.read_bytes()[:end].endswith(b'"two"}}\n')


ALPHABET = ["a", "b", "A", "é", "É", '"', "\\", "\n", " ", "/", "日", "x"]


def test_the_search_agrees_with_decoding_every_line(tmp_path: Path) -> None:
    """Random strings written by three writers, random phrases: the lines the byte search
    finds are exactly those whose decoded strings hold the phrase (smart case)."""
    rng = random.Random(36)
    lines: list[bytes] = []
    strings: list[list[str]] = []
    for seq in range(400):
        said = ["".join(rng.choices(ALPHABET, k=rng.randint(0, 12))) for _ in range(3)]
        record = event(seq, said[0], note=said[1], more=[said[2]])
        writer = rng.choice(["raw", "ascii", "msgspec"])
        if writer == "msgspec":
            lines.append(msgspec.json.encode(record) + b"\n")
        else:
            lines.append(json.dumps(record, ensure_ascii=writer == "ascii").encode() + b"\n")
        strings.append([*said, "r", "tool_result"])
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(lines))

    def holds(text: str, phrase: str) -> bool:
        fold = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
        if phrase.translate(fold) != phrase:
            return phrase in text
        return phrase.translate(fold) in text.translate(fold)

    for _ in range(150):
        phrase = "".join(rng.choices(ALPHABET, k=rng.randint(1, 3)))
        wanted = [n for n, said in enumerate(strings) if any(holds(s, phrase) for s in said)]
        assert found(path, phrase, block=256) == wanted, phrase


def test_a_document_without_a_last_newline_is_searched_to_its_end(tmp_path: Path) -> None:
    """A JSON document written whole (no ``\\n`` at its end) is not a torn line."""
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"messages": [{"content": "the final words"}]}))
    assert list(FileSearch(path, Phrase("final words"))) == []  # as a torn line: not yet
    hits = list(FileSearch(path, Phrase("final words"), last_line=True))
    assert [hit.line for hit in hits] == [path.read_bytes()]
    long = tmp_path / "long.json"
    long.write_text(json.dumps({"text": "x" * 3000 + " the final words"}))
    assert len(list(FileSearch(long, Phrase("final words"), last_line=True, block=1024))) == 1
