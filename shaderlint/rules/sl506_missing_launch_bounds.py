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

It reports only what makes such a launch fail: ptxas's register count for the
kernel is more than a block of that size fits. A block of 288 or 384 threads
fits at most 168 registers per thread, 512 threads 128, 1024 threads 64
(65,536 registers per SM, allocated per warp in units of 256); up to 256
threads every count ptxas may pick (at most 255) fits. The count comes from
the compiler: the rule needs `compiler = "ptxas"` (or `"auto"`) in
configuration, or `--compiler`, and nvcc installed, and is silent otherwise --
the register estimate cannot tell 25 registers from 91 (see Default). The
language server never compiles (an editor must not wait a second per
keystroke), so these findings come from command-line and CI runs.

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
The difference between a launch that fails and one that runs: with the bounds,
ptxas fits the registers to the block (spilling if it must). The message gives
ptxas's count and the most the block fits; the impact is measured (the kernel
compiled with and without the bounds: registers, spill stack and occupancy
ptxas gives the bounded version).

## Fix safety
Unsafe: `__launch_bounds__(N)` lets the compiler cap registers for N threads,
which can add spills (slower), and a launch elsewhere (another file, a host
library) with larger blocks then fails with "too many resources requested
for launch" instead of running.

## Options
None.

## Default
Opt-in (`--extend-select SL506`, with a compiler configured). On the real-code
corpus (`python bench/realcode.py`, 33 pinned PyPI sdists), before it asked the
compiler, the rule reported 222 kernels with a fixed block size: 5 judged
useless or wrong among the 182 of up to 256 threads (no register count can
make those launches fail), and all 40 of more than 256 threads judged false
with ptxas on sm_80 and sm_90 (every one small: at most 48 of 64 registers at
1024 threads, 46 of 128 at 512, 64 of 168 at 384). Its estimate-based version
therefore never found a launch that fails; with the compiler's count it
reports exactly those. The corpus is linted without a compiler, so the rule
has no findings there.

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

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Related, Severity
from shaderlint.estimate import measured
from shaderlint.estimate.occupancy import max_registers_for_group
from shaderlint.model.dispatch import format_dims, group_size
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
            cap = max_registers_for_group(ctx.target, gs.total)
            if cap >= ctx.target.max_registers_per_thread:
                continue  # every count ptxas may pick fits such a block (<<<1, 1>>> too): bounds decide nothing
            used = measured.registers(model, ctx.settings, ctx.target, f.name)
            if used is None or used <= cap:
                continue  # only the compiler's count shows a launch that fails; the estimate cannot
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
                f"kernel '{f.name}' has no __launch_bounds__ although {where} {shape} threads: ptxas gives it "
                f"{used} registers per thread on {ctx.target.name}, but a block that size fits at most {cap}, so "
                f"the launch fails (too many resources requested for launch); declare __launch_bounds__({gs.total})",
                kernel=f.name,
                related=(Related(f.name_node.start_byte, f.name_node.end_byte, "kernel"),),
                fix=Fix(f"Add __launch_bounds__({gs.total})", Applicability.UNSAFE,
                        tuple(Edit(g.name_node.start_byte, g.name_node.start_byte, f"__launch_bounds__({gs.total}) ")
                              for g in overloads)),
            )
