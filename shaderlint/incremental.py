"""Incremental linting for the language server: re-lint only the functions an edit can affect.

A keystroke inside one function body cannot change what the rules say about
functions that neither call it nor are called by it. After a full lint, the
document's top-level function definitions are recorded as :class:`Span` objects
(region, body braces, the identifiers in the body). When every edit since the
last lint falls strictly inside function bodies, :func:`partial_lint`

1. takes the *connected component* of the edited functions in the reference
   graph (F and G are linked when either body names the other, directly or
   through a macro), plus every function that cannot be treated this way;
2. lints a copy of the document from which all other function definitions are
   cut out (their line breaks kept, so every line keeps its number; offsets are
   mapped back), so the front ends, model, rules and impact step run as usual
   on the component and the file-level declarations only;
3. keeps the component's diagnostics from that lint, the other functions'
   diagnostics from the last lint (offsets shifted through the edits), and
   checks that the file-level diagnostics (outside every function) agree.

It gives up (returns None: the caller lints the whole file) whenever it cannot
show the result equals a full lint: an edit outside a body, a body containing
``shaderlint:`` comments or preprocessor directives other than ``#pragma``
(suppressions, macros), parse errors, a changed structure after the edit,
file-level diagnostics that differ, SL002 (unused suppressions needs every
finding), a timed-out lint, or a component that is most of the file anyway.
The server also confirms each partial result with a full lint once the user
pauses (see ``shaderlint.server.diagnostics``); a test compares both on random
edits of every example and fixture.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import tree_sitter as ts

from shaderlint.config import Settings
from shaderlint.diagnostics import Diagnostic, Edit
from shaderlint.engine import PARSE_ERROR, FileResult, enabled_rules, lint_source, predefined_for
from shaderlint.languages import FRONT_ENDS
from shaderlint.languages.base import Mask
from shaderlint.model.source import _LEXICAL, Source
from shaderlint.suppression import UNUSED_CODE

_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)((?:[^\n\\]|\\\r?\n|\\.)*)", re.M)
# A body that holds suppression comments or preprocessor directives (other than #pragma, which only
# affects the statement after it) can change things outside itself: it is always linted.
_SPECIAL = re.compile(rb"shaderlint|^[ \t]*#[ \t]*(?!pragma\b)[A-Za-z_]", re.M)
_BREAK = re.compile(rb"\r\n|\r|\n")
_TOP_LEVEL = ("translation_unit",)
# Linting a component larger than this share of the file is not worth the bookkeeping.
MAX_SHARE = 0.6


@dataclass(slots=True)
class Span:
    """One top-level function definition, in current document offsets."""
    name: str  # last identifier of the function's name
    start: int  # region start: the end of the previous top-level node (attributes, comments included)
    body_start: int  # offset of "{"
    body_end: int  # offset just after "}"
    words: frozenset[bytes]
    fixed: bool  # always linted, never edited incrementally (not at top level, special body)
    broken: bool = False  # its body did not parse: always linted (its errors are checked against the whole file)


@dataclass(slots=True)
class Outline:
    spans: list[Span]  # sorted by start
    macros: dict[bytes, frozenset[bytes]]
    diagnostics: list[Diagnostic]  # of the last lint, in current offsets once ``edits`` are applied
    settings_key: str
    edits: list[tuple[int, int, int]]  # (start, end, new length) since the last lint, in order
    dirty: set[int]  # indices of spans with edited bodies
    valid: bool = True
    # names of file-scope host variables that may be written (not const, no array): two functions
    # naming one are linked, since what one writes decides what the other reads
    # (shaderlint.model.divisibility treats a `static` nothing writes as a constant)
    shared: frozenset[bytes] = frozenset()
    #: the shaderlint.project.includes.FileContext of the last whole-file lint: the parts are linted
    #: with it (a change of a header it read makes the server lint the whole file again)
    file_context: object = None

    # ---- edits ------------------------------------------------------------------------------------
    def edit(self, start: int, end: int, new_len: int) -> None:
        """Record a replacement of [start, end) (current offsets) by ``new_len`` bytes."""
        if not self.valid:
            return
        delta = new_len - (end - start)
        hit = None
        for i, s in enumerate(self.spans):
            if s.body_start < start and end < s.body_end:  # strictly between the braces
                hit = i
                break
        if hit is None:
            self.valid = False
            return
        for i, s in enumerate(self.spans):
            if i == hit:
                s.body_end += delta
            elif s.start >= end:
                s.start += delta
                s.body_start += delta
                s.body_end += delta
        self.dirty.add(hit)
        self.edits.append((start, end, new_len))

    def map_offset(self, offset: int) -> int | None:
        """An offset of the last lint's text in the current text; None inside edited bytes."""
        for start, end, new_len in self.edits:
            if offset >= end:
                offset += new_len - (end - start)
            elif offset > start:
                return None
        return offset

    def owner(self, offset: int) -> int | None:
        """Index of the span whose region holds ``offset`` (None: file level)."""
        lo, hi = 0, len(self.spans)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.spans[mid].start <= offset:
                lo = mid + 1
            else:
                hi = mid
        i = lo - 1
        if i >= 0 and offset < self.spans[i].body_end:
            return i
        return None

    def owner_of(self, start: int, end: int) -> int | None:
        """:meth:`owner` of a diagnostic at [start, end): one of zero width right after a body's
        ``}`` (tree-sitter's MISSING ``;`` when the error recovery read the function as a
        declaration) belongs to that function, not to the region of the one that follows."""
        i = self.owner(start)
        if start == end and start > 0:
            j = self.owner(start - 1)
            if j is not None and j != i and self.spans[j].body_end == start:
                return j
        return i


