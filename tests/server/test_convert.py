"""Position conversion (byte offsets <-> LSP positions) and the fix-merging helpers, in process."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given
from lsprotocol import types

from shaderlint.server.code_actions import minimal_replacement
from shaderlint.server.convert import UTF8, UTF16, UTF32, PositionMap, encode_text, ts_point, ts_point_after

TEXT = st.lists(st.sampled_from(list("ab \t;/*\n\r") + ["\r\n", "😀", "漢", "ü", "\udcff", "\x00"]),
                max_size=40).map("".join)


def _char_offsets(text: str) -> list[int]:
    out, pos = [0], 0
    for ch in text:
        pos += len(encode_text(ch))
        out.append(pos)
    return out


def _lines(text: str) -> list[str]:
    """LSP lines: broken at \\n, \\r\\n and a lone \\r."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@given(TEXT)
def test_positions_round_trip(text):
    data = encode_text(text)
    for enc in (UTF8, UTF16, UTF32):
        pmap = PositionMap(data, enc)
        for off in _char_offsets(text):
            pos = pmap.position(off)
            back = pmap.offset(pos)
            # Offsets inside a CRLF map to the end of the line's content.
            assert back == off or data[back:off] in (b"\r", b"\n", b"\r\n")


def test_utf16_columns():
    text = "a😀漢\r\nx"
    pmap = PositionMap(encode_text(text), UTF16)
    assert pmap.position(len("a😀漢".encode())) == types.Position(line=0, character=4)
    assert pmap.position(len(encode_text(text))) == types.Position(line=1, character=1)
    assert pmap.offset(types.Position(line=0, character=3)) == len("a😀".encode())
    # Inside the surrogate pair: rounds down to the character's start.
    assert pmap.offset(types.Position(line=0, character=2)) == 1
    # Past the end of a line: the line's end (before CRLF); past the last line: the end of the text.
    assert pmap.offset(types.Position(line=0, character=99)) == len("a😀漢".encode())
    assert pmap.offset(types.Position(line=9, character=0)) == len(encode_text(text))
    assert PositionMap(encode_text(text), UTF32).position(len("a😀".encode())).character == 2
    assert PositionMap(encode_text(text), UTF8).position(len("a😀".encode())).character == 5


@given(TEXT)
def test_line_numbers_follow_lsp(text):
    data = encode_text(text)
    pmap = PositionMap(data, UTF16)
    lines = _lines(text)
    assert pmap.position(len(data)).line == len(lines) - 1


@given(TEXT, st.integers(0, 80), st.text(max_size=5))
def test_tree_sitter_points(text, at, inserted):
    data = encode_text(text)
    at = min(at, len(data))
    row, col = ts_point(data, at)
    assert row == data[:at].count(b"\n")
    assert col == at - (data[:at].rfind(b"\n") + 1)
    new = data[:at] + encode_text(inserted) + data[at:]
    assert ts_point_after((row, col), encode_text(inserted)) == ts_point(new, at + len(encode_text(inserted)))


@given(TEXT, TEXT)
def test_minimal_replacement(old_text, new_text):
    old, new = encode_text(old_text), encode_text(new_text)
    start, end, text = minimal_replacement(old, new)
    assert old[:start] + encode_text(text) + old[end:] == new
    assert start == 0 or not 0x80 <= old[start] < 0xC0 if start < len(old) else True
