"""SL203 half-literal-overflow

## What it does
Flags a constant whose magnitude exceeds 65504, the largest finite half, where
it is converted to a half type: a half literal (`1e5h`, GLSL `70000.0hf`), the
initializer of or a value assigned to a `half`/`halfN`/`float16_t`/`__half`
variable, a constructor or cast (`half(70000.0)`, `f16vec2(1e5, 0.0)`,
`(__half)1e6`, `static_cast<__half>(…)`), a value returned from a
half-returning function, and CUDA's round-to-nearest conversions
(`__float2half(70000.f)`, `__float2half_rn`, `__floats2half2_rn`,
`__int2half_rn`, …). The constant may be a literal or any constant expression
the model can evaluate (`256.0 * 256.0`, a `constexpr` value). It is reported
at the constant. bfloat16 types (range up to 3.4e38) are not half and are left
alone, and so are the round-toward-zero conversions (`__float2half_rz`), which
saturate to 65504.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC) urges
using half wherever the range allows; the flip side is half's range: 5
exponent bits, largest finite value 65504. A larger value rounds to infinity
(values from 65504 up to 65520 round down to 65504), and one infinity in a
blend, normalisation or reduction turns the result into `inf` or `NaN`. The
compiler accepts the code silently because the conversion is well defined.

## Example
```metal
kernel void clamp_depth(device half* depth [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    half far_plane = 100000.0;          // SL203: +inf in half
    depth[gid] = min(depth[gid], far_plane);
}
```

## Use instead
Keep the value in `float`, or rescale the quantity so it fits half (store
depth in kilometres, normalise before converting):
```metal
    float far_plane = 100000.0;
    depth[gid] = half(min(float(depth[gid]), far_plane));
```

## Impact
Correctness, not performance: the value is infinite. No register or occupancy
change (impact null).

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture keeps every flagged conversion and
shows the constant feeding it: `__float2half(70000.0f)` is
`mov.f32 %f8, 0f4788B800;` then `cvt.rn.f16.f32 %rs1, %f8;` (0f4788B800 is
70000.0; rounding to nearest in half gives 0x7C00, +infinity),
`(__half)1.0e6` is `cvt.rn.f16.f64 %rs2, %fd1` of `0d412E848000000000`, and
`__int2half_rn(100000)` is `cvt.rn.f16.s32`. `const __half kMasked =
-100000.0f` converts once (`cvt.rn.f16.f32 %rs7, %f7` of `0fC7C35000`) and
the later `out[…] = kMasked` stores that half (`st.global.u16 […], %rs7`),
which is why only the declaration is reported. The negatives:
`__float2half(65504.0f)` converts `0f477FE000`, the largest finite half, and
`__float2half_rz(70000.0f)` is `cvt.rz.f16.f32`, which saturates to 65504.
"""

from __future__ import annotations

import re

from collections.abc import Iterable
from functools import lru_cache

import tree_sitter as ts

from shaderlint.diagnostics import Finding, Severity
from shaderlint.model.expr import unparen
from shaderlint.model.types import parse_type_name
from shaderlint.rules.base import Rule, RuleContext

HALF_MAX = 65504.0
HALF_INF = 65520.0  # round-to-nearest: values from here on become infinity
CONVERSIONS = frozenset({
    "__float2half", "__float2half_rn", "__double2half", "__float2half2_rn", "__floats2half2_rn",
    "__int2half_rn", "__uint2half_rn", "__ll2half_rn", "__ull2half_rn",
})


def _half_family(type_text: str) -> bool:
    if "bfloat" in type_text or "bf16" in type_text:
        return False
    t = parse_type_name(type_text.replace("*", " ").replace("&", " "))
    return t.kind == "float" and t.bits == 16