def _name(fn_name: str) -> str:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fn_name)
    return words[-1] if words else fn_name


def _lexically_closed(data: bytes, start: int, end: int) -> bool:
    """Whether every comment and literal that starts in data[start:end] also ends there (an unterminated
    ``/*`` or string would swallow text beyond the body, differently once other functions are cut out)."""
    for m in _LEXICAL.finditer(data, start, end):
        text = m.group(0)
        if m.end() == end and not (text.startswith(b"/*") and len(text) >= 4 and text.endswith(b"*/")):
            return False  # it runs into the closing brace
        if text.startswith(b"/*"):
            if len(text) < 4 or not text.endswith(b"*/"):
                return False
        elif text[:1] in (b'"', b"'") and (len(text) < 2 or text[-1:] != text[:1] or text.endswith(b"\\" + text[:1])
                                           and not text.endswith(b"\\\\" + text[:1])):
            return False
    return True


def _words(data: bytes, start: int, end: int) -> frozenset[bytes]:
    return frozenset(_WORD.findall(data, start, end))


def _special(data: bytes, start: int, end: int) -> bool:
    return _SPECIAL.search(data, start, end) is not None


def build_outline(result: FileResult, settings: Settings) -> Outline | None:
    """The outline of a complete lint, or None when the file is not suited (no model, parse errors, ...)."""
    model = result.model
    if model is None or result.timed_out or result.parsed is None:
        return None
    if result.parsed.expansions:  # macro-generated kernels: partial lints read copies without the expansions
        return None
    if not errors_confined(model):
        return None
    data = result.source.data
    spans = _spans(model, data, lenient=False)
    if spans is None:
        return None
    macros = {m.group(1): frozenset(_WORD.findall(m.group(2))) for m in _DEFINE.finditer(data)}
    shared = frozenset(v.name.encode() for v in model.globals
                       if not (v.is_const or v.is_constexpr or v.dims) and v.address_space is None)
    return Outline(spans, macros, list(result.diagnostics), settings.key(), [], set(), shared=shared,
                   file_context=result.file_context)


def _spans(model, data: bytes, lenient: bool) -> list[Span] | None:
    """The top-level function definitions of ``model``. Strict: None when a body cannot be delimited
    or definitions overlap; lenient: such functions are left out."""
    spans: list[Span] = []
    seen: set[int] = set()
    for f in model.functions:
        top = f.outer if f.outer is not None else f.node
        if f.body is None or top.id in seen:
            continue
        seen.add(top.id)
        parent = top.parent
        prev = top.prev_sibling
        while prev is not None and prev.type == "comment":  # comments above belong to the function
            prev = prev.prev_sibling
        start = prev.end_byte if prev is not None else (parent.start_byte if parent is not None else 0)
        b0, b1 = f.body.start_byte, f.body.end_byte
        if b1 - b0 < 2 or data[b0:b0 + 1] != b"{" or data[b1 - 1:b1] != b"}":
            if lenient:
                continue
            return None  # a body we cannot delimit: no incremental linting for this file
        # A body with a comment or string left open (`/*` that tree-sitter reads as `/` `*`, the scanners
        # of suppressions as a comment to the end of the file) changes how the text after it reads: it
        # stays in every copy.
        fixed = parent is None or parent.type not in _TOP_LEVEL or _special(data, b0, b1) \
            or not _lexically_closed(data, b0 + 1, b1 - 1)
        spans.append(Span(_name(f.name), start, b0, b1, _words(data, b0 + 1, b1 - 1), fixed, f.has_error))
    spans.sort(key=lambda s: s.start)
    if not lenient:
        for a, b in zip(spans, spans[1:]):
            if b.start < a.body_end:  # nested or overlapping definitions: not handled
                return None
    return spans


