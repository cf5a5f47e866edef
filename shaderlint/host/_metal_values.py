"""Metal host scanners: the values the evaluator computes, and integer arithmetic.

See :mod:`shaderlint.host.metal`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter as ts

#: Evaluation steps per file before every further value is unknown.
MAX_STEPS = 200_000
#: Nesting depth of one evaluation (expressions, names, helper calls).
MAX_DEPTH = 48
#: Dispatch calls read per file.
MAX_DISPATCHES = 5_000


class _Null:
    """``nil`` / ``nullptr``: a pipeline that is not there yet, dropped when values are combined."""

    def __repr__(self) -> str:
        return "NULL"

NULL = _Null()


@dataclass(frozen=True)
class _Str:
    text: str
    #: Where the literal is written (-1: built from several).
    start: int = field(default=-1, compare=False)


@dataclass(frozen=True)
class _Kernel:
    """A function or a pipeline built from it: both stand for the function's name."""

    name: str
    #: Where the name's literal is written (-1: built from several).
    start: int = field(default=-1, compare=False)


@dataclass(frozen=True)
class _Param:
    func: int
    index: int


@dataclass(frozen=True)
class _Size:
    dims: tuple[int, int, int]
    start: int = field(compare=False)
    end: int = field(compare=False)


def _combine(values: list) -> object:
    """One value when every binding agrees (NULLs aside), else None (unknown)."""
    out = None
    seen = False
    for v in values:
        if v is NULL:
            continue
        if v is None:
            return None
        if not seen:
            out, seen = v, True
        elif v != out:
            return None
    return out if seen else None


@dataclass
class _Decl:
    name: str
    pos: int
    scope: tuple[int, int]
    value: object  # a node, None (no initial value) or "unknown"
    param: _Param | None = None
    size_ctor: bool = False  # C++ ``MTL::Size g(1, 2, 3)`` / ``MTL::Size g{…}``


@dataclass
class _Call:
    name: str  # method / function name (Swift base name, ObjC full selector, C++ name)
    labels: tuple[str, ...]
    args: list  # nodes
    receiver: object  # node or None
    node: ts.Node

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_']*)([uUlLzZ]*)$")


def _parse_int(text: str) -> int | None:
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    m = _INT_RE.match(t)
    if not m:
        return None
    body = m.group(1).replace("_", "").replace("'", "")
    try:
        if body[:2] in ("0x", "0X"):
            return int(body[2:], 16)
        if body[:2] in ("0b", "0B"):
            return int(body[2:], 2)
        if body[:2] in ("0o", "0O"):
            return int(body[2:], 8)
        if len(body) > 1 and body.startswith("0"):
            return int(body, 8)
        return int(body)
    except ValueError:
        return None


def _arith(op: str, a: int, b: int) -> int | None:
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q
        r = q if op == "/" else a - q * b
    elif op == "<<":
        if not 0 <= b < 64:
            return None
        r = a << b
    elif op == ">>":
        if not 0 <= b < 64:
            return None
        r = a >> b
    else:
        return None
    return r if -(1 << 64) < r < (1 << 64) else None


class _Budget(Exception):
    pass
