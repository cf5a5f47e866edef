"""Control and value facts over the kernel model: dominating guards and upper bounds.

- :func:`guard_conditions` lists the conditions that decide whether a node runs
  (enclosing ``if``/loop/``?:``/``&&``/``||`` conditions and earlier early exits
  such as ``if (c) return;``), nearest first.
- :func:`position_guarded` says whether one of them compares a thread-varying
  value (a bounds check on the thread position, a grid-stride loop condition).
- :func:`upper_bound` proves an integer expression below a bound (masks,
  modulo, shifts, 16-bit types, counters of loops with a constant or
  template-parameter bound, single-assignment locals, locals stepped a bounded
  number of times); ``None`` when it cannot tell.
- :func:`local_values` lists every value an expression built from group-local
  thread IDs and constants can take in one group (``threadIdx.x % 32``: 0..31);
  ``None`` when it cannot tell.

All answers lean towards silence: when in doubt a node counts as guarded and a
value as unbounded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model import builtins as B
from shaderlint.model.consteval import c_binary
from shaderlint.model.expr import compared_with, descendants, unparen
from shaderlint.model.preproc import exclusive

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import Var

RELATIONAL = frozenset({"<", "<=", ">", ">=", "==", "!="})
# GLSL's component-wise comparisons: `all(lessThan(p, size))`, `any(greaterThanEqual(p, size))`.
VECTOR_RELATIONAL = frozenset({"lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual", "equal", "notEqual"})
_LOOPS = ("for_statement", "while_statement", "do_statement")
_MAX_DEPTH = 12


def condition_of(stmt: ts.Node) -> ts.Node | None:
    """The condition expression of an if/while/for/do/switch (C++ ``condition_clause`` unwrapped)."""
    c = stmt.child_by_field_name("condition")
    if c is not None and c.type == "condition_clause":
        c = c.child_by_field_name("value") or (c.named_children[-1] if c.named_child_count else None)
    return unparen(c) if c is not None else None


def guard_conditions(model: "FileModel", node: ts.Node) -> list[ts.Node]:
    """Conditions deciding whether ``node`` executes, nearest first: enclosing if/loop/switch/``?:``
    conditions, the left operand of an enclosing ``&&``/``||``, and the conditions of earlier
    statements in enclosing blocks that leave early (``if (c) return;``, ``break``/``continue`` in loops)."""
    out: list[ts.Node] = []
    f = model.function_at(node.start_byte)
    stop = f.node if f is not None else None
    child, parent = node, node.parent
    while parent is not None and parent != stop:
        t = parent.type
        if t in ("if_statement", "switch_statement", "conditional_expression") or t in _LOOPS:
            cond = condition_of(parent)
            raw = parent.child_by_field_name("condition")
            if cond is not None and child != raw and child != parent.child_by_field_name("initializer"):
                out.append(cond)
        elif t == "binary_expression" and child == parent.child_by_field_name("right"):
            op = parent.child_by_field_name("operator")
            left = parent.child_by_field_name("left")
            if op is not None and model.text(op) in ("&&", "||") and left is not None:
                out.append(unparen(left))
        if t in ("compound_statement", "case_statement"):
            in_loop = _in_loop(parent, stop)
            prev = child.prev_named_sibling
            while prev is not None:
                for stmt in _branch_statements(prev):
                    if stmt.type == "if_statement" and _leaves(stmt, in_loop) and (
                            stmt is prev or not exclusive(model, stmt, node)):
                        cond = condition_of(stmt)
                        if cond is not None:
                            out.append(cond)
                prev = prev.prev_named_sibling
        child, parent = parent, parent.parent
    return out


_PREPROC = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else")


def _branch_statements(stmt: ts.Node) -> list[ts.Node]:
    """``stmt`` itself, or for a preprocessor group the statements of every branch (nested groups
    too, latest first): an exit in ``#if !NCNN_shader_local_memory`` guards what follows in that
    build, and the guard facts lean towards silence (a node counts as guarded when any build it
    can be compiled in guards it; not by an exit in a branch exclusive with it, see
    :mod:`shaderlint.model.preproc`)."""
    if stmt.type not in _PREPROC:
        return [stmt]
    out: list[ts.Node] = []
    skip = {x.id for x in (stmt.child_by_field_name("condition"), stmt.child_by_field_name("name")) if x is not None}
    for c in reversed(stmt.named_children):
        if c.id not in skip:
            out.extend(_branch_statements(c))
    return out


def _in_loop(node: ts.Node, stop: ts.Node | None) -> bool:
    n = node
    while n is not None and n != stop:
        if n.type in _LOOPS:
            return True
        n = n.parent
    return False


def _leaves(if_stmt: ts.Node, in_loop: bool) -> bool:
    """True if the ``then`` branch of an if statement returns (or breaks/continues out of our loop)."""
    body = if_stmt.child_by_field_name("consequence")
    if body is None:
        return False
    stack = [body]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "return_statement" or (in_loop and t in ("break_statement", "continue_statement")):
            return True
        if t in _LOOPS or t == "switch_statement":
            # break/continue inside a nested loop or switch stay there; returns still leave
            stack.extend(_returns_only(n))
            continue
        stack.extend(n.named_children)
    return False


def _returns_only(node: ts.Node) -> list[ts.Node]:
    out, stack = [], list(node.named_children)
    while stack:
        n = stack.pop()
        if n.type == "return_statement":
            out.append(n)
        elif n.type not in ("break_statement", "continue_statement"):
            stack.extend(n.named_children)
    return out


def thread_varying(model: "FileModel", node: ts.Node) -> bool:
    return bool(model.deps(node) & {B.LOCAL, B.GROUP})


def is_position_check(model: "FileModel", cond: ts.Node, _seen: set[int] | None = None) -> bool:
    """True if ``cond`` compares a thread-varying value (``gid < n``, ``any(gid >= size)``,
    ``x >= w || y >= h``, GLSL ``all(lessThan(gid, size))``), passes one to a user function
    (``inside(gid, size)``), or reads a local flag computed that way (``bool active = i < n;
    if (active) ...``) or set under such a check (``bool valid = true; if (i >= n) valid = false;
    if (valid) ...``)."""
    seen = _seen if _seen is not None else set()
    stack = [cond]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            if op is not None and model.text(op) in RELATIONAL:
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if any(side is not None and thread_varying(model, side) for side in (left, right)):
                    return True
        elif n.type == "call_expression" and (model.callee_name(n) in model.function_by_name
                                              or model.callee_name(n) in VECTOR_RELATIONAL):
            if any(thread_varying(model, a) for a in model.call_args(n)):
                return True
        elif n.type == "identifier":
            v = model.resolve(n)
            if v is not None and id(v) not in seen and not v.is_param and not v.is_global:
                seen.add(id(v))
                values = assigned_values(model, v) or ()
                if any(is_position_check(model, val, seen) for val in values) or _bounds_flag(model, values, seen):
                    return True
        stack.extend(n.named_children)
    return False


def _bounds_flag(model: "FileModel", values: "list[ts.Node] | tuple[()]", seen: set[int]) -> bool:
    """A local flag given only constants (``bool valid = true; if (i >= n) valid = false;``), at
    least one of them under a check of a thread-varying value: reading it reads that check."""
    if not values or any(not isinstance(model.const_value(v), (int, bool)) for v in values):
        return False
    return any(is_position_check(model, c, seen) for v in values if v.parent is not None
               and v.parent.type == "assignment_expression" for c in guard_conditions(model, v.parent))


def position_guarded(model: "FileModel", node: ts.Node) -> bool:
    """True if some condition deciding whether ``node`` runs is a check on a thread-varying value."""
    return any(is_position_check(model, c) for c in guard_conditions(model, node))


# ---- upper bounds -------------------------------------------------------------------------------


def upper_bound(model: "FileModel", node: ts.Node, depth: int = 0) -> int | None:
    """An upper bound of a non-negative integer expression's value, or None if none can be proven.

    Understands constants, ``& C``, ``% C``, ``>> k``, ``min``/``clamp``, ``+``/``*``/``/`` of bounded
    operands, unsigned 8/16-bit types, Metal threadgroup-local thread IDs (at most 1024), counters
    of loops with constant bounds (inside the loop) and locals whose every assignment is bounded."""
    if depth > _MAX_DEPTH:
        return None
    node = unparen(node)
    t = model.type_of(node)
    v = model.const_value(node)
    if isinstance(v, int) and not isinstance(v, bool):
        return v if v >= 0 else None
    small = (1 << t.bits) - 1 if t.kind == "uint" and t.bits <= 16 else None
    kind = node.type
    result: int | None = None
    if kind == "binary_expression":
        result = _binary_bound(model, node, depth)
    elif kind in ("identifier",):
        var = model.resolve(node)
        if var is not None:
            result = _var_bound(model, var, node, depth)
    elif kind == "field_expression":  # `tid.x` of a threadgroup-local ID vector
        arg = node.child_by_field_name("argument")
        var = model.resolve(arg) if arg is not None and arg.type == "identifier" else None
        if var is not None and var.is_param and var.role in B.METAL_LOCAL_ROLES:
            result = _MAX_GROUP_THREADS
    elif kind == "call_expression":
        name = model.callee_name(node)
        args = model.call_args(node)
        if name == "min" and len(args) == 2:
            bounds = [upper_bound(model, a, depth + 1) for a in args]
            known = [b for b in bounds if b is not None]
            result = min(known) if known else None
        elif name == "clamp" and len(args) == 3:
            result = upper_bound(model, args[2], depth + 1)
        elif len(args) == 1 and t.is_integer and model.type_of(args[0]).kind == "uint":
            result = upper_bound(model, args[0], depth + 1)  # uint(x), int(x) of an unsigned x
    elif kind == "cast_expression":
        val = node.child_by_field_name("value")
        if val is not None and model.type_of(val).kind == "uint":
            result = upper_bound(model, val, depth + 1)
    elif kind == "conditional_expression":
        a, b = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
        if a is not None and b is not None:
            ua, ub = upper_bound(model, a, depth + 1), upper_bound(model, b, depth + 1)
            result = max(ua, ub) if ua is not None and ub is not None else None
    if small is not None:
        result = small if result is None else min(result, small)
    return result


def _binary_bound(model: "FileModel", node: ts.Node, depth: int) -> int | None:
    op_node = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op_node is None or left is None or right is None:
        return None
    op = model.text(op_node)
    bits = model.type_of(node).bits or 32
    if op == "&":
        bounds = [b for b in (upper_bound(model, left, depth + 1), upper_bound(model, right, depth + 1)) if b is not None]
        return min(bounds) if bounds else None
    if op == "%":
        r = upper_bound(model, right, depth + 1)
        l_ = upper_bound(model, left, depth + 1)
        cands = [x for x in ((r - 1) if r else None, l_) if x is not None]
        return min(cands) if cands else None
    if op == ">>":
        k = model.const_value(right)
        if not isinstance(k, int) or k < 0:
            return None
        lb = upper_bound(model, left, depth + 1)
        base = lb if lb is not None else (1 << bits) - 1 if model.type_of(left).kind == "uint" else None
        return base >> k if base is not None else None
    if op in ("+", "*", "/", "|", "^"):
        a, b = upper_bound(model, left, depth + 1), upper_bound(model, right, depth + 1)
        if op == "/":
            d = model.const_value(right)
            return a // d if a is not None and isinstance(d, int) and d > 0 else a
        if a is None or b is None:
            return None
        if op == "+":
            return a + b
        if op == "*":
            return a * b
        return (1 << max(a, b).bit_length()) - 1
    return None


# No GPU runs more threads per group (Metal, CUDA, Vulkan): a bound of every threadgroup-local
# thread ID and count (`thread_position_in_threadgroup`, `threads_per_threadgroup`, ...).
_MAX_GROUP_THREADS = 1024


def _var_bound(model: "FileModel", var: "Var", use: ts.Node, depth: int) -> int | None:
    f = var.function
    if var.is_param and var.role in B.METAL_LOCAL_ROLES:
        return _MAX_GROUP_THREADS
    if var.template_param and f is not None:
        return _instance_bound(model, f, var.node)
    if f is None or var.is_param or var.is_global:
        return None
    for loop in f.loops:
        if loop.var is var and loop.node.start_byte <= use.start_byte < loop.node.end_byte:
            body = loop.node.child_by_field_name("body")
            inside = body is not None and body.start_byte <= use.start_byte < body.end_byte
            if inside and not loop.counter_modified and loop.step and loop.step > 0 \
                    and isinstance(loop.start, int) and loop.start >= 0:
                if isinstance(loop.bound, int):
                    return loop.bound
                if loop.constant_trip:
                    return _constant_loop_bound(model, f, loop)
    values = assigned_values(model, var)
    if values is None and var.init is not None:
        return _stepped_bound(model, var, depth)
    if not values:
        return None
    bounds = [upper_bound(model, v, depth + 1) for v in values]
    return max(bounds) if all(b is not None for b in bounds) else None  # type: ignore[type-var]


#: The bound of a loop counter compared with a compile-time constant whose value the file does not
#: give (a template parameter no instantiation names, a function constant): below 2^31, as no
#: buffer a kernel indexes has that many elements, but nothing computed from it is.
CONSTANT_BOUND = (1 << 31) - 1


def _constant_loop_bound(model: "FileModel", f, loop) -> int:
    """The largest value the counter of a loop with a compile-time constant bound takes in its body:
    ``for (uint k = 0; k < N; ++k)`` in ``template <uint N>`` is below the largest ``N`` of the
    file's instantiations (``templ<8>``), or below :data:`CONSTANT_BOUND` when they are not all
    known."""
    cond = loop.node.child_by_field_name("condition")
    bound = compared_with(model, cond, loop.var) if cond is not None else None
    return _instance_bound(model, f, bound) if bound is not None else CONSTANT_BOUND


def _instance_bound(model: "FileModel", f, node: ts.Node) -> int:
    """The largest value of the compile-time constant ``node`` over the template instances of ``f``
    the file names (explicit instantiations, launches), :data:`CONSTANT_BOUND` when one is unknown."""
    if not f.template_params:
        return CONSTANT_BOUND
    from shaderlint.estimate.registers import _bind, template_instances  # noqa: PLC0415 (estimate imports the model)
    from shaderlint.estimate.static import evaluate  # noqa: PLC0415
    cache = model.__dict__.setdefault("_template_envs", {})
    envs = cache.get(id(f))
    if envs is None:
        envs = cache[id(f)] = [_bind(model, f, inst)[0] for inst in template_instances(model, f)]
    values = []
    for env in envs:
        v = evaluate(model, node, env)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return CONSTANT_BOUND
        values.append(v)
    return min(max(values), CONSTANT_BOUND) if values else CONSTANT_BOUND


def _stepped_bound(model: "FileModel", var: "Var", depth: int) -> int | None:
    """A local changed by constant-trip steps: ``uint acc = tid; for (j = 0; j < 4; j++) { ...;
    acc += 256u; }``. Its value stays below the bound of its start (and of any plain assignment)
    plus each ``+=`` step's bound (1 for ``++``) times the number of times the step can run: the
    product of the trip counts of the loops around it whose body does not hold the declaration. A
    step in a loop of unknown trip count, any other compound assignment (``-=`` wraps an unsigned
    value), or the address taken: no bound."""
    f = var.function
    if f is None or f.body is None or var in _address_taken(model) or _aliased(model, f, var):
        return None
    base = upper_bound(model, var.init, depth + 1)
    if base is None:
        return None
    total = 0
    for w in model.direct_writes(var):
        if w.type == "update_expression":
            if "++" not in model.text(w):
                return None
            step = 1
        else:
            op = w.child_by_field_name("operator")
            right = w.child_by_field_name("right")
            if op is None or right is None:
                return None
            if any(model.text(n) == var.name and model.resolve(n) is var for n in descendants(right, "identifier")):
                return None  # `acc += acc`: grows with itself
            step = upper_bound(model, right, depth + 1)
            if step is None:
                return None
            if model.text(op) == "=":
                base = max(base, step)
                continue
            if model.text(op) != "+=":
                return None
        p = w.parent
        while p is not None and p.id != f.body.id:
            if p.type == "lambda_expression":
                return None  # the lambda may be called any number of times
            p = p.parent
        runs = 1
        for loop in f.loops:
            ln, body = loop.node, loop.node.child_by_field_name("body")
            declared_in_body = body is not None and body.start_byte <= var.node.start_byte < body.end_byte
            if ln.start_byte <= w.start_byte < ln.end_byte and not declared_in_body:
                if loop.trip_count is None:
                    return None
                runs *= loop.trip_count
        total += runs * step
    return base + total


def assigned_values(model: "FileModel", var: "Var") -> list[ts.Node] | None:
    """Every value stored to a local variable (initializer and plain ``=``), or None when it is also
    changed in another way (compound assignment, ``++``, through its address) or never initialized."""
    cache = getattr(model, "_assigned_values", None)
    if cache is None:
        cache = _collect_assignments(model)
        model._assigned_values = cache
    entry = cache.get(id(var), [])
    if entry is None:
        return None
    values = ([var.init] if var.init is not None else []) + entry
    if var.init is None and not entry:
        return None
    return values


def _collect_assignments(model: "FileModel") -> dict[int, list[ts.Node] | None]:
    out: dict[int, list[ts.Node] | None] = {}
    for a in model.nodes("assign"):
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        if left is None or right is None or unparen(left).type != "identifier":
            continue
        v = model.resolve(unparen(left))
        if v is None:
            continue
        op = a.child_by_field_name("operator")
        if op is not None and model.text(op) == "=" and out.get(id(v), []) is not None:
            out.setdefault(id(v), []).append(right)  # type: ignore[union-attr]
        else:
            out[id(v)] = None
    for u in model.nodes("update"):
        arg = u.child_by_field_name("argument")
        if arg is not None and unparen(arg).type == "identifier":
            v = model.resolve(unparen(arg))
            if v is not None:
                out[id(v)] = None
    for p in _address_taken(model):
        out[id(p)] = None
    return out


def _aliased(model: "FileModel", f, var: "Var") -> bool:
    """``var`` is named as a call argument (it may be passed by reference) or binds a reference
    (``thread uint& r = acc;``): it may change through another name."""
    for n in descendants(f.body, "identifier"):
        if model.text(n) != var.name or model.resolve(n) is not var:
            continue
        p = n.parent
        while p is not None and p.type == "parenthesized_expression":
            p = p.parent
        if p is None:
            continue
        if p.type == "argument_list":
            return True
        if p.type == "init_declarator":
            d = p.child_by_field_name("declarator")
            if d is not None and d.type == "reference_declarator":
                return True
    return False


_ADDRESS_QUERY: dict[str, ts.Query] = {}


def _address_taken(model: "FileModel") -> list["Var"]:
    """Variables whose address is taken (``&x``): they may change behind our back."""
    query = _ADDRESS_QUERY.get(model.language)
    if query is None:
        from shaderlint.languages import FRONT_ENDS
        query = ts.Query(FRONT_ENDS[model.language].language(),
                         '(pointer_expression operator: "&" argument: (identifier) @id)')
        _ADDRESS_QUERY[model.language] = query
    out = []
    from shaderlint.model.build import captures
    for ident in captures(query, model.root).get("id", []):
        v = model.resolve(ident)
        if v is not None:
            out.append(v)
    return out


# ---- values a thread-dependent expression can take ----------------------------------------------

_MAX_VALUES = 4096
#: Group-local thread IDs and indices, each below the 1024 threads a group can hold.
_LOCAL_ID_NAMES = frozenset({"threadIdx", "gl_LocalInvocationID", "gl_LocalInvocationIndex", "gl_SubgroupInvocationID",
                             "gl_SubgroupID"})
_METAL_ID_ROLES = frozenset({"thread_position_in_threadgroup", "thread_index_in_threadgroup",
                             "thread_index_in_simdgroup", "simdgroup_index_in_threadgroup",
                             "thread_index_in_quadgroup", "quadgroup_index_in_threadgroup"})
_VALUE_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "%": "%", "&": "&", "|": "|", "^": "^", "<<": "<<", ">>": ">>"}


def local_values(model: "FileModel", node: ts.Node, depth: int = 0) -> frozenset[int] | None:
    """Every value an integer expression built from group-local thread IDs and constants can take
    in the threads of one group (a superset): ``threadIdx.x % 32`` is 0..31, ``(tid & 31) * 4`` is
    0, 4, ..., 124. A thread ID counts as any value below 1024 (no group holds more threads); a local
    variable as any value it is ever assigned (when nothing else changes it). None when a part is
    not known, the set would hold more than 4096 values, or an unsigned value could wrap."""
    if depth > _MAX_DEPTH:
        return None
    node = unparen(node)
    cache = model.__dict__.setdefault("_local_values", {})
    if node.id in cache:
        return cache[node.id]
    cache[node.id] = None  # (a cycle through a variable's assignments: unknown)
    out = cache[node.id] = _local_values(model, node, depth)
    return out


def _local_values(model: "FileModel", node: ts.Node, depth: int) -> frozenset[int] | None:
    v = model.const_value(node)
    if isinstance(v, int) and not isinstance(v, bool):
        return frozenset({v})
    if v is not None:
        return None
    kind = node.type
    out: frozenset[int] | None = None
    if kind == "field_expression":
        arg = unparen(node.child_by_field_name("argument"))
        if arg is not None and arg.type == "identifier" and _local_id(model, arg):
            out = frozenset(range(_MAX_GROUP_THREADS))
    elif kind == "identifier":
        if _local_id(model, node):
            out = frozenset(range(_MAX_GROUP_THREADS))
        else:
            var = model.resolve(node)
            if var is None or var.is_param or var.is_global or var.dims or var.address_space is not None:
                return None
            values = assigned_values(model, var)
            if not values:
                return None
            acc: set[int] = set()
            for val in values:
                s = local_values(model, val, depth + 1)
                if s is None:
                    return None
                acc |= s
                if len(acc) > _MAX_VALUES:
                    return None
            out = frozenset(acc)
    elif kind == "cast_expression":
        val = node.child_by_field_name("value")
        out = local_values(model, val, depth + 1) if val is not None else None
    elif kind == "binary_expression":
        op = model.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op not in _VALUE_OPS or left is None or right is None:
            return None
        a = local_values(model, left, depth + 1)
        b = local_values(model, right, depth + 1) if a is not None else None
        if a is None or b is None or len(a) * len(b) > 1 << 16:
            return None
        acc = set()
        for x in a:
            for y in b:
                try:
                    acc.add(c_binary(_VALUE_OPS[op], x, y))
                except (ArithmeticError, ValueError):
                    return None
        out = frozenset(acc)
    if out is None or len(out) > _MAX_VALUES or any(not -(1 << 31) <= x < 1 << 31 for x in out):
        return None
    if any(x < 0 for x in out) and model.type_of(node).kind == "uint":
        return None  # an unsigned value wraps
    return out


def _local_id(model: "FileModel", ident: ts.Node) -> bool:
    """``ident`` names a group-local thread ID or index (a built-in, a Metal parameter with such a role)."""
    var = model.resolve(ident)
    if var is None:
        return model.text(ident) in _LOCAL_ID_NAMES and model._builtin(model.text(ident)) is not None
    return var.is_param and var.role in _METAL_ID_ROLES
