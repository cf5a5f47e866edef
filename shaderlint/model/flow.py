"""Which writes of a local variable can reach a use: a small, conservative reaching-definitions
step on top of the flow-insensitive thread-dependence fixpoint (:mod:`shaderlint.model.build`).

The fixpoint gives each variable one dependence, the union over all its writes. That ignores
order: ``lo = tid_value; ...; lo = ~0u; for (...) lo = min(lo, shared[i]); return lo;`` returns a
value that is the same in every thread, yet the union says "thread-dependent" (vLLM
cooperative_topk_overflow.cuh, whose caller then branches on the result before a barrier).

A use is narrowed to the writes that can reach it only where the order is certain:

- the *killing* write is a plain ``v = …;`` expression statement or ``T v = …;`` declaration,
  a direct child of a block that encloses the use, earlier in that block (every path to the use
  runs through it, since a block runs its statements in order; no ``goto`` in the function, and
  not the body of a ``switch``, whose ``case`` labels are entered from outside), or the plain
  ``v = …`` initializer of a ``for`` (also in a comma list) for a use in that loop's condition,
  update or body, or after the loop in the block it is a direct child of: ``int i; for (i = tid;
  ...) ...; for (i = 0; i < m; i++) { barrier }`` tests a counter no earlier loop's value reaches;
- the writes that reach the use are that one, every write of ``v`` between it and the use (in
  any branch) and every write of ``v`` anywhere in a loop that encloses the use but not the
  killing write (the next iteration sees it);
- ``v`` is a local scalar or struct (no array, no reference, not bound to memory, not
  ``static``), its address is never taken, no reference is bound to it, no lambda or inline
  ``asm`` writes it, the use is not inside a lambda below the killing write's block, and every
  call that is handed ``v`` (or a part of it) is known to take it by value (a built-in math/shuffle function, a conversion, a function
  of the file whose parameter there is neither a non-const reference nor ``out``/``inout``)
  or is a call of unknown signature handed ``v`` itself by name (a method, a header's function:
  the dependence fixpoint counts it as a write of ``v`` there, see :func:`opaque_call_outputs`);
- the condition of a ``do … while`` is reached from the end of the body: the body's last killing
  write dominates it when no ``continue`` of that loop jumps there.

Anything else keeps the union, as before.
"""

from __future__ import annotations

import bisect
from functools import lru_cache
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model import builtins as B
from shaderlint.model.expr import unparen
from shaderlint.model.kernel import Var
from shaderlint.model.types import parse_type_name

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel

_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_CONVERSIONS = frozenset((
    "static_cast", "reinterpret_cast", "bit_cast", "as_type", "convert", "__float_as_uint", "__uint_as_float",
    "__float_as_int", "__int_as_float", "__float2uint_rn", "__float2int_rz", "__uint2float_rn", "__brev",
    "__popcll", "__clzll", "__ffsll", "__umulhi", "__mulhi", "__mul24", "__umul24", "umin", "umax",
))
_JUMP_QUERY = "(goto_statement) @goto\n"
_ASM_QUERY = "(gnu_asm_output_operand) @out\n"

WriteKey = tuple[int, int]  # (id(var), id of the write's statement node)


@lru_cache(maxsize=16)
def _query(language: str, source: str) -> ts.Query | None:
    """The compiled query (compiling costs milliseconds: once per language), None when the
    grammar lacks its node types."""
    from shaderlint.languages import FRONT_ENDS  # noqa: PLC0415
    try:
        return ts.Query(FRONT_ENDS[language].language(), source)
    except Exception:
        return None


def _by_value_builtin(name: str) -> bool:
    return (name in B.GENERIC_MATH or name in B.VALUE_ARG or name in B.SCALAR_RESULT or name in B.FIXED_RESULT
            or name in _CONVERSIONS or parse_type_name(name).is_arithmetic)


