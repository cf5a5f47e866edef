"""SL503 truncating-grid-division

## What it does
Flags a `<<<grid, block>>>` launch whose grid dimension is computed as
`n / block` (or `ceil(n / block)` with integer operands, where the division
truncates before `ceil` sees it), with `block` the launch's block size along
the same axis. The grid may be written in the launch, in a `dim3` (constructor
or variable) or in a variable (`int blocks = n / threads;`); the report is at
the division, with the launch as a related location. Silent when the numerator
already rounds up (`(n + b - 1) / b`, `(n - 1) / b + 1`), for exact constant
divisions (`4096 / 256`), for floating-point `ceil(n / 256.0)`, when the
launching function checks `n % b` (an `assert` or an early return), when the
divisor is not the block size, and when the launched kernel is not in the file
or processes its data with a grid-stride loop (`i += blockDim.x * gridDim.x`),
which covers any tail.

It is also silent when the file proves `n` a multiple of the divisor
(`shaderlint.model.divisibility`):
- a check that dominates the launch, in the launching function or in every
  caller of it in the file (each passing a checked value): `assert(n % 512 ==
  0)`, `TORCH_CHECK(...)`, `if (n % 512 != 0) return;` (or `throw`),
  `(n & 511) == 0`, or an enclosing `if (n % 512 == 0)`. A multiple of 512 is a
  multiple of every divisor of 512, so this proves `n / (128 * 4)`, `n / 4 /
  128` and `n / 128` alike. A function with no caller in the file proves
  nothing about its parameters;
- the numerator's definitions: `b * (n / b + 1)`, `((n + 255) / 256) * 256`, a
  sum of multiples, `1 << k` with `k >= 8` checked (for 256);
- constants: locals and `static` file-scope variables given one constant value
  and never changed in the file (`int b = 256;`, `static int gRows = 4096;`),
  like `const` ones. A non-`static` global may be written by another
  translation unit: it is not a constant.
Only variables that keep their value count (never assigned after their
initialization, address not taken, not a reference, not handed to a call that
may write them).

### In host code
The same check runs on the host code that launches a kernel from another file,
in every host language shaderlint reads (`shaderlint.host`): CUDA launches in
`.cpp`/`.cc`/`.cu` host files, Metal `dispatchThreadgroups` in Swift,
Objective-C and metal-cpp (`threadgroupsPerGrid = MTLSizeMake(width / w, …)`),
Vulkan `vkCmdDispatch(cmd, width / 32, …)` (the divisor compared with the
shader's workgroup size, specialization constants included). Besides `n / b`
and `ceil(n / b)` on integer operands, it reads `floor(…)` of a division and
grids rounded to nearest (`(int)((float)n / 176 + 0.5)`, `lround(n / 176.0)`,
Swift `Int(Float(n) / 176 + 0.5)`), which lose the tail whenever `n % 176` is
below half the group. The finding is reported in the host file, at the
division, with the launch and the kernel's definition as related locations;
`// shaderlint: ignore SL503` on the host line, `--select`/`--ignore` and the
host file's per-file ignores apply. Silent for `dispatchThreads` (Metal sizes
the edge threadgroups itself), for rounded-up numerators, exact constant
quotients, numerators that are products with the divisor as a factor (also
through a variable given one value), when the host file names `n % b` (or
`n & (b - 1)`, Swift `n.isMultiple(of: b)`) anywhere, when the divisor is not
the group size along that axis, for kernels with a grid-stride loop, and when
the launch cannot be linked to exactly one kernel being linted. No fix is
offered there (the host file is not rewritten).

## Why is this bad?
With `n = 1000` and 256-thread blocks, `n / 256` launches 3 blocks = 768
threads: elements 768–999 are never processed, and nothing reports it. Metal's
"Calculating threadgroup and grid sizes" rounds the grid up with
`(n + w - 1) / w` and guards the thread position against the data size;
pystencils' launch configuration computes the grid as ceil(work / block) for the
same reason.

## Example
```cuda
saxpy<<<n / 256, 256>>>(a, x, y, n);              // SL503
saxpy<<<(int)ceil(n / 256), 256>>>(a, x, y, n);   // SL503: integer division first
```

## Use instead
```cuda
saxpy<<<(n + 255) / 256, 256>>>(a, x, y, n);      // and `if (i < n)` in the kernel
```

## Impact
A correctness error (unprocessed data): no register or occupancy change is
estimated (the impact's deltas are null).

## Fix safety
Unsafe: the fix rewrites the division to round up, which launches more
threads. That is the intent, but the extra threads of the last block then run
the kernel too; without a bounds guard in the kernel (SL105 checks for one)
they read and write past the end of the buffers.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -Xcompiler -Wall,-Wextra` compiles the CUDA fixture without
a diagnostic, and `nvcc -arch=sm_90 -ptx` produces byte-identical PTX for the
fixture and its fixed version: the kernel (`setp.ge.s32` bounds check on
`%ctaid.x * %ntid.x + %tid.x`) cannot know how many blocks the host launches,
so the lost tail is decided entirely by the host's grid arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Related, Severity
from shaderlint.model.dispatch import dim_exprs, follow, is_grid_stride, nodes_in
from shaderlint.model.divisibility import int_value, is_multiple, strip_casts
from shaderlint.model.expr import unparen
from shaderlint.rules.base import Rule, RuleContext

_CEIL = ("ceil", "ceilf", "std::ceil", "floor", "floorf")
_SIMPLE = ("identifier", "field_expression", "call_expression", "subscript_expression", "number_literal",
           "qualified_identifier")


class TruncatingGridDivision(Rule):
    code = "SL503"
    name = "truncating-grid-division"
    languages = frozenset({"cuda"})  # (Metal and GLSL kernels: through their host code, shaderlint.host.lint)
    severity = Severity.WARNING
    fix = "unsafe"
    summary = "launch grid computed with a division that rounds down"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        done: set[int] = set()
        for site in model.launches:
            kernel = model.function_by_name.get(site.kernel)
            if kernel is None or kernel.body is None:
                continue  # unknown kernel
            if site.grid is None or site.block is None:
                continue
            grid, block = dim_exprs(model, site.grid), dim_exprs(model, site.block)
            if grid is None or block is None:
                continue
            divisions = []
            for axis, expr in enumerate(grid[0]):
                bexpr = block[0][axis] if axis < len(block[0]) else None
                div = _truncating(model, site, expr, bexpr)
                if div is not None and div[0].id not in done:
                    divisions.append(div)
            if not divisions or is_grid_stride(model, kernel):
                continue  # (asked last, the costliest test) a kernel that covers any size with a grid-stride loop
            for d, _, _ in divisions:
                done.add(d.id)
            first, num, den = divisions[0]
            n, b = model.text(num), model.text(den)
            if strip_casts(den).type == "binary_expression":
                b = f"({b})"
            yield Finding(
                first.start_byte, first.end_byte,
                f"grid size `{model.text(first)}` rounds down: when {n} is not a multiple of {b}, the last "
                f"{n} % {b} items get no thread ('{site.kernel}' has no grid-stride loop); round up with "
                f"`{_round_up(model, num, den)}`",
                kernel=site.kernel,
                related=tuple(Related(d.start_byte, d.end_byte, "also rounds down") for d, _, _ in divisions[1:])
                + (Related(site.node.start_byte, site.node.end_byte, "launch"),),
                fix=Fix("Round the grid size up", Applicability.UNSAFE,
                        tuple(Edit(d.start_byte, d.end_byte, _round_up(model, nn, dd)) for d, nn, dd in divisions)),
            )


def _truncating(model, site, expr, bexpr):
    """(expression to replace, numerator, denominator) when ``expr`` is ``n / b`` or ``ceil(n / b)`` on
    integers with ``b`` the block size along the same axis."""
    e, _ = follow(model, expr)
    e = strip_casts(e)
    whole = e
    if e.type == "call_expression" and model.callee_name(e) in _CEIL and len(model.call_args(e)) == 1:
        e = strip_casts(model.call_args(e)[0])
    if e.type != "binary_expression" or model.text(e.child_by_field_name("operator")) != "/":
        return None
    num, den = unparen(e.child_by_field_name("left")), unparen(e.child_by_field_name("right"))
    if not (model.type_of(num).is_integer and model.type_of(den).is_integer):
        return None
    core = strip_casts(num)
    if core.type == "binary_expression" and model.text(core.child_by_field_name("operator")) in ("+", "-"):
        return None  # `(n + b - 1) / b` and friends
    nv, dv = model.const_value(num), model.const_value(den)
    if isinstance(nv, int) and isinstance(dv, int) and dv and nv % dv == 0:
        return None  # exact: 4096 / 256
    if bexpr is None or not (_same(model, den, bexpr) or _block_multiple(model, den, bexpr)):
        return None
    if _divisibility_checked(model, site, num, den) or is_multiple(model, num, den, (e, site.node)):
        return None
    return whole, num, den


def _same(model, a, b) -> bool:
    va, vb = int_value(model, a), int_value(model, follow(model, b)[0])
    if va is not None and vb is not None:
        return va == vb
    return " ".join(model.text(strip_casts(a)).split()) == " ".join(model.text(strip_casts(b)).split())


def _block_multiple(model, den, bexpr) -> bool:
    """``block * k`` (or ``k * block``) with ``k`` a compile-time constant: a tile of k items per thread."""
    d = strip_casts(den)
    if d.type != "binary_expression" or model.text(d.child_by_field_name("operator")) != "*":
        return False
    left, right = unparen(d.child_by_field_name("left")), unparen(d.child_by_field_name("right"))
    return (_same(model, left, bexpr) and model.is_constant(right)) or (
        _same(model, right, bexpr) and model.is_constant(left))


def _divisibility_checked(model, site, num, den) -> bool:
    """True if the launching function names `num % den` anywhere: a check the divisibility proofs
    may not read (a macro, a flag), or the remainder handled apart (`if (n % 256) tail<<<1, n % 256>>>`),
    which no proof that `n` is a multiple covers. Lenient on purpose: when in doubt, silent."""
    f = site.function
    if f is None or f.body is None:
        return False
    want = ("".join(model.text(num).split()), "".join(model.text(den).split()))
    for d in nodes_in(model, "binary_div", f.body.start_byte, f.body.end_byte):
        if model.text(d.child_by_field_name("operator")) == "%":
            got = ("".join(model.text(d.child_by_field_name("left")).split()),
                   "".join(model.text(d.child_by_field_name("right")).split()))
            if got == want:
                return True
    return False


def _round_up(model, num, den) -> str:
    n = model.text(num)
    if num.type not in _SIMPLE and not (num.type == "binary_expression"
                                        and model.text(num.child_by_field_name("operator")) in ("*", "/", "%")):
        n = f"({n})"
    dv = model.const_value(den)
    d = model.text(den)
    if den.type not in _SIMPLE:
        d = f"({d})"
    if isinstance(dv, int) and den.type == "number_literal":
        return f"({n} + {dv - 1}) / {d}"
    return f"({n} + {d} - 1) / {d}"
