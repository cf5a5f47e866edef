"""Language front ends: bytes in, a tree-sitter tree over byte-exact text out.

Stock grammars do not know Metal address spaces, Metal attributes or GLSL's
``layout(...) in;`` workgroup declaration. Each front end *masks* such
constructs: it overwrites them with spaces of the same byte length in a copy of
the text, parses the copy, and records what it masked (a :class:`Mask`) so the
kernel model can attach it back to the declaration it belongs to. Because the
masked copy has exactly the original length, every tree-sitter offset is an
offset into the user's file, and node text is always read from the original.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import tree_sitter as ts

from shaderlint.model.source import Source

@dataclass(frozen=True, slots=True)
class Mask:
    start: int
    end: int
    kind: str  # "bom", "attribute", "function-qualifier", "address-space", "layout", "suffix", "precision"
    text: str  # the original text that was masked
    value: str = ""  # kind-specific payload (e.g. attribute name, address space)
    args: tuple[str, ...] = ()


@dataclass
class Parsed:
    source: Source
    language: str
    tree: ts.Tree
    masks: list[Mask]
    parse_bytes: bytes
    stage: str | None = None  # GLSL shader stage
    # Position key -> masks: attributes that follow a node ending at key, or precede a node starting at key.
    attrs_after: dict[int, list[Mask]] = field(default_factory=dict)
    attrs_before: dict[int, list[Mask]] = field(default_factory=dict)
    qualifiers_before: dict[int, list[Mask]] = field(default_factory=dict)

    @property
    def root(self) -> ts.Node:
        return self.tree.root_node


def _blank(buf: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if buf[i] not in (0x0A, 0x0D):
            buf[i] = 0x20


_WS = b" \t\r\n\f\v"


class FrontEnd:
    """Base class: subclasses set the grammar and add their masks in :meth:`mask`."""

    name: ClassVar[str] = ""
    extensions: ClassVar[tuple[str, ...]] = ()
    _language: ClassVar[ts.Language | None] = None

    @classmethod
    def grammar(cls) -> ts.Language:
        raise NotImplementedError

    @classmethod
    def language(cls) -> ts.Language:
        if cls._language is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                cls._language = cls.grammar()
        return cls._language

    def parser(self) -> ts.Parser:
        return ts.Parser(self.language())

    def mask(self, source: Source, buf: bytearray) -> list[Mask]:
        return []

    def stage_for(self, path: str, source: Source) -> str | None:
        return None

    def parse(self, source: Source, old: Parsed | None = None, deadline=None) -> Parsed:
        """Mask and parse ``source``. With a :class:`shaderlint.deadline.Deadline`, a long parse is
        cancelled when it passes (raising :class:`shaderlint.deadline.TimeBudgetExceeded`)."""
        buf = bytearray(source.data)
        masks: list[Mask] = []
        if buf.startswith(b"\xef\xbb\xbf"):
            masks.append(Mask(0, 3, "bom", ""))
            buf[0:3] = b"   "
        masks.extend(self.mask(source, buf))
        masks.extend(mask_macro_definitions(source, buf))
        masks.extend(mask_statement_macros(source, buf))
        masks.extend(mask_pragmas(source, buf))
        masks.sort(key=lambda mk: mk.start)
        parse_bytes = bytes(buf)
        parser = self.parser()
        tree = _parse(parser, parse_bytes, old.tree if old is not None else None, deadline)
        parsed = Parsed(source, self.name, tree, masks, parse_bytes, self.stage_for(source.path, source))
        gaps = _Gaps(parse_bytes)
        for m in masks:
            if m.kind == "attribute":
                parsed.attrs_after.setdefault(gaps.prev(m.start), []).append(m)
                parsed.attrs_before.setdefault(_next_code(parse_bytes, m.end, gaps.next), []).append(m)
            elif m.kind in ("function-qualifier", "address-space"):
                parsed.qualifiers_before.setdefault(gaps.next(m.end), []).append(m)
        return parsed


class _Gaps:
    """:func:`_prev_non_ws` / :func:`_next_non_ws` that remember the last blank stretch they crossed.
    Masking blanks long stretches (``device device device ...`` becomes all spaces), and scanning the
    stretch again from every mask in it took time quadratic in its length."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.gap = (0, 0)  # [a, b): blank, with a non-blank byte (or the file's edge) on either side

    def _gap(self, i: int) -> tuple[int, int]:
        a, b = self.gap
        if not a <= i < b:
            self.gap = a, b = _prev_non_ws(self.data, i), _next_non_ws(self.data, i)
        return a, b

    def next(self, pos: int) -> int:
        if pos >= len(self.data) or self.data[pos] not in _WS:
            return pos
        return self._gap(pos)[1]

    def prev(self, pos: int) -> int:
        if pos <= 0 or self.data[pos - 1] not in _WS:
            return pos
        return self._gap(pos - 1)[0]


_CHUNK = 1 << 16  # bytes handed to the parser per read callback


def _parse(parser: ts.Parser, data: bytes, old_tree: ts.Tree | None, deadline) -> ts.Tree:
    """Parse ``data``; with a deadline, through tree-sitter's progress callback, which cancels the parse
    when the deadline passes. Small inputs need it too: error recovery on some 5 KB inputs ran for
    minutes (memory growing) inside the C parser, where the watchdog's exception cannot reach. The
    callback costs about 5% of the parse."""
    if deadline is None:
        return parser.parse(data, old_tree) if old_tree is not None else parser.parse(data)
    from shaderlint.deadline import TimeBudgetExceeded, progress_callback

    deadline.check()
    view = memoryview(data)
    try:
        read = lambda offset, _point: view[offset:offset + _CHUNK].tobytes()  # noqa: E731
        cb = progress_callback(deadline)
        if old_tree is not None:
            return parser.parse(read, old_tree, progress_callback=cb)
        return parser.parse(read, progress_callback=cb)
    except ValueError:  # "Parsing failed": the progress callback cancelled it
        if deadline.expired():
            deadline.fired = True
            raise TimeBudgetExceeded from None
        raise