def carry_outline(prev: Outline | None, result: FileResult, settings: Settings) -> Outline | None:
    """An outline for a whole-file lint of text that does not parse right now, from the outline the
    edits were recorded in (all inside bodies): the same functions where they were, those under parse
    errors marked broken, the whole-file diagnostics. None when that cannot be said."""
    if prev is None or not prev.valid or result.model is None or result.timed_out or result.parsed is None:
        return None
    data = result.source.data
    spans = []
    for i, s in enumerate(prev.spans):
        if s.body_end > len(data) or data[s.body_start:s.body_start + 1] != b"{" or data[s.body_end - 1:s.body_end] != b"}":
            return None
        edited = i in prev.dirty
        if edited and not _lexically_closed(data, s.body_start + 1, s.body_end - 1):
            return None  # an open comment or string swallows what follows: no function's region is its own
        spans.append(Span(s.name, s.start, s.body_start, s.body_end,
                          _words(data, s.body_start + 1, s.body_end - 1) if edited else s.words,
                          s.fixed or (edited and _special(data, s.body_start, s.body_end)), s.broken))
    outline = Outline(spans, prev.macros, list(result.diagnostics), settings.key(), [], set(), shared=prev.shared,
                      file_context=result.file_context)
    for c in result.parsed.tree.root_node.children:
        if c.has_error or c.is_missing:
            members = _chain(outline, c.start_byte, c.end_byte, None)
            if members is None:
                return None
            for i in members:
                spans[i].broken = True
    return outline


def _closed_body(body) -> bool:
    kids = body.children
    return len(kids) >= 2 and kids[0].type == "{" and kids[-1].type == "}" and not kids[-1].is_missing \
        and not kids[0].is_missing


def errors_confined(model) -> bool:
    """Whether every parse error lies inside the braces of a top-level function body (as while typing in
    one): the rest of the file then reads the same whatever that body holds."""
    if not model.root.has_error:
        return True
    bodies = []
    for f in model.functions:
        top = f.outer if f.outer is not None else f.node
        if f.body is not None and top.parent is not None and top.parent.type in _TOP_LEVEL:
            bodies.append((f.body.start_byte, f.body.end_byte))
    return errors_within(model.root, bodies)


def _top_child(root, start: int, end: int):
    for child in root.children:
        if child.start_byte <= start and end <= child.end_byte:
            return child
    return None


def errors_within(root, bodies: list[tuple[int, int]]) -> bool:
    """Whether the tree's errors all lie inside the given function bodies, which are closed blocks."""
    if not root.has_error:
        return True
    by_top: dict[int, tuple[int, int]] = {}
    for b0, b1 in bodies:
        top = _top_child(root, b0, b1)
        if top is not None:
            by_top[top.id] = (b0, b1)
    for child in root.children:
        if not child.has_error:
            continue
        body = by_top.get(child.id)
        if body is None or child.type == "ERROR":
            return False
        node = child
        while (node.start_byte, node.end_byte) != body or node.type != "compound_statement":
            nxt = None
            for c in node.children:
                on_path = c.start_byte <= body[0] and body[1] <= c.end_byte and (c.child_count or c.type == "compound_statement")
                if on_path and nxt is None and c.type != "ERROR":
                    nxt = c
                elif c.has_error or c.is_missing:
                    return False
            if nxt is None:
                return False
            node = nxt
        if not _closed_body(node):
            return False
    return True


