"""What a compiler can resolve statically: constant evaluation under bindings, and
the thread-private array notions shared by SL101 and the register estimator.

Two callers need the same answers:

* SL101 asks whether an index into a thread-private array is *static* once the
  compiler unrolls constant-trip loops (:func:`static_index`, no bindings);
* the register estimator (:mod:`shaderlint.estimate.registers`) walks a kernel
  with template arguments and unrolled loop counters bound to values, and asks
  for the value of an expression under those bindings (:func:`evaluate`).

Nothing here reads hardware figures; rules may import it (no rule is imported).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import repeat

import tree_sitter as ts

from shaderlint.model.consteval import c_binary, parse_number
from shaderlint.model.expr import compared_with, descendants, subscript_index, unparen
from shaderlint.model.preproc import macro_names
from shaderlint.model.types import parse_type_name

#: Bindings: ``id(Var)`` -> value (template parameters, unrolled loop counters); a name
#: (str) key binds identifiers that do not resolve to a declaration.
Env = Mapping[int, "int | float"]

_PASS_THROUGH = ("parenthesized_expression", "binary_expression", "unary_expression", "cast_expression",
                 "conditional_expression")
_PRIVATE_EXCLUDED = frozenset({"static", "shared", "__shared__", "__constant__", "uniform", "buffer"})
_COMPARE = ("<", ">", "<=", ">=", "==", "!=", "&&", "||")


# ---- arrays ---------------------------------------------------------------------------------------
def is_thread_private(v) -> bool:
    """A variable in per-thread storage (registers or stack), not shared/constant/device memory."""
    if v.address_space not in (None, "thread"):
        return False
    if v.is_global and (v.is_const or v.is_constexpr):
        return False  # a module-scope table of constants (GLSL `const uint FONT[96]`): constant data
    return not (_PRIVATE_EXCLUDED & v.qualifiers)


def is_constant_array(model, v) -> bool:
    """A ``const``/``constexpr`` array whose initializer only uses constants (a table the
    compiler can place in constant memory or fold)."""
    if not (v.is_const or v.is_constexpr) or v.init is None:
        return False
    return _constant_initializer(model, v.init)


def is_constant_table(model, v) -> bool:
    """A local array, ``const`` or not, initialized from constants only and never written after
    its initializer (``float w[8] = {0.1f, 0.2f, ...};`` read at ``w[k]``): nothing is stored into
    it, it is not passed to a call nor bound to a pointer or reference (it could be written through
    those). Compilers that promote such a table to constant data (LLVM replaces a stack copy of a
    constant that is never written by the constant itself) never give it stack memory."""
    f = v.function
    if f is None or f.body is None or v.is_param or not v.dims or v.init is None:
        return False
    if not _literal_initializer(model, v.init) or model.writes_into(v):
        return False
    return not _address_taken(model, f, v)


_LITERAL_PARTS = frozenset({"initializer_list", "parenthesized_expression", "unary_expression", "binary_expression",
                            "conditional_expression", "cast_expression", "argument_list"})


def _literal_initializer(model, init: ts.Node) -> bool:
    """``init`` is built from constants only: literals and names the model knows to be constant,
    joined by operators, casts, braces and type constructors (GLSL ``float[8](0.1, ...)``). A call
    of anything but a type, or a name the model does not know (a built-in, a global), is not."""
    stack = [init]
    while stack:
        n = stack.pop()
        if n.type in ("comment", "type_descriptor") or model.is_constant(n):
            continue
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is None or not _type_constructor(model, fn):
                return False
            stack.extend(model.call_args(n))
            continue
        if n.type not in _LITERAL_PARTS:
            return False
        stack.extend(n.named_children)
    return True


def _type_constructor(model, fn: ts.Node) -> bool:
    """``float``, ``vec4``, ``half2``, ``float[8]`` as the callee of a constructor call."""
    text = model.text(fn).replace(" ", "")
    base = text.split("[", 1)[0]
    return parse_type_name(base).is_arithmetic and (base == text or text.endswith("]"))


def _constant_initializer(model, init: ts.Node) -> bool:
    """Every name in ``init`` is a compile-time constant (or a type or function name)."""
    stack = [init]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "qualified_identifier"):
            if not model.is_constant(n) and model.resolve(n) is not None:
                return False
            continue
        if n.type in ("call_expression",):
            stack.extend(model.call_args(n))
            continue
        stack.extend(n.named_children)
    return True


def reassigned(model, v) -> bool:
    """True when ``v`` is the target of an assignment or ``++``/``--`` anywhere in the file."""
    return bool(model.direct_writes(v))


def static_index(model, f, node: ts.Node, depth: int = 0) -> bool:
    """True if an index is constant once the compiler unrolls constant-trip loops
    (literals, constants, counters of constant-trip loops not marked ``unroll 1``,
    single-assignment locals with static initializers, arithmetic of those)."""
    if depth > 8:
        return False
    node = unparen(node)
    if model.is_constant(node) or _unknown_constant(model, node):
        return True
    t = node.type
    if t == "subscript_expression":
        return _lookup_table_entry(model, f, node, depth)
    if t == "identifier":
        v = model.resolve(node)
        if v is None:
            return False
        for loop in f.loops:
            if loop.var is v and loop.unroll != 1 and loop.node.start_byte <= node.start_byte < loop.node.end_byte \
                    and _constant_trip(model, f, loop, depth):
                return True
        if v.function is f and not v.is_param and v.init is not None:
            if not reassigned(model, v):
                return static_index(model, f, v.init, depth + 1)
            return _stepped_in_unrolled_header(model, f, v, depth) or _toggled_in_unrolled_loops(model, f, v, depth)
        return False
    if t in _PASS_THROUGH:
        kids = [c for c in node.named_children if c.type not in ("type_descriptor", "comment")]
        return bool(kids) and all(static_index(model, f, c, depth + 1) for c in kids)
    if t == "call_expression":
        args = model.call_args(node)
        name = model.callee_name(node)
        if parse_type_name(name).is_arithmetic or name in ("min", "max", "clamp", "abs") \
                or _arithmetic_macro(model, node, name):
            return bool(args) and all(static_index(model, f, a, depth + 1) for a in args)
    return False


_WORDS = re.compile(r"[A-Za-z_]\w*")


def _arithmetic_macro(model, call: ts.Node, name: str) -> bool:
    """``call`` invokes a function-like macro whose value is computed from its arguments alone:
    the file's ``#define MIN(a, b) ((a) < (b) ? (a) : (b))`` (every name in its body is a
    parameter), or an upper-case name the file neither defines nor declares (``CEIL_DIV(n, 4)``
    from a header: unknown, taken for such a macro as ``_unknown_constant`` takes ``TILE``). With
    static arguments, its expansion is static (vLLM's hadacore: ``MIN(4, log_had_size)``)."""
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "identifier" or model.resolve(fn) is not None or name in model.function_by_name:
        return False
    defs = model.__dict__.get("_function_macros")
    if defs is None:
        defs = model._function_macros = {}
        for d in descendants(model.root, "preproc_function_def"):
            nm, params = d.child_by_field_name("name"), d.child_by_field_name("parameters")
            if nm is not None and params is not None:
                names = {model.text(c) for c in params.named_children if c.type == "identifier"}
                body = model.macro_body(d) or ""
                defs.setdefault(model.text(nm), []).append(set(_WORDS.findall(body)) <= names)
    if name in defs:
        return all(defs[name])
    return name not in macro_names(model) and name.isupper() and any(c.isalpha() for c in name)


_STRAIGHT_LINE = ("expression_statement", "compound_statement", "comma_expression", "parenthesized_expression")


def _stepped_in_unrolled_header(model, f, v, depth: int) -> bool:
    """``v`` is a second variable of a constant-trip loop's header, started at a static value and
    changed only by static steps that run in every iteration (the update, or straight-line
    statements of the body): ``for (i = 0, rem = N - l * 8; i < 2 && rem > 0; i++) { ...; rem -= 4;
    }``. Each unrolled copy of the loop gives it a constant, as for the counter (vLLM's hadacore
    ``had_frag[had_off + 0]``, with ``had_off`` computed from ``rem``: ptxas gives it no stack)."""
    if depth > 6:
        return False
    for loop in f.loops:
        node = loop.node
        init = node.child_by_field_name("initializer")
        if node.type != "for_statement" or init is None or not (init.start_byte <= v.node.start_byte < init.end_byte):
            continue
        if loop.unroll == 1 or loop.var is None or loop.var is v or not _constant_trip(model, f, loop, depth + 1):
            return False
        if not static_index(model, f, v.init, depth + 1):
            return False
        for w in model.direct_writes(v):
            if not (node.start_byte <= w.start_byte < node.end_byte):
                return False
            if w.type == "assignment_expression":
                op = w.child_by_field_name("operator")
                right = w.child_by_field_name("right")
                if op is None or model.text(op) == "=" or right is None or not static_index(model, f, right, depth + 1):
                    return False
            elif w.type != "update_expression":
                return False
            p = w.parent
            while p is not None and p.id != node.id:
                if p.type not in _STRAIGHT_LINE:
                    return False  # under a condition or in an inner loop: not the same step in every copy
                p = p.parent
        return True
    return False


_LOOP_TYPES = ("for_statement", "while_statement", "do_statement", "for_range_loop")


def _toggled_in_unrolled_loops(model, f, v, depth: int) -> bool:
    """``v`` starts at a static value and every write of it is a static step or value
    (``buf ^= 1``, ``k += 2``, ``k = 0``) inside constant-trip loops the compiler unrolls, under
    static conditions only, between the write and the block that declares ``v``: once they are
    unrolled the writes are straight-line code, so ``v`` has a constant value everywhere (llama.cpp's mmf.cuh double buffer ``vals_buf[curr_buf]``, toggled
    by ``if (itB + 1 < ntB) curr_buf ^= 1;`` in a ``#pragma unroll`` loop over a constexpr count:
    0 bytes of stack frame, nvcc 13 sm_90). Its address taken, or a write in a lambda, a run-time
    loop or under a run-time condition: not static."""
    if depth > 6 or not static_index(model, f, v.init, depth + 1):
        return False
    writes = model.direct_writes(v)
    if not writes or v.node is None:
        return False
    loops = {lp.node.id: lp for lp in f.loops}
    for w in writes:
        if not (f.body.start_byte <= w.start_byte < f.body.end_byte):
            return False
        if w.type == "assignment_expression":
            right = w.child_by_field_name("right")
            if right is None or not static_index(model, f, right, depth + 1):
                return False
        elif w.type != "update_expression":
            return False
        inside = False
        p, child = w.parent, w
        # up to the block that declares ``v`` (a run-time loop around it starts it afresh each time)
        while p is not None and p.id != f.body.id and not (p.start_byte <= v.node.start_byte < p.end_byte):
            if p.type in _LOOP_TYPES:
                lp = loops.get(p.id)
                if lp is None or lp.unroll == 1 or not _constant_trip(model, f, lp, depth + 1):
                    return False
                inside = True
            elif p.type == "if_statement":
                cond = p.child_by_field_name("condition")
                if cond is not None and cond.type == "condition_clause":
                    kids = [c for c in cond.named_children if c.type != "comment"]
                    cond = kids[0] if len(kids) == 1 else None
                    if cond is None:
                        return False  # `if (int k = ...; k)`
                if cond is not None and cond.id != child.id and not static_index(model, f, cond, depth + 1):
                    return False
            elif p.type not in _STRAIGHT_LINE + ("condition_clause",):
                return False  # a lambda, a switch, `a && (v ^= 1)`, a ternary: not every copy the same
            child, p = p, p.parent
        if not inside:
            return False  # a write outside loops after a use would make two values; keep it simple
    name = v.name.encode() if isinstance(v.name, str) else b""
    text = model.source.data[f.body.start_byte:f.body.end_byte]
    if name and re.search(rb"&\s*" + re.escape(name) + rb"\b", text):
        return False  # its address taken: written where the model does not look
    return True


def _constant_trip(model, f, loop, depth: int) -> bool:
    """The compiler knows ``loop``'s trip count once the enclosing constant-trip loops are unrolled."""
    return loop.trip_count is not None or loop.constant_trip or _static_header(model, f, loop, depth)


def _unknown_constant(model, node: ts.Node) -> bool:
    """A name the file does not declare that reads as a compile-time constant: a member of a type
    (``F::KR``, ``Traits::kBits``), a variable template (``kElemsPerAccess<T>``), or an upper-case
    or ``kName`` identifier (a header's macro or constexpr). Its constness is unknown, not refuted:
    SL101 stays silent on it (vLLM: ``for (u = 0; u < F::KR / 8; ++u) kw[u]`` under ``#pragma
    unroll``). Lower-case names that do not resolve stay dynamic."""
    t = node.type
    if t == "template_function":
        name = node.child_by_field_name("name")
        if name is None or name.type not in ("identifier", "qualified_identifier") or model.text(name) in (
                "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"):
            return False
        v = model.resolve(name)
        return v is None or (v.is_constexpr and not v.is_param)
    if t not in ("identifier", "qualified_identifier") or model.resolve(node) is not None:
        return False
    text = model.text(node)
    if t == "identifier" and text in macro_names(model):
        return False  # the file's own #define: is_constant read its body (`#define N (p.loads + 1)` is not)
    if model._builtin(text.split("::")[-1]) is not None:
        return False  # threadIdx, gl_LocalInvocationIndex, ...: is_constant answered already
    if t == "qualified_identifier":
        return True
    return (text.isupper() and any(c.isalpha() for c in text)) or (
        len(text) > 1 and text[0] == "k" and text[1].isupper())


def _lookup_table_entry(model, f, node: ts.Node, depth: int) -> bool:
    """``pack_idx[i]`` with a static index into a thread-private table initialized from constants
    and never written (``int pack_idx[8] = {0, 2, 4, 6, 1, 3, 5, 7};``): once the loop unrolls the
    compiler folds each entry (vLLM gptq_marlin_repack.cu indexes ``vals[pack_idx[i]]``)."""
    arg = node.child_by_field_name("argument")
    idx = subscript_index(node)
    if arg is None or idx is None or unparen(arg).type != "identifier":
        return False
    v = model.resolve(unparen(arg))
    if v is None or v.function is not f or v.is_param or not v.dims or len(v.dims) != 1 or v.init is None:
        return False
    if v.init.type != "initializer_list" or not is_thread_private(v) or model.writes_into(v):
        return False
    if any(not model.is_constant(c) for c in v.init.named_children if c.type != "comment"):
        return False
    if _address_taken(model, f, v):
        return False
    return static_index(model, f, idx, depth + 1)


def _address_taken(model, f, v) -> bool:
    """``v`` (an array) named anywhere in ``f`` other than as the base of a subscript: passed to a
    call, bound to a pointer, ... (it may be written through that)."""
    for n in descendants(f.body, "identifier"):
        if n.id == v.node.id or model.text(n) != v.name or model.resolve(n) is not v:
            continue
        p = n.parent
        if p is None or p.type != "subscript_expression" or p.child_by_field_name("argument") != n:
            return True
    return False


def _static_header(model, f, loop, depth: int) -> bool:
    """A ``for`` loop whose start, bound and step are static once the enclosing constant-trip loops
    are unrolled (``for (i = 32; i < N; i *= 2) { const int step = i / 32; for (k = 0; k < step; k++)
    ... }``): each unrolled copy of the outer loop gives the inner one a constant trip count, and
    the compiler unrolls it in turn."""
    node = loop.node
    v = loop.var
    if node.type != "for_statement" or v is None or loop.counter_modified or depth > 6:
        return False
    init, cond, update = (node.child_by_field_name(k) for k in ("initializer", "condition", "update"))
    if init is not None and init.type == "declaration":
        start = v.init
    elif init is not None and init.type == "assignment_expression":
        start = init.child_by_field_name("right")
    else:
        return False
    if start is None or cond is None or update is None or not static_index(model, f, start, depth + 1):
        return False
    if not any(_static_bound(model, f, v, c, depth) for c in _conjuncts(cond)):
        return False
    if update.type == "update_expression":
        return True
    if update.type == "assignment_expression":
        step = update.child_by_field_name("right")
        return step is not None and static_index(model, f, step, depth + 1)
    return False


def _conjuncts(cond: ts.Node) -> list[ts.Node]:
    """``a && b && c`` -> [a, b, c]; any other condition -> [cond]."""
    c = unparen(cond)
    if c.type == "binary_expression" and c.child_by_field_name("operator") is not None \
            and c.child_by_field_name("operator").type == "&&":
        return _conjuncts(c.child_by_field_name("left")) + _conjuncts(c.child_by_field_name("right"))
    return [c]


def _static_bound(model, f, v, c: ts.Node, depth: int) -> bool:
    """``c`` compares the counter ``v`` with a static bound. As one conjunct of the loop condition
    (``row < NR0 && first_row + row < ne01``) it still bounds the trip count by a constant: the
    compiler unrolls the loop completely, with an exit test in each copy, and the counter is a
    constant in every copy (llama.cpp's mat-vec kernels index their per-row sums this way)."""
    bound = compared_with(model, c, v)
    if bound is None:
        return False
    return static_index(model, f, bound, depth + 1)


# ---- evaluation under bindings ----------------------------------------------------------------------
def evaluate(model, node: ts.Node | None, env: Env | None = None, depth: int = 0) -> int | float | None:
    """Value of ``node`` when the variables in ``env`` have the given values; None if unknown.

    Falls back to :meth:`FileModel.const_value` and follows single-assignment
    locals to their initializers (as the compiler's constant propagation does).
    """
    if node is None or depth > 24:
        return None
    if depth == 0:
        return _evaluate_memo(model, node, env)
    env = env or {}
    return _evaluate(model, node, env, depth)


_MISSING = object()


def _evaluate_memo(model, node: ts.Node, env: Env | None):
    """:func:`evaluate` at the top level, memoized per model on the node and the values ``env``
    gives the identifiers the node can reach (:func:`_dependencies`): the register walk evaluates
    the same indices and conditions once per unrolled iteration."""
    try:
        memo = model._evaluate_memo
    except AttributeError:
        memo = model._evaluate_memo = {}
    entry = memo.get(node.id)
    if entry is None:
        entry = memo[node.id] = (_dependencies(model, node), {})
    deps, results = entry
    if env and deps:  # the values and their types (1, 1.0 and True are equal keys otherwise)
        if len(deps) == 1:  # (most indices: one counter; a node's keys all have the same shape)
            x = env.get(deps[0], _MISSING)
            key = (x, x.__class__)
        else:
            vals = tuple(map(env.get, deps, repeat(_MISSING)))
            key = (vals, tuple(map(type, vals)))
    else:
        key = ()
    try:
        return results[key]
    except KeyError:
        pass
    val = results[key] = _evaluate(model, node, env or {}, 0)
    return val


def _dependencies(model, node: ts.Node) -> tuple:
    """The bindings :func:`evaluate` may look up for ``node``: ``id(Var)`` of every identifier
    under it (and, transitively, under the initializers of the locals it follows) and the names
    of identifiers that do not resolve. What a variable reaches through its initializer is
    found once per model (:func:`_reach`): the walk asks for the nodes of nested expressions and
    chains of locals, which reach the same variables again."""
    out: dict = {}
    try:
        reaches = model._dependency_reach
    except AttributeError:
        reaches = model._dependency_reach = {}

    def reach(v) -> None:  # (a variable already in ``out`` came with all it reaches)
        got = reaches.get(id(v))
        if got is None:
            got = reaches[id(v)] = _reach(model, v)
        out.update(got)

    _collect_keys(model, [node], out, reach)
    return tuple(out)


def _collect_keys(model, stack: list, out: dict, on_var) -> None:
    """The keys of the identifiers under the nodes of ``stack`` into ``out``: an unresolved name, the
    size of a template parameter read as a type (``sizeof(T)``); ``on_var(v)`` for a variable not in
    ``out`` yet (it may push more nodes on ``stack``)."""
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "qualified_identifier"):
            v = model.resolve(n)
            if v is None:
                out[model.text(n)] = None
            elif id(v) not in out:
                on_var(v)
        elif n.type == "type_identifier":  # `sizeof(T)` read as a type
            v = model.resolve(n)
            if v is not None and v.template_param:
                out[("sizeof", id(v))] = None
        stack.extend(n.named_children)


