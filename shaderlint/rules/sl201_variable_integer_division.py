"""SL201 variable-integer-division

## What it does
Flags integer `/`, `%`, `/=` and `%=` whose denominator is not a compile-time
constant. Constants are literals, `const` variables with constant initializers,
`constexpr` variables (whatever their initializer names: C++ requires a
constant), enumerators, template parameters, `sizeof`, object-like macros
with literal values, Metal function constants, GLSL specialization constants
and `gl_WorkGroupSize`. `blockDim.x`, `gridDim.x`, `threads_per_threadgroup`
and `gl_SubgroupSize` are run-time values and are flagged. Float division and
expressions whose type cannot be told are left alone, and so are denominators
built from counters of constant-trip loops the compiler unrolls completely (at
most 64 iterations, or a trip count the analysis cannot compute, and not
`#pragma unroll 1`): `for (s = 1; s < 256; s *= 2) if (t < 128 / s)` divides
by a constant in every unrolled copy. Divisions the compiler evaluates (in a
`constexpr` initializer, a template argument, a `static_assert` or an array
bound) are not run-time divisions and are left alone.

## Why is this bad?
GPUs have no integer divider. Division or modulo by a value known at compile
time becomes a shift (powers of two) or a multiply-high and shift; by a
run-time value it becomes a long emulation sequence. Apple's GPU compiler team
calls it out directly: integer division by a non-constant costs "hundreds of
cycles" ("Advanced Metal Shader Optimization", WWDC).

## Example
```cuda
__global__ void unpack(const int* in, int2* out, int width, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = make_int2(i % width, i / width);   // SL201 twice
}
```

## Use instead
Make the denominator a compile-time constant (a template parameter, a function
constant, a specialization constant), or precompute a reciprocal or magic
multiplier on the host; for a power-of-two run-time value pass its log2 and
shift:
```cuda
template <int WIDTH>
__global__ void unpack(const int* in, int2* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = make_int2(i % WIDTH, i / WIDTH);
}
```

## Impact
Latency rather than registers: an emulated 32-bit division is roughly 20–40
instructions on NVIDIA GPUs and uses a few extra temporary registers at the
point of the division. The register model (`docs/register-model.md`) estimates
the kernel as written and with this divisor constant: `registers` is the
difference (0 to −3, non-zero only when the division sits at the kernel's
register peak), `stack_bytes` 0, and the occupancy changes only when the kernel
is at a register boundary of the active target.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: `in[t] / width` with `width` a
kernel parameter compiles to `div.s32` (and the `% width` next to it reuses the
quotient), which ptxas expands into a reciprocal-and-correct sequence; the
negative `in[t] / kWidth` with `constexpr int kWidth = 24` compiles to
`mul.hi.s32 …, 715827883` plus shifts, and `% 16` to `and.b32` — no division.
On `unrolled_loop_counter.cu`, `up_sweep` (`128 / stride` with `stride *= 2`
up to 256, `t % (2 * stride)`) has no `div`/`rem` left after unrolling, while
`harmonic` keeps 9: the 1000-iteration loop is only partly unrolled and the
`#pragma unroll 1` loop not at all.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Severity
from shaderlint.estimate import whatif
from shaderlint.estimate.static import static_index
from shaderlint.model.expr import unparen
from shaderlint.rules.base import Rule, RuleContext

# Trip counts up to which nvcc was seen to unroll a constant-trip loop completely (a 64-iteration
# `s += x / k` loop compiles without a division; at 256 iterations 32 `div.s32` remain).
_FULL_UNROLL_TRIPS = 64


class VariableIntegerDivision(Rule):
    code = "SL201"
    name = "variable-integer-division"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    summary = "integer division or modulo by a value that is not a compile-time constant"

    @classmethod
    def what_if(cls, model, function, finding, target):
        return whatif.cheap_division(finding.start)  # the finding is at the operator

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for node in model.nodes("binary_div"):
            f = model.function_at(node.start_byte)
            if f is None or not f.is_device_code:
                continue
            is_assign = node.type == "assignment_expression"
            op_node = node.child_by_field_name("operator")
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op_node is None or left is None or right is None:
                continue
            lt, rt = model.type_of(left), model.type_of(right)
            if not (lt.is_integer and rt.is_integer):
                continue
            if model.is_constant(right) or _constant_once_unrolled(model, f, right) or _constant_context(model, node):
                continue
            op = model.text(op_node)
            what = "modulo" if "%" in op else "division"
            yield Finding(
                op_node.start_byte, op_node.end_byte,
                f"integer {what} by '{model.text(unparen(right))}', which is not a compile-time constant "
                f"({rt.name} {op.rstrip('=')} is emulated in many instructions)",
                kernel=f.name,
                fingerprint_text=model.text(node) if not is_assign else model.text(node),
            )


_CONSTANT_CONTEXTS = ("template_argument_list", "static_assert_declaration", "array_declarator")
_STATEMENT_END = ("compound_statement", "function_definition", "translation_unit", "expression_statement",
                  "return_statement", "for_statement", "if_statement", "while_statement")


def _constant_context(model, node) -> bool:
    """True when the division is evaluated by the compiler: in the initializer of a ``constexpr``
    variable (C++ rejects one that is not a constant expression, whatever names it uses, e.g. a
    header macro ``constexpr int NE = N / N_SIMDWIDTH;``), a template argument, a
    ``static_assert`` or an array bound."""
    n = node.parent
    while n is not None and n.type not in _STATEMENT_END:
        if n.type in _CONSTANT_CONTEXTS:
            return True
        if n.type == "declaration":
            return any(c.type == "type_qualifier" and model.text(c) == "constexpr" for c in n.children)
        n = n.parent
    return False


def _constant_once_unrolled(model, f, node) -> bool:
    """True when the denominator is built from counters of loops the compiler unrolls completely
    (constant start, bound and step, at most ``_FULL_UNROLL_TRIPS`` iterations or a trip count
    the analysis cannot compute, not ``#pragma unroll 1``) and constants: every unrolled copy
    divides by a constant (`for (d = 1; d < 256; d *= 2) if (t < 128 / d)`)."""
    if not static_index(model, f, node):
        return False
    return _counters_unrolled(model, f, node, 0)


def _counters_unrolled(model, f, node, depth: int) -> bool:
    if depth > 8:
        return False
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is None:
                continue
            loops = [lp for lp in f.loops if lp.var is v and lp.node.start_byte <= n.start_byte < lp.node.end_byte]
            for lp in loops:
                if lp.unroll == 1 or (lp.unroll != 0 and lp.trip_count is not None and lp.trip_count > _FULL_UNROLL_TRIPS):
                    return False
            if not loops and v.function is f and not v.is_param and v.init is not None \
                    and not _counters_unrolled(model, f, v.init, depth + 1):
                return False
            continue
        stack.extend(n.named_children)
    return True
