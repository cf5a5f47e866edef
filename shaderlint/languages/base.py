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

import bisect
import re
import warnings
from dataclasses import dataclass, field
from itertools import repeat
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
    predefined: object = None  # the build's macros the branches were decided with (None: the defaults)
    #: Macro-generated kernels (:mod:`shaderlint.model.expand`): the expansions appended after the
    #: file's text (``source`` then holds the file and them; offsets from ``expansions[0].start`` on
    #: belong to an expansion, reported at its invocation).
    expansions: tuple = ()

    @property
    def length(self) -> int:
        """The length of the file itself (without the appended expansions)."""
        return self.expansions[0].start if self.expansions else len(self.source.data)

    def expansion_at(self, offset: int):
        """The :class:`shaderlint.model.expand.Expansion` holding ``offset``, or None."""
        if not self.expansions or offset < self.expansions[0].start:
            return None
        from shaderlint.model.expand import origin

        return origin(list(self.expansions), self.expansions[0].start, offset)
    macros: object = None  # the included headers' macros (name -> shaderlint.project.macros.MacroDef) or None
    #: The headers the file's project context read ((absolute path, sha256) in the order read), where the
    #: register walk looks for helpers (:mod:`shaderlint.estimate.headers`); None: no context was built.
    headers: tuple | None = None

    @property
    def root(self) -> ts.Node:
        return self.tree.root_node


# Every byte to a space, except line breaks.
_BLANK_TABLE = bytes(c if c in (0x0A, 0x0D) else 0x20 for c in range(256))


def _blank(buf: bytearray, start: int, end: int) -> None:
    buf[start:end] = buf[start:end].translate(_BLANK_TABLE)


def _blank_literal_nuls(source: Source, buf: bytearray) -> None:
    """NUL bytes inside comments and string literals become spaces in the parsed copy: the grammars'
    comment and string tokens end at a NUL, so one NUL in a comment made the rest of the function an
    unreadable region (SL001, function not analysed). A NUL in code stays a syntax error."""
    for m in list(re.finditer(rb"\0", buf)):
        if source.in_comment_or_string(m.start()):
            buf[m.start()] = 0x20


def _has_line_break(seg: bytes) -> bool:
    return b"\n" in seg or b"\r" in seg


_WS = b" \t\r\n\f\v"
_MATCH_END = re.Match.end


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

    def predefined(self, predefined=None):
        """The build's macros (:func:`shaderlint.languages.conditions.predefined`); None: this
        language's defaults, with no target or ``defines`` configured."""
        if predefined is not None:
            return predefined
        from shaderlint.languages.conditions import predefined as defaults

        return defaults(self.name, None)

    def stage_for(self, path: str, source: Source) -> str | None:
        return None

    def masked(self, source: Source, predefined=None, extra_macros=None) -> tuple[bytes, list[Mask]]:
        """The text the grammar parses (``source`` with every mask applied, same length) and the masks.
        ``predefined``: the build's macros (see :meth:`predefined`); ``extra_macros``: the included
        headers' macro definitions, name -> :class:`shaderlint.project.macros.MacroDef`
        (:func:`shaderlint.project.macros.header_macros` returns them to the masking passes)."""
        from shaderlint.project.macros import using_header_macros

        with using_header_macros(extra_macros):
            return self._masked(source, predefined)

    def _masked(self, source: Source, predefined) -> tuple[bytes, list[Mask]]:
        buf = bytearray(source.data)
        masks: list[Mask] = []
        if buf.startswith(b"\xef\xbb\xbf"):
            masks.append(Mask(0, 3, "bom", ""))
            buf[0:3] = b"   "
        if b"\0" in buf:
            _blank_literal_nuls(source, buf)
        masks.extend(mask_directive_comments(source, buf))
        masks.extend(mask_null_directives(source, buf))
        masks.extend(mask_condition_spellings(source, buf))
        masks.extend(mask_dead_branches(source, buf, self.predefined(predefined)))
        masks.extend(mask_split_expressions(source, buf))
        masks.extend(mask_split_function_headers(source, buf))
        masks.extend(mask_split_bodies(source, buf))
        masks.extend(mask_else_link_conditionals(source, buf))
        if self.name != "glsl":  # GLSL's front end has its own (an initializer list's include stays)
            masks.extend(mask_list_includes(source, buf))
        if self.name != "glsl":  # before the statement-macro passes, which would blank it whole
            masks.extend(mask_body_argument_macros(source, buf))
        masks.extend(self.mask(source, buf))
        masks.extend(mask_macro_definitions(source, buf))
        invocations = mask_file_scope_macro_invocations(source, buf)
        if invocations:
            spans = [(mk.start, mk.end) for mk in invocations]
            masks = [mk for mk in masks if not (mk.kind == "macro-argument" and mk.value == "type"
                                                and any(a <= mk.start < b for a, b in spans))]
            masks.extend(invocations)
        masks.extend(mask_statement_macros(source, buf))
        masks.extend(mask_bare_macro_lines(source, buf))
        if self.name != "glsl":
            masks.extend(mask_statement_prefix_macros(source, buf))
            masks.extend(mask_pointer_qualifier_macros(source, buf))
            masks.extend(mask_parameter_qualifier_macros(source, buf))
            masks.extend(mask_header_function_macros(source, buf))
        masks.extend(mask_pragmas(source, buf))
        masks.extend(mask_jump_arguments(source, buf))
        masks.extend(mask_macro_statement_arguments(source, buf))
        masks.sort(key=lambda mk: mk.start)
        return bytes(buf), masks

    def parse(self, source: Source, old: Parsed | None = None, deadline=None,
              context: tuple[tuple[bytes, list[Mask]] | None, str | None] | None = None, predefined=None,
              expand: bool = True, extra_macros=None, headers: tuple | None = None) -> Parsed:
        """Mask and parse ``source``. With a :class:`shaderlint.deadline.Deadline`, a long parse is
        cancelled when it passes (raising :class:`shaderlint.deadline.TimeBudgetExceeded`).
        ``context``: (masked text and masks or None, stage) to use instead of what ``source`` alone
        gives (``shaderlint.incremental`` parses a copy of a file read in the whole file's context).
        ``predefined``: the build's macros (see :meth:`predefined`). ``expand``: append the
        expansions of the file-scope macro invocations that define kernels
        (:mod:`shaderlint.model.expand`; not with ``context``); ``extra_macros``: macros from the
        headers the file includes (name -> :class:`shaderlint.project.macros.MacroDef`); ``headers``: the
        headers its context read (:attr:`shaderlint.project.includes.FileContext.files`)."""
        parse_bytes, masks = context[0] if context is not None and context[0] is not None \
            else self.masked(source, predefined, extra_macros)
        stage = context[1] if context is not None else self.stage_for(source.path, source)
        expansions: tuple = ()
        if expand and context is None:
            source, parse_bytes, masks, expansions = self._expanded(source, parse_bytes, masks, predefined,
                                                                     extra_macros)
        parser = self.parser()
        tree = _parse(parser, parse_bytes, old.tree if old is not None else None, deadline)
        tree, parse_bytes, masks = _bound_depth(parser, tree, parse_bytes, masks, deadline)
        parsed = Parsed(source, self.name, tree, masks, parse_bytes, stage, predefined=predefined,
                        expansions=expansions, macros=extra_macros, headers=headers)
        gaps = _Gaps(parse_bytes)
        for m in masks:
            if m.kind == "attribute":
                parsed.attrs_after.setdefault(gaps.prev(m.start), []).append(m)
                parsed.attrs_before.setdefault(_next_code(parse_bytes, m.end, gaps.next), []).append(m)
            elif m.kind in ("function-qualifier", "address-space"):
                parsed.qualifiers_before.setdefault(gaps.next(m.end), []).append(m)
        return parsed


    def _expanded(self, source: Source, parse_bytes: bytes, masks: list[Mask], predefined, extra_macros):
        """(source, parse_bytes, masks, expansions) with the kernel-defining invocations' expansions
        appended (:func:`shaderlint.model.expand.expand_invocations`), masked as any code is."""
        from shaderlint.model.expand import expand_invocations

        extra, expansions = expand_invocations(source, masks, self.name, self.predefined(predefined), extra_macros,
                                               parse_bytes=parse_bytes)
        if not expansions:
            return source, parse_bytes, masks, ()
        n = len(source.data)
        bodies = [e for e in expansions if e.body_len]
        moved: list[Mask] = []
        if bodies:
            # a signature macro's invocation and the body after it: read in the expansion (the body's
            # masked text copied there), blanked here; the body's masks move with it
            buf = bytearray(parse_bytes)
            keep = []
            spans = [(e.inv_start, e.body_file + e.body_len, e) for e in bodies]
            for mk in masks:
                hit = next((sp for sp in spans if sp[0] <= mk.start < sp[1]), None)
                if hit is None:
                    keep.append(mk)
                elif mk.start >= hit[2].body_file and mk.end <= hit[1]:
                    shift = hit[2].body_at - hit[2].body_file
                    moved.append(Mask(mk.start + shift, mk.end + shift, mk.kind, mk.text, mk.value, mk.args))
            for s, e, ex in spans:
                _blank(buf, s, e)
                keep.append(Mask(s, e, "macro-invocation", source.data[s:e].decode("utf-8", "replace")))
            masks, parse_bytes = keep, bytes(buf)
        more, more_masks = self.masked(Source(source.path, extra), predefined)
        masks = masks + moved + [Mask(mk.start + n, mk.end + n, mk.kind, mk.text, mk.value, mk.args) for mk in more_masks]
        if bodies:
            masks.sort(key=lambda mk: mk.start)
        return Source(source.path, source.data + extra), parse_bytes + more, masks, tuple(expansions)


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


def _bound_depth(parser: ts.Parser, tree: ts.Tree, data: bytes, masks: list[Mask], deadline):
    """Cut what nests deeper than :data:`shaderlint.languages.depth.MAX_TREE_DEPTH` (blanked as
    ``too-deep`` masks) and parse again: (tree, parsed bytes, masks)."""
    from shaderlint.languages.depth import MAX_TREE_DEPTH, deep_regions

    for attempt in range(3):
        regions = deep_regions(tree.root_node, MAX_TREE_DEPTH, whole_items=attempt > 0)
        if not regions:
            return tree, data, masks
        buf = bytearray(data)
        for s, e in regions:
            _blank(buf, s, e)
        data = bytes(buf)
        masks = sorted(masks + [Mask(s, e, "too-deep", "") for s, e in regions], key=lambda mk: mk.start)
        tree = _parse(parser, data, None, deadline)
    raise ValueError(f"the code nests more than {MAX_TREE_DEPTH} levels deep")


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