def _reach(model, v) -> dict:
    """The keys :func:`_dependencies` adds for the variable ``v``: ``v`` itself (its size when it is a
    template parameter) and, when the evaluation follows ``v`` to its initializer, what the
    initializer's identifiers reach, transitively."""
    out: dict = {}
    stack: list = []
    _reach_var(model, v, out, stack)
    _collect_keys(model, stack, out, lambda w: _reach_var(model, w, out, stack))
    return out


def _reach_var(model, v, out: dict, stack: list) -> None:
    out[id(v)] = None
    if v.template_param:
        out[("sizeof", id(v))] = None  # a type parameter's size, when bound
    if v.init is not None and not (v.template_param or v.is_param or v.function_constant
                                   or v.is_array or v.is_global and not (v.is_const or v.is_constexpr)) \
            and not reassigned(model, v):
        stack.append(v.init)


def binary_parts(model, node: ts.Node) -> tuple:
    """(operator text, operator node, left, right) of a binary expression, cached per model."""
    try:
        cache = model._binary_parts
    except AttributeError:
        cache = model._binary_parts = {}
    got = cache.get(node.id)
    if got is None:
        opn = node.child_by_field_name("operator")
        got = cache[node.id] = (model.text(opn) if opn is not None else "", opn,
                                node.child_by_field_name("left"), node.child_by_field_name("right"))
    return got


