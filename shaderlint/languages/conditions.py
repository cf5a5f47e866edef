"""Conditional compilation where the macros are known: which ``#if`` branches the compiler reads.

The directives of a file are walked in file order, as the preprocessor does. The macros known at a
directive are

* the file's own ``#define`` and ``#undef`` lines seen before it, in the branches read so far;
* the *predefined* macros of the build: the ``defines`` setting (``-D`` flags: ``"FUSED"`` is
  ``FUSED`` defined as ``1``, ``"N=4"`` defines ``N`` as ``4``) and, for CUDA, ``__CUDA_ARCH__``
  (:func:`predefined`).

A condition is evaluated with three values, true, false and *unknown*: ``defined``, ``!``, ``&&``,
``||``, ``?:``, comparisons, integer arithmetic and parentheses over integer literals and
object-like macros whose value is known (their bodies are expanded as tokens, as the preprocessor
does: ``#define A 1 + 2`` makes ``A * 3`` seven). A name the file never defines or undefines and no
setting names is unknown (a header or the build may define it), and so is anything else the
analysis cannot read (a function-like macro, ``__has_include``, a character literal, an empty
body). ``false && x`` and ``true || x`` are decided whatever ``x`` is.

A branch is *dead* only when its condition is decidedly false (or an earlier branch of its group is
decidedly taken); every other branch is read, as before. A ``#define`` in a branch that may or may
not be read leaves the name with :class:`Alternatives` after the ``#endif`` (each way through the
group: a body, undefined, or unknown; at most :data:`MAX_ALTERNATIVES`, else unknown), one value when
every way ends with the same definition; a condition is decided when every combination of its names'
alternatives decides it alike. Dead branches are blanked in the parsed copy (``dead-branch`` masks): the
grammar, the model and the rules never see them, and their ``#define`` lines define nothing. When one
branch of a group is decidedly taken (or every branch is dead), the group's directive lines are
blanked too and that branch's code reads as unconditional.

``__CUDA_ARCH__``: kernel code is what the device pass of ``nvcc`` compiles, where ``__CUDA_ARCH__``
is defined (``#ifndef __CUDA_ARCH__`` is host code). Its value is ``10 * major + 10 * minor`` of the
configured NVIDIA target (``sm_90`` -> 900); with no target configured it is defined with an unknown
value, so ``#if __CUDA_ARCH__ >= 800`` keeps both branches. On a non-NVIDIA target (a HIP build) it is
unknown altogether.

*Complete* defines (the :data:`COMPLETE` entry of the predefined macros: the ``defines-complete``
setting, or a compile command from ``compile_commands.json``, with every project header the file
includes read): the build's ``-D`` flags are all known, so a name that no ``-D``, no predefined macro,
no header read and no ``#define`` of the file defines is *undefined*, as the preprocessor says
(``#if defined(GGML_USE_HIPBLAS)`` is false, ``#ifndef CC_TURING`` true) — except the names headers
that are never read may define (:func:`may_be_predefined`: the compiler's and the C library's reserved
``__x`` / ``_X`` names and the toolkit's ``CUDART_VERSION``, ``INT_MAX``, ``GL_ES``...), which stay
unknown. A name whose state is not known (defined differently in branches that may or may not be
read, or left so by a header) is :data:`UNSET` in the state then, and stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shaderlint.model.source import Source

#: A predefined macro that is defined but whose value is not known (``__CUDA_ARCH__`` with no target).
OPAQUE = "\0opaque"
#: The body of a macro whose state (defined or not, and how) is not known, where an absent name is
#: undefined (complete defines); the same string as ``shaderlint.project.includes.UNKNOWN_STATE``.
UNSET = "\0unknown"
#: The predefined-macro entry (never an identifier) saying the build's defines are complete.
COMPLETE = "\0complete"
MAX_ALTERNATIVES = 4  # bodies a name may have after a group whose branches define it differently
_MAX_COMBINATIONS = 64  # evaluations of one condition over its names' alternatives


class Alternatives(tuple):
    """A macro's state after a group whose branches leave it differently: each way it may be (a body,
    None for undefined, :data:`UNSET` for unknown). A condition every alternative decides alike is
    decided (``#ifdef W64 / #define WARP 64 / #else / #define WARP 32 / #endif`` then ``#if WARP >=
    32``)."""

    __slots__ = ()
_MISSING = object()  # a name whose definition is unknown (absent from the state)

Predefined = tuple[tuple[str, str | None], ...]  # (name, body; None: known to be undefined)

_NAME = re.compile(r"[A-Za-z_]\w*")
_DEFINE_SETTING = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:=(.*))?", re.S)


def parse_define(text: str) -> tuple[str, str] | None:
    """``"FUSED"`` -> ("FUSED", "1"), ``"N=4"`` -> ("N", "4"), ``"E="`` -> ("E", ""), as ``-D`` reads
    them; None when ``text`` does not start with a macro name (or names a function-like macro)."""
    m = _DEFINE_SETTING.fullmatch(text)
    if m is None:
        return None
    return m.group(1), ("1" if m.group(2) is None else m.group(2).strip())


def predefined(language: str, target: str | None, defines: Iterable[str] = (), complete: bool = False) -> Predefined:
    """The macros a build of ``language`` for the configured ``target`` (None: none configured) has
    before the file's first line: ``__CUDA_ARCH__`` for CUDA (see the module docstring), then the
    ``defines`` setting (which wins: ``-D__CUDA_ARCH__=...`` is the user's word); with ``complete``,
    the :data:`COMPLETE` entry (every other name is undefined, see the module docstring)."""
    out: dict[str, str | None] = {COMPLETE: "1"} if complete else {}
    if language == "cuda":
        arch = _cuda_arch(target)
        if arch is not None:
            out["__CUDA_ARCH__"] = arch
    for d in defines:
        got = parse_define(d)
        if got is not None:
            out[got[0]] = got[1]
    return tuple(out.items())


#: Names of macros that headers the analysis never reads (the toolkit's, the C and C++ libraries', the
#: graphics APIs') or the compiler itself may define, besides the reserved ``__x`` and ``_X`` names:
#: CUDA's ``CUDART_VERSION`` and ``CUDA_VERSION``, CUB's and Thrust's versions, ``<limits.h>`` and
#: ``<float.h>`` limits, ``<math.h>``'s ``M_PI``, GLSL's ``GL_ES`` and extension macros, Python's.
_PREDEFINED_NAME = re.compile(
    r"_[A-Z_]\w*|(?:CUDA|CUDART|CUB|THRUST|CUTLASS|CUTE|CURAND|CUBLAS|CUBLASLT|CUSPARSE|CUFFT|CUSOLVER|CUDNN|NCCL|NVTX|"
    r"NVRTC|NV|HIP|HIPCUB|ROCM|ROCPRIM|GL|VK|VULKAN|METAL|PY|PYPY|PYBIND11|TORCH|C10|AT|EIGEN|INT\d*|UINT\d*|"
    r"INTMAX|UINTMAX|INTPTR|UINTPTR|PTRDIFF|SIZE|SSIZE|WCHAR|WINT|SIG_ATOMIC|CHAR|SCHAR|UCHAR|SHRT|USHRT|LONG|"
    r"ULONG|LLONG|ULLONG|FLT|DBL|LDBL|DECIMAL|FP|MATH|M|HUGE|EXIT|RAND|EOF|BUFSIZ|FILENAME|FOPEN|L|TMP|SEEK|"
    r"CLOCKS|TIME|MB)_\w*|NULL|INFINITY|NAN|HUGE_VAL\w*|EOF|RAND_MAX|MB_LEN_MAX|CHAR_BIT|"
    r"errno|assert|offsetof|linux|unix|i386|GL_ES|TRUE|FALSE|WIN32|WIN64|APPLE|BYTE_ORDER|LITTLE_ENDIAN|"
    r"BIG_ENDIAN|PDP_ENDIAN|PATH_MAX|NAME_MAX|PAGE_SIZE|CLOCKS_PER_SEC|MAP_\w+|O_\w+|S_\w+")


def may_be_predefined(name: str) -> bool:
    """Whether a header that is never read or the compiler may define the macro ``name`` (see
    :data:`_PREDEFINED_NAME`): such a name stays unknown under complete defines."""
    return _PREDEFINED_NAME.fullmatch(name) is not None


def _cuda_arch(target: str | None) -> str | None:
    if target is None:
        return OPAQUE
    from shaderlint.estimate.targets import get_target

    try:
        t = get_target(target)
    except KeyError:
        return OPAQUE
    m = re.fullmatch(r"sm_(\d+)(\d)[a-z]?", t.name)
    if t.vendor != "nvidia" or m is None:
        return None  # HIP on AMD, or a profile that is no CUDA architecture: not known either way
    return str(int(m.group(1)) * 100 + int(m.group(2)) * 10)


# ---- #if expressions ---------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)(?![\w.])|([A-Za-z_]\w*)|(\|\||&&|==|!=|<=|>=|<<|>>|[-+*/%()!~<>&|^?:,])"
    r"|(\.?\d[\w.]*|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|\S))")
_MAX_TOKENS = 4096  # expansion bound: `#define A B B`, `#define B C C`, ... doubles per level
_INT_RANGE = 1 << 63


class _Unknown(Exception):
    """The expression cannot be read (a syntax the preprocessor would refuse, or too large)."""


def _lex(text: str) -> list[tuple[str, object]]:
    """Tokens: ("num", (value, unsigned)), ("id", name), ("op", text), ("?", text) for the unreadable."""
    out: list[tuple[str, object]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break  # only blanks left
        pos = m.end()
        if m.group(1) is not None:
            lit, suffix = m.group(1), m.group(2)
            try:
                v = int(lit, 16) if lit[:2] in ("0x", "0X") else int(lit, 8) if len(lit) > 1 and lit[0] == "0" \
                    else int(lit)
            except ValueError:  # `09`: no octal literal
                out.append(("?", lit))
                continue
            out.append(("num", (v, "u" in suffix.lower())))
        elif m.group(3) is not None:
            out.append(("id", m.group(3)))
        elif m.group(4) is not None:
            out.append(("op", m.group(4)))
        else:
            out.append(("?", m.group(5)))
    return out


class Evaluator:
    """Tri-state evaluation of ``#if`` conditions against a macro state (name -> body, None for a name
    known to be undefined, :data:`OPAQUE` for one defined with an unknown body)."""

    def __init__(self, state: dict[str, str | None]) -> None:
        self.state = state
        self.complete = COMPLETE in state
        self._bodies: dict[str, list] = {}
        self._choice: dict[str, object] = {}  # name -> the alternative taken in this evaluation
        self._seen: dict[str, Alternatives] = {}  # names with alternatives met in this evaluation

    def lookup(self, name: str):
        """``name``'s body, None when it is known to be undefined, :data:`_MISSING` when unknown."""
        body = self.state.get(name, _MISSING)
        if body is _MISSING:
            return None if self.complete and not may_be_predefined(name) else _MISSING
        if isinstance(body, Alternatives):
            if name not in self._choice:
                self._seen.setdefault(name, body)
                return _MISSING
            body = self._choice[name]
        return _MISSING if body == UNSET else body

    def value(self, cond: str) -> int | None:
        """The condition's value (0 false, other true) or None when unknown; with names that have
        :class:`Alternatives`, the value every combination of them gives, when they agree."""
        self._seen = {}
        got = self._value(cond)
        if got is not None or not self._seen:
            return got
        names = list(self._seen.items())
        combos = 1
        for _, alts in names:
            combos *= len(alts)
        if combos > _MAX_COMBINATIONS:
            return None
        import itertools

        seen, found = set(self._seen), None
        try:
            for pick in itertools.product(*(alts for _, alts in names)):
                self._choice = {n: b for (n, _), b in zip(names, pick)}
                self._seen = {}
                v = self._value(cond)
                if v is None or set(self._seen) - seen or (found is not None and bool(v) != bool(found)):
                    return None
                found = v
        finally:
            self._choice = {}
        return None if found is None else int(bool(found))

    def _value(self, cond: str) -> int | None:
        try:
            toks = self._expand(_lex(cond), frozenset(), [0])
            if not toks or any(k == "?" for k, _ in toks):
                return None
            p = _Parser(toks)
            v = p.ternary()
            if p.i != len(toks):
                return None
            return None if v is None else v[0]
        except (_Unknown, RecursionError):
            return None

    def _expand(self, toks: list, hide: frozenset, count: list[int]) -> list:
        """Macro-expand ``toks`` (``defined X`` / ``defined(X)`` decided here, object-like macros
        replaced by their tokens; a name under expansion is left as it is, as the preprocessor does)."""
        out: list = []
        i, n = 0, len(toks)
        while i < n:
            kind, val = toks[i]
            if kind == "id" and val == "defined":
                if i + 1 < n and toks[i + 1] == ("op", "("):
                    if i + 3 < n and toks[i + 2][0] == "id" and toks[i + 3] == ("op", ")"):
                        name, i = toks[i + 2][1], i + 4
                    else:
                        raise _Unknown
                elif i + 1 < n and toks[i + 1][0] == "id":
                    name, i = toks[i + 1][1], i + 2
                else:
                    raise _Unknown
                body = self.lookup(name)
                out.append(("val", None if body is _MISSING else (0 if body is None else 1, False)))
                continue
            i += 1
            if kind != "id":
                out.append((kind, val))
                continue
            body = self.lookup(val)
            if i < n and toks[i] == ("op", "("):  # a function-like macro's call (or __has_include(...))
                depth, j = 0, i
                while j < n:
                    if toks[j] == ("op", "("):
                        depth += 1
                    elif toks[j] == ("op", ")"):
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                if j >= n:
                    raise _Unknown
                out.append(("val", None))
                i = j + 1
                continue
            if val in hide or body is _MISSING or body == OPAQUE:
                out.append(("val", None))
            elif body is None:
                out.append(("val", (0, False)))  # an identifier no macro replaces is 0
            else:
                sub = self._bodies.get(body)
                if sub is None:
                    sub = self._bodies[body] = _lex(body)
                count[0] += len(sub)
                if count[0] > _MAX_TOKENS:
                    raise _Unknown
                out.extend(self._expand(sub, hide | {val}, count))
        return out