# (A directive's rest of line is taken a run at a time, `[^\n\\]+`: the same matches as a byte at a time.)
_FUNC_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\((?:[^()\n]*)\)((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)


_STATEMENT_KEYWORD_START = re.compile(rb"(?:do|if|for|while|switch|return)\b")


def ends_after_blanks(data: bytes, end: int, suffix) -> bool:
    """``data[:end].rstrip().endswith(suffix)`` without copying the prefix."""
    while end > 0 and data[end - 1] in b" \t\n\r\x0b\x0c":
        end -= 1
    return data.endswith(suffix, 0, end)


def on_directive_line(data: bytes, pos: int) -> bool:
    """Whether ``pos`` is on a preprocessor line (only blanks before a ``#`` at its start)."""
    return data[data.rfind(b"\n", 0, pos) + 1:pos].lstrip().startswith(b"#")


_NULL_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?://[^\n]*|/\*[^\n]*?\*/[ \t]*)?\r?$", re.M)
_NULL_DIRECTIVE_NEEDS = re.compile(rb"#[ \t]*(?:\r?\n|//|/\*|$)")  # what every match holds, found fast


def mask_null_directives(source: Source, buf: bytearray) -> list[Mask]:
    """Blank null directives, lines holding nothing but ``#`` (C's "null directive", which the
    preprocessor ignores; old ggml Metal kernels have one after ``#if QK_K == 256``). The grammar
    reads a lone ``#`` as an error."""
    if _NULL_DIRECTIVE_NEEDS.search(source.data) is None:
        return []
    out: list[Mask] = []
    for m in scan_directives(source, _NULL_DIRECTIVE):
        if source.in_comment_or_string(m.start()) or _continues_line(source.data, m.start()):
            continue
        out.append(Mask(m.start(), m.end(), "null-directive", m.group(0).decode("utf-8", "replace").strip()))
        _blank(buf, m.start(), m.end())
    return out


_IF_LINE = re.compile(rb"^[ \t]*#[ \t]*(?:if|elif)\b((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)
_IF_LINE_NEEDS = re.compile(rb"__has_include|\b(?:and|or|not)\b")
# In a condition: `__has_include(<path>)` (its `<...>` is no expression) and the alternative spellings of
# the logical operators (`defined(A) and B == 64`), which the grammar's preprocessor expressions lack.
_CONDITION_WORDS = re.compile(
    rb"(?<![\w])(?:(and|or|not)(?![\w])|(?:__has_include|__has_include_next)\s*(\(\s*(?:<[^<>\n]*>|\"[^\"\n]*\")\s*\)))")
_OPERATOR_SPELLING = {b"and": b"&& ", b"or": b"||", b"not": b"!  "}


def mask_condition_spellings(source: Source, buf: bytearray) -> list[Mask]:
    """Rewrite, same length, what the grammar cannot read in an ``#if``/``#elif`` condition:
    ``and``/``or``/``not`` become ``&&``/``||``/``!`` and ``__has_include(<a/b.h>)`` reads
    ``__has_include`` (the operand blanked: the grammar reads no header name, nor a string, in a
    condition). The evaluator of :mod:`shaderlint.languages.conditions` reads the original text."""
    data = source.data
    out: list[Mask] = []
    for line in scan_directives(source, _IF_LINE):
        if _IF_LINE_NEEDS.search(data, line.start(1), line.end(1)) is None:
            continue
        for m in _CONDITION_WORDS.finditer(data, line.start(1), line.end(1)):
            if source.in_comment_or_string(m.start()):
                continue
            if m.group(1):
                out.append(Mask(m.start(1), m.end(1), "condition-spelling", m.group(1).decode()))
                buf[m.start(1):m.end(1)] = _OPERATOR_SPELLING[m.group(1)]
            else:
                out.append(Mask(m.start(), m.end(), "condition-spelling", m.group(0).decode("utf-8", "replace")))
                _blank(buf, m.start(2), m.end(2))
    return out


def mask_directive_comments(source: Source, buf: bytearray) -> list[Mask]:
    """Mask block comments inside preprocessor lines (``#define M 4 /* rows */ + 1``). The
    preprocessor replaces a comment with a space before it reads the directive, but the grammar ends
    the directive at the comment and reads the rest of the line (``+ 1``) as a statement at file
    scope. Line breaks inside the comment are kept, so lines do not move."""
    data = source.data
    out = []
    # the block comments: the `/*` that open a comment (one that does not is in a string or a comment)
    s = data.find(b"/*")
    while s >= 0:
        span = source.lexical_span(s)
        if span is None or span[0] != s:
            s = data.find(b"/*", s + 1)
            continue
        e = span[1]
        if on_directive_line(data, s):
            out.append(Mask(s, e, "comment", ""))
            _blank(buf, s, e)
        s = data.find(b"/*", e)
    return out


def _strip_comments(body: bytes) -> bytes:
    """A macro body without comments and line continuations, stripped."""
    return re.sub(rb"//[^\n]*|/\*.*?\*/|\\\r?\n", b" ", body, flags=re.S).strip()


# Balanced parentheses, three levels deep. Its match from a `(` is the only one (no shorter end can be
# followed by what follows it), so its repetitions are possessive, and its text is taken a run at a time:
# the same matches as `\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)`, several times faster.
_BALANCED = rb"\((?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+\)"


def _declaring_macros(source: Source) -> list[bytes]:
    """Function-like macros whose expansion declares things: the body holds braces (whole
    functions) or ``template`` (explicit instantiations, ``template [[host_name("f")]] kernel void
    f<float>(...);``), or invokes such a macro (``#define INSTANTIATE(T) INST_A(T) INST_B(T)``)."""
    bodies: dict[bytes, bytes] = {}
    for m in scan_directives(source, _FUNC_MACRO):
        bodies.setdefault(m.group(1), m.group(2))
    # A body that opens with a statement keyword (`do { ... } while (0)`, `if (c) { ... } else { ... }`)
    # is a statement, braces or not: `if (bf) SQM(4, half); else ...` must keep its invocations.
    names = {n for n, body in bodies.items() if (b"{" in body or re.search(rb"\btemplate\b", body))
             and not _STATEMENT_KEYWORD_START.match(_strip_comments(body))}
    changed = bool(names)
    while changed:
        changed = False
        for n, body in bodies.items():
            if n not in names and any(re.search(rb"(?<![\w#])" + re.escape(d) + rb"\s*\(", body) for d in names):
                names.add(n)
                changed = True
    return sorted(names)


def mask_macro_definitions(source: Source, buf: bytearray) -> list[Mask]:
    """Mask invocations of function-like macros that declare whole functions or template
    instantiations (``DEFINE_KERNEL(float, f32)`` lines, often without a semicolon, several on a
    line, a comment after them, or ``extern DECL_CASE(...);`` declaring an instantiation made in
    another file): the grammar cannot read them, and their bodies are not analysed
    anyway. A line is masked only when it holds nothing but such invocations."""
    data = source.data
    names = _declaring_macros(source)
    if not names:
        return []
    alt = b"|".join(re.escape(n) for n in names)
    call = rb"(?:extern[ \t]+)?(?:" + alt + rb")[ \t]*" + _BALANCED + rb"[ \t]*;?"  # `extern`: llama.cpp's declarations
    line = re.compile(rb"^[ \t]*(?:" + call + rb"[ \t]*)+(?=//[^\n]*$|/\*[^\n]*\*/[ \t]*$|\r?$)", re.M)
    one = re.compile(call)
    out = []
    for lm in match_at(data, line, source.line_starts):  # (`^`: tried at the line starts only, not at every byte)
        if source.in_comment_or_string(lm.start()) or data[lm.start():lm.end()].strip() == b"":
            continue
        for m in one.finditer(data, lm.start(), lm.end()):
            name_end = m.start() + len(re.match(rb"\w+", data[m.start():m.end()]).group(0))
            if bytes(buf[m.start():name_end]) != data[m.start():name_end]:
                continue
            out.append(Mask(m.start(), m.end(), "macro-invocation", m.group(0).decode("utf-8", "replace").strip()))
            _blank(buf, m.start(), m.end())
    return out


# A line opening with `name(` at its first column (the invocation may run over several lines): at namespace scope, the
# shape of a macro that expands to declarations (MLX's `instantiate_kernel("name", f, float)`).
_FILE_SCOPE_CALL = re.compile(rb"^([A-Za-z_]\w*)[ \t]*\(", re.M)
_NAME_FIRST = re.compile(rb"[A-Za-z_]")
_NAME_AT_LINE_START = re.compile(rb"\n(?=[A-Za-z_])")  # (the match ends at the line's start)


def _name_line_starts(data: bytes) -> list[int]:
    """Offsets of the lines whose first byte opens a name: where _FILE_SCOPE_CALL can match (a search
    for a line feed is fast; ``^`` with MULTILINE is tried at every byte)."""
    starts = [0] if _NAME_FIRST.match(data) else []
    starts.extend(map(_MATCH_END, _NAME_AT_LINE_START.finditer(data)))
    return starts
_LINE_TAIL = re.compile(rb"[ \t]*;?[ \t]*(?://[^\n]*|/\*[^\n]*?\*/[ \t]*)?\r?(?:\n|$)")
# Words that open a declaration no prefix macro can stand before.
_DECLARATION_START = re.compile(rb"(?:template|namespace|using|typedef|static_assert)\b")
_KEYWORD_CALLS = frozenset((b"if", b"for", b"while", b"switch", b"return", b"sizeof", b"alignof", b"decltype",
                            b"static_assert", b"defined", b"operator", b"asm", b"__asm__", b"_Pragma", b"typeof"))


def _next_code_after_directives(data: bytes, pos: int) -> int:
    """Offset of the next code byte from ``pos``, stepping over comments and directive lines (their
    ``\\`` continuation lines included)."""
    n = len(data)
    while True:
        pos = _next_code(data, pos)
        if pos >= n or data[pos] != 0x23:  # '#'
            return pos
        while True:
            nl = data.find(b"\n", pos)
            if nl < 0:
                return n
            cont = data[nl - 1] == 0x5C or (data[nl - 1] == 0x0D and data[nl - 2] == 0x5C)
            pos = nl + 1
            if not cont:
                break


_CALLS_ONLY = re.compile(rb"(?:\s*([A-Za-z_]\w*)[ \t]*" + _BALANCED + rb")+\s*")
_ONE_CALL = re.compile(rb"([A-Za-z_]\w*)[ \t]*" + _BALANCED)
_PREFIX_CALLS = frozenset((b"__launch_bounds__", b"__attribute__", b"__declspec", b"alignas", b"__align__",
                           b"__cluster_dims__", b"decltype", b"typeof", b"__typeof__"))


def _call_sequence_macros(source: Source) -> set[bytes]:
    """Function-like macros of the file whose every definition's body is one or more invocations
    (``#define inst_all(t) inst_a(t) inst_b(t)``) of names that are not declaration prefixes
    (``__launch_bounds__(...)``, ``__attribute__((...))``): at namespace scope their expansion is
    again such lines, which declare things."""
    out: dict[bytes, bool] = {}
    for m in scan_directives(source, _FUNC_MACRO):
        body = _strip_comments(m.group(2))
        ok = bool(body) and _CALLS_ONLY.fullmatch(body) is not None and not any(
            c.group(1) in _PREFIX_CALLS for c in _ONE_CALL.finditer(body))
        out[m.group(1)] = out.get(m.group(1), True) and ok
    return {n for n, ok in out.items() if ok}


def _continues_line(data: bytes, line_start: int) -> bool:
    """The line starting at ``line_start`` continues the one before (a ``\\`` ends it: a macro body)."""
    j = line_start - 1  # the line feed ending the line before
    if j > 0 and data[j - 1] == 0x0D:
        j -= 1
    return j > 0 and data[j - 1] == 0x5C


def mask_file_scope_macro_invocations(source: Source, buf: bytearray) -> list[Mask]:
    """Blank lines at namespace scope that hold nothing but a macro invocation ``name(args)``, with or
    without ``;`` (MLX's ``instantiate_kq_sdpa(float16_t, float, 256)`` lines, the macro defined in the
    file through a header macro, ``instantiate_kernel(...)``, whose body is not in the file): C and
    C++ have no expression at namespace scope, and no declaration reads ``name(args)``, so such a
    line can only be a macro that expands to declarations, which the grammar cannot read without
    expanding it. Only where the code before is the end of a declaration or block (``;``, ``}``,
    ``{`` of a namespace, ``)``, the file's start) and the code after is not what continues a
    declaration (``{``, ``(``, ``:``, ``;``, ``=``, ``,``, ...): ``KERNEL(f)`` before ``{`` or a
    ``void`` before the line keep their meaning (another pass or an SL001 deals with them)."""
    data = source.data
    if b"(" not in data:
        return []
    # lines starting at the first column only: namespace-scope code is written there, a function's
    # statements are indented (testing every call statement's scope cost more than all other passes)
    candidates = [m for m in match_at(data, _FILE_SCOPE_CALL, _name_line_starts(data))
                  if m.group(1) not in _KEYWORD_CALLS and not source.in_comment_or_string(m.start(1))
                  and buf[m.start(1)] == data[m.start(1)] and not _continues_line(data, m.start())]
    if not candidates:
        return []
    free = _at_namespace_scope(data, buf, _code_braces(source), candidates)
    found_lines: list[tuple[int, int]] = []
    for m, ok in zip(candidates, free):
        s = m.start(1)
        if not ok or (found_lines and s < found_lines[-1][1]):
            continue
        before, _ = _prev_code_byte(source, buf, s)
        if before not in (b";", b"}", b"{", b")", b""):
            continue
        found = _call_arguments(data, m.end() - 1)
        if found is None or found[0]:
            continue
        tail = _LINE_TAIL.match(data, found[2] + 1)
        if tail is None:
            continue
        e = found[2] + 1
        if data[e:tail.end()].strip().startswith(b";"):
            e = data.index(b";", e) + 1
        if _unmasked_but_type_names(buf, data, s, e):
            found_lines.append((s, e))
    # From the last line up: a line without `;` may be a prefix of the declaration after it
    # (`LAUNCH_BOUNDS(256)` before `__global__ void k(`); it is blanked only when what follows is the
    # file's or the namespace's end, a word that cannot continue a declaration, or another such line.
    out: list[Mask] = []
    taken: set[int] = set()
    expands_to_calls = None
    for s, e in reversed(found_lines):
        nxt = _next_code_after_directives(data, e)
        if data[e - 1] != 0x3B and not (nxt >= len(data) or data[nxt] == 0x7D or nxt in taken
                                         or _DECLARATION_START.match(data, nxt)):
            if expands_to_calls is None:
                expands_to_calls = _call_sequence_macros(source)
            if re.match(rb"\w+", data[s:e]).group(0) not in expands_to_calls:
                continue
        taken.add(s)
        out.append(Mask(s, e, "macro-invocation", data[s:e].decode("utf-8", "replace")))
        _blank(buf, s, e)
    out.reverse()
    return out


def _unmasked_but_type_names(buf: bytearray, data: bytes, s: int, e: int) -> bool:
    """No pass masked ``data[s:e]``, except type-name arguments renamed for the grammar (CUDA's
    ``mask_type_arguments``: ``BINARY_OP(float, badd_f32, x + y);`` reads ``_loat``), whose masks
    :meth:`FrontEnd._masked` drops once the whole invocation is blanked."""
    if bytes(buf[s:e]) == data[s:e]:
        return True
    return all(b == d or (b == 0x5F and chr(d).isalpha()) for b, d in zip(buf[s:e], data[s:e]))


# A line holding a lone upper-case identifier, between statements (after `;`, `{` or `}`, before the
# next statement): an object-like macro from a header that expands to declarations or statements
# (`GGML_TENSOR_BINARY_OP_LOCALS`). C has no statement without a semicolon, so it can be nothing else.
_BARE_MACRO = re.compile(rb"^[ \t]*([A-Z][A-Z0-9_]*_[A-Z0-9_]*)[ \t]*(?://[^\n]*)?\r?$", re.M)


_VALUE_BODY = re.compile(rb"(?!.*(?:_Pragma|__pragma|\basm\b|__asm))[\w().+\-*/%<>=!&|^~?: \t]+", re.S)


def mask_bare_macro_lines(source: Source, buf: bytearray) -> list[Mask]:
    data = source.data
    out = []
    defined = None
    for m in match_at(data, _BARE_MACRO, source.upper_line_starts):
        s, e = m.start(1), m.end(1)
        if source.in_comment_or_string(s) or bytes(buf[s:e]) != data[s:e]:
            continue
        if defined is None:
            defined = {d.group(1) for d in scan_directives(source, _OBJ_MACRO) if not re.search(rb"[;{}]", d.group(2))}
            # a header's value macro (a number or an expression; not a `_Pragma` or an empty body, which
            # stand for statements or nothing and are still masked on a line of their own)
            defined.update(n for n, b in header_macros_for(source, False).items() if _VALUE_BODY.fullmatch(b.strip()))
        if m.group(1) in defined:
            continue  # a value macro of this file or its headers: an identifier the model evaluates
        before, at = _prev_code_byte(source, buf, s)
        if before == b"{" and _prev_code_byte(source, buf, at)[0] in (b"=", b"]", b"(", b","):
            continue  # an initializer list (`= {`) or a braced argument, not a block
        after = _next_code(bytes(buf[e:e + 4096]), 0)
        nxt = buf[e + after:e + after + 1]
        if before not in (b";", b"{", b"}") or not (nxt == b"}" or (nxt and (nxt.isalpha() or nxt == b"_"))):
            continue
        out.append(Mask(s, e, "macro-invocation", m.group(1).decode()))
        _blank(buf, s, e)
    return out


# `UNROLL_HINT for (...)`, `PRAGMA_UNROLL` / `while (...)`: an upper-case object-like macro before a loop or branch
# at a statement's start, on its line or the one before (a header's `#define UNROLL_HINT _Pragma("unroll")`).
# (The name is the whole upper-case word: taken possessively, then its last two bytes checked, instead of
# giving the word back a byte at a time after a failed try; the same matches in two thirds of the time.)
_STATEMENT_PREFIX_MACRO = re.compile(
    rb"([A-Z](?<![\w.>:#][A-Z])[A-Z0-9_]*+(?<=[A-Z0-9_][A-Z0-9]))[ \t]*(?://[^\n]*)?(?:\r?\n[ \t]*)?"
    rb"(?=(?:for|while|do|switch|if)\b|\{)")


def mask_statement_prefix_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank such a macro: a name before ``for`` is no statement, so it can only be a pragma-like
    macro (or one that brings its own ``;``). Only inside a block (after ``;``, ``{``, ``}``, ``)``
    or ``else``), and not for a name the file defines as a value (``#define N 4``: ``N for`` is an
    error the compiler reports too); the loop is read as written, the pragma's text is lost."""
    data = source.data
    out: list[Mask] = []
    values = None
    for m in code_matches_at(source, _STATEMENT_PREFIX_MACRO, source.caps_word_starts):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != data[s:e] or on_directive_line(data, s):
            continue
        before, at = _prev_code_byte(source, buf, s)
        if before not in (b";", b"{", b"}", b")") and not data.endswith(b"else", 0, at + 1):
            continue
        nxt = _next_code(data, e)
        if data[nxt:nxt + 1] == b"{" and before not in (b";", b"{", b"}"):
            continue  # `if (c) NAME {`: left to the block-header passes
        if values is None:
            values = {d.group(1) for d in scan_directives(source, _OBJ_MACRO)  # (an empty body is no value)
                      if _strip_comments(d.group(2)) and not re.search(rb"[;{}]|_Pragma|__pragma", d.group(2))}
        if m.group(1) in values:
            continue
        out.append(Mask(s, e, "macro-invocation", m.group(1).decode(), "statement-prefix"))
        _blank(buf, s, e)
    return out


_INCLUDE_LINE = re.compile(rb"^[ \t]*#[ \t]*include\b[^\n]*", re.M)


def mask_list_includes(source: Source, buf: bytearray) -> list[Mask]:
    """An ``#include`` inside a parameter or argument list (``void k(float* a,`` / ``#include
    "params.inc"`` / ``)``, ``k<<<g, b>>>(`` / ``#include "args.inc"`` / ``);``): the grammar has no
    place for a directive there. The line is blanked with the ``,`` that joined it to the list, so the
    list reads without the included part (what it holds is unknown: its parameters or arguments are
    missing from the model, as the text of any unread header is)."""
    data = source.data
    if b"include" not in data:
        return []
    out: list[Mask] = []
    for m in scan_directives(source, _INCLUDE_LINE):
        s, e = m.start(), m.end()
        # fast test on the raw text first: a list's `(` or `,` before the line, or `)`, `,` or `>>>` after it
        j = s
        while j > 0 and data[j - 1] in b" \t\r\n":
            j -= 1
        k = e
        while k < len(data) and data[k] in b" \t\r\n":
            k += 1
        if data[j - 1:j] not in (b"(", b",") and data[k:k + 1] not in (b")", b",", b">"):
            continue
        if buf[s:e] != data[s:e]:
            continue
        before, at = _prev_code_byte(source, buf, s)
        nxt = _next_code_after_directives(data, e)
        after = data[nxt:nxt + 1]
        if before not in (b"(", b",") or after not in (b")", b",", b">"):
            continue
        if after == b">" and not data.startswith(b">>>", nxt):
            continue
        comma = at if before == b"," else nxt if after == b"," else None
        out.append(Mask(s, e, "list-include", m.group(0).decode("utf-8", "replace")))
        _blank(buf, s, e)
        if comma is not None and buf[comma] == 0x2C:
            out.append(Mask(comma, comma + 1, "list-include", ","))
            buf[comma] = 0x20
    return out


# `T * NAME name` / `T & NAME name`: an upper-case macro between a declarator's `*` or `&` and the
# declared name -- llama.cpp's `const half2 * GGML_CUDA_RESTRICT mask = mask_ptr;`, a header macro
# standing for `__restrict__` or nothing. Two identifiers after `*` are never an expression, so the
# grammar reads the declaration (and every kernel declaring its pointers so) as an error.
_POINTER_QUALIFIER_MACRO = re.compile(
    rb"[*&][ \t]*([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]+(?=[A-Za-z_]\w*[ \t]*(?:[=;,)\[]|/[/*]))")


# `(..., NAME Type const name, ...)`: an upper-case macro before a parameter's type -- CuTe's
# `CUTE_GRID_CONSTANT TmaAtomA const tma_atom_A` (for `__grid_constant__`). A parameter never
# starts with two identifiers before its name unless the first qualifies it.
# The macro may stand alone on its line, and the type be dependent (flashinfer's `CUTE_GRID_CONSTANT` line
# before `typename CollectiveMainloop::Params const mainloop_params`).
# (The name is taken possessively, as _STATEMENT_PREFIX_MACRO's.)
_PARAMETER_QUALIFIER_MACRO = re.compile(
    rb"([A-Z](?<![\w][A-Z])[A-Z0-9_]*+(?<=[A-Z0-9_][A-Z0-9]))(?:[ \t]+|[ \t]*\r?\n\s*)(?!(?:const|volatile|unsigned|signed|struct|enum|class|union)\b)"
    rb"(?=(?:typename[ \t]+)?[A-Za-z_][\w:]*(?:<[^<>()\n]*>)?[ \t]*(?:(?:const|volatile)[ \t]+)?[*&]*[ \t]*"
    rb"[A-Za-z_]\w*[ \t]*[,)=])")


def mask_parameter_qualifier_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank such a macro name where it opens a parameter (after `(` or `,`)."""
    data = source.data

    def opens_parameter(s: int) -> bool:
        if s > 0 and (data[s - 1:s].isalnum() or data[s - 1:s] == b"_"):
            return False  # inside a longer word
        return _prev_code_byte(source, buf, s)[0] in (b"(", b",")

    return _blank_qualifier_macros(source, buf, _PARAMETER_QUALIFIER_MACRO, opens_parameter, source.caps_word_starts)


def mask_pointer_qualifier_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank such a macro name. A name the file defines as an object-like macro is blanked too
    (`#define RESTRICT __restrict__`: the qualifier changes nothing shaderlint reads)."""
    if b"*" not in source.data and b"&" not in source.data:
        return []
    return _blank_qualifier_macros(source, buf, _POINTER_QUALIFIER_MACRO, lambda s: True, _pointer_qualifier_starts(source))


def _pointer_qualifier_starts(source: Source) -> list[int]:
    """Where _POINTER_QUALIFIER_MACRO can match: the ``*`` or ``&`` before blanks before an upper-case name of
    two bytes or more (from :attr:`Source.caps_word_starts`; a scan for ``[*&]`` stops at every pointer)."""
    data = source.data
    out = []
    for i in source.caps_word_starts:
        j = i
        while j > 0 and data[j - 1] in b" \t":
            j -= 1
        if j > 0 and data[j - 1] in b"*&":
            out.append(j - 1)
    return out


def _blank_qualifier_macros(source: Source, buf: bytearray, pattern: re.Pattern[bytes], accept,
                            starts: list[int] | None = None) -> list[Mask]:
    """Blank group 1 of ``pattern``'s matches in code where ``accept(start)``, not yet masked, not on a
    directive line, and not a function-like macro of the file (its use would have parentheses).
    ``starts``: the offsets where ``pattern`` can match (as for :func:`match_at`), if known."""
    data = source.data
    out: list[Mask] = []
    function_like = None
    for m in scan_code(source, pattern) if starts is None else code_matches_at(source, pattern, starts):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != data[s:e] or on_directive_line(data, s) or not accept(s):
            continue
        if function_like is None:
            function_like = {d.group(1) for d in _FUNC_MACRO.finditer(data)} | set(header_macros_for(source, True))
        if m.group(1) in function_like:
            continue
        out.append(Mask(s, e, "pointer-qualifier", m.group(1).decode()))
        _blank(buf, s, e)
    return out


# `NAME(args) {` at file scope (or in namespaces) with an upper-case NAME the file does not define: a
# header macro that opens a function definition -- googletest's TEST(Suite, Name) / TEST_F / TYPED_TEST,
# Catch2's TEST_CASE("name") -- which the grammar cannot read (thousands of SL001 on CUTLASS's tests).
_HEADER_FUNCTION_MACRO = re.compile(
    rb"^[ \t]*([A-Z][A-Z0-9_]*)[ \t]*(" + _BALANCED + rb")[ \t]*(?://[^\n]*)?(?:\r?\n[ \t]*)*\{", re.M)
_COMMA_BRACE = re.compile(rb",[ \t\r\n]*\{")
_BODY_ARGUMENT_MACRO = re.compile(
    # (the same matches as `\((?:[^(){};\"'/]|/(?![/*])|BALANCED)*,`: a run without `,` is taken whole, since
    # only before a `,` can the repetition stop)
    rb"^[ \t]*([A-Z][A-Z0-9_]*)[ \t]*\((?:[^(){};\"'/,]++|,|/(?![/*])|" + _BALANCED + rb")*,[ \t\r\n]*\{", re.M)
_NAMESPACE_OPEN = re.compile(rb"(?:\bnamespace(?:\s+[\w:]+)?|\bextern\s*\"C(?:\+\+)?\")\s*$")


def mask_header_function_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Rewrite such a ``NAME(args)`` as ``void _N()`` of the same length, line breaks kept: the
    function it opens is read as host code (no rule reports on host code for what it cannot know;
    launches inside it count as launch sites). A name the file defines, a line inside a function
    or class body, one after a type (an upper-case function name below its return type) or one
    that is not followed by ``{`` is left alone."""
    data = source.data
    if b"{" not in data:
        return []
    out: list[Mask] = []
    for k, m in _namespace_scope_macros(source, buf, _HEADER_FUNCTION_MACRO, lambda m: m.end(2))[0]:
        s, e = m.start(1), m.end(2)
        before, _ = _prev_code_byte(source, buf, s)
        if before and (before.isalnum() or before in b"_*&"):
            continue  # a function's name on the line after its return type (`__global__ void` / `SCALE(float* a) {`)
        text = _lay_out(data[s:e], (b"void", b"_%d" % k), b"()")
        if text is None:
            continue
        out.append(Mask(s, e, "header-function-macro", data[s:e].decode("utf-8", "replace")))
        buf[s:e] = text
    return out


def mask_body_argument_macros(source: Source, buf: bytearray) -> list[Mask]:
    """CUTLASS's ``CUTLASS_TEST_L1(Suite, Name, { body } )``: a test macro whose last argument is
    the test's body. ``NAME(args, `` becomes ``void _bN()`` of the same length (line breaks kept)
    and the closing ``)`` a blank, so the body is read as a host function, as for ``TEST(...) {``.
    Only at namespace scope, for a name the file does not define, when the body's ``}`` is
    followed by the ``)``."""
    data = source.data
    if _COMMA_BRACE.search(data) is None:
        return []
    out: list[Mask] = []
    found, braces = _namespace_scope_macros(source, buf, _BODY_ARGUMENT_MACRO, lambda m: m.end())
    for k, m in found:
        close = _body_argument_close(data, braces, m.end() - 1)
        if close is None:
            continue
        s, e = m.start(1), data.rfind(b",", m.start(1), m.end()) + 1  # `NAME(args,` (blanks after it stay)
        text = _lay_out(data[s:e], (b"void", b"_b%d" % k), b"()")
        if text is None:
            continue
        out.append(Mask(s, e, "header-function-macro", data[s:e].decode("utf-8", "replace")))
        buf[s:e] = text
        out.append(Mask(close, close + 1, "header-function-macro", ")"))
        buf[close] = 0x20
    return out


def _namespace_scope_macros(source: Source, buf: bytearray, pattern: re.Pattern[bytes], end) -> tuple[list, list[int]]:
    """((index, match), ...) of ``pattern``'s matches at upper-case line starts, from group 1 to
    ``end(match)`` not yet masked, outside comments, naming a macro the file does not define, where
    only namespace blocks enclose them; and the file's code braces (empty when nothing matched)."""
    data = source.data
    candidates = [m for m in match_at(data, pattern, source.upper_line_starts)
                  if not source.in_comment_or_string(m.start(1)) and bytes(buf[m.start(1):end(m)]) == data[m.start(1):end(m)]]
    if not candidates:
        return [], []
    defined = {d.group(1) for d in scan_directives(source, _FUNC_MACRO)} | {
        d.group(1) for d in scan_directives(source, _OBJ_MACRO)}
    candidates = [m for m in candidates if m.group(1) not in defined]
    if not candidates:
        return [], []
    braces = _code_braces(source)
    free = _at_namespace_scope(data, buf, braces, candidates)
    return [(k, m) for k, (m, ok) in enumerate(zip(candidates, free)) if ok], braces


def _code_braces(source: Source) -> list[int]:
    """Offsets of the file's `{` and `}` outside comments and strings, in order (:attr:`Source.code_braces`,
    found once per file: several passes ask). Not to be modified."""
    return source.code_braces


def opens_namespace(head: bytes) -> bool:
    """Whether ``head`` (the text before a ``{``) ends with what opens a namespace or ``extern "C"``
    block (``_NAMESPACE_OPEN``; the search, tried at every byte, only when a word of it is there)."""
    return (b"namespace" in head or b"extern" in head) and _NAMESPACE_OPEN.search(head) is not None


def _at_namespace_scope(data: bytes, buf: bytearray, braces: list[int], matches: list) -> list[bool]:
    """For each match (in order), whether only namespace / ``extern "C"`` blocks enclose its
    group 1 (from the code braces before it; ``buf``: the text masked so far)."""
    stack: list[bool] = []  # True: a namespace / extern "C" block
    out: list[bool] = []
    bi = 0
    for m in matches:
        while bi < len(braces) and braces[bi] < m.start(1):
            pos = braces[bi]
            if data[pos:pos + 1] == b"{":
                stack.append(opens_namespace(bytes(buf[max(0, pos - 200):pos])))
            elif stack:
                stack.pop()
            bi += 1
        out.append(all(stack))
    return out


def _body_argument_close(data: bytes, braces: list[int], open_brace: int) -> int | None:
    """The offset of the `)` that closes a body-argument macro whose body opens at ``open_brace``:
    the body's matching `}` (``braces``: the code braces of the file, in order), then only blanks
    and comments before `)`. None when the shape is not that."""
    i = bisect.bisect_left(braces, open_brace)
    if i >= len(braces) or braces[i] != open_brace:
        return None
    depth = 0
    for pos in braces[i:]:
        depth += 1 if data[pos] == 0x7B else -1
        if depth == 0:
            j = _next_code(data, pos + 1)
            return j if j < len(data) and data[j] == 0x29 else None
    return None


def _lay_out(seg: bytes, tokens: tuple[bytes, ...], tail: bytes) -> bytearray | None:
    """``seg`` rewritten as ``tokens`` (separated by a blank) then ``tail`` at its very end, every line
    break kept where it is (a token never straddles one); None when they do not fit."""
    text = bytearray(seg.translate(_BLANK_TABLE))
    limit = len(seg) - len(tail)
    if limit < 0 or _has_line_break(seg[limit:]):
        return None
    text[limit:] = tail
    pos = 0
    for tok in tokens:
        while pos + len(tok) <= limit and _has_line_break(seg[pos:pos + len(tok)]):
            pos += 1
        if pos + len(tok) > limit:
            return None
        text[pos:pos + len(tok)] = tok
        pos += len(tok) + 1
    return text


def _prev_code_byte(source: Source, buf: bytearray, pos: int) -> tuple[bytes, int]:
    """The last byte before ``pos`` that is code (not blank, not in a comment, not a preprocessor
    line) and its offset; (b"", 0) at the start of the file."""
    data = source.data
    while pos > 0:
        # back over the blanks a window at a time (a blanked dead branch is thousands of them)
        size = 64
        while True:
            start = max(0, pos - size)
            kept = len(buf[start:pos].rstrip(_WS))
            if kept or not start:
                pos = start + kept
                break
            pos, size = start, min(size * 4, 1 << 16)
        if not pos:
            break
        pos -= 1
        c = buf[pos]
        line_start = data.rfind(b"\n", 0, pos) + 1
        if data[line_start:pos + 1].lstrip().startswith(b"#"):
            pos = line_start
            continue
        span = source.lexical_span(pos)
        if span is not None:
            # skip the rest of the comment or string on this line at once (the line is no directive:
            # neither is any byte before ``pos`` on it); byte by byte, a long comment took a bisect per byte
            pos = max(span[0], line_start)
            continue
        return bytes([c]), pos
    return b"", 0


_OBJ_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)
_DEFINE_OR_UNDEF_NAME = re.compile(rb"^[ \t]*#[ \t]*(?:define|undef)[ \t]+([A-Za-z_]\w*)", re.M)