class _Copy:
    """The copy of a document without the definitions outside ``keep`` (cut out, line breaks kept so
    that every line keeps its number) and the offset maps between it and the document."""

    def __init__(self, data: bytes, spans: list[Span], keep: set[int]) -> None:
        pieces: list[bytes] = []
        starts: list[tuple[int, int]] = []  # (offset in the copy, offset in the document) of each kept piece
        self.kept: list[tuple[int, int, int]] = []  # (copy offset, document offset, length) of each kept piece
        pos = size = 0
        for i, s in enumerate(spans):
            if i in keep:
                continue
            # The whole definition goes (with the attributes and comments before it), unless that stretch
            # holds suppressions or directives: then only the body.
            a, b = (s.start, s.body_end) if not _special(data, s.start, s.body_start) else (s.body_start + 1, s.body_end - 1)
            if b <= a:
                continue
            starts.append((size, pos))
            self.kept.append((size, pos, a - pos))
            pieces.append(data[pos:a])
            size += a - pos
            breaks = b"".join(_BREAK.findall(data, a, b))
            pieces.append(breaks)
            size += len(breaks)
            pos = b
        starts.append((size, pos))
        self.kept.append((size, pos, len(data) - pos))
        pieces.append(data[pos:])
        self.data = b"".join(pieces)
        self.pieces = pieces  # kept text and line breaks, alternating
        self.starts = starts
        self.copy_starts = [c for c, _ in starts]
        self.real_starts = [r for _, r in starts]

    def to_real(self, offset: int) -> int:
        c, r = self.starts[bisect.bisect_right(self.copy_starts, offset) - 1]
        return r + (offset - c)

    def to_copy(self, offset: int) -> int:  # for offsets in kept text
        c, r = self.starts[bisect.bisect_right(self.real_starts, offset) - 1]
        return c + (offset - r)

    def within_kept(self, start: int, end: int) -> bool:
        """Whether copy offsets [start, end) lie in one kept piece (do not reach into cut-out text)."""
        c, _, n = self.kept[bisect.bisect_right(self.copy_starts, start) - 1]
        return c <= start and end <= c + n

    def context(self, masked: bytes, masks: list[Mask]) -> tuple[bytes, list[Mask]] | None:
        """The document's masked text and masks (``masked``, ``masks``) carried over to the copy: kept
        text as the whole document masks it, cut-out text as its line breaks. None when a mask reaches
        from kept text into cut-out text."""
        out = bytearray()
        for k, piece in enumerate(self.pieces):
            if k % 2 == 0:
                _, r, n = self.kept[k // 2]
                out += masked[r:r + n]
            else:
                out += piece
        assert len(out) == len(self.data)
        moved: list[Mask] = []
        for m in masks:
            i = bisect.bisect_right(self.real_starts, m.start) - 1
            c, r, n = self.kept[i]
            if m.start < r + n:
                if m.end > r + n:
                    return None  # it reaches from kept text into cut-out text
                moved.append(replace(m, start=m.start - r + c, end=m.end - r + c))
            elif i + 1 < len(self.kept) and m.end > self.kept[i + 1][1]:
                return None  # from cut-out text into kept text
        return bytes(out), moved


def _lint_copy(path: str, data: bytes, settings: Settings, language: str, spans: list[Span], keep: set[int],
               source: Source, until: int | None = None, file_context=None):
    """Lint the copy of ``data`` without the definitions outside ``keep``, read in the whole document's
    context; returns the result and the offset maps copy -> real -> copy (None: it cannot be read so).

    The front ends' masks are not all local: some depend on the whole file (which macros it defines,
    ``#if`` blocks, the shader stage its functions' text shows), some on text beyond a function (a scan
    of a macro's argument list or a balanced-parentheses pattern starting in a body whose brackets do
    not pair up runs past its closing brace). The definitions come from directives, which the copy
    keeps (bodies with directives are always linted); the stage is taken from the whole document; and
    the functions cut out are balanced, without directives, comments or literals left open, so a scan
    that runs into one comes out of it the same -- except a balanced-parentheses pattern, which the
    functions' own parentheses can nest too deep: then the copy's mask runs on to a ``)`` after the cut
    (the whole file has none there). So a mask of the copy that reaches from kept text into cut-out text
    means the copy reads differently: the whole document is masked then, and its masks are carried
    over to the copy (None when one of those reaches into cut-out text too).

    ``until``: the copy ends there (a document offset in kept text): nothing after it is read."""
    fe = FRONT_ENDS[language]
    stage = fe.stage_for(path, source)
    copy = _Copy(data, spans, keep)
    text = copy.data if until is None else copy.data[:copy.to_copy(until)]
    part = lint_source(path, text, settings, language=language, context=(None, stage), file_context=file_context)
    if part.parsed is not None and not all(copy.within_kept(m.start, m.end) for m in part.parsed.masks):
        carried = copy.context(*fe.masked(source, predefined_for(settings, language, file_context),
                                          _macros(file_context)))
        if carried is None:
            return None
        masked, masks = carried
        if until is not None:
            if any(m.start < len(text) < m.end for m in masks):
                return None
            masked, masks = masked[:len(text)], [m for m in masks if m.end <= len(text)]
        part = lint_source(path, text, settings, language=language, context=((masked, masks), stage),
                           file_context=file_context)
    return part, copy.to_real, copy.to_copy


def _macros(file_context):
    return file_context.macros if file_context is not None and file_context.macros else None


def _chain(outline: Outline, a: int, b: int, allowed: set[int] | None) -> list[int] | None:
    """The adjacent spans whose regions cover [a, b) (each in ``allowed`` unless None), or None."""
    spans = outline.spans
    i = outline.owner(a)
    if i is None or (allowed is not None and i not in allowed):
        return None
    members = [i]
    while spans[i].body_end < b:
        j = i + 1
        if j >= len(spans) or spans[j].start != spans[i].body_end or (allowed is not None and j not in allowed):
            return None  # file-level text (a struct, a global) or a left-out function inside the error
        members.append(j)
        i = j
    return members


def _error_regions(root, to_real, outline: Outline, keep: set[int]):
    """[(start, end, span indices)] of the top-level nodes of the copy that hold errors, each within
    a run of adjacent re-linted functions; None when one is not."""
    regions: list[tuple[int, int, list[int]]] = []
    for c in root.children:
        if not (c.has_error or c.is_missing):
            continue
        members = _chain(outline, to_real(c.start_byte), _real_end(c, to_real), keep)
        if members is None:
            return None
        a, b = outline.spans[members[0]].start, outline.spans[members[-1]].body_end
        if regions and a < regions[-1][1]:
            pa, _, pm = regions.pop()
            a, members = pa, sorted(set(pm) | set(members))
            b = max(b, outline.spans[members[-1]].body_end)
        regions.append((a, b, members))
    return regions


def _spans_under_errors(root, outline: Outline) -> set[int] | None:
    """The spans the whole file's error nodes cover (None: an error covers file-level text)."""
    out: set[int] = set()
    for c in root.children:
        if c.has_error or c.is_missing:
            members = _chain(outline, c.start_byte, c.end_byte, None)
            if members is None:
                return None
            out.update(members)
    return out


def _real_end(node, to_real) -> int:
    return to_real(node.end_byte - 1) + 1 if node.end_byte > node.start_byte else to_real(node.start_byte)


def _same_regions(root, masked: bytes, to_real, to_copy, outline: Outline, regions, whole_parse):
    """The regions of the functions that do not parse (while typing) must read the same in the cut
    copy as in the whole file: tree-sitter's error recovery looks beyond a body and can take the
    function apart (a half-typed declaration can close it early, or run on into the next function).
    The whole file is parsed (incrementally, those regions masked as in the copy: masks never cross
    a closing brace) and the top-level nodes over each region compared, node for node and offset for
    offset; no other part of the whole file may hold an error. Returns (whether so, the whole tree)."""
    if whole_parse is None:
        return False, None
    patches = []
    for a, b, _ in regions:
        c0 = to_copy(a)
        patches.append((a, b, masked[c0:c0 + (b - a)]))
    tree = whole_parse(patches)
    if tree is None:
        return False, None
    wroot = tree.root_node
    if root.is_error or wroot.is_error:
        # The error recovery could not make a translation unit of the text: the root itself is the
        # error, one SL001 from its first to its last token. Cutting functions out at either end of the
        # file moves them (a fuzzed edit chain: the whole file's from byte 0, the copy's from its first
        # kept template), so both must be such an error, over the same bytes.
        if not (root.is_error and wroot.is_error
                and (to_real(root.start_byte), _real_end(root, to_real)) == (wroot.start_byte, wroot.end_byte)):
            return False, tree
    for c in wroot.children:
        if (c.has_error or c.is_missing) and not any(a <= c.start_byte and c.end_byte <= b for a, b, _ in regions):
            return False, tree
    for a, b, _ in regions:
        ours = [(to_real(c.start_byte), _real_end(c, to_real), str(c)) for c in root.children
                if to_real(c.start_byte) < b and _real_end(c, to_real) > a]
        theirs = [(c.start_byte, c.end_byte, str(c)) for c in wroot.children if c.start_byte < b and c.end_byte > a]
        if ours != theirs:
            return False, tree
    return True, tree


def _expanded(words: frozenset[bytes], macros: dict[bytes, frozenset[bytes]]) -> set[bytes]:
    out = set(words)
    todo = [w for w in words if w in macros]
    while todo:
        w = todo.pop()
        for x in macros[w]:
            if x not in out:
                out.add(x)
                if x in macros:
                    todo.append(x)
    return out


def component(outline: Outline, roots: Iterable[int]) -> set[int]:
    """Spans reachable from ``roots`` in the undirected reference graph (a body names a function, two
    functions have the same name, or both name a file-scope variable that may be written), plus
    every fixed or broken span."""
    spans = outline.spans
    by_name: dict[bytes, list[int]] = {}
    for i, s in enumerate(spans):
        by_name.setdefault(s.name.encode(), []).append(i)
    refs: list[set[int]] = [set() for _ in spans]
    for same in by_name.values():  # overloads (and re-definitions) are reported together
        for i in same:
            refs[i].update(j for j in same if j != i)
    users: dict[bytes, list[int]] = {}
    for i, s in enumerate(spans):
        words = _expanded(s.words, outline.macros) if outline.macros else s.words
        for name in by_name.keys() & words:
            for j in by_name[name]:
                if j != i:
                    refs[i].add(j)
                    refs[j].add(i)
        for name in outline.shared & words:
            users.setdefault(name, []).append(i)
    for same in users.values():  # functions naming one file-scope variable
        for i in same:
            refs[i].update(j for j in same if j != i)
    todo = deque(set(roots) | {i for i, s in enumerate(spans) if s.fixed or s.broken})
    seen = set(todo)
    while todo:
        i = todo.popleft()
        for j in refs[i]:
            if j not in seen:
                seen.add(j)
                todo.append(j)
    return seen


def _last_offset(d: Diagnostic) -> int:
    last = max(d.start, d.end)
    for r in d.related:
        last = max(last, r.start, r.end)
    if d.fix is not None:
        for e in d.fix.edits:
            last = max(last, e.start, e.end)
    return last


def _relocate(d: Diagnostic, source: Source, move) -> Diagnostic | None:
    """``d`` with offsets moved by ``move`` (None: give up) and line/columns from ``source``."""
    start, end = move(d.start), move(d.end)
    if start is None or end is None:
        return None
    line, col = source.position(start)
    end_line, end_col = source.position(end)
    related = []
    for r in d.related:
        rs, re_ = move(r.start), move(r.end)
        if rs is None or re_ is None:
            return None
        related.append(replace(r, start=rs, end=re_, line=source.position(rs)[0], column=source.position(rs)[1]))
    fix, fix_ranges = d.fix, d.fix_ranges
    if fix is not None:
        edits = []
        for e in fix.edits:
            es, ee = move(e.start), move(e.end)
            if es is None or ee is None:
                return None
            edits.append(Edit(es, ee, e.text))
        fix = replace(fix, edits=tuple(edits))
        fix_ranges = tuple((*source.position(e.start), *source.position(e.end)) for e in edits)
    return replace(d, start=start, end=end, line=line, column=col, end_line=end_line, end_column=end_col,
                   related=tuple(related), fix=fix, fix_ranges=fix_ranges)


def _same(a: Diagnostic, b: Diagnostic) -> bool:
    return (a.code, a.start, a.end, a.message, a.kernel, a.fingerprint, a.related, a.fix, a.impact, a.severity) \
        == (b.code, b.start, b.end, b.message, b.kernel, b.fingerprint, b.related, b.fix, b.impact, b.severity)


#: Why the last :func:`partial_lint` returned None (for logs and tests).
last_fallback = ""


def _fallback(reason: str) -> None:
    global last_fallback
    last_fallback = reason
    return None


@dataclass
class PartialResult:
    result: FileResult
    outline: Outline
    linted: int  # functions linted
    total: int
    mid_edit: bool = False  # see :func:`_mid_edit`: not what a whole-file lint of this text says


def partial_lint(path: str, data: bytes, settings: Settings, language: str | None,
                 outline: Outline | None, max_share: float = MAX_SHARE,
                 whole_parse: Callable[[list[tuple[int, int, bytes]]], ts.Tree | None] | None = None,
                 mid_edit: bool = False) -> PartialResult | None:
    """Lint ``data`` re-analysing only what the edits recorded in ``outline`` can affect; None: lint it all.

    ``mid_edit``: when the edited functions do not parse and the whole file's error recovery runs
    beyond them (so no per-function answer can equal a whole-file lint), answer as :func:`_mid_edit`
    does instead of giving up (the language server, while the user types)."""
    if outline is None or not outline.valid or not outline.dirty or language is None:
        return _fallback("no outline or an edit outside a function body")
    if outline.settings_key != settings.key() or any(r.code == UNUSED_CODE for r in enabled_rules(settings, language, path)):
        return _fallback("settings changed or SL002 enabled")
    spans = outline.spans
    for i in outline.dirty:
        s = spans[i]
        if s.fixed or s.body_end > len(data) or data[s.body_start:s.body_start + 1] != b"{" \
                or data[s.body_end - 1:s.body_end] != b"}" or _special(data, s.body_start, s.body_end) \
                or not _lexically_closed(data, s.body_start + 1, s.body_end - 1):
            return _fallback("an edited body is special or unbalanced")
    # An edited body is linked to what it names now and to what it named before: a function it stopped
    # calling is analysed differently too (no caller context, no impact through that kernel).
    new_words = {i: _words(data, spans[i].body_start + 1, spans[i].body_end - 1) for i in outline.dirty}
    for i, w in new_words.items():
        spans[i].words = w | spans[i].words
    keep = component(outline, outline.dirty)
    for i, w in new_words.items():
        spans[i].words = w
    source = Source(path, data)
    tree = None

    def give_up(reason: str) -> PartialResult | None:
        """A parse error the per-function lint cannot show the whole file reads the same way."""
        if mid_edit:
            answer = _mid_edit(path, data, settings, language, outline, source, whole_parse, tree)
            if answer is not None:
                return answer
        return _fallback(reason)

    for attempt in (1, 2):
        kept_bytes = sum(spans[i].body_end - spans[i].body_start for i in keep)
        if kept_bytes > max_share * max(1, sum(s.body_end - s.body_start for s in spans)):
            if attempt == 2:
                return give_up("the functions under the whole file's parse errors are most of the file")
            return _fallback("the affected functions are most of the file")
        copied = _lint_copy(path, data, settings, language, spans, keep, source, file_context=outline.file_context)
        if copied is None:
            return _fallback("a mask of the whole file reaches into a function the copy leaves out")
        part, to_real, to_copy = copied
        model = part.model
        if model is None or part.timed_out or part.parsed is None:
            return _fallback("the partial lint could not parse or timed out")
        # Parse errors (a statement half typed) must stay inside the regions of re-linted functions (a
        # run of adjacent ones when the error recovery merges them), and the whole file must read those
        # regions exactly as the copy does.
        root = part.parsed.tree.root_node
        regions = _error_regions(root, to_real, outline, keep) if root.has_error else []
        if root.is_error and not regions:
            return give_up("the copy does not parse as a translation unit")
        if regions:
            same, tree = _same_regions(root, part.parsed.parse_bytes, to_real, to_copy, outline, regions, whole_parse)
            if same:
                break
        elif regions is not None:
            break
        else:
            tree = None
            if whole_parse is not None:
                patches = []
                for i in outline.dirty:
                    c0 = to_copy(spans[i].start)
                    patches.append((spans[i].start, spans[i].body_end,
                                    part.parsed.parse_bytes[c0:c0 + (spans[i].body_end - spans[i].start)]))
                tree = whole_parse(patches)
        # The error runs on into functions the copy left out (or reads differently without them): find
        # the functions under the whole file's errors and lint again with them.
        extra = _spans_under_errors(tree.root_node, outline) if tree is not None and attempt == 1 else None
        if not extra or extra <= keep:
            return give_up("parse errors that the whole file reads differently or outside the edited functions")
        keep = component(outline, keep | extra)
    broken = {i for a, b, members in regions for i in members}
    # The structure must be what the outline says: the component's functions, with the same bodies.
    fresh = _spans(model, part.source.data, lenient=True) or []
    found = {(s.name, to_real(s.body_start), to_real(s.body_end - 1) + 1): s for s in fresh}
    for i in keep - broken:
        if (spans[i].name, spans[i].body_start, spans[i].body_end) not in found:
            return _fallback("the structure changed")
    out: list[Diagnostic] = []
    file_level_new: list[Diagnostic] = []
    for d in part.diagnostics:
        start = to_real(d.start)
        owner = outline.owner_of(start, to_real(d.end))
        if owner is not None and owner not in keep:
            continue
        if d.line != source.line_of(start) + 1 or part.source.line_text(d.line) != source.line_text(d.line):
            return _fallback("a finding on a line that was cut")  # its fingerprint came from other text
        (file_level_new if owner is None else out).append(_relocate(d, source, to_real))
    file_level_old: list[Diagnostic] = []
    first_edit = min(e[0] for e in outline.edits)
    for d in outline.diagnostics:
        start = outline.map_offset(d.start)
        if start is None:
            continue  # inside edited bytes, so inside an edited body: linted again
        owner = outline.owner_of(start, start + (d.end - d.start))
        if owner in keep:
            continue
        # Before the first edit nothing moved, not even a column: the diagnostic stands as it is.
        moved = d if _last_offset(d) < first_edit else _relocate(d, source, outline.map_offset)
        if moved is None:
            return _fallback("a finding could not be moved")  # a related location or fix edit inside edited bytes
        (file_level_old if owner is None else out).append(moved)
    if len(file_level_old) != len(file_level_new) or not all(
            _same(a, b) for a, b in zip(sorted(file_level_old, key=Diagnostic.sort_key),
                                        sorted(file_level_new, key=Diagnostic.sort_key))):
        return _fallback("file-level findings differ")
    out.extend(file_level_old)
    out.sort(key=Diagnostic.sort_key)
    result = FileResult(path, source, language, diagnostics=out, partial=True)
    # The next outline: the same spans (offsets already moved), the component's words and flags fresh.
    spans_next = []
    for i, s in enumerate(spans):
        if i in broken:  # the region as it was; its text may read as anything until it parses again
            s = Span(s.name, s.start, s.body_start, s.body_end, _words(data, s.body_start + 1, s.body_end - 1),
                     s.fixed, True)
        elif i in keep:
            f = found[(s.name, s.body_start, s.body_end)]
            s = Span(s.name, s.start, s.body_start, s.body_end, f.words, f.fixed, f.broken)
        else:
            s = Span(s.name, s.start, s.body_start, s.body_end, s.words, s.fixed, s.broken)
        spans_next.append(s)
    nxt = Outline(spans_next, outline.macros, out, outline.settings_key, [], set(), shared=outline.shared,
                  file_context=outline.file_context)
    return PartialResult(result, nxt, len(keep), len(spans))


def _error_nodes(node):
    """The ERROR and MISSING nodes under ``node`` (subtrees without errors are not walked)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if n.is_error or n.is_missing:
            yield n
        todo.extend(c for c in n.children if c.has_error or c.is_missing)


def _cannot_parse_in_any_context(part: FileResult, to_copy, spans: list[Span], dirty: set[int], masked: bytes) -> bool:
    """Whether the whole file has a parse error too, shown without parsing it (when that parse ran too
    long): each edited function is masked as in the whole file, and the copy has an error in one that is
    not at its end. The copy holds file-level text that parses, then the edited functions, so the parser
    enters each edited function in the state it has at that place in the whole file (after the last
    complete top-level node, or after an error), reads the same tokens, and meets one it cannot take
    before the end of the input: whatever follows in the whole file, the text up to there is already
    no prefix of a valid file. An error at the copy's end (a '}' missing) may be the text cut off."""
    copy_bytes = part.parsed.parse_bytes
    for i in dirty:
        s = spans[i]
        c0 = to_copy(s.start)
        if copy_bytes[c0:c0 + (s.body_end - s.start)] != masked[s.start:s.body_end]:
            return False
    return any(n.end_byte < len(copy_bytes) for n in _error_nodes(part.parsed.tree.root_node))


