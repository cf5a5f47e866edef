"""Macro-generated kernels: file-scope macro invocations that define kernels, expanded as the C
preprocessor does, so the kernels they produce are analysed like any other.

Real GPU code defines families of kernels through macros::

    #define UNARY_OP(T, NAME, FN) \\
    extern "C" __global__ void NAME(const T* x, T* y, size_t n) { ... FN ... }
    UNARY_OP(float, usin_f32, sinf(x))

The front ends blank such invocations (the grammar cannot read them). :func:`expand_invocations`
finds the blanked ones whose macro defines a kernel (its body, or a macro it or its arguments name,
holds ``__global__`` in CUDA, ``kernel`` / ``[[kernel]]`` in Metal), expands each with the macro
table in force at the invocation (:func:`shaderlint.project.macros.scan_macros`, plus header macros
given as ``extra_macros``), and returns the expansions. The front end appends their text after the
end of the file (:meth:`shaderlint.languages.base.FrontEnd.parse`): the model reads them with the
file's types, helpers and constants in view, and every offset at or past the file's length belongs
to one :class:`Expansion`. The engine reports a finding there at the invocation, with the macro's
``#define`` as a related location ("expanded from macro `UNARY_OP`", as clang says) and without
its fix: a fix inside an expansion would have to edit the macro, which other invocations share.

The expansion (:class:`Expander`) is the preprocessor's (C11 6.10.3, the hide-set algorithm of
Prosser): arguments are fully expanded before substitution unless they are operands of ``#`` or
``##``; ``#`` stringizes, ``##`` pastes (with placemarkers for empty arguments and GNU's
``, ## __VA_ARGS__`` comma elision), ``__VA_ARGS__`` and ``__VA_OPT__``; the result is rescanned
with the rest of the input for more macros of the table, and a macro is not expanded again inside
its own expansion. Bounds: :data:`MAX_TOKENS` tokens produced per invocation and
:data:`MAX_DEPTH` nested argument expansions; past them, or on an invocation the compiler would
reject (unbalanced parentheses, a wrong number of arguments), the invocation is left blanked, as
before: no kernel, no finding.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from shaderlint.project.macros import MacroDef, scan_macros

#: Tokens one invocation's expansion may produce (rescans included), and its text's bytes.
MAX_TOKENS = 200_000
MAX_BYTES = 1 << 20
#: Nesting of argument pre-expansions (``F(F(F(...)))``).
MAX_DEPTH = 64
#: Invocations expanded per file (each one a kernel family's instance), the tokens all of them may
#: produce, and the bytes appended: past them the rest stay blanked (the memory bound of a file's
#: analysis, ``engine.memory_bound``, counts about 20 bytes per byte parsed).
MAX_INVOCATIONS = 2_000
MAX_FILE_TOKENS = 1_000_000
MAX_FILE_BYTES = 4 << 20
#: Peak memory of the analysis per byte parsed (a conservative figure: 1 MiB peaks at about 190 MB):
#: the appended text is kept small enough for the file's analysis to stay within ``memory_bound``.
PEAK_PER_BYTE = 200


def appended_limit(size: int) -> int:
    """The bytes of expansions a file of ``size`` bytes may have appended."""
    from shaderlint.engine import memory_bound

    return max(0, min(MAX_FILE_BYTES, memory_bound(size) // PEAK_PER_BYTE - size))
#: Distinct macro tables (file prefixes) read per file: an invocation between different
#: ``#define`` / ``#undef`` lines sees the table in force there.
MAX_TABLES = 32


class ExpansionError(Exception):
    """The invocation cannot be expanded (bounds, unbalanced parentheses, argument count)."""


# ---- tokens ---------------------------------------------------------------------------------------
# kinds
ID, NUM, STR, PUNCT, OTHER, HASH, PASTE, MARK = range(8)

_TOKEN = re.compile(r"""
 (?P<ws>\s+)
|(?P<str>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?:.|\n)*?\)(?P=delim)"
  |(?:u8|[uUL])?"(?:\\.|[^"\\\n])*"?
  |(?:u8|[uUL])?'(?:\\.|[^'\\\n])*'?)
