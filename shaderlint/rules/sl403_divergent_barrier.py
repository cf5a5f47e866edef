"""SL403 divergent-barrier

## What it does
Flags a threadgroup-wide barrier (`threadgroup_barrier`, `__syncthreads` and its
`_count`/`_and`/`_or` forms, cooperative-groups `block.sync()`, GLSL `barrier()`),
or a call to a helper in the same file that executes one, that only some threads
of a group can reach: it sits under a condition, in a loop, or after an early
exit (`return`, or a `break` that ends the loop for some threads) whose condition
differs between the threads of one group. Reported at the barrier (or the call),
with the deciding conditions as related locations.

On NVIDIA targets a `return` from the kernel itself does not count: the threads
it sends away have exited, and from compute capability 7.0 (every NVIDIA target
shaderlint models) `__syncthreads()` "will not succeed until reached by all
non-exited threads in the block" (CUDA C++ Programming Guide, independent thread
scheduling; the PTX ISA has `bar.sync` wait for the non-exited threads of the
CTA). `if (i >= n) return;` before a barrier is therefore fine there, and stays
an error for Metal, GLSL and CUDA compiled for other targets (HIP on AMD,
`--target rdna2-wave64`), whose specifications have no such rule. The same holds
there for threads that leave a loop early (its condition fails, or they `break`)
when the loop is in no other loop and nothing after it can synchronise before the
kernel ends: every call there is a built-in or a function of the file whose body
is as quiet, and no inline `asm` may wait for other threads (a persistent kernel's token loop
`for (idx = first + lane; idx < total; idx += stride)` around a block reduction).
Those threads only exit, as if they returned. A call the file does not define (a
header's block reduction), a barrier after the loop or an outer loop keeps the
finding. A `return` from a helper, a `continue`, and a `break` followed by more
barriers leave the thread alive and still count everywhere; so does skipping an
`if`, which the rule keeps reporting (its example below).

Also on NVIDIA targets, and for the same reason (the barrier counts each thread's
arrival), a branch every way through which runs the same sequence of block
barriers is no divergence: warp specialisation, `if (warp == 0) { load;
__syncthreads(); } else { __syncthreads(); use; }`, whichever arm a thread takes
it arrives once. Arms may nest balanced branches, `else if` chains, loops of a
constant trip count and calls to helpers of the file that run one fixed sequence;
an `if` at the top of a function body whose arm always returns is balanced with
the rest of the body (vLLM's fill threads: `if (tid < FILL) { ...;
__syncthreads(); __syncthreads(); return; }` before the two barriers of the
others). That is outside the letter of the CUDA guide (quoted below) and of the
PTX ISA, whose `bar.sync` is `.aligned` (all threads at the same instruction),
but a deliberate pattern in production code that does not hang: the rule stays
silent where the arrivals match. Reported still: an arm with a barrier more, a different kind
(`__syncthreads_count` against `__syncthreads`), an arm that can return or
`break` before its barrier, a barrier in a loop of one arm whose trip count is
not a constant, a call the file does not define (a function-like macro the file
defines counts when it calls only built-ins), and every such branch on other
targets: an AMD wave runs both arms of a branch its lanes disagree on, each
barrier once for the whole wave (`balanced_branches_amd.cu`).

Thread dependence comes from the model's uniformity analysis: it flows from the
thread-ID built-ins (`threadIdx`, `thread_position_in_*`,
`thread_index_in_threadgroup`, `gl_LocalInvocationID`, `simd_is_first()`, …)
through assignments, arithmetic, array reads, calls to functions in the same
file, loop counters whose bounds or steps depend on it, and early returns.
Kernel parameters, constants, `blockIdx`/`threadgroup_position_in_grid`,
`blockDim`/`threads_per_threadgroup`/`gl_WorkGroupSize` and loads from uniform
addresses are uniform within the group, and so is the result of CUDA's block-wide
votes `__syncthreads_count`/`_and`/`_or` (not of the warp votes `__any_sync`,
`__ballot_sync`, …). A value read from threadgroup/shared memory is not known
either way and the rule stays silent on it; that includes reads through a local
reference bound to memory (`int& count = smem_ints[0];`, `auto& s =
*reinterpret_cast<S*>(smem);`, `auto& s = reinterpret_cast<S&>(smem);`) or
through a struct passed by reference (`Scratch&
st`, the caller's object: in practice the block's shared scratch), and a store
through a pointer (`p[tid] = x`, `params.out[tid] = x`) or such a reference
changes the memory, not the variable. Scalars passed by reference are
out-parameters and keep the dependence of what is written to them.

Order counts where it is certain: a use sees the writes that can reach it when a
plain `v = …;` (or `T v = …;`) earlier in an enclosing block runs on every path to
it, namely that write, the writes between the two (in any branch) and those in a
loop around the use; a `for` loop's `i = …` initializer does the same for the
loop and what follows it (`int i; for (i = tid; i < n; i += 256) ...; for (i = 0;
i < m; i++) { __syncthreads(); }` is a uniform loop). `lo = ~0u;` followed by a fold over shared values hides the
thread's own `lo` from before; a later `lo = tid;` does not make earlier uses
thread-dependent. Where a lambda writes the variable, its address is taken, a
reference is bound to it, a function of the file may take it by reference or the function has a
`goto`, every write counts. A call the file does not define (a method such as
`BlockReduce(tmp).Reduce(lo, op)`, a header's function) may write a local it is
handed by name through a reference: that is a write at the call, not known
either way when what the call reads is thread-dependent, and a later `lo =
s.lo;` still hides it. The condition of a `do … while` runs after the whole body,
so the body's last plain assignment decides it (unless a `continue` jumps there
first). A call's result depends on the arguments whose
values can reach the callee's `return`s (a helper that overwrites a parameter
before returning it ignores what was passed). In GLSL,
`gl_GlobalInvocationID.y`/`.z` is the group's along an axis the group is one
thread deep in: declared so (`layout(local_size_x = 64) in;` leaves y and z at
1) or, when the file does not give that size (the host injects it, or a
`local_size_z_id`), when the kernel reads its local position only along other
axes (`gl_LocalInvocationID.x`, never `.z`, the whole vector or
`gl_LocalInvocationIndex`): `if (gz >= heads) return;` then leaves whole groups.

Every branch of a preprocessor conditional is read as compiled, but an exit and a
barrier in branches that are never compiled together (`#if X` / `#else`, `#if X`
/ a later `#if !X`, `#ifdef X` / `#ifndef X`, `#if A == B` / `#if A != B`; macros
the file `#define`s or `#undef`s itself are not compared) do not meet: ncnn's
`#if !NCNN_shader_local_memory` bounds check before `#if NCNN_shader_local_memory`
tiles is fine. Values computed after a kernel's early `return` are not
thread-dependent because of it (the threads that left compute nothing); the
barriers after the exit still are.

## Why is this bad?
A group barrier waits until every thread of the group has arrived. The CUDA C++
Programming Guide allows `__syncthreads()` in conditional code "only if the
conditional evaluates identically across the entire thread block, otherwise the
code execution is likely to hang or produce unintended side effects"; the Metal
Shading Language requires every thread of the threadgroup to execute
`threadgroup_barrier`, and GLSL allows `barrier()` in compute shaders only in
dynamically uniform control flow. The compilers accept the code silently; what
happens depends on the GPU: a hang, a barrier that releases early (and a data
race on the threadgroup memory it was meant to protect), or results that differ
between runs.

## Example
```cuda
__global__ void smooth(const float* in, float* out, int n) {
    __shared__ float tile[258];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {                        // threads past the end skip the block ...
        tile[threadIdx.x + 1] = in[i];
        __syncthreads();                // SL403: ... stay alive and never arrive here
        out[i] = (tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2]) / 3.0f;
    }
}
```

## Use instead
Let every thread reach the barrier and guard only the memory accesses:
```cuda
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = (tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2]) / 3.0f;
```
(This also fills the halo cells the threads past the end would have written.)
A barrier inside a loop is fine when the loop's bounds are uniform (`for (base
= 0; base < n; base += TILE)`), or when its start and bound carry the same
thread-dependent terms and its step is uniform (`for (t = base + tid; t < base +
len + tid; t += C)`: every thread runs the same number of iterations; the rule
matches sums term by term, through variables defined once), or when it starts at
an offset whose every value takes the same number of constant steps to a constant
bound (`for (c = lane; c < 256; c += 64)` with `lane = threadIdx.x % 32`: 4 trips
in every lane; with `c < 200` lanes 0..7 run 4 and the others 3, reported), and
so is an early exit on a group-uniform value (`if (blockIdx.x >=
blocks_with_work) return;`).

## Impact
A correctness error, not a cost: no register or occupancy change is
estimated (the impact's deltas are null).

## Default
Opt-in (`--extend-select SL403`), and a warning rather than an error. On the
real-code corpus (`bench/realcode/`: 33 PyPI source distributions, none of them
ours; judgements in `bench/realcode/judged.tsv`), its 16 findings are 10 true
(nerfacc's scan kernels run different barrier counts per row; a latent one in
flashinfer's all-reduce, whose threads leave a loop and then meet a block
reduction), 5 false, 1 debatable (66.7 % of the decided ones true). The false
ones are conditions the same in the whole block for reasons the analysis does
not follow: a block's window of rows `m` stepping by a multiple of a bound rounded
up to that window, a group size the launcher sets to 1, branches a `#define` in
the same file disables. The debatable one exits on AMD. Before this page's
figures, 34 more findings (all false) came from shared-memory scratch bound with
`reinterpret_cast<S&>(smem)` and values re-read from it after a barrier
(flashinfer's sampling kernels), and from loops ending the kernel whose leavers
only exit; 6 more (debatable) from vLLM's fill threads, which run as many
barriers at other call sites as the others (balanced branches, above). A divergent barrier is a hang, so the rule must be right essentially
always before it is on by default.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` compiles the CUDA fixture without a diagnostic. In
`scale_tile` the barrier sits behind the thread test: `setp.ge.u32 %p1, %r1,
%r2;` (`%r1` = `%tid.x`), `@%p1 bra $L__BB0_2;`, then `st.shared.f32`,
`bar.sync 0;`, `ld.shared.f32`: threads with `threadIdx.x >= n` branch past
`bar.sync 0` but stay alive, and the PTX ISA has `bar.sync` wait for all
non-exited threads of the CTA. The fixture's early-return `smooth` compiles to
`@%p1 bra $L__BB0_2;` past the `bar.sync 0;` to `$L__BB0_2: ret;`: those threads
exit, which is why it is not reported on NVIDIA targets (and is, with
`// target: rdna2-wave64`, in `early_exit_amd.cu`). A kernel ending with `for (idx =
threadIdx.x; idx < total; idx += 96) { ...; __syncthreads(); ...; __syncthreads(); }`
compiles (`nvcc -arch=sm_90 -ptx`, loop unrolled) to `@%p1 bra $L__BB0_7;` before
the first trip and `@%p4 bra $L__BB0_7;` between the unrolled trips, with
`$L__BB0_7: ret;`: every way out of the loop is the early return's shape, which
is why `exit_after_loop.cu`'s `rows_to_end` is not reported. `balanced_branches.cu`'s
`warp_specialised` compiles to `@%p1 bra $L__BB0_2;`, `bar.sync 0;` and `bra.uni
$L__BB0_3;` in one arm and `$L__BB0_2:` ... `bar.sync 0;` in the other: two
instructions on the same barrier 0, one executed by each thread.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.build import _only_returns
from shaderlint.model.dispatch import GROUP_WORDS, nodes_in
from shaderlint.model.sync import (
    ASM_WAIT, NO_SYNC_CALLS, balanced_region, divergent_conditions, group_barriers, sync_calls,
    synchronising_functions,
)
from shaderlint.rules.base import Rule, RuleContext

_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")


class DivergentBarrier(Rule):
    code = "SL403"
    name = "divergent-barrier"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    default_on = False
    summary = "group barrier reachable only under thread-dependent control flow"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        group = GROUP_WORDS[model.language]
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            sites = [(b.node, b.name, None) for b in group_barriers(f)]
            sites += [(call, model.callee_name(call) + "()", inner) for call, inner in sync_calls(model, f)]
            for node, name, inner in sorted(sites, key=lambda s: s[0].start_byte):
                conds = divergent_conditions(model, node)
                if conds and model.language == "cuda" and ctx.target.vendor == "nvidia":
                    if f.is_entry:
                        conds = [c for c in conds if not _kernel_exit(c, node) and not _exits_after(model, f, c, node)]
                    conds = [c for c in conds if not _balanced_around(model, c, node)]
                if not conds:
                    continue
                where = _describe(model, node, _root(conds, node))
                what = f"'{name}'" if inner is None else f"'{name}', which calls '{inner.name}',"
                related = [Related(c.start_byte, c.end_byte, "condition that differs between threads") for c in conds]
                if inner is not None:
                    related.append(Related(inner.node.start_byte, inner.node.end_byte, f"'{inner.name}' inside"))
                yield Finding(
                    node.start_byte, node.end_byte,
                    f"{what} {where}, a condition that differs between threads of a {group}: threads that skip "
                    f"the barrier never arrive, which is undefined behaviour (usually a hang or corrupted data)",
                    kernel=f.name, related=tuple(related),
                )


def _balanced_around(model, cond, node) -> bool:
    """``cond`` is the condition of an ``if`` around ``node`` whose arms execute the same sequence
    of barriers on every way through (:func:`shaderlint.model.sync.balanced_region`): every thread
    arrives at each of them once, whichever arm it takes, and on NVIDIA GPUs (compute capability
    7.0 and later) a block barrier counts each thread's arrival, at whichever `bar.sync 0`."""
    stmt = _statement(cond)
    if stmt.type != "if_statement" or not stmt.start_byte <= node.start_byte:
        return False
    region = balanced_region(model, stmt)
    return region is not None and region[0] <= node.start_byte < region[1]


