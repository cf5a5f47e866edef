"""SL301 wide-thread-id

## What it does
Flags kernel parameters carrying a threadgroup-local position or count —
`thread_position_in_threadgroup`, `thread_index_in_threadgroup`,
`thread_index_in_simdgroup`, `simdgroup_index_in_threadgroup`,
`threads_per_threadgroup`, `threads_per_simdgroup`,
`simdgroups_per_threadgroup`, `thread_execution_width`, the quadgroup
equivalents and `dispatch_threads_per_threadgroup` — declared `uint`, `uint2`
or `uint3`. It is reported at the parameter.

## Why is this bad?
A threadgroup holds at most 1024 threads, so every one of these values fits
16 bits. Apple's GPU compiler team ("Advanced Metal Shader Optimization",
WWDC) recommends `ushort` for them: Apple GPUs allocate registers in 16-bit
units and have native 16-bit integer ALUs, so a `ushort` ID takes half the
register space of a `uint` and the arithmetic derived from it can stay 16-bit.
Metal accepts `ushort`/`ushortN` for all these attributes.

## Example
```metal
kernel void reduce(device const float* in [[buffer(0)]],
                   threadgroup float* scratch [[threadgroup(0)]],
                   uint lid [[thread_index_in_threadgroup]],       // SL301
                   uint2 tid [[thread_position_in_threadgroup]]) { // SL301
    ...
}
```

## Use instead
```metal
                   ushort lid [[thread_index_in_threadgroup]],
                   ushort2 tid [[thread_position_in_threadgroup]]) {
```

## Fix safety
Unsafe: `uint` → `ushort`, `uintN` → `ushortN`. The value always fits, but
expressions built from it now start from a 16-bit type: `lid - 1` with
`lid == 0` wraps differently, and `lid * 4096` can overflow where the `uint`
version did not. Review arithmetic that can leave the 16-bit range.

## Impact
Registers: one 16-bit register unit per component saved on targets with
16-bit register units (Apple); none on 32-bit register files. The estimate is
too small to change occupancy on its own (impact null).

## Options
None.

## Default
Opt-in (`--extend-select SL301`). On the real-code corpus (`bench/realcode/`,
33 PyPI sdists; every finding read in the code, `bench/realcode/judged.tsv`)
it reports 216 parameters: 1 true, 197 false, 18 debatable. The value always
fits 16 bits, but declaring it `ushort` changes nothing where the kernel
widens it at its first use (a grid-stride loop `for (int i = tpitg; …)`, a
global index `tgpig * ntg + tpitg`, an `int64_t` local), copies it into a
`uint` local, only compares it or indexes threadgroup memory with it, or
never reads it. The one true finding keeps the ID live through a loop that
derives many small threadgroup offsets from it (upstream later declared that
parameter `ushort`). A version worth turning on would report only IDs whose
derived arithmetic can stay 16-bit.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Severity
from shaderlint.model.builtins import METAL_LOCAL_ROLES, METAL_USHORT_SPELLING
from shaderlint.rules.base import Rule, RuleContext


def narrow_type(model, v) -> tuple[str, object] | None:
    """(ushort spelling, type node) for a parameter declared with a 32-bit unsigned type we can rewrite."""
    ty = v.decl.child_by_field_name("type")
    if ty is None:
        return None
    spelled = " ".join(model.text(ty).split())
    return (METAL_USHORT_SPELLING[spelled], ty) if spelled in METAL_USHORT_SPELLING else None


def is_wide_uint(t) -> bool:
    return t.kind == "uint" and t.bits == 32 and 1 <= t.width <= 3


class WideThreadId(Rule):
    code = "SL301"
    name = "wide-thread-id"
    languages = frozenset({"metal"})
    severity = Severity.WARNING
    default_on = False
    fix = "unsafe"
    summary = "threadgroup-local thread ID declared uint instead of ushort"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.functions:
            for p in f.params:
                if p.role not in METAL_LOCAL_ROLES or not is_wide_uint(p.type):
                    continue
                narrow = narrow_type(model, p)
                fix = None
                if narrow is not None:
                    text, ty = narrow
                    fix = Fix(f"Declare '{p.name}' as {text}", Applicability.UNSAFE,
                              (Edit(ty.start_byte, ty.end_byte, text),))
                want = narrow[0] if narrow else f"ushort{p.type.width if p.type.width > 1 else ''}"
                yield Finding(p.decl.start_byte, p.node.end_byte,
                              f"'{p.name}' [[{p.role}]] is declared {p.type.name}; threadgroup-local values always fit "
                              f"16 bits: declare it {want}",
                              kernel=f.name, fix=fix)