|(?P<id>[A-Za-z_$][\w$]*)
|(?P<num>\.?\d(?:[eEpP][+-]|[\w.']|'[\w])*)
|(?P<punct>\.\.\.|<<=|>>=|->\*|\#\#|<=>|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\*|[][(){};:,.?~!+\-*/%<>=&|^\#@])
|(?P<other>.)
""", re.X | re.S)

_KINDS = {"str": STR, "id": ID, "num": NUM, "punct": PUNCT, "other": OTHER}


class Tok:
    """One preprocessing token: ``space`` whether blanks preceded it, ``hide`` its hide set, ``src``
    the (macro name, index in its body) it comes from (None: from the invocation's text)."""

    __slots__ = ("kind", "text", "space", "hide", "src")

    def __init__(self, kind: int, text: str, space: bool, hide: frozenset = frozenset(), src=None) -> None:
        self.kind, self.text, self.space, self.hide, self.src = kind, text, space, hide, src

    def again(self, space: bool | None = None, hide: frozenset | None = None) -> "Tok":
        return Tok(self.kind, self.text, self.space if space is None else space,
                   self.hide if hide is None else hide, self.src)

    def __repr__(self) -> str:  # (tests and debugging)
        return f"Tok({self.text!r})"


def tokenize(text: str) -> list[Tok]:
    out: list[Tok] = []
    space = False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup if m.lastgroup != "delim" else "str"
        if kind == "ws":
            space = True
            continue
        if m.group("str") is not None:
            kind = "str"
        out.append(Tok(_KINDS[kind], m.group(0), space))
        space = False
    return out


def spell(tokens: list[Tok]) -> str:
    """The tokens as text: a space where the source had blanks or where two tokens would otherwise
    read as one (``-`` ``-``, ``a`` ``b``)."""
    return spell_sources(tokens)[0]


def spell_sources(tokens: list[Tok]) -> tuple[str, list[tuple[int, object]]]:
    """:func:`spell`, and the UTF-8 byte offset in the text and ``src`` of each token."""
    parts: list[str] = []
    where: list[tuple[int, object]] = []
    at = 0
    prev: Tok | None = None
    for t in tokens:
        if prev is not None and (t.space or _would_join(prev, t)):
            parts.append(" ")
            at += 1
        where.append((at, t.src))
        parts.append(t.text)
        at += len(t.text) if t.text.isascii() else len(t.text.encode("utf-8"))
        prev = t
    return "".join(parts), where


def _would_join(a: Tok, b: Tok) -> bool:
    if a.kind in (ID, NUM) and b.kind in (ID, NUM, STR):
        return True
    if a.kind == NUM and b.text[:1] in ".+-":
        return True
    return a.kind in (PUNCT, HASH, PASTE) and b.kind in (PUNCT, HASH, PASTE) and a.text[-1] in _JOINS \
        and b.text[0] in _JOINS


_JOINS = frozenset("+-*/%<>=&|^!.#:")


# ---- the expander ---------------------------------------------------------------------------------
class _Macro:
    __slots__ = ("name", "params", "variadic", "body")

    def __init__(self, d: MacroDef) -> None:
        self.name = d.name
        body = tokenize(d.body)
        if d.params is None:
            self.params = None
            self.variadic = False
        else:
            names = list(d.params)
            self.variadic = bool(names) and names[-1].endswith("...")
            if self.variadic:
                last = names[-1][:-3].strip()
                names[-1] = last or "__VA_ARGS__"  # GNU `args...` names the variadic argument
            self.params = {n: i for i, n in enumerate(names)}
        # operators: `##` always, `#` before a parameter of a function-like macro
        for i, t in enumerate(body):
            if t.kind == PUNCT and t.text == "##":
                t.kind = PASTE
            elif (t.kind == PUNCT and t.text == "#" and self.params is not None and i + 1 < len(body)
                  and (body[i + 1].text in self.params or body[i + 1].text == "__VA_OPT__")):
                t.kind = HASH
        if body:
            body[0].space = False
        for i, t in enumerate(body):
            t.src = (self.name, i)
        self.body = body


class Expander:
    """Expands text with a macro table (name -> :class:`MacroDef`), within the bounds above."""

    def __init__(self, table: Mapping[str, MacroDef], max_tokens: int = MAX_TOKENS,
                 macros: dict | None = None) -> None:
        self.table = table
        self.macros: dict[str, _Macro | None] = {} if macros is None else macros  # (shareable: read only)
        self.max_tokens = max_tokens
        self.produced = 0
        self.used: dict[str, None] = {}  # the macros expanded, in order of first use
        self.balanced = False  # (of the last expansion) its (), [] and {} pair up

    def macro(self, name: str) -> _Macro | None:
        got = self.macros.get(name, False)
        if got is False:
            d = self.table.get(name)
            got = self.macros[name] = _Macro(d) if d is not None else None
        return got

    def expand_text(self, text: str) -> str:
        """``text`` with every macro of the table expanded (raises :class:`ExpansionError`)."""
        return self.expand_sources(text)[0]

    def expand_sources(self, text: str) -> tuple[str, list[tuple[int, object]]]:
        """:meth:`expand_text`, and where each token of the result is and comes from
        (:func:`spell_sources`)."""
        self.produced = 0
        tokens = self.expand(tokenize(text), 0)
        self.balanced = _balanced(tokens)
        out = spell_sources(tokens)
        if len(out[0]) > MAX_BYTES:
            raise ExpansionError("expansion too large")
        return out

    def expand(self, tokens: list[Tok], depth: int) -> list[Tok]:
        if depth > MAX_DEPTH:
            raise ExpansionError("macro arguments nest too deep")
        stack = tokens[::-1]  # the input, next token last
        out: list[Tok] = []
        while stack:
            t = stack.pop()
            if t.kind != ID or t.text in t.hide:
                out.append(t)
                continue
            m = self.macro(t.text)
            if m is None:
                out.append(t)
                continue
            self.used.setdefault(m.name)
            if m.params is None:
                repl = self.subst(m, None, t.hide | {m.name}, t.space, depth)
            else:
                if not stack or stack[-1].text != "(" or stack[-1].kind != PUNCT:
                    out.append(t)  # a function-like macro's name without arguments is just a name
                    continue
                args, close = self.arguments(m, stack)
                repl = self.subst(m, args, (t.hide & close.hide) | {m.name}, t.space, depth)
            self.produced += len(repl)
            if self.produced > self.max_tokens:
                raise ExpansionError("expansion too large")
            stack.extend(reversed(repl))
        return out

    @staticmethod
    def arguments(m: _Macro, stack: list[Tok]) -> tuple[list[list[Tok]], Tok]:
        """Pop ``( args )`` off ``stack`` (next token last): the arguments and the closing paren."""
        stack.pop()  # (
        n = len(m.params)
        args: list[list[Tok]] = [[]]
        depth = 0
        while stack:
            t = stack.pop()
            if t.kind == PUNCT:
                if t.text == "(":
                    depth += 1
                elif t.text == ")":
                    if depth == 0:
                        if n == 0 and args == [[]]:
                            return [], t
                        if len(args) == n - 1 and m.variadic:
                            args.append([])  # `F(a)` for `F(a, ...)`: empty variadic arguments
                        if len(args) != n:
                            raise ExpansionError(f"macro `{m.name}` takes {n} arguments, given {len(args)}")
                        return args, t
                    depth -= 1
                elif t.text == "," and depth == 0 and not (m.variadic and len(args) == n):
                    args.append([])
                    continue
            args[-1].append(t)
        raise ExpansionError(f"unterminated invocation of macro `{m.name}`")

    def subst(self, m: _Macro, args: list[list[Tok]] | None, hide: frozenset, space: bool, depth: int) -> list[Tok]:
        body = m.body
        params = m.params or {}
        va = len(params) - 1 if m.variadic else -1
        expanded: dict[int, list[Tok]] = {}
        out: list[Tok] = []
        i, n = 0, len(body)
        while i < n:
            t = body[i]
            if t.kind == ID and t.text == "__VA_OPT__" and m.variadic and i + 1 < n and body[i + 1].text == "(":
                j = _matching(body, i + 1)
                if j is None:
                    raise ExpansionError("unbalanced __VA_OPT__")
                inner = body[i + 2:j] if args is not None and args[va] else [Tok(MARK, "", False)]
                body = body[:i] + inner + body[j + 1:]
                n = len(body)
                continue
            if t.kind == HASH:
                arg = args[params[body[i + 1].text]] if body[i + 1].text in params else []
                out.append(Tok(STR, _stringize(arg), t.space, src=t.src))
                i += 2
                continue
            idx = params.get(t.text) if t.kind == ID and args is not None else None
            if idx is None:
                out.append(t.again())
                i += 1
                continue
            arg = args[idx]
            before = i > 0 and body[i - 1].kind == PASTE
            after = i + 1 < n and body[i + 1].kind == PASTE
            if before and idx == va and len(out) >= 2 and out[-1].kind == PASTE and out[-2].text == ",":
                # GNU: `, ## __VA_ARGS__` drops the comma when there are no variadic arguments
                out.pop()
                if not arg:
                    out.pop()
                seq = [a.again() for a in arg]
            elif before or after:
                seq = [a.again() for a in arg] or [Tok(MARK, "", False)]
            else:
                if idx not in expanded:
                    expanded[idx] = self.expand(list(arg), depth + 1)
                seq = [a.again() for a in expanded[idx]]
            if seq:
                seq[0].space = t.space
            out.extend(seq)
            i += 1
        if any(t.kind == PASTE for t in out):
            out = _paste(out)
        result = [t.again(hide=t.hide | hide) for t in out if t.kind != MARK]
        if result:
            result[0].space = space
        return result


def _matching(body: list[Tok], open_at: int) -> int | None:
    depth = 0
    for j in range(open_at, len(body)):
        if body[j].text == "(":
            depth += 1
        elif body[j].text == ")":
            depth -= 1
            if depth == 0:
                return j
    return None


def _stringize(arg: list[Tok]) -> str:
    parts = []
    for k, a in enumerate(arg):
        if k and a.space:
            parts.append(" ")
        text = a.text
        if a.kind == STR:
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(text)
    return '"' + "".join(parts) + '"'


def _paste(seq: list[Tok]) -> list[Tok]:
    out: list[Tok] = []
    i = 0
    while i < len(seq):
        t = seq[i]
        if t.kind == PASTE and out and i + 1 < len(seq):
            out.extend(_glue(out.pop(), seq[i + 1]))
            i += 2
            continue
        if t.kind != PASTE:
            out.append(t)
        i += 1
    return out


def _glue(a: Tok, b: Tok) -> list[Tok]:
    if a.kind == MARK:
        return [b]
    if b.kind == MARK:
        return [a]
    got = tokenize(a.text + b.text)
    if len(got) == 1 and not got[0].space:
        return [Tok(got[0].kind, got[0].text, a.space, a.hide & b.hide, a.src)]
    return [a, b]  # not a valid token: the compiler rejects it; keep both, as written


# ---- kernel-defining invocations ----------------------------------------------------------------------
_CUDA_KERNEL = re.compile(r"\b__global__\b")
_METAL_KERNEL = re.compile(r"\bkernel\b")
_WORD = re.compile(r"[A-Za-z_]\w*")


_DEFINE_LINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)


def _maybe_kernel_macros(data: bytes, pattern: re.Pattern[str]) -> set[str]:
    """Names of the ``#define`` lines of ``data`` whose text, or the text of a macro they name, holds
    the kernel keyword: a cheap superset of :func:`kernel_macros` over every table of the file."""
    key = b"__global__" if pattern is _CUDA_KERNEL else b"kernel"
    if key not in data or b"define" not in data:
        return set()
    bodies: dict[str, set[str]] = {}
    names: set[str] = set()
    for m in _DEFINE_LINE.finditer(data):
        name, rest = m.group(1).decode("ascii"), m.group(2)
        if key in rest and pattern.search(rest.decode("utf-8", "replace")):
            names.add(name)
        else:
            bodies.setdefault(name, set()).update(w.decode("ascii") for w in _WORD_B.findall(rest))
    changed = bool(names)
    while changed:
        changed = False
        for n, ws in bodies.items():
            if n not in names and not ws.isdisjoint(names):
                names.add(n)
                changed = True
    return names


_WORD_B = re.compile(rb"[A-Za-z_]\w*")


def kernel_pattern(language: str) -> re.Pattern[str] | None:
    return {"cuda": _CUDA_KERNEL, "metal": _METAL_KERNEL}.get(language)


_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def defines_kernel(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` (a macro body, an expansion) holds the kernel keyword outside literals."""
    return pattern.search(text) is not None and pattern.search(_LITERAL.sub(" ", text)) is not None


def kernel_macros(table: Mapping[str, MacroDef], language: str) -> set[str]:
    """Function-like macros of ``table`` whose expansion can define a kernel: the body holds the
    kernel keyword, or names (invokes, or passes on) such a macro."""
    pattern = kernel_pattern(language)
    if pattern is None:
        return set()
    names = {n for n, d in table.items() if d.params is not None and _body_defines_kernel(pattern, d.body)}
    if not names:
        return names
    words = {n: _body_words(d.body) for n, d in table.items() if n not in names}
    changed = True
    while changed:
        changed = False
        for n, ws in words.items():
            if n not in names and ws & names:
                names.add(n)
                changed = True
    return names


# A header's macros are in the table of every file that includes it: what is read from a body is kept per
# body text (bounded, for a long-running server), not found again per includer.
@lru_cache(maxsize=1 << 15)
def _body_defines_kernel(pattern: re.Pattern[str], body: str) -> bool:
    return defines_kernel(pattern, body)


@lru_cache(maxsize=1 << 15)
def _body_words(body: str) -> frozenset[str]:
    return frozenset(_WORD.findall(body))


def is_signature_macro(d: MacroDef, pattern: re.Pattern[str]) -> bool:
    """Whether ``d`` expands to a kernel's signature only, its body written after each invocation
    (flash-attn's ``#define DEFINE_FLASH_FORWARD_KERNEL(kernelName, ...) template<typename
    Kernel_traits, __VA_ARGS__> __global__ void kernelName(const Flash_fwd_params params)``)."""
    body = d.body.strip()
    return d.params is not None and body.endswith(")") and "{" not in body and ";" not in body \
        and defines_kernel(pattern, body)


def _close_paren(source, data: bytes, open_paren: int, limit: int = 1 << 16) -> int | None:
    """The ``)`` matching the ``(`` at ``open_paren`` (comments and strings skipped); None when a
    brace or ``;`` comes first, or past ``limit`` bytes."""
    depth = 0
    for m in re.finditer(rb"[()\[\]{};]", data[open_paren:open_paren + limit]):
        i = open_paren + m.start()
        if source.in_comment_or_string(i):
            continue
        c = m.group(0)
        if c in b"([":
            depth += 1
        elif c in b")]":
            depth -= 1
            if depth == 0:
                return i if c == b")" else None
        else:
            return None
    return None


_BRACE = re.compile(rb"[{}]")


def _close_brace(source, text: bytes, open_brace: int) -> int | None:
    """The ``}`` matching the ``{`` at ``open_brace`` of ``text`` (the masked text: dead branches and
    directives' braces already blanked; comments and strings skipped)."""
    depth = 0
    for m in _BRACE.finditer(text, open_brace):
        i = m.start()
        if source.in_comment_or_string(i):
            continue
        depth += 1 if text[i] == 0x7B else -1
        if depth == 0:
            return i
    return None


def _signature_invocations(source, parse_bytes: bytes, names: set[str], blanked=frozenset()) -> list[tuple[int, int, int, int]]:
    """(invocation start, its ``)``, body ``{``, body ``}``) of each file-scope ``NAME(...) { ... }``
    with NAME one of ``names`` (maybe signature macros), in order, that the masks left in the text
    (or blanked as macro invocations: ``blanked``, their starts)."""
    if not names or parse_bytes is None:
        return []
    data = source.data
    from shaderlint.languages.base import on_directive_line

    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\s*\(")
    out = []
    after = 0
    for m in pattern.finditer(data):
        s = m.start()
        if s < after or source.in_comment_or_string(s) or (parse_bytes[s] != data[s] and s not in blanked) \
                or on_directive_line(data, s):
            continue
        close = _close_paren(source, data, m.end() - 1)
        if close is None:
            continue
        j = close + 1
        while j < len(parse_bytes):
            if parse_bytes[j] in b" \t\r\n":
                j += 1
            elif source.in_comment_or_string(j):
                j += 1
            else:
                break
        if j >= len(parse_bytes) or parse_bytes[j] != 0x7B:
            continue
        end = _close_brace(source, parse_bytes, j)
        if end is None:
            continue
        out.append((s, close, j, end))
        after = end + 1
    return out


@dataclass(frozen=True)
class Expansion:
    """One invocation's expansion, appended to the parsed text at ``[start, end)``; the invocation
    spans ``[inv_start, inv_end)`` of the file; ``macro``: the invoked macro's definition."""

    start: int
    end: int
    inv_start: int
    inv_end: int
    macro: MacroDef
    text: str
    via: tuple[MacroDef, ...] = ()  # other macros expanded whose bodies define the kernels
    used: tuple[MacroDef, ...] = ()  # every macro expanded
    at: int = 0  # where the expanded text starts (after the namespace blocks reopened around it)
    sources: tuple = ()  # (offset from ``at``, (macro, index in its body) or None) of each token
    #: A signature macro's invocation (:func:`signature_macros`): the body written after it, at
    #: ``[body_file, body_file + body_len)`` of the file, is copied after the expanded signature, at
    #: ``body_at`` of the parsed text (its masked text, byte for byte: offsets map by a shift).
    body_file: int = -1
    body_at: int = -1
    body_len: int = 0

    def in_body(self, offset: int) -> bool:
        return self.body_len > 0 and self.body_at <= offset < self.body_at + self.body_len

    def file_offset(self, offset: int) -> int:
        """``offset`` of the copied body (:meth:`in_body`) as an offset of the file."""
        return offset - self.body_at + self.body_file

    def source_of(self, offset: int):
        """The (macro, index in its body) of the token at ``offset`` of the parsed text; None for a
        token from the invocation's own text (an argument), from a copied body, or outside the
        expanded text."""
        rel = offset - self.at
        if rel < 0 or not self.sources or (self.body_len and offset >= self.body_at):
            return None
        i = bisect.bisect_right(self.sources, rel, key=_first) - 1
        return self.sources[i][1] if i >= 0 else None


def expand_invocations(source, masks, language: str, predefined=(), extra_macros: Mapping[str, MacroDef] | None = None,
                       at: int | None = None, parse_bytes: bytes | None = None) -> tuple[bytes, list[Expansion]]:
    """The text to append after ``source`` (a :class:`shaderlint.model.source.Source`) and its
    expansions, for the invocations the front end blanked (``masks`` of kind ``macro-invocation``)
    whose macro defines a kernel, and for the file-scope invocations of signature macros
    (:func:`is_signature_macro`) followed by a body, found in ``parse_bytes`` (the masked text; none
    without it): their expansion is the expanded signature and the body's masked text, copied (the
    caller blanks the invocation and the body in the file). ``at``: the offset the appended text
    starts at (the file's length). Never raises on odd input: an invocation that cannot be expanded
    is left out."""
    pattern = kernel_pattern(language)
    data = source.data
    if pattern is None or not (b"__global__" in data or b"kernel" in data or extra_macros):
        return b"", []
    invocations = [mk for mk in masks if mk.kind == "macro-invocation"]
    # the macros any #define of the file could make kernel-defining (one may be #undef'd after its
    # invocations; the exact table in force comes below, for these invocations only)
    ever = _maybe_kernel_macros(data, pattern) | (kernel_macros(extra_macros, language) if extra_macros else set())
    if not ever:
        return b"", []
    picked = [mk for mk in invocations if not ever.isdisjoint(_WORD.findall(mk.text))]
    whole = dict(extra_macros or {})
    signatures: list = []
    if parse_bytes is not None:
        candidates = {n for n in ever if n.encode() in data}
        if candidates:
            whole.update(scan_macros(source.path, data, predefined))
            candidates = {n for n in candidates if n in whole and is_signature_macro(whole[n], pattern)}
            signatures = _signature_invocations(source, parse_bytes, candidates, {mk.start for mk in invocations})
            if signatures:
                taken = {sig[0] for sig in signatures}
                picked = [mk for mk in picked if mk.start not in taken]
    if not picked and not signatures:
        return b"", []
    if not signatures:
        whole.update(scan_macros(source.path, data, predefined))
    jobs = sorted([(mk.start, mk) for mk in picked[:MAX_INVOCATIONS]]
                  + [(sig[0], sig) for sig in signatures[:MAX_INVOCATIONS]], key=_first)[:MAX_INVOCATIONS]
    from shaderlint.languages.base import _NAMESPACE_OPEN, _code_braces

    braces = _code_braces(source)
    blocks = _Blocks(data, braces, _NAMESPACE_OPEN)
    tables = _Tables(source, predefined, extra_macros, whole)
    base = len(data) if at is None else at
    parts: list[bytes] = []
    out: list[Expansion] = []
    pos = base
    spent = 0
    room = appended_limit(len(data))
    for start, job in jobs:
        if spent >= MAX_FILE_TOKENS or pos - base >= room:
            break
        sig = job if isinstance(job, tuple) else None
        end = sig[1] + 1 if sig is not None else job.end
        text = source.code_text(start, end)  # comments as one space, splices joined
        m = _WORD.search(text)
        name = m.group(0) if m is not None else ""
        if name == "extern":
            continue  # `extern DECL(...)`: declarations of what another file defines
        table = tables.at(start)
        d = table.get(name)
        if d is None or d.params is None:
            continue
        if sig is not None:
            if not is_signature_macro(d, pattern):
                continue
        elif not (set(_WORD.findall(text)) & kernel_macros_cached(tables, table, language)):
            continue
        opened = blocks.at(start)
        if opened is None:
            continue  # inside a function or class: not a kernel definition
        expander = Expander(table, min(MAX_TOKENS, MAX_FILE_TOKENS - spent), tables.parsed_macros(table))
        try:
            expanded, sources = expander.expand_sources(text)
        except (ExpansionError, RecursionError):
            spent += expander.produced
            continue
        spent += expander.produced
        if not expander.balanced or not defines_kernel(pattern, expanded):
            continue
        if sig is not None and ("{" in expanded or ";" in expanded):
            continue  # the signature macro's expansion holds more than a signature
        head = "".join(o + " { " for o in opened)
        tail = " }" * len(opened)
        body_file, body = -1, b""
        if sig is not None:
            body_file = sig[2]
            body = parse_bytes[sig[2]:sig[3] + 1]
        front = ("\n" + head + expanded + (" " if body else "")).encode("utf-8")
        chunk = front + body + (tail + "\n").encode("utf-8")
        if pos - base + len(chunk) > room:
            break
        via = tuple(table[u] for u in expander.used if u != name and defines_kernel(pattern, table[u].body))
        inv_end = start + len(data[start:end].rstrip())
        out.append(Expansion(pos, pos + len(chunk), start, inv_end, d, expanded, via,
                             tuple(table[u] for u in expander.used if u in table),
                             pos + 1 + len(head.encode("utf-8")), tuple(sources),
                             body_file, pos + len(front) if body else -1, len(body)))
        parts.append(chunk)
        pos += len(chunk)
    return b"".join(parts), out


def kernel_macros_cached(tables: "_Tables", table, language: str) -> set[str]:
    key = id(table)
    got = tables.kinds.get(key)
    if got is None:
        got = tables.kinds[key] = kernel_macros(table, language)
    return got


class _Tables:
    """The macro table in force at an offset: the file up to that line read by ``scan_macros``; one
    table per stretch between ``#define`` / ``#undef`` lines (at most :data:`MAX_TABLES`, then
    the whole file's)."""

    _DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:define|undef)\b", re.M)

    def __init__(self, source, predefined, extra, whole) -> None:
        self.source, self.predefined, self.extra, self.whole = source, predefined, extra or {}, whole
        self.starts = [m.start() for m in self._DIRECTIVE.finditer(source.data)]
        self.cache: dict[int, dict] = {}
        self.kinds: dict[int, set[str]] = {}
        self.macros: dict[int, dict] = {}

    def parsed_macros(self, table) -> dict:
        """The tokenized macros of ``table``, shared by the expanders that use it."""
        return self.macros.setdefault(id(table), {})

    def at(self, offset: int) -> dict:
        k = bisect.bisect_left(self.starts, offset)
        if k == len(self.starts):
            return self.whole  # after the last directive: the whole file's table
        got = self.cache.get(k)
        if got is None:
            if len(self.cache) >= MAX_TABLES:
                return self.whole
            got = dict(self.extra)
            got.update(scan_macros(self.source.path, self.source.data[:self.starts[k]], self.predefined))
            self.cache[k] = got
        return got


class _Blocks:
    """The blocks enclosing offsets asked for in increasing order, from the file's code braces."""

    def __init__(self, data: bytes, braces: list[int], namespace_open) -> None:
        self.data, self.braces, self.namespace_open = data, braces, namespace_open
        self.i = 0
        self.stack: list[str | None] = []  # per open block: its opening text, None if not a namespace

    def at(self, offset: int) -> list[str] | None:
        """The namespace / ``extern "C"`` blocks enclosing ``offset`` (their opening text, outermost
        first); None when another block (a function, a class) encloses it."""
        data, braces = self.data, self.braces
        while self.i < len(braces) and braces[self.i] < offset:
            pos = braces[self.i]
            self.i += 1
            if data[pos] == 0x7B:
                m = self.namespace_open.search(data[max(0, pos - 200):pos])
                self.stack.append(" ".join(m.group(0).decode("utf-8", "replace").split()) if m else None)
            elif self.stack:
                self.stack.pop()
        if any(b is None for b in self.stack):
            return None
        return list(self.stack)


def _balanced(tokens: list[Tok]) -> bool:
    depth = {"(": 0, "[": 0, "{": 0}
    close = {")": "(", "]": "[", "}": "{"}
    for t in tokens:
        if t.kind != PUNCT:
            continue
        if t.text in depth:
            depth[t.text] += 1
        elif t.text in close:
            depth[close[t.text]] -= 1
            if depth[close[t.text]] < 0:
                return False
    return not any(depth.values())


def origin(expansions: list[Expansion], length: int, offset: int) -> Expansion | None:
    """The expansion holding ``offset`` of the parsed text (None: an offset of the file itself)."""
    if offset < length or not expansions:
        return None
    i = bisect.bisect_right([e.start for e in expansions], offset) - 1
    return expansions[max(i, 0)]


__all__ = ["Expander", "Expansion", "ExpansionError", "expand_invocations", "kernel_macros", "origin", "tokenize",
           "spell", "MAX_TOKENS"]


_SPELLING = re.compile(r"""
 (?P<ws>(?:\s|\\\r?\n|/\*.*?\*/|//[^\n]*)+)
|(?P<tok>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*"?|(?:u8|[uUL])?'(?:\\.|[^'\\\n])*'?|[A-Za-z_$][\w$]*
  |\.?\d(?:[eEpP][+-]|[\w.']|'[\w])*
  |\.\.\.|<<=|>>=|->\*|\#\#|<=>|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\*|.)
""", re.X | re.S)
_BODY_OFFSETS: dict[tuple, list[int] | None] = {}


def body_offsets(d: MacroDef, source) -> list[int] | None:
    """The file offset of each token of ``d``'s body (``d`` defined in ``source``), or None when the
    ``#define`` cannot be lined up with its body (non-ASCII text, another definition there)."""
    key = (d.path, d.line, d.column, d.body, len(source.data))
    if key in _BODY_OFFSETS:
        return _BODY_OFFSETS[key]
    if len(_BODY_OFFSETS) > 4096:
        _BODY_OFFSETS.clear()
    got = None
    start = source.offset(d.line, d.column)
    end = re.compile(rb"(?:[^\n\\]+|\\\r?\n|\\)*").match(source.data, start).end()
    raw = source.data[start:end]
    if raw.isascii() and raw.startswith(d.name.encode()):
        toks = [(m.start(), m.group(0)) for m in _SPELLING.finditer(raw.decode()) if m.lastgroup == "tok"]
        i = 1
        if d.params is not None and i < len(toks) and toks[i][1] == "(":
            while i < len(toks) and toks[i][1] != ")":
                i += 1
            i += 1
        body = [start + at for at, _ in toks[i:]]
        if len(body) == len(tokenize(d.body)):
            got = body
    _BODY_OFFSETS[key] = got
    return got


def _spelling(e: Expansion, src, source):
    """A related location at the macro body's token that ``src`` names (a macro of this file)."""
    if src is None:
        return None
    from shaderlint.diagnostics import Related

    for d in e.used:
        if d.name == src[0]:
            if d.path != source.path:
                return None
            offsets = body_offsets(d, source)
            if offsets is None or src[1] >= len(offsets):
                return None
            at = offsets[src[1]]
            return Related(at, at + 1, f"in the definition of macro `{d.name}`")
    return None


def _first(pair):
    return pair[0]


def _at_define(d: MacroDef, source):
    from shaderlint.diagnostics import Related

    if d.path == source.path:
        start = source.offset(d.line, d.column)
        return Related(start, start + len(d.name), f"expanded from macro `{d.name}`")
    return Related(0, 0, f"expanded from macro `{d.name}`", d.path, d.line, d.column)


# ---- findings in expansions ---------------------------------------------------------------------------
def map_finding(fd, parsed, source):
    """``fd`` (a :class:`shaderlint.diagnostics.Finding` in offsets of ``parsed``'s text) in offsets
    of the file ``source``: a finding inside an expansion moves to the invocation, with the macro's
    ``#define`` as a related location and no fix; related locations inside expansions move to their
    invocations; a fix that would edit an expansion is dropped (never edit an invocation blindly)."""
    from dataclasses import replace

    from shaderlint.diagnostics import Related

    if not parsed.expansions:
        return fd
    n = parsed.length
    fix = fd.fix
    if fix is not None and any(e.end > n or e.start >= n for e in fix.edits):
        fix = None
    related = []
    seen = set()
    at = parsed.expansion_at(fd.start) if fd.start >= n else None
    for r in fd.related:
        if r.path is None and r.start >= n:
            e = parsed.expansion_at(r.start)
            if e.in_body(r.start):  # a signature macro's body: in the file, where it is written
                r = replace(r, start=e.file_offset(r.start), end=e.file_offset(min(r.end, e.body_at + e.body_len)))
                key = (r.path, r.start, r.message)
                if key not in seen:
                    seen.add(key)
                    related.append(r)
                continue
            if at is e:
                continue  # the finding's own invocation: it says nothing more
            r = Related(e.inv_start, e.inv_end, f"{r.message} (in the expansion of macro `{e.macro.name}`)")
        key = (r.path, r.start, r.message)
        if key not in seen:
            seen.add(key)
            related.append(r)
    if at is None:
        if fix is fd.fix and all(a is b for a, b in zip(related, fd.related)) and len(related) == len(fd.related):
            return fd
        return replace(fd, fix=fix, related=tuple(related))
    if at.in_body(fd.start):
        # code of the body written after a signature macro's invocation: reported where it is written
        # (its fix dropped all the same: the copy's edits are not the file's)
        end = at.file_offset(min(max(fd.end, fd.start), at.body_at + at.body_len))
        sig = Related(at.inv_start, at.inv_end, f"in the kernel declared by macro `{at.macro.name}`")
        return replace(fd, start=at.file_offset(fd.start), end=end, fix=None,
                       related=tuple(related) + (sig,))
    front = [_at_define(d, source) for d in (at.macro, *at.via)]
    spelled = _spelling(at, at.source_of(fd.start), source)
    if spelled is not None:
        front.append(spelled)
    related[:0] = front
    flagged = fd.fingerprint_text if fd.fingerprint_text is not None else \
        parsed.source.data[fd.start:max(fd.start, min(fd.end, fd.start + 200))].decode("utf-8", "replace")
    inv = " ".join(source.data[at.inv_start:at.inv_end].decode("utf-8", "replace").split())
    return replace(fd, start=at.inv_start, end=at.inv_end, fix=None, related=tuple(related),
                   fingerprint_text=f"{inv}\0{flagged}")


def merge_instances(resolved: list, parsed, source) -> list:
    """One report per cause: findings of one rule at the same token of a macro's body, in several
    of its expansions (a ``uint`` parameter every instance declares), are one finding, at the first
    invocation, the others listed as related locations. ``resolved``: the engine's (rule, finding in
    the parsed text's offsets, diagnostic) triples, suppressions already applied; in order."""
    from dataclasses import replace

    from shaderlint.diagnostics import RelatedLocation

    first: dict[tuple, int] = {}
    extra: dict[int, list] = {}
    out = []
    for rule_cls, fd, d in resolved:
        e = parsed.expansion_at(fd.start) if fd.start >= parsed.length else None
        src = e.source_of(fd.start) if e is not None else None
        if src is None:
            out.append((rule_cls, fd, d))
            continue
        key = (rule_cls.code, src)
        k = first.get(key)
        if k is None:
            first[key] = len(out)
            out.append((rule_cls, fd, d))
            continue
        if d.start != out[k][2].start:  # (another kernel of the same invocation: said once)
            extra.setdefault(k, []).append(
                RelatedLocation(source.path, d.line, d.column, "the same code, expanded here", d.start, d.end))
    for k, more in extra.items():
        rule_cls, fd, d = out[k]
        seen = set()
        more = [r for r in more if not (r.start in seen or seen.add(r.start))]
        out[k] = (rule_cls, fd, replace(d, related=d.related + tuple(more)))
    return out
