"""SL303 float-texture-read

## What it does
Flags a texture parameter declared with a `float` element type
(`texture2d<float, access::read>`, `texture3d<float>`, …) when every value read
from it (`read`, `sample`, `gather`) is immediately turned into half precision:
converted with `half4(...)`/`half3(... .rgb)`/a cast, stored in a `half`
variable or assigned to a `half` lvalue. It is reported at the parameter. The
rule stays silent as soon as one read flows anywhere that keeps float range or
precision (float math, a float variable, a float buffer, a helper function),
when the texture is written or passed on, and for depth textures.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC)
recommends 16-bit types wherever their range and precision suffice: Apple GPUs
have 16-bit register units, so `half` values take half the registers of
`float` ones, and conversions between the two are extra instructions. The
texture's element type decides what the sampler returns: a
`texture2d<float>` returns `float4` that the shader then converts; a
`texture2d<half>` returns `half4` directly from the same pixel data, with no
conversion and half the registers for the fetched value.

## Example
```metal
kernel void tonemap(texture2d<float, access::read> hdr [[texture(0)]],   // SL303
                    texture2d<half, access::write> out [[texture(1)]],
                    uint2 gid [[thread_position_in_grid]]) {
    half4 c = half4(hdr.read(gid));
    out.write(c / (1.0h + c), gid);
}
```

## Use instead
```metal
kernel void tonemap(texture2d<half, access::read> hdr [[texture(0)]],
                    texture2d<half, access::write> out [[texture(1)]],
                    uint2 gid [[thread_position_in_grid]]) {
    half4 c = hdr.read(gid);
    out.write(c / (1.0h + c), gid);
}
```

## Impact
A `float4` texel occupies four 32-bit registers, a `half4` four 16-bit units
(two registers' worth) on Apple GPUs, plus one conversion per read. The register
model does not yet price texture reads; the impact field is left empty.

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.expr import unparen
from shaderlint.model.memory import uses
from shaderlint.model.types import parse_type_name
from shaderlint.rules.base import Rule, RuleContext

_FLOAT_TEXTURE = re.compile(r"^\s*(?:metal\s*::\s*)?(texture\w*)\s*<\s*float\s*[,>]")
_READS = frozenset({"read", "sample", "gather"})
_QUERIES = frozenset({"get_width", "get_height", "get_depth", "get_num_mip_levels", "get_array_size",
                      "get_num_samples"})
_SWIZZLE = re.compile(r"^(?:[xyzw]{1,4}|[rgba]{1,4})$")


class FloatTextureRead(Rule):
    code = "SL303"
    name = "float-texture-read"
    languages = frozenset({"metal"})
    severity = Severity.INFO
    summary = "texture declared float whose reads are only used as half"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.functions:
            if f.body is None:
                continue
            for p in f.params:
                ty = p.decl.child_by_field_name("type")
                if p.type.kind != "texture" or ty is None:
                    continue
                m = _FLOAT_TEXTURE.match(model.text(ty))
                if m is None or m.group(1).startswith("depth"):
                    continue
                reads = _half_only_reads(model, f, p)
                if not reads:
                    continue
                tex = m.group(1)
                yield Finding(
                    p.decl.start_byte, p.node.end_byte,
                    f"texture '{p.name}' is declared {tex}<float> but every value read from it is converted to "
                    f"half; declare it {tex}<half> so reads return half directly",
                    kernel=f.name,
                    related=tuple(Related(r.start_byte, r.end_byte, "read only used as half") for r in reads),
                )


def _half_only_reads(model, f, p) -> list:
    reads = []
    for u in uses(model, f).get(id(p), []):
        parent = u.parent
        if parent is None or parent.type != "field_expression" or parent.child_by_field_name("argument") != u:
            return []  # passed on, assigned, or used some other way
        method = model.text(parent.child_by_field_name("field"))
        call = parent.parent
        if call is None or call.type != "call_expression" or call.child_by_field_name("function") != parent:
            return []
        if method in _QUERIES:
            continue
        if method not in _READS or not _used_as_half(model, f, call):
            return []
        reads.append(call)
    return reads


def _used_as_half(model, f, node, depth: int = 0) -> bool:
    """True if the value of ``node`` (a texel) is converted to half right away, directly or through
    a local variable every read of which is converted to half."""
    n, parent = node, node.parent
    while parent is not None and (parent.type == "parenthesized_expression" or (
            parent.type == "field_expression" and parent.child_by_field_name("argument") == n
            and _SWIZZLE.match(model.text(parent.child_by_field_name("field")) or ""))):
        n, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "argument_list":
        call = parent.parent
        if call is None or call.type != "call_expression":
            return False
        name = model.callee_name(call)
        return parse_type_name(name).is_half or (name == "static_cast" and model.type_of(call).is_half)
    if parent.type == "cast_expression":
        return model.type_of(parent).is_half
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == n:
        v = next((v for v in f.vars if v.init is not None and v.init.id == n.id), None)
        return v is not None and _half_variable(model, f, v, depth)
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == n:
        op = parent.child_by_field_name("operator")
        left = parent.child_by_field_name("left")
        if op is None or model.text(op) != "=" or left is None:
            return False
        left = unparen(left)
        if model.type_of(left).is_half:
            return True
        v = model.resolve(left) if left.type == "identifier" else None
        return v is not None and v.function is f and not v.is_param and _half_variable(model, f, v, depth)
    return False


def _half_variable(model, f, v, depth: int) -> bool:
    """A half variable, or a local float variable whose every read is converted to half."""
    if v.type.is_half:
        return True
    if depth >= 3 or not v.type.is_float:
        return False
    reads = [u for u in uses(model, f).get(id(v), []) if u.start_byte != v.node.start_byte and not _assigned_to(u)]
    return bool(reads) and all(_used_as_half(model, f, u, depth + 1) for u in reads)


def _assigned_to(ident) -> bool:
    p = ident.parent
    return p is not None and p.type == "assignment_expression" and p.child_by_field_name("left") == ident \
        and p.child_by_field_name("operator") is not None and p.child_by_field_name("operator").type == "="