def _root(conds, node):
    """The nearest condition not nested inside the statement of another one: values computed under
    a divergent condition inherit its divergence, the enclosing condition is the cause. An earlier
    early exit (``if (gid >= n) return;``) comes first: everything computed after it inherits its
    divergence (a loop counter after it looks thread-dependent too), the exit is the cause."""
    stmts = [_statement(c) for c in conds]
    roots = [c for c, s in zip(conds, stmts)
             if not any(o is not s and o.start_byte <= s.start_byte and s.end_byte <= o.end_byte and
                        (o.start_byte, o.end_byte) != (s.start_byte, s.end_byte) for o in stmts)]
    exits = [c for c in roots if not (_statement(c).start_byte <= node.start_byte < _statement(c).end_byte)]
    if exits:
        return min(exits, key=lambda c: c.start_byte)
    return roots[0] if roots else conds[0]


def _kernel_exit(cond, node) -> bool:
    """``cond`` guards only ``return``s of the kernel, before ``node`` or in a loop around it: the
    threads it sends away have exited, and on NVIDIA GPUs (compute capability 7.0 and later, every
    NVIDIA target here) a block barrier waits for the non-exited threads only."""
    stmt = _statement(cond)
    return not (stmt.start_byte <= node.start_byte < stmt.end_byte) and _only_returns(stmt, cond)


