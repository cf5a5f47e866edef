"""Synchronisation facts over the kernel model: group barriers (also behind calls to helpers),
what each barrier orders, which memory is touched between barriers, divergent control, and
SIMD-scope reductions.

- :func:`group_barriers` / :func:`sync_calls`: threadgroup-wide barriers of a function and its
  calls to same-file helpers that (transitively) execute one.
- :func:`effective_orders`: the address spaces a barrier orders (threadgroup memory always; GLSL
  ``memoryBarrierBuffer(); barrier();`` pairs add what the memory barrier orders).
- :func:`redundant_barriers`: a structured forward/backward data-flow over the function body (loops
  iterated to a fixpoint, ``break``/``continue``/``return`` followed) that finds barriers with no
  access to what they order since the previous barrier or entry, or until the next or exit.
- :func:`divergent_conditions`: the conditions deciding whether a node runs that differ between
  threads of one group (``local`` dependence; values read from shared memory stay silent).
- :func:`balanced_region`: where a branch's ways through all execute the same sequence of group
  barriers (warp specialisation: ``if (warp == 0) { ...; barrier } else { barrier; ... }``), so
  that its condition does not decide how many barriers a thread reaches.
- :func:`simd_reductions` / :func:`group_result_stores` / :func:`spans_several_simd_groups`: values
  computed by SIMD-scope reductions, their stores at group-uniform addresses (what is stored decided
  per class of threads along the branches they take on their index, :mod:`shaderlint.model.lanes`),
  and evidence that a group holds several SIMD groups.

Everything leans towards silence: unknown callees, pointers of unknown address space and
``goto`` count as touching all memory or stop the analysis.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model import builtins as B
from shaderlint.model.build import control_conditions
from shaderlint.model.callables import resolved_callee_name
from shaderlint.model.dispatch import calls_to, nodes_in
from shaderlint.model.expr import mentions, subscript_index, unparen
from shaderlint.model.flow import opaque_call_outputs, plain_assignment
from shaderlint.model.idioms import uniform_idiom
from shaderlint.model.kernel import Barrier, Function, Var
from shaderlint.model.preproc import macro_names
from shaderlint.model.types import parse_type_name

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import GroupSize

TG, DEV, TEX = 1, 2, 4
ALL = TG | DEV | TEX
_EDGE = 8  # "the kernel's entry (forward) / exit (backward) is a possible neighbour"
_BAR = 16  # "another barrier is a possible neighbour"
_VAGUE = 32  # "an undeclared name the analysis cannot see into was used": no removal fix across it
_W = 8  # TG/DEV/TEX << _W: that space was accessed through something writable (not const/readonly)
_ALLW = ALL | ALL << _W
# Since the last barrier of any kind (cleared at every barrier, whatever its flags): TG/DEV/TEX << _U,
# writable memory of that space indexed at an address every thread of the group shares (or code the
# analysis cannot see); << _XW, writable memory of that space accessed at all.
_U = 12
_XW = 16
_EXEC = ALL << _U | ALL << _XW
SPACE_BITS = {"threadgroup": TG, "device": DEV, "texture": TEX}
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_STRUCTURED = (*_LOOPS, "if_statement", "switch_statement")


# ---- barriers --------------------------------------------------------------------------------------


def group_barriers(f: Function) -> list[Barrier]:
    return [b for b in f.barriers if b.scope == "group"]


def effective_orders(model: "FileModel", b: Barrier) -> frozenset[str]:
    """What a group barrier orders: threadgroup memory always, plus what it orders itself and, in
    GLSL, what the memory barriers written directly before it (``memoryBarrierBuffer(); barrier();``) order."""
    orders = set(b.orders) | {"threadgroup"}
    f = b.function
    if model.language == "glsl" and f is not None:
        stmt = _statement(b.node)
        prev = stmt.prev_named_sibling if stmt is not None else None
        mem = {x.node.id: x for x in f.barriers if x.scope == "memory"}
        while prev is not None and prev.type == "expression_statement":
            call = unparen(prev.named_children[0]) if prev.named_child_count else None
            if call is None or call.id not in mem:
                break
            orders |= mem[call.id].orders
            prev = prev.prev_named_sibling
    return frozenset(orders)


def _statement(node: ts.Node) -> ts.Node | None:
    n = node
    while n is not None and n.type != "expression_statement":
        if n.type in ("compound_statement", "function_definition"):
            return None
        n = n.parent
    return n


def synchronising_functions(model: "FileModel") -> dict[str, Barrier]:
    """Same-file functions that execute a group barrier, directly or through calls: name -> a barrier."""
    cached = getattr(model, "_sync_functions", None)
    if cached is not None:
        return cached
    out: dict[str, Barrier] = {}
    for f in model.functions:
        gb = group_barriers(f)
        if gb:
            out.setdefault(f.name, gb[0])
    todo = list(out)
    while todo:
        name = todo.pop()
        for call in calls_to(model, name):
            f = model.function_at(call.start_byte)
            if f is not None and f.name not in out:
                out[f.name] = out[name]
                todo.append(f.name)
    model._sync_functions = out
    return out


def sync_calls(model: "FileModel", f: Function) -> list[tuple[ts.Node, Barrier]]:
    """Calls in ``f`` to same-file helpers that execute a group barrier: (call, a barrier inside)."""
    if f.body is None:
        return []
    sync = synchronising_functions(model)
    out = []
    for call in nodes_in(model, "call", f.body.start_byte, f.body.end_byte):
        name = resolved_callee_name(model, call)
        if name in sync and name != f.name and name in model.function_by_name:
            out.append((call, sync[name]))
    return out


def divergent_conditions(model: "FileModel", node: ts.Node) -> list[ts.Node]:
    """Conditions deciding whether ``node`` runs whose value differs between threads of a group.
    Inside a helper, a condition on a parameter counts when some call in the file passes a
    thread-dependent argument for it."""
    out = []
    f = model.function_at(node.start_byte)
    for c in control_conditions(model, node):
        if B.LOCAL in model.deps(c) or (f is not None and not f.is_entry and _param_divergent(model, f, c)):
            if uniform_idiom(model, f, c) or _exclusive_branches(model, f, c, node):
                continue
            out.append(c)
    return out


class _Unknown(Exception):
    """The barriers a piece of code executes are not one fixed sequence the analysis can name."""


_MAX_SEQS, _MAX_SEQ_LEN = 8, 64
#: Calls that hold no group barrier although a built-in table may not say so: device-side CUDA
#: runtime calls (programmatic dependent launch), casts, ``sizeof``.
NO_SYNC_CALLS = frozenset({"cudaTriggerProgrammaticLaunchCompletion", "cudaGridDependencySynchronize",
                           "static_cast", "reinterpret_cast", "const_cast", "bit_cast", "sizeof"})
#: Inline assembly that may wait for other threads (bar.sync, barrier.*, mbarrier waits, elect.sync, ...).
ASM_WAIT = re.compile(r"bar|sync|wait|elect|arrive", re.I)


def balanced_region(model: "FileModel", if_stmt: ts.Node) -> tuple[int, int] | None:
    """The byte range in which the barriers are balanced around ``if_stmt``, or None: every way
    through it (either arm, to its end or to a ``return``) executes the same sequence of group
    barriers. ``if (warp == 0) { ...; __syncthreads(); } else { __syncthreads(); ... }`` (warp
    specialisation; nested branches as balanced, loops of a constant trip count) gives the ``if``
    itself. An ``if`` at the top of a function body whose arm always returns, without an ``else``,
    is a branch between that arm and the rest of the body (vLLM's fill threads: ``if (tid <
    fill) { ...; __syncthreads(); __syncthreads(); return; }`` before the two barriers of the
    others): that gives the ``if`` and everything after it. Each thread then arrives at the same
    number of barriers of each kind in the same order, whichever way it takes.

    None when a way can leave early before a barrier, loops a barrier a number of times the
    analysis cannot count (a thread-dependent loop), jumps out (``break``, ``continue``, ``goto``)
    or runs code that may hold a barrier the analysis cannot count: a call the file does not define,
    inline ``asm`` that may wait, code the front end blanked. Whether the hardware accepts the
    arms' barriers as one is the caller's question (CUDA on NVIDIA GPUs counts each thread's
    arrivals at barrier 0 from compute capability 7.0)."""
    if if_stmt.type != "if_statement":
        return None
    cache = model.__dict__.setdefault("_balanced_cache", {})
    if if_stmt.id not in cache:
        try:
            cache[if_stmt.id] = _balanced(model, if_stmt)
        except (_Unknown, RecursionError):  # (statements nested hundreds deep: not decided)
            cache[if_stmt.id] = None
    return cache[if_stmt.id]


def _balanced(model: "FileModel", if_stmt: ts.Node) -> tuple[int, int] | None:
    cond = if_stmt.child_by_field_name("condition")
    cons, alt = if_stmt.child_by_field_name("consequence"), if_stmt.child_by_field_name("alternative")
    if cons is None or cond is None or if_stmt.has_error:
        return None
    names = _barrier_names(model)
    if _expr_seqs(model, cond, names, frozenset()) != {()}:
        return None
    arms = [cons] + ([alt] if alt is not None else [])
    for arm in arms:
        _check_jumps(model, arm, names)
    ways = [_stmt_seqs(model, arm, names, frozenset()) for arm in arms]
    seqs: set[tuple[str, ...]] = set().union(*(normal | returned for normal, returned in ways))
    if alt is not None:
        return (if_stmt.start_byte, if_stmt.end_byte) if len(seqs) == 1 else None
    f = model.function_at(if_stmt.start_byte)
    normal = ways[0][0]  # (the consequence's)
    if not normal and f is not None and f.body is not None and if_stmt.parent == f.body:
        # the arm always returns: the rest of the body is the other way (falling off its end returns)
        cur, ret = {()}, set()
        rest = if_stmt.next_named_sibling
        while rest is not None:
            _check_jumps(model, rest, names)
            nrm, r = _stmt_seqs(model, rest, names, frozenset())
            ret |= _concat(cur, r)
            cur = _concat(cur, nrm)
            rest = rest.next_named_sibling
        seqs |= cur | ret
        return (if_stmt.start_byte, f.body.end_byte) if len(seqs) == 1 else None
    seqs.add(())
    return (if_stmt.start_byte, if_stmt.end_byte) if len(seqs) == 1 else None


_CALL_IN_TEXT = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _plain_macro(model: "FileModel", name: str) -> bool:
    """``name`` is a function-like macro the file defines, every definition of which calls only
    built-ins that hold no barrier (``#define CEILDIV(x, y) (((x) + (y) - 1) / (y))``)."""
    got = model.__dict__.setdefault("_plain_macros", None)
    if got is None:
        got = {}
        stack = [model.root]
        while stack:
            n = stack.pop()
            if n.type == "preproc_function_def":
                nm, val = n.child_by_field_name("name"), n.child_by_field_name("value")
                if nm is not None:
                    key = model.text(nm)
                    text = model.text(val) if val is not None else ""
                    lang = model.language
                    plain = "asm" not in text and all(
                        B.register_only(lang, c) or c in B.GENERIC_MATH or c in NO_SYNC_CALLS
                        or parse_type_name(c).is_arithmetic for c in _CALL_IN_TEXT.findall(text))
                    got[key] = got.get(key, True) and plain
                continue
            if n.type in ("function_definition",):
                continue
            stack.extend(n.named_children)
        model.__dict__["_plain_macros"] = got
    return got.get(name, False)


def _barrier_names(model: "FileModel") -> dict[int, str]:
    """Node id of each group barrier call in the file -> its name (its kind)."""
    got = model.__dict__.get("_barrier_names")
    if got is None:
        got = model.__dict__["_barrier_names"] = {b.node.id: b.name for g in model.functions for b in group_barriers(g)}
    return got


def _check_jumps(model: "FileModel", arm: ts.Node, names: dict[int, str]) -> None:
    """Every ``break``/``continue`` in ``arm`` stays in a loop or switch inside it that executes no
    barrier (it cannot cut a sequence of barriers short); no ``goto``."""
    stack = [arm]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("goto_statement", "labeled_statement"):
            raise _Unknown
        if t in ("break_statement", "continue_statement"):
            p = n.parent
            while p is not None and p != arm and not (
                    p.type in _LOOPS or (t == "break_statement" and p.type == "switch_statement")):
                p = p.parent
            if p is None or p == arm:
                raise _Unknown  # leaves the branch
            if not _no_barrier(model, p, names, frozenset()):
                raise _Unknown
        if t in ("lambda_expression", "function_definition") and n is not arm:
            continue
        stack.extend(n.named_children)


def _concat(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    out = {x + y for x in a for y in b}
    if len(out) > _MAX_SEQS or any(len(x) > _MAX_SEQ_LEN for x in out):
        raise _Unknown
    return out


def _returns_in(n: ts.Node) -> bool:
    """A ``return`` inside ``n``, not counting nested lambdas and functions."""
    stack = [n]
    while stack:
        x = stack.pop()
        if x.type == "return_statement":
            return True
        if x.type not in ("lambda_expression", "function_definition") or x is n:
            stack.extend(x.named_children)
    return False


def _stmt_seqs(model: "FileModel", n: ts.Node, names: dict[int, str],
               seen: frozenset[str]) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """(barrier sequences on the ways through the statement ``n`` to its end, those on the ways
    to a ``return``), or :class:`_Unknown`."""
    t = n.type
    if t in ("compound_statement", "else_clause"):
        cur, ret = {()}, set()
        for c in n.named_children:
            nrm, r = _stmt_seqs(model, c, names, seen)
            ret |= _concat(cur, r)
            cur = _concat(cur, nrm)
            if not cur:
                break  # the rest is unreachable
        return cur, ret
    if t in ("expression_statement", "declaration"):
        return _expr_seqs(model, n, names, seen), set()
    if t == "return_statement":
        return set(), _expr_seqs(model, n, names, seen)
    if t == "if_statement":
        cond = n.child_by_field_name("condition")
        before = _expr_seqs(model, cond, names, seen) if cond is not None else {()}
        cons, alt = n.child_by_field_name("consequence"), n.child_by_field_name("alternative")
        nrm, ret = _stmt_seqs(model, cons, names, seen) if cons is not None else ({()}, set())
        if alt is not None:
            n2, r2 = _stmt_seqs(model, alt, names, seen)
            nrm, ret = nrm | n2, ret | r2
        else:
            nrm = nrm | {()}
        return _concat(before, nrm), _concat(before, ret)
    if t in _LOOPS:
        if _no_barrier(model, n, names, seen):
            return {()}, ({()} if _returns_in(n) else set())  # however often it runs
        body = n.child_by_field_name("body")
        heads = [c for c in n.named_children if c != body and c.type != "comment"]
        trips = _constant_trips(model, n)
        if body is None or trips is None or _returns_in(n) or any(
                _expr_seqs(model, h, names, seen) != {()} for h in heads):
            raise _Unknown  # a barrier a number of times the analysis cannot count
        nrm, _ = _stmt_seqs(model, body, names, seen)
        if len(nrm) != 1:
            raise _Unknown
        (one,) = nrm
        if len(one) * trips > _MAX_SEQ_LEN:
            raise _Unknown
        return {one * trips}, set()
    if t in ("comment", "empty_statement", "break_statement", "continue_statement", "function_definition",
             "lambda_expression"):
        return {()}, set()
    # a switch, a preprocessor group, anything else: only when it executes no barrier
    if _no_barrier(model, n, names, seen):
        return {()}, ({()} if _returns_in(n) else set())
    raise _Unknown


def _no_barrier(model: "FileModel", n: ts.Node, names: dict[int, str], seen: frozenset[str]) -> bool:
    """``n`` executes no group barrier on any path (its calls hold none, no waiting inline asm, no
    blanked code)."""
    if opaque_masks(model, n.start_byte, n.end_byte):
        return False
    stack = [n]
    while stack:
        x = stack.pop()
        t = x.type
        if t in ("lambda_expression", "function_definition") and x is not n:
            continue
        if t in ("gnu_asm_expression", "asm_statement") and ASM_WAIT.search(model.text(x)):
            return False
        if t == "call_expression":
            if x.id in names:
                return False
            try:
                if _call_seq(model, x, seen):
                    return False
            except _Unknown:
                return False
        stack.extend(x.named_children)
    return True


def _constant_trips(model: "FileModel", loop: ts.Node) -> int | None:
    f = model.function_at(loop.start_byte)
    for lp in f.loops if f is not None else ():
        if lp.node.id == loop.id:
            if lp.counter_modified or lp.trip_count is None or lp.trip_count < 0:
                return None
            return lp.trip_count
    return None


def _expr_seqs(model: "FileModel", n: ts.Node, names: dict[int, str], seen: frozenset[str]) -> set[tuple[str, ...]]:
    """The barriers an expression or a declaration executes, in order: one sequence, or
    :class:`_Unknown` (a barrier under ``?:``, ``&&`` or ``||``, a call that may hold any)."""
    if opaque_masks(model, n.start_byte, n.end_byte):
        raise _Unknown
    out: list[str] = []
    stack = [n]
    while stack:
        x = stack.pop()
        t = x.type
        if t in ("lambda_expression", "function_definition"):
            continue
        if t in ("gnu_asm_expression", "asm_statement"):
            if ASM_WAIT.search(model.text(x)):
                raise _Unknown
            continue
        if t in _STRUCTURED or t in ("return_statement", "goto_statement", "compound_statement"):
            if x is not n:
                raise _Unknown  # a statement expression: not read here
        if t == "conditional_expression" or (
                t == "binary_expression" and model.text(x.child_by_field_name("operator")) in ("&&", "||")):
            if not _no_barrier(model, x, names, seen):
                raise _Unknown  # a barrier under a condition inside an expression
            continue
        if t == "call_expression":
            if x.id in names:
                out.append(names[x.id])
            else:
                out.extend(_call_seq(model, x, seen))
        stack.extend(reversed(x.named_children))
    if len(out) > _MAX_SEQ_LEN:
        raise _Unknown
    return {tuple(out)}


def _call_seq(model: "FileModel", call: ts.Node, seen: frozenset[str]) -> tuple[str, ...]:
    """The group barriers a call that is no barrier itself executes: none for a built-in that holds
    none, a same-file helper's one sequence (every way through its body), else :class:`_Unknown`."""
    name = model.callee_name(call)
    lang = model.language
    fn = call.child_by_field_name("function")
    method = fn is not None and fn.type == "field_expression"
    if not method:
        known = B.BARRIERS.get(lang, {}).get(name)
        if known is not None and known[0] != "group":
            return ()  # a fence, a SIMD-group barrier
        if (name in NO_SYNC_CALLS or B.register_only(lang, name) or name in B.VALUE_ARG or name in B.GENERIC_MATH
                or name in B.FIXED_RESULT or parse_type_name(name).is_arithmetic):
            return ()
    if not method and _plain_macro(model, name):
        return ()
    g = model.function_by_name.get(name)
    if method or g is None or g.body is None or name in seen or len(seen) > 8 or \
            sum(1 for h in model.functions if h.name == name and h.body is not None) > 1:
        raise _Unknown  # code the file does not show, or overloads
    cache = model.__dict__.setdefault("_call_seq_cache", {})
    if name not in cache:
        names = _barrier_names(model)
        cache[name] = None  # (a recursive call: unknown)
        try:
            _check_jumps(model, g.body, names)
            nrm, ret = _stmt_seqs(model, g.body, names, seen | {name})
            every = nrm | ret
            cache[name] = next(iter(every)) if len(every) == 1 else None
        except (_Unknown, RecursionError):
            cache[name] = None
    if cache[name] is None:
        raise _Unknown
    return cache[name]


def _negation_key(model: "FileModel", cond: ts.Node) -> tuple[str, bool]:
    """(text without parentheses and a leading '!', whether it was negated)."""
    n = unparen(cond)
    negated = False
    while n.type == "unary_expression" and model.text(n.child_by_field_name("operator")) == "!":
        negated = not negated
        n = unparen(n.child_by_field_name("argument"))
    return " ".join(model.text(n).split()), negated


def _enclosing_if_conditions(model: "FileModel", node: ts.Node, stop: ts.Node) -> list[tuple[ts.Node, bool]]:
    """(condition, node is in its then-branch) of the if statements around ``node`` below ``stop``."""
    out = []
    child, p = node, node.parent
    while p is not None and p != stop:
        if p.type == "if_statement":
            c = p.child_by_field_name("condition")
            cons = p.child_by_field_name("consequence")
            alt = p.child_by_field_name("alternative")
            if c is not None and child != c:
                if cons is not None and child == cons:
                    out.append((c, True))
                elif alt is not None and child == alt:
                    out.append((c, False))
        child, p = p, p.parent
    return out


def _exclusive_branches(model: "FileModel", f: Function | None, cond: ts.Node, node: ts.Node) -> bool:
    """An early exit under ``if (!all_threads) { ... if (i >= n) continue; }`` cannot skip a barrier
    under ``if (all_threads) { barrier(); }`` when ``all_threads`` is the same in every thread and
    never written in the function: the two branches never both run (llama.cpp's mul_mat_vec_q3_k)."""
    if f is None or f.body is None:
        return False
    stmt = cond.parent
    while stmt is not None and stmt.type in ("condition_clause", "parenthesized_expression"):
        stmt = stmt.parent
    if stmt is None or stmt.start_byte <= node.start_byte < stmt.end_byte:
        return False  # an enclosing condition, not an earlier exit
    around_exit = _enclosing_if_conditions(model, stmt, f.body)
    around_node = _enclosing_if_conditions(model, node, f.body)
    for c1, then1 in around_exit:
        if model.deps(c1) & {B.LOCAL, B.UNKNOWN_DEP} or (not f.is_entry and _param_divergent(model, f, c1)):
            continue
        key1, neg1 = _negation_key(model, c1)
        for c2, then2 in around_node:
            if c2.start_byte <= stmt.start_byte < c2.parent.end_byte:
                continue  # the exit is inside this if too
            key2, neg2 = _negation_key(model, c2)
            if key1 != key2 or (neg1 ^ (not then1)) == (neg2 ^ (not then2)):
                continue
            if _names_written(model, f, c1):
                continue
            return True
    return False


def _names_written(model: "FileModel", f: Function, cond: ts.Node) -> bool:
    stack = [cond]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is None or model.writes_into(v):
                return True
        elif n.type == "call_expression":
            return True
        stack.extend(n.named_children)
    return False


def _param_divergent(model: "FileModel", f: Function, cond: ts.Node) -> bool:
    params = []
    stack = [cond]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is not None and v.is_param and v.function is f and v in f.params:
                params.append(f.params.index(v))
        stack.extend(n.named_children)
    if not params:
        return False
    if model.function_by_name.get(f.name) is not f:
        return False
    for call in calls_to(model, f.name):
        args = [a for a in model.call_args(call) if a.type != "comment"]
        if any(i < len(args) and B.LOCAL in model.deps(args[i]) for i in params):
            return True
    return False


_SPACE_NAMES = {
    "metal": {"threadgroup": "threadgroup memory", "device": "device memory", "texture": "textures"},
    "cuda": {"threadgroup": "shared memory", "device": "global memory", "texture": "textures"},
    "glsl": {"threadgroup": "shared memory", "device": "buffers", "texture": "images"},
}


def space_names(language: str, spaces: frozenset[str]) -> str:
    """``"shared or global memory"`` for CUDA's {threadgroup, device}, and so on."""
    names = [_SPACE_NAMES[language][s] for s in ("threadgroup", "device", "texture") if s in spaces]
    if not names:
        return "memory"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


# ---- memory touched ----------------------------------------------------------------------------------


def var_bits(model: "FileModel", v: Var) -> int:
    """The memory a use of ``v`` may touch (TG/DEV/TEX bits); ALL when it may point anywhere.
    Memoized per variable (a use costs a dictionary lookup)."""
    cache = model.__dict__.get("_sync_var_bits")
    if cache is None:
        cache = model._sync_var_bits = {}
    got = cache.get(v)
    if got is None:
        got = cache[v] = _var_bits(model, v)
    return got


def _var_bits(model: "FileModel", v: Var) -> int:
    lang, s, kind = model.language, v.address_space, v.type.kind
    if lang == "metal":
        if s in ("threadgroup", "threadgroup_imageblock"):
            return TG
        if s in ("device", "object_data", "ray_data"):
            return DEV
        return TEX if kind == "texture" else 0
    if lang == "cuda":
        if s == "shared":
            return TG
        if s == "global":
            return DEV
        if s == "constant" or v.template_param:
            return 0
        if v.is_param and v.function is not None and v.function.is_entry:
            return DEV if kind == "pointer" else 0
        if kind in ("pointer", "unknown") or _is_reference(v):
            return ALL
        return 0
    if s == "shared":
        return TG
    if s == "buffer":
        return DEV
    if kind == "texture" and "image" in v.type.name:
        return TEX
    return 0


def _is_reference(v: Var) -> bool:
    p = v.node.parent
    return p is not None and p.type == "reference_declarator"


def function_bits(model: "FileModel", f: Function, _seen: frozenset[str] = frozenset()) -> int:
    """Memory a call to ``f`` may touch: its uses of memory variables and its callees' (a call or
    macro the file does not define, inline assembly, a fence or code the front end blanked: all),
    plus ``_VAGUE`` when it uses an undeclared name (no barrier-removal fix across the call)."""
    cache = model.__dict__.setdefault("_sync_function_bits", {})
    if f.name in cache:
        return cache[f.name]
    if f.body is None or f.name in _seen:
        return ALL
    bits = ALL if opaque_masks(model, f.body.start_byte, f.body.end_byte) else 0
    stack: list[tuple[ts.Node, ts.Node | None]] = [(f.body, None)]  # (node, its parent when known)
    while stack and bits & ALL != ALL:
        n, parent = stack.pop()
        if n.type == "identifier":
            b = ident_bits(model, n, parent)
            bits |= b if b or not _vague(model, n, parent) else _VAGUE
        elif n.type == "call_expression":
            callee = model.function_by_name.get(model.callee_name(n))
            if callee is not None and callee is not f:
                bits |= function_bits(model, callee, _seen | {f.name})
            elif callee is None:
                bits |= call_bits(model, n)
        elif n.type in ("gnu_asm_expression", "asm_statement", "lambda_expression"):
            bits = ALL
        stack.extend((c, n) for c in n.named_children)
    cache[f.name] = bits
    return bits


# Front-end masks that blank code the grammar cannot read (an invocation of a macro whose body holds
# braces, such as an inline-PTX ``ldmatrix`` wrapper with a ``{%0, %1}`` register list; a statement
# macro; the untaken half of an ``#if`` split inside an expression): the code is still compiled and
# may touch any memory.
_OPAQUE_MASKS = frozenset({"macro-invocation", "split-expression", "split-header"})


def opaque_masks(model: "FileModel", start: int, end: int) -> list[int]:
    """Start offsets of blanked code (see ``_OPAQUE_MASKS``) in [start, end)."""
    out = []
    for kind in _OPAQUE_MASKS:
        out.extend(mk.start for mk in model.masks_between(start, end, kind))
    return sorted(out)


def call_bits(model: "FileModel", call: ts.Node) -> int:
    """Memory a call to a function the file does not define may touch: none for a built-in that
    computes on registers only, a constructor or a cast; every space for anything else -- an
    unknown call or header macro may wrap inline assembly (``cp.async``, ``ldmatrix``), atomics,
    fences (``__threadfence_block``, ``memoryBarrierShared`` between two barriers) or a helper that
    reaches shared memory through a global. Sampling a texture reads read-only memory: none."""
    lang = model.language
    fn = call.child_by_field_name("function")
    if fn is None:
        return ALL
    if fn.type == "field_expression":  # obj.method(...)
        obj = fn.child_by_field_name("argument")
        v = model.resolve(obj) if obj is not None and obj.type == "identifier" else None
        name = model.callee_name(call)
        if lang == "glsl" and name == "length":
            return 0
        if v is not None and v.type.kind == "texture" and name in ("sample", "get_width", "get_height", "get_depth",
                                                                    "get_num_mip_levels", "get_array_size", "gather"):
            return 0
        if v is not None and v.type.is_arithmetic:
            return 0
        return ALL
    name = model.callee_name(call)
    if not name:
        return ALL
    if B.register_only(lang, name):
        return 0
    if parse_type_name(name).is_arithmetic or name in model.typedefs or name in model.structs \
            or name in _type_names(model):
        return 0  # a constructor or functional cast
    return ALL


def _type_names(model: "FileModel") -> frozenset[str]:
    """Names the file declares variables with, and template type parameters: types, even when a
    header or the build defines them (GLSL's ``D_TYPE data_d[];`` then ``D_TYPE(v)`` is a conversion)."""
    got = model.__dict__.get("_sync_type_names")
    if got is None:
        out = set()
        for vs in model._vars_by_name.values():
            for v in vs:
                if v.template_param:
                    out.add(v.name)
                    continue
                t = v.decl.child_by_field_name("type") if v.decl is not None else None
                if t is not None and t.type in ("type_identifier", "qualified_identifier", "template_type"):
                    out.add(model.text(t).split("<")[0].split("::")[-1].strip())
        got = model._sync_type_names = frozenset(out)
    return got


def ident_bits(model: "FileModel", n: ts.Node, parent: ts.Node | None = None) -> int:
    """Memory a use of identifier ``n`` may touch. An undeclared name (a header's or the including
    file's global, a same-file macro that is not a constant) counts as every space where it is used
    as memory: indexed, dereferenced, a field's base, written, or its address taken. (``parent``:
    ``n.parent`` when the caller has it, which costs time proportional to the node's depth.)"""
    v = model.resolve(n)
    if v is not None:
        return var_bits(model, v) if v.node != n else 0
    p = parent if parent is not None else n.parent
    if p is None or p.type == "call_expression" and p.child_by_field_name("function") == n:
        return 0
    if _is_macro(model, n):
        return ALL
    if not _used_as_memory(n, p):
        return 0
    name = model.text(n)
    if model._builtin(name) is not None or name in model.macros or name in model.enums \
            or name in model.function_by_name:
        return 0
    return ALL


def _used_as_memory(n: ts.Node, p: ts.Node) -> bool:
    """Indexed, dereferenced (``*p``, ``p->x``), written, or a field of it indexed or written. Reading
    a field (``p.n_cols``: GLSL push constants and uniform blocks an include declares) is not.
    (``p``: ``n.parent``.)"""
    t = p.type
    if t == "subscript_expression":
        return p.child_by_field_name("argument") == n
    if t == "pointer_expression":
        return True
    if t == "field_expression":
        if p.child_by_field_name("argument") != n:
            return False
        op = p.child_by_field_name("operator")
        if op is not None and op.type == "->":
            return True
        outer = p.parent
        return outer is not None and (outer.type == "subscript_expression" and outer.child_by_field_name("argument") == p
                                      or _written(p, outer))
    return _written(n, p)


def _written(n: ts.Node, p: ts.Node) -> bool:
    """``n`` (whose parent is ``p``) is assigned or incremented."""
    if p.type == "assignment_expression":
        return p.child_by_field_name("left") == n
    return p.type == "update_expression"


def _vague(model: "FileModel", n: ts.Node, parent: ts.Node | None = None) -> bool:
    """An undeclared name whose meaning the analysis cannot see (a header's constant or macro): the
    barrier-removal fix is not offered across it. (``parent``: ``n.parent`` when the caller has it.)"""
    if model.resolve(n) is not None:
        return False
    p = parent if parent is not None else n.parent
    if p is None or p.type in ("qualified_identifier", "field_expression") and p.child_by_field_name("argument") != n:
        return False
    if p.type == "call_expression" and p.child_by_field_name("function") == n:
        return False
    name = model.text(n)
    return not (model._builtin(name) is not None or name in model.macros or name in model.enums
                or name in model.function_by_name)


def _is_macro(model: "FileModel", ident: ts.Node) -> bool:
    """A name ``#define``d anywhere in the file (also inside a function body, where accessor
    macros such as ``#define AT(i) tile[(i) >> 5][(i) & 31]`` live) that is not a constant."""
    name = model.text(ident)
    return name in macro_names(model) and name not in model.macros


_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include\b", re.M)


def _included_array(model: "FileModel", ident: ts.Node, parent: ts.Node | None = None) -> bool:
    """An array the file indexes but does not declare, in a file that ``#include``s others
    (llama.cpp's soft_max_large1.comp reduces through ``shared FLOAT_TYPE vals[]`` declared in
    soft_max_large_common.glsl): it may be shared memory, so it counts as touching every space.
    (``parent``: ``ident.parent`` when the caller has it.)"""
    p = parent if parent is not None else ident.parent
    if p is None or p.type != "subscript_expression" or p.child_by_field_name("argument") != ident:
        return False
    if model._builtin(model.text(ident)) is not None:
        return False
    has = model.__dict__.get("_sync_has_include")
    if has is None:
        has = model._sync_has_include = any(
            not model.source.in_comment_or_string(mm.start()) for mm in _INCLUDE.finditer(model.source.data))
    return has


def _structured_bindings(model: "FileModel", f: Function) -> frozenset[str]:
    """Names ``f`` declares with structured bindings (``auto [tSG_gD, tSG_sD] = tma_partition(...)``,
    CuTe's shared-memory views): the model has no variables for them, so what they refer to is
    unknown and a use counts as touching every memory space. Found once per file."""
    by_function = model.__dict__.get("_sync_bindings")
    if by_function is None:
        by_function = model._sync_bindings = {}
        if b"[" in model.source.data:
            for d in model.nodes("declaration"):
                for decl in d.children_by_field_name("declarator"):
                    inner = decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
                    if inner is not None and inner.type == "structured_binding_declarator":
                        g = model.function_at(d.start_byte)
                        if g is not None:
                            by_function.setdefault(id(g), set()).update(
                                model.text(c) for c in inner.named_children if c.type == "identifier")
    return frozenset(by_function.get(id(f), ()))


# ---- redundant barriers: structured data-flow -----------------------------------------------------


class Unsupported(Exception):
    """Control flow the analysis does not follow (goto)."""


@dataclass
class Redundancy:
    barrier: Barrier
    side: str  # "before": nothing since the previous barrier/entry; "after": nothing until the next/exit
    edge: bool  # the neighbour on that side may be the kernel's entry/exit
    other: bool  # the neighbour on that side may be another barrier
    orders: frozenset[str]
    understood: bool = True  # that side is fully known: no undeclared name, no access to memory it does not order


def redundant_barriers(model: "FileModel", f: Function) -> list[Redundancy]:
    """Group barriers of kernel ``f`` that separate no access to the memory they order."""
    if f.body is None:
        return []
    # A barrier whose value is used (`n = __syncthreads_count(p)`) computes something: never redundant.
    barriers = {b.node.id: b for b in group_barriers(f)}
    if not barriers:
        return []
    orders = {k: _order_bits(model, b) for k, b in barriers.items()}
    # First without the exchange bits (<< _U: an access at an address every thread shares, which
    # asks for the thread dependence): every other bit of the states is computed bit by bit
    # independently of them, and they only decide whether a barrier found redundant is kept
    # (_execution_exchange). With no barrier found redundant, that is the answer; else the flow
    # runs again with them (most kernels with barriers have none redundant and then never need
    # the file's dependence fixpoint here).
    got = _flows(model, f, orders, exchanges=False)
    if got is None:
        return []
    flow, before, after = got
    if not any(_value_discarded(b.node) and (k in flow.removed or (k in after and not after[k] & orders[k]))
               for k, b in barriers.items()):
        return []
    got = _flows(model, f, orders, exchanges=True)
    if got is None:
        return []
    flow, before, after = got
    out = []
    for k, b in barriers.items():
        o = frozenset(x for x, bit in SPACE_BITS.items() if orders[k] & bit)
        if not _value_discarded(b.node):
            continue
        if k in flow.removed:
            s, other = before[k], after.get(k, _ALLW)
            side = "before"
        elif k in after and not after[k] & orders[k]:
            s, other = after[k], before.get(k, _ALLW)
            side = "after"
        else:
            continue
        if _execution_exchange(s, other, orders[k]):
            continue
        out.append(Redundancy(b, side, bool(s & _EDGE), bool(s & _BAR), o, _understood(s)))
    # Barriers on thread-dependent paths (warp-specialised producer/consumer branches) pair up by
    # count across paths: removing one desynchronises the others (flashinfer's mla_hopper.cuh pairs
    # the producer's `__syncthreads(); __syncthreads();` with the consumer's). Not analysed. (Asked
    # last: it needs the model's thread-dependence fixpoint, which most kernels with barriers, none
    # of them redundant, then never compute.)
    if out and (any(_maybe_divergent(model, b.node) for b in barriers.values()) or any(
            _maybe_divergent(model, call) for call, _ in sync_calls(model, f))):
        return []
    out.sort(key=lambda r: r.barrier.node.start_byte)
    return out


def _execution_exchange(side: int, other: int, orders: int) -> bool:
    """Threads may exchange data across the barrier through writable memory its flags do not order:
    one side indexes it at an address every thread of the group shares (not one that depends on the
    thread), the other side accesses that memory too (Metal: thread 0 writes ``scales[row]`` to device
    memory, a ``mem_threadgroup`` barrier, then every thread reads it). The flags are too weak to
    order that exchange, but the barrier's execution ordering is what makes it work in practice: the
    barrier is not redundant, the right change is stronger flags (``mem_device``). Accesses at each
    thread's own element (``data[gid]`` on both sides) exchange nothing."""
    unordered = ALL & ~orders
    return bool(((side >> _U) & (other >> _XW) | (other >> _U) & (side >> _XW)) & unordered)


def _flows(model: "FileModel", f: Function, orders: dict, exchanges: bool):
    """The barrier flow of ``f``: the flow, what each barrier's predecessors touch (forward; the
    barriers that find nothing to order since the last one are ``flow.removed``) and what its
    successors touch (backward), or None when the body holds what the flow does not follow."""
    try:
        flow = _Flow(model, f, orders, exchanges=exchanges)
        flow.forward(f.body, _EDGE)
        before = dict(flow.seen)
        flow.removed = {k for k, s in before.items() if not s & orders[k]}
        flow.seen = {}
        flow.backward(f.body, _EDGE)
        return flow, before, dict(flow.seen)
    except (Unsupported, RecursionError):
        return None


def _shared_address(model: "FileModel", ident: ts.Node, parent: ts.Node | None = None) -> bool:
    """``ident[i]`` where ``i`` is the same for every thread of the group (``scales[row]`` with
    ``row`` from the group's position). (``parent``: ``ident.parent`` when the caller has it.)"""
    p = parent if parent is not None else ident.parent
    if p is None or p.type != "subscript_expression" or p.child_by_field_name("argument") != ident:
        return False
    idx = subscript_index(p)
    if idx is None:  # `a[]`, `a[i, j]`: not read, so counted as shared (no redundancy claimed across it)
        return True
    deps = model.deps(idx)
    return B.LOCAL not in deps and B.UNKNOWN_DEP not in deps


def _paired_fences(model: "FileModel", f: Function) -> set[int]:
    """GLSL memory barriers written directly before a ``barrier()`` (part of that barrier)."""
    if model.language != "glsl":
        return set()
    mem = {x.node.id for x in f.barriers if x.scope == "memory"}
    out: set[int] = set()
    for b in group_barriers(f):
        stmt = _statement(b.node)
        prev = stmt.prev_named_sibling if stmt is not None else None
        while prev is not None and prev.type == "expression_statement":
            call = unparen(prev.named_children[0]) if prev.named_child_count else None
            if call is None or call.id not in mem:
                break
            out.add(call.id)
            prev = prev.prev_named_sibling
    return out


def _understood(s: int) -> bool:
    """The side of a redundant barrier is fully understood: no undeclared name, and no access to
    writable memory the barrier does not order (reads through ``const`` pointers and ``readonly``
    buffers cannot take part in an exchange). The latter may still rely on the barrier as an execution
    barrier (Metal: thread 0 writes ``scales[row]``, then every thread reads it, across a
    ``mem_threadgroup`` barrier): the barrier's flags are too weak, but removing it makes the race
    certain, so the removal fix is not offered there."""
    return not s & _VAGUE and not (s >> _W) & ALL


def _read_only(model: "FileModel", v: Var) -> bool:
    """``v`` reaches memory that cannot be written through it: ``const T* p`` / ``device const T*``
    (``const`` before the first ``*``), a GLSL ``readonly`` buffer."""
    q = v.qualifiers
    if "readonly" in q:
        return True
    if "const" not in q or v.decl is None:
        return False
    cache = model.__dict__.get("_sync_read_only")  # (per variable: asked at each of its uses)
    if cache is None:
        cache = model._sync_read_only = {}
    got = cache.get(v)
    if got is None:
        text = model.source.data[v.decl.start_byte:v.node.start_byte]
        c = re.search(rb"\bconst\b", text)
        star = text.find(b"*")
        got = cache[v] = c is not None and (star < 0 or c.start() < star)
    return got


def _maybe_divergent(model: "FileModel", node: ts.Node) -> bool:
    """A condition deciding whether ``node`` runs may differ between the threads of a group: it
    depends on the thread (``divergent_conditions``, which knows loops every thread runs equally
    often, such as ``for (t = start + tid; t < end + tid; t += C)``), on values read from shared
    memory, or on a
    value computed by code the file does not define (``cutlass::canonical_warp_group_idx()``)."""
    if divergent_conditions(model, node):
        return True
    for c in control_conditions(model, node):
        if B.UNKNOWN_DEP in model.deps(c) or _opaque_value(model, c, set(), 0):
            return True
    return False


def _opaque_value(model: "FileModel", expr: ts.Node, seen: set[int], depth: int) -> bool:
    """``expr``'s value may come from a call the file does not define (followed through the
    variables it reads, their initialisers and assignments, a few levels deep)."""
    if depth > 6:
        return True
    stack = [expr]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "call_expression":
            name = model.callee_name(n)
            if name not in model.function_by_name and call_bits(model, n) and not _is_barrier_vote(name):
                return True
        elif t == "identifier":
            v = model.resolve(n)
            if v is not None and v.function is not None and not v.is_param and id(v) not in seen:
                seen.add(id(v))
                sources = [v.init] if v.init is not None else []
                for w in model.writes_into(v):
                    r = w.child_by_field_name("right")
                    if r is not None:
                        sources.append(r)
                if any(_opaque_value(model, x, seen, depth + 1) for x in sources):
                    return True
        elif t in ("lambda_expression", "gnu_asm_expression"):
            return True
        stack.extend(n.named_children)
    return False


def _is_barrier_vote(name: str) -> bool:
    return name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or")


def _value_discarded(call: ts.Node) -> bool:
    p = call.parent
    while p is not None and p.type == "parenthesized_expression":
        p = p.parent
    return p is not None and p.type == "expression_statement"


def _order_bits(model: "FileModel", b: Barrier) -> int:
    bits = 0
    for space in effective_orders(model, b):
        bits |= SPACE_BITS.get(space, 0)
    return bits


_PREPROC = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else", "preproc_elifdef")


def _preproc_parts(n: ts.Node) -> tuple[list[ts.Node], ts.Node | None]:
    """Statements of a ``#if`` group and its ``#else``/``#elif`` alternative (either may be compiled)."""
    skip = {x.id for x in (n.child_by_field_name("name"), n.child_by_field_name("condition")) if x is not None}
    alt = n.child_by_field_name("alternative")
    body = [c for c in n.named_children if c.id not in skip and (alt is None or c.id != alt.id)]
    return body, alt


def _join(*states: int | None) -> int | None:
    out = None
    for s in states:
        if s is not None:
            out = s if out is None else out | s
    return out


# Nodes in which no event can lie (no identifier, call, lambda or assembly below them): not walked.
_NO_EVENTS = frozenset(("number_literal", "string_literal", "char_literal", "raw_string_literal", "field_identifier",
                        "primitive_type", "type_identifier", "true", "false", "null", "nullptr", "this", "comment"))


class _Flow:
    def __init__(self, model: "FileModel", f: Function, orders: dict[int, int], exchanges: bool = True) -> None:
        self.m = model
        self.f = f
        self.orders = orders
        self.exchanges = exchanges  # False: no access counts as at a shared address (see redundant_barriers)
        # spaces some barrier of the kernel does not order: only accesses to those can be exchanges
        self.unordered = ALL & ~functools.reduce(operator.and_, orders.values(), ALL)
        self.removed: set[int] = set()
        self.seen: dict[int, int] = {}
        self.sync = synchronising_functions(model)
        self.ctx: list[dict] = []
        self._events: dict[int, list[tuple[str, int]]] = {}
        # (direction, loop node id, state on entry) -> state on exit: a loop's walk depends on nothing
        # else (its breaks and continues stay inside it; what it adds to ``seen`` is an OR of the
        # same states again), so an outer loop's next round does not walk an inner loop it walked with
        # the same entry state
        self._loops: dict[tuple[bool, int, int], int | None] = {}
        self.bindings = _structured_bindings(model, f)
        # fences: a memory barrier touches what it orders, except GLSL's `memoryBarrierShared();`
        # written directly before `barrier()`, which is part of that barrier (effective_orders)
        paired = _paired_fences(model, f)
        self.fences = {b.node.id for b in f.barriers if b.scope == "memory"} - paired
        self.quiet = {b.node.id for b in f.barriers if b.scope == "simd"} | paired  # touch nothing themselves
        self.opaque = opaque_masks(model, f.body.start_byte, f.body.end_byte) if f.body is not None else []
        for start in self.opaque:
            container = f.body.descendant_for_byte_range(start, start)
            while container is not None and container.start_byte == start and container.parent is not None:
                container = container.parent  # a node starting at the blank: its parent holds the gap
            if container is not None and (container.type in _STRUCTURED or container.parent is not None
                                          and container.parent.type == "switch_statement"):
                raise Unsupported  # blanked code between a statement's parts: not followed

    def gap(self, start: int, end: int) -> bool:
        """Blanked code (an opaque macro invocation) starts in [start, end)."""
        if not self.opaque:
            return False
        i = bisect.bisect_left(self.opaque, start)
        return i < len(self.opaque) and self.opaque[i] < end

    # -- events of an expression, in evaluation (source) order
    def events(self, node: ts.Node) -> list[tuple[str, int]]:
        hit = self._events.get(node.id)
        if hit is not None:
            return hit
        out: list[tuple[str, int]] = []
        if self.gap(node.start_byte, node.end_byte):
            out.append(("touch", _ALLW))
        self._collect(node, out, None)
        self._events[node.id] = out
        return out

    def _collect(self, n: ts.Node, out: list[tuple[str, int]], parent: ts.Node | None) -> None:
        """Append the events of ``n`` (whose parent is ``parent``, None when not known)."""
        m = self.m
        t = n.type
        if t == "identifier":
            v = m.resolve(n)
            if v is not None:  # a variable: what ident_bits answers (_included_array and _vague: nothing)
                bits = var_bits(m, v) if v.node != n else 0
                read_only = bits and _read_only(m, v)
            else:
                if parent is None:
                    parent = n.parent
                bits = ident_bits(m, n, parent)
                if not bits and (_included_array(m, n, parent) or m.text(n) in self.bindings):
                    bits = ALL  # (a structured binding is not a variable of the model)
                read_only = False
                if not bits and _vague(m, n, parent):
                    out.append(("touch", _VAGUE))
            if read_only:
                out.append(("touch", bits))
            elif bits:
                shared = bits & self.unordered and self.exchanges and _shared_address(m, n, parent)  # (asks for thread dependence)
                out.append(("touch", bits | bits << _W | (bits << _U if shared else 0)))
            return
        if t in _NO_EVENTS:
            return
        if t in ("lambda_expression", "gnu_asm_expression", "asm_statement"):
            out.append(("touch", _ALLW))
            return
        if t == "goto_statement":
            raise Unsupported
        for c in n.named_children:
            self._collect(c, out, n)
        if t == "call_expression":
            if n.id in self.orders:
                out.append(("barrier", n.id))
                return
            if n.id in self.fences:
                out.append(("touch", _ALLW))
                return
            name = m.callee_name(n)
            callee = m.function_by_name.get(name)
            if name in self.sync or callee is self.f:
                out.append(("touch", _ALLW))
            elif callee is not None:
                bits = function_bits(m, callee)
                if bits:
                    out.append(("touch", bits | (bits & ALL) << _W))
            elif _is_macro(m, n.child_by_field_name("function") or n):
                out.append(("touch", _ALLW))
            elif n.id not in self.quiet:
                bits = call_bits(m, n)
                if bits:
                    out.append(("touch", bits | bits << _W))

    def _apply(self, ev: tuple[str, int], s: int) -> int:
        kind, val = ev
        if kind == "touch":
            if val & _ALLW == _ALLW:
                val |= ALL << _U  # code the analysis cannot see may write anywhere
            return s | val | ((val >> _W) & ALL) << _XW
        if val in self.removed:
            return s
        self.seen[val] = self.seen.get(val, 0) | s
        return (s & ~self.orders[val] & ~(self.orders[val] << _W) & ~_EDGE & ~_VAGUE & ~_EXEC) | _BAR

    # -- forward: state = memory touched since the last barrier ordering it (+ _EDGE: since entry)
    def forward(self, n: ts.Node | None, s: int | None) -> int | None:
        if n is None or s is None:
            return s
        t = n.type
        if t in ("comment", "{", "}", ";"):
            return s
        if t == "compound_statement" or t == "translation_unit":
            return self._forward_seq(n.named_children, s, n.start_byte, n.end_byte)
        if t == "if_statement":
            s = self.forward(n.child_by_field_name("condition"), s)
            a = self.forward(n.child_by_field_name("consequence"), s)
            alt = n.child_by_field_name("alternative")
            b = self.forward(alt, s) if alt is not None else s
            return _join(a, b)
        if t == "else_clause":
            return self._forward_seq(n.named_children, s, n.start_byte, n.end_byte)
        if t in _LOOPS:
            return self._forward_loop(n, s)
        if t == "switch_statement":
            return self._forward_switch(n, s)
        if t == "return_statement":
            for c in n.named_children:
                s = self.forward(c, s)
            return None
        if t == "break_statement":
            self.ctx[-1]["breaks"].append(s) if self.ctx else None
            return None
        if t == "continue_statement":
            loop = next((c for c in reversed(self.ctx) if c["loop"]), None)
            if loop is not None:
                loop["continues"].append(s)
            return None
        if t == "labeled_statement":
            for c in n.named_children:
                if c.type != "statement_identifier":
                    s = self.forward(c, s)
            return s
        if t == "attributed_statement":  # `[[unroll]] for (...)`: the statement after the attributes
            for c in n.named_children:
                if c.type != "attribute_declaration":
                    s = self.forward(c, s)
            return s
        if t == "goto_statement":
            raise Unsupported
        if t in _PREPROC:
            body, alt = _preproc_parts(n)
            a = self._forward_seq(body, s, n.start_byte, alt.start_byte if alt is not None else n.end_byte)
            return _join(a, self.forward(alt, s) if alt is not None else s)
        for ev in self.events(n):
            s = self._apply(ev, s)
        return s

    def _forward_seq(self, children, s: int | None, start: int, end: int) -> int | None:
        """Statements in order; blanked code between them touches every space."""
        pos = start
        for c in children:
            if s is not None and self.gap(pos, c.start_byte):
                s |= _ALLW
            s = self.forward(c, s)
            pos = c.end_byte
        if s is not None and self.gap(pos, end):
            s |= _ALLW
        return s

    def _backward_seq(self, children, s: int, start: int, end: int) -> int:
        pos = end
        for c in reversed(children):
            if self.gap(c.end_byte, pos):
                s |= _ALLW
            s = self.backward(c, s)
            pos = c.start_byte
        if self.gap(start, pos):
            s |= _ALLW
        return s

    def _forward_loop(self, n: ts.Node, s: int) -> int | None:
        key = (True, n.id, s)
        if key in self._loops:
            return self._loops[key]
        out = self._loops[key] = self._forward_loop_walk(n, s)
        return out

    def _forward_loop_walk(self, n: ts.Node, s: int) -> int | None:
        t = n.type
        init = n.child_by_field_name("initializer") if t == "for_statement" else (
            n.child_by_field_name("right") if t == "for_range_loop" else None)
        cond = n.child_by_field_name("condition")
        update = n.child_by_field_name("update")
        body = n.child_by_field_name("body")
        s = self.forward(init, s)
        if s is None:
            return None
        endless = self._endless(n, cond)
        head: int | None = s
        exit_state: int | None = None
        for _ in range(6):
            ctx = {"loop": True, "breaks": [], "continues": []}
            if t == "do_statement":
                self.ctx.append(ctx)
                b = self.forward(body, head)
                self.ctx.pop()
                c = self.forward(cond, _join(b, *ctx["continues"]))
                back = c
                exit_state = _join(None if endless else c, *ctx["breaks"])
            else:
                c = self.forward(cond, head)
                self.ctx.append(ctx)
                b = self.forward(body, c)
                self.ctx.pop()
                back = self.forward(update, _join(b, *ctx["continues"]))
                exit_state = _join(None if endless else c, *ctx["breaks"])
            new_head = _join(s, back)
            if new_head == head:
                break
            head = new_head
        return exit_state

    def _endless(self, n: ts.Node, cond: ts.Node | None) -> bool:
        if n.type == "for_range_loop":
            return False
        if cond is None:
            return n.type == "for_statement"
        inner = cond.named_children[-1] if cond.type in ("parenthesized_expression", "condition_clause") and cond.named_child_count else cond
        v = self.m.const_value(inner)
        return v is not None and bool(v)

    def _cases(self, n: ts.Node) -> list[ts.Node]:
        body = n.child_by_field_name("body")
        return [c for c in body.named_children if c.type == "case_statement"] if body is not None else []

    def _case_statements(self, case: ts.Node) -> list[ts.Node]:
        value = case.child_by_field_name("value")
        return [c for c in case.named_children if c != value and c.type != "comment"]

    def _forward_switch(self, n: ts.Node, s: int) -> int | None:
        c = self.forward(n.child_by_field_name("condition"), s)
        ctx = {"loop": False, "breaks": []}
        self.ctx.append(ctx)
        prev: int | None = None
        has_default = False
        for case in self._cases(n):
            if case.child_by_field_name("value") is None:
                has_default = True
            st = _join(c, prev)
            stmts = self._case_statements(case)
            value = case.child_by_field_name("value")
            st = self._forward_seq(stmts, st, value.end_byte if value is not None else case.start_byte, case.end_byte)
            prev = st
        self.ctx.pop()
        return _join(prev, *ctx["breaks"], None if has_default else c)

    # -- backward: state = memory touched after this point until the next barrier ordering it (+ _EDGE: until exit)
    def backward(self, n: ts.Node | None, s: int) -> int:
        if n is None:
            return s
        t = n.type
        if t in ("comment", "{", "}", ";"):
            return s
        if t == "compound_statement":
            return self._backward_seq(n.named_children, s, n.start_byte, n.end_byte)
        if t == "if_statement":
            a = self.backward(n.child_by_field_name("consequence"), s)
            alt = n.child_by_field_name("alternative")
            b = self.backward(alt, s) if alt is not None else s
            return self.backward(n.child_by_field_name("condition"), a | b)
        if t == "else_clause":
            return self._backward_seq(n.named_children, s, n.start_byte, n.end_byte)
        if t in _LOOPS:
            return self._backward_loop(n, s)
        if t == "switch_statement":
            return self._backward_switch(n, s)
        if t == "return_statement":
            s = _EDGE
            for c in reversed(n.named_children):
                s = self.backward(c, s)
            return s
        if t == "break_statement":
            return self.ctx[-1]["exit"] if self.ctx else s
        if t == "continue_statement":
            loop = next((c for c in reversed(self.ctx) if c["loop"]), None)
            return loop["continue"] if loop is not None else s
        if t == "labeled_statement":
            for c in reversed(n.named_children):
                if c.type != "statement_identifier":
                    s = self.backward(c, s)
            return s
        if t == "attributed_statement":
            for c in reversed(n.named_children):
                if c.type != "attribute_declaration":
                    s = self.backward(c, s)
            return s
        if t == "goto_statement":
            raise Unsupported
        if t in _PREPROC:
            body, alt = _preproc_parts(n)
            a = self._backward_seq(body, s, n.start_byte, alt.start_byte if alt is not None else n.end_byte)
            return a | (self.backward(alt, s) if alt is not None else s)
        for ev in reversed(self.events(n)):
            s = self._apply(ev, s)
        return s

    def _backward_loop(self, n: ts.Node, s: int) -> int:
        key = (False, n.id, s)
        if key in self._loops:
            return self._loops[key]  # type: ignore[return-value]
        out = self._loops[key] = self._backward_loop_walk(n, s)
        return out

    def _backward_loop_walk(self, n: ts.Node, s: int) -> int:
        t = n.type
        init = n.child_by_field_name("initializer") if t == "for_statement" else (
            n.child_by_field_name("right") if t == "for_range_loop" else None)
        cond = n.child_by_field_name("condition")
        update = n.child_by_field_name("update")
        body = n.child_by_field_name("body")
        endless = self._endless(n, cond)
        head = 0  # state before the condition (for/while) or before the body (do)
        for _ in range(6):
            if t == "do_statement":
                c_before = self.backward(cond, head | (0 if endless else s))
                self.ctx.append({"loop": True, "exit": s, "continue": c_before})
                new_head = self.backward(body, c_before)
                self.ctx.pop()
            else:
                upd_before = self.backward(update, head)
                self.ctx.append({"loop": True, "exit": s, "continue": upd_before})
                body_before = self.backward(body, upd_before)
                self.ctx.pop()
                new_head = self.backward(cond, body_before | (0 if endless else s))
            if new_head == head:
                break
            head = new_head
        return self.backward(init, head)

    def _backward_switch(self, n: ts.Node, s: int) -> int:
        self.ctx.append({"loop": False, "exit": s})
        nxt = s
        entries = []
        has_default = False
        for case in reversed(self._cases(n)):
            if case.child_by_field_name("value") is None:
                has_default = True
            value = case.child_by_field_name("value")
            st = self._backward_seq(self._case_statements(case), nxt,
                                    value.end_byte if value is not None else case.start_byte, case.end_byte)
            entries.append(st)
            nxt = st
        self.ctx.pop()
        into = 0 if has_default else s
        for e in entries:
            into |= e
        return self.backward(n.child_by_field_name("condition"), into)


# ---- SIMD-scope reductions -----------------------------------------------------------------------

SIMD_REDUCTIONS = {
    "metal": frozenset("simd_sum simd_product simd_min simd_max simd_and simd_or simd_xor".split()),
    "cuda": frozenset("__reduce_add_sync __reduce_min_sync __reduce_max_sync __reduce_and_sync "
                      "__reduce_or_sync __reduce_xor_sync".split()),
    "glsl": frozenset("subgroupAdd subgroupMul subgroupMin subgroupMax subgroupAnd subgroupOr subgroupXor".split()),
}
SIMD_SHUFFLES = {
    "metal": frozenset("simd_shuffle_down simd_shuffle_xor simd_shuffle_and_fill_down simd_shuffle_rotate_down".split()),
    "cuda": frozenset("__shfl_down_sync __shfl_xor_sync __shfl_down __shfl_xor".split()),
    "glsl": frozenset("subgroupShuffleDown subgroupShuffleXor".split()),
}


def names_simd_reductions(model: "FileModel") -> bool:
    """Whether the file's text names a SIMD-scope reduction or shuffle at all: every reduction
    :func:`group_result_stores` follows starts at a call of one (directly, through a reducing
    helper or a local holding one), so without any it finds none (a text search, no tree walk)."""
    hit = model.__dict__.get("_names_simd_reductions")
    if hit is None:
        data = model.source.data
        hit = model._names_simd_reductions = any(
            n.encode() in data for n in SIMD_REDUCTIONS[model.language] | SIMD_SHUFFLES[model.language])
    return hit


def _writes(model: "FileModel", f: Function) -> list[tuple[Var, ts.Node, ts.Node, bool]]:
    """(variable, right side, statement, combines with the old value) for the locals of ``f``."""
    out = []
    for v in f.vars:
        if v.init is not None:
            out.append((v, v.init, v.decl, False))
    for a, v, right, compound, _ in _assignments(model, f):
        out.append((v, right, a, compound))
    return out


def _assignments(model: "FileModel", f: Function):
    """(assignment, local, right side, combines with the old value, written identifier) for each
    ``=``/``op=`` assignment of a plain identifier that is a local of ``f``."""
    if f.body is None:
        return
    for a in nodes_in(model, "assign", f.body.start_byte, f.body.end_byte):
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        if left is None or right is None or unparen(left).type != "identifier":
            continue
        v = model.resolve(unparen(left))
        if v is None or v.function is not f or v.is_global:
            continue
        op = a.child_by_field_name("operator")
        yield a, v, right, op is not None and model.text(op) != "=", unparen(left)


def reducing_functions(model: "FileModel") -> dict[str, ts.Node]:
    """Same-file helpers whose returned value is a SIMD-scope reduction (``warp_reduce(v)``)."""
    done = getattr(model, "_sync_reducers_done", None)
    if done is not None:
        return done
    model._sync_reducers = {}
    for _ in range(4):
        changed = False
        for f in model.functions:
            if f.is_entry or f.body is None or f.name in model._sync_reducers:
                continue
            if f.name in synchronising_functions(model):
                continue  # it synchronises the group: its result combines every SIMD group (block_reduce)
            if not _may_reduce(model, f):
                continue
            reduced = _compute_reductions(model, f)
            for r in _returns(f.body):
                origin = _reduction_in(model, f, r, reduced, None)
                if origin is not None:
                    model._sync_reducers[f.name] = origin
                    changed = True
                    break
        if not changed:
            break
    model._sync_reducers_done = model._sync_reducers
    return model._sync_reducers


def _returns(body: ts.Node) -> list[ts.Node]:
    out, stack = [], [body]
    while stack:
        n = stack.pop()
        if n.type == "return_statement":
            out.extend(c for c in n.named_children if c.type != "comment")
        elif n.type not in ("function_definition", "lambda_expression"):
            stack.extend(n.named_children)
    return out


def simd_reductions(model: "FileModel", f: Function) -> dict[Var, ts.Node]:
    """Locals of ``f`` holding the result of a SIMD-scope reduction -> the reduction call
    (``simd_sum(x)``, ``subgroupAdd(x)``, a call to a reducing helper, or the first shuffle of a
    ``v += __shfl_down_sync(mask, v, o)`` tree). Follows copies and arithmetic on such values."""
    reducing_functions(model)
    cache = model.__dict__.setdefault("_sync_reduced", {})
    if f.name not in cache:
        cache[f.name] = _compute_reductions(model, f) if _may_reduce(model, f) else {}
    return cache[f.name]


def _may_reduce(model: "FileModel", f: Function) -> bool:
    """Whether the text of ``f`` names a SIMD reduction, a shuffle or a reducing helper found so far:
    every reduction :func:`_reduction_in` finds starts at a call of one of them in ``f`` (a local
    holds one only after such a call was found), so without any :func:`_compute_reductions` finds
    nothing and no return carries one (a text search instead of walks of every write)."""
    data = model.source.data[f.node.start_byte:f.node.end_byte]
    lang = model.language
    return any(n.encode() in data for n in SIMD_REDUCTIONS[lang] | SIMD_SHUFFLES[lang]) or any(
        n.encode() in data for n in getattr(model, "_sync_reducers", {}))


def _compute_reductions(model: "FileModel", f: Function) -> dict[Var, ts.Node]:
    """Locals holding a reduction (see :func:`simd_reductions`); each write that carries one is kept
    too (``model._sync_write_origins``, by the dependence model's write key), so that a use the
    reaching definitions decide sees only the writes that reach it (``s = warp_sum(x); s =
    block_stage(s);``: the store after the second write stores no SIMD-only value)."""
    reduced: dict[Var, ts.Node] = {}
    origins = model.__dict__.setdefault("_sync_write_origins", {})
    by_var = model.__dict__.setdefault("_sync_var_writes", {})
    writes = _writes(model, f)
    for v, _, stmt, _ in writes:
        by_var.setdefault(id(v), []).append((stmt.start_byte, (id(v), stmt.id)))
    # The walk of a right side reaches the same nodes every round until it finds a reduction (only
    # what the variables it reads hold changes): a write whose walk found none and reached no variable
    # now holding one finds none again, and is not walked again.
    reached: dict[int, set[Var]] = {}  # write index -> the variables its last walk reached
    selves: dict[int, Var | None] = {}
    for _ in range(8):
        changed = False
        for i, (v, rhs, stmt, combines) in enumerate(writes):
            if (id(v), stmt.id) in origins:
                continue
            seen = reached.get(i)
            if seen is not None and not any(x in reduced for x in seen):
                continue
            if i not in selves:
                selves[i] = v if combines or mentions(model, rhs, v) else None
            seen = reached[i] = set()
            origin = _reduction_in(model, f, rhs, reduced, selves[i], seen)
            if origin is not None:
                origins[(id(v), stmt.id)] = origin
                reduced.setdefault(v, origin)
                changed = True
        if not changed:
            break
    return reduced


def _reduction_of_use(model: "FileModel", v: Var, use: ts.Node, reduced: dict[Var, ts.Node]) -> ts.Node | None:
    """The reduction ``v`` holds at ``use``: from the writes that reach it when the reaching
    definitions decide them, else from any of its writes."""
    flow = model.write_flow
    keys = flow.reaching(v, use) if flow is not None else None
    origins = model.__dict__.get("_sync_write_origins", {})
    if keys is None:
        # Undecided (the variable was passed to a call that may take it by reference, ...): the
        # last write before the use in the text must carry the reduction. A later `s = stage(s)`
        # through code the file does not show leaves the value unknown, and unknown is silence.
        before = [w for w in model.__dict__.get("_sync_var_writes", {}).get(id(v), ()) if w[0] < use.start_byte]
        return origins.get(max(before)[1]) if before else reduced.get(v)
    return next((origins[k] for k in keys if k in origins), None)


def _reduction_in(model: "FileModel", f: Function, expr: ts.Node, reduced: dict[Var, ts.Node],
                  self_var: Var | None, reached: set[Var] | None = None) -> ts.Node | None:
    """The reduction a value computed by ``expr`` carries, if any. A shuffle counts as one when the
    value it shuffles is ``self_var`` (the tree ``v += shuffle_down(v, o)``). ``reached``, when
    given, collects the variables the walk reads (the nodes it visits do not depend on ``reduced``)."""
    lang = model.language
    stack = [expr]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "identifier":
            v = model.resolve(n)
            if v is not None and reached is not None:
                reached.add(v)
            if v is not None and v in reduced:
                origin = _reduction_of_use(model, v, n, reduced)
                if origin is not None:
                    return origin
            continue
        if t == "subscript_expression":
            base = model.base_var(n)
            if base is not None and base.address_space is not None:
                continue  # a load from memory: not the reduced register value
        if t == "call_expression":
            name = model.callee_name(n)
            if name in SIMD_REDUCTIONS[lang]:
                return n
            if name in SIMD_SHUFFLES[lang] and self_var is not None:
                value = _shuffled(model, n, name)
                if value is not None and mentions(model, value, self_var):
                    return n
            helper = getattr(model, "_sync_reducers", {}).get(name)
            if helper is not None and name != f.name:
                return n
            if not _passes_simd_values(model, n, name):
                continue  # its result is not the argument's lanes: a block-wide stage, or unknown code
        stack.extend(reversed(n.named_children))
    return None


def _passes_simd_values(model: "FileModel", call: ts.Node, name: str) -> bool:
    """Whether a SIMD-reduced argument of ``call`` is still only its SIMD group's value in the
    result: a built-in that computes on registers (``fmaxf(s, 0.f)``, a conversion) or a same-file
    helper that does not synchronise the group. A helper that does (``block_reduce(warp_sum(v))``:
    partials through shared memory, a barrier, a second pass) combines every SIMD group, and a call
    into code the file does not show may do the same: the value is not a SIMD-only result."""
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "field_expression":
        return False  # a method of an object (`cub::BlockReduce(...).Sum(v)`): unknown
    if name in model.function_by_name:
        return name not in synchronising_functions(model)
    return B.register_only(model.language, name) or parse_type_name(name).is_arithmetic


_SIMD_INDEX_ROLES = frozenset({"simdgroup_index_in_threadgroup", "simdgroups_per_threadgroup"})


def spans_several_simd_groups(model: "FileModel", f: Function, width: int) -> bool:
    """Evidence in ``f`` that its group holds several SIMD groups: a group barrier (or a call to a
    helper with one), a SIMD-group index (``simdgroup_index_in_threadgroup``, ``gl_SubgroupID``,
    ``gl_NumSubgroups``, ``threadIdx.x / 32``, ``threadIdx.x >> 5``, ``/ warpSize``)."""
    found = simd_group_evidence(model, f, width)
    return found is True or any(B.LOCAL in model.deps(left) for left in found)


def simd_group_evidence(model: "FileModel", f: Function, width: int) -> "bool | list[ts.Node]":
    """:func:`spans_several_simd_groups` in two steps: True when ``f`` holds evidence that needs no thread
    dependence, else the dividends of its divisions by the SIMD width (``x / 32``, ``x >> 5``): evidence
    when one depends on the thread (which asks for the file's dependence fixpoint); none: no evidence."""
    if group_barriers(f) or sync_calls(model, f):
        return True
    if any(p.role in _SIMD_INDEX_ROLES for p in f.params):
        return True
    if f.body is None:
        return []
    shift = width.bit_length() - 1
    body = f.body
    start, end = body.start_byte, body.end_byte
    data = model.source.data
    # (found from the text and the model's captures, not by a walk of every node of the body)
    for name in (b"gl_SubgroupID", b"gl_NumSubgroups"):
        pos = data.find(name, start, end)
        while pos >= 0:
            n = body.descendant_for_byte_range(pos, pos + len(name))
            if n is not None and n.type == "identifier" and n.start_byte == pos and n.end_byte == pos + len(name) \
                    and model.resolve(n) is None:
                return True
            pos = data.find(name, pos + 1, end)
    out = []
    for n in nodes_in(model, "binary", start, end):
        op = model.text(n.child_by_field_name("operator"))
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if op in ("/", ">>") and left is not None and right is not None:
            rv = model.const_value(right)
            if (op == "/" and (rv == width or model.text(right) == "warpSize")) or (op == ">>" and rv == shift):
                out.append(left)
    return out


@dataclass
class GroupStore:
    node: ts.Node  # the assignment
    target: ts.Node  # its left side
    reduction: ts.Node  # the reduction call the stored value comes from
    space: str  # "device" | "threadgroup"


def group_result_stores(model: "FileModel", f: Function, width: int,
                        gs: "GroupSize | None" = None) -> list[GroupStore]:
    """Stores at addresses that are the same for every thread of the group whose value, in a thread
    that stores it, is one SIMD group's reduction and nothing that could combine the others.

    The candidates are the stores whose value may carry a reduction at all; each is then decided
    per class of threads (:func:`~shaderlint.model.lanes.thread_function`: the threads that
    take the same branches on their index, among the group's threads or 1024; all of them one class,
    deciding nothing, when the group may have more than one dimension): for a class that
    runs the store, :class:`_ThreadValues` follows the writes of the stored value that can reach it
    on the branches those threads take, through copies, register arithmetic and same-file helpers.
    The value is *group-wide* when some reaching value may combine SIMD groups: a reduction over
    values read from threadgroup memory (a helper's too, ``warp_sum(get(lane))``) or run by one
    SIMD group only, a read of threadgroup memory, a helper that synchronises the group, a call the
    file does not show. A store is reported with the SIMD-only reductions it stores when a class
    that certainly runs it (``if (threadIdx.x == 0)``) stores such a value and nothing group-wide,
    or when every class that may run it does (``if (subgroupElect())``)."""
    out: list[GroupStore] = []
    if f.body is None:
        return out
    candidates = []
    for a, left, right, space in reduction_stores(model, f):
        deps = _address_deps(model, left)
        if B.LOCAL in deps or B.UNKNOWN_DEP in deps:
            continue  # one slot per thread or SIMD group (`partial[warp] = v`): not the group's result
        candidates.append((a, left, right, space))
    if not candidates:
        return out
    threads = min(gs.total if gs is not None else 1024, 1024)
    classes = _thread_classes(model, f, width, threads, decide=not _maybe_multidimensional(model, f, gs))
    if len(classes) > _MAX_CLASSES:
        return out  # threads told apart one by one (`if (tid == 17)`, generated code): too costly to follow
    for a, left, right, space in candidates:
        if _under_group_size_test(model, a, width):
            continue  # e.g. after `if (ntg > N_SIMDWIDTH) { ...; return; }`: run when the group is one SIMD group
        certain_bad = False
        every_bad = True
        found: dict[int, ts.Node] = {}
        bad: dict[int, ts.Node] = {}
        for cls in classes:
            try:
                runs = cls.runs(a)
                if runs is False:
                    continue
                simd, wide = cls.value(right)
            except RecursionError:  # (nesting or chains of writes deeper than Python's stack)
                runs, simd, wide = None, {}, True
            if simd and not wide:
                bad.update(simd)
                if runs:
                    certain_bad = True
                    found.update(simd)
            else:
                every_bad = False
        if not certain_bad and every_bad:
            found = bad
        for n in sorted(found.values(), key=lambda n: n.start_byte):
            if not _under_group_size_test(model, n, width):
                out.append(GroupStore(a, left, n, space))
    return out


def reduction_stores(model: "FileModel", f: Function) -> list[tuple[ts.Node, ts.Node, ts.Node, str]]:
    """(assignment, left side, right side, "threadgroup" | "device") for the stores in ``f`` to
    threadgroup or device memory whose value may carry a SIMD-scope reduction: what
    :func:`group_result_stores` decides on, without the thread dependence of their addresses (none:
    no group result stored, and no question asked of the dependence fixpoint). Memoized per function."""
    cache = model.__dict__.setdefault("_sync_reduction_stores", {})
    got = cache.get(id(f))
    if got is not None:
        return got
    reducing_functions(model)
    reduced = simd_reductions(model, f)
    got = []
    if f.body is not None:
        for a in nodes_in(model, "assign", f.body.start_byte, f.body.end_byte):
            left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
            if left is None or right is None:
                continue
            base = model.base_var(left)
            if base is None:
                continue
            bits = var_bits(model, base)
            space = "threadgroup" if bits == TG else "device" if bits == DEV else None
            if space is None:
                continue
            if _reduction_in(model, f, right, reduced, None) is None:
                continue
            got.append((a, left, right, space))
    cache[id(f)] = got
    return got


_GROUP_SHAPE_ROLES = frozenset({"threads_per_threadgroup", "simdgroups_per_threadgroup", "threads_per_simdgroup"})
_GROUP_SHAPE_NAMES = ("blockDim", "gl_WorkGroupSize", "gl_NumSubgroups")
_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _under_group_size_test(model: "FileModel", node: ts.Node, width: int) -> bool:
    """Whether ``node`` runs only on one side of a test of the group's size (``if (ntg >
    N_SIMDWIDTH) { …; return; }``, ``if (block_size > WARP_SIZE)``, ``if (blockDim.x <= 32)``,
    ``nsg > 1``): code specialised for groups of one SIMD group, or for wider ones, where the
    analysis does not know which one runs. A comparison counts when one side is a quantity of the
    group's shape and the other a constant, or one side the SIMD width and the other the same in
    every thread of the group."""
    from shaderlint.model.lanes import WIDTH_NAMES  # noqa: PLC0415

    for cond in control_conditions(model, node):
        stack = [cond]
        while stack:
            n = stack.pop()
            if n.type == "binary_expression" and model.text(n.child_by_field_name("operator")) in _COMPARISONS:
                sides = [unparen(n.child_by_field_name("left")), unparen(n.child_by_field_name("right"))]
                for x, y in (sides, sides[::-1]):
                    if x is None or y is None:
                        continue
                    if _group_shape(model, x) and model.const_value(y) is not None:
                        return True
                    if (model.const_value(x) == width or model.text(x) in WIDTH_NAMES) \
                            and model.const_value(y) is None and B.LOCAL not in model.deps(y):
                        return True
                continue
            stack.extend(n.named_children)
    return False


def _group_shape(model: "FileModel", node: ts.Node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is None and model.text(n) in _GROUP_SHAPE_NAMES:
                return True
            if v is not None and v.is_param and v.role in _GROUP_SHAPE_ROLES:
                return True
        stack.extend(n.named_children)
    return False


_OTHER_AXES = re.compile(rb"\b(?:threadIdx\s*\.\s*[yz]|gl_LocalInvocationID\s*\.\s*[yz]|gl_WorkGroupSize\s*\.\s*[yz])\b")


def _maybe_multidimensional(model: "FileModel", f: Function, gs: "GroupSize | None") -> bool:
    """The group may have threads along y or z: declared so, or its kernel reads their index. Then
    the index along x (``threadIdx.x``, ``gl_LocalInvocationID.x``) is not the thread's linear index,
    which decides its SIMD group, and no condition is evaluated. (Metal's indices that are evaluated
    are linear: ``thread_index_in_threadgroup``, the SIMD-group ones, a scalar position.)"""
    if model.language == "metal":
        return False  # (the indices evaluated are linear there; a vector position is not evaluated)
    if gs is not None and gs.exact:
        return gs.dims[1] > 1 or gs.dims[2] > 1
    return _OTHER_AXES.search(model.source.data, f.node.start_byte, f.node.end_byte) is not None


def _thread_classes(model: "FileModel", f: Function, width: int, threads: int,
                    decide: bool = True) -> list["_ThreadValues"]:
    """The threads ``0 .. threads-1`` grouped by the branches they take: one :class:`_ThreadValues`
    per distinct vector of decisions on the function's ``if``/``?:`` conditions (one class deciding
    nothing without ``decide``)."""
    from shaderlint.model.lanes import thread_function  # noqa: PLC0415

    conds: list[ts.Node] = []
    stack = [f.body] if decide else []
    while stack:
        n = stack.pop()
        if n.type in ("if_statement", "conditional_expression"):
            c = n.child_by_field_name("condition")
            if c is not None:
                conds.append(c)
        if n.type not in ("lambda_expression", "function_definition") or n == f.body:
            stack.extend(n.named_children)
    fns = []
    for c in conds:
        fn = thread_function(model, c, width)
        if fn is not None:
            fns.append((c.id, fn))
    groups: dict[tuple, list[int]] = {}
    vecs = []
    for t in range(threads):
        vec = tuple(None if (r := fn(t)) is None else bool(r) for _, fn in fns)
        vecs.append(vec)
        groups.setdefault(vec, []).append(t)
    decisions = [{cid: d for (cid, _), d in zip(fns, vec) if d is not None} for vec in groups]
    shared: dict = {"members": list(groups.values()), "decisions": decisions, "width": width,
                    "cids": [cid for cid, _ in fns], "vecs": vecs, "simd_views": {},
                    "memo": {}, "busy": set(), "done": set(), "changed": False}
    return [_ThreadValues(model, f, dec, shared, members) for dec, members in zip(decisions, groups.values())]


_NOTHING: tuple[dict[int, ts.Node], bool] = ({}, False)
_MAX_CHAIN = 100  # writes followed one inside another (each costs a few Python frames)
_MAX_CLASSES = 64  # classes of threads one store is decided for (the real-code corpus needs 9 at most)


class _ThreadValues:
    """What a local holds at a use, for the threads of one class (see :func:`group_result_stores`):
    which writes reach it on the branches they take, and whether the value is one SIMD group's
    reduction (which ones) or may combine SIMD groups (group-wide)."""

    def __init__(self, model: "FileModel", f: Function, decisions: dict[int, bool], shared: dict,
                 members: list[int], simd_group: int | None = None):
        self.m, self.f, self.decisions, self.shared = model, f, decisions, shared
        self.members = members
        self.simd_group = simd_group  # set on the view of one whole SIMD group (see _simd_views)
        self.width = shared["width"]
        if "writes" not in shared:
            shared["writes"] = _local_writes(model, f)
        self.writes: dict[int, list[tuple[ts.Node, ts.Node | None, bool, ts.Node]]] = shared["writes"]
        self._reach: dict[int, list | None] = {}
        # (shared by every view: a fixpoint pass runs through the SIMD-group views too)
        self._memo: dict[tuple[int, int], tuple[dict[int, ts.Node], bool]] = shared["memo"]
        self._busy: set[tuple[int, int]] = shared["busy"]
        self._done: set[tuple[int, int]] = shared["done"]

    def _simd_views(self) -> list["_ThreadValues"]:
        """Views of the SIMD groups these threads belong to, deciding only the conditions every lane
        of the group decides alike: a reduction combines the values of all of its lanes, whatever
        branch this thread took (``warp_sum(lane < 8 ? partial[lane] : 0.0f)`` reads the partials
        in lanes 0-7 even for lane 20)."""
        if self.simd_group is not None:
            return [self]
        sh, w = self.shared, self.width
        out, seen = [], set()
        for g in sorted({t // w for t in self.members}):
            view = sh["simd_views"].get(g)
            if view is None:
                vecs = sh["vecs"][g * w:(g + 1) * w]
                dec = {}
                for i, cid in enumerate(sh["cids"]):
                    vals = {v[i] for v in vecs}
                    if len(vals) == 1 and None not in vals:
                        dec[cid] = vals.pop()
                key = tuple(sorted(dec.items()))  # SIMD groups deciding alike share one view
                view = sh["simd_views"].get(key)
                if view is None:
                    view = sh["simd_views"][key] = _ThreadValues(self.m, self.f, dec, sh, [], g)
                view.members.extend(range(g * w, g * w + len(vecs)))
                sh["simd_views"][g] = view
            if id(view) not in seen:
                seen.add(id(view))
                out.append(view)
        return out

    # ---- decisions ---------------------------------------------------------------------------
    def decide(self, cond: ts.Node | None) -> bool | None:
        return self.decisions.get(cond.id) if cond is not None else None

    def _against(self, p: ts.Node, child: ts.Node) -> bool | None:
        return _against(self.decisions, p, child)

    def runs(self, node: ts.Node) -> bool | None:
        """Whether these threads run ``node``: False when a branch they take avoids it or an exit
        they take comes first, True when every branch on the way is decided their way."""
        sure = True
        child, p = node, node.parent
        stop = self.f.node
        while p is not None and p != stop:
            if p.type in ("if_statement", "conditional_expression"):
                a = self._against(p, child)
                if a:
                    return False
                if a is None:
                    sure = False
            elif p.type == "compound_statement":
                for s in p.named_children:
                    if s == child or s.start_byte >= child.start_byte:
                        break
                    e = self._exits(s)
                    if e:
                        return False
                    if e is None:
                        sure = False
            child, p = p, p.parent
        return True if sure else None

    def _exits(self, s: ts.Node) -> bool | None:
        """``s`` certainly leaves (``return``/``break``/``continue``) for these threads: True; may: None."""
        t = s.type
        if t in ("return_statement", "break_statement", "continue_statement"):
            return True
        if t == "compound_statement":
            maybe = False
            for c in s.named_children:
                e = self._exits(c)
                if e:
                    return True
                maybe = maybe or e is None
            return None if maybe else False
        if t == "if_statement":
            d = self.decide(s.child_by_field_name("condition"))
            cons, alt = s.child_by_field_name("consequence"), _else_body(s)
            a = self._exits(cons) if cons is not None else False
            b = self._exits(alt) if alt is not None else False
            if d is True:
                return a
            if d is False:
                return b
            if a and b:
                return True
            return None if (a is not False or b is not False) else False
        if t in ("expression_statement", "declaration", "comment"):
            return False
        # loops, switch: a `return` inside may leave; a `break`/`continue` stays inside
        return None if _returns_in(s) else False

    def _executes(self, node: ts.Node) -> bool:
        return _executes_with(node, self.f.node, self.decisions)

    # ---- reaching writes ---------------------------------------------------------------------
    def reaching(self, var: Var, use: ts.Node) -> list | None:
        """The writes of ``var`` (entries of ``self.writes``) that can reach ``use`` for these
        threads; None when that cannot be told (aliases, ``goto``, a ``switch``, a lambda)."""
        if use.id in self._reach:
            return self._reach[use.id]
        res = self._reaching(var, use)
        self._reach[use.id] = res
        return res

    def _reaching(self, var: Var, use: ts.Node) -> list | None:
        ws = self.writes.get(id(var))
        if not ws:
            return []  # never written: its value on entry (a kernel argument, or nothing)
        flow = self.m.write_flow
        if flow is None or not flow.tracks(var):
            return None
        out: list = []
        loops: list[ts.Node] = []
        child, p = use, use.parent
        stop = self.f.node
        done = False
        while p is not None and p != stop and not done:
            t = p.type
            if t in ("lambda_expression", "switch_statement", "case_statement"):
                return None
            if t in ("if_statement", "conditional_expression"):
                if self._against(p, child):
                    return []  # these threads never get here
            elif t in _LOOPS:
                if t == "do_statement" and child == p.child_by_field_name("condition"):
                    return None
                loops.append(p)
                init = p.child_by_field_name("initializer") if t == "for_statement" else None
                if init is not None and child != init:
                    w, done = self._scan(var, init, ws)
                    out.extend(w)
            elif t == "compound_statement":
                for s in reversed(p.named_children):
                    if s.start_byte >= child.start_byte:
                        continue
                    w, done = self._scan(var, s, ws)
                    out.extend(w)
                    if done:
                        break
            child, p = p, p.parent
        for loop in loops:
            out.extend(w for w in ws if loop.start_byte <= w[0].start_byte < loop.end_byte and self._executes(w[0]))
        seen: set[int] = set()
        return [w for w in out if not (w[0].id in seen or seen.add(w[0].id))]

    def _scan(self, var: Var, s: ts.Node, ws: list) -> tuple[list, bool]:
        """Walking back over statement ``s``: the writes of ``var`` in it that can reach its end for
        these threads, and whether every path through it ends there (a plain ``var = …;`` or a
        certain exit), so that nothing before it reaches past it."""
        t = s.type
        if t == "expression_statement":
            e = unparen(s.named_children[0]) if s.named_child_count else None
            if e is not None and e.type == "assignment_expression" and plain_assignment(self.m, var, e):
                return [w for w in ws if w[0].id == e.id], True
        elif t == "declaration":
            if var.decl.id == s.id and var.init is not None:
                return [w for w in ws if w[0].id == s.id], True
        elif t == "compound_statement":
            acc: list = []
            for c in reversed(s.named_children):
                w, stop = self._scan(var, c, ws)
                acc.extend(w)
                if stop:
                    return acc, True
            return acc, False
        elif t == "if_statement":
            cond = s.child_by_field_name("condition")
            d = self.decide(cond)
            cons, alt = s.child_by_field_name("consequence"), _else_body(s)
            in_cond = self._within(ws, cond) if cond is not None else []
            a = self._scan(var, cons, ws) if cons is not None and d is not False else ([], False)
            b = self._scan(var, alt, ws) if alt is not None and d is not True else ([], False)
            if d is True:
                return a[0] + in_cond, a[1]
            if d is False:
                return b[0] + in_cond, b[1]
            return a[0] + b[0] + in_cond, a[1] and b[1]
        elif t in ("return_statement", "break_statement", "continue_statement"):
            return [], True
        return self._within(ws, s), False

    def _within(self, ws: list, s: ts.Node) -> list:
        return [w for w in ws if s.start_byte <= w[0].start_byte < s.end_byte and self._executes(w[0])]

    # ---- values ------------------------------------------------------------------------------
    def value(self, expr: ts.Node) -> tuple[dict[int, ts.Node], bool]:
        """(the SIMD-only reductions ``expr`` may carry, by node id; whether it may be group-wide)."""
        res = _NOTHING
        for _ in range(8):  # loops: writes that reach themselves, to a fixpoint
            self.shared["changed"] = False
            self._done.clear()
            res = self._expr(expr, None)
            if not self.shared["changed"]:
                break
        return res

    def _write(self, w) -> tuple[dict[int, ts.Node], bool]:
        node, rhs, combines, target = w
        key = (id(self), node.id)
        if key in self._busy or key in self._done:
            return self._memo.get(key, _NOTHING)
        if len(self._busy) >= _MAX_CHAIN:
            return {}, True  # a chain of writes too long to follow (generated code): unknown
        self._busy.add(key)
        try:
            if rhs is None:  # handed to a call the file does not show, which may write it
                res = ({}, True)
            else:
                var = self.m.resolve(target) if target.type == "identifier" else None
                simd, wide = self._expr(rhs, var)
                if combines and target.type == "identifier" and var is not None:
                    ps, pw = self._ident(var, target)
                    simd, wide = {**simd, **ps}, wide or pw
                res = (simd, wide)
        finally:
            self._busy.discard(key)
        self._done.add(key)
        old = self._memo.get(key)
        if old is not None:
            res = ({**old[0], **res[0]}, old[1] or res[1])  # (only grows: the fixpoint ends)
        if old is None or old[0].keys() != res[0].keys() or old[1] != res[1]:
            self._memo[key] = res
            self.shared["changed"] = True
        return self._memo[key]

    def _ident(self, var: Var, use: ts.Node) -> tuple[dict[int, ts.Node], bool]:
        ws = self.reaching(var, use)
        if ws is None:
            return {}, True  # cannot tell which value: it may be anything
        simd: dict[int, ts.Node] = {}
        wide = False
        for w in ws:
            s, wd = self._write(w)
            simd.update(s)
            wide = wide or wd
        return simd, wide

    def _expr(self, expr: ts.Node, self_var: Var | None) -> tuple[dict[int, ts.Node], bool]:
        m, lang = self.m, self.m.language
        simd: dict[int, ts.Node] = {}
        wide = False
        stack = [expr]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "identifier":
                v = m.resolve(n)
                if v is None:
                    continue
                if var_bits(m, v) & TG and v.address_space is not None:
                    wide = True  # a threadgroup scalar
                    continue
                if v.is_global or v.address_space is not None or v.function is not self.f or v.dims:
                    continue  # kernel arguments, constants; local arrays are not followed (as before)
                s, wd = self._ident(v, n)
                simd.update(s)
                wide = wide or wd
                continue
            if t in ("subscript_expression", "field_expression"):
                base = m.base_var(n)
                if base is not None and base.address_space is not None:
                    if var_bits(m, base) & TG:
                        wide = True  # read from threadgroup memory: may hold every SIMD group's part
                    continue
            if t == "conditional_expression":
                d = self.decide(n.child_by_field_name("condition"))
                for side, keep in (("consequence", d is not False), ("alternative", d is not True)):
                    c = n.child_by_field_name(side)
                    if c is not None and keep:
                        stack.append(c)
                continue
            if t == "call_expression":
                name = m.callee_name(n)
                helper = getattr(m, "_sync_reducers", {}).get(name) if name != self.f.name else None
                if name in SIMD_REDUCTIONS[lang] or helper is not None:
                    s, wd = self._reduction(n, m.call_args(n), helper_name=name if helper is not None else None)
                elif name in SIMD_SHUFFLES[lang] and self_var is not None and (value := _shuffled(m, n, name)) is not None \
                        and mentions(m, value, self_var):
                    s, wd = self._reduction(n, [value], helper_name=None)
                elif _passes_simd_values(m, n, name):
                    f2 = m.function_by_name.get(name)
                    if f2 is not None and B.UNKNOWN_DEP in m.intrinsic_deps.get(f2, frozenset()):
                        wide = True  # a helper returning what it read from threadgroup memory (`get(lane)`)
                    fn = n.child_by_field_name("arguments")
                    if fn is not None:
                        stack.extend(reversed(fn.named_children))
                    continue
                else:
                    wide = True  # synchronises the group, or code the file does not show: may combine
                    continue
                simd.update(s)
                wide = wide or wd
                continue
            stack.extend(reversed(n.named_children))
        return simd, wide

    def _reduction(self, call: ts.Node, inputs: list[ts.Node],
                   helper_name: str | None) -> tuple[dict[int, ts.Node], bool]:
        """A SIMD-scope reduction: group-wide when what it combines may be (a second level over
        partial results), when the helper computing it reads threadgroup memory itself, or when one
        SIMD group at most runs it over data that is not already one SIMD group's reduction (that
        group walks all of the data or the partials); else one SIMD group's value."""
        simd: dict[int, ts.Node] = {}
        wide = False
        for view in self._simd_views():
            for a in inputs:
                s, wd = view._expr(a, None)
                simd.update(s)
                wide = wide or wd
        if wide:
            return {}, True
        if helper_name is not None:
            f2 = self.m.function_by_name.get(helper_name)
            if f2 is not None and B.UNKNOWN_DEP in self.m.intrinsic_deps.get(f2, frozenset()):
                return {}, True
        if not simd and self._one_group(call):
            return {}, True
        return {call.id: call}, False

    def _one_group(self, node: ts.Node) -> bool:
        """One SIMD group at most runs ``node``: an enclosing ``if (tid < 32)``/``if (warp == 0)``,
        or the branches on the way let through exactly the lanes of one SIMD group (``warp == 1``;
        not ``tid == 0``, whose reduction combines one lane)."""
        from shaderlint.model.lanes import one_simd_group_runs  # noqa: PLC0415

        cache = self.shared.setdefault("one_group", {})
        if node.id not in cache:
            res = one_simd_group_runs(self.m, self.f, node, self.width)
            if not res:
                running: set[int] = set()
                for dec, members in zip(self.shared["decisions"], self.shared["members"]):
                    if _executes_with(node, self.f.node, dec):
                        running.update(members)
                        if len(running) > self.width:
                            break
                w = self.width
                g = min(running) // w if running else -1
                res = running == set(range(g * w, g * w + w))  # one whole SIMD group, every lane
            cache[node.id] = res
        return cache[node.id]


def _against(decisions: dict[int, bool], p: ts.Node, child: ts.Node) -> bool | None:
    """Whether threads with these decisions never run ``child`` of ``p`` (an ``if`` or ``?:``): True
    when the condition sends them the other way, None when undecided, False otherwise."""
    cond = p.child_by_field_name("condition")
    if cond is None or child == cond:
        return False
    d = decisions.get(cond.id)
    if d is None:
        return None
    if child == p.child_by_field_name("consequence"):
        return not d
    if child == p.child_by_field_name("alternative"):
        return d
    return False


def _executes_with(node: ts.Node, stop: ts.Node, decisions: dict[int, bool]) -> bool:
    """No enclosing ``if``/``?:`` sends threads with these decisions away from ``node``."""
    child, p = node, node.parent
    while p is not None and p != stop:
        if p.type in ("if_statement", "conditional_expression") and _against(decisions, p, child):
            return False
        child, p = p, p.parent
    return True


def _else_body(s: ts.Node) -> ts.Node | None:
    alt = s.child_by_field_name("alternative")
    if alt is not None and alt.type == "else_clause":
        inner = [c for c in alt.named_children if c.type != "comment"]
        return inner[0] if inner else None
    return alt




def _shuffled(model: "FileModel", call: ts.Node, name: str) -> ts.Node | None:
    """The value a shuffle moves between lanes (``__shfl_down_sync(mask, v, o)``: ``v``)."""
    args = model.call_args(call)
    if model.language == "cuda" and name.endswith("_sync"):
        return args[1] if len(args) > 1 else None
    return args[0] if args else None


def _local_writes(model: "FileModel", f: Function) -> dict[int, list[tuple[ts.Node, ts.Node | None, bool, ts.Node]]]:
    """id(local) -> its writes in source order: (statement, value or None when unknown, combines with
    the old value, the written identifier)."""
    out: dict[int, list] = {}
    for v in f.vars:
        if v.init is not None and not v.is_global:
            out.setdefault(id(v), []).append((v.decl, v.init, False, v.node))
    if f.body is not None:
        lo, hi = f.body.start_byte, f.body.end_byte
        for a, v, right, compound, ident in _assignments(model, f):
            out.setdefault(id(v), []).append((a, right, compound, ident))
        for u in nodes_in(model, "update", lo, hi):
            arg = u.child_by_field_name("argument")
            if arg is None or unparen(arg).type != "identifier":
                continue
            v = model.resolve(unparen(arg))
            if v is not None and v.function is f and not v.is_global:
                out.setdefault(id(v), []).append((u, unparen(arg), False, unparen(arg)))
        for call, v in opaque_call_outputs(model):
            if v.function is f and lo <= call.start_byte < hi:
                ident = next((unparen(x) for x in model.call_args(call) if unparen(x).type == "identifier"
                              and model.resolve(unparen(x)) is v), None)
                if ident is not None:
                    out.setdefault(id(v), []).append((call, None, False, ident))
    for lst in out.values():
        lst.sort(key=lambda w: w[0].start_byte)
    return out


def _address_deps(model: "FileModel", lvalue: ts.Node) -> frozenset[str]:
    out: set[str] = set()
    n = unparen(lvalue)
    for _ in range(16):
        if n.type == "subscript_expression":
            for c in n.named_children:
                if c != n.child_by_field_name("argument"):
                    out |= model.deps(c)
            n = unparen(n.child_by_field_name("argument"))
        elif n.type == "field_expression":
            n = unparen(n.child_by_field_name("argument"))
        elif n.type == "pointer_expression":
            arg = n.child_by_field_name("argument")
            out |= model.deps(arg)
            break
        else:
            break
    return frozenset(out)
