"""SL202 float-literal-in-half-math

## What it does
Flags half-precision arithmetic (Metal `half`, GLSL `float16_t`/`f16vec*`) in
which one operand is a float literal (`0.5`, `0.5f`, GLSL `0.5lf`): a binary
`+ - * /` or, in Metal, a compound assignment (`h *= 0.5`). The literal makes
the operation a float operation; the half operand is converted up and the
result converted back. It is reported at the literal.

Not flagged: a Metal `halfN` vector combined with a scalar literal (`h4 * 0.5`
converts the scalar to the vector's element type, so it stays half math; in
GLSL `f16vec4 * 0.5` is promoted and is flagged); integer literals (`h * 2`);
literals in constructors and initializers (`half4(h, 0.0, 0.0, 1.0)`,
`half x = 0.5;` are converted at compile time); comparisons and `?:` (the
compiler narrows those when the literal is exact in half); expressions whose
result is meant to be float (`float y = h * 0.5;`, or combined or compared
with a float variable: `h * 0.5 + f`, `f < h * 0.5`); and built-in calls such as `max(h, 0.0)`, which
neither Metal (ambiguous between the half and float overloads) nor glslang
("ambiguous best function under implicit type conversion") compiles.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC) lists
16-bit types as one of the largest wins on Apple GPUs (half-width registers,
faster ALU) and warns that an unsuffixed float literal silently promotes half
math: `half x = y * 2.0` is computed as `float(y) * 2.0f` and converted back,
spending two conversions and a full-precision temporary for what the author
meant to be half math. GLSL behaves the same way under
`GL_EXT_shader_explicit_arithmetic_types_float16`: glslang compiles
`float16_t(h * 0.5)` to `OpFConvert %float`, `OpFMul %float … %float_0_5`,
`OpFConvert %half`, where `h * 0.5hf` is one `OpFMul %half`.

## Example
```metal
half4 shade(half3 n, half3 l, half ambient) {
    half ndotl = saturate(dot(n, l));
    half lit = ndotl * 0.8 + ambient;        // SL202: half * float
    return half4(lit, lit, lit, 1.0h);
}
```

## Use instead
Suffix the literal: `h` in Metal, `hf` in GLSL.
```metal
    half lit = ndotl * 0.8h + ambient;
```

## Fix safety
Always unsafe: the fix moves the arithmetic from float to half precision, and
a safe fix never changes values. Even an exact literal changes results: with
`half x = 20000`, `x * 4.0 * 0.25` is 20000 computed in float, while
`x * 4.0h * 0.25h` overflows to infinity at `x * 4.0h` (half tops out at
65504); sums and chains of operations round at 11 bits instead of 24. A
literal that rounds in half (`0.1` becomes 0.0999755859375) changes its own
value too. Review the range and precision the expression needs before
applying it. No fix is offered for a literal beyond the half range (see
SL203).

## Impact
Throughput rather than occupancy: each flagged operation costs a half→float
conversion, a 32-bit operation and (when stored back to half) a float→half
conversion instead of one 16-bit operation, and keeps a 32-bit temporary live.
On Apple GPUs, whose registers are allocated in 16-bit units, that temporary
counts double; the diagnostic carries no numeric impact (unknown → null).

## Options
None.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Severity
from shaderlint.model.consteval import parse_number
from shaderlint.model.expr import COMPARE_OPS, unparen
from shaderlint.model.types import arithmetic_result, parse_type_name
from shaderlint.model.dispatch import nodes_in
from shaderlint.rules.base import Rule, RuleContext

ARITH = frozenset("+ - * /".split())
COMPOUND = frozenset("+= -= *= /=".split())
_OPS = {"+": "addition", "-": "subtraction", "*": "multiplication", "/": "division"}


def is_wide_float(t) -> bool:
    return t.kind == "float" and t.bits > 16


def float_literal(model, node):
    """The number_literal node if ``node`` is a float (not half) literal, possibly negated."""
    n = unparen(node)
    if n.type == "unary_expression":
        op = n.child_by_field_name("operator")
        arg = n.child_by_field_name("argument")
        if op is None or arg is None or model.text(op) not in ("-", "+"):
            return None
        n = unparen(arg)
    if n.type != "number_literal":
        return None
    return n if is_wide_float(model.literal_type(n)) else None


class FloatLiteralInHalfMath(Rule):
    code = "SL202"
    name = "float-literal-in-half-math"
    languages = frozenset({"metal", "glsl"})
    severity = Severity.WARNING
    fix = "unsafe"
    summary = "half-precision arithmetic with a float literal operand, which promotes it to float"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        suffix = "h" if model.language == "metal" else "hf"
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            lo, hi = f.body.start_byte, f.body.end_byte
            for node in nodes_in(model, "binary", lo, hi):
                yield from self._binary(model, f, node, suffix)
            for node in nodes_in(model, "assign", lo, hi):
                yield from self._compound(model, f, node, suffix)

    # ---- the two forms ---------------------------------------------------------------------
    def _binary(self, model, f, node, suffix):
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None or model.text(op) not in ARITH:
            return
        if float_literal(model, right) is None and float_literal(model, left) is None:
            return  # (most operations: asked before the type, which costs more)
        if not is_wide_float(model.type_of(node)):
            return
        for lit_side, other in ((right, left), (left, right)):
            lit = float_literal(model, lit_side)
            if lit is not None and _halfish(model, other) and not _float_context(model, node):
                what = _OPS[model.text(op)]
                yield _finding(model, f, lit, suffix,
                               f"float literal '{model.text(lit)}' promotes this half {what} to float")
                return

    def _compound(self, model, f, node, suffix):
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None or model.text(op) not in COMPOUND:
            return
        if model.language != "metal":
            return  # GLSL has no implicit float -> float16_t conversion: `h *= 0.5` does not compile
        lit = float_literal(model, right)
        if lit is None:
            return
        lt = model.type_of(left)
        if not lt.is_half:
            return
        if not is_wide_float(arithmetic_result(lt, model.literal_type(lit), model.language)):
            return
        yield _finding(model, f, lit, suffix,
                       f"float literal '{model.text(lit)}' makes '{model.text(left)} {model.text(op)}' a float "
                       f"operation on half data")


def _finding(model, f, lit, suffix, message) -> Finding:
    text = model.text(lit)
    fixed = _suffixed(text, suffix)
    exact = _half_exact(parse_number(text))
    fix = None
    if exact is not None:  # beyond the half range: no mechanical fix (SL203)
        fix = Fix(f"Write {fixed}", Applicability.UNSAFE,  # half arithmetic: other range and rounding
                  (Edit(lit.start_byte, lit.end_byte, fixed),))
    return Finding(lit.start_byte, lit.end_byte, f"{message}; write '{fixed}'", kernel=f.name, fix=fix)


def _suffixed(text: str, suffix: str) -> str:
    low = text.lower()
    if low.endswith("lf"):
        return text[:-2] + suffix
    if low.endswith("f") and not low.startswith(("0x", "-0x")):
        return text[:-1] + suffix
    return text + suffix


def _half_exact(value) -> bool | None:
    """True if exactly representable in half, False if rounded, None if out of range."""
    if value is None:
        return None
    try:
        back = struct.unpack("<e", struct.pack("<e", float(value)))[0]
    except (OverflowError, struct.error):
        return None
    return back == float(value)


def _halfish(model, node, depth: int = 0) -> bool:
    """Half data, or an expression promoted to float only by float literals mixed into half data."""
    n = unparen(node)
    t = model.type_of(n)
    if t.is_half:
        return True
    if depth > 16 or not is_wide_float(t):
        return False
    if n.type == "binary_expression":
        op = n.child_by_field_name("operator")
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if op is None or left is None or right is None or model.text(op) not in ARITH:
            return False
        parts = [left, right]
    elif n.type == "unary_expression":
        arg = n.child_by_field_name("argument")
        parts = [arg] if arg is not None else []
    else:
        return False
    halves = [p for p in parts if float_literal(model, p) is None]
    return bool(halves) and all(_halfish(model, p, depth + 1) for p in halves)


def _float_context(model, node) -> bool:
    """True when the result of ``node`` is meant to be float: stored to a float, combined with float data,
    passed where a float is expected; unknown destinations count as float (stay silent)."""
    n = node
    for _ in range(64):
        p = n.parent
        if p is None:
            return True
        t = p.type
        if t in ("parenthesized_expression", "unary_expression"):
            n = p
            continue
        if t == "binary_expression":
            op = p.child_by_field_name("operator")
            other = p.child_by_field_name("left") if p.child_by_field_name("right") == n else p.child_by_field_name("right")
            meets_float = other is not None and is_wide_float(model.type_of(other)) \
                and float_literal(model, other) is None and not _halfish(model, other)
            if op is None or model.text(op) not in ARITH:
                # a comparison: the value is not stored, but compared with float data (`f < h * 0.5`)
                # the half product is converted to float anyway, and the suffix saves nothing
                return meets_float and model.text(op or p) in COMPARE_OPS
            if meets_float:
                return True
            n = p
            continue
        if t == "conditional_expression":
            if p.child_by_field_name("condition") == n:
                return False
            n = p
            continue
        if t == "init_declarator":
            decl = p.child_by_field_name("declarator")
            if decl is None or decl.type != "identifier":
                return True
            return not model.type_of(decl).is_half
        if t == "assignment_expression":
            left = p.child_by_field_name("left")
            return left is None or not model.type_of(left).is_half
        if t == "return_statement":
            f = model.function_at(p.start_byte)
            return f is None or not f.return_type.is_half
        if t == "argument_list":
            call = p.parent
            name = model.callee_name(call) if call is not None else ""
            ct = parse_type_name(name)
            if ct.is_arithmetic:
                return not ct.is_half  # constructor: half4(h * 0.5, ...) is half-destined
            callee = model.function_by_name.get(name)
            args = [a for a in p.named_children if a.type != "comment"]
            if callee is not None and n in args and args.index(n) < len(callee.params):
                return not callee.params[args.index(n)].type.is_half  # a helper taking half
            return True
        if t in ("expression_statement", "condition_clause", "subscript_argument_list", "subscript_expression"):
            return False
        return True
    return True