class ReachingWrites:
    """Built once per file by the dependence fixpoint, which fills :attr:`deps` per write."""

    def __init__(self, m: "FileModel", writes: list[tuple[Var, list[ts.Node], ts.Node]],
                 conds: list[list[ts.Node]], bound_to_memory: set[Var]) -> None:
        self.m = m
        self.deps: dict[WriteKey, frozenset[str]] = {}
        # what each write's value is computed from (right-hand side, conditions), every write per variable
        self._sources: dict[WriteKey, list[ts.Node]] = {}
        self._all: dict[int, list[WriteKey]] = {}
        for (var, rhs, stmt), cs in zip(writes, conds):
            key = (id(var), stmt.id)
            self._sources.setdefault(key, []).extend(rhs + cs)
            self._all.setdefault(id(var), []).append(key)
        self._params_cache: dict[int, frozenset[int] | None] = {}
        self._by_name: dict[str, list] = {}
        for f in m.functions:
            self._by_name.setdefault(f.name, []).append(f)
        self._starts: dict[int, list[int]] = {}  # id(var) -> start bytes of its writes, sorted
        self._keys: dict[int, list[WriteKey]] = {}  # id(var) -> the write keys, same order
        # (id(var), id(block)) -> [(end of the killing statement, its write key)], sorted
        self._kills: dict[tuple[int, int], list[tuple[int, WriteKey]]] = {}
        self._cache: dict[int, list[WriteKey] | None] = {}
        self._eligible: set[int] = set()
        # Local variables (and parameters) that something other than the writes may change: a call
        # handed them by reference, `&v`, a reference bound to them, an inline asm output.
        self._hidden: set[int] = set()
        self._decay_cache: dict[int, bool] = {}
        local_vars = {id(v): v for f in m.functions for v in f.vars + f.params if not v.is_global}
        self._block_aliases(local_vars, self._hidden)
        self._block_asm_outputs(local_vars, self._hidden)
        candidates: dict[int, Var] = {}
        for var, _rhs, stmt in writes:
            if var.is_global or var.address_space is not None or var.dims or var in bound_to_memory:
                continue
            candidates[id(var)] = var
        if not candidates:
            return
        from shaderlint.model.memory import is_reference  # noqa: PLC0415 (memory imports the model)
        candidates = {k: v for k, v in candidates.items() if not is_reference(v) and v.function is not None}
        blocked: set[int] = set()
        jumps = self._functions_with_jumps()
        for k, v in candidates.items():
            if id(v.function) in jumps:
                blocked.add(k)
        for var, _rhs, stmt in writes:
            k = id(var)
            if k not in candidates:
                continue
            if _inside_lambda(stmt, var.function.node if var.function else None):
                blocked.add(k)  # called from who knows where
                continue
            self._starts.setdefault(k, []).append(stmt.start_byte)
            key = (k, stmt.id)
            self._keys.setdefault(k, []).append(key)
            kill = self._killing_statement(var, stmt)
            if kill is not None:
                self._kills.setdefault((k, kill.parent.id), []).append((kill.end_byte, key))
            elif (loop := self._for_initializer(var, stmt)) is not None:
                # `for (i = 0; ...)`: the initializer runs before everything else of the loop, and
                # before what follows the loop in its block
                self._kills.setdefault((k, loop.id), []).append((stmt.end_byte, key))
                block = loop.parent
                if block is not None and block.type == "compound_statement" and (
                        block.parent is None or block.parent.type != "switch_statement"):
                    self._kills.setdefault((k, block.id), []).append((stmt.end_byte, key))
        self._eligible = set(candidates) - blocked - self._hidden
        for lst in self._kills.values():
            lst.sort(key=lambda x: x[0])

    # ---- setup -------------------------------------------------------------------------------------
    def _functions_with_jumps(self) -> set[int]:
        from shaderlint.model.build import captures  # noqa: PLC0415
        m = self.m
        if b"goto" not in m.source.data:
            return set()  # a label is only reached by a `goto` (`case` labels: see _killing_statement)
        q = _query(m.language, _JUMP_QUERY)
        if q is None:  # a grammar without these nodes: treat every function as having jumps
            return {id(f) for f in m.functions}
        out: set[int] = set()
        for nodes in captures(q, m.root).values():
            for n in nodes:
                f = m.function_at(n.start_byte)
                if f is not None:
                    out.add(id(f))
        return out

    def _block_asm_outputs(self, candidates: dict[int, Var], blocked: set[int]) -> None:
        """Block variables an inline ``asm`` statement writes (``: "=r"(lane)``): not among the writes."""
        from shaderlint.model.build import captures  # noqa: PLC0415
        m = self.m
        if m.language == "glsl" or b"asm" not in m.source.data:
            return
        q = _query(m.language, _ASM_QUERY)
        if q is None:  # no inline asm in this grammar: block every candidate that could be written so
            blocked.update(candidates)
            return
        for nodes in captures(q, m.root).values():
            for n in nodes:
                for c in n.named_children:
                    b = m.base_var(c) if c.type != "string_literal" else None
                    if b is not None and id(b) in candidates:
                        blocked.add(id(b))

    def _killing_statement(self, var: Var, stmt: ts.Node) -> ts.Node | None:
        """The statement (a direct child of a block) whose execution sets all of ``var``, or None."""
        t = stmt.type
        if t == "assignment_expression":
            if not plain_assignment(self.m, var, stmt):
                return None
            st = stmt.parent
            if st is None or st.type != "expression_statement" or st.named_child_count != 1:
                return None
        elif t == "declaration":
            if var.init is None or var.decl.id != stmt.id or any(
                    c.type == "storage_class_specifier" and self.m.text(c) == "static" for c in stmt.children):
                return None  # (a `static` local is initialized once)
            st = stmt
        else:
            return None
        block = st.parent
        if block is None or block.type != "compound_statement":
            return None
        if block.parent is not None and block.parent.type == "switch_statement":
            return None  # a `case` label further down is entered without passing it
        return st

    def _for_initializer(self, var: Var, stmt: ts.Node) -> ts.Node | None:
        """The ``for`` statement whose initializer is the plain ``var = …`` write ``stmt`` (also one
        part of a comma list: ``for (i = 0, j = tid; ...)``), or None."""
        if stmt.type != "assignment_expression" or not plain_assignment(self.m, var, stmt):
            return None
        child, p = stmt, stmt.parent
        while p is not None and p.type == "comma_expression":
            child, p = p, p.parent
        if p is None or p.type != "for_statement" or p.child_by_field_name("initializer") != child:
            return None
        return p

    def _block_aliases(self, candidates: dict[int, Var], blocked: set[int]) -> None:
        """Block variables whose address is taken, that a reference is bound to, or that a call may
        write through a reference parameter."""
        m = self.m
        # handed by name to a call of unknown signature: the call is among the writes (see
        # opaque_call_outputs), at its place in the code
        opaque = {(call.id, id(v)) for call, v in opaque_call_outputs(m)}
        for call in m.nodes("call"):
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                obj = fn.child_by_field_name("argument")
                b = m.base_var(obj) if obj is not None else None
                if b is not None and id(b) in candidates:
                    blocked.add(id(b))  # `v.update()` may change v
            name = m.callee_name(call)
            for i, a in enumerate(a for a in m.call_args(call) if a.type != "comment"):
                b = m.base_var(a)
                if b is None or id(b) not in candidates or id(b) in blocked:
                    continue
                if (call.id, id(b)) in opaque and unparen(a).type == "identifier":
                    continue
                if not self.by_value(call, name, i):
                    blocked.add(id(b))
        for f in m.functions:
            for v in f.vars:
                if v.init is None:
                    continue
                b = m.base_var(v.init)
                if b is not None and id(b) in candidates:
                    from shaderlint.model.memory import is_reference  # noqa: PLC0415
                    if is_reference(v):
                        blocked.add(id(b))
        # `&v`, `&v.f`, `&v[i]`: found from the `&` tokens of the functions' text (a pointer_expression
        # is not among the captures); GLSL has no address-of
        if m.language == "glsl":
            return
        data = m.source.data
        for f in {id(v.function): v.function for v in candidates.values() if v.function is not None}.values():
            if f.body is None:
                continue
            start, end = f.body.start_byte, f.body.end_byte
            pos = data.find(b"&", start, end)
            while pos >= 0:
                tok = m.root.descendant_for_byte_range(pos, pos + 1)
                p = tok.parent if tok is not None else None
                if p is not None and p.type == "pointer_expression" and tok.type == "&":
                    arg = p.child_by_field_name("argument")
                    b = m.base_var(arg) if arg is not None else None
                    if b is not None and id(b) in candidates:
                        blocked.add(id(b))
                pos = data.find(b"&", pos + 1, end)

    def by_value(self, call: ts.Node, name: str, index: int) -> bool:
        """True when the call ``call`` of ``name`` cannot write through its argument ``index``: every
        definition of ``name`` in the file takes it by value (or by ``const`` reference, not GLSL
        ``out``/``inout``), or ``name`` is a built-in function or a conversion that takes its
        arguments by value. A method or a call of unknown signature may write it."""
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type == "field_expression":
            return False  # a method: unknown signature
        defs = self._by_name.get(name)
        if defs:
            from shaderlint.model.memory import is_reference  # noqa: PLC0415
            for f in defs:
                if index >= len(f.params):
                    return False  # variadic or defaulted: unknown
                p = f.params[index]
                if (is_reference(p) and not p.is_const) or p.address_space in ("out", "inout"):
                    return False
            return True
        return _by_value_builtin(name)

    def _decays(self, var: Var) -> bool:
        """True when a local array is named other than as ``a[i]`` or in ``sizeof`` (a pointer to
        it may be stored through)."""
        k = id(var)
        if k not in self._decay_cache:
            m = self.m
            body = var.function.body if var.function is not None else None
            out = body is None
            for n in _nodes_of(body, "identifier") if body is not None else ():
                if n.start_byte == var.node.start_byte or m.resolve(n) is not var:
                    continue
                p = n.parent
                if p is not None and p.type == "subscript_expression" and n == p.child_by_field_name("argument"):
                    continue
                if p is not None and p.type in ("sizeof_expression", "parenthesized_expression") and (
                        p.type == "sizeof_expression" or (p.parent is not None and p.parent.type == "sizeof_expression")):
                    continue
                out = True
                break
            self._decay_cache[k] = out
        return self._decay_cache[k]

    # ---- queries -----------------------------------------------------------------------------------
    def may_change(self, var: Var) -> bool:
        """True when something other than its assignments may change the local ``var`` (or
        parameter): its address is taken, a reference is bound to it, a call may write it through a
        reference parameter, an inline ``asm`` writes it, a call of unknown signature is handed it
        (:func:`opaque_call_outputs`)."""
        if id(var) in self._hidden:
            return True
        opaque = self.m.__dict__.get("_opaque_vars")
        if opaque is None:
            opaque = self.m._opaque_vars = {id(v) for _, v in opaque_call_outputs(self.m)}
        return id(var) in opaque

    def definitions(self, name: str) -> int:
        """How many functions of the file have this name (overloads, declarations)."""
        return len(self._by_name.get(name, ()))

    def params_reaching_result(self, f) -> frozenset[int] | None:
        """Indices of ``f``'s parameters whose values on entry can flow into its result: into a
        returned value, a condition deciding which ``return`` runs, or a write (or its condition)
        reaching either. None when unknown (no body, a parameter bound to memory or unnamed)."""
        key = id(f)
        if key not in self._params_cache:
            self._params_cache[key] = self._params_reaching(f)
        return self._params_cache[key]

    def _params_reaching(self, f) -> frozenset[int] | None:
        from shaderlint.model.build import control_conditions  # noqa: PLC0415 (build imports this module)
        m = self.m
        if f.body is None or f.node.has_error:
            return None
        index = {id(p): i for i, p in enumerate(f.params)}
        stack: list[ts.Node] = []
        for r in _nodes_of(f.body, "return_statement", own=True):
            stack.extend(c for c in r.named_children if c.type != "comment")
            stack.extend(control_conditions(m, r))
        out: set[int] = set()
        seen: set[WriteKey] = set()
        visited: set[int] = set()
        while stack:
            n = stack.pop()
            if n.id in visited:
                continue
            visited.add(n.id)
            for ident in _nodes_of(n, "identifier", "qualified_identifier"):
                v = m.resolve(ident)
                if v is None:
                    continue
                if id(v) in self._hidden or (v.function is f and v.dims and self._decays(v)):
                    return None  # changed through an alias the writes do not show: it may carry any argument
                keys = self.reaching(v, ident)
                if keys is None:
                    if id(v) in index:
                        out.add(index[id(v)])
                    keys = self._all.get(id(v), ())
                for k in keys:
                    if k not in seen:
                        seen.add(k)
                        stack.extend(self._sources.get(k, ()))
        return frozenset(out)

    def tracks(self, var: Var) -> bool:
        """Whether the writes of ``var`` are all visible (no alias, reference, inline ``asm`` output,
        lambda or ``goto`` can change it behind them): only then may an analysis order them."""
        return id(var) in self._eligible

    def reaching(self, var: Var, use: ts.Node) -> list[WriteKey] | None:
        """The writes of ``var`` that can reach ``use`` when a killing write dominates it, else None
        (the caller keeps the flow-insensitive union)."""
        if id(var) not in self._eligible:
            return None
        hit = self._cache.get(use.id, False)
        if hit is not False:
            return hit
        res = self._reaching(var, use)
        self._cache[use.id] = res
        return res

    def _reaching(self, var: Var, use: ts.Node) -> list[WriteKey] | None:
        k = id(var)
        stop = var.function.node if var.function is not None else None
        loops: list[ts.Node] = []
        child, p = use, use.parent
        while p is not None and p != stop:
            t = p.type
            if t == "lambda_expression":
                return None  # the lambda may run after later writes
            if t == "do_statement" and child == p.child_by_field_name("condition"):
                # `do { ...; v = x; ... } while (cond(v));`: the condition runs after the whole body, so
                # the body's last killing write dominates it unless a `continue` jumps there first
                body = p.child_by_field_name("body")
                kills = self._kills.get((k, body.id)) if body is not None else None
                if kills and not _continues_to(body):
                    return self._from(k, kills[-1], use, loops)
            if t in _LOOPS:
                loops.append(p)
                if t == "for_statement" and child != p.child_by_field_name("initializer"):
                    kills = self._kills.get((k, p.id))
                    if kills:  # `for (i = 0; i < m; i++)`: its initializer dominates the rest of the loop
                        return self._from(k, kills[-1], use, loops)
            elif t == "compound_statement":
                kills = self._kills.get((k, p.id))
                if kills:
                    i = bisect.bisect_right(kills, child.start_byte, key=lambda x: x[0]) - 1
                    if i >= 0:
                        return self._from(k, kills[i], use, loops)
            child, p = p, p.parent
        return None

    def _from(self, k: int, kill: tuple[int, WriteKey], use: ts.Node, loops: list[ts.Node]) -> list[WriteKey]:
        starts, keys = self._starts[k], self._keys[k]
        out = {kill[1]}
        lo = bisect.bisect_left(starts, kill[0])
        hi = bisect.bisect_left(starts, use.start_byte)
        out.update(keys[lo:hi])
        for loop in loops:
            a = bisect.bisect_left(starts, loop.start_byte)
            b = bisect.bisect_left(starts, loop.end_byte)
            out.update(keys[a:b])
        return sorted(out, key=lambda x: x[1])


