"""SL105 missing-bounds-check

## What it does
Flags a compute kernel that reads or writes a buffer or texture at an index
derived from the global thread position (Metal `thread_position_in_grid`,
`threadgroup_position_in_grid * threads_per_threadgroup + thread_position_in_threadgroup`,
CUDA `blockIdx * blockDim + threadIdx`, GLSL `gl_GlobalInvocationID`) when no
condition dominating the access checks a thread-varying value: no `if (i < n)`
around it, no earlier `if (i >= n) return;`, no grid-stride loop condition
`for (i = gid; i < n; i += stride)`, no `gid.x >= out.get_width()`,
`.length()`, GLSL `all(lessThan(gid, size))` or helper-function check, no
bounds flag (`bool valid = true; if (i >= n) valid = false; if (valid) ...`: a
local only ever given constants, one of them under such a check). Indices clamped in place (`min`, `clamp`,
`%`, `&`, `?:`) count as checked. Reported once, at the kernel's name, with each
unchecked access as a related location. An early exit inside a preprocessor group
(`#if !NCNN_shader_local_memory` / `if (gx >= n) return;` / `#endif`) checks what
follows it, except code in a branch never compiled with it (`#if
NCNN_shader_local_memory`).

The kernel is left alone when it, or the file, is annotated
`// shaderlint: dispatch=threads` (Metal non-uniform dispatch with
`dispatchThreads`, which never launches threads outside the grid), or when the
same fact is set in configuration for the path, and when its group size is
known to be one thread (`layout(local_size_x = 1) in;`): then no group reaches
past the data, there is no partial last group to guard against. A CUDA kernel
is also left alone when every launch of it in the file (there is at least one)
sizes each grid axis as `1` or `n / block` rounded down (`n / (block * k)`
too, through `dim3` and size variables) with `n` among the kernel's arguments:
no axis then runs more than `n` threads (the lost tail is SL503's business). A GLSL shader
that declares no local size is still checked: glslang compiles it with 1×1×1
groups, but the host decides (ncnn patches the SPIR-V's local size into
specialization constants and runs such shaders with 64-wide groups).

**Metal kernels are checked only when the dispatch is known to be
`dispatchThreadgroups`** (`// shaderlint: dispatch=threadgroups`, or
`dispatch = "threadgroups"` for the path in configuration). The host code that
chooses between `dispatchThreads` and `dispatchThreadgroups` is not in the
`.metal` file, and on the GPUs current Metal runs on (non-uniform threadgroups
since the A11) unguarded kernels are normally dispatched with
`dispatchThreads`: in a sweep of real Metal code (PyTorch MPS, candle,
MetalPetal, MLX) every unguarded kernel was, and reporting them all was wrong
every time. This departs from SPEC.md, which reports Metal kernels unless
annotated `dispatch=threads`; CUDA and GLSL have no such dispatch and are
always checked.

## Why is this bad?
Grids are made of whole threadgroups. Apple's "Calculating threadgroup and
grid sizes" explains that with `dispatchThreadgroups` "Metal composes grids of
uniform threadgroups that may not match the size of your data" and that you
"ensure your kernel code doesn't execute outside the bounds of the data by
adding defensive code" — its example returns early when `thread_position_in_grid`
is outside the output texture. CUDA launches `ceil(n / block)` blocks and GLSL
dispatches whole workgroups in the same way, so the last group runs threads
past the end of the data: they read garbage and write out of bounds (undefined
behaviour, memory corruption, a GPU fault). Only Metal's `dispatchThreads`
with non-uniform threadgroups trims the grid to the exact size.

## Example
```metal
// shaderlint: dispatch=threadgroups
kernel void scale(device const float* in [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  constant float& k [[buffer(2)]],
                  uint gid [[thread_position_in_grid]]) {   // SL105
    out[gid] = in[gid] * k;
}
```

## Use instead
```metal
kernel void scale(device const float* in [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  constant float& k [[buffer(2)]],
                  constant uint& n [[buffer(3)]],
                  uint gid [[thread_position_in_grid]]) {
    if (gid >= n) return;
    out[gid] = in[gid] * k;
}
```
or dispatch with `dispatchThreads` (then the kernel needs no check, and
shaderlint stays silent on Metal unless told `dispatch=threadgroups`).

## Impact
Correctness rather than speed: the check itself costs one compare and one
branch (see *Evidence*), no registers and no occupancy on any target; the
impact field is left empty.

## Default
Opt-in (`--extend-select SL105`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 14 findings are 2 true (two real out-of-
bounds stores), 11 false, 1 debatable: the launch tiles the data exactly (block
size = extent, one block per row), the host asserts divisibility (`TORCH_CHECK(n
% 256 == 0)`) in another file, or the guard is a predicate passed to an
inline-PTX load. (A 15th, deepspeed's `LayerNormBackward1`, launched only with
`hidden_dim / TILE_DIM` blocks, is no longer reported.) The rule reads the
launch sites of the same file only.

## Options
The `dispatch` fact (`// shaderlint: dispatch=threads` above the kernel or at
the top of the file, or `dispatch = "threads"` for a path in configuration)
turns the rule off for the kernels it covers; `dispatch=threadgroups` turns it
on for Metal kernels.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: the unchecked `saxpy_unchecked`
computes `mad.lo.s32 %r4, %r1, %r2, %r3` from `%ctaid.x`, `%ntid.x`,
`%tid.x` and goes straight to `ld.global.f32`/`st.global.f32` — nothing stops
the threads of the last block past `n`. The checked kernels add exactly
`setp.ge.s32 %p1, %r1, %r2;` and `@%p1 bra $L__BB…;` in front of the
accesses; `-Xptxas -v` reports the same register count (10) for both, so the
guard is free in registers.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model import builtins as B
from shaderlint.model.expr import unparen
from shaderlint.model.dispatch import dim_exprs, dispatch_mode, group_size
from shaderlint.model.divisibility import int_value, truncating_numerator
from shaderlint.model.guards import assigned_values, position_guarded
from shaderlint.model.memory import resource_ops
from shaderlint.rules.base import Rule, RuleContext

_CLAMPS = frozenset({"min", "clamp", "max", "fmin", "umin"})


class MissingBoundsCheck(Rule):
    code = "SL105"
    name = "missing-bounds-check"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    default_on = False
    summary = "kernel indexes memory with the global thread position without checking it against the data size"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.kernels:
            if f.body is None or f.kind not in ("kernel", "compute"):
                continue
            mode = dispatch_mode(model, f, ctx.facts)
            if mode == "threads" or (model.language == "metal" and mode != "threadgroups"):
                continue  # Metal: dispatchThreads unless told otherwise (see the docstring)
            gs = group_size(model, f, ctx.facts)
            if gs is not None and gs.total == 1:
                continue  # one thread per group: no group reaches past the data the host dispatched for
            if model.language == "cuda" and _launches_never_overshoot(model, f):
                continue
            sites = [(a.node, a.var.name, a.index) for a in f.accesses if a.space in ("device", "constant", "texture")]
            sites += [(op.node, op.var.name if op.var else "?", op.coord) for op in resource_ops(model, f)
                      if op.op in ("read", "write", "atomic") and op.coord is not None]
            unchecked = []
            for node, name, index in sorted(sites, key=lambda s: s[0].start_byte):
                if index is None or not _global_position(model, index) or _clamped(model, index):
                    continue
                if position_guarded(model, node):
                    continue
                unchecked.append((node, name, index))
            if not unchecked:
                continue
            node, name, index = unchecked[0]
            yield Finding(
                f.name_node.start_byte, f.name_node.end_byte,
                f"kernel '{f.name}' accesses '{name}' at '{model.text(index)}', derived from the global thread "
                f"position, without checking it against the data size; threads of the last group past the end "
                f"read and write out of bounds",
                kernel=f.name,
                related=tuple(Related(n.start_byte, n.end_byte, f"unchecked access to '{nm}' at '{model.text(i)}'")
                              for n, nm, i in unchecked),
            )


def _launches_never_overshoot(model, f) -> bool:
    """Every launch of ``f`` in the file (and there is one) sizes each grid axis as ``1`` or
    ``n / block`` (rounded down, see :func:`truncating_numerator`) with ``n`` among the launch's
    arguments: no axis runs more threads than the size the kernel is given."""
    sites = [s for s in model.launches if s.kernel == f.name]
    if not sites:
        return False
    for site in sites:
        if site.grid is None or site.block is None:
            return False
        grid, block = dim_exprs(model, site.grid), dim_exprs(model, site.block)
        if grid is None or block is None:
            return False
        args = site.node.child_by_field_name("arguments")
        passed = {" ".join(model.text(a).split()) for a in (args.named_children if args is not None else ())}
        for axis, g in enumerate(grid[0]):
            if int_value(model, g) == 1:
                continue
            b = block[0][axis] if axis < len(block[0]) else None
            n = truncating_numerator(model, g, b) if b is not None else None
            if n is None or " ".join(model.text(n).split()) not in passed:
                return False
    return True


def _global_position(model, index) -> bool:
    """Arithmetic on the global position (a value loaded from memory, `bins[pixels[i]]`, is data)."""
    if not {B.LOCAL, B.GROUP} <= model.deps(index):
        return False
    stack = [index]
    while stack:
        n = stack.pop()
        if n.type == "subscript_expression":
            return False
        stack.extend(n.named_children)
    return True


def _clamped(model, index) -> bool:
    """An index bounded where it is computed: min/clamp, modulo, mask, a conditional, or a helper
    function whose result the analysis cannot see (followed through local variables)."""
    seen: set[int] = set()
    stack = [unparen(index)]
    while stack:
        n = stack.pop()
        if n.type == "conditional_expression":
            return True
        if n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            if op is not None and model.text(op) in ("%", "&"):
                return True
        if n.type == "call_expression":
            name = model.callee_name(n)
            if name in _CLAMPS or name in model.function_by_name:
                return True
        if n.type == "identifier":
            v = model.resolve(n)
            if v is not None and id(v) not in seen and not v.is_param and not v.is_global:
                seen.add(id(v))
                stack.extend(assigned_values(model, v) or ())
        stack.extend(n.named_children)
    return False