def header_macros_for(source: Source, function_like: bool | None = None) -> dict[bytes, bytes]:
    """The included headers' macros (:func:`shaderlint.project.macros.header_macros`, empty without a
    project context) that the file neither defines nor undefines itself (its own definitions keep
    today's per-file reading): name -> body; ``function_like`` True / False keeps only those kinds."""
    from shaderlint.project.macros import header_macros

    header = header_macros()
    if not header:
        return {}
    # several passes ask, for the same headers: the answers are kept with the source (not to be modified)
    known = source.header_macros_read
    if known.get("header") is not header:
        known.clear()
        known["header"] = header
    out = known.get(function_like)
    if out is not None:
        return out
    own = {m.group(1) for m in scan_directives(source, _DEFINE_OR_UNDEF_NAME)}
    out = {}
    for name, d in header.items():
        key = name.encode()
        if key in own or (function_like is not None and (d.params is not None) != function_like):
            continue
        out[key] = d.body.encode("utf-8", "surrogateescape")
    known[function_like] = out
    return out


_PRAGMA = re.compile(rb"^[ \t]*#[ \t]*pragma\b(?:[^\n\\]+|\\\r?\n|\\)*|\b_Pragma\s*\(\s*\"(?:[^\"\\\n]|\\.)*\"\s*\)", re.M)


