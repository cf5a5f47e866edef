"""Engine <-> lsprotocol: the one place where positions are converted.

Inside shaderlint every position is a byte offset into the document's UTF-8
bytes. LSP positions are (line, character) with characters counted in the
negotiated encoding: UTF-16 code units unless the client offered UTF-8 or
UTF-32 (``general.positionEncodings``). Lines end at ``\\n``, ``\\r\\n`` or a
lone ``\\r``, as in LSP and in :class:`shaderlint.model.source.Source`, whose
line table is reused here. tree-sitter points (row, byte column, rows counted
at ``\\n`` only) are computed here too, for incremental re-parsing.

Document text arrives as JSON strings, which may hold lone surrogates (a
client's rendering of undecodable bytes): such text is encoded with
``surrogatepass`` so that every character keeps a fixed byte length and
positions round-trip.
"""

from __future__ import annotations

import bisect
import os
from pathlib import Path
from typing import Any

from lsprotocol import types

from shaderlint.diagnostics import Diagnostic, Severity
from shaderlint.model.source import Source
from shaderlint.rules.registry import get_rule

UTF8 = types.PositionEncodingKind.Utf8.value
UTF16 = types.PositionEncodingKind.Utf16.value
UTF32 = types.PositionEncodingKind.Utf32.value

SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def encode_text(text: str) -> bytes:
    """Document text -> the bytes the engine lints (lone surrogates kept, 3 bytes each)."""
    return text.encode("utf-8", "surrogatepass")


def decode_bytes(data: bytes) -> str:
    """Inverse of :func:`encode_text`; undecodable bytes become U+FFFD (one character each run)."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def _units(segment: bytes, encoding: str) -> int:
    if encoding == UTF8 or segment.isascii():
        return len(segment)
    text = decode_bytes(segment)
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _char_units(ch: str, encoding: str) -> int:
    if encoding == UTF8:
        return len(encode_text(ch))
    if encoding == UTF32:
        return 1
    return 2 if ord(ch) > 0xFFFF else 1


class PositionMap:
    """Byte offset <-> LSP position for one version of a document."""

    def __init__(self, data: bytes, encoding: str = UTF16, source: Source | None = None) -> None:
        self.data = data
        self.encoding = encoding if encoding in (UTF8, UTF16, UTF32) else UTF16
        self.source = source if source is not None and source.data is data else Source("", data)

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Byte range of a 0-based line's content (without its line break)."""
        starts = self.source.line_starts
        start = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(self.data)
        while end > start and self.data[end - 1] in (0x0A, 0x0D):
            end -= 1
        return start, end

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.data)))
        line = bisect.bisect_right(self.source.line_starts, offset) - 1
        start, end = self.line_bounds(line)
        return types.Position(line=line, character=_units(self.data[start:min(offset, end)], self.encoding))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(max(start, end)))

    def offset(self, position: types.Position) -> int:
        """Byte offset of an LSP position; out-of-range lines/characters are clamped (LSP semantics)."""
        if position.line < 0:
            return 0
        if position.line >= len(self.source.line_starts):
            return len(self.data)
        start, end = self.line_bounds(position.line)
        segment = self.data[start:end]
        character = max(0, position.character)
        if self.encoding == UTF8 or segment.isascii():
            return start + min(character, len(segment))
        used = 0
        nbytes = 0
        for ch in decode_bytes(segment):
            u = _char_units(ch, self.encoding)
            if used + u > character:
                break
            used += u
            nbytes += len(encode_text(ch))
        return start + min(nbytes, len(segment))

    def offsets(self, rng: types.Range) -> tuple[int, int]:
        a, b = self.offset(rng.start), self.offset(rng.end)
        return (a, b) if a <= b else (b, a)


def ts_point(data: bytes, offset: int) -> tuple[int, int]:
    """tree-sitter point (row, byte column) of a byte offset; rows end at ``\\n``."""
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def ts_point_after(start: tuple[int, int], inserted: bytes) -> tuple[int, int]:
    """The point where ``inserted`` ends when written at ``start``."""
    rows = inserted.count(b"\n")
    if rows == 0:
        return start[0], start[1] + len(inserted)
    return start[0] + rows, len(inserted) - inserted.rfind(b"\n") - 1


def text_edit(pmap: PositionMap, start: int, end: int, text: str) -> types.TextEdit:
    return types.TextEdit(range=pmap.range(start, end), new_text=text)


def to_lsp_diagnostic(d: Diagnostic, pmap: PositionMap, uri: str, version: int | None,
                      capabilities: types.PublishDiagnosticsClientCapabilities | None = None) -> types.Diagnostic:
    """One engine diagnostic as an LSP diagnostic; its fix's edits (as LSP text edits) ride in ``data``."""
    rule = get_rule(d.code)
    related_ok = capabilities is None or bool(capabilities.related_information)
    href_ok = capabilities is None or bool(capabilities.code_description_support)
    data: dict[str, Any] = {"version": version, "kernel": d.kernel}
    if d.fix is not None:
        data["fix"] = {
            "title": d.fix.title,
            "applicability": d.fix.applicability.value,
            "edits": [
                {"range": _range_json(pmap.range(e.start, e.end)), "newText": e.text} for e in d.fix.edits
            ],
        }
    if d.impact is not None:
        data["impact"] = d.impact.to_json()
    related = None
    if related_ok and d.related:
        related = [
            types.DiagnosticRelatedInformation(location=_related_location(r, d.path, pmap, uri), message=r.message)
            for r in d.related
        ]
    return types.Diagnostic(
        range=pmap.range(d.start, d.end),
        message=d.message,
        severity=SEVERITY.get(d.severity, types.DiagnosticSeverity.Warning),
        code=d.code,
        code_description=types.CodeDescription(href=rule.url()) if rule is not None and href_ok else None,
        source="shaderlint",
        related_information=related,
        data=data,
    )


def _related_location(r, path: str, pmap: PositionMap, uri: str) -> types.Location:
    """Where a related location is: in this document, or in another file (host code: its 1-based line
    and column; the column counts bytes, which is the character for the ASCII host lines are made of)."""
    if not r.path or r.path == path or os.path.abspath(r.path) == os.path.abspath(path):
        return types.Location(uri=uri, range=pmap.range(r.start, r.end))
    at = types.Position(line=max(0, r.line - 1), character=max(0, r.column - 1))
    return types.Location(uri=Path(os.path.abspath(r.path)).as_uri(), range=types.Range(start=at, end=at))


def _range_json(r: types.Range) -> dict[str, Any]:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def _range_from_json(value: Any) -> types.Range:
    s, e = value["start"], value["end"]
    return types.Range(start=types.Position(line=int(s["line"]), character=int(s["character"])),
                       end=types.Position(line=int(e["line"]), character=int(e["character"])))


def fix_from_data(data: Any) -> tuple[str, bool, list[types.TextEdit]] | None:
    """(title, is_safe, edits) from a diagnostic's ``data``, or None when it carries no (valid) fix."""
    try:
        fix = data["fix"]
        edits = [types.TextEdit(range=_range_from_json(e["range"]), new_text=str(e["newText"])) for e in fix["edits"]]
        return str(fix["title"]), fix["applicability"] == "safe", edits
    except (KeyError, TypeError, ValueError):
        return None


def ranges_overlap(a: types.Range, b: types.Range) -> bool:
    """Closed-interval overlap: a zero-width range touching the other counts (cursor on a diagnostic's end)."""
    def key(p: types.Position) -> tuple[int, int]:
        return p.line, p.character
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