def _evaluate(model, node: ts.Node, env: Env, depth: int) -> int | float | None:
    t = node.type
    try:
        if t == "number_literal":
            try:
                return model._literal_values[node.id]
            except AttributeError:
                model._literal_values = {}
            except KeyError:
                pass
            val = model._literal_values[node.id] = parse_number(model.text(node))
            return val
        if t in ("true", "false"):
            return 1 if t == "true" else 0
        if t == "parenthesized_expression":
            return evaluate(model, node.named_children[-1], env, depth + 1) if node.named_child_count else None
        if t in ("identifier", "qualified_identifier"):
            v = model.resolve(node)
            if v is not None:
                if id(v) in env:
                    return env[id(v)]
                if v.template_param or v.is_param or v.is_global and not (v.is_const or v.is_constexpr):
                    return model.const_value(node)
                if v.init is not None and not v.function_constant and not v.is_array and not reassigned(model, v):
                    return evaluate(model, v.init, env, depth + 1)
                return None
            name = model.text(node)
            if name in env:  # bound by name (a loop counter out of the parser's scope)
                return env[name]
            return model.const_value(node)
        if t == "unary_expression":
            arg = node.child_by_field_name("argument")
            op = model.text(node.child_by_field_name("operator"))
            a = evaluate(model, arg, env, depth + 1)
            if a is None:
                return None
            if op == "-":
                return -a
            if op == "+":
                return a
            if op == "!":
                return int(not a)
            if op == "~" and isinstance(a, int):
                return ~a
            return None
        if t == "binary_expression":
            op, _, left, right = binary_parts(model, node)
            a = evaluate(model, left, env, depth + 1)
            if op == "&&" and a == 0 or op == "||" and a not in (None, 0):
                return int(bool(a))
            b = evaluate(model, right, env, depth + 1)
            if a is None or b is None:
                return None
            if op in _COMPARE:
                return int({"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b, "==": a == b, "!=": a != b,
                            "&&": bool(a) and bool(b), "||": bool(a) or bool(b)}[op])
            return c_binary(op, a, b)
        if t == "sizeof_expression":
            ty = node.child_by_field_name("type")
            arg = ty if ty is not None else node.child_by_field_name("value")
            while arg is not None and arg.type in ("parenthesized_expression", "type_descriptor") \
                    and arg.named_child_count == 1:
                arg = arg.named_children[0]
            named = None
            if arg is not None and arg.type in ("identifier", "type_identifier"):
                v = model.resolve(arg)  # `sizeof(T)`, T a bound type parameter
                if v is not None and v.template_param and ("sizeof", id(v)) in env:
                    return env[("sizeof", id(v))]
                if v is None:  # `sizeof(__half2)` parsed as an expression: a type's name
                    named = arg
            if ty is not None or named is not None:
                tt = parse_type_name(model.text(ty if ty is not None else named))
                if tt.kind in ("int", "uint", "float", "bool"):
                    return max(tt.bits, 8) // 8 * tt.width
            return None
        if t == "conditional_expression":
            c = evaluate(model, node.child_by_field_name("condition"), env, depth + 1)
            if c is None:
                return None
            return evaluate(model, node.child_by_field_name("consequence" if c else "alternative"), env, depth + 1)
        if t == "cast_expression":
            val = evaluate(model, node.child_by_field_name("value"), env, depth + 1)
            ty = model.parse_type(node.child_by_field_name("type"))
            if val is None:
                return None
            return int(val) if ty.is_integer else float(val) if ty.is_float else val
        if t == "call_expression":
            args = model.call_args(node)
            name = model.callee_name(node)
            vals = [evaluate(model, a, env, depth + 1) for a in args]
            if any(v is None for v in vals) or not vals:
                return None
            ty = parse_type_name(name)
            if ty.is_arithmetic and ty.width == 1 and len(vals) == 1:
                return int(vals[0]) if ty.is_integer else float(vals[0]) if ty.is_float else vals[0]
            if name in ("min", "max") and len(vals) == 2:
                return min(vals) if name == "min" else max(vals)
            if name == "abs" and len(vals) == 1:
                return abs(vals[0])
            return None
    except (ArithmeticError, ValueError, KeyError, RecursionError, OverflowError):
        return None
    return model.const_value(node)