def _exits_after(model, f, cond, node) -> bool:
    """The threads that ``cond`` sends past ``node`` only leave the kernel: they leave a loop (its
    condition fails, or they ``break``) that is in no other loop,
    and after it nothing can synchronise before the kernel's end (see :func:`_quiet`). They exit
    without arriving at any
    barrier, which is what an early ``return`` does (see :func:`_kernel_exit`): the barriers the
    other threads run wait for the non-exited threads only. A call the file does not define may
    hold a barrier (a header's block reduction), and then the finding stays."""
    stmt = _statement(cond)
    if stmt is cond or cond.parent is None or cond.parent.type == "binary_expression":
        return False  # the left operand of `&&`/`||`
    if stmt.start_byte <= node.start_byte < stmt.end_byte:
        if stmt.type not in _LOOPS:
            return False  # an `if`, a switch, `?:`: reported as before (see the rule's page)
        region = stmt
    else:
        region = _broken_loop(stmt, cond)
        if region is None or not (region.start_byte <= node.start_byte < region.end_byte):
            return False
    p = region.parent
    while p is not None and p != f.body:
        if p.type in _LOOPS or p.type in ("lambda_expression", "switch_statement"):
            return False
        p = p.parent
    return p is not None and _quiet(model, region.end_byte, f.body.end_byte)