class _Parser:
    """Precedence climbing over expanded tokens; a value is (int, unsigned) or None (unknown)."""

    _BINARY = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
               ("+", "-"), ("*", "/", "%"))

    def __init__(self, toks: list) -> None:
        self.toks = toks
        self.i = 0

    def _peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def _take(self, op: str) -> None:
        if self._peek() != ("op", op):
            raise _Unknown
        self.i += 1

    def ternary(self):
        c = self.binary(0)
        if self._peek() != ("op", "?"):
            return c
        self.i += 1
        a = self.ternary()
        self._take(":")
        b = self.ternary()
        if c is None:
            return a if a is not None and a == b else None
        return a if c[0] else b

    def binary(self, level: int):
        if level == len(self._BINARY):
            return self.unary()
        ops = self._BINARY[level]
        left = self.binary(level + 1)
        while True:
            kind, op = self._peek()
            if kind != "op" or op not in ops:
                return left
            self.i += 1
            right = self.binary(level + 1)
            left = _apply(op, left, right)

    def unary(self):
        kind, val = self._peek()
        if kind == "op" and val in ("!", "~", "-", "+"):
            self.i += 1
            v = self.unary()
            if v is None:
                return None
            x, u = v
            r = {"!": int(not x), "~": ~x, "-": -x, "+": x}[val]
            return _checked(r, u and val != "!")
        if kind == "op" and val == "(":
            self.i += 1
            v = self.ternary()
            self._take(")")
            return v
        if kind == "num":
            self.i += 1
            return _checked(*val)
        if kind == "val":
            self.i += 1
            return val
        raise _Unknown


