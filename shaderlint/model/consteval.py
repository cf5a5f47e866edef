"""Evaluation of constant expressions written as text (object-like macro bodies).

Tree-based constant evaluation lives in :mod:`shaderlint.model.expr`; macro
bodies are plain text (``#define BLOCK (16 * 16)``), evaluated here with a
tiny, safe expression parser that understands C literals and the operators of
integer constant expressions.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable

_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)([uUlL]*)$")
_FLOAT = re.compile(r"^((?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)([fFhHlL]*|hf|HF|lf|LF)$")


def parse_number(text: str) -> int | float | None:
    """Value of a C/Metal/GLSL numeric literal (``0x10u``, ``1.5f``, ``2.0h``, ``1e-3``)."""
    t = text.strip().replace("'", "")
    if len(t) > 1 and t[0] in "+-":  # tree-sitter-cpp reads `-0.5` in `-0.5 * h` as one number_literal
        v = parse_number(t[1:].lstrip())
        return -v if v is not None and t[0] == "-" else v
    m = _INT.match(t)
    if m:
        body = m.group(1)
        if len(body.lstrip("0xXbB")) > 64:
            return None  # no 64-bit literal is that long (and int() refuses over 4300 digits)
        if body.startswith(("0x", "0X")):
            v = int(body, 16)
        elif body.startswith(("0b", "0B")):
            v = int(body[2:], 2)
        elif len(body) > 1 and body.startswith("0"):
            v = int(body, 8)
        else:
            v = int(body)
        return v if v < 1 << 64 else None  # out of range for any integer type: unknown
    m = _FLOAT.match(t)
    if m and ("." in m.group(1) or "e" in m.group(1).lower() or m.group(2)):
        try:
            v = float(m.group(1))
        except ValueError:
            return None
        return v if math.isfinite(v) else None  # `1e999`: no use to any analysis (int(inf) raises)
    return None


_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+\.\d*(?:[eE][+-]?\d+)?[fFhHlL]*|\.\d+(?:[eE][+-]?\d+)?[fFhHlL]*|"
                    r"\d+(?:[eE][+-]?\d+)?[uUlLfFhH]*|[A-Za-z_]\w*|<<|>>|&&|\|\||[-+*/%()~!&|^<>?:]|==|!=|<=|>=)")


def eval_text(text: str, lookup: Callable[[str], int | float | None]) -> int | float | None:
    """Evaluate a macro body; identifiers are resolved through ``lookup``. None if not constant."""
    tokens = []
    pos = 0
    text = text.strip()
    if not text:
        return None
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            return None
        tok = m.group(1)
        pos = m.end()
        if tok[0].isdigit() or (tok[0] == "." and len(tok) > 1):
            v = parse_number(tok)
            if v is None:
                return None
            tokens.append(repr(v))
        elif tok[0].isalpha() or tok[0] == "_":
            v = lookup(tok)
            if v is None:
                return None
            tokens.append(repr(v))
        else:
            tokens.append({"&&": " and ", "||": " or ", "!": " not ", "/": "//"}.get(tok, tok))
    expr = " ".join(tokens)
    if "?" in expr or ":" in expr:
        return None
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):  # e.g. 5,000 nested `-`: unknown
        return None
    try:
        return _eval(tree.body)
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def _eval(n: ast.AST) -> int | float:
    if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
        return n.value
    if isinstance(n, ast.UnaryOp):
        v = _eval(n.operand)
        if isinstance(n.op, ast.USub):
            return -v
        if isinstance(n.op, ast.UAdd):
            return v
        if isinstance(n.op, ast.Invert) and isinstance(v, int):
            return ~v
        if isinstance(n.op, ast.Not):
            return int(not v)
    if isinstance(n, ast.BinOp):
        a, b = _eval(n.left), _eval(n.right)
        return c_binary(type(n.op).__name__, a, b)
    if isinstance(n, ast.BoolOp):
        vals = [_eval(v) for v in n.values]
        return int(all(vals)) if isinstance(n.op, ast.And) else int(any(vals))
    if isinstance(n, ast.Compare) and len(n.ops) == 1:
        a, b = _eval(n.left), _eval(n.comparators[0])
        op = type(n.ops[0]).__name__
        return int({"Lt": a < b, "Gt": a > b, "LtE": a <= b, "GtE": a >= b, "Eq": a == b, "NotEq": a != b}[op])
    raise ValueError("not constant")


_RANGE = 1 << 128  # far beyond any C integer type; keeps chained macros (`M2 (M1*M1)` ...) from exploding


def c_binary(op: str, a: int | float, b: int | float) -> int | float:
    """C semantics for the operators of constant expressions (truncating division). Integer results
    beyond 128 bits and non-finite floats raise :class:`OverflowError` (the value is unknown)."""
    r = _c_binary(op, a, b)
    if isinstance(r, int) and not -_RANGE < r < _RANGE or isinstance(r, float) and not math.isfinite(r):
        raise OverflowError("constant out of range")
    return r


def _c_binary(op: str, a: int | float, b: int | float) -> int | float:
    if op in ("Add", "+"):
        return a + b
    if op in ("Sub", "-"):
        return a - b
    if op in ("Mult", "*"):
        return a * b
    if op in ("FloorDiv", "Div", "/"):
        if isinstance(a, int) and isinstance(b, int):
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        return a / b
    if op in ("Mod", "%"):
        if isinstance(a, int) and isinstance(b, int):
            r = abs(a) % abs(b)
            return r if a >= 0 else -r
        raise ValueError("float modulo")
    if isinstance(a, int) and isinstance(b, int):
        if op in ("LShift", "<<"):
            if b < 0 or b > 64:
                raise ValueError("shift")
            return a << b
        if op in ("RShift", ">>"):
            return a >> b
        if op in ("BitAnd", "&"):
            return a & b
        if op in ("BitOr", "|"):
            return a | b
        if op in ("BitXor", "^"):
            return a ^ b
    raise ValueError(op)
