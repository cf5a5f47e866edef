"""Divisibility and lower-bound facts about host integers: is ``n`` a multiple of ``d`` where a
launch divides it?

A proof is built from what the file says, and only from that:

- constants (:meth:`~shaderlint.model.expr.ExprAnalysis.const_value`, and locals or file-scope
  ``static`` variables given one constant value and never changed: ``int b = 256;``,
  ``static int gRows = 4096;``);
- arithmetic: ``k * x`` is a multiple of ``d`` when ``x`` is a multiple of ``d / gcd(k, d)`` (so
  ``b * (n / b + 1)`` and ``((n + b - 1) / b) * b`` are multiples of ``b``), sums and differences
  of multiples are multiples, ``x / c`` is a multiple of ``d`` when ``x`` is one of ``c * d``,
  ``x << k`` multiplies by ``2**k`` (``k`` a constant or proven ``>= `` a bound);
- facts that dominate the point of use: ``assert(c)`` and check macros (``TORCH_CHECK(c, ...)``,
  ``CHECK_EQ(a, b)``) in an enclosing block before it, ``if (c) return/throw/exit;`` before it,
  an enclosing ``if (c)`` (or its ``else``). ``n % D == 0`` (also ``!(n % D)``, ``(n & (D - 1))
  == 0`` for a power of two ``D``) proves ``n`` a multiple of every divisor of ``D``; ``k >= c``
  bounds ``k`` from below. Conjunctions are split, a false disjunction gives each operand false;
- the variables a fact or a definition speaks about must keep their value: parameters and locals
  never assigned after their initialization, whose address is not taken, not references, not
  handed to a call that may write them (:meth:`ReachingWrites.may_change`); a local assigned
  several times is a multiple when every value it is given is one;
- a parameter of a host function is a multiple when the function has callers in the file and
  every call passes a multiple (facts at the call site count), the function's name being used
  for nothing else (no function pointer, one definition). A function without a caller in the
  file proves nothing about its parameters.

Every answer leans towards "not proven": the rules that use it report what is not proven.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model.dispatch import calls_to, definitions
from shaderlint.model.expr import descendants, unparen
from shaderlint.model.guards import assigned_values, condition_of

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import Function, Var

_MAX_DEPTH = 8
_MAX_STEPS = 2000  # expressions visited by one proof (callers of callers fan out)
_EXITS = frozenset({"exit", "abort", "_exit", "quick_exit", "terminate", "__builtin_trap", "__builtin_unreachable",
                    "__trap", "AT_ERROR", "TORCH_CHECK_NOT_IMPLEMENTED"})
_NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_FLIP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_CHECK_SUFFIX = {"_EQ": "==", "_NE": "!=", "_LT": "<", "_LE": "<=", "_GT": ">", "_GE": ">="}
_PASS = ("parenthesized_expression", "cast_expression")

Relation = tuple[str, ts.Node, ts.Node]  # (op, left, right): `left op right` holds


def is_multiple(model: "FileModel", expr: ts.Node, divisor: ts.Node, at: tuple[ts.Node, ...]) -> bool:
    """True if ``expr`` is provably a multiple of ``divisor`` wherever the nodes ``at`` (the
    division, the launch) run."""
    d = int_value(model, divisor)
    if d is not None and d <= 0:
        return False
    model._divisibility_steps = _MAX_STEPS
    return _multiple(model, expr, d, None if d is not None else divisor, at, 0, frozenset())


def _op(model: "FileModel", n: ts.Node) -> str:
    op = n.child_by_field_name("operator")
    return model.text(op) if op is not None else ""


# ---- values ----------------------------------------------------------------------------------------


def int_value(model: "FileModel", node: ts.Node, depth: int = 0) -> int | None:
    """The integer value of ``node``: a compile-time constant, or a variable that keeps the one
    constant value it is initialized with (a local, a ``static`` file-scope variable)."""
    v = model.const_value(node)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if v is not None or depth > _MAX_DEPTH:
        return None
    n = strip_casts(node)
    if n.type == "identifier":
        var = model.resolve(n)
        if var is not None and var.init is not None and _unchanged(model, var):
            return int_value(model, var.init, depth + 1)
        return None
    if n.type == "binary_expression":
        op = _op(model, n)
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        a = int_value(model, left, depth + 1) if left is not None else None
        b = int_value(model, right, depth + 1) if a is not None and right is not None else None
        if a is None or b is None:
            return None
        if op == "*":
            return a * b
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "<<" and 0 <= b < 64:
            return a << b
    return None


def strip_casts(n: ts.Node) -> ts.Node:
    """``n`` without the parentheses and casts around it."""
    while n.type in _PASS:
        inner = unparen(n) if n.type == "parenthesized_expression" else n.child_by_field_name("value")
        if inner is None or inner == n:
            break
        n = inner
    return n


def _unchanged(model: "FileModel", var: "Var") -> bool:
    """``var`` keeps its initial value (or, for a parameter, the value passed) for its whole life."""
    if var.template_param or var.function_constant:
        return False
    if var.is_const or var.is_constexpr:
        return not _is_reference(var)
    if var.is_global:
        return _internal_unwritten(model, var)
    if _is_reference(var) or var.dims:
        return False
    if var.is_param:
        if definitions(model, var):
            return False
    else:
        defs = definitions(model, var)
        if len(defs) != 1 or var.init is None or defs[0] is not var.init:
            return False
        if any(c.type == "storage_class_specifier" and model.text(c) == "static" for c in var.decl.children):
            return False  # a `static` local keeps what the previous call left in it... once initialized
    if assigned_values(model, var) is None and not var.is_param:
        return False  # `++`, compound assignment or `&var`
    flow = model.write_flow
    return flow is not None and not flow.may_change(var)


def _is_reference(var: "Var") -> bool:
    from shaderlint.model.memory import is_reference  # noqa: PLC0415 (memory imports the model)
    return is_reference(var)


def _internal_unwritten(model: "FileModel", var: "Var") -> bool:
    """A file-scope variable no other translation unit can write (``static``, or in an anonymous
    namespace) that nothing in this file writes: no assignment, ``++``, ``&``, reference bound to it,
    or call that could take it by reference."""
    cache = model.__dict__.setdefault("_internal_unwritten", {})
    hit = cache.get(id(var))
    if hit is None:
        hit = cache[id(var)] = _internal_unwritten_uncached(model, var)
    return hit


def _internal_unwritten_uncached(model: "FileModel", var: "Var") -> bool:
    if var.init is None or var.dims or model.language != "cuda" or not model.type_of(var.init).is_integer:
        return False
    static = any(c.type == "storage_class_specifier" and model.text(c) == "static" for c in var.decl.children)
    p = var.decl.parent
    anonymous = False
    while p is not None:
        if p.type in ("class_specifier", "struct_specifier", "function_definition"):
            return False  # a static member / local: not handled
        if p.type == "namespace_definition" and p.child_by_field_name("name") is None:
            anonymous = True
        p = p.parent
    if not (static or anonymous):
        return False  # another translation unit may write it
    if any(c.type == "storage_class_specifier" and model.text(c) == "extern" for c in var.decl.children):
        return False
    data = model.source.data
    name = var.name.encode()
    for m in re.finditer(rb"\b" + re.escape(name) + rb"\b", data):
        if m.start() == var.node.start_byte:
            continue
        n = model.root.descendant_for_byte_range(m.start(), m.end())
        if n is None or n.type not in ("identifier", "qualified_identifier"):
            continue  # in a comment or a string
        if model.resolve(n) is not var:
            continue
        if not _plain_read(model, n):
            return False
    return True


def _plain_read(model: "FileModel", ident: ts.Node) -> bool:
    """``ident`` is only read where it appears: not assigned, incremented, address-taken, bound to a
    reference, handed to a call that could take it by reference, or read into (``cin >> x``)."""
    child, p = ident, ident.parent
    while p is not None and p.type == "parenthesized_expression":
        child, p = p, p.parent
    if p is None:
        return True
    t = p.type
    if t == "assignment_expression" and child == p.child_by_field_name("left"):
        return False
    if t in ("update_expression",):
        return False
    if t == "pointer_expression" and model.text(p).lstrip().startswith("&"):
        return False
    if t == "binary_expression" and child == p.child_by_field_name("right") and _op(model, p) == ">>":
        left = p.child_by_field_name("left")
        if left is None or not model.type_of(left).is_integer:
            return False  # `std::cin >> x`
    if t == "init_declarator" and "&" in model.text(p.child_by_field_name("declarator") or p):
        return False
    if t == "argument_list":
        call = p.parent
        if call is None or call.type != "call_expression":
            return True  # a launch's arguments, a constructor: by value or const
        name = model.callee_name(call)
        fns = [f for f in model.functions if f.name == name]
        if not fns:
            return False  # unknown signature: may take it by reference
        args = [c for c in p.named_children if c.type != "comment"]
        if child not in args:
            return False
        idx = args.index(child)
        for f in fns:
            if idx >= len(f.params) or (_is_reference(f.params[idx]) and not f.params[idx].is_const):
                return False
    return True


def _same(model: "FileModel", a: ts.Node, b: ts.Node) -> bool:
    """``a`` and ``b`` have the same value: the same variable that keeps its value, the same
    constant, or the same text over such variables."""
    a, b = strip_casts(a), strip_casts(b)
    va, vb = int_value(model, a), int_value(model, b)
    if va is not None or vb is not None:
        return va is not None and va == vb
    if " ".join(model.text(a).split()) != " ".join(model.text(b).split()):
        return False
    for ident in [a] if a.type == "identifier" else descendants(a, "identifier"):
        var = model.resolve(ident)
        if var is not None and not _unchanged(model, var):
            return False
    return True


# ---- facts -----------------------------------------------------------------------------------------


def facts_at(model: "FileModel", node: ts.Node) -> list[Relation]:
    """Relations that hold whenever ``node`` runs, from the conditions dominating it in its function."""
    cache = model.__dict__.setdefault("_facts_at", {})
    hit = cache.get(node.id)
    if hit is None:
        hit = cache[node.id] = _facts_at(model, node)
    return hit


def _facts_at(model: "FileModel", node: ts.Node) -> list[Relation]:
    out: list[Relation] = []
    f = model.function_at(node.start_byte)
    stop = f.node if f is not None else None
    child, parent = node, node.parent
    while parent is not None and parent != stop:
        t = parent.type
        if t == "lambda_expression":
            break  # runs whenever it is called
        if t == "if_statement":
            cond = condition_of(parent)
            if cond is not None:
                if child == parent.child_by_field_name("consequence"):
                    _relations(model, cond, True, out)
                elif child == parent.child_by_field_name("alternative"):
                    _relations(model, cond, False, out)
        elif t == "compound_statement":
            prev = child.prev_named_sibling
            while prev is not None:
                _statement_facts(model, prev, out)
                prev = prev.prev_named_sibling
        child, parent = parent, parent.parent
    return out


def _statement_facts(model: "FileModel", stmt: ts.Node, out: list[Relation]) -> None:
    if stmt.type == "expression_statement" and stmt.named_child_count == 1:
        call = stmt.named_children[0]
        if call.type == "call_expression":
            _check_facts(model, call, out)
    elif stmt.type == "if_statement" and stmt.child_by_field_name("alternative") is None:
        body = stmt.child_by_field_name("consequence")
        cond = condition_of(stmt)
        if cond is not None and body is not None and _exits(model, body):
            _relations(model, cond, False, out)


def _check_facts(model: "FileModel", call: ts.Node, out: list[Relation]) -> None:
    name = model.callee_name(call)
    up = name.upper()
    if "ASSERT" not in up and "CHECK" not in up:
        return
    args = [a for a in model.call_args(call) if a.type != "comment"]
    if not args:
        return
    for suffix, op in _CHECK_SUFFIX.items():
        if up.endswith(suffix):
            if len(args) >= 2:
                out.append((op, unparen(args[0]), unparen(args[1])))
            return
    _relations(model, args[0], True, out)


def _exits(model: "FileModel", stmt: ts.Node) -> bool:
    """``stmt`` never falls through to the next statement (return, throw, exit(), break, continue)."""
    t = stmt.type
    if t in ("return_statement", "throw_statement", "break_statement", "continue_statement"):
        return True
    if t == "compound_statement":
        return any(_exits(model, c) for c in stmt.named_children if c.type != "comment")
    if t == "expression_statement" and stmt.named_child_count == 1:
        e = stmt.named_children[0]
        if e.type == "throw_expression":
            return True
        if e.type == "call_expression":
            name = model.callee_name(e)
            if name in _EXITS:
                return True
            up = name.upper()
            args = model.call_args(e)
            if ("ASSERT" in up or "CHECK" in up) and args and model.const_value(args[0]) == 0:
                return True  # TORCH_CHECK(false, "...")
    return False


def _relations(model: "FileModel", cond: ts.Node, truth: bool, out: list[Relation], depth: int = 0) -> None:
    """The relations ``cond`` gives when it evaluates to ``truth``."""
    if depth > _MAX_DEPTH:
        return
    c = unparen(cond)
    if c.type == "condition_clause":
        v = c.child_by_field_name("value")
        if v is None:
            return
        c = unparen(v)
    if c.type == "unary_expression" and _op(model, c) == "!":
        arg = c.child_by_field_name("argument")
        if arg is not None:
            _relations(model, arg, not truth, out, depth + 1)
        return
    if c.type == "binary_expression":
        op = _op(model, c)
        left, right = c.child_by_field_name("left"), c.child_by_field_name("right")
        if left is None or right is None:
            return
        if op in ("&&", "and") and truth or op in ("||", "or") and not truth:
            _relations(model, left, truth, out, depth + 1)
            _relations(model, right, truth, out, depth + 1)
            return
        if op in _NEGATE:
            out.append((op if truth else _NEGATE[op], unparen(left), unparen(right)))
            return
    if c.type in ("binary_expression", "identifier", "field_expression", "call_expression"):
        # `if (n % 256) return;`: the value compared with zero (None stands for the zero)
        out.append(("!=" if truth else "==", c, None))  # type: ignore[arg-type]


def _zero(model: "FileModel", n: ts.Node | None) -> bool:
    return n is None or int_value(model, n) == 0


def _divisibility(model: "FileModel", rel: Relation) -> tuple[ts.Node, ts.Node | int] | None:
    """(x, M) when ``rel`` says ``x % M == 0`` (or ``(x & (M - 1)) == 0`` with ``M`` a power of two)."""
    op, left, right = rel
    if op != "==":
        return None
    if _zero(model, right):
        e = left
    elif _zero(model, left):
        e = right
    else:
        return None
    e = strip_casts(e)
    if e.type != "binary_expression":
        return None
    eop = _op(model, e)
    x, m = e.child_by_field_name("left"), e.child_by_field_name("right")
    if x is None or m is None:
        return None
    if eop == "%":
        return unparen(x), unparen(m)
    if eop == "&":
        for a, b in ((x, m), (m, x)):
            mask = int_value(model, b)
            if isinstance(mask, int) and mask > 0 and (mask + 1) & mask == 0:
                return unparen(a), mask + 1
    return None


def _lower_bound_fact(model: "FileModel", rel: Relation, x: ts.Node) -> int | None:
    op, left, right = rel
    if right is None:
        return None
    for a, b, o in ((left, right, op), (right, left, _FLIP.get(op, ""))):
        if _same(model, a, x):
            c = int_value(model, b)
            if c is None:
                continue
            if o in (">=", "=="):
                return c
            if o == ">":
                return c + 1
    return None


def _facts(model: "FileModel", at: tuple[ts.Node, ...]) -> list[Relation]:
    out: list[Relation] = []
    for n in at:
        out.extend(facts_at(model, n))
    return out


# ---- proofs ----------------------------------------------------------------------------------------


def lower_bound(model: "FileModel", expr: ts.Node, at: tuple[ts.Node, ...], depth: int = 0) -> int | None:
    """A proven lower bound of an integer expression where ``at`` runs, or None."""
    if depth > _MAX_DEPTH:
        return None
    v = int_value(model, expr)
    if v is not None:
        return v
    e = strip_casts(expr)
    best = None
    if e.type == "identifier":
        var = model.resolve(e)
        if var is not None and _unchanged(model, var):
            for rel in _facts(model, at):
                b = _lower_bound_fact(model, rel, e)
                if b is not None and (best is None or b > best):
                    best = b
    elif e.type == "binary_expression" and _op(model, e) == "+":
        left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
        a = lower_bound(model, left, at, depth + 1) if left is not None else None
        b = lower_bound(model, right, at, depth + 1) if right is not None and a is not None else None
        if a is not None and b is not None:
            best = a + b
    elif e.type == "call_expression" and model.callee_name(e) in ("max", "std::max") and len(model.call_args(e)) == 2:
        bounds = [lower_bound(model, a, at, depth + 1) for a in model.call_args(e)]
        known = [b for b in bounds if b is not None]
        best = max(known) if known else None
    return best


def _multiple(model: "FileModel", expr: ts.Node, d: int | None, dnode: ts.Node | None,
              at: tuple[ts.Node, ...], depth: int, seen: frozenset[str]) -> bool:
    """``expr`` is a multiple of ``d`` (a positive integer) or, when ``d`` is None, of the value of
    ``dnode``."""
    if d == 1:
        return True
    steps = model.__dict__.get("_divisibility_steps", 0)
    if depth > _MAX_DEPTH or steps <= 0:
        return False
    model._divisibility_steps = steps - 1
    e = strip_casts(expr)
    v = int_value(model, e)
    if v is not None:
        return d is not None and v % d == 0
    if dnode is not None and _same(model, e, dnode):
        return True
    if e.type == "binary_expression":
        op = _op(model, e)
        left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
        if left is None or right is None:
            return False
        if op in ("+", "-"):
            return all(_multiple(model, s, d, dnode, at, depth + 1, seen) for s in (left, right))
        if op == "*":
            if d is not None:
                for k, other in ((left, right), (right, left)):
                    kv = int_value(model, k)
                    if kv is not None:
                        return kv == 0 or _multiple(model, other, d // math.gcd(kv, d), None, at, depth + 1, seen)
            return any(_multiple(model, s, d, dnode, at, depth + 1, seen) for s in (left, right))
        if op == "<<" and d is not None:
            k = lower_bound(model, right, at)
            if k is None or k < 0:
                return False
            return _multiple(model, left, d // math.gcd(d, 1 << min(k, 64)), None, at, depth + 1, seen)
        if op == "/" and d is not None:
            c = int_value(model, right)
            return c is not None and c > 0 and _multiple(model, left, d * c, None, at, depth + 1, seen)
        return False
    if e.type == "identifier":
        return _var_multiple(model, e, d, dnode, at, depth, seen)
    return _fact_multiple(model, e, d, dnode, at)


def _fact_multiple(model: "FileModel", e: ts.Node, d: int | None, dnode: ts.Node | None,
                   at: tuple[ts.Node, ...]) -> bool:
    """A dominating fact ``e % M == 0`` with ``M`` a multiple of the divisor."""
    for rel in _facts(model, at):
        got = _divisibility(model, rel)
        if got is None or not _same(model, got[0], e):
            continue
        m = got[1]
        mv = m if isinstance(m, int) else int_value(model, m)
        if d is not None:
            if mv is not None and mv != 0 and mv % d == 0:
                return True
        elif dnode is not None and not isinstance(m, int) and _same(model, m, dnode):
            return True
    return False


def _var_multiple(model: "FileModel", ident: ts.Node, d: int | None, dnode: ts.Node | None,
                  at: tuple[ts.Node, ...], depth: int, seen: frozenset[str]) -> bool:
    var = model.resolve(ident)
    if var is None:
        return False
    if _unchanged(model, var) and _fact_multiple(model, ident, d, dnode, at):
        return True
    if var.is_global:
        return var.init is not None and _unchanged(model, var) and _multiple(
            model, var.init, d, dnode, at, depth + 1, seen)
    if var.is_param:
        f = var.function
        if f is None or d is None or not _unchanged(model, var) or f.is_device_code:
            return False
        return _callers_pass_multiple(model, f, var, d, depth, seen)
    values = assigned_values(model, var)
    flow = model.write_flow
    if not values or flow is None or flow.may_change(var) or _is_reference(var):
        return False
    key = f"var:{id(var)}"
    if key in seen:
        return False  # `n = n * 2`: not followed
    seen = seen | {key}
    return all(_multiple(model, v, d, dnode, at + (v,), depth + 1, seen) for v in values)


def _callers_pass_multiple(model: "FileModel", f: "Function", param: "Var", d: int, depth: int,
                           seen: frozenset[str]) -> bool:
    """Every call of ``f`` in the file passes a multiple of ``d`` for ``param`` (and there is one)."""
    if f.name in seen or f.kind == "kernel":
        return False
    seen = seen | {f.name}
    if sum(1 for g in model.functions if g.name == f.name) != 1 or param not in f.params:
        return False
    index = f.params.index(param)
    calls = calls_to(model, f.name)
    if not calls or not _only_called(model, f, calls):
        return False
    for call in calls:
        fn = call.child_by_field_name("function")
        if fn is None or fn.type == "field_expression":
            return False
        args = [a for a in model.call_args(call) if a.type != "comment"]
        if len(args) != len(f.params):
            return False
        caller = model.function_at(call.start_byte)
        if caller is f or caller is None:
            return False
        if not _multiple(model, args[index], d, None, (call,), depth + 1, seen):
            return False
    return True


def _only_called(model: "FileModel", f: "Function", calls: list[ts.Node]) -> bool:
    """``f``'s name appears only in its definition, declarations and the calls: no function
    pointer, no ``std::thread(f, ...)``, no callback registration."""
    cache = model.__dict__.setdefault("_only_called", {})
    hit = cache.get(id(f))
    if hit is not None:
        return hit
    callee_ids = set()
    for c in calls:
        fn = c.child_by_field_name("function")
        if fn is not None:
            callee_ids.add(fn.id)
            if fn.type == "template_function":
                nm = fn.child_by_field_name("name")
                if nm is not None:
                    callee_ids.add(nm.id)
    ok = True
    for m in re.finditer(rb"\b" + re.escape(f.name.encode()) + rb"\b", model.source.data):
        n = model.root.descendant_for_byte_range(m.start(), m.end())
        if n is None or n.type != "identifier":
            continue  # a comment, a string, a field name
        if n.id == f.name_node.id or n.id in callee_ids:
            continue
        p = n.parent
        if p is not None and p.type == "function_declarator":
            continue  # a prototype
        ok = False
        break
    cache[id(f)] = ok
    return ok


# ---- launches ------------------------------------------------------------------------------------


def truncating_numerator(model: "FileModel", grid: ts.Node, block: ts.Node) -> ts.Node | None:
    """``n`` when the grid size ``grid`` (followed through variables) is the integer division
    ``n / d`` with ``d`` the block size ``block`` or a constant multiple of it: the launch then runs
    ``(n / d) * block <= n`` threads along that axis, never more than ``n``."""
    from shaderlint.model.dispatch import follow  # noqa: PLC0415

    e = strip_casts(follow(model, grid)[0])
    if e.type != "binary_expression" or _op(model, e) != "/":
        return None
    num, den = e.child_by_field_name("left"), e.child_by_field_name("right")
    if num is None or den is None or model.type_of(num).is_float or model.type_of(den).is_float:
        return None  # (a size from a header we did not read has no type here: integer or not, the
        # quotient is rounded down where it becomes a grid size)
    b = strip_casts(follow(model, block)[0])
    bv, dv = int_value(model, b), int_value(model, den)
    if bv is not None and dv is not None:
        return unparen(num) if bv > 0 and dv > 0 and dv % bv == 0 else None
    d = strip_casts(den)
    if _same(model, d, b) or _same(model, d, block):
        return unparen(num)
    if d.type == "binary_expression" and _op(model, d) == "*":
        left, right = d.child_by_field_name("left"), d.child_by_field_name("right")
        for x, k in ((left, right), (right, left)):
            kv = int_value(model, k) if k is not None else None
            if x is not None and kv is not None and kv > 0 and (_same(model, x, b) or _same(model, x, block)):
                return unparen(num)
    return None