def _checked(v: int, unsigned: bool):
    if unsigned and v < 0 or not -_INT_RANGE <= v < _INT_RANGE:
        return None  # unsigned wrap-around or overflow: not modelled
    return v, unsigned


def _apply(op: str, a, b):
    if op == "&&":
        if (a is not None and not a[0]) or (b is not None and not b[0]):
            return 0, False
        return None if a is None or b is None else (1, False)
    if op == "||":
        if (a is not None and a[0]) or (b is not None and b[0]):
            return 1, False
        return None if a is None or b is None else (0, False)
    if a is None or b is None:
        return None
    (x, ux), (y, uy) = a, b
    u = ux or uy
    if u and (x < 0 or y < 0):
        return None  # a negative operand converted to unsigned: not modelled
    if op in ("==", "!=", "<", ">", "<=", ">="):
        r = {"==": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op]
        return int(r), False
    if op in ("/", "%"):
        if y == 0:
            return None
        q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
        return _checked(q if op == "/" else x - q * y, u)
    if op in ("<<", ">>"):
        if y < 0 or y >= 64 or x < 0:
            return None
        return _checked(x << y if op == "<<" else x >> y, ux)
    r = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[op]
    return _checked(r, u)


# ---- the walk over a file's directives ---------------------------------------------------------------

