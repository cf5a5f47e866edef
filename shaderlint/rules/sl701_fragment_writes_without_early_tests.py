"""SL701 fragment-writes-without-early-tests

## What it does
Flags a fragment function that writes to a resource — a `device` buffer store,
a texture `write`, an atomic on device memory or a texture (Metal); a buffer
block store, `imageStore`, `imageAtomic*`, `atomic*` on a buffer member or an
atomic counter (GLSL) — but is not marked `[[early_fragment_tests]]` (Metal) or
`layout(early_fragment_tests) in;` (GLSL). It is reported at the function's
name (`fragment … name(`, GLSL `void main()` of a `.frag`), with the writes as
related locations. Functions that `discard` (`discard_fragment()`) or write
depth (`[[depth(…)]]`, `gl_FragDepth`) are left alone: for them early tests
change what is drawn.

## Why is this bad?
Without side effects, the GPU runs the depth and stencil tests before the
fragment shader and never shades hidden fragments (on Apple GPUs, hidden
surface removal). A fragment shader that writes to memory has effects the
tests would skip, so the GPU must shade every fragment and only then test it.
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC)
concludes: "use early fragment tests to reduce shading of objects with
resource writes" — the attribute tells the GPU to test first and shade only the
fragments that pass, as `layout(early_fragment_tests) in;` does in GLSL/Vulkan.

## Example
```metal
fragment half4 count_fragments(VertexOut in [[stage_in]],              // SL701
                               device atomic_uint* count [[buffer(0)]]) {
    atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
    return half4(in.color);
}
```

## Use instead
```metal
[[early_fragment_tests]]
fragment half4 count_fragments(VertexOut in [[stage_in]],
                               device atomic_uint* count [[buffer(0)]]) {
    atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
    return half4(in.color);
}
```
Early tests also change the meaning: writes then happen only for fragments that
pass the depth/stencil test, which is usually what a visibility count or an
order-independent-transparency list wants.

## Impact
Fragment shading work, not registers: occluded fragments are no longer shaded.
The saving depends on depth complexity, which the linter cannot see; the
impact field is left empty.

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.memory import resource_ops
from shaderlint.rules.base import Rule, RuleContext


class FragmentWritesWithoutEarlyTests(Rule):
    code = "SL701"
    name = "fragment-writes-without-early-tests"
    languages = frozenset({"metal", "glsl"})
    severity = Severity.INFO
    summary = "fragment function with resource writes but no early fragment tests"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.functions:
            if f.kind != "fragment" or not f.is_entry or f.body is None:
                continue
            if _has_early_tests(model, f) or _discards_or_writes_depth(model, f):
                continue
            writes = [a.node for a in f.accesses if a.is_write and a.space in ("device", "texture")]
            writes += [op.node for op in resource_ops(model, f)
                       if op.op in ("write", "atomic") and _resource(op.var)]
            if not writes:
                continue
            writes = _outermost(writes)
            marker = "[[early_fragment_tests]]" if model.language == "metal" else "layout(early_fragment_tests) in"
            yield Finding(
                f.name_node.start_byte, f.name_node.end_byte,
                f"fragment function '{f.name}' writes to memory ('{_short(model.text(writes[0]))}') but does not "
                f"declare {marker}; the GPU must shade every fragment, including those the depth test rejects",
                kernel=f.name,
                related=tuple(Related(n.start_byte, n.end_byte, "resource write") for n in writes),
            )


def _resource(var) -> bool:
    if var is None:
        return False
    return var.type.kind == "texture" or var.address_space in ("device", "buffer", "uniform") or (
        var.type.kind == "pointer" and var.type.address_space == "device")


def _has_early_tests(model, f) -> bool:
    if model.language == "metal":
        return f.attribute("early_fragment_tests") is not None
    return any(mk.kind == "layout" and mk.value == "in" and any(a.strip() == "early_fragment_tests" for a in mk.args)
               for mk in model.parsed.masks)


def _discards_or_writes_depth(model, f) -> bool:
    text = model.source.data[f.body.start_byte:f.body.end_byte]
    if model.language == "glsl":
        return re.search(rb"\b(?:discard|gl_FragDepth\w*)\b", text) is not None
    if re.search(rb"\bdiscard_fragment\s*\(", text):
        return True
    ranges = [(f.node.start_byte, f.body.start_byte)]
    rt = f.return_type
    if rt.kind == "struct" and rt.struct in model.structs:
        node = model.structs[rt.struct].node
        ranges.append((node.start_byte, node.end_byte))
    return any(mk.kind == "attribute" and mk.value == "depth" and any(s <= mk.start < e for s, e in ranges)
               for mk in model.parsed.masks)


def _outermost(nodes):
    out = []
    for n in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):
        if not out or n.start_byte >= out[-1].end_byte:
            out.append(n)
    return out


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 48 else text[:45] + "..."
