"""Exact-match replacement on text (`moot.workspace.edits`) and text encodings (`text`)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from moot.workspace.edits import EditFailed, apply_edits, closest_block
from moot.workspace.text import (
    decode,
    dominant_newline,
    encode,
    looks_binary,
    sniff_encoding,
    split_lines,
)


@dataclass(frozen=True)
class E:
    old: str
    new: str
    replace_all: bool = False


def test_a_unique_match_is_replaced_and_its_line_reported() -> None:
    text, done = apply_edits("a\nb\nc\n", [E("b", "B")])
    assert (text, done) == ("a\nB\nc\n", [(2, 1)])


def test_an_ambiguous_match_names_its_lines_unless_replace_all() -> None:
    with pytest.raises(EditFailed, match=r"matches 2 places \(lines 1, 3\)"):
        apply_edits("x = 1\ny\nx = 1\n", [E("x = 1", "x = 2")])
    text, done = apply_edits("x = 1\ny\nx = 1\n", [E("x = 1", "x = 2", replace_all=True)])
    assert (text, done) == ("x = 2\ny\nx = 2\n", [(1, 2)])


def test_empty_and_no_op_edits_are_refused() -> None:
    with pytest.raises(EditFailed, match="old is empty"):
        apply_edits("abc", [E("", "x")])
    with pytest.raises(EditFailed, match="the same"):
        apply_edits("abc", [E("b", "b")])


def test_not_found_shows_the_closest_lines_with_numbers() -> None:
    text = "def a():\n    return 1\n\ndef total(items):\n    return sum(items)\n"
    with pytest.raises(EditFailed) as info:
        apply_edits(text, [E("def totl(items):\n    return sum(item)", "x")])
    message = str(info.value)
    assert "Closest match (lines 4-5)" in message
    assert "    4\tdef total(items):" in message and "    5\t    return sum(items)" in message


def test_not_found_without_anything_similar_says_so() -> None:
    with pytest.raises(EditFailed, match="no similar lines"):
        apply_edits("alpha\nbeta\n", [E("zzzzqqqq", "x")])


def test_old_copied_with_line_numbers_gets_a_hint() -> None:
    with pytest.raises(EditFailed, match="line numbers"):
        apply_edits("alpha\nbeta\n", [E("    1\talpha\n    2\tbeta", "x")])


def test_crlf_text_matches_an_old_written_with_lf_and_stays_crlf() -> None:
    text, _ = apply_edits("one\r\ntwo\r\nthree\r\n", [E("one\ntwo", "uno\ndos\nmas")])
    assert text == "uno\r\ndos\r\nmas\r\nthree\r\n"


def test_lf_text_is_left_lf() -> None:
    text, _ = apply_edits("one\ntwo\n", [E("one", "uno\nun")])
    assert text == "uno\nun\ntwo\n"


def test_edits_apply_in_order_and_a_failure_names_the_edit() -> None:
    text, done = apply_edits("a b c", [E("a", "x"), E("x b", "y")])
    assert (text, done) == ("y c", [(1, 1), (1, 1)])
    with pytest.raises(EditFailed, match="edit 2 of 2: old was not found"):
        apply_edits("a b c", [E("a", "x"), E("a", "z")])


def test_closest_block_stays_fast_on_a_large_file() -> None:
    lines = [f"line number {i} with some words" for i in range(50_000)]
    found = closest_block(lines, ["line numbr 4242 with some words"])
    assert found is not None and found[0] == 4243


# Encodings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "bom"),
    [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")],
)
def test_bom_files_round_trip(codec: str, bom: bytes) -> None:
    data = bom + "héllo\r\nwörld\r\n".encode(codec)
    encoding = sniff_encoding(data)
    assert (encoding.codec, encoding.bom) == (codec, bom)
    assert not looks_binary(data)
    text = decode(data, encoding)
    assert text == "héllo\r\nwörld\r\n"
    assert encode(text, encoding) == data


def test_invalid_utf8_round_trips_byte_for_byte() -> None:
    data = b"caf\xe9 au lait\n\xff\xfe not utf-8\n"
    encoding = sniff_encoding(data)
    assert encode(decode(data, encoding).replace("lait", "miel"), encoding) == data.replace(
        b"lait", b"miel"
    )


def test_binary_detection() -> None:
    assert looks_binary(b"text\x00more")
    assert looks_binary(bytes(range(256)) * 4)
    assert not looks_binary(b"plain text\n" * 100)
    assert not looks_binary("ünïcödé ".encode() * 1000)  # a multi-byte char cut at the end is fine
    assert not looks_binary(b"caf\xe9 au lait, cr\xe8me br\xfbl\xe9e\n")  # Latin-1: a few bad bytes
    assert not looks_binary(b"")


def test_newlines() -> None:
    assert dominant_newline("a\r\nb\r\nc\n") == "\r\n"
    assert dominant_newline("a\nb\nc\r\n") == "\n"
    assert split_lines("a\r\nb\n\nc") == ["a", "b", "", "c"]
    assert split_lines("") == []