_DIRECTIVE = re.compile(
    rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef)\b((?:[^\n\\]+|\\\r?\n|\\)*)",
    re.M)
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\(?)(.*)", re.S)


def _directive_text(raw: bytes) -> str:
    """A directive's operand with comments and line continuations gone, on one line."""
    text = re.sub(rb"/\*.*?\*/|/\*.*|//.*|\\\r?\n", b" ", raw, flags=re.S)
    return " ".join(text.decode("utf-8", "replace").split())


class _Group:
    __slots__ = ("directives", "status", "saved", "ends", "taken", "inert")

    def __init__(self, inert: bool) -> None:
        self.inert = inert  # inside a dead branch: only nesting is tracked
        self.directives: list[re.Match] = []
        self.status: list[str] = []  # per branch: "dead", "live" (may be read) or "taken"
        self.saved: dict[str, object] = {}  # the value before the group of every name a branch changed
        self.ends: list[dict[str, object]] = []  # per branch read: the changed names' values at its end
        self.taken = False


#: A macro's state after a walk when it is not known whether or how it is defined (:func:`macro_delta`).
UNKNOWN = _MISSING


def dead_regions(source: Source, predefined: Predefined = ()) -> list[tuple[int, int]]:
    """The spans to blank (sorted, disjoint): dead branches, and the directive lines of groups one of
    whose branches is decidedly taken. Empty when nothing is decided."""
    return _walk(source, predefined)[0]


