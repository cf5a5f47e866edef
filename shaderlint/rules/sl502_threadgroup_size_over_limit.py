"""SL502 threadgroup-size-over-limit

## What it does
Flags a declared threadgroup size (the declarations SL501 reads: GLSL
`local_size_*`, Metal `[[max_total_threads_per_threadgroup(N)]]`, CUDA
`__launch_bounds__`, constant launch-site block sizes and `dim3`s, the
`threadgroup-size` annotation or configuration) that exceeds the target's
per-group limit, in total or along one dimension: 1024 threads and z ≤ 64 on
NVIDIA GPUs and on the generic GLSL target (OpenGL's guaranteed minimum), 1024
on Apple GPUs from A11 (512 on A8).

## Why is this bad?
Such a group cannot launch. CUDA rejects the launch at run time
(`cudaErrorInvalidConfiguration`), Metal fails pipeline creation or the
dispatch, Vulkan/OpenGL reject the pipeline or the dispatch
("Visualizing GL_NV_shader_sm_builtins": the workgroup size must not exceed
`maxComputeWorkGroupInvocations`); the compilers accept the source.

## Example
```metal
[[max_total_threads_per_threadgroup(2048)]]   // SL502 on apple-m1 (limit 1024)
kernel void saxpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]], uint gid [[thread_position_in_grid]]) { … }
```

## Use instead
```metal
[[max_total_threads_per_threadgroup(1024)]]
```

## Impact
The kernel does not run at all: no estimate is meaningful (the impact's
deltas are null).

## Options
None. Limits are the target's (`--target`).

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture emits `.maxntid 2048, 1, 1` for
`__launch_bounds__(2048)` and `-Xptxas -v` reports "Used 10 registers, used 0 barriers" without
any warning; the `dim3 block(8, 2, 128)` and `dim3(64, 32)` launches are host
code the device compiler never checks. Only the launch fails.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Severity
from shaderlint.estimate.occupancy import group_dims_violations
from shaderlint.model.dispatch import GROUP_WORDS, declared_sizes, describe_origin, format_dims
from shaderlint.rules.base import Rule, RuleContext


class ThreadgroupSizeOverLimit(Rule):
    code = "SL502"
    name = "threadgroup-size-over-limit"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.ERROR
    summary = "declared threadgroup size exceeds the target's per-group limit"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        t = ctx.target
        reported: set[int] = set()
        for f in model.functions:
            if not (f.is_entry and f.is_device_code):
                continue
            for gs in declared_sizes(model, f, ctx.facts):
                problems = group_dims_violations(t, gs.dims)
                if gs.start in reported or not problems:
                    continue
                reported.add(gs.start)
                yield Finding(
                    gs.start, gs.end,
                    f"{GROUP_WORDS[model.language]} size {format_dims(gs.dims)} (from {describe_origin(model, gs)}) "
                    f"cannot launch: {'; '.join(problems)}",
                    kernel=f.name,
                )
