"""SL103 constant-address-space-candidate

## What it does
Flags a `device const` buffer parameter of a Metal kernel, vertex or fragment
function that is only read, and only at offsets that are the same for every
thread of a threadgroup: a single struct read through `p[0]`, `p->field`, `*p`
or a `device const T&` reference, or an array indexed by constants, loop
counters over uniform bounds, or other thread-uniform values. It is reported at
the parameter. Buffers indexed by the thread position, buffers that are written,
passed on to other functions or used in pointer arithmetic, and buffers already
in the `constant` address space are left alone. A member array of the buffer's element read at a thread-dependent index
(`s.weights[tid]` through a `device const S& s`) is not a uniform read. An array read in a kernel that
takes no thread position within its group (ggml's `kernel_conv_transpose_1d`,
dispatched as one-thread threadgroups) is left alone too: no two threads share
its reads, so the uniformity says nothing; single structs and references are
still reported (preloading helps any kernel).

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC)
describes the two address spaces: `device` is read-write memory for data
indexed per thread, `constant` is read-only memory optimised for many threads
reading the same location. Data in the `constant` address space that the
compiler can size — a single struct passed by reference, or a fixed-size array
— can be *preloaded* into uniform registers before the shader runs ("buffer
preloading"), which removes the loads from the shader entirely. A `device`
pointer never gets that treatment, even when every thread reads the same
value.

## Example
```metal
struct Light { float3 position; float3 color; float radius; };

fragment half4 shade(VertexOut in [[stage_in]],
                     device const Light* light [[buffer(0)]]) {   // SL103
    float d = distance(in.world, light->position);
    return half4(half3(light->color) * half(saturate(1.0f - d / light->radius)), 1.0h);
}
```

## Use instead
```metal
fragment half4 shade(VertexOut in [[stage_in]],
                     constant Light& light [[buffer(0)]]) {
    float d = distance(in.world, light.position);
    return half4(half3(light.color) * half(saturate(1.0f - d / light.radius)), 1.0h);
}
```

## Impact
Loads rather than registers: preloaded constants cost no load instruction and
no latency in the shader. The register model does not price it; the impact
field is left empty.

## Default
Opt-in (`--extend-select SL103`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 6 findings were 0 true, 2 false, 4 debatable:
buffers whose size varies with the input (the constant address space preloads
only what the compiler can size), and single reads off the hot path.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model import builtins as B
from shaderlint.model.memory import is_store, is_reference, uses
from shaderlint.model.expr import subscript_index
from shaderlint.rules.base import Rule, RuleContext


class ConstantAddressSpaceCandidate(Rule):
    code = "SL103"
    name = "constant-address-space-candidate"
    languages = frozenset({"metal"})
    severity = Severity.INFO
    default_on = False
    summary = "read-only device buffer read only at thread-uniform offsets: use the constant address space"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.kernels:
            if f.body is None:
                continue
            for p in f.params:
                if p.address_space != "device" or "const" not in p.qualifiers or p.role is not None:
                    continue
                ref = is_reference(p)
                if p.type.kind != "pointer" and not ref:
                    continue
                element = p.type.pointee if p.type.kind == "pointer" else p.type
                if element is None or "atomic" in model.text(p.decl.child_by_field_name("type") or p.decl):
                    continue
                verdict = _uniform_reads(model, f, p, ref)
                if verdict is None:
                    continue
                single, sites = verdict
                if not single and not ref and not any(B.LOCAL in model.var_deps.get(q, ()) for q in f.params):
                    continue  # no thread position: one-thread groups (or redundant threads); nothing is shared
                type_text = _type_text(model, p)
                suggestion = f"constant {type_text}&" if single or ref else f"constant {type_text}*"
                if ref:
                    what = "read only by value"
                elif single:
                    what = "read only as a single element through [0], -> or *"
                else:
                    what = "read only at thread-uniform offsets"
                start = _space_start(model, p)
                yield Finding(
                    start, p.node.end_byte,
                    f"'{p.name}' is a read-only device buffer {what}; declare it '{suggestion} {p.name}' "
                    + ("so Metal can preload it into uniform registers" if single or ref else
                       "(the constant address space is built for all threads reading the same location; "
                       "a fixed-size array in a constant struct can also be preloaded)"),
                    kernel=f.name,
                    related=tuple(Related(n.start_byte, n.end_byte, f"uniform read '{model.text(n)}'") for n in sites),
                )


def _uniform_reads(model, f, p, ref: bool):
    """(reads only a single element, read sites) if every use of ``p`` is a uniform read, else None."""
    found = uses(model, f).get(id(p), [])
    if not found:
        return None
    single = True
    sites = []
    for u in found:
        n, parent = u, u.parent
        while parent is not None and parent.type == "parenthesized_expression":
            n, parent = parent, parent.parent
        if parent is None:
            return None
        if parent.type == "subscript_expression" and parent.child_by_field_name("argument") == n and not ref:
            idx = subscript_index(parent)
            if idx is None or model.deps(idx) & {B.LOCAL, B.UNKNOWN_DEP}:
                return None
            if model.const_value(idx) != 0:
                single = False
            site = parent
        elif parent.type == "field_expression" and parent.child_by_field_name("argument") == n:
            op = parent.child_by_field_name("operator")
            if op is None or model.text(op) != ("." if ref else "->"):
                return None
            site = parent
        elif parent.type == "pointer_expression" and model.text(parent.child_by_field_name("operator")) == "*" \
                and not ref:
            site = parent
        elif ref and parent.type in ("binary_expression", "init_declarator", "argument_list", "return_statement",
                                     "conditional_expression", "condition_clause") \
                and not (parent.type == "argument_list" and _user_call(model, parent)):
            site = u  # a scalar reference read by value
        else:
            return None
        if is_store(site) or _indexed_per_thread(model, site):
            return None
        sites.append(site)
    return single, sites


def _indexed_per_thread(model, site) -> bool:
    """A member array of the element read at a thread-dependent index (``s.weights[tid]``,
    ``p->lut[gid % 16]``): the buffer is then not read at uniform offsets, and the constant address
    space, built for every thread reading the same location, is the opposite of the advice."""
    n, parent = site, site.parent
    for _ in range(16):
        if parent is None:
            return False
        if parent.type == "parenthesized_expression" or (
                parent.type == "field_expression" and parent.child_by_field_name("argument") == n):
            pass
        elif parent.type == "subscript_expression" and parent.child_by_field_name("argument") == n:
            idx = subscript_index(parent)
            if idx is None or model.deps(idx) & {B.LOCAL, B.UNKNOWN_DEP}:
                return True
        else:
            return False
        n, parent = parent, parent.parent
    return True


def _user_call(model, args) -> bool:
    call = args.parent
    return call is not None and call.type == "call_expression" and model.callee_name(call) in model.function_by_name


def _type_text(model, p) -> str:
    ty = p.decl.child_by_field_name("type")
    return " ".join(model.text(ty).split()) if ty is not None else p.type.name.rstrip("*")


def _space_start(model, p) -> int:
    for mk in model.parsed.masks:
        if mk.kind == "address-space" and p.decl.start_byte <= mk.start < p.node.start_byte:
            return mk.start
    for mk in model.parsed.qualifiers_before.get(p.decl.start_byte, []):
        if mk.kind == "address-space":
            return mk.start
    return p.decl.start_byte
