"""SL101 dynamic-stack-array

## What it does
Flags a thread-private (stack) array that is not a compile-time constant and is
indexed by a value the compiler cannot resolve: not a literal or constant, and
not the counter of a constant-trip loop that the compiler will unroll. It is
reported once, at the array's declaration, with each dynamic index as a related
location.

## Why is this bad?
GPU registers cannot be indexed at run time. An array the compiler can index
statically is kept in registers; one indexed dynamically is placed in stack
memory (Metal's "thread" stack, CUDA local memory, GLSL private memory), which
lives in device memory behind the cache. Apple's GPU compiler team ("Advanced
Metal Shader Optimization", WWDC) measured "a 30% performance loss … even
though it's only done once" for a single dynamically indexed stack array, and
explains that loops the compiler unrolls make indexing static, which is fine.

## Example
```metal
kernel void histogram(device const uchar* pixels [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
    uint local_bins[16];                      // SL101
    for (int i = 0; i < 16; ++i) local_bins[i] = 0;
    local_bins[pixels[gid] >> 4] += 1;        // dynamic index
    ...
}
```

## Use instead
Index with constants or constant-trip loop counters (keep the data in
registers), move shared tables to `constant`/`__constant__` memory, or give the
data a `threadgroup`/`__shared__` home and index that:
```metal
    threadgroup atomic_uint local_bins[16];
    atomic_fetch_add_explicit(&local_bins[pixels[gid] >> 4], 1, memory_order_relaxed);
```

## Impact
Estimated by the register model: the array's bytes move from registers to the
stack (`stack_bytes` = element count × element size) and the registers it would
have occupied are freed (`registers` is negative when promoting it to
registers is impossible because the index is dynamic: the estimate compares the
kernel as written with the kernel where the array is indexed statically).
Assumes the array would otherwise fit the register budget of the target.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture shows the array in
`.local .align 16 .b8 __local_depot0[64]` with `ld.local.f32`/`st.local.f32`
at the dynamic index; `-Xptxas -v` reports "64 bytes stack frame" for a
16-float histogram updated inside a runtime loop. The unrolled negative
(`acc[i]` in `for (int i = 0; i < 8; ++i)`) compiles to registers only
("0 bytes stack frame", no `__local_depot`). ptxas sometimes removes a single
dynamic access to a tiny array with selects (0 bytes stack frame although the
PTX has a local depot); the rule still reports it, since NVVM, Apple's and
other compilers do not.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.expr import unparen
from shaderlint.rules.base import Rule, RuleContext

_PASS_THROUGH = ("parenthesized_expression", "binary_expression", "unary_expression", "cast_expression",
                 "conditional_expression")


class DynamicStackArray(Rule):
    code = "SL101"
    name = "dynamic-stack-array"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    summary = "thread-private array indexed by a value the compiler cannot resolve"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        subscripts = model.nodes("subscript")
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            arrays = [v for v in f.vars if v.is_array and _thread_private(v) and not _constant_array(model, v)]
            if not arrays:
                continue
            uses: dict[int, list] = {}
            wanted = {id(v): v for v in arrays}
            for s in subscripts:
                if not (f.body.start_byte <= s.start_byte < f.body.end_byte):
                    continue
                arg = s.child_by_field_name("argument")
                if arg is None or unparen(arg).type != "identifier":
                    continue
                v = model.resolve(unparen(arg))
                if v is None or id(v) not in wanted:
                    continue
                # `a[i][j]`: every index of the chain
                idx_nodes = [_index(s)]
                p = s.parent
                while p is not None and p.type == "subscript_expression" and p.child_by_field_name("argument") == s:
                    idx_nodes.append(_index(p))
                    s, p = p, p.parent
                for idx in idx_nodes:
                    if idx is not None and not _static_index(model, f, idx, 0):
                        uses.setdefault(id(v), []).append(idx)
            for key, idxs in uses.items():
                v = wanted[key]
                el = v.type
                while el.kind == "array" and el.pointee is not None:
                    el = el.pointee
                count = 1
                for d in v.dims:
                    count = count * d if d is not None and count is not None else None
                size = f"{count} × {el.name}" if count is not None and el.is_known else "array"
                first = model.text(idxs[0])
                related = tuple(Related(i.start_byte, i.end_byte, f"dynamic index '{model.text(i)}'") for i in idxs)
                yield Finding(
                    v.node.start_byte, v.node.end_byte,
                    f"thread-private array '{v.name}' ({size}) is indexed by '{first}', which the compiler cannot "
                    f"resolve; it will be placed in stack memory instead of registers",
                    kernel=f.name, related=related,
                )


def _index(sub):
    idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    if idx is not None and idx.type == "subscript_argument_list":
        kids = [c for c in idx.named_children if c.type != "comment"]
        return kids[0] if len(kids) == 1 else None
    return idx


def _thread_private(v) -> bool:
    if v.address_space not in (None, "thread"):
        return False
    return not ({"static", "shared", "__shared__", "__constant__", "uniform", "buffer"} & v.qualifiers)


def _constant_array(model, v) -> bool:
    if not (v.is_const or v.is_constexpr) or v.init is None:
        return False
    stack = [v.init]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "qualified_identifier"):
            if not model.is_constant(n) and model.resolve(n) is not None:
                return False
            continue
        if n.type in ("call_expression",):
            stack.extend(model.call_args(n))
            continue
        stack.extend(n.named_children)
    return True


def _static_index(model, f, node, depth: int) -> bool:
    """True if the index is constant once the compiler unrolls constant-trip loops."""
    if depth > 8:
        return False
    node = unparen(node)
    if model.is_constant(node):
        return True
    t = node.type
    if t == "identifier":
        v = model.resolve(node)
        if v is None:
            return False
        for loop in f.loops:
            if loop.var is v and loop.trip_count is not None and loop.unroll != 1 \
                    and loop.node.start_byte <= node.start_byte < loop.node.end_byte:
                return True
        # A single-assignment local whose initializer is static (`int k = i * 4 + j;`)
        if v.function is f and not v.is_param and v.init is not None and not _reassigned(model, f, v):
            return _static_index(model, f, v.init, depth + 1)
        return False
    if t in _PASS_THROUGH:
        kids = [c for c in node.named_children if c.type not in ("type_descriptor", "comment")]
        return bool(kids) and all(_static_index(model, f, c, depth + 1) for c in kids)
    if t == "call_expression":
        args = model.call_args(node)
        from shaderlint.model.types import parse_type_name
        if parse_type_name(model.callee_name(node)).is_arithmetic or model.callee_name(node) in ("min", "max", "clamp", "abs"):
            return bool(args) and all(_static_index(model, f, a, depth + 1) for a in args)
    return False


def _reassigned(model, f, v) -> bool:
    cache = getattr(model, "_sl101_reassigned", None)
    if cache is None:
        cache = set()
        for a in model.nodes("assign") + model.nodes("update"):
            target = a.child_by_field_name("left") or a.child_by_field_name("argument")
            if target is not None and unparen(target).type == "identifier":
                tv = model.resolve(unparen(target))
                if tv is not None:
                    cache.add(id(tv))
        model._sl101_reassigned = cache
    return id(v) in cache