def _mid_edit(path: str, data: bytes, settings: Settings, language: str, outline: Outline, source: Source,
              whole_parse, tree: ts.Tree | None) -> PartialResult | None:
    """The answer while the edited functions are mid-edit (a statement half typed) and tree-sitter's
    error recovery over the whole file runs beyond them: ``int t =`` typed above a ``for`` loop can make
    the root of a 3,000-line CUDA file one ERROR, reported as one SL001 at line 1 with every other
    finding gone. An editor user expects the parse error where they type and the rest to stay put:

    - each edited function is read on its own, in a copy of the file that keeps the file-level text
      before it and ends at its closing brace (the error recovery cannot run on past it); its parse
      errors become its diagnostics (a function that does not parse is not analysed);
    - every other diagnostic is the last lint's, moved through the edits.

    This is not what a whole-file lint of this text says, so the result is marked (``mid_edit``) and the
    server does not confirm it; the edited functions are marked broken, so the first edit after which
    they parse again is linted with their component and equals a whole-file lint. None (a whole-file
    lint) unless every edited function has parse errors in that copy, all inside its own region, and
    the whole file does not parse either."""
    spans = outline.spans
    dirty = set(outline.dirty)
    until = max(spans[i].body_end for i in dirty)
    copied = _lint_copy(path, data, settings, language, spans, dirty, source, until=until,
                        file_context=outline.file_context)
    if copied is None:
        return None
    part, to_real, to_copy = copied
    if part.model is None or part.timed_out or part.parsed is None:
        return None
    root = part.parsed.tree.root_node
    if root.is_error:
        return None
    hit: set[int] = set()
    for c in root.children:
        if c.has_error or c.is_missing:
            a, b = to_real(c.start_byte), _real_end(c, to_real)
            i = outline.owner_of(a, b)
            if i not in dirty or b > spans[i].body_end:
                return None  # an error in file-level text or across functions
            hit.add(i)
    if hit != dirty:
        return None  # an edited function parses: it must be analysed with its component
    if tree is not None:
        wroot = tree.root_node
        if not (wroot.is_error or any((c.has_error or c.is_missing) and c.start_byte <= spans[i].body_end
                                      and c.end_byte >= spans[i].start for c in wroot.children for i in dirty)):
            return None  # the whole file reads the edited functions without an error: no mid-edit reading
    elif not _cannot_parse_in_any_context(part, to_copy, spans, dirty,
                                          FRONT_ENDS[language].masked(
                                              source, predefined_for(settings, language, outline.file_context),
                                              _macros(outline.file_context))[0]):
        return None
    out: list[Diagnostic] = []
    for d in part.diagnostics:
        start = to_real(d.start)
        owner = outline.owner_of(start, to_real(d.end))
        if owner not in dirty:
            continue  # file-level text and the other functions keep their last diagnostics
        if d.code != PARSE_ERROR:
            return None
        if d.line != source.line_of(start) + 1 or part.source.line_text(d.line) != source.line_text(d.line):
            return None
        out.append(_relocate(d, source, to_real))
    first_edit = min(e[0] for e in outline.edits)
    for d in outline.diagnostics:
        start = outline.map_offset(d.start)
        if start is None or outline.owner_of(start, start + (d.end - d.start)) in dirty:
            continue
        moved = d if _last_offset(d) < first_edit else _relocate(d, source, outline.map_offset)
        if moved is None:
            return None
        out.append(moved)
    out.sort(key=Diagnostic.sort_key)
    result = FileResult(path, source, language, diagnostics=out, partial=True)
    spans_next = [Span(s.name, s.start, s.body_start, s.body_end,
                       _words(data, s.body_start + 1, s.body_end - 1) if i in dirty else s.words,
                       s.fixed, s.broken or i in dirty) for i, s in enumerate(spans)]
    nxt = Outline(spans_next, outline.macros, out, outline.settings_key, [], set(), shared=outline.shared,
                  file_context=outline.file_context)
    return PartialResult(result, nxt, len(dirty), len(spans), mid_edit=True)


__all__ = ["Outline", "Span", "build_outline", "carry_outline", "partial_lint", "component", "PartialResult"]
