"""SL302 wide-grid-id

## What it does
Opt-in. Flags grid-wide position parameters — `thread_position_in_grid`,
`threadgroup_position_in_grid` and the linear `thread_index_in_grid` —
declared `uint`, `uint2` or `uint3` when the grid is known to fit 16 bits: a
`// shaderlint: grid-size=1920x1080` annotation directly above the kernel or
at the top of the file, or `grid-size` in the configuration for the path.
Every dimension the parameter carries must be at most 65536 threads (for
`thread_index_in_grid`, the whole grid). It is reported at the parameter.
Without a known grid size nothing is reported.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC)
recommends 16-bit types for thread IDs wherever the values fit: Apple GPUs
allocate registers in 16-bit units and have native 16-bit integer ALUs, so a
`ushort2` position costs half the registers of a `uint2` and the index math
built on it can stay 16-bit. The grid size is decided by the host, which is
why the rule needs to be told it and is off by default.

## Example
```metal
// shaderlint: grid-size=1920x1080
kernel void grade(texture2d<half, access::read_write> frame [[texture(0)]],
                  uint2 gid [[thread_position_in_grid]]) {   // SL302
    frame.write(frame.read(gid) * 0.9h, gid);
}
```

## Use instead
```metal
                  ushort2 gid [[thread_position_in_grid]]) {
```

## Fix safety
Unsafe: `uint` → `ushort`, `uintN` → `ushortN`. The position fits, but
arithmetic derived from it (`gid.y * width + gid.x`) now starts from 16-bit
values; make sure products that exceed 65535 are computed in `uint`.

## Impact
Registers: one 16-bit register unit per component saved on targets with
16-bit register units (Apple); none on 32-bit register files (impact null).

## Options
Enable with `--select SL302` or `extend-select = ["SL302"]`. The grid size
comes from the `grid-size` fact (`WxH` or `WxHxD`, in threads), annotated in
the source or set per path glob in the configuration.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Severity
from shaderlint.model.builtins import METAL_USHORT_SPELLING
from shaderlint.model.dispatch import kernel_fact as fact
from shaderlint.rules.base import Rule, RuleContext

GRID_ROLES = ("thread_position_in_grid", "threadgroup_position_in_grid", "thread_index_in_grid")
LIMIT = 65536  # positions 0 … 65535


def parse_grid(text: str) -> tuple[int, int, int] | None:
    try:
        dims = [int(p) for p in text.lower().split("x")]
    except ValueError:
        return None
    if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
        return None
    return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]


class WideGridId(Rule):
    code = "SL302"
    name = "wide-grid-id"
    languages = frozenset({"metal"})
    severity = Severity.INFO
    fix = "unsafe"
    default_on = False
    summary = "grid position declared uint where the grid is known to fit 16 bits"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.kernels:
            params = [p for p in f.params if p.role in GRID_ROLES and p.type.kind == "uint" and p.type.bits == 32
                      and 1 <= p.type.width <= 3]
            if not params:
                continue
            spec = fact(model, f, "grid-size", ctx.facts)
            grid = parse_grid(spec) if spec else None
            if grid is None:
                continue
            for p in params:
                if p.role == "thread_index_in_grid":
                    fits = grid[0] * grid[1] * grid[2] <= LIMIT
                else:
                    fits = all(d <= LIMIT for d in grid[:p.type.width])
                if not fits:
                    continue
                ty = p.decl.child_by_field_name("type")
                spelled = " ".join(model.text(ty).split()) if ty is not None else ""
                want = METAL_USHORT_SPELLING.get(spelled)
                fix = None
                if want is not None:
                    fix = Fix(f"Declare '{p.name}' as {want}", Applicability.UNSAFE,
                              (Edit(ty.start_byte, ty.end_byte, want),))
                yield Finding(p.decl.start_byte, p.node.end_byte,
                              f"'{p.name}' [[{p.role}]] is declared {p.type.name} but the grid is {spec} threads, "
                              f"which fits 16 bits: declare it {want or 'ushort'}",
                              kernel=f.name, fix=fix)
