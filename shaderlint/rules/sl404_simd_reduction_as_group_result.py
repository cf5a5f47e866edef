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

What is stored is decided on the path of the threads that store it. The
conditions on a thread's index (`threadIdx.x == 0`, `lane == 0` with `lane =
threadIdx.x % 32`, `warp == 0` with `warp = threadIdx.x / WARP_SIZE`,
`simdgroup_index_in_threadgroup`, `gl_SubgroupID`) are evaluated for every
thread of the group, and the writes of the stored value are followed along the
branches those threads take: thread 0 takes `if (warp == 0)` and `if
(threadIdx.x < 32)`, never `if (warp == 1)` or `if (threadIdx.x >= 32)`.
The stored value is reported when, for threads that certainly run the store
(every thread that may run it, when that is not decided), it is one SIMD
group's reduction and nothing that may combine SIMD groups. These combine
them, and keep the store silent when they may reach it: a second-level
reduction over values read from threadgroup memory (written and read directly
or through same-file helpers such as `put(warp, v)` / `get(lane)`), a
reduction that only one whole SIMD group runs (`if (threadIdx.x < 32)`, `if
(warp == 0)`, `if (simdgroup_index_in_threadgroup == 0)`: that group walks all
of the data or the partial results), a read of threadgroup memory, a helper
that synchronises the group (`block_reduce`), a call into code the file does
not show. Writing the partial results to threadgroup memory is not enough:
thread 0 must store what the second level computed from them.

Silent when the group is known to fit one SIMD group, when the store or the
reduction runs only on one side of a test of the group's size (`if (ntg >
N_SIMDWIDTH) { ...; return; }`, `if (block_size > WARP_SIZE)`,
`gl_NumSubgroups > 1`: code specialised for one-SIMD-group groups), for stores
at per-thread or per-SIMD-group addresses (`partial[warp]`), and for atomics
(`atomicAdd`, `atomic_fetch_add_explicit`), which accumulate every
contribution.

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
    if (sid == 0) s = simd_sum(lane < nsimd ? partial[lane] : 0.0f);
    if (lid == 0) out[g] = s;                        // thread 0 is in SIMD-group 0
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
from shaderlint.model.sync import group_result_stores, names_simd_reductions, reduction_stores, simd_group_evidence
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
            if not names_simd_reductions(model):
                continue  # no reduction to store (the tests below walk the kernel: skipped)
            # size unknown: something must say the group is wider than one SIMD group
            # (spans_several_simd_groups, whose last test, of a division's thread dependence, asks for the
            # file's dependence fixpoint: asked last, when there is a store to judge)
            evidence = simd_group_evidence(model, f, width) if gs is None else True
            if not evidence:
                continue
            if not reduction_stores(model, f):
                continue  # no reduction stored to memory: group_result_stores finds none
            if evidence is not True and not any(B.LOCAL in model.deps(left) for left in evidence):
                continue
            reported: set[int] = set()
            for st in group_result_stores(model, f, width, gs):
                red = st.reduction
                if red.id in reported:
                    continue
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
