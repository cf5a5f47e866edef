"""SL501 threadgroup-size-not-simd-multiple

## What it does
Flags a declared threadgroup size whose thread count is not a multiple of the
target's SIMD width: GLSL `layout(local_size_x = …) in;`, Metal
`[[max_total_threads_per_threadgroup(N)]]`, CUDA `__launch_bounds__(N)`, the
constant block size of a `<<<grid, block>>>` launch in the same file (a
literal, a constant, a `dim3` constructor or variable, a variable holding the
size), a `// shaderlint: threadgroup-size=WxHxD` annotation, or
`threadgroup-size` in configuration. Reported once per declaration; a kernel
launched with several sizes is checked at each. The message gives the
arithmetic on the active target: SIMD groups per group, idle lanes, lane use,
how many groups fit one core and the occupancy ceiling that follows, e.g. for
a 13×13 workgroup on sm_75: "169 threads = 6 warps with 23 idle lanes (88 %
lane use); at most 5 groups per SM on sm_75 → occupancy ceiling 93.75 %".
Sizes over the target's limits are SL502's. A launch of one block of one
thread (`kernel<<<1, 1>>>`) runs one thread on purpose (tests, set-up steps)
and is left alone; one-thread blocks in a larger grid are reported.

## Why is this bad?
The hardware runs a group as whole SIMD groups: 169 threads occupy six 32-lane
warps, and the 23 lanes of the last one do nothing while costing the same
issue slots and registers ("Visualizing GL_NV_shader_sm_builtins": the
workgroup size should be a multiple of the subgroup size, 32 on NVIDIA and
Intel, 64 on AMD; 13×13 gives 6 warps, 5 groups per Turing SM, 30 of 32 warps
= 93.75 %). Metal's "Calculating threadgroup and grid sizes" likewise derives
threads per threadgroup from `threadExecutionWidth`, and pystencils trims block
sizes to warp-size multiples.

## Example
```glsl
layout(local_size_x = 13, local_size_y = 13) in;   // SL501
```

## Use instead
```glsl
layout(local_size_x = 16, local_size_y = 16) in;   // 256 = 8 full warps
```

## Impact
From the occupancy model in `shaderlint.estimate.occupancy` (the CUDA
Occupancy Calculator's group-size and groups-per-core limits; registers and
threadgroup memory are not counted): `occupancy_before` is the ceiling with the
declared size, `occupancy_after` with the size rounded up to whole SIMD groups
(often the same — the loss is then idle lanes, not residency). Apple figures
per core are estimates and the message says so.

## Default
Opt-in (`--extend-select SL501`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 7 findings were 2 true, 4 false, 1 debatable:
most were tiny bookkeeping launches (`<<<3, 5>>>` writing one field per thread)
where launch latency is all that matters.

## Options
None. The SIMD width and per-core limits are the target's (`--target`).

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: `__launch_bounds__(100)` becomes
`.maxntid 100, 1, 1` with no diagnostic — neither nvcc nor ptxas warns about a
block that is not a whole number of warps. The block still occupies
ceil(100 / 32) = 4 warps, 28 of 128 lanes idle (78 % lane use); launch-site
sizes (`dim3 block(10, 10)`, `<<<…, 48>>>`) are not visible to the compiler
at all.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Impact, Severity
from shaderlint.estimate.occupancy import group_dims_violations, lane_use, occupancy
from shaderlint.model.dispatch import (
    GROUP_WORDS, declared_sizes, describe_origin, format_dims, simd_terms, single_thread_launch,
)
from shaderlint.rules.base import Rule, RuleContext


def percent(x: float) -> str:
    return f"{x * 100:.2f}".rstrip("0").rstrip(".")


class ThreadgroupSizeNotSimdMultiple(Rule):
    code = "SL501"
    name = "threadgroup-size-not-simd-multiple"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    default_on = False
    summary = "declared threadgroup size is not a multiple of the SIMD width"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        t = ctx.target
        width = t.simd_width
        simd, core = simd_terms(t)
        reported: set[int] = set()
        for f in model.functions:
            if not (f.is_entry and f.is_device_code):
                continue
            for gs in declared_sizes(model, f, ctx.facts):
                total = gs.total
                if gs.start in reported or total % width == 0 or group_dims_violations(t, gs.dims):
                    continue  # too large a group is SL502's
                if single_thread_launch(model, gs):
                    continue  # `<<<1, 1>>>`: one thread on purpose (a test, a set-up step), not wasted lanes
                reported.add(gs.start)
                warps, idle, use = lane_use(total, width)
                occ = occupancy(t, total, None)
                rounded = warps * width
                after = occupancy(t, rounded, None) if rounded <= t.max_threads_per_group else None
                dims = format_dims(gs.dims)
                shape = f"{dims} = {total}" if "×" in dims else f"{total}"
                bound = "at most " if not gs.exact else ""
                estimate = " (estimated)" if occ.estimated else ""
                yield Finding(
                    gs.start, gs.end,
                    f"{GROUP_WORDS[model.language]} size {bound}{shape} (from {describe_origin(model, gs)}) is not a "
                    f"multiple of the {width}-lane {simd}: {total} threads = {warps} {simd}s with {idle} idle lanes "
                    f"({use * 100:.0f} % lane use); at most {occ.groups_per_core} groups per {core} on {t.name} "
                    f"→ occupancy ceiling {percent(occ.occupancy)} %{estimate}",
                    kernel=f.name,
                    impact=Impact(target=t.name, occupancy_before=occ.occupancy,
                                  occupancy_after=after.occupancy if after is not None else None),
                )

