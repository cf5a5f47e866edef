"""SL404 simd-reduction-as-group-result

## What it does
Flags a SIMD-scope reduction whose value is stored as the whole threadgroup's
result in a kernel whose threadgroup can be larger than one SIMD group.
Reductions are Metal `simd_sum`/`simd_product`/`simd_min`/`simd_max`/`simd_and`/
`simd_or`/`simd_xor`, GLSL `subgroupAdd`/`Mul`/`Min`/`Max`/`And`/`Or`/`Xor`,
CUDA `__reduce_*_sync`, a shuffle tree that folds a value into itself
(`v += __shfl_down_sync(mask, v, o)`, `simd_shuffle_down`,
`subgroupShuffleXor`), and calls to helpers in the same file that return one.
"Stored as the group's result" means written to device or threadgroup memory
at an address that is the same for every thread of the group (`out[g]` with `g`
the threadgroup position, `out[0]`, a threadgroup scalar), typically by
`thread_index_in_threadgroup == 0`. Reported at the reduction call, with the
store as a related location.

Silent when the group is known to fit one SIMD group, when the kernel combines
the SIMD results through threadgroup memory (a reduced value stored at a
per-SIMD-group address such as `partial[simd_id]`: the two-level reduction),
when the reduced values were themselves read from threadgroup memory (a
shared-memory tree finished by one warp), when only one SIMD group runs the
reduction (it sits under `if (threadIdx.x < 32)`, `if (warp == 0)` with `warp =
threadIdx.x / WARP_SIZE`, or `if (simdgroup_index_in_threadgroup == 0)`: that
group walks all of the data or the partial results, and the others have nothing
to contribute), and for atomics (`atomicAdd`,
`atomic_fetch_add_explicit`), which accumulate every contribution.

## Why is this bad?
A SIMD-scope reduction combines the lanes of one SIMD group (a warp, a
SIMD-group, a subgroup: 32 threads on NVIDIA and Apple GPUs). A threadgroup of
256 threads holds eight of them; storing one of their partial results as the
threadgroup's result silently drops the other seven — or, when every SIMD
group's leader stores to the same address, keeps whichever write lands last.
The result is wrong by a data-dependent amount and looks plausible.

## Example
```metal
// shaderlint: threadgroup-size=256
kernel void block_sum(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                      uint lid [[thread_index_in_threadgroup]], uint g [[threadgroup_position_in_grid]],
                      uint gid [[thread_position_in_grid]]) {
    float x = in[gid];
    if (lid == 0) out[g] = simd_sum(x);   // SL404: only SIMD-group 0's sum
}
```

## Use instead
Combine the SIMD groups' partial sums through threadgroup memory:
```metal
    float s = simd_sum(in[gid]);
    if (lane == 0) partial[sid] = s;                 // one slot per SIMD-group
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sid == 0) {
        float t = simd_sum(lane < nsimd ? partial[lane] : 0.0f);
        if (lane == 0) out[g] = t;
    }
```
or accumulate with an atomic per SIMD group.

## Impact
A correctness error: no register or occupancy change is estimated (the
impact's deltas are null; the two-level rewrite adds one float of threadgroup
memory per SIMD group).

## Options
None. The SIMD width is the target's (`--target`).

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: `block_sum` inlines `warp_sum` as
five `shfl.sync.down.b32` with member mask `-1` and clamp `31` (one warp), then
`setp.ne.s32 %p7, %r2, 0;` on `%tid.x`, `@%p7 bra`, and a single
`st.global.f32` — no `bar.sync` and no `.shared` traffic ("Used 12 registers,
used 0 barriers"), so nothing carries the other seven warps' sums. The
two-level negative `block_sum_two_level` reports "used 1 barriers, 128 bytes
smem".
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model import builtins as B
from shaderlint.model.dispatch import GROUP_WORDS, group_size, simd_terms
from shaderlint.model.sync import group_result_stores, reduction_input_deps, spans_several_simd_groups
from shaderlint.model.expr import unparen
from shaderlint.rules.base import Rule, RuleContext


class SimdReductionAsGroupResult(Rule):
    code = "SL404"
    name = "simd-reduction-as-group-result"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    summary = "SIMD-scope reduction stored as the whole threadgroup's result"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        width = ctx.target.simd_width
        simd, _ = simd_terms(ctx.target)
        group = GROUP_WORDS[model.language]
        for f in model.functions:
            if not (f.is_entry and f.is_device_code):
                continue
            gs = group_size(model, f, ctx.facts)
            if gs is not None and gs.total <= width:
                continue  # the group is one SIMD group: its reduction is the group's
            if gs is None and not spans_several_simd_groups(model, f, width):
                continue  # size unknown and nothing says the group is wider than one SIMD group
            stores, two_level = group_result_stores(model, f)
            if two_level:
                continue  # partial results are combined through threadgroup memory
            reported: set[int] = set()
            for st in stores:
                red = st.reduction
                if red.id in reported or B.UNKNOWN_DEP in reduction_input_deps(model, red):
                    continue  # its inputs were read from threadgroup memory: already group-wide
                if _one_simd_group_runs(model, f, red, width):
                    continue  # only one SIMD group runs it: the others have nothing to contribute
                reported.add(red.id)
                if gs is not None:
                    n = -(-gs.total // width)
                    size = (f"the {group} has {'up to ' if not gs.exact else ''}{gs.total} threads = {n} {simd}s "
                            f"on {ctx.target.name}")
                else:
                    size = (f"the {group} size is not declared, but the kernel synchronises or indexes several "
                            f"{simd}s")
                yield Finding(
                    red.start_byte, red.end_byte,
                    f"'{model.text(red.child_by_field_name('function'))}' combines only the {width} lanes of one "
                    f"{simd}, but its result is stored to '{model.text(st.target)}' as the whole {group}'s "
                    f"result; {size}, and the other {simd}s' contributions are lost",
                    kernel=f.name,
                    related=(Related(st.node.start_byte, st.node.end_byte, "stored here as the group result"),),
                )


def _one_simd_group_runs(model, f, node, width: int) -> bool:
    """``node`` sits in the branch of an ``if`` whose condition lets through one SIMD group at most:
    ``if (tid < 32)`` with ``tid`` the thread's index along x in its group and the bound at most the
    SIMD width (or named ``WARP_SIZE``/``warpSize``/``simd_width``), or ``if (warp == 0)`` with
    ``warp`` that index divided by the width (``threadIdx.x / WARP_SIZE``, ``>> 5``,
    ``simdgroup_index_in_threadgroup``). That group's reduction is the whole group's work (a final
    pass over partial results in shared memory, or one warp walking all of the data)."""
    n = node
    while n.parent is not None and n.id != f.body.id:
        p = n.parent
        if p.type == "if_statement" and p.child_by_field_name("consequence") == n:
            cond = p.child_by_field_name("condition")
            if cond is not None and any(_one_group_test(model, c, width) for c in _conjuncts(cond)):
                return True
        n = p
    return False


def _conjuncts(cond):
    c = unparen(cond)
    if c.type == "condition_clause":
        inner = [x for x in c.named_children if x.type != "comment"]
        c = unparen(inner[-1]) if inner else c
    op = c.child_by_field_name("operator") if c.type == "binary_expression" else None
    if op is not None and op.type == "&&":
        return _conjuncts(c.child_by_field_name("left")) + _conjuncts(c.child_by_field_name("right"))
    return [c]


_WIDTH_NAMES = ("WARP_SIZE", "warpSize", "warp_size", "kWarpSize", "WARPSIZE", "SIMD_WIDTH", "simd_width",
                "N_SIMDWIDTH", "threads_per_simdgroup", "gl_SubgroupSize")


def _one_group_test(model, c, width: int) -> bool:
    if c.type != "binary_expression":
        return False
    op = model.text(c.child_by_field_name("operator"))
    left, right = unparen(c.child_by_field_name("left")), unparen(c.child_by_field_name("right"))
    if op in (">", ">="):
        left, right, op = right, left, "<" if op == ">" else "<="
    if op in ("<", "<="):
        bound = model.const_value(right)
        named = model.text(right) in _WIDTH_NAMES
        fits = named if bound is None else (bound <= width if op == "<" else bound < width)
        return fits and _lane_index(model, left, 0)
    if op == "==":
        for a, b in ((left, right), (right, left)):
            if model.const_value(b) == 0 and _simd_group_index(model, a, width, 0):
                return True
    return False


def _follow(model, node):
    """A local with a single initializer and no other write stands for its initializer."""
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.init is not None and not v.is_param and not model.direct_writes(v):
            return unparen(v.init)
    return None


def _lane_index(model, node, depth: int) -> bool:
    """The thread's index in its group along x (``threadIdx.x``, ``thread_index_in_threadgroup``,
    ``gl_LocalInvocationIndex``, ``gl_LocalInvocationID.x``, or a local copy of one)."""
    node = unparen(node)
    text = model.text(node).replace(" ", "")
    if text in ("threadIdx.x", "gl_LocalInvocationIndex", "gl_LocalInvocationID.x"):
        return True
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.is_param and v.role in ("thread_index_in_threadgroup", "thread_position_in_threadgroup"):
            return v.type.width == 1
        nxt = _follow(model, node)
        return nxt is not None and depth < 4 and _lane_index(model, nxt, depth + 1)
    if node.type == "cast_expression":
        value = node.child_by_field_name("value")
        return value is not None and _lane_index(model, value, depth + 1)
    return False


def _simd_group_index(model, node, width: int, depth: int) -> bool:
    node = unparen(node)
    if node.type == "identifier":
        v = model.resolve(node)
        if v is not None and v.is_param and v.role == "simdgroup_index_in_threadgroup":
            return True
        if v is None and model.text(node) == "gl_SubgroupID":
            return True
        nxt = _follow(model, node)
        return nxt is not None and depth < 4 and _simd_group_index(model, nxt, width, depth + 1)
    if node.type == "binary_expression":
        op = model.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        rv = model.const_value(right)
        if op == "/" and (rv == width or model.text(right) in _WIDTH_NAMES):
            return _lane_index(model, left, depth + 1)
        if op == ">>" and rv == width.bit_length() - 1:
            return _lane_index(model, left, depth + 1)
    return False