def macro_delta(source: Source, predefined: Predefined = ()) -> tuple[list[tuple[int, int]], dict[str, object]]:
    """:func:`dead_regions` and what the file does to the macros, walked from ``predefined``: name ->
    its state at the end (a body, None for undefined, :data:`OPAQUE` for defined with an unknown or
    function-like body, :data:`UNKNOWN` when the branches disagree), for every name whose state
    changed. What a header leaves behind for the code that includes it."""
    regions, state = _walk(source, predefined)
    start = dict(predefined)
    delta = {k: state.get(k, _MISSING) for k in set(state) | set(start)
             if state.get(k, _MISSING) != start.get(k, _MISSING)}
    return regions, {k: _MISSING if v == UNSET else v for k, v in delta.items()}


def _walk(source: Source, predefined: Predefined) -> tuple[list[tuple[int, int]], dict[str, object]]:
    data = source.data
    if b"#" not in data:
        return [], dict(predefined)
    from shaderlint.languages.base import _continues_line, scan_directives

    state: dict[str, str | None] = dict(predefined)
    ev = Evaluator(state)
    stack: list[_Group] = []
    out: list[tuple[int, int]] = []

    def dead_here() -> bool:
        return bool(stack) and (stack[-1].inert or stack[-1].status[-1] == "dead")

    def set_macro(name: str, body) -> None:
        if stack:
            stack[-1].saved.setdefault(name, state.get(name, _MISSING))
        state[name] = UNSET if body is _MISSING else body  # (not absent: under complete defines, undefined)
        ev._bodies.pop(name, None)

    def end_branch(g: _Group) -> None:
        """The branch just closed: keep its changes (when read) and undo them for the next one."""
        if g.status[-1] != "dead":
            g.ends.append({k: state.get(k, _MISSING) for k in g.saved})
        for k, v in g.saved.items():
            if v is _MISSING:
                state.pop(k, None)
            else:
                state[k] = v
            ev._bodies.pop(k, None)

    def open_branch(g: _Group, value: int | None) -> None:
        if g.taken or value == 0:
            g.status.append("dead")
        elif value is not None and all(s == "dead" for s in g.status):
            g.status.append("taken")
            g.taken = True
        else:
            g.status.append("live")
            if value is not None:
                g.taken = True  # later branches are dead, but this one is read only when those before are not

    for m in scan_directives(source, _DIRECTIVE):
        if source.in_comment_or_string(m.start(1)) or _continues_line(data, m.start()):
            continue
        kind = m.group(1)
        if kind in (b"define", b"undef"):
            if dead_here():
                continue
            d = _DEFINE.match(_directive_text(m.group(2)))
            if d is None:
                continue
            if kind == b"undef":
                set_macro(d.group(1), None)
            elif d.group(2):
                set_macro(d.group(1), OPAQUE)  # function-like: defined, no value
            else:
                set_macro(d.group(1), d.group(3).strip())
            continue
        if kind in (b"if", b"ifdef", b"ifndef"):
            g = _Group(dead_here())
            g.directives.append(m)
            stack.append(g)
            if not g.inert:
                open_branch(g, _condition(ev, kind, m))
            else:
                g.status.append("dead")
            continue
        if not stack:
            continue  # unbalanced: a fragment of a larger file
        g = stack[-1]
        if g.inert:
            if kind == b"endif":
                stack.pop()
            continue
        if kind == b"endif":
            end_branch(g)
            g.directives.append(m)
            stack.pop()
            _close(g, state, set_macro, out, ev.complete)
            continue
        end_branch(g)
        g.directives.append(m)
        open_branch(g, 1 if kind == b"else" else _condition(ev, kind, m))
    out.sort()
    while stack:  # unbalanced (a fragment): what the open groups changed is not known
        g = stack.pop()
        if not g.inert:
            for name in g.saved:
                state[name] = UNSET
    return out, state


