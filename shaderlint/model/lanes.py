"""Which threads of a group take a branch: conditions on a thread's index in its group,
evaluated per thread.

A condition such as ``threadIdx.x < 32``, ``warp == 0`` with ``warp = threadIdx.x / WARP_SIZE``,
``lane == 0`` with ``lane = threadIdx.x & 31``, ``sid == 0`` on Metal's
``simdgroup_index_in_threadgroup`` or ``gl_SubgroupID == 0u`` is compiled once into a function of
the thread's index along x (:func:`thread_function`); it answers True/False for one thread, or None
when the value depends on more than the index (data, ``threadIdx.y``, a loop counter, a call).
Everything the compiler does not recognise is unknown: callers treat an unknown decision as
"either way".

:func:`one_simd_group_runs` is the syntactic test the SIMD-reduction rule used before (an enclosing
``if (tid < 32)`` / ``if (warp == 0)``): kept for bounds it cannot evaluate (``tid < warpSize``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model.expr import unparen

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import Function

ThreadFn = Callable[[int], "int | None"]

WIDTH_NAMES = ("WARP_SIZE", "warpSize", "warp_size", "kWarpSize", "WARPSIZE", "SIMD_WIDTH", "simd_width",
               "N_SIMDWIDTH", "threads_per_simdgroup", "gl_SubgroupSize")
_LANE_TEXTS = ("threadIdx.x", "gl_LocalInvocationIndex", "gl_LocalInvocationID.x")


def single_initializer(model: "FileModel", node: ts.Node) -> ts.Node | None:
    """The initializer (without parentheses) a variable ``node`` names stands for: it is no
    parameter, and nothing assigns it after its declaration; else None."""
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.init is not None and not v.is_param and not model.direct_writes(v):
            return unparen(v.init)
    return None


def lane_index(model: "FileModel", node: ts.Node, depth: int = 0) -> bool:
    """The thread's index in its group along x (``threadIdx.x``, ``thread_index_in_threadgroup``,
    ``gl_LocalInvocationIndex``, ``gl_LocalInvocationID.x``, or a local copy of one)."""
    node = unparen(node)
    text = model.text(node).replace(" ", "")
    if text in _LANE_TEXTS:
        return True
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.is_param and v.role in ("thread_index_in_threadgroup", "thread_position_in_threadgroup"):
            return v.type.width == 1
        nxt = single_initializer(model, node)
        return nxt is not None and depth < 4 and lane_index(model, nxt, depth + 1)
    if node.type == "cast_expression":
        value = node.child_by_field_name("value")
        return value is not None and lane_index(model, value, depth + 1)
    return False


def _simd_group_index(model: "FileModel", node: ts.Node, width: int, depth: int) -> bool:
    node = unparen(node)
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.is_param and v.role == "simdgroup_index_in_threadgroup":
            return True
        if v is None and model.text(node) == "gl_SubgroupID":
            return True
        nxt = single_initializer(model, node)
        return nxt is not None and depth < 4 and _simd_group_index(model, nxt, width, depth + 1)
    if node.type == "binary_expression":
        op = model.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        rv = model.const_value(right)
        if op == "/" and (rv == width or model.text(right) in WIDTH_NAMES):
            return lane_index(model, left, depth + 1)
        if op == ">>" and rv == width.bit_length() - 1:
            return lane_index(model, left, depth + 1)
    return False


def conjuncts(cond: ts.Node) -> list[ts.Node]:
    c = unparen(cond)
    if c.type == "condition_clause":
        inner = [x for x in c.named_children if x.type != "comment"]
        c = unparen(inner[-1]) if inner else c
    op = c.child_by_field_name("operator") if c.type == "binary_expression" else None
    if op is not None and op.type == "&&":
        return conjuncts(c.child_by_field_name("left")) + conjuncts(c.child_by_field_name("right"))
    return [c]


def _one_group_test(model: "FileModel", c: ts.Node, width: int) -> bool:
    if c.type != "binary_expression":
        return False
    op = model.text(c.child_by_field_name("operator"))
    left, right = unparen(c.child_by_field_name("left")), unparen(c.child_by_field_name("right"))
    if op in (">", ">="):
        left, right, op = right, left, "<" if op == ">" else "<="
    if op in ("<", "<="):
        bound = model.const_value(right)
        named = model.text(right) in WIDTH_NAMES
        fits = named if bound is None else (bound <= width if op == "<" else bound < width)
        return fits and lane_index(model, left, 0)
    if op == "==":
        for a, b in ((left, right), (right, left)):
            if model.const_value(b) == 0 and _simd_group_index(model, a, width, 0):
                return True
    return False


def one_simd_group_runs(model: "FileModel", f: "Function", node: ts.Node, width: int) -> bool:
    """``node`` sits in the branch of an ``if`` whose condition lets through one SIMD group at most:
    ``if (tid < 32)`` with ``tid`` the thread's index along x in its group and the bound at most the
    SIMD width (or named ``WARP_SIZE``/``warpSize``/``simd_width``), or ``if (warp == 0)`` with
    ``warp`` that index divided by the width (``threadIdx.x / WARP_SIZE``, ``>> 5``,
    ``simdgroup_index_in_threadgroup``)."""
    n = node
    while n.parent is not None and n.id != f.body.id:
        p = n.parent
        if p.type == "if_statement" and p.child_by_field_name("consequence") == n:
            cond = p.child_by_field_name("condition")
            if cond is not None and any(_one_group_test(model, c, width) for c in conjuncts(cond)):
                return True
        n = p
    return False


# ---- per-thread evaluation ---------------------------------------------------------------------

def _const(c: int) -> ThreadFn:
    return lambda t: c


def _ident(t: int) -> int:
    return t


def _arith(op: Callable[[int, int], int], guard: Callable[[int, int], bool] | None = None):
    def build(a: ThreadFn, b: ThreadFn) -> ThreadFn:
        def run(t: int) -> int | None:
            x = a(t)
            if x is None:
                return None
            y = b(t)
            if y is None or x < 0 or y < 0 or (guard is not None and not guard(x, y)):
                return None
            r = op(x, y)
            return r if r >= 0 else None  # (a negative intermediate: signedness decides; unknown)
        return run
    return build


_ARITH = {
    "+": _arith(operator.add), "-": _arith(operator.sub), "*": _arith(operator.mul),
    "/": _arith(operator.floordiv, lambda x, y: y > 0), "%": _arith(operator.mod, lambda x, y: y > 0),
    ">>": _arith(operator.rshift, lambda x, y: y < 64), "<<": _arith(operator.lshift, lambda x, y: y < 32),
    "&": _arith(operator.and_), "|": _arith(operator.or_), "^": _arith(operator.xor),
    "<": _arith(lambda x, y: int(x < y)), "<=": _arith(lambda x, y: int(x <= y)),
    ">": _arith(lambda x, y: int(x > y)), ">=": _arith(lambda x, y: int(x >= y)),
    "==": _arith(lambda x, y: int(x == y)), "!=": _arith(lambda x, y: int(x != y)),
}


def _and(a: ThreadFn | None, b: ThreadFn | None) -> ThreadFn:
    def run(t: int) -> int | None:
        x = a(t) if a is not None else None
        if x is not None and not x:
            return 0
        y = b(t) if b is not None else None
        if y is not None and not y:
            return 0
        return None if x is None or y is None else 1
    return run


def _or(a: ThreadFn | None, b: ThreadFn | None) -> ThreadFn:
    def run(t: int) -> int | None:
        x = a(t) if a is not None else None
        if x:
            return 1
        y = b(t) if b is not None else None
        if y:
            return 1
        return None if x is None or y is None else 0
    return run


def thread_function(model: "FileModel", node: ts.Node, width: int) -> ThreadFn | None:
    """``node``'s value as a function of the thread's index along x in its group (None: it is not
    one: it depends on something else, or the compiler does not know the construct). The
    function returns None for a thread whose value it cannot decide (``a && b`` with ``b``
    unknown and ``a`` true)."""
    cache = model.__dict__.setdefault("_lane_fns", {})
    key = (node.id, width)
    if key not in cache:
        cache[key] = None  # cycle guard
        cache[key] = _compile(model, node, width, 0)
    return cache[key]


def _compile(model: "FileModel", node: ts.Node, width: int, depth: int) -> ThreadFn | None:
    if depth > 12:
        return None
    node = unparen(node)
    t = node.type
    if t == "condition_clause":
        inner = [x for x in node.named_children if x.type != "comment"]
        return _compile(model, inner[0], width, depth + 1) if len(inner) == 1 else None
    if t in ("identifier", "field_expression", "number_literal", "true", "false", "qualified_identifier",
             "binary_expression", "sizeof_expression"):
        c = model.const_value(node)
        if c is not None:
            if isinstance(c, float):
                if not c.is_integer():
                    return None
                c = int(c)
            return _const(int(c))
    if t in ("identifier", "field_expression") and lane_index(model, node):
        return _ident
    if t == "identifier":
        name = model.text(node)
        v = model.resolve(node)
        if v is None:
            if name in WIDTH_NAMES:
                return _const(width)
            if name == "gl_SubgroupInvocationID":
                return lambda x: x % width
            if name == "gl_SubgroupID":
                return lambda x: x // width
            return None
        if v.is_param and v.role == "thread_index_in_simdgroup":
            return lambda x: x % width
        if v.is_param and v.role == "simdgroup_index_in_threadgroup":
            return lambda x: x // width
        if v.is_param and v.role == "threads_per_simdgroup":
            return _const(width)
        nxt = single_initializer(model, node)
        return _compile(model, nxt, width, depth + 1) if nxt is not None else None
    if t == "cast_expression":
        value = node.child_by_field_name("value")
        return _compile(model, value, width, depth + 1) if value is not None else None
    if t == "unary_expression":
        op = node.child_by_field_name("operator")
        arg = node.child_by_field_name("argument")
        if op is None or arg is None or model.text(op) != "!":
            return None
        a = _compile(model, arg, width, depth + 1)
        if a is None:
            return None
        return lambda x: None if (r := a(x)) is None else int(not r)
    if t == "binary_expression":
        op_node = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op_node is None or left is None or right is None:
            return None
        op = model.text(op_node)
        a = _compile(model, left, width, depth + 1)
        b = _compile(model, right, width, depth + 1)
        if op in ("&&", "and"):
            return _and(a, b) if a is not None or b is not None else None
        if op in ("||", "or"):
            return _or(a, b) if a is not None or b is not None else None
        build = _ARITH.get(op)
        if build is None or a is None or b is None:
            return None
        return build(a, b)
    if t == "conditional_expression":
        c = _compile(model, node.child_by_field_name("condition"), width, depth + 1)
        a = _compile(model, node.child_by_field_name("consequence"), width, depth + 1)
        b = _compile(model, node.child_by_field_name("alternative"), width, depth + 1)
        if c is None or a is None or b is None:
            return None

        def pick(x: int) -> int | None:
            k = c(x)
            return None if k is None else (a(x) if k else b(x))
        return pick
    return None
