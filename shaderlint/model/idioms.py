"""Thread-dependent-looking conditions that are the same in every thread of a group by an idiom the
uniformity analysis does not follow (or cannot decide, and so should stay silent on). Used by the
dependence analysis (control dependence of writes) and by SL403 (model.sync.divergent_conditions)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model import builtins as B
from shaderlint.model.expr import descendants, subscript_index, unparen
from shaderlint.model.guards import local_values
from shaderlint.model.kernel import Function
from shaderlint.model.lanes import single_initializer

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel


def uniform_idiom(model: "FileModel", f: Function | None, cond: ts.Node) -> bool:
    """``cond`` is the condition of a loop with a uniform trip count written with thread-dependent
    start and bound (the same thread term in both, or a lane offset every value of which runs the
    same number of steps to a constant bound), or tests the result of a group vote through shared
    memory."""
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
    if node.type == "identifier" and (init := single_initializer(model, node)) is not None:
        return _additive_terms(model, init, depth + 1)
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
    if len(rest_start) == len(start) or any(
            (n := _find_term(model, init, text)) is None or B.LOCAL in model.deps(n) for text in rest_start):
        # nothing shared, or a thread-dependent start the bound does not share: the trip count
        # may still be the same in every thread (a lane offset below the step)
        return _lane_offset_trips(model, c, init, right, rest_start, rest_bound, writes)
    for text in rest_start + rest_bound:
        # the remaining terms must be uniform: find them under the initializer or the bound
        n = _find_term(model, init, text) or _find_term(model, right, text)
        if n is None or B.LOCAL in model.deps(n):
            return False
    return True


def _lane_offset_trips(model: "FileModel", cond: ts.Node, init: ts.Node, bound: ts.Node, rest_start: list[str],
                       rest_bound: list[str], writes: list[ts.Node]) -> bool:
    """``for (c = lane; c < 256; c += 64)`` with ``lane = threadIdx.x % 32``: what the start and the
    bound do not share is a constant bound and a start whose values in the group are known (see
    :func:`shaderlint.model.guards.local_values`), the counter steps up by a constant, and every
    one of those starts runs the same number of iterations (here 4: lane 31's last is 223). With
    ``c < 200`` lanes 0..7 run 4 and the others 3: not uniform. (It reads no dependence: the
    answer per condition is kept for the dependence fixpoint's later rounds.)"""
    cache = model.__dict__.setdefault("_lane_trips", {})
    hit = cache.get(cond.id)
    if hit is None:
        hit = cache[cond.id] = _lane_trips(model, cond, init, bound, rest_start, rest_bound, writes)
    return hit


def _lane_trips(model: "FileModel", cond: ts.Node, init: ts.Node, bound: ts.Node, rest_start: list[str],
                rest_bound: list[str], writes: list[ts.Node]) -> bool:
    op = model.text(cond.child_by_field_name("operator"))
    if op not in ("<", "<=") or len(writes) != 1:
        return False
    w = writes[0]
    if w.type == "update_expression":
        step = 1 if "++" in model.text(w) else None
    elif w.type == "assignment_expression" and model.text(w.child_by_field_name("operator")) == "+=":
        step = model.const_value(w.child_by_field_name("right"))
    else:
        step = None
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        return False
    limit = 0
    for text in rest_bound:
        n = _find_term(model, bound, text)
        v = model.const_value(n) if n is not None else None
        if not isinstance(v, int) or isinstance(v, bool):
            return False
        limit += v
    starts: set[int] = {0}
    for text in rest_start:
        n = _find_term(model, init, text)
        vals = local_values(model, n) if n is not None else None
        if vals is None or len(starts) * len(vals) > 1 << 16:
            return False
        starts = {a + b for a in starts for b in vals}
    counter = model.resolve(unparen(cond.child_by_field_name("left")))
    if counter is None or (min(starts) < 0 and counter.type.kind == "uint"):
        return False  # an unsigned counter would wrap
    if op == "<=":
        limit += 1
    trips = {max(0, -((x - limit) // step)) for x in starts}  # ceil((limit - x) / step), none past it
    return len(trips) == 1


def _find_term(model: "FileModel", node: ts.Node, text: str, depth: int = 0) -> ts.Node | None:
    if depth > 8:
        return None
    n = unparen(node)
    if " ".join(model.text(n).split()) == text:
        return n
    if n.type == "binary_expression" and model.text(n.child_by_field_name("operator")) == "+":
        return (_find_term(model, n.child_by_field_name("left"), text, depth + 1)
                or _find_term(model, n.child_by_field_name("right"), text, depth + 1))
    if n.type == "identifier" and (init := single_initializer(model, n)) is not None:
        return _find_term(model, init, text, depth + 1)
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
    named = [v for n in descendants(cond, "identifier") if (v := model.resolve(n)) is not None]
    if model._dep_reads is not None:  # while the dependence fixpoint runs (see compute_dependence)
        model._dep_reads.update(dict.fromkeys(named))
    idents = [v for v in named if B.LOCAL in model.var_deps.get(v, frozenset())]
    if not idents:
        return False
    for v in set(idents):
        before = sorted((w for w in model.direct_writes(v)
                         if f.body.start_byte <= w.start_byte < cond.start_byte), key=lambda w: w.start_byte)
        if not before:
            return False
        last = before[-1]
        if len(before) >= 2 and _lane_vote(model, v, before[-2], last):
            continue
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
                idx = subscript_index(a)
                if (base is not None and base.address_space in ("threadgroup", "shared") and idx is not None
                        and B.LOCAL not in model.deps(idx)):
                    shared_read = True
                    continue
            return False
        if not shared_read:
            return False
    return True


#: Warp-wide reductions whose result every lane of the warp holds: CUDA's vote and reduce
#: intrinsics, and helpers named as all-lane votes (llama.cpp's ``warp_reduce_all`` / ``_any``,
#: butterfly reductions over ``__shfl_xor_sync`` in a header). A ``warpReduceSum`` over
#: ``__shfl_down_sync`` leaves its result in lane 0 only, so helpers of the file count only when
#: their body reduces with ``__shfl_xor_sync`` or the intrinsics.
_WARP_ALL_REDUCE = frozenset((
    "__all_sync", "__any_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "__all", "__any",
))
_WARP_VOTE_NAME = re.compile(r"^warp_?(reduce_?)?(all|any)$", re.I)
_LANE_MASK = re.compile(r"^\s*(threadIdx\.x|\w+)\s*(%\s*(32|WARP_SIZE|warpSize|warp_size)|&\s*(31|0x1[fF]|"
                        r"\(\s*(WARP_SIZE|warpSize|warp_size)\s*-\s*1\s*\)))\s*$")
_X_INDEX = re.compile(r"^\s*(\(\s*(int|unsigned|uint|uint32_t|int32_t)\s*\)\s*)?threadIdx\.x\s*$")


def _warp_all_reduce(model: "FileModel", call: ts.Node, v) -> bool:
    """``call`` reduces ``v`` over the warp and gives every lane the result."""
    if call.type != "call_expression":
        return False
    name = model.callee_name(call)
    args = [a for a in model.call_args(call) if a.type != "comment"]
    if not any(unparen(a).type == "identifier" and model.resolve(unparen(a)) is v for a in args):
        return False
    if any(B.LOCAL in model.deps(a) for a in args if not (unparen(a).type == "identifier" and model.resolve(unparen(a)) is v)):
        return False  # a lane mask or offset that differs between threads
    if name in _WARP_ALL_REDUCE:
        return True
    g = model.function_by_name.get(name)
    if g is not None and g.body is not None:  # a helper of the file: by what it calls
        text = model.text(g.body)
        return "__shfl_xor_sync" in text or any(n in text for n in _WARP_ALL_REDUCE)
    return _WARP_VOTE_NAME.match(name.rsplit("::", 1)[-1]) is not None


def _lane_vote(model: "FileModel", v, read: ts.Node, fold: ts.Node) -> bool:
    """A group-wide vote through shared memory, finished per warp: ``v = sh[lane];`` then
    ``v = warp_reduce_all(v);`` (llama.cpp's flash-attention KV_max search: each warp stores its
    vote at ``buf[tid / WARP_SIZE]``, every warp reads the whole buffer lane by lane and reduces it
    over the warp). Every warp folds the same entries, so every thread of the group gets the same
    result, whatever the group stored; the analysis cannot follow that, so it stays silent."""
    for w in (read, fold):
        op = w.child_by_field_name("operator")
        if w.type != "assignment_expression" or op is None or model.text(op) != "=":
            return False
    if not _warp_all_reduce(model, unparen(fold.child_by_field_name("right")), v):
        return False
    sub = unparen(read.child_by_field_name("right"))
    if sub.type != "subscript_expression":
        return False
    base = model.base_var(sub)
    if base is None or base.address_space not in ("threadgroup", "shared"):
        return False
    idx = subscript_index(sub)
    if idx is None:
        return False
    if B.LOCAL not in model.deps(idx):
        return True  # every thread reads the same entry
    return _is_lane(model, idx)  # the lane's entry: each warp reads the whole buffer


def _is_lane(model: "FileModel", idx: ts.Node, depth: int = 0) -> bool:
    """``idx`` is the thread's lane in its warp along x: ``threadIdx.x % 32`` (or ``& 31``, with
    ``WARP_SIZE``/``warpSize``), ``tid % WARP_SIZE`` with ``tid = threadIdx.x``, or a variable set
    once to one of those. Not ``threadIdx.y % 32`` and the like, which is the same in a warp."""
    idx = unparen(idx)
    if idx.type == "identifier" and depth < 3:
        init = single_initializer(model, idx)
        return init is not None and _is_lane(model, init, depth + 1)
    m = _LANE_MASK.match(model.text(idx))
    if m is None:
        return False
    if m.group(1) == "threadIdx.x":
        return True
    v = model.resolve(unparen(idx.child_by_field_name("left"))) if idx.type == "binary_expression" else None
    return v is not None and v.init is not None and not v.is_param and not model.direct_writes(v) \
        and _X_INDEX.match(model.text(v.init)) is not None
