"""SL102 unsigned-device-offset

## What it does
Flags a variable declared as a 32-bit unsigned integer (`uint`, `unsigned`,
`uint32_t`) that is used as the offset of a `device` memory access
(`buf[i]`, `buf[base + i]`) when the offset cannot be proven smaller than 2^31.
It is reported once, at the variable's declaration, with every such access as
a related location.

Left alone: `int`, `short`/`ushort` offsets, and sums and products of
`ushort` values (`a * 4u + b`: below 2^19); constants; values bounded below
2^31 by a mask (`& 0xFFFF`), a modulo (`% 1024u`), a right shift, `min`/`clamp`,
being the counter of a loop with a constant bound, or being built from
threadgroup-local IDs (`tid * 4 + j` with `tid [[thread_index_in_threadgroup]]`,
at most 1024 threads per group). A local stepped by a bounded amount a bounded
number of times stays bounded (`uint acc = tid; for (j = 0; j < 4; j++) {
...; acc += 256u; }`: below 1024 + 4 × 256), but not when a step sits in a
loop of run-time trip count or the local is decremented. A loop bounded by a
template parameter (`for (uint k = 0; k < N; ++k)` in `template <uint N>`)
has its counter below the largest `N` of the file's instantiations
(`templ<8>`), or, when they are not all known, below some compile-time
constant, which no buffer's element count reaches. Also left alone: offsets that stay
unsigned for another reason (a `uint` struct field, a cast, a call), where
changing the variable alone would not help; and the thread-position parameters
themselves (`[[thread_position_in_grid]]` …) and plain copies of them, which
SL301/SL302 cover.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC) explains
that the device-memory addressing hardware takes a signed 32-bit offset. With a
`uint` offset the compiler must honour unsigned wrap-around: `base + i` may wrap
at 2^32, so it cannot fold the arithmetic into the load's addressing mode and
emits the 64-bit address computation itself — extra instructions on every
access. A signed `int` offset, whose overflow is undefined, lets the compiler
use the hardware addressing directly.

## Example
```metal
kernel void gather_rows(device const float* in [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        constant uint& width [[buffer(2)]],
                        uint2 gid [[thread_position_in_grid]]) {
    uint row = gid.y * width;          // SL102
    out[row + gid.x] = in[row + gid.x];
}
```

## Use instead
```metal
    int row = int(gid.y * width);
    out[row + int(gid.x)] = in[row + int(gid.x)];
```

## Impact
Instruction count, not registers or occupancy: one or two address-arithmetic
instructions per access on Apple GPUs. The register model does not price it;
the impact field is left empty.

## Default
Opt-in (`--extend-select SL102`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 90 findings, every one judged by reading the
code, were 0 true, 69 false, 21 debatable: the offset was used outside the hot loop (an
epilogue store, a pointer built once), once per thread in a bandwidth-bound
kernel where one more address instruction does not show, or bounded by the
constants every call passes; and declaring only the flagged variable `int` often
leaves the offset unsigned, since the sum adds other `uint` locals. Bounds the
rule does not see yet: a division by a constant (`gid / 32`), the literal
arguments of an inlined helper, an `int` loop bound a counter cannot pass.
The debatable ones are `uint` counters of hot per-element loops dominated by
atomics, barriers or a bandwidth-bound read.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.expr import unparen
from shaderlint.model.guards import assigned_values, upper_bound
from shaderlint.rules.base import Rule, RuleContext

_LIMIT = 1 << 31
_THROUGH = ("+", "-", "*", "/", "%", "|", "^", "&")


class UnsignedDeviceOffset(Rule):
    code = "SL102"
    name = "unsigned-device-offset"
    languages = frozenset({"metal"})
    severity = Severity.WARNING
    default_on = False
    summary = "device-memory offset held in a 32-bit unsigned variable not provably below 2^31"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        found: dict[int, tuple] = {}
        for f in model.functions:
            if not f.is_device_code:
                continue
            for a in f.accesses:
                if a.space != "device" or a.index is None:
                    continue
                culprits = _offending(model, a.index)
                for v in culprits or ():
                    found.setdefault(id(v), (v, f, []))[2].append(a.index)
        for v, f, uses in sorted(found.values(), key=lambda t: t[0].node.start_byte):
            yield Finding(
                v.node.start_byte, v.node.end_byte,
                f"'{v.name}' is a 32-bit unsigned device-memory offset that is not provably below 2^31; "
                f"declare it 'int' so the access can use the hardware's signed offset addressing",
                kernel=v.function.name if v.function else f.name,
                related=tuple(Related(u.start_byte, u.end_byte, f"used as the offset '{model.text(u)}'") for u in uses),
            )


def _unsigned32(t) -> bool:
    return t.kind == "uint" and t.bits == 32 and t.width == 1


def _offending(model, index) -> list | None:
    """The variables that make ``index`` an unbounded 32-bit unsigned offset, or None when the
    offset is fine or stays unsigned for a reason other than a variable's declared type."""
    index = unparen(index)
    if not _unsigned32(model.type_of(index)):
        return None
    bound = upper_bound(model, index)
    if bound is not None and bound < _LIMIT:
        return None
    out: list = []
    return out if _leaves(model, index, out, 0) and out else None


def _leaves(model, node, out: list, depth: int) -> bool:
    """Collect unbounded uint variables; False when a uint leaf is not a retypeable variable."""
    node = unparen(node)
    t = model.type_of(node)
    if not _unsigned32(t):
        return t.is_integer and t.bits <= 32  # a signed or narrow operand does not keep the offset unsigned
    bound = upper_bound(model, node)
    if bound is not None and bound < _LIMIT:
        return True
    if depth > 8:
        return False
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None:
            return False
        text = model.text(op)
        if text in _THROUGH:
            return _leaves(model, left, out, depth + 1) and _leaves(model, right, out, depth + 1)
        if text in ("<<", ">>"):
            return _leaves(model, left, out, depth + 1)
        return False
    if node.type == "identifier":
        v = model.resolve(node)
        if v is None or v.is_global or v.role is not None or _copies_position(model, v):
            return False
        if v.is_param and v.address_space not in (None, "thread"):
            return False  # a buffer binding's type is shared with the host: not ours to retype
        if v not in out:
            out.append(v)
        return True
    return False


def _copies_position(model, v) -> bool:
    """A local holding only a thread-position parameter (``uint i = gid;``, ``uint x = gid.x;``)."""
    if v.is_param:
        return False
    values = assigned_values(model, v)
    if not values:
        return False
    for val in values:
        val = unparen(val)
        while val.type in ("field_expression", "cast_expression", "call_expression"):
            if val.type == "field_expression":
                val = val.child_by_field_name("argument")
            elif val.type == "cast_expression":
                val = val.child_by_field_name("value")
            else:
                args = model.call_args(val)
                if len(args) != 1:
                    return False
                val = args[0]
            val = unparen(val)
        if val.type != "identifier":
            return False
        src = model.resolve(val)
        if src is None or src.role is None:
            return False
    return True