def _broken_loop(stmt, guard):
    """The loop every jump under the early exit ``stmt`` leaves with a ``break`` (None when one is
    a ``continue``, a ``goto``, a ``return`` or breaks out of a ``switch``)."""
    target = None
    stack = [c for c in stmt.named_children if c.id != guard.id]
    while stack:
        n = stack.pop()
        if n.type in ("continue_statement", "goto_statement", "return_statement"):
            return None
        if n.type == "break_statement":
            p = n.parent
            while p is not None and p.type not in _LOOPS and p.type != "switch_statement":
                p = p.parent
            if p is None or p.type == "switch_statement" or (target is not None and p != target):
                return None
            target = p
        elif n.type not in ("function_definition", "lambda_expression") and n.type not in _LOOPS:
            stack.extend(n.named_children)
    return target


def _quiet(model, start: int, end: int, _seen: frozenset[str] = frozenset()) -> bool:
    """Nothing in [start, end) can synchronise a group: every call is to a built-in, a known
    runtime call or a function of the file whose body is quiet in the same sense, and no inline
    ``asm`` names an instruction that may wait for other threads."""
    sync = synchronising_functions(model)
    for call in nodes_in(model, "call", start, end):
        name = model.callee_name(call)
        if name in NO_SYNC_CALLS:
            continue  # a device-side runtime call of programmatic dependent launch, a cast
        if name in sync or _is_barrier_name(name):
            return False  # also a warp's `__shfl_sync`: lanes still in the loop would never join it
        if model._builtin(name) is not None:
            continue
        g = model.function_by_name.get(name)
        if g is None or g.body is None or len(_seen) > 8:
            return False
        if name not in _seen and not _quiet(model, g.body.start_byte, g.body.end_byte, _seen | {name}):
            return False
    if b"asm" not in model.source.data[start:end]:
        return True
    stack = [model.root]
    while stack:
        n = stack.pop()
        if n.end_byte <= start or n.start_byte >= end:
            continue
        if n.type in ("gnu_asm_expression", "asm_statement"):
            if n.start_byte < start or ASM_WAIT.search(model.text(n)):
                return False
            continue
        stack.extend(n.children)
    return True


def _is_barrier_name(name: str) -> bool:
    low = name.lower()
    return "sync" in low or "barrier" in low or "arrive" in low or "wait" in low


def _statement(cond):
    stmt = cond.parent
    while stmt is not None and stmt.type in ("condition_clause", "parenthesized_expression"):
        stmt = stmt.parent
    return stmt if stmt is not None else cond


def _describe(model, node, cond) -> str:
    """How ``cond`` decides whether ``node`` runs."""
    stmt = _statement(cond)
    text = " ".join(model.text(cond).split())
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if stmt.start_byte <= node.start_byte < stmt.end_byte:
        if stmt.type in _LOOPS:
            return f"runs in a loop whose condition is `{text}`"
        return f"runs only when `{text}` holds"
    return f"is skipped by threads that leave early when `{text}`"
