"""Source text: bytes as the user wrote them, byte offset <-> line/column, comments.

Positions inside shaderlint are byte offsets into the original file. This module
is the one place that turns them into 1-based lines and 1-based character
columns (the CLI and JSON contract); the language server converts to UTF-16 in
``shaderlint.server.convert``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

# Comments and string/char literals, so that scanners never look inside them. (Their text is taken a run at
# a time: a line comment's `[^\n\\]+`, a block comment's `[^*]*+` up to each `*` (the same matches as
# `/\*.*?(?:\*/|\Z)`), a literal's `[^"\\\n]+`; the same matches as byte by byte, in less time.)
_LEXICAL = re.compile(
    rb"//(?:[^\n\\]+|\\\r?\n|\\.)*|/\*[^*]*+(?:\*+(?!/)[^*]*+)*+(?:\*/|\Z)|\"(?:[^\"\\\n]+|\\.)*+\"?"
    rb"|'(?:[^'\\\n]+|\\.)*+'?",
    re.S,
)

_SPLICE = re.compile(rb"\\\r?\n")

_NEXT = (1).__add__  # a line's length -> the offset of the next line's start from its own

# A line feed before a line whose first byte other than spaces and tabs is '#' (an upper-case letter): the
# match ends where that line starts. (A literal first byte, which the regex engine finds fast; the offsets are
# read with ``map`` over the matches, in C.)
_DIRECTIVE_START = re.compile(rb"\n(?=[ \t]*#)")
_UPPER_LINE = re.compile(rb"\n(?=[ \t]*[A-Z])")
_END = re.Match.end
_START = re.Match.start
_BRACE = re.compile(rb"[{}]")
# An upper-case name followed by `(`, not right after a word byte, `.`, `->` or `::`; the same matches as
# `(?<![\w.>:])([A-Z_][A-Z0-9_]*)[ \t]*\(`, with the look-behind after the first byte, so the regex engine
# skips to the bytes of the class instead of trying the look-behind at every byte.
_UPPER_CALL = re.compile(rb"([A-Z_](?<![\w.>:][A-Z_])[A-Z0-9_]*)[ \t]*\(")
# The same in the reversed text: `(`, blanks, the name backwards (all of the word: it ends with a byte of
# `[A-Z_]`, no word byte, `.`, `>` or `:` after it). Its first byte is a literal, which the regex engine
# finds several times faster than the class `[A-Z_]`, at each upper-case letter of every `CamelCase`
# name; and no match can hold another's `(`, so the matches are those of _UPPER_CALL, in reverse order.
_UPPER_CALL_REVERSED = re.compile(rb"\([ \t]*[A-Z0-9_]*+(?<=[A-Z_])(?![\w.>:])")
# Each byte to its class: upper-case letter `A`, digit or `_` `0`, lower-case letter `a`, any other byte a space
# (no other byte is a word byte: ``\w`` of a bytes pattern is ASCII).
_CLASSES = bytes(0x41 if 0x41 <= c <= 0x5A else 0x30 if 0x30 <= c <= 0x39 or c == 0x5F
                 else 0x61 if 0x61 <= c <= 0x7A else 0x20 for c in range(256))
# In the classes: a byte of no word, an upper-case letter, then an upper-case letter, a digit or `_`.
_CAPS_WORD_CLASSES = re.compile(rb" A[A0]")


@dataclass(frozen=True, slots=True)
class Comment:
    start: int
    end: int
    text: str  # decoded, including the // or /* */ markers


class Source:
    """An immutable file: its bytes, path and position helpers."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data

    @cached_property
    def line_starts(self) -> list[int]:
        data = self.data
        if b"\r" not in data:  # (the usual case: the lengths of the lines, summed in C)
            return list(accumulate(map(_NEXT, map(len, data.split(b"\n")[:-1])), initial=0))
        starts = [0]
        # CRLF counts as one break; a lone CR is also a line break.
        for m in re.finditer(rb"\r\n|\r|\n", data):
            starts.append(m.end())
        return starts

    @cached_property
    def lexical(self) -> list[tuple[int, int, bool]]:
        """(start, end, is_comment) for every comment and string literal."""
        data = self.data
        return [(m.start(), m.end(), data[m.start()] == 0x2F) for m in _LEXICAL.finditer(data)]

    @cached_property
    def directive_starts(self) -> list[int]:
        """Offsets of the lines whose first byte other than spaces and tabs is ``#`` (where a pattern
        opening with ``^[ \t]*#`` can match), in order."""
        data = self.data
        starts = [0] if re.match(rb"[ \t]*#", data) else []
        starts.extend(map(_END, _DIRECTIVE_START.finditer(data)))
        return starts

    @cached_property
    def upper_line_starts(self) -> list[int]:
        """Offsets of the lines whose first byte other than spaces and tabs is an upper-case letter, in
        order (``shaderlint.languages.base.line_starts_with(data, rb"[A-Z]")``, which several passes ask)."""
        data = self.data
        starts = [0] if re.match(rb"[ \t]*[A-Z]", data) else []
        starts.extend(map(_END, _UPPER_LINE.finditer(data)))
        return starts

    @cached_property
    def directive_matches(self) -> dict:
        """Pattern -> its matches at :attr:`directive_starts` (what
        :func:`shaderlint.languages.base.scan_directives` found, kept for the next pass asking)."""
        return {}

    @cached_property
    def header_macros_read(self) -> dict:
        """What :func:`shaderlint.languages.base.header_macros_for` found for the included headers'
        macros it was last asked about (kept for the next pass asking)."""
        return {}

    @cached_property
    def upper_call_starts(self) -> list[int]:
        """Offsets of the upper-case names followed by ``(`` (macro invocations, by convention), not right
        after a word byte, ``.``, ``->`` or ``::``, in order: where the front ends' macro-call patterns
        can match."""
        starts = list(map(len(self.data).__sub__, map(_END, _UPPER_CALL_REVERSED.finditer(self.data[::-1]))))
        starts.reverse()
        return starts

    @cached_property
    def caps_word_starts(self) -> list[int]:
        """Offsets of the upper-case letters not right after a word byte and followed by another
        upper-case letter, a digit or ``_``, in order: where a name of two bytes or more spelled as
        macros are (``[A-Z][A-Z0-9_]*[A-Z0-9]``, not inside a longer word) can begin. Found in the text
        mapped to byte classes, where the pattern opens with a literal: a pattern opening with ``[A-Z]``
        is tried by the regex engine at every upper-case letter of every ``CamelCase`` name, and
        scanning for the class alone costs several times this."""
        classes = b" " + self.data.translate(_CLASSES)  # (the space: the file's start is no word byte)
        # (a match's start in ``classes`` is the offset of the letter in the file)
        return list(map(_START, _CAPS_WORD_CLASSES.finditer(classes)))

    @cached_property
    def code_braces(self) -> list[int]:
        """Offsets of the ``{`` and ``}`` outside comments and string literals, in order."""
        out = []
        lexical = self.lexical
        k, n = 0, len(lexical)
        for i in map(_START, _BRACE.finditer(self.data)):
            while k < n and lexical[k][1] <= i:
                k += 1
            if k < n and lexical[k][0] <= i:
                continue  # (the first span ending after ``i`` holds it, or none does: the spans are disjoint)
            out.append(i)
        return out

    @cached_property
    def comments(self) -> list[Comment]:
        return [
            Comment(s, e, self.data[s:e].decode("utf-8", "replace"))
            for s, e, is_comment in self.lexical
            if is_comment
        ]

    @cached_property
    def _lexical_starts(self) -> list[int]:
        return [s for s, _, _ in self.lexical]

    @cached_property
    def _lexical_ends(self) -> list[int]:
        return [e for _, e, _ in self.lexical]

    def in_comment_or_string(self, offset: int) -> bool:
        i = bisect.bisect_right(self._lexical_starts, offset) - 1
        return i >= 0 and offset < self._lexical_ends[i]  # (the span at i starts at or before offset)

    def lexical_span(self, offset: int) -> tuple[int, int] | None:
        """(start, end) of the comment or string literal holding ``offset``; None outside them."""
        i = bisect.bisect_right(self._lexical_starts, offset) - 1
        if i < 0:
            return None
        s, e, _ = self.lexical[i]
        return (s, e) if s <= offset < e else None

    def lexical_spans(self, start: int, end: int) -> list[tuple[int, int]]:
        """(start, end) of the comments and string literals that overlap ``[start, end)``, in order."""
        lexical = self.lexical
        i = max(0, bisect.bisect_right(self._lexical_starts, start) - 1)
        out = []
        while i < len(lexical) and lexical[i][0] < end:
            if lexical[i][1] > start:
                out.append(lexical[i][:2])
            i += 1
        return out

    def code_text(self, start: int, end: int) -> str:
        """``[start, end)`` as the preprocessor reads it once comments are gone: each comment is one
        space and line splices (backslash-newline) are removed; string literals stay. A macro's body
        (``#define N 4 // items`` is ``4``)."""
        data = self.data
        parts = []
        pos = start
        i = max(0, bisect.bisect_right(self._lexical_starts, start) - 1)
        lexical = self.lexical
        while i < len(lexical) and lexical[i][0] < end:
            s, e, is_comment = lexical[i]
            i += 1
            if is_comment and e > start:
                parts.append(data[pos:max(s, pos)])
                parts.append(b" ")
                pos = min(e, end)
        parts.append(data[pos:end])
        return _SPLICE.sub(b"", b"".join(parts)).decode("utf-8", "replace").strip()

    def line_of(self, offset: int) -> int:
        """0-based line index of a byte offset."""
        return bisect.bisect_right(self.line_starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) with columns counted in characters."""
        offset = max(0, min(offset, len(self.data)))
        line = self.line_of(offset)
        start = self.line_starts[line]
        column = len(self.data[start:offset].decode("utf-8", "replace")) + 1
        return line + 1, column

    def offset(self, line: int, column: int) -> int:
        """Byte offset of a 1-based (line, character column); clamps out-of-range values."""
        if line < 1:
            return 0
        if line > len(self.line_starts):
            return len(self.data)
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.data)
        text = self.data[start:end].decode("utf-8", "replace")
        prefix = text[: max(0, column - 1)]
        return min(start + len(prefix.encode("utf-8")), end)

    def line_text(self, line: int) -> str:
        """Text of a 1-based line without its line break."""
        if line < 1 or line > len(self.line_starts):
            return ""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace").rstrip("\r\n")

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")
