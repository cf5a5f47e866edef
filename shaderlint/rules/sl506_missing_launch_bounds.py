"""SL506 missing-launch-bounds

## What it does
Flags a CUDA kernel without `__launch_bounds__` whose block size is fixed: every
launch of it in the same `.cu` file uses the same constant block size (a
literal, a constant, a `dim3` constructor or variable), or a `// shaderlint:
threadgroup-size=` annotation (above the kernel or at the top of the file) or
`threadgroup-size` in configuration states it. Reported at the size
declaration (the launch or `dim3` holding the constant, the annotation), or at
the kernel for file-wide facts. The fix inserts `__launch_bounds__(N)` before
the kernel's name. Overloads of one kernel share their launches (a launch names
the kernel, not the overload): they are reported once, and the fix bounds each.

Only block sizes for which the bounds can decide anything are reported: those
whose blocks cannot fit the most registers ptxas ever allocates (255 per
thread). On every NVIDIA target that means more than 256 threads: a block of
288 or 384 threads fits at most 168 registers per thread, 512 threads 128,
1024 threads 64 (65,536 registers per SM, allocated per warp in units of
256). Up to 256 threads every count ptxas may pick fits, the launch cannot
fail for registers, and the rule is silent.

## Why is this bad?
ptxas allocates a kernel's registers without knowing how large its blocks will
be. It picks a count by its own heuristics (up to 255 per thread), and a launch
whose blocks need more registers than the SM has fails at run time ("If a
program tries to launch a kernel for which the registers used per thread times
the thread block size is greater than N, the launch will fail", CUDA Occupancy
Calculator). With `__launch_bounds__(N)` ptxas fits the registers to N threads
(spilling if it must) and the runtime rejects larger blocks with a clear error;
with a second argument it also aims at a number of resident blocks. (The SPEC
says ptxas "must assume 1024 threads" without the bounds; the measurements
below show it does not: it assumes nothing, which is the problem.)

## Example
```cuda
__global__ void correlate(const float* in, float* out, int n) { … }   // 80 registers
correlate<<<(n + 1023) / 1024, 1024>>>(in, out, n);                 // SL506: fits 64
```

## Use instead
```cuda
__global__ void __launch_bounds__(1024) correlate(const float* in, float* out, int n) { … }
```

## Impact
Registers: often no change (a kernel that already fits keeps its count); for a
kernel that does not fit the declared block size, the difference between a
launch that fails and one that runs with spills. The message names the size;
the impact's deltas stay null until the register model can compare the two
compilations.

## Fix safety
Unsafe: `__launch_bounds__(N)` lets the compiler cap registers for N threads,
which can add spills (slower), and a launch elsewhere (another file, a host
library) with larger blocks then fails with "too many resources requested
for launch" instead of running.

## Options
None.

## Default
Opt-in (`--extend-select SL506`). Whether a finding matters depends on the
register count ptxas picks, which only the compiler knows (`shaderlint report
--compiler ptxas` shows it; the estimate cannot yet tell reliably,
docs/register-model.md). On the real-code corpus (`python bench/realcode.py`,
33 pinned PyPI sdists) the rule reported 222 kernels while it also reported
block sizes up to 256 threads; every one judged then (5) was useless or
wrong, because no register count can make such a launch fail. Restricted to
blocks of more than 256 threads it reports 40; see the README's real-code
table for how they were judged.

## Evidence
`nvcc -arch=sm_90 -c -Xptxas -v` on the CUDA fixture: `correlate`, launched
only with 1024-thread blocks, compiles to "Used 80 registers, used 0 barriers"
with "0 bytes stack frame" — 80 × 1024 = 81,920 registers, more than the
65,536 of an SM, so every launch in the file fails. With the fix
(`__launch_bounds__(1024)`) ptxas reports "Used 64 registers", "16 bytes stack
frame, 12 bytes spill stores, 12 bytes spill loads": it now fits. `transpose`
(12 registers, 256 threads) is unchanged by a bound, which is why 256-thread
blocks are not reported. A kernel that keeps 200 floats live compiles to 211
registers without bounds; `__launch_bounds__(288)` and `(384)` give 168
(with 200 bytes of spills), 512 gives 64 — so a 512-thread launch of the
unbounded build fails where the bounded one runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.estimate.occupancy import max_registers_for_group
from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Related, Severity
from shaderlint.model.dispatch import format_dims, group_size, single_thread_launch
from shaderlint.rules.base import Rule, RuleContext


class MissingLaunchBounds(Rule):
    code = "SL506"
    name = "missing-launch-bounds"
    languages = frozenset({"cuda"})
    severity = Severity.INFO
    default_on = False
    fix = "unsafe"
    summary = "kernel with a fixed block size but no __launch_bounds__"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        # Overloads share their launches (a launch names the kernel, not the overload): one report
        # per name and size declaration, whose fix bounds every overload without bounds.
        unbounded: dict[str, list] = {}
        for f in model.functions:
            if f.kind == "kernel" and f.launch_bounds_node is None:
                unbounded.setdefault(f.name, []).append(f)
        reported: set[tuple[str, int]] = set()
        for f in model.functions:
            if f.kind != "kernel" or f.launch_bounds_node is not None:
                continue
            gs = group_size(model, f, ctx.facts)
            if gs is None or gs.origin not in ("launch", "dim3", "annotation", "config", "host"):
                continue
            if gs.total > ctx.target.max_threads_per_group:
                continue  # cannot launch at all: SL502
            if single_thread_launch(model, gs):
                continue  # `<<<1, 1>>>`: a one-thread test or set-up kernel; bounds would change nothing
            cap = max_registers_for_group(ctx.target, gs.total)
            if cap >= ctx.target.max_registers_per_thread:
                continue  # every register count ptxas may pick fits such a block: the bounds decide nothing
            dims = format_dims(gs.dims)
            shape = f"{dims} = {gs.total}" if "×" in dims else dims
            where = {"launch": "every launch of it in this file uses", "dim3": "every launch of it in this file uses",
                     "annotation": "its threadgroup-size annotation gives",
                     "config": "the configured threadgroup-size gives",
                     "host": "every launch of it read in host code uses"}[gs.origin]
            at = (gs.start, gs.end)
            if gs.origin == "annotation" and "threadgroup-size" not in f.facts:
                at = (f.name_node.start_byte, f.name_node.end_byte)  # a file-wide annotation: report per kernel
            if (f.name, at[0]) in reported:
                continue
            reported.add((f.name, at[0]))
            overloads = [f] if at[0] == f.name_node.start_byte else unbounded.get(f.name, [f])
            yield Finding(
                at[0], at[1],
                f"kernel '{f.name}' has no __launch_bounds__ although {where} {shape} threads: a block that "
                f"size fits at most {cap} registers per thread on {ctx.target.name}, but ptxas, not knowing the "
                f"block size, may allocate up to {ctx.target.max_registers_per_thread} and the launch then fails; "
                f"declare __launch_bounds__({gs.total})",
                kernel=f.name,
                related=(Related(f.name_node.start_byte, f.name_node.end_byte, "kernel"),),
                fix=Fix(f"Add __launch_bounds__({gs.total})", Applicability.UNSAFE,
                        tuple(Edit(g.name_node.start_byte, g.name_node.start_byte, f"__launch_bounds__({gs.total}) ")
                              for g in overloads)),
            )