class HalfLiteralOverflow(Rule):
    code = "SL203"
    name = "half-literal-overflow"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.ERROR
    summary = "a constant beyond 65504 converted to half (becomes infinity)"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        if not _has_big_literal(model.source.data):
            return  # every finding needs a literal beyond the half range somewhere in the file
        seen: set[tuple[int, int]] = set()
        for node in _candidates(model):
            for expr in self._converted(model, node):
                expr = unparen(expr)
                key = (expr.start_byte, expr.end_byte)
                if expr != node and any(True for _ in self._converted(model, expr)) and expr.type != "user_defined_literal" \
                        and expr.type != "number_literal":
                    continue  # a conversion to half itself (`half x = half(1e5)`): reported at its argument
                if expr != node and model.type_of(expr).is_half:
                    continue  # already half (`out[i] = kHalfConst`): converted, and reported, where it was made
                if key in seen or not _device_context(model, expr):
                    continue
                value = model.const_value(expr)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) <= HALF_MAX:
                    continue
                seen.add(key)
                f = model.function_at(expr.start_byte)
                if abs(value) >= HALF_INF:
                    what = f"becomes {'-' if value < 0 else '+'}infinity"
                else:
                    what = f"rounds to {'-' if value < 0 else ''}65504"
                text, end = model.text(expr), expr.end_byte
                if model.language == "glsl" and model.source.data[end:end + 2].lower() == b"hf":
                    end += 2  # the GLSL suffix, masked for parsing
                    text = model.source.text(expr.start_byte, end)
                yield Finding(expr.start_byte, end,
                              f"'{text}' ({value:g}) is beyond the half range (largest finite half is "
                              f"65504): converted to half it {what}",
                              kernel=f.name if f is not None else None)

    def _converted(self, model, node):
        """Expressions that ``node`` converts to a half type."""
        t = node.type
        if t == "user_defined_literal":
            suffix = model.text(node.named_children[-1]) if node.named_child_count > 1 else ""
            if suffix in ("h", "H"):
                yield node
        elif t == "number_literal" and model.language == "glsl":
            lt = model.literal_type(node)
            if lt.kind == "float" and lt.bits == 16:
                yield node
        elif t == "init_declarator":
            value = node.child_by_field_name("value")
            decl = node.parent
            ty = decl.child_by_field_name("type") if decl is not None else None
            if value is None or ty is None or not _half_family(model.text(ty)):
                return
            if value.type == "initializer_list":  # `half w[3] = {1e5, 0.0, 1.0};`, `half2 v = {1e5, 0};`
                yield from (c for c in value.named_children if c.type not in ("comment", "initializer_list"))
            else:
                yield value
        elif t == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            if left is not None and right is not None and op is not None and model.text(op) == "=":
                lt = model.type_of(left)
                v = model.base_var(left)
                spelled = model.text(v.decl.child_by_field_name("type")) if v is not None and v.decl.child_by_field_name("type") is not None else ""
                if lt.is_half and "bfloat" not in spelled:
                    yield right
        elif t == "cast_expression":
            ty, value = node.child_by_field_name("type"), node.child_by_field_name("value")
            if ty is not None and value is not None and _half_family(model.text(ty)):
                yield value
        elif t == "call_expression":
            fn = node.child_by_field_name("function")
            name = model.callee_name(node)
            args = [a for a in model.call_args(node) if a.type != "comment"]
            if fn is not None and fn.type == "template_function":
                targs = fn.child_by_field_name("arguments")
                if name == "static_cast" and targs is not None and targs.named_child_count \
                        and _half_family(model.text(targs.named_children[0])):
                    yield from args
            elif name in CONVERSIONS or (_half_family(name) and name not in model.function_by_name):
                yield from args
        elif t == "return_statement":
            f = model.function_at(node.start_byte)
            ty = f.node.child_by_field_name("type") if f is not None else None
            if ty is not None and _half_family(model.text(ty)):
                yield from (c for c in node.named_children if c.type != "comment")


@lru_cache(maxsize=8)
def _literal_query(language):
    return ts.Query(language, "(number_literal) @n\n")


def _candidates(model) -> list:
    """Every node of the tree :meth:`HalfLiteralOverflow._converted` may convert from: the model's
    captures of the types it reads (``init_declarator``, ``assignment_expression``, ``call_expression``,
    ``return_statement``, ``cast_expression``, ``user_defined_literal``) and, in GLSL, where a number
    literal itself may be a half, one query for those, in document order (outer nodes first) -- what a
    walk of the whole tree finds, without visiting every node in Python."""
    out = model.nodes("init") + model.nodes("assign") + model.nodes("call") + model.nodes("return") \
        + model.nodes("udl") + model.nodes("cast")
    if model.language == "glsl":
        from shaderlint.languages import FRONT_ENDS
        from shaderlint.model.build import captures

        for nodes in captures(_literal_query(FRONT_ENDS["glsl"].language()), model.root).values():
            out.extend(nodes)
    out.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return out


def _device_context(model, node) -> bool:
    f = model.function_at(node.start_byte)
    if f is not None:
        return f.is_device_code
    if model.language != "cuda":
        return True
    p = node.parent
    while p is not None and p.type != "declaration":
        p = p.parent
    return p is not None and bool({"__device__", "__constant__", "__shared__"} & {model.text(c) for c in p.children})


_BIG_NUMBER = re.compile(rb"(?<![\w.])(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# Where a _BIG_NUMBER match of five bytes or more, or with an exponent, can start: a digit or `.` not after
# a word byte or `.`, followed by four more digits or dots, or by digits and dots up to an `e`. (The
# look-behind stands after the first byte, so the regex engine skips to digits and dots instead of trying
# it at every byte; the shorter literals, most of a file's numbers, are never looked at in Python.)
_BIG_NUMBER_START = re.compile(rb"[\d.](?<![\w.][\d.])(?=[\d.]{4}|[\d.]*[eE])")


def _has_big_literal(data: bytes) -> bool:
    """Cheap pre-filter: does any numeric literal in the file exceed the half range? The literals are
    ``_BIG_NUMBER.finditer(data)``'s matches; those shorter than five bytes without an exponent cannot
    exceed it and are not visited: ``_BIG_NUMBER`` is matched only where ``_BIG_NUMBER_START`` finds a
    longer one may start, not inside the previous match (where only a position after an exponent's
    sign could pass the start test)."""
    end = 0
    for start in _BIG_NUMBER_START.finditer(data):
        s = start.start()
        if s < end:
            continue
        m = _BIG_NUMBER.match(data, s)
        if m is None:  # a `.` not before a digit
            continue
        end = m.end()
        text = m.group(0)
        if len(text) < 5 and b"e" not in text.lower():
            continue
        try:
            if abs(float(text)) > HALF_MAX:
                return True
        except ValueError:
            continue
    return False
