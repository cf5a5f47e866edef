"""Thread-dependent-looking conditions that are the same in every thread of a group by an idiom the
uniformity analysis does not follow (or cannot decide, and so should stay silent on). Used by the
dependence analysis (control dependence of writes) and by SL403 (model.sync.divergent_conditions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model import builtins as B
from shaderlint.model.expr import descendants, unparen
from shaderlint.model.kernel import Function

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel


def uniform_idiom(model: "FileModel", f: Function | None, cond: ts.Node) -> bool:
    """``cond`` is the condition of a loop with a uniform trip count written with thread-dependent
    start and bound, or tests the result of a group vote through shared memory."""
    return _uniform_trip_loop(model, cond) or _group_vote(model, f, cond)


def _additive_terms(model: "FileModel", node: ts.Node, depth: int = 0) -> list[str] | None:
    """The '+' terms of an expression as normalized text, through the initializers of variables
    never written after their declaration; None when a term is not a sum the analysis can read."""
    node = unparen(node)
    if depth > 8:
        return None
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        if op is not None and model.text(op) == "+":
            left = _additive_terms(model, node.child_by_field_name("left"), depth + 1)
            right = _additive_terms(model, node.child_by_field_name("right"), depth + 1)
            return None if left is None or right is None else left + right
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.init is not None and not v.is_param and not model.direct_writes(v):
            return _additive_terms(model, v.init, depth + 1)
    return [" ".join(model.text(node).split())]


def _uniform_trip_loop(model: "FileModel", cond: ts.Node) -> bool:
    """``for (t = a + tid; t < b + tid; t += C)``: the counter's start and the bound carry the same
    thread-dependent terms (through constant variables: ``start_t = base + tid``, ``end_t = base2 +
    tid``) and the rest, like the step, is uniform: every thread runs the same number of iterations
    (llama.cpp's wkv6/gla token loops)."""
    loop = cond.parent
    if loop is None or loop.type != "for_statement" or loop.child_by_field_name("condition") != cond:
        return False
    c = unparen(cond)
    if c.type != "binary_expression" or model.text(c.child_by_field_name("operator")) not in ("<", "<=", "!=", ">", ">="):
        return False
    left, right = unparen(c.child_by_field_name("left")), c.child_by_field_name("right")
    if left.type != "identifier" or (var := model.resolve(left)) is None:
        return False
    init, ini = var.init, loop.child_by_field_name("initializer")
    if init is None or ini is None or not (ini.start_byte <= init.start_byte < ini.end_byte):
        return False  # the counter is declared by this loop
    update = loop.child_by_field_name("update")
    body = loop.child_by_field_name("body")
    writes = model.direct_writes(var)
    if update is None or any(not (update.start_byte <= w.start_byte < update.end_byte) for w in writes):
        return False  # the counter is written elsewhere too (or only declared)
    for w in writes:
        step = w.child_by_field_name("right")
        if step is not None and B.LOCAL in model.deps(step):
            return False
    start, bound = _additive_terms(model, init), _additive_terms(model, right)
    if start is None or bound is None or body is None:
        return False
    rest_start, rest_bound = list(start), []
    for t in bound:
        if t in rest_start:
            rest_start.remove(t)
        else:
            rest_bound.append(t)
    if len(rest_start) == len(start):
        return False  # nothing shared: not this shape
    for text in rest_start + rest_bound:
        # the remaining terms must be uniform: find them under the initializer or the bound
        n = _find_term(model, init, text) or _find_term(model, right, text)
        if n is None or B.LOCAL in model.deps(n):
            return False
    return True


def _find_term(model: "FileModel", node: ts.Node, text: str, depth: int = 0) -> ts.Node | None:
    if depth > 8:
        return None
    n = unparen(node)
    if " ".join(model.text(n).split()) == text:
        return n
    if n.type == "binary_expression" and model.text(n.child_by_field_name("operator")) == "+":
        return (_find_term(model, n.child_by_field_name("left"), text, depth + 1)
                or _find_term(model, n.child_by_field_name("right"), text, depth + 1))
    if n.type == "identifier":
        v = model.resolve(n)
        if v is not None and v.init is not None and not v.is_param and not model.direct_writes(v):
            return _find_term(model, v.init, text, depth + 1)
    return None


def _group_vote(model: "FileModel", f: Function | None, cond: ts.Node) -> bool:
    """Every thread-dependent variable in ``cond`` was last set (before it, in source order) by
    ``v = max(v, sh[k])`` / ``min`` with ``sh`` in shared memory at a thread-independent index: a
    group-wide vote or reduction through shared memory (llama.cpp's flash attention: each subgroup
    stores whether its mask block is all -inf, every thread folds the flags into its own value).
    Whether the result is the same in every thread depends on what the group stored, which the
    analysis cannot tell: silent."""
    if f is None or f.body is None:
        return False
    idents = [v for n in descendants(cond, "identifier") if (v := model.resolve(n)) is not None
              and B.LOCAL in model.var_deps.get(v, frozenset())]
    if not idents:
        return False
    for v in set(idents):
        before = [w for w in model.direct_writes(v)
                  if f.body.start_byte <= w.start_byte < cond.start_byte]
        if not before:
            return False
        last = max(before, key=lambda w: w.start_byte)
        rhs = last.child_by_field_name("right")
        if rhs is None or model.text(last.child_by_field_name("operator")) != "=":
            return False
        rhs = unparen(rhs)
        if rhs.type != "call_expression" or model.callee_name(rhs) not in ("max", "min"):
            return False
        shared_read = False
        for a in model.call_args(rhs):
            a = unparen(a)
            if a.type == "identifier" and model.resolve(a) is v:
                continue
            if a.type == "subscript_expression":
                base = model.base_var(a)
                idx = a.child_by_field_name("index")
                if idx is None:
                    idx = next((c for c in a.named_children if c != a.child_by_field_name("argument")), None)
                if (base is not None and base.address_space in ("threadgroup", "shared") and idx is not None
                        and B.LOCAL not in model.deps(idx)):
                    shared_read = True
                    continue
            return False
        if not shared_read:
            return False
    return True
