"""SL204 char-arithmetic

## What it does
Flags arithmetic whose result is kept in an 8-bit integer variable
(`char`, `uchar`, `int8_t`, `uint8_t`, `charN`, `ucharN`) in thread-private
memory: `++`/`--`, compound assignments (`c += d`, `c *= 3`, `c <<= 1`), and
`c = a + b` / `uchar c = a * b` where an operand is itself 8-bit. It is
reported once per variable, at its first such arithmetic, with the other sites
as related locations. Bitwise `& | ^` and `>>` (which cannot overflow 8 bits),
8-bit values loaded from buffers and used in wider arithmetic, and stores to
device memory (the store truncates for free) are not flagged.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC) points
out that Apple GPUs have 16-bit and 32-bit ALUs but no 8-bit ones: `char`
arithmetic is emulated, so every operation whose 8-bit wrap-around must be
kept costs extra instructions (masking or sign extension after each step).
`short`/`ushort` is as cheap as it gets — 16-bit registers and native 16-bit
ALU operations.

## Example
```metal
kernel void count_edges(device const uchar* mask [[buffer(0)]],
                        device uchar* out [[buffer(1)]],
                        uint gid [[thread_position_in_grid]]) {
    uchar edges = 0;
    for (uint k = 0; k < 8; ++k)
        edges += mask[gid * 8 + k] != 0;   // SL204: 8-bit accumulator
    out[gid] = edges;
}
```

## Use instead
Compute in `ushort` (or `short`) and convert once, when storing:
```metal
    ushort edges = 0;
    ...
    out[gid] = uchar(edges);
```

## Fix safety
Unsafe: for a scalar local variable the fix widens its declaration
(`uchar`/`uint8_t` → `ushort`, `char`/`int8_t` → `short`), which changes
the wrap-around from 256 to 65536 — harmless for counters that never overflow,
a behaviour change for code that relies on 8-bit wrap-around. Vectors
(`uchar4` → `ushort4` needs explicit conversions in Metal) and parameters get
no fix.

## Impact
Instruction count rather than registers: one or two extra ALU operations per
8-bit operation to re-establish 8-bit wrap-around. No register or occupancy
change (impact null).

## Default
Opt-in (`--extend-select SL204`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 11 findings were all false: 8-bit constants
computed once outside loops and only used in `&` masks (no wrap-around to
emulate), and `uchar` loop counters with small constant bounds.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Related, Severity
from shaderlint.model.expr import unparen
from shaderlint.model.dispatch import nodes_in
from shaderlint.rules.base import Rule, RuleContext

GROWING = frozenset("+ - * / % <<".split())
COMPOUND = frozenset("+= -= *= /= %= <<=".split())
WIDER = {"char": "short", "uchar": "ushort", "signed char": "short", "unsigned char": "ushort",
         "int8_t": "short", "uint8_t": "ushort"}


def is_byte(t) -> bool:
    return t.kind in ("int", "uint") and t.bits == 8


class CharArithmetic(Rule):
    code = "SL204"
    name = "char-arithmetic"
    languages = frozenset({"metal"})
    severity = Severity.INFO
    default_on = False
    fix = "unsafe"
    summary = "8-bit integer arithmetic (no native 8-bit ALU on Apple GPUs)"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        sites: dict[int, list] = {}  # id(var) -> [(var, start, end, what)]
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            lo, hi = f.body.start_byte, f.body.end_byte
            candidates = sorted(nodes_in(model, "update", lo, hi) + nodes_in(model, "assign", lo, hi)
                                + nodes_in(model, "init", lo, hi), key=lambda n: n.start_byte)
            for node in candidates:
                hit = self._site(model, node)
                if hit is not None:
                    var, start, end, what = hit
                    sites.setdefault(id(var), []).append((var, start, end, what, f))
        for entries in sorted(sites.values(), key=lambda e: e[0][1]):
            var, start, end, what, f = entries[0]
            related = tuple(Related(s, e, f"8-bit arithmetic: {w}") for _, s, e, w, _ in entries[1:])
            wider = _wider(model, var)
            fix = None
            if wider is not None:
                ty = var.decl.child_by_field_name("type")
                fix = Fix(f"Declare '{var.name}' as {wider}", Applicability.UNSAFE,
                          (Edit(ty.start_byte, ty.end_byte, wider),))
            advice = f"declare it {wider}" if wider else "compute in short/ushort and convert when storing"
            yield Finding(start, end,
                          f"8-bit arithmetic on '{var.name}' ({var.type.element().name if var.is_array else var.type.name}) is emulated (no 8-bit ALU on "
                          f"Apple GPUs): {what}; {advice}",
                          kernel=f.name, related=related, fix=fix)

    def _site(self, model, node):
        t = node.type
        if t == "update_expression":
            arg = node.child_by_field_name("argument")
            v = _private_byte_var(model, arg)
            if v is not None:
                return v, node.start_byte, node.end_byte, f"'{model.text(node)}'"
        elif t == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            if left is None or right is None or op is None:
                return None
            v = _private_byte_var(model, left)
            if v is None:
                return None
            o = model.text(op)
            if o in COMPOUND:
                return v, op.start_byte, op.end_byte, f"'{model.text(node)}'"
            if o == "=":
                b = _byte_binary(model, right)
                if b is not None:
                    return v, b.start_byte, b.end_byte, f"'{model.text(node)}'"
        elif t == "init_declarator":
            decl, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            if decl is None or value is None or decl.type != "identifier":
                return None
            v = _private_byte_var(model, decl)
            b = _byte_binary(model, value) if v is not None else None
            if b is not None:
                return v, b.start_byte, b.end_byte, f"'{model.text(node)}'"
        return None


def _private_byte_var(model, lvalue):
    """The thread-private 8-bit variable an lvalue writes to, or None."""
    if lvalue is None or not is_byte(model.type_of(lvalue)):
        return None
    v = model.base_var(lvalue)
    if v is None or v.is_global or v.address_space not in (None, "thread"):
        return None
    if v.type.kind == "pointer" or (v.is_param and "&" in model.text(v.decl)):
        return None  # writes through a pointer/reference land in memory
    return v


def _byte_binary(model, expr):
    """The operator of an overflow-prone binary expression with an 8-bit operand, or None."""
    n = unparen(expr)
    if n.type != "binary_expression":
        return None
    op = n.child_by_field_name("operator")
    left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
    if op is None or left is None or right is None or model.text(op) not in GROWING:
        return None
    if is_byte(model.type_of(left)) or is_byte(model.type_of(right)):
        return op
    return None


def _wider(model, var) -> str | None:
    if var.is_param or var.type.element().width != 1:
        return None
    ty = var.decl.child_by_field_name("type")
    if ty is None:
        return None
    return WIDER.get(" ".join(model.text(ty).split()))