_STATEMENT_START = re.compile(rb"\{|(?:do|if|for|while|switch|return)\b")


def _is_statement_body(body: bytes) -> bool:
    """A macro body that is statements: it holds a ``;`` or opens with a block or a statement keyword.
    Braces after an expression are a braced initializer, an expression (bitsandbytes'
    ``#define CUB_REDUCTIONOP_MAX cuda::maximum<> {}`` passed as an argument)."""
    body = _strip_comments(body)
    return b";" in body or _STATEMENT_START.match(body) is not None


def mask_statement_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Mask uses of object-like macros whose body is statements (``#define BODY { ... }``,
    ``#define SYNC __syncthreads();``): ``{ BODY }`` cannot be parsed without expanding it."""
    data = source.data
    names = [m.group(1) for m in scan_directives(source, _OBJ_MACRO) if _is_statement_body(m.group(2))]
    # the headers' statement macros the file uses (`SYNC_WARP` from a utils.h)
    names += [n for n, b in header_macros_for(source, False).items() if _is_statement_body(b) and n in data]
    if not names:
        return []
    pattern = re.compile(rb"(?<![\w#])(?:" + b"|".join(re.escape(n) for n in names) + rb")\b[ \t]*;?")
    out = []
    for m in match_at(data, pattern, word_starts(data, tuple(names))):  # (tried where a name is, not at every byte)
        if on_directive_line(data, m.start()) or source.in_comment_or_string(m.start()):
            continue  # the #define itself, #ifdef BODY, comments
        if bytes(buf[m.start():m.end()]) != data[m.start():m.end()]:
            continue
        out.append(Mask(m.start(), m.end(), "macro-invocation", m.group(0).decode("utf-8", "replace").strip()))
        _blank(buf, m.start(), m.end())
    return out


_UPPER_CALL = re.compile(rb"(?<![\w.>:])([A-Z_][A-Z0-9_]*)[ \t]*\(")  # matches at Source.upper_call_starts
_MAX_MACRO_ARGS = 1 << 16  # bytes scanned for one macro's argument list
# The bytes the argument scan acts on; it steps over the others in one search instead of byte by byte.
_ARGUMENT_SCAN_STOP_COMMAS = re.compile(rb"[()\[\]{};,/\"'\n]")


def _macro_argument_semicolons(data: bytes, open_paren: int, directives: bool = False) -> tuple[list[int], int] | None:
    """The ``;`` at the top level of the argument list opening at ``open_paren`` (not inside nested
    parentheses, brackets, braces, comments, strings or character literals) and the offset of the
    closing ``)``; None when the list does not close within the scan limit or holds a preprocessor line
    (with ``directives``, preprocessor lines are stepped over instead)."""
    found = _argument_list(data, open_paren, directives)
    return None if found is None else (found[0], found[2])


def _call_arguments(data: bytes, open_paren: int) -> tuple[list[int], list[tuple[int, int]], int] | None:
    """(top-level ``;``, top-level arguments as (start, end), offset of the ``)``) of the argument list
    opening at ``open_paren``; None as for :func:`_macro_argument_semicolons`."""
    found = _argument_list(data, open_paren, commas=True)
    if found is None:
        return None
    semis, commas, close = found
    starts = [open_paren + 1] + [c + 1 for c in commas]
    return semis, list(zip(starts, commas + [close])), close


def _argument_list(data: bytes, open_paren: int, directives: bool = False,
                   commas: bool = False) -> tuple[list[int], list[int], int] | None:
    """(top-level ``;``, top-level ``,`` when ``commas``, the closing ``)``): one scan for both. Several
    passes ask about the same ``(`` of the same text: the scan of each is kept for the text last asked
    about (:func:`_scan_argument_list`, which answers both ``directives`` and ``commas``)."""
    if type(data) is not bytes:  # (a mutable buffer: nothing to keep)
        scan = _scan_argument_list(data, open_paren)
    else:
        known_data, known = _ARGUMENT_LISTS
        if known_data is not data:
            known = {}
            _ARGUMENT_LISTS[:] = data, known
        scan = known.get(open_paren, _ARGUMENT_LISTS)
        if scan is _ARGUMENT_LISTS:  # (not asked yet; a scan can be None)
            scan = known[open_paren] = _scan_argument_list(data, open_paren)
    if scan is None:
        return None
    semis, seps, close, directive = scan
    if directive and not directives:
        return None
    return list(semis), list(seps) if commas else [], close


# The text last scanned by _argument_list and its scans, open paren -> _scan_argument_list's result.
_ARGUMENT_LISTS: list = [None, {}]


def _scan_argument_list(data: bytes, open_paren: int) -> tuple[list[int], list[int], int, bool] | None:
    """(top-level ``;``, top-level ``,``, the closing ``)``, whether a preprocessor line was stepped
    over) of the argument list opening at ``open_paren``; None when it does not close within the scan
    limit (or a preprocessor line there does not end)."""
    n = min(len(data), open_paren + _MAX_MACRO_ARGS)
    depth, semis, seps, i = 0, [], [], open_paren
    directive = False
    stop_at = _ARGUMENT_SCAN_STOP_COMMAS
    while i < n:
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return (semis, seps, i, directive) if c == 0x29 else None
        elif c == 0x3B and depth == 1:
            semis.append(i)
        elif c == 0x2C and depth == 1:
            seps.append(i)
        elif c == 0x2F and data.startswith(b"//", i):
            nl = data.find(b"\n", i)
            i = n if nl < 0 else nl
            continue
        elif c == 0x2F and data.startswith(b"/*", i):
            close = data.find(b"*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        elif c in b"\"'":
            j = i + 1
            while j < n and data[j] != c and data[j] != 0x0A:
                j += 2 if data[j] == 0x5C else 1
            i = j + 1
            continue
        elif c == 0x0A and data[i + 1:i + 64].lstrip(b" \t").startswith(b"#"):
            directive = True
            while True:  # step over the directive line and its `\` continuations
                nl = data.find(b"\n", i + 1)
                if nl < 0 or nl >= n:
                    return None
                cont = data[i + 1:nl].rstrip(b"\r").endswith(b"\\")
                i = nl
                if not cont:
                    break
            continue
        stop = stop_at.search(data, i + 1, n)
        if stop is None:
            return None
        i = stop.start()
    return None


def mask_macro_statement_arguments(source: Source, buf: bytearray) -> list[Mask]:
    """Let the grammar read invocations of header macros that take statements as arguments, such as
    apex's ``DISPATCH_FLOAT_AND_HALF(type, 0, "name", some_call<1>(a, b);)`` (often with no ``;``
    after the invocation, the macro's expansion being a whole block). A ``;`` at the top level of a
    call's argument list is valid only there. Each such ``;`` becomes an argument separator (``,``),
    except the last one, which changes places with the ``)``, so the invocation reads as an
    expression statement, ``f(a, g(b));``. Only
    upper-case names (macro convention), only argument lists whose last ``;`` stands right before the
    ``)`` (a loop-header macro's ``(init; cond; step)`` is left alone), only bytes no other mask
    touched; the rest of the argument text stays visible to the analysis (launches inside the
    arguments are still found)."""
    data = source.data
    if b";" not in data:
        return []
    out: list[Mask] = []
    covered = -1
    for m in match_at(data, _UPPER_CALL, source.upper_call_starts):
        s, paren = m.start(1), m.end() - 1
        if s < covered or source.in_comment_or_string(s) or bytes(buf[s:m.end()]) != data[s:m.end()]:
            continue
        if on_directive_line(data, s):
            continue  # #define NAME(...) and other directives
        found = _macro_argument_semicolons(data, paren)
        if found is None:
            continue
        semis, close = found
        covered = close
        if not semis or any(buf[i] != data[i] for i in (*semis, close)):
            continue
        last = semis[-1]
        if data[last + 1:close].strip(_WS) != b"":
            continue  # not statements: a loop-header macro `FOR_EACH (int i = 0; i < n; ++i)` and the like
        for i in semis[:-1]:
            out.append(Mask(i, i + 1, "macro-argument", ";", "separator"))
            buf[i] = 0x2C  # ','
        out.append(Mask(last, close + 1, "macro-argument", data[last:close + 1].decode("utf-8", "replace"), "statement-end"))
        buf[last] = 0x29  # ')'
        buf[close] = 0x3B  # ';'
    return out


_JUMP_WORD = re.compile(rb"(?:return|break|continue)\b")


def mask_jump_arguments(source: Source, buf: bytearray) -> list[Mask]:
    """A jump statement passed to an upper-case macro as an argument, CUTLASS's
    ``CHECK_CUDA_CALL(cudaDeviceSynchronize(), return false);`` (the macro runs it on failure): the
    keyword is blanked (``return false`` reads as ``false``; a bare ``break`` as ``0``), so the
    invocation reads as a call. Only at the start of a top-level argument, only bytes no other
    mask touched."""
    data = source.data
    if b"return" not in data and b"break" not in data and b"continue" not in data:
        return []
    out: list[Mask] = []
    for m in match_at(data, _UPPER_CALL, source.upper_call_starts):
        s, paren = m.start(1), m.end() - 1
        if source.in_comment_or_string(s) or on_directive_line(data, s) or bytes(buf[s:m.end()]) != data[s:m.end()]:
            continue
        found = _call_arguments(data, paren)
        if found is None or _JUMP_WORD.search(data, paren, found[2]) is None:
            continue
        for a, b in found[1]:
            ks = _next_code(data, a)
            j = _JUMP_WORD.match(data, ks, b)
            if j is None or bytes(buf[ks:j.end()]) != data[ks:j.end()]:
                continue
            out.append(Mask(ks, j.end(), "macro-argument", j.group(0).decode(), "jump"))
            _blank(buf, ks, j.end())
            if _next_code(data, j.end()) >= b or data[_next_code(data, j.end())] == 0x3B:
                buf[ks] = 0x30  # a bare `break`: an argument must remain
    return out


def mask_pragmas(source: Source, buf: bytearray) -> list[Mask]:
    """Mask ``#pragma`` lines and ``_Pragma("...")`` operators: they may stand between a loop
    header and its body, where the grammar cannot read them. The kernel model finds
    ``#pragma unroll`` through these masks (:meth:`FileModel.pragma_before`)."""
    out = []
    data = source.data
    # a match opens a directive line (the `#pragma` alternative) or a `_Pragma`: tried there only (the
    # pattern opens with `^` and `\b`, which the regex engine tries at every byte)
    pragmas = match_at(data, _PRAGMA, sorted({*source.directive_starts, *word_starts(data, (b"_Pragma",))})) \
        if b"_Pragma" in data else scan_directives(source, _PRAGMA)
    for m in pragmas:
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


def can_match(data: bytes, needs: bytes | tuple[bytes, ...] | re.Pattern[bytes] | None) -> bool:
    """A cheap test that must pass for a pass's pattern to match anywhere in ``data``: ``needs`` is
    bytes every match holds, a tuple of bytes one of which every match holds, or a pattern (with a
    literal prefix, so the search is fast) that finds something wherever the pass's pattern does.
    Most passes look for a keyword or shape that most files lack; a regular expression that opens with
    a look-behind or ``\\b`` is tried at every byte, the ``in`` test is some 50 times faster."""
    if needs is None:
        return True
    if isinstance(needs, bytes):
        return needs in data
    if isinstance(needs, tuple):
        return any(n in data for n in needs)
    return needs.search(data) is not None


def match_at(data: bytes, pattern: re.Pattern[bytes], starts: list[int]):
    """``pattern.finditer(data)`` for a pattern that can match only at the offsets ``starts``
    (ascending, each once): tried there only, not at every byte. (The tries run in C, ``map``; the
    matches that start inside the previous one are dropped, as ``finditer`` never tries there.)"""
    end = 0
    for m in filter(None, map(pattern.match, repeat(data), starts)):
        if m.start() >= end:  # not inside the previous match
            end = m.end()
            yield m


def word_starts(data: bytes, words: tuple[bytes, ...]) -> list[int]:
    """The offsets where one of ``words`` begins, ascending, each once."""
    found = set()
    for word in words:
        i = data.find(word)
        while i >= 0:
            found.add(i)
            i = data.find(word, i + 1)
    return sorted(found)


def line_starts_with(data: bytes, first: bytes) -> list[int]:
    """Offsets of the lines (after a line feed, or the file's start) whose first byte other than spaces
    and tabs is in the character class ``first`` (``rb"[A-Z]"``): where a pattern opening with
    ``^[ \\t]*`` and that class (MULTILINE) can match."""
    starts = [0] if re.match(rb"[ \t]*" + first, data) else []
    starts.extend(m.start() + 1 for m in re.finditer(rb"\n[ \t]*" + first, data))
    return starts


def scan_directives(source: Source, pattern: re.Pattern[bytes]):
    """``pattern.finditer(source.data)`` for a pattern that can match only at the start of a line whose
    first byte other than spaces and tabs is ``#`` (it opens with ``^[ \\t]*#``, MULTILINE): tried at
    those lines only (:attr:`Source.directive_starts`). The matches are kept with the source: several
    passes read the same directives (the conditionals, the macro definitions)."""
    known = source.directive_matches
    found = known.get(pattern)
    if found is None:
        found = known[pattern] = list(match_at(source.data, pattern, source.directive_starts))
    return iter(found)


def scan_code(source: Source, pattern: re.Pattern[bytes], needs=None, starts: tuple[bytes, ...] | None = None):
    """Matches of ``pattern`` that start outside comments and string literals; none at all, without
    scanning, when the text fails the :func:`can_match` test ``needs``. With ``starts``, words one of
    which every match begins with (``(?<!\\w)kernel``, ``\\blayout``), the pattern is tried only where
    one of them begins."""
    if not can_match(source.data, needs):
        return
    if starts is None:
        matches = pattern.finditer(source.data)
    else:
        matches = match_at(source.data, pattern, word_starts(source.data, starts))
    for m in matches:
        if not source.in_comment_or_string(m.start()):
            yield m


def code_matches_at(source: Source, pattern: re.Pattern[bytes], starts: list[int]):
    """:func:`match_at` (``pattern`` tried at ``starts`` only), the matches that start outside comments and
    string literals. (``starts`` of a pattern opening with an upper-case name of two bytes or more, not
    after a word byte: :attr:`Source.caps_word_starts`.)"""
    for m in match_at(source.data, pattern, starts):
        if not source.in_comment_or_string(m.start()):
            yield m


_ATTR_ITEM = re.compile(r"\s*([A-Za-z_][\w:]*)\s*(?:\((.*)\))?\s*$", re.S)


def split_attribute(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``[[buffer(0), raster_order_group(1)]]`` -> [("buffer", ("0",)), ...]."""
    inner = text[2:-2]
    items = [inner] if "," not in inner else _split_items(inner)
    out = []
    for item in items:
        m = _ATTR_ITEM.match(item)
        if not m:
            continue
        name = m.group(1).split("::")[-1]
        args = tuple(a.strip() for a in split_args(m.group(2))) if m.group(2) is not None else ()
        out.append((name, args))
    return out


def _split_items(inner: str) -> list[str]:
    """``inner`` split at the commas outside parentheses."""
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
    return items


def split_args(text: str) -> list[str]:
    """``"float, A<b, c>"`` -> ``["float", " A<b, c>"]``: the top-level comma-separated parts (not
    stripped), commas inside ``<>``, ``()`` and ``[]`` kept."""
    if "," not in text:
        return [text] if text.strip() else []
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


# A loop-header macro: `FOR_UNROLL (int i = 0; i < n; ++i) {` (ggml's
# `#define FOR_UNROLL(x) _Pragma("clang loop unroll(full)") for (x)`, usually from a header). An
# upper-case name followed by parentheses holding two top-level `;` can be nothing but a `for` header
# (no C expression holds a `;`), so the name is replaced by `for` (padded to the same length).
_LOOP_MACRO = re.compile(rb"(?<![\w#.>:])([A-Z][A-Z0-9_]*)[ \t]*\(")
_LOOP_MACRO_FOR_BODY = re.compile(rb"(?<![\w#])for\s*\(")


def _loop_header_end(data: bytes, open_paren: int) -> int | None:
    """End of the balanced `( ... ; ... ; ... )` starting at ``open_paren`` when it holds exactly two
    top-level semicolons (and no braces), else None."""
    depth, semis, i, n = 0, 0, open_paren, min(len(data), open_paren + 4096)
    while i < n:
        c = data[i]
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return i + 1 if semis == 2 else None
        elif c == 0x3B and depth == 1:
            semis += 1
        elif c in (0x7B, 0x7D):
            return None
        i += 1
    return None


def name_asks_unroll(name: bytes) -> bool:
    """An upper-case macro name that asks for unrolling (``FOR_UNROLL``, ``UNROLL``), not for the
    opposite (``NO_UNROLL``, ``DONT_UNROLL``, ``NOUNROLL``)."""
    flat = name.replace(b"_", b"")
    return b"UNROLL" in name and b"NOUNROLL" not in flat and b"DONTUNROLL" not in flat


def mask_loop_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Rewrite loop-header macros (``FOR_UNROLL (init; cond; step)``) as ``for``. The mask's value is
    "unroll" when the name or the macro's definition in this file (else in an included header) asks
    for unrolling (the model reads it like ``#pragma unroll``), "" otherwise. A macro defined in this
    file whose body holds no ``for`` is left alone."""
    data = source.data
    if b";" not in data:
        return []
    defs = {m.group(1): m.group(2) for m in scan_directives(source, _FUNC_MACRO)}
    header = None
    out = []
    for m in match_at(data, _LOOP_MACRO, source.upper_call_starts):  # a subset of them
        s, e = m.start(1), m.end(1)
        name = m.group(1)
        if e - s < 3 or source.in_comment_or_string(s) or bytes(buf[s:e]) != data[s:e]:
            continue
        if on_directive_line(data, s):
            continue  # the #define itself, #if lines
        body = defs.get(name)
        if body is not None and not _LOOP_MACRO_FOR_BODY.search(body):
            continue
        if _loop_header_end(data, m.end() - 1) is None:
            continue
        before, _ = _prev_code_byte(source, buf, s)
        if before not in (b";", b"{", b"}", b")", b":", b"") and not ends_after_blanks(data, s, (b"else", b"do")):
            continue  # not at the start of a statement
        if body is None:
            if header is None:
                header = header_macros_for(source, True)
            body = header.get(name)  # a header's definition: what it asks for (it may expand through others)
        unroll = name_asks_unroll(name) or (
            body is not None and re.search(rb"\bunroll\b(?!\s*\(\s*disable)", body) is not None)
        out.append(Mask(s, e, "loop-macro", name.decode(), "unroll" if unroll else ""))
        buf[s:e] = b"for" + b" " * (e - s - 3)
    return out


# A conditional directive line (continuation lines included): `#if 0`, `#  else`, `#endif // X`.
_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)


def mask_dead_branches(source: Source, buf: bytearray, predefined=()) -> list[Mask]:
    """Blank the branches the compiler does not read where the macros are known (``#if 0``, ``#ifdef
    X`` after ``#undef X``, ``#if __CUDA_ARCH__ >= 800`` on a configured target, ``-D`` defines from
    the settings: :mod:`shaderlint.languages.conditions`), and the directive lines of a group one of
    whose branches is decidedly taken. The grammar would parse that code as statements, and rules
    reported on it (llama.cpp's flash-attention kernel keeps an obsolete early-exit barrier under
    ``#if 0``); its ``#define`` lines would define macros the build never sees."""
    from shaderlint.languages.conditions import dead_regions

    data = source.data
    out: list[Mask] = []
    for s, e in dead_regions(source, predefined):
        out.append(Mask(s, e, "dead-branch", data[s:e].decode("utf-8", "replace")))
        _blank(buf, s, e)
    return out


def _blanked(buf: bytearray, data: bytes, directive: re.Match) -> bool:
    """Whether an earlier pass blanked the directive line (its keyword is no longer there)."""
    i = directive.start(1)
    return buf[i] != data[i]


_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#(?:[^\n\\]+|\\\r?\n|\\)*", re.M)


def _brace_delta(source: Source, buf: bytearray, start: int, end: int) -> int:
    """``{`` minus ``}`` in code between start and end (not in comments, strings or directive lines,
    nor braces an earlier pass blanked: those of dead branches, :func:`mask_dead_branches`)."""
    data = source.data
    delta = 0
    for i in _code_braces_between(source, buf, start, end):
        delta += 1 if data[i] == 0x7B else -1
    return delta


def _directive_lines_between(source: Source, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of ``_DIRECTIVE_LINE.finditer(source.data, start, end)``'s matches: tried only at the
    lines in [start, end) that open with ``#`` (:attr:`Source.directive_starts`), not at every byte."""
    data = source.data
    starts = source.directive_starts
    out: list[tuple[int, int]] = []
    last = -1  # the end of the previous match: a continuation line inside it is not tried
    for i in range(bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)):
        p = starts[i]
        if p >= last:
            d = _DIRECTIVE_LINE.match(data, p, end)
            if d is not None:
                last = d.end()
                out.append((p, last))
    return out


def _code_braces_between(source: Source, buf: bytearray, start: int, end: int):
    """Offsets of the ``{`` and ``}`` between start and end that :func:`_brace_delta` counts, in order.
    The directive lines are sorted and disjoint: one pointer walks them with the braces."""
    data = source.data
    braces = source.code_braces  # (those outside comments and strings)
    lo = bisect.bisect_left(braces, start)
    hi = bisect.bisect_left(braces, end, lo)
    if lo == hi:
        return
    skip = _directive_lines_between(source, start, end)
    k, nskip = 0, len(skip)
    for j in range(lo, hi):
        i = braces[j]
        while k < nskip and skip[k][1] <= i:
            k += 1
        if k < nskip and skip[k][0] <= i:
            continue  # on a directive line
        if buf[i] != data[i]:
            continue
        yield i


def _brace_dip(source: Source, buf: bytearray, start: int, end: int) -> int:
    """The lowest running ``{`` minus ``}`` count in code between start and end (as :func:`_brace_delta`
    counts): below zero when the code closes a block opened before it."""
    data = source.data
    depth = low = 0
    for i in _code_braces_between(source, buf, start, end):
        depth += 1 if data[i] == 0x7B else -1
        low = min(low, depth)
    return low


def mask_unbalanced_conditionals(source: Source, buf: bytearray) -> list[Mask]:
    """Conditional blocks whose branches open or close braces the grammar cannot pair up:

    * ``#if`` ... ``#endif`` blocks without ``#else`` whose code opens or closes more braces than it
      closes or opens, when such blocks in the file balance each other (vLLM's fused kernels:
      ``#if OLD_ARCH if constexpr (bf16) { return; } else { #endif body #if OLD_ARCH } #endif``):
      the directive lines are blanked, so the code reads as if the condition held and pairs up;
    * ``#if`` ... ``#else`` ... ``#endif`` whose two branches each leave the same non-zero brace
      balance (a stub that closes a namespace for old architectures, the real code closing it in the
      ``#else``), or the same balance where one branch closes a block opened before the group and the
      other does not: the first branch is blanked with its directives, the ``#else`` branch is read;
      likewise ``#if`` ... ``#elif`` ... ``#else`` ... ``#endif`` whose branches all leave the same
      non-zero balance (the ``#else`` branch is read, every other one blanked).

    Top-level blocks and innermost blocks (holding no other conditional) are considered, so
    ``#ifndef ONE_PASS for (...) { #else { #endif`` inside a kernel under ``#if __HIP_ARCH__`` counts;
    a block whose inner blocks were paired up this way is considered again (a few rounds: mmf.cuh's
    ``#ifdef VOLTA`` pair inside the ``#if AMD_WMMA / #elif AMD_MFMA / #else`` chain)."""
    if b"#" not in source.data:
        return []
    out: list[Mask] = []
    for _ in range(4):
        got = _mask_unbalanced_round(source, buf)
        if not got:
            break
        out.extend(got)
    out.sort(key=lambda mk: mk.start)
    return out


def _mask_unbalanced_round(source: Source, buf: bytearray) -> list[Mask]:
    data = source.data
    groups, stack = [], []
    for m in scan_directives(source, _CONDITIONAL):
        if source.in_comment_or_string(m.start()) or _blanked(buf, data, m):
            continue
        kind = m.group(1)
        if kind in (b"if", b"ifdef", b"ifndef"):
            for outer in stack:
                outer[0] = True  # holds a nested conditional: not a leaf
            stack.append([False, m])
        elif not stack:
            return []  # unbalanced directives: leave the file alone
        elif kind in (b"elif", b"else"):
            stack[-1].append(m)
        else:
            g = stack.pop() + [m]
            if not stack or not g[0]:
                groups.append(g[1:])  # top-level blocks, and innermost blocks at any depth
    if stack:
        return []
    singles, out = [], []
    for g in groups:
        if len(g) == 2:
            d = _brace_delta(source, buf, g[0].end(), g[1].start())
            if d:
                singles.append((g, d))
        elif len(g) == 3 and g[1].group(1) == b"else":
            a = _brace_delta(source, buf, g[0].end(), g[1].start())
            b = _brace_delta(source, buf, g[1].end(), g[2].start())
            # same non-zero balance, or the same balance reached in different shapes: one branch closes a block
            # opened before the group and opens another (ggml-cuda.cu's `#ifdef USE_CUDA_GRAPH ... } if (g) {
            # ... #else ... #endif }`), which the grammar cannot read next to a branch that does not
            if a == b and (a or (b"}" in data[g[0].end():g[2].start()]
                                 and _brace_dip(source, buf, g[0].end(), g[1].start())
                                 != _brace_dip(source, buf, g[1].end(), g[2].start()))) \
                    and all(buf[i] == data[i] for i in (g[0].start(), g[1].start(), g[2].start())):
                # the #else branch is read: its code is compiled where the condition is false
                read = ("read", g[0].group(1).decode(), _condition_text(g[0]), "0")
                for s, e in ((g[0].start(), g[1].end()), (g[2].start(), g[2].end())):
                    out.append(Mask(s, e, "conditional", data[s:e].decode("utf-8", "replace")[:80], "unbalanced",
                                    read if s == g[0].start() else ("end",)))
                    _blank(buf, s, e)
        elif len(g) > 3 and g[-2].group(1) == b"else" and all(d.group(1) == b"elif" for d in g[1:-2]):
            # `#if A ... else { #elif B ... else { #else ... else { #endif`: every branch leaves the same
            # non-zero balance (llama.cpp's mmf.cuh, per matrix-core family): the #else branch is read,
            # as for two branches above (it is compiled where every condition is false)
            deltas = {_brace_delta(source, buf, a.end(), b.start()) for a, b in zip(g, g[1:])}
            if len(deltas) == 1 and 0 not in deltas and all(buf[d.start()] == data[d.start()] for d in g):
                read = ("read", g[0].group(1).decode(), _condition_text(g[0]), "0")
                for s, e in ((g[0].start(), g[-2].end()), (g[-1].start(), g[-1].end())):
                    out.append(Mask(s, e, "conditional", data[s:e].decode("utf-8", "replace")[:80], "unbalanced",
                                    read if s == g[0].start() else ("end",)))
                    _blank(buf, s, e)
    if singles and sum(d for _, d in singles) == 0:
        for g, _ in singles:
            # read as if the condition held (preproc.branch_literals keeps that for the code inside)
            read = ("read", g[0].group(1).decode(), _condition_text(g[0]), "1")
            for d in g:
                out.append(Mask(d.start(), d.end(), "conditional", d.group(0).decode("utf-8", "replace"), "unbalanced",
                                read if d is g[0] else ("end",)))
                _blank(buf, d.start(), d.end())
    return out


def _condition_text(directive: re.Match) -> str:
    """The condition of an ``#if``/``#ifdef``/``#ifndef`` line, comments and continuations removed."""
    text = re.sub(rb"/\*.*?\*/|//[^\n]*|\\\r?\n", b" ", directive.group(2), flags=re.S)
    return " ".join(text.decode("utf-8", "replace").split())


# `if (c) a; else` closing a preprocessor branch, its statement after `#endif` (RetroArch's crt-pi:
# `#if defined(CURVATURE) ... if (t.x < 0.0) out = vec4(0.0); else #else ... #endif { ... }`).
_DANGLING_ELSE = re.compile(rb"(?<![\w#])else[ \t]*(?://[^\n]*)?\r?\n(?=[ \t]*#[ \t]*(?:else|elif|endif)\b)")
_DANGLING_ELSE_NEEDS = re.compile(rb"else[ \t]*(?://[^\n]*)?\r?\n[ \t]*#")  # what every match holds, found fast


def mask_dangling_else(source: Source, buf: bytearray) -> list[Mask]:
    """Blank an ``else`` that ends a preprocessor branch: its statement is after the ``#endif``,
    where the grammar cannot attach it, so the whole function read as a parse error. Without the
    ``else`` the branch is a complete ``if`` and the statement after ``#endif`` reads as
    unconditional (what it is when the branch is not compiled)."""
    out = []
    for m in scan_code(source, _DANGLING_ELSE, _DANGLING_ELSE_NEEDS, (b"else",)):
        s, e = m.start(), m.start() + 4
        if bytes(buf[s:e]) != b"else":
            continue
        out.append(Mask(s, e, "dangling-else", "else"))
        _blank(buf, s, e)
    return out


_PP_LINE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b[^\n]*", re.M)
_ATTRS = rb"(?:\[\[[^\]\n]*\]\]\s*)*"
_HEADER_START = re.compile(rb"\s*" + _ATTRS + rb"(?:(for|while|if)\s*\(|$)")


def _code_only(source: Source, start: int, end: int) -> bytes:
    """``source.data[start:end]`` with comments blanked (their bytes become spaces)."""
    out = bytearray(source.data[start:end])
    for s, e in source.lexical_spans(start, end):
        _blank(out, max(s, start) - start, min(e, end) - start)
    return bytes(out)


def _is_bare_header(code: bytes) -> bool:
    """Statement headers without their statement: ``[[unroll]]``, ``for (...)``, ``if (...)``
    (attributes allowed before), nothing else; parentheses balanced."""
    m = _HEADER_START.match(code)
    if m is None:
        return False
    rest = code[m.end():]
    if m.group(1) is None:
        return not rest.strip()  # attributes only
    depth = 1
    for i, c in enumerate(rest):
        if c in b"([":
            depth += 1
        elif c in b")]":
            depth -= 1
            if depth == 0:
                return not rest[i + 1:].strip()
        elif c in b";{}":
            if c != ord(";") or m.group(1) != b"for":
                return False
    return False


_EXPRESSION_CONTEXT = frozenset(b"=+-*/%&|^<>!~?([,")
# A branch that continues the expression or list before the group: it opens with a binary operator,
# a `,` or a member initializer's `:` (`std::cout << a` / `#if X` / `<< b` / `#endif`; `Ctor()` /
# `#ifndef R` / `: n(32)` / `#else` / `: n(64)` / `#endif`, `k<<<g, b` / `#ifdef S` / `, smem` / `#endif`).
_CONTINUING_BRANCH = re.compile(rb"\s*(?:<<|>>(?!>)|&&|\|\||[-+*/%|^?,.]|::?|->)")
# A branch holding only launch bounds, between a kernel's specifiers and its name
# (`__global__ void` / `#if __CUDA_ARCH__ < 750` / `__launch_bounds__(256, 2)` / `#else` / ... / `#endif`).
_LAUNCH_BOUNDS_BRANCH = re.compile(rb"\s*__launch_bounds__\s*" + _BALANCED + rb"\s*")


def mask_split_expressions(source: Source, buf: bytearray) -> list[Mask]:
    """An expression the preprocessor completes::

        uint pos_a =
        #ifdef MUL_MAT_ID
            expert_idx * (p.batch_stride_a / LOAD_VEC_A_EFF) +
        #else
            batch_idx_a * (p.batch_stride_a / LOAD_VEC_A_EFF) +
        #endif
            (ir * BM * p.stride_a + start_k) / LOAD_VEC_A_EFF;

    The grammar has no place for directives inside an expression, and the whole function read as
    a parse error (llama.cpp's Vulkan matrix shaders). The directive lines and every branch but one
    are blanked, leaving one complete expression: the ``#else`` branch when there is one, else the
    first (read as if its condition held). Only groups without nested directives whose branches
    hold no ``{`` or ``}`` and no ``;`` but, in every branch alike, one that ends it (``a_offset =
    #ifdef ID expert * s; #else batch * s; #endif``), after code that cannot end a statement (an
    operator, ``(``, ``[``, ``,`` or ``=``)."""
    data = source.data
    if b"#" not in data:
        return []
    out: list[Mask] = []
    for group in _flat_conditional_groups(source, buf):
        prev, _ = _prev_code_byte(source, buf, group[0].start())
        if not prev or any(buf[d.start()] != data[d.start()] for d in group):
            continue
        branches = [(group[k].end(), group[k + 1].start()) for k in range(len(group) - 1)]
        codes = [_code_only(source, s, e) for s, e in branches]
        if prev[0] not in _EXPRESSION_CONTEXT:
            # after a name or `)`: only branches that continue what stands before (an operator, a list's
            # `,`, an initializer's `:`) or that hold launch bounds alone
            if prev in (b";", b"{", b"}", b":") or not all(
                    _CONTINUING_BRANCH.match(c) or _LAUNCH_BOUNDS_BRANCH.fullmatch(c) for c in codes if c.strip()):
                continue
        bodies = [c.strip()[:-1] if c.strip().endswith(b";") else c for c in codes]  # a statement's tail
        if any(c in body for body in bodies for c in (b";", b"{", b"}")) or not any(c.strip() for c in codes) \
                or len({c.strip().endswith(b";") for c in codes if c.strip()}) != 1:
            continue
        keep = len(branches) - 1 if group[-2].group(1) == b"else" else 0
        for k, (s, e) in enumerate(branches):
            if k != keep and codes[k].strip():
                out.append(Mask(s, e, "split-expression", data[s:e].decode("utf-8", "replace")))
                _blank(buf, s, e)
        for d in group:
            out.append(Mask(d.start(), d.end(), "split-expression", d.group(0).decode("utf-8", "replace")))
            _blank(buf, d.start(), d.end())
    return out


def _flat_conditional_groups(source: Source, buf: bytearray, pattern: re.Pattern[bytes] = _PP_LINE) -> list[list[re.Match]]:
    """Conditional groups that hold no other directive: the ``#if``/``#ifdef``/``#ifndef`` line, its
    ``#elif``/``#else`` lines and the ``#endif``, in file order. (``pattern``: :data:`_CONDITIONAL` to
    take in the directives' continuation lines.) Directive lines an earlier pass blanked (those of
    dead branches and of decided groups) are not read."""
    lines = [m for m in scan_directives(source, pattern)
             if not source.in_comment_or_string(m.start(1)) and not _blanked(buf, source.data, m)]
    groups = []
    i = 0
    while i < len(lines):
        if lines[i].group(1) not in (b"if", b"ifdef", b"ifndef"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].group(1) in (b"elif", b"else"):
            j += 1
        if j >= len(lines) or lines[j].group(1) != b"endif":
            i += 1
            continue
        groups.append(lines[i:j + 1])
        i = j + 1
    return groups


_FUNCTION_HEADER_BRANCH = re.compile(
    rb"\s*(?:template\s*<[^;{}]*>\s*)?[A-Za-z_][^;{}()]*\((?:[^;{}()]|" + _BALANCED + rb")*\)\s*(?:const\s*)?(?:noexcept\s*)?")


def mask_split_function_headers(source: Source, buf: bytearray) -> list[Mask]:
    """A function header chosen by the preprocessor, its body after ``#endif``::

        #if defined(__HIP_PLATFORM_AMD__)
        int cublas_gemm_ex(rocblas_handle handle, ...)
        #else
        int cublas_gemm_ex(cublasHandle_t handle, ...)
        #endif
        { ... }

    The grammar cannot attach a body outside the group to a header inside it, and the file read as
    one parse error (deepspeed's cuBLAS wrappers). As for :func:`mask_split_headers`, every branch
    but one is blanked with the directive lines, leaving one header on its body: the ``#else``
    branch when there is one, else the first. Only groups whose every branch is one header (a name
    and a parenthesized list, no ``;`` or braces: a function's, or a statement's ``if (c)``, for
    which the same choice holds), followed by ``{``. (Not tested against the enclosing scope: brace
    counts across the ``#if`` branches of the function bodies before it are unreliable.)"""
    data = source.data
    if b"#" not in data or b"{" not in data:
        return []
    groups = []
    for group in _flat_conditional_groups(source, buf, _CONDITIONAL):
        if any(buf[d.start()] != data[d.start()] for d in group):
            continue
        nxt = _next_code(data, group[-1].end())
        if data[nxt:nxt + 1] != b"{":
            continue
        branches = [(group[k].end(), group[k + 1].start()) for k in range(len(group) - 1)]
        codes = [_code_only(source, a, b) for a, b in branches]
        if not all(c.strip() == b"" or _FUNCTION_HEADER_BRANCH.fullmatch(c) for c in codes) or not codes[0].strip():
            continue
        groups.append((group, branches, codes))
    out: list[Mask] = []
    for group, branches, codes in groups:
        out.extend(_keep_one_branch(data, buf, group, branches, codes, len(codes) - 1 if codes[-1].strip() else 0))
    return out


_ELSE_IF_LINK = re.compile(rb"\s*else\s+if\b")
_CLOSE_ELSE_LINK = re.compile(rb"\s*\}\s*else\s+if\b")


def mask_else_link_conditionals(source: Source, buf: bytearray) -> list[Mask]:
    """Links of an if-else chain that the preprocessor keeps or drops::

        if constexpr (Q == kFP8) {
          ...
        }
        #if CUDA_VERSION >= 12080
        else if constexpr (Q == kFP4) {
          ...
        }
        #endif
        else {
          ...
        }

    The grammar cannot attach an ``else`` inside a group to the ``if`` before it, and the whole
    function read as a parse error (flashinfer's, xgboost's and natten's optional backends). The
    directive lines are blanked and every branch is read, as if its condition held (the model still
    reads each branch's code as compiled under its condition: "conditional" masks). Only flat groups
    right after a ``}`` whose every branch is ``else if (...) {...}`` links with balanced braces (one
    ``#if`` branch may be a final ``else {...}`` when no ``else`` follows the group), or a lone
    ``#if`` branch ``} else if (c) { ...`` that closes the block before it, its own closed by the
    ``}`` right after the group (gptq_marlin's ``#if HAS_FLOAT8_E8M0FNU``)."""
    data = source.data
    if b"else" not in data or b"#" not in data:
        return []
    out: list[Mask] = []
    for group in _flat_conditional_groups(source, buf, _CONDITIONAL):
        if any(buf[d.start()] != data[d.start()] for d in group):
            continue
        before, _ = _prev_code_byte(source, buf, group[0].start())
        branches = [(group[k].end(), group[k + 1].start()) for k in range(len(group) - 1)]
        codes = [_code_only(source, a, b) for a, b in branches]
        if not codes[0].strip():
            continue
        nxt = _next_code(data, group[-1].end())
        if before == b"}":
            # links after a closed block: `else if (...) {...}`, or one final `else {...}` with no `else` after
            if not all(c.strip() == b"" or (re.match(rb"\s*else\b", c) and c.rstrip().endswith(b"}")
                                            and _brace_delta(source, buf, a, b) == 0 and _chain_closed(c))
                       for c, (a, b) in zip(codes, branches)):
                continue
            plain_else = [c for c in codes if c.strip() and not _ELSE_IF_LINK.match(c)]
            if plain_else and (len(branches) > 1 or re.match(rb"else\b", data[nxt:nxt + 5])):
                continue
        elif not (len(codes) == 1 and before not in (b"{", b"") and _CLOSE_ELSE_LINK.match(codes[0])
                  and data[nxt:nxt + 1] == b"}" and _brace_delta(source, buf, *branches[0]) == 0
                  and _chain_closed(b"{" + codes[0] + b"}")):
            # otherwise only `#if X` / `} else if (c) { ...` / `#endif` / `} else {`: a link that closes the
            # block before it and opens its own, closed after the group
            continue
        read = ("read", group[0].group(1).decode(), _condition_text(group[0]), "1")
        for d in group:
            args = read if d is group[0] else ("end",) if d is group[-1] else ()
            out.append(Mask(d.start(), d.end(), "conditional", d.group(0).decode("utf-8", "replace")[:80], "else-link", args))
            _blank(buf, d.start(), d.end())
    return out


def _chain_closed(code: bytes) -> bool:
    """Braces in ``code`` never close more than they opened (the branch does not end the block around it)."""
    depth = 0
    for c in code:
        if c == 0x7B:
            depth += 1
        elif c == 0x7D:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_CONTROL_BEFORE_PAREN = re.compile(rb"(?:\b(?:for|while|if)|\bif[ \t]+constexpr)[ \t]*$")


def open_paren_of(data: bytes, close: int) -> int | None:
    """The ``(`` matching the ``)`` at ``close``, searched back at most 4 KiB (None: not found)."""
    depth, i = 0, close
    lo = max(0, close - 4096)
    while i > lo:
        c = data[i]
        if c == 0x29:
            depth += 1
        elif c == 0x28:
            depth -= 1
            if depth == 0:
                return i
        i -= 1
    return None


def _closes_control_header(data: bytes, close: int) -> bool:
    """The ``)`` at ``close`` ends a ``for``/``while``/``if`` header."""
    i = open_paren_of(data, close)
    return i is not None and _CONTROL_BEFORE_PAREN.search(data, max(0, i - 32), i) is not None


def mask_split_bodies(source: Source, buf: bytearray) -> list[Mask]:
    """A loop's or branch's one-statement body chosen by the preprocessor::

        for (int offset = 16; offset > 0; offset /= 2)
        #ifdef MMCV_WITH_HIP
            sum += __shfl_down(sum, offset);
        #else
            sum += __shfl_down_sync(FULL_MASK, sum, offset);
        #endif

    The grammar cannot read a directive between a header and its statement, and the function read
    as a parse error (mmcv's warp reductions). As for :func:`mask_split_headers`, every branch but
    one is blanked with the directive lines: the ``#else`` branch when there is one, else the first.
    Only groups right after a ``for``/``while``/``if`` header (or ``else``/``do``) whose every branch
    is one statement (one ``;``, at its end, no braces)."""
    data = source.data
    if b"#" not in data:
        return []
    out: list[Mask] = []
    for group in _flat_conditional_groups(source, buf, _CONDITIONAL):
        if any(buf[d.start()] != data[d.start()] for d in group):
            continue
        before, at = _prev_code_byte(source, buf, group[0].start())
        if before == b")":
            if not _closes_control_header(data, at):
                continue
        elif not (ends_after_blanks(data, at + 1, b"else") or ends_after_blanks(data, at + 1, b"do")) or before == b"":
            continue
        branches = [(group[k].end(), group[k + 1].start()) for k in range(len(group) - 1)]
        codes = [_code_only(source, a, b).strip() for a, b in branches]
        if not all(c.endswith(b";") and c.count(b";") == 1 and b"{" not in c and b"}" not in c for c in codes):
            continue
        out.extend(_keep_one_branch(data, buf, group, branches, codes, len(codes) - 1 if group[-2].group(1) == b"else" else 0))
    return out


def mask_split_headers(source: Source, buf: bytearray) -> list[Mask]:
    """A statement header chosen by the preprocessor, with one statement after ``#endif``::

        #if ncnn_vendorID == 0x5143
            [[dont_unroll]] for (uint k = 0; k < n; k++)
        #else
            [[unroll]] for (uint k = 0; k < n; k++)
        #endif
            { ... }

    (also ``if (a)`` / ``if (a && b)``, or a lone ``[[unroll]]`` before a loop). The grammar
    cannot attach a statement outside the group to a header inside it, and the whole function read
    as a parse error (ncnn's cooperative-matrix shaders). Every branch but one is blanked with the
    directive lines, leaving one header on its statement: the ``#else`` branch (the build without
    the special case) when there is one, else the first. Only groups whose every branch is such a
    header (no nested directives) and that are followed by a ``{`` (or, for attribute-only
    branches, a statement) are touched."""
    data = source.data
    out: list[Mask] = []
    for group in _flat_conditional_groups(source, buf):
        branches = [(group[k].end(), group[k + 1].start()) for k in range(len(group) - 1)]
        codes = [_code_only(source, s, e) for s, e in branches]
        if not all(_is_bare_header(c) for c in codes) or not any(c.strip() for c in codes):
            continue
        nxt = _next_code(data, group[-1].end())
        headers = any(c.rstrip().endswith(b")") for c in codes)
        follows = data[nxt:nxt + 1]
        if not (follows == b"{" or (not headers and re.match(rb"(?:for|while|do|if)\b|\[\[", data[nxt:nxt + 6]))):
            continue
        out.extend(_keep_one_branch(data, buf, group, branches, codes, len(codes) - 1 if codes[-1].strip() else 0))
    return out


def _keep_one_branch(data: bytes, buf: bytearray, group: list[re.Match], branches: list[tuple[int, int]],
                     codes: list[bytes], keep: int) -> list[Mask]:
    """Blank the branches of the flat conditional ``group`` other than ``keep`` that hold code, and its
    directive lines: the grammar reads the branch left in place (the split-header passes)."""
    out = []
    for k, (a, b) in enumerate(branches):
        if k != keep and codes[k].strip():
            out.append(Mask(a, b, "split-header", data[a:b].decode("utf-8", "replace")))
            _blank(buf, a, b)
    for d in group:
        out.append(Mask(d.start(), d.end(), "split-header", d.group(0).decode("utf-8", "replace")))
        _blank(buf, d.start(), d.end())
    return out
