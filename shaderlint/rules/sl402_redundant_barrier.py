"""SL402 redundant-barrier

## What it does
Flags a threadgroup-wide barrier in a kernel when none of the memory it orders
is accessed between it and the previous barrier (or the start of the kernel),
or between it and the next barrier (or the end of the kernel), on any path.
What a barrier orders: threadgroup/shared memory always; device/global memory
too where the barrier covers it (CUDA `__syncthreads`, Metal
`mem_flags::mem_device`/`mem_texture`, GLSL `memoryBarrierBuffer()`/
`memoryBarrierImage()` written directly before `barrier()`). When two barriers
are redundant with each other, only the second is reported, so removing the
reported ones is always correct.

The analysis is a data-flow over the kernel body: branches merge, loops are
iterated until nothing changes (so a barrier at the top of a loop sees the
previous iteration's accesses), and `break`, `continue` and `return` are
followed. A use of a threadgroup/shared variable, a device buffer or a
writable texture/image counts as an access; so does a call to a helper that
touches memory, a pointer of unknown address space, or a name the file does
not declare used as memory (indexed, dereferenced, written). Code the analysis
cannot see into counts as touching every address space: inline assembly
(`cp.async`, `ldmatrix`, `fence.proxy.async`), any macro that is not a
constant (also one whose inline-PTX register list `{%0, %1}` the front end
cannot parse), any call to a function or macro the file does not define (a
header's wrapper around inline PTX, a helper reaching shared memory through a
global), and a memory fence (`__threadfence_block()`, GLSL
`memoryBarrierShared()` not directly before `barrier()`). Only built-ins known
to compute on registers (math, conversions, constructors, SIMD shuffles and
reductions, texture sampling) touch nothing. Memory the barrier's flags do
not order still counts when threads may exchange data through it across the
barrier: writable memory indexed at an address every thread of the group
shares on one side (thread 0 writes `scales[row]` to device memory), accessed
on the other (every thread reads it). The flags are too weak to order that
exchange, but the barrier's execution ordering is what makes it work in
practice; the right change is `mem_device`, not removal. Accesses at each
thread's own element (`data[gid]` on both sides) exchange nothing. A barrier
whose result is used (`n = __syncthreads_count(p)`) is never reported. A kernel with a barrier on a
path that threads may take differently is not analysed: under a condition that
depends on the thread, on shared memory, or on a value from code the file does
not define (a warp-specialised producer/consumer split on
`cutlass::canonical_warp_group_idx()`), barriers pair by count across paths
and removing one desynchronises the rest. GLSL tessellation control shaders
(where `barrier()` orders patch outputs) and `goto` are not analysed either.

## Why is this bad?
A barrier stalls every thread of the group until the slowest arrives. One that
orders no access buys nothing for that cost; the compilers keep it (a barrier
is a convergence point they may not move or delete). Apple's GPU compiler team
("Advanced Metal Shader Optimization", WWDC) recommends the smallest barrier
that is correct; none at all is smaller still. Redundant barriers are also a
sign that the data exchange they were meant to protect moved elsewhere.

## Example
```cuda
__global__ void scale(const float* in, float* out, float k, int n) {
    __shared__ float tile[256];
    int j = min(blockIdx.x * blockDim.x + threadIdx.x, n - 1);
    __syncthreads();                     // SL402: nothing before it
    tile[threadIdx.x] = in[j] * k;
    __syncthreads();
    out[j] = tile[255 - threadIdx.x];
    __syncthreads();                     // SL402: nothing after it
}
```

## Use instead
```cuda
    tile[threadIdx.x] = in[j] * k;
    __syncthreads();
    out[j] = tile[255 - threadIdx.x];
```

## Impact
Barrier latency, not registers or occupancy: the impact reports no change
(registers ±0, occupancy as estimated for the kernel).

## Fix safety
The fix deletes the barrier's statement. It is offered only when the barrier
stands alone on its line and every statement between it and its neighbour on
the reported side is understood: no name there is undeclared in the file (a
header's constant could be a macro touching memory), nothing unknown (calls,
macros, inline assembly) is there, since those already keep the barrier from
being reported, and no writable memory the barrier does not order is accessed
there (threads may rely on its execution ordering to exchange data through
it). It is **unsafe** (applied only with
`--unsafe-fixes`, never by the editor's fix-all): removing a barrier changes
the ordering between threads, and the change is harmless only if the analysis
saw every access -- an access it cannot see (a header it did not read, a
pointer it could not follow) turns the removal into a data race.

## Options
None.

## Default
On. On the real-code corpus (`bench/realcode.py`, 2,473 files of 33 PyPI
packages) it reports 11 barriers, all judged true by reading the code (llama.cpp
and whisper.cpp Metal and Vulkan kernels: a barrier at kernel entry before any
shared access, a second barrier of a back-to-back pair, a last barrier before
buffer writes only). The two false findings measured earlier -- thread 0
publishing `scales[row]` in device memory across a `mem_threadgroup` barrier --
are gone since exchanges through memory the flags do not order count.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture keeps every barrier: `scale` has
three `bar.sync 0;` — one before any `ld`/`st`, one between `st.shared.f32` and
`ld.shared.f32`, one after the final `st.global.f32` — and `doubled` has two
`bar.sync 0;` back to back. After the fix `scale` has one `bar.sync 0;`.
`-Xptxas -v` reports "used 1 barriers" either way: the cost is time at run
time, not a resource.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Severity
from shaderlint.model.sync import redundant_barriers, space_names
from shaderlint.rules.base import Rule, RuleContext


class RedundantBarrier(Rule):
    code = "SL402"
    name = "redundant-barrier"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    fix = "unsafe"
    summary = "barrier with no memory access it orders on one side"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        if model.language == "glsl" and model.stage not in ("compute", "mesh", "task"):
            return  # tessellation-control barriers order patch outputs, which are not modelled
        for f in model.functions:
            if not (f.is_entry and f.is_device_code):
                continue
            for r in redundant_barriers(model, f):
                memory = space_names(model.language, r.orders)
                if r.side == "before":
                    span = _either(r, "the previous barrier", "the start of the kernel")
                    where = f"between {span} and this one"
                else:
                    span = _either(r, "the next barrier", "the end of the kernel")
                    where = f"between this barrier and {span}"
                yield Finding(
                    r.barrier.node.start_byte, r.barrier.node.end_byte,
                    f"'{r.barrier.name}' orders nothing: no {memory} is accessed {where}",
                    kernel=f.name, fix=_remove_line(model, r.barrier.node) if r.understood else None,
                )


    @classmethod
    def what_if(cls, model, function, finding, target):
        from shaderlint.estimate import whatif

        return whatif.no_change("barrier removed")


def _either(r, barrier: str, edge: str) -> str:
    if r.edge and r.other:
        return f"{barrier} (or {edge.replace('the ', 'the ', 1)})"
    return edge if r.edge else barrier


def _remove_line(model, call) -> Fix | None:
    """Delete the barrier's statement when it stands alone on its line in a block (a trailing
    comment is kept)."""
    stmt = call.parent
    if stmt is None or stmt.type != "expression_statement" or stmt.parent is None \
            or stmt.parent.type not in ("compound_statement", "case_statement"):
        return None
    data = model.source.data
    start = data.rfind(b"\n", 0, stmt.start_byte) + 1
    end = data.find(b"\n", stmt.end_byte)
    end = len(data) if end < 0 else end + 1
    rest = data[stmt.end_byte:end]
    if data[start:stmt.start_byte].strip():
        return None
    if not rest.strip():
        return Fix("Remove the barrier", Applicability.UNSAFE, (Edit(start, end, ""),))
    if rest.strip().startswith(b"//"):
        comment = stmt.end_byte + rest.index(b"//")
        return Fix("Remove the barrier", Applicability.UNSAFE, (Edit(stmt.start_byte, comment, ""),))
    return None
