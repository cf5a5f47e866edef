"""SL205 select-arithmetic-trick

## What it does
Flags a choice between two values written as arithmetic on a boolean-valued
factor: `a * c + b * (1 - c)` (reported at the `+`) and `x * c` or
`x * (1 - c)` or `x *= c` on their own (reported at the `*`; several products on one
boolean variable are one report, at the first, with the others related), where `c` is a comparison
(`(i < n)`), a conversion of one (`float(d > 0.0)`, `(float)(i < n)`), a
`bool` variable, `step(edge, x)`, or a local initialized with one of those and
never reassigned. Integer selects are not flagged (`mask * (a > b)`, `x * (x != 0x7F)`,
`kx -= wrap * p.KW`): compilers turn a product with a 0/1 integer into the select
itself (`nvcc` emits one `selp.b32` for both forms) and integers have no NaN to
leak through; a product whose whole chain is floating-point (`2 * (c) * val`) still
is. Products of boolean factors (`float(a) * float(b) * float(c)`, a
logical "and", itself a 0/1 value), a boolean times a compile-time constant
(`float(hit) * 0.5f`: the compiler selects the constant, the same single
`selp.f32` as `hit ? 0.5f : 0.0f`) and `mix(a, b, t)` with a real-valued `t` are
not flagged.

## Why is this bad?
GPUs have a single-instruction select. Apple's GPU compiler team ("Advanced
Metal Shader Optimization", WWDC) recommends writing selects as selects
(`?:`/`select`) rather than the "branch-free" arithmetic habit carried over
from old hardware: the arithmetic form costs a conversion of the condition to a
number plus one or two multiplies and an add, hides the intent from the
compiler, and is not even equivalent — if the unselected value is infinite or
NaN, `x * 0.0` is NaN, while a select returns the other value.

## Example
```cuda
__global__ void relu_mask(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    out[i] = x * (float)(x > 0.0f);                          // SL205
    float m = (float)(x > 1.0f);
    out[i] += 2.0f * x * m + 0.5f * x * (1.0f - m);          // SL205
}
```

## Use instead
```cuda
    out[i] = x > 0.0f ? x : 0.0f;
    out[i] += x > 1.0f ? 2.0f * x : 0.5f * x;
```
In Metal `select(b, a, cond)` is the vector form; in GLSL `mix(b, a, bvec)`
with a boolean vector selects per component.

## Impact
Instruction count: one select replaces a conversion and one or two
multiply(-add)s; registers and occupancy unchanged (impact null).

## Default
Opt-in (`--extend-select SL205`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 22 findings, every one judged by reading
the code, were 4 true, 8 false, 10 debatable: most are correct but save
nothing measurable (a condition the compiler converts once before the loop,
one select per fragment in a memory-bound shader, a dropout kernel's tail
loop over a handful of elements).

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: `x * (float)(x > 0.0f)` compiles
to `setp.gt.f32 %p2, %f1, 0f00000000;`, `selp.f32 %f2, 0f3F800000,
0f00000000, %p2;` (the condition turned into 1.0/0.0) and
`mul.f32 %f3, %f1, %f2;`, while the `?:` form in the negative kernel is the
single `selp.f32 %f2, %f1, 0f00000000, %p2;`. A boolean times a constant is
not reported: `o[i] = (float)(l[i] == t) * 0.5f` and `o[i] = l[i] == t ? 0.5f :
0.0f` compile to the same `selp.f32 %f1, 0f3F000000, 0f00000000, %p1;` (added
to a sum, the product form gives a 1.0/0.0 `selp.f32` and an `fma.rn.f32`
where the `?:` gives a 0.5/0.0 `selp.f32` and an `add.f32`: as many
instructions); the inlined blend
`x * pos + slope * x * (1.0f - pos)` adds a `sub.f32` and a `fma.rn.f32` on
top of the 1.0/0.0 select.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.expr import COMPARE_OPS, unparen
from shaderlint.model.types import parse_type_name
from shaderlint.rules.base import Rule, RuleContext

_ADVICE = {"metal": "'cond ? a : b' or select(b, a, cond)", "cuda": "'cond ? a : b'",
           "glsl": "'cond ? a : b' or mix(b, a, bvec)"}


class SelectArithmeticTrick(Rule):
    code = "SL205"
    name = "select-arithmetic-trick"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.INFO
    default_on = False
    summary = "a select written as arithmetic on a 0/1 value instead of ?: or select"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        advice = _ADVICE[model.language]
        # Every binary and assignment expression of the file, outer before inner (a blend's `+`
        # consumes the products under it before they are visited), from the model's query.
        candidates = sorted(model.nodes("binary") + model.nodes("assign"), key=lambda n: (n.start_byte, -n.end_byte))
        starts = [n.start_byte for n in candidates]
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            consumed: set[int] = set()
            by_var: dict[int, list] = {}  # products on one boolean variable: one report, the rest related
            body = f.body
            lo, hi = bisect_left(starts, body.start_byte), bisect_left(starts, body.end_byte)
            for node in candidates[lo:hi]:
                op = node.child_by_field_name("operator")
                left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
                if op is None or left is None or right is None:
                    continue
                o = model.text(op)
                if node.type == "assignment_expression":
                    if o != "*=":
                        continue
                    o = "*"  # `x *= c`: the same product, stored back
                # An integer select is not reported: the compiler emits the select itself, and no NaN
                # can leak through. Asked only of a would-be finding: ``_product_root`` climbs through
                # ``parent``, which tree-sitter finds from the root (a 16,000-term sum took 8 s).
                if o == "+" and node.type == "binary_expression" and not model.type_of(node).kind == "bool":
                    c = _blend(model, left, right)
                    if c is not None and not model.type_of(_product_root(model, node)).is_integer:
                        consumed.update((unparen(left).id, unparen(right).id))
                        yield Finding(op.start_byte, op.end_byte,
                                      f"'{_short(model, node)}' chooses between two values with arithmetic on the 0/1 "
                                      f"value '{model.text(c)}'; use {advice}",
                                      kernel=f.name)
                elif o == "*" and node.id not in consumed and model.type_of(node).is_arithmetic:
                    factors = [_factor(model, x) for x in (left, right)]
                    if sum(x is not None for x in factors) != 1:
                        continue  # none, or both boolean (a logical and)
                    root = _product_root(model, node)
                    if model.type_of(root).is_integer:
                        continue
                    c = next(x for x in factors if x is not None)
                    other = right if factors[0] is not None else left
                    if not c[1] and root.id == node.id and model.is_constant(other):
                        continue  # `float(hit) * 0.5f`: the compiler selects the constant itself
                    v = model.resolve(c[0]) if c[0].type == "identifier" else None
                    if v is not None:
                        by_var.setdefault(id(v), []).append((node, op, other, c[0]))
                        continue
                    yield Finding(op.start_byte, op.end_byte,
                                  f"'{_short(model, node)}' selects '{_short(model, other)}' or zero by multiplying "
                                  f"with the 0/1 value '{model.text(c[0])}'; use {advice}",
                                  kernel=f.name)
            for sites in sorted(by_var.values(), key=lambda x: x[0][1].start_byte):
                node, op, other, c = sites[0]
                more = f" (and {len(sites) - 1} more product{'s' if len(sites) > 2 else ''} on it)" if len(sites) > 1 else ""
                yield Finding(op.start_byte, op.end_byte,
                              f"'{_short(model, node)}' selects '{_short(model, other)}' or zero by multiplying "
                              f"with the 0/1 value '{model.text(c)}'{more}; use {advice}",
                              kernel=f.name,
                              related=tuple(Related(o.start_byte, o.end_byte, f"'{_short(model, n)}'")
                                            for n, o, _, _ in sites[1:]))


def _product_root(model, node):
    """The whole product ``node`` is a factor of (``2*(c)*val`` for ``2*(c)``): its type says
    whether the select is integer or floating-point."""
    p = node.parent
    while p is not None and (p.type == "parenthesized_expression" or (
            p.type == "binary_expression" and p.child_by_field_name("operator") is not None
            and model.text(p.child_by_field_name("operator")) == "*")):
        node, p = p, p.parent
    return node


def _short(model, node, limit: int = 60) -> str:
    text = " ".join(model.text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _blend(model, left, right):
    """`a*c + b*(1-c)` (either order): the boolean ``c``, else None."""
    fl, fr = _products(model, left), _products(model, right)
    if fl is None or fr is None:
        return None
    for a in fl:
        ca = _factor(model, a)
        if ca is None:
            continue
        for b in fr:
            cb = _factor(model, b)
            if cb is not None and cb[1] != ca[1] and _same(model, ca[0], cb[0]):
                return ca[0]
    return None


def _products(model, node):
    n = unparen(node)
    if n.type != "binary_expression":
        return None
    op = n.child_by_field_name("operator")
    if op is None or model.text(op) != "*":
        return None
    out = []
    for side in (n.child_by_field_name("left"), n.child_by_field_name("right")):
        if side is None:
            return None
        inner = _products(model, side)
        out.extend(inner if inner is not None else [side])
    return out


def _factor(model, node):
    """(c, complemented) if ``node`` is a boolean-valued c or `1 - c`; else None."""
    n = unparen(node)
    if _boolean(model, n, 0):
        return (n, False)
    if n.type == "binary_expression":
        op = n.child_by_field_name("operator")
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if op is not None and model.text(op) == "-" and left is not None and right is not None \
                and model.const_value(left) == 1 and _boolean(model, unparen(right), 0):
            return (unparen(right), True)
    return None


def _boolean(model, n, depth: int) -> bool:
    """A value that is 0 or 1 because it comes from a condition."""
    n = unparen(n)
    if depth > 6:
        return False
    t = n.type
    if t == "binary_expression":
        op = n.child_by_field_name("operator")
        if op is not None and model.text(op) == "*":  # an "and" of 0/1 values is 0 or 1
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            return left is not None and right is not None and _boolean(model, left, depth + 1) \
                and _boolean(model, right, depth + 1)
        return op is not None and model.text(op) in COMPARE_OPS
    if t == "unary_expression":
        op = n.child_by_field_name("operator")
        return op is not None and model.text(op) == "!"
    if t == "cast_expression":
        ty, value = n.child_by_field_name("type"), n.child_by_field_name("value")
        return ty is not None and value is not None and model.parse_type(ty).is_arithmetic \
            and _boolean(model, value, depth + 1)
    if t == "call_expression":
        name = model.callee_name(n)
        args = [a for a in model.call_args(n) if a.type != "comment"]
        if name in model.function_by_name:
            return False
        if name == "step" and len(args) == 2:
            return True
        fn = n.child_by_field_name("function")
        if fn is not None and fn.type == "template_function":
            return name == "static_cast" and len(args) == 1 and _boolean(model, args[0], depth + 1)
        ty = parse_type_name(name)
        return ty.is_arithmetic and ty.kind != "bool" and len(args) == 1 and _boolean(model, args[0], depth + 1)
    if t == "identifier":
        v = model.resolve(n)
        if v is None:
            return False
        if v.type.kind == "bool" and v.type.width == 1:
            return True
        if v.is_param or v.is_global or v.init is None or v.type.width != 1 or v.is_array:
            return False
        return _single_assignment(model, v) and _boolean(model, v.init, depth + 1)
    return False


def _single_assignment(model, v) -> bool:
    return not model.writes_into(v)


def _same(model, a, b) -> bool:
    return "".join(model.text(a).split()) == "".join(model.text(b).split())