def _nodes_of(root: ts.Node, *types: str, own: bool = False) -> list[ts.Node]:
    """``root`` and its descendants of the given types; with ``own``, not those inside nested
    functions or lambdas (their ``return``s are not the function's)."""
    out: list[ts.Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type in types:
            out.append(n)
        elif own and n.type in ("function_definition", "lambda_expression") and n != root:
            continue
        stack.extend(n.named_children)
    return out


def plain_assignment(m: "FileModel", var: Var, a: ts.Node) -> bool:
    """The assignment expression ``a`` is a plain ``var = …`` (not ``var += …``, not ``var.x = …``)."""
    op, left = a.child_by_field_name("operator"), a.child_by_field_name("left")
    if op is None or m.text(op) != "=" or left is None:
        return False
    left = unparen(left)
    return left.type == "identifier" and m.resolve(left) is var


def opaque_call_outputs(m: "FileModel") -> list[tuple[ts.Node, Var]]:
    """(call, variable) for a local scalar or struct handed by name to a call whose signature the
    file does not show: a method (``BlockReduce(tmp).Reduce(v, op)``, ``scan.ExclusiveSum(x, out)``)
    or a function it does not define, that is not a built-in taking its arguments by value. The
    callee may write the variable through a reference parameter, at that call. (The object of a
    method call, ``&v``, arrays and references are not among them: an alias may be written later.)"""
    got = m.__dict__.get("_opaque_call_outputs")
    if got is not None:
        return got
    from shaderlint.model.memory import is_reference  # noqa: PLC0415 (memory imports the model)
    out: list[tuple[ts.Node, Var]] = []
    if m.language != "glsl":
        for call in m.nodes("call"):
            fn = call.child_by_field_name("function")
            if fn is None:
                continue
            if fn.type != "field_expression":
                name = m.callee_name(call)
                if name in m.function_by_name or _by_value_builtin(name):
                    continue
            for a in m.call_args(call):
                a = unparen(a)
                if a.type != "identifier":
                    continue
                v = m.resolve(a)
                if (v is None or v.is_global or v.function is None or v.address_space is not None or v.dims
                        or is_reference(v) or v.type.kind in ("pointer", "array")):
                    continue
                out.append((call, v))
    m.__dict__["_opaque_call_outputs"] = out
    return out


def _continues_to(body: ts.Node) -> bool:
    """A ``continue`` of the loop whose body is ``body`` (not of a loop nested in it)."""
    stack = list(body.named_children)
    while stack:
        n = stack.pop()
        if n.type == "continue_statement":
            return True
        if n.type in _LOOPS or n.type in ("lambda_expression", "function_definition"):
            continue
        stack.extend(n.named_children)
    return False


def _inside_lambda(node: ts.Node, stop: ts.Node | None) -> bool:
    p = node.parent
    while p is not None and p != stop:
        if p.type == "lambda_expression":
            return True
        p = p.parent
    return False