_FUNC_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\((?:[^()\n]*)\)((?:[^\n\\]|\\\r?\n|\\)*)", re.M)


def mask_macro_definitions(source: Source, buf: bytearray) -> list[Mask]:
    """Mask file-scope invocations of function-like macros whose body defines whole
    functions (``DEFINE_KERNEL(float, f32)`` lines, often without a semicolon):
    the grammar cannot read them, and their bodies are not analysed anyway."""
    data = source.data
    names = [m.group(1) for m in _FUNC_MACRO.finditer(data) if b"{" in m.group(2)]
    if not names:
        return []
    alt = b"|".join(re.escape(n) for n in names)
    pattern = re.compile(rb"^[ \t]*(?:" + alt + rb")[ \t]*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)[ \t]*;?[ \t]*(?=\r?\n|\Z)", re.M)
    out = []
    for m in pattern.finditer(data):
        if source.in_comment_or_string(m.start()) or bytes(buf[m.start():m.end()]) != data[m.start():m.end()]:
            continue
        out.append(Mask(m.start(), m.end(), "macro-invocation", m.group(0).decode("utf-8", "replace").strip()))
        _blank(buf, m.start(), m.end())
    return out


_OBJ_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])((?:[^\n\\]|\\\r?\n|\\)*)", re.M)
_PRAGMA = re.compile(rb"^[ \t]*#[ \t]*pragma\b(?:[^\n\\]|\\\r?\n|\\)*|\b_Pragma\s*\(\s*\"(?:[^\"\\\n]|\\.)*\"\s*\)", re.M)


def mask_statement_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Mask uses of object-like macros whose body is statements (``#define BODY { ... }``,
    ``#define SYNC __syncthreads();``): ``{ BODY }`` cannot be parsed without expanding it."""
    data = source.data
    names = [m.group(1) for m in _OBJ_MACRO.finditer(data) if re.search(rb"[;{}]", m.group(2))]
    if not names:
        return []
    pattern = re.compile(rb"(?<![\w#])(?:" + b"|".join(re.escape(n) for n in names) + rb")\b[ \t]*;?")
    out = []
    for m in pattern.finditer(data):
        line_start = data.rfind(b"\n", 0, m.start()) + 1
        if data[line_start:m.start()].lstrip().startswith(b"#") or source.in_comment_or_string(m.start()):
            continue  # the #define itself, #ifdef BODY, comments
        if bytes(buf[m.start():m.end()]) != data[m.start():m.end()]:
            continue
        out.append(Mask(m.start(), m.end(), "macro-invocation", m.group(0).decode("utf-8", "replace").strip()))
        _blank(buf, m.start(), m.end())
    return out


def mask_pragmas(source: Source, buf: bytearray) -> list[Mask]:
    """Mask ``#pragma`` lines and ``_Pragma("...")`` operators: they may stand between a loop
    header and its body, where the grammar cannot read them. The kernel model finds
    ``#pragma unroll`` through these masks (:meth:`FileModel.pragma_before`)."""
    out = []
    for m in _PRAGMA.finditer(source.data):
        if source.in_comment_or_string(m.start()) or bytes(buf[m.start():m.end()]) != source.data[m.start():m.end()]:
            continue
        text = m.group(0).decode("utf-8", "replace").strip()
        out.append(Mask(m.start(), m.end(), "pragma", text))
        _blank(buf, m.start(), m.end())
    return out


def _prev_non_ws(data: bytes, pos: int) -> int:
    """End offset of the last non-blank byte before ``pos``."""
    while pos > 0 and data[pos - 1] in _WS:
        pos -= 1
    return pos


def _next_code(data: bytes, pos: int, next_non_ws=None) -> int:
    """Offset of the next byte that is neither blank nor inside a comment."""
    n = len(data)
    while True:
        pos = (next_non_ws or (lambda p: _next_non_ws(data, p)))(pos)
        if data.startswith(b"//", pos):
            nl = data.find(b"\n", pos)
            pos = n if nl < 0 else nl + 1
        elif data.startswith(b"/*", pos):
            close = data.find(b"*/", pos + 2)
            pos = n if close < 0 else close + 2
        else:
            return pos


def _next_non_ws(data: bytes, pos: int) -> int:
    n = len(data)
    while pos < n and data[pos] in _WS:
        pos += 1
    return pos


def scan_code(source: Source, pattern: re.Pattern[bytes]):
    """Matches of ``pattern`` that start outside comments and string literals."""
    for m in pattern.finditer(source.data):
        if not source.in_comment_or_string(m.start()):
            yield m


_ATTR_ITEM = re.compile(r"\s*([A-Za-z_][\w:]*)\s*(?:\((.*)\))?\s*$", re.S)


def split_attribute(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``[[buffer(0), raster_order_group(1)]]`` -> [("buffer", ("0",)), ...]."""
    inner = text[2:-2]
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in items:
        m = _ATTR_ITEM.match(item)
        if not m:
            continue
        name = m.group(1).split("::")[-1]
        args = tuple(a.strip() for a in _split_args(m.group(2))) if m.group(2) is not None else ()
        out.append((name, args))
    return out


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out