def _condition(ev: Evaluator, kind: bytes, m: re.Match) -> int | None:
    text = _directive_text(m.group(2))
    if kind in (b"if", b"elif"):
        return ev.value(text)
    name = _NAME.match(text)
    if name is None:
        return None
    defined = ev.value(f"defined {name.group(0)}")
    if defined is None:
        return None
    return int(bool(defined) != (kind in (b"ifndef", b"elifndef")))


def _close(g: _Group, state: dict, set_macro, out: list[tuple[int, int]], complete: bool = False) -> None:
    """At ``#endif``: the macros after the group (what every way through it agrees on) and the spans
    to blank."""
    paths = list(g.ends)
    if not g.taken and b"else" not in (d.group(1) for d in g.directives):
        paths.append({})  # no branch read: the names keep their values from before the group
    for name, before in list(g.saved.items()):
        vals = [p.get(name, before) for p in paths]
        absent = None if complete and not may_be_predefined(name) else UNSET  # what an absent name is
        set_macro(name, vals[0] if all(v == vals[0] for v in vals) else _alternatives(vals, absent))
    ds = g.directives
    for k, st in enumerate(g.status):
        if st == "dead":
            out.append((_line_end(ds[k]), ds[k + 1].start()))
    if "live" not in g.status:  # one branch taken, or none read at all: no condition is left to keep
        out.extend((d.start(), _line_end(d)) for d in ds)


def _alternatives(vals: list, absent):
    """The state of a name the ways through a group leave as ``vals`` (not all alike; ``absent``: what
    a name absent from the state is, undefined or unknown)."""
    out: dict = {}
    for v in vals:
        for x in (v if isinstance(v, Alternatives) else (v,)):
            out[absent if x is _MISSING else x] = None
    if len(out) > MAX_ALTERNATIVES or list(out) == [UNSET]:
        return _MISSING
    return Alternatives(out)


def _line_end(m: re.Match) -> int:
    s = m.string
    e = m.end()
    if s[e:e + 2] == b"\r\n":
        return e + 2
    return e + 1 if s[e:e + 1] == b"\n" else e
