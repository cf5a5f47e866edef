"""SL201 variable-integer-division

## What it does
Flags integer `/`, `%`, `/=` and `%=` whose denominator is not a compile-time
constant, where a thread evaluates them many times (see the last paragraph).
Constants are literals, `const` variables with constant initializers,
`constexpr` variables (whatever their initializer names: C++ requires a
constant), enumerators, template parameters, `sizeof`, object-like macros
with literal values, Metal function constants, GLSL specialization constants
and `gl_WorkGroupSize`; a name the file does not declare that reads as a
constant (an upper-case or `kName` macro or constant from a header, a member of
a type such as `Traits::kWidth`) is a constant of unknown value, also through
a `const` local it initializes (`const int warp_size = WARP_SIZE;`). `blockDim.x`, `gridDim.x`, `threads_per_threadgroup`
and `gl_SubgroupSize` are run-time values and are flagged. Float division and
expressions whose type cannot be told are left alone, and so are denominators
built from counters of constant-trip loops the compiler unrolls completely (at
most 64 iterations, or a trip count the analysis cannot compute, and not
`#pragma unroll 1`): `for (s = 1; s < 256; s *= 2) if (t < 128 / s)` divides
by a constant in every unrolled copy. Divisions the compiler evaluates (in a
`constexpr` initializer, a template argument, a `static_assert` or an array
bound) are not run-time divisions and are left alone. Divisions with the same
operands (the same text, blanks and parentheses aside; no call in them) are one
emulated division when nothing writes their variables between them (nor takes
their address or passes them to a reference parameter), nothing stores to
memory between them when they read it, and the first is always evaluated
before the later in the same loop iteration (unconditionally, in a block that
holds the later; or the two are statements of one block): the same `a / b`
again is a common subexpression, and `a % b` next to `a / b` (or `a /= b`
after `a % b`) is derived from the quotient. Each group is reported once, at
its first division, with the others as related locations.

A helper's parameter counts as a constant when every call of the helper in the
file passes it the same constant (or, when the denominator is the parameter
itself, powers of two only): after inlining, or by constant propagation, the
helper divides by that constant. Only where the file's calls are all the calls:
not in a header (`.cuh`, `.h`, `.glsl`, …; a GLSL file needs its `main`), for
CUDA and Metal only for a `static`, `inline`/`__forceinline__`, template or
anonymous-namespace helper that is not `__noinline__`, with one definition of
its name, named nowhere but as the callee of calls, and a by-value parameter it
never writes or takes the address of. A constant whose value is unknown (a
specialization constant, a header macro) counts when every call spells it the
same way with file-scope names only.

Only hot divisions are reported: a division is hot when it runs on every
iteration of the innermost loop that does the work. It must sit in the body,
condition or update of a loop with an operand that the loop changes (its
counter, a value computed from it, a load, a call other than
`min`/`max`/`abs`/`clamp` or a conversion, a variable written or address-taken
in the loop or passed there to a non-`const` reference or `out` parameter of a
function of the file, or one declared in it from such a value); a division whose
operands a loop does not change is hoisted out of it by the compiler, even from
under an `if` (`n / width` in a grid-stride loop runs once per thread). The *hot
loop* is the innermost loop around it, among those that change its operands,
whose trip count is a run-time value (or a constant above 64, too long to
unroll completely). Loops with a compile-time-constant trip count (a literal,
`constexpr`/`const`, a template parameter, a macro, a specialization constant)
geometric loops (`s *= 2`, `s <<= 1`, `s >>= 1`, `s /= 2`: a logarithmic
trip count) and loops whose counter indexes a thread's array of constant size
(at most that many trips, `for (d = rank - 1; d >= 0; --d) coord[d] = ...` over
`int coord[5]`) between the division and the hot loop only multiply it; without a
hot loop the division runs a fixed handful of times per thread and is not
reported (a `#pragma unroll` loop over a thread's 4 vector lanes, a tree
reduction's `s *= 2` steps). It is amortised, and not reported, when the hot
loop's iteration also runs

- another loop with a run-time trip count (the MAC loop of a direct
  convolution's output element, the K loop before a once-per-tile epilogue), or
- another loop next to it inside the innermost *work* loop around it (the
  first loop from the division outwards that is not short; a short loop has at
  most 16 known trips and is straight-line code once unrolled), such as a
  decode done once per workgroup-stride step before a `NUM_ITER` copy loop, or
- a call that may cost more than the division: a function the file does not
  define, a functor or a method call (it may do any amount of work), or a
  function, named lambda or function-like macro of the file that runs a loop or
  makes such a call. Built-ins are cheap: math (a transcendental is a few
  special-function instructions, the division 20-40), conversions and type
  constructors (also an upper-case one-argument macro of a header such as
  `D_TYPE(x)`), loads, atomics, shuffles, barriers, texture and image access, or
- an atomic on global memory whose value the thread uses (`int pos =
  atomicAdd(&counts[e], 1)` on a kernel's buffer): the thread waits for a round
  trip to the L2 cache, more when threads contend for the counter. An atomic
  whose value is unused (a scattered gradient `atomicAdd`) is not waited for,
  and one on shared memory is cheap: neither counts.

A division in a helper or named lambda (with no hot loop of its own) is
reported when the file calls it from a hot place by these rules with an
argument the loop changes -- for a parameter the division reads, directly or
through a local initialized from it (`gather(row, i)` with `row % n` in it does
not change with `i`) -- or when it divides a value it loads, unless the helper
runs a loop of its own that the division is amortised over. A helper called
only outside loops is not reported, and a function that no kernel of the file
calls (directly or through other functions) is not reported at all, not even
from a loop of its own: it may never run, and a header's callers are not in
view.

## Why is this bad?
GPUs have no integer divider. Division or modulo by a value known at compile
time becomes a shift (powers of two) or a multiply-high and shift; by a
run-time value it becomes a long emulation sequence. Apple's GPU compiler team
calls it out directly: integer division by a non-constant costs "hundreds of
cycles" ("Advanced Metal Shader Optimization", WWDC). Measured on an H100
(`x / d + x % d` in a hot loop, runtime `d` against the constant 7): 2.1x
slower in 32-bit, 3.8x in 64-bit; one division and modulo per thread in a
memory-bound element-wise kernel: 8 %, which is why a division outside loops is
left alone.

## Example
```cuda
__global__ void unpack(const int* in, int2* out, int width, int n) {
    int first = (blockIdx.x * blockDim.x) / width;          // once per thread: not reported
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = make_int2(i % width, i / width + first);   // SL201 (once: '/' reuses the '%')
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
    int first = (blockIdx.x * blockDim.x) / WIDTH;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = make_int2(i % WIDTH, i / WIDTH + first);
}
```
Where the divisor must stay a run-time value, step the quotient and remainder
with the loop instead of dividing in it (`col += stride; while (col >= width)
{ col -= width; ++row; }`).

## Impact
Latency rather than registers: an emulated 32-bit division is roughly 20–40
instructions on NVIDIA GPUs and uses a few extra temporary registers at the
point of the division. The register model (`docs/register-model.md`) estimates
the kernel as written and with this divisor constant: `registers` is the
difference (0 to −3, non-zero only when the division sits at the kernel's
register peak), `stack_bytes` 0, and the occupancy changes only when the kernel
is at a register boundary of the active target.

## Default
Opt-in (`extend-select = ["SL201"]`): on real code, whether a loop is hot
depends on sizes and launch shapes the source does not show. On the
real-code corpus (`bench/realcode/`: 33 PyPI source distributions, none of them
ours; judgements in `bench/realcode/judged.tsv`) the rule had 388 findings and
52 % precision over a judged sample of 35 (15 true, 14 false, 6 debatable)
when it reported every division a loop repeats. The hot-loop model above
removed the classes found there (index decodes amortised over a conv MAC
loop, a `NUM_ITER` copy loop or a K loop; `#pragma unroll` loops over a
thread's few vector lanes; `s *= 2` tree reductions; a stream-K loop whose
iteration calls a tile-processing function; mixed-radix decodes once per
thread): 117 findings, every one judged by reading the code, 57 true, 53
false, 7 debatable (52 %). Merging divisions nvcc computes once (the same
quotient again on another line, a `%` derived from a `/` in another
statement), following only the arguments a helper's division reads, leaving
out functions no kernel of the file calls, and counting an awaited global
atomic as work of the iteration left 96: 55 true, 34 false, 7 debatable
(62 %; `bench/realcode.py` shows 53 and 36 because two findings of one line
moved to another rank, which `judged.tsv` keys them by). The two true ones gone are `/ kernel_w` divisions merged into the
`% kernel_w` before them (one quotient, reported once at the first; the
judgement of that first row, made when both were reported, is false as a
duplicate). The false ones left: grid- and block-stride loops that the launch
sizes to run about once per thread (the grid covers the range; a
`min(n, 65535)` grid; `nth = min(1024, ne00)` threads stepping by `2 * nth`),
divisions behind rare guards, next to shared-memory atomics or after serial
one-thread loops of the same kernel, short run-time loops (a tail loop of at
most 3 trips, `mask_channels / 32` trips, a host constant `loop_x = 4`), code
under an `#if` the build never takes, and loops bound by other costs (PCIe
stores, a per-sample sampler call in a caller). The first and the short loops need
the host code's launch sizes; until the analysis reads them, the rule is
opt-in. The cost when it is right: 2.1x (int32) to 3.8x
(int64) for a runtime division in a hot loop on an H100.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` (CUDA 13.0), counting `div`/`rem` between a loop's
label and its backward branch. Hoisted out of the loop (0 inside, 1 before it):
`n / w` in a grid-stride loop's body, `i < n / w` as its condition, `n % w` in a
`while` condition, `n / w` under an `if` in the body and after a `break`, a
64-bit `n / w`, `threadIdx.x / w`, `n / min(w, h)`, `h / w` with `int h = n * 2`
declared in the body, a variable the loop assigns only `n * 3` (the rule still
counts a variable written in the loop as changing), and an inlined
helper `cols_of(n, w)` with invariant arguments. Kept in the loop: `i / w` with
the counter, `in[0] / w` (a load the loop's stores may alias), helpers called
as `cols_of(i, w)` or dividing a value they load, `total / w` after
`bump(&total, in[i])`, `row % h` after `unpack(i, w, row, col)` writes `row`
through a reference (while `(n && w) ? n / w : 0` next to it is hoisted), and
in nested loops `r / w` (the outer counter) is
hoisted out of the inner loop only. `loop_invariance.cu` (the fixture) has 5
divisions inside `grid_stride`'s loop, exactly its 5 reported ones; its clean
lines compile to 7 divisions outside it. A fully unrolled constant-trip
loop keeps one division per copy (4 for 4 trips), so it still counts. On
`variable_integer_division.cu`, `i / width` and `i % width` in one block give
one `div.s32` and no `rem`, and so do `i / width` again in a nested `if` and
`out[i] / width` with `out[i] % width`; on `common_subexpressions.cu`, the
col2im decode's repeated chains (`col_pos / width_col / height_col` on three
lines, `(col_pos / width_col) % height_col`) and a mixed-radix `idx % shape[d]`
before `idx /= shape[d]` keep one `div` per distinct quotient, while a `%`
under `&&` in an `if` condition and a `/` in its body keep a `rem` and a `div`,
as do two reads of `out[e]` around a store `out[q] = e`; and `unpack_fixed` has no run-time division except
`i / warpSize`, a `div.s32` by the PTX constant `WARP_SZ` (32; whether ptxas
turns it into a shift was not checked: no disassembler here). On
`unrolled_loop_counter.cu`, `up_sweep` (`128 / stride` with `stride *= 2` up
to 256, `t % (2 * stride)`) has no `div`/`rem` left after unrolling, while
`harmonic` keeps 9: the 1000-iteration loop is only partly unrolled and the
`#pragma unroll 1` loop not at all. On `caller_constants.cu`, the helpers every
call passes `24` (`rows_of`) or powers of two (`tiles`: `16`, `64`) compile to
`mul.hi.s32 …, 715827883` and shifts; in the caller's loop only
`columns_of(i, width)` and `written_rows` (`group += n & 1`) keep a `div.s32`.
The cost figures in *Why is this bad?* were measured on an NVIDIA H100 (CUDA
13.0, `-O3`, medians of 30 alternating runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.estimate import whatif
from shaderlint.estimate.static import static_index
from shaderlint.model.dispatch import calls_to, nodes_in
from shaderlint.model.expr import compared_with, descendants, subscript_index, unparen
from shaderlint.model.types import parse_type_name
from shaderlint.rules.base import Rule, RuleContext

# Trip counts up to which nvcc was seen to unroll a constant-trip loop completely (a 64-iteration
# `s += x / k` loop compiles without a division; at 256 iterations 32 `div.s32` remain).
_FULL_UNROLL_TRIPS = 64


class VariableIntegerDivision(Rule):
    code = "SL201"
    name = "variable-integer-division"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    default_on = False
    summary = "integer division or modulo by a value that is not a compile-time constant"

    @classmethod
    def what_if(cls, model, function, finding, target):
        # the finding is at the operator; a '%' reusing its quotient (a related location) goes with it
        return whatif.cheap_division(finding.start, extra=[r.start for r in finding.related])

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        sites = []  # (function, node, operator node, right operand, message)
        for node in model.nodes("binary_div"):
            f = model.function_at(node.start_byte)
            if f is None or not f.is_device_code:
                continue
            op_node = node.child_by_field_name("operator")
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op_node is None or left is None or right is None:
                continue
            lt, rt = model.type_of(left), model.type_of(right)
            if not (lt.is_integer and rt.is_integer):
                continue
            if model.is_constant(right) or _constant_once_unrolled(model, f, right) or _constant_context(model, node) \
                    or _constant_from_callers(model, f, right):
                continue
            if not _runs(model, f) or not _repeated(model, f, node, 0):
                continue  # once per thread: about 8 % of a memory-bound kernel, not worth a warning
            op = model.text(op_node)
            what = "modulo" if "%" in op else "division"
            sites.append((f, node, op_node, (
                f"integer {what} by '{model.text(unparen(right))}', which is not a compile-time constant "
                f"({rt.name} {op.rstrip('=')} is emulated in many instructions)")))
        rep = _same_divisions(model, [(f, node) for f, node, _, _ in sites])
        members: dict[int, list[int]] = {}
        for i, j in rep.items():
            members.setdefault(j, []).append(i)
        for i, (f, node, op_node, message) in enumerate(sites):
            if i in rep:
                continue  # the compiler reuses an earlier identical division: reported there
            related: tuple[Related, ...] = ()
            others = sorted(members.get(i, ()))
            if others:
                texts = []
                for j in others:
                    kind = "modulo" if "%" in model.text(sites[j][2]) else "division"
                    texts.append((kind, model.text(sites[j][1]), sites[j][2]))
                kind, text, _ = texts[0]
                more = f" (and {len(texts) - 1} more)" if len(texts) > 1 else ""
                message += (f"; the {kind} '{text}'{more} with the same operands reuses this emulated "
                            f"division and is not reported separately")  # (no line number: messages move with edits)
                related = tuple(Related(o.start_byte, o.end_byte, f"{k} '{t}' with the same operands")
                                for k, t, o in texts)
            yield Finding(op_node.start_byte, op_node.end_byte, message, kernel=f.name, related=related,
                          fingerprint_text=model.text(node))


_LOOP_TYPES = ("for_statement", "while_statement", "do_statement", "for_range_loop")
#: Calls whose value depends on their arguments only (besides conversions such as ``int(x)``).
_PURE_CALLS = frozenset(("min", "max", "abs", "clamp", "umin", "umax", "llmin", "llmax"))


def _repeated(model, f, node, depth: int, at=None, via=None) -> bool:
    """Whether the division ``node`` is hot: a thread evaluates it on every iteration of a loop
    whose trip count is a run-time value (the *hot loop*: the innermost such loop around the
    innermost loop that changes the division's operands; a loop that does not change them has it
    hoisted out by the compiler, ``nvcc -ptx``: wherever it sits in the body, even under an
    ``if``), and that iteration does no other loop's work and calls nothing that may cost more than
    the division (see :func:`_hot_here`). Loops with a compile-time-constant trip count and
    geometric loops (``s *= 2``) between the division and the hot loop only multiply it. Without a
    hot loop in ``f`` the division runs a fixed number of times per call: it is hot when ``f`` is a
    helper (or a named lambda) that the file calls from a hot place with an argument the loop
    changes (or that divides a value it loads) and that runs no other loop of its own.
    ``at``: where to start looking for loops (a call of the lambda holding ``node``); ``via``: the
    call of the helper the division is in (not counted as a cost of its own)."""
    anchor = at if at is not None else node
    chain = _ancestors(f.node, anchor)
    loops, lam = [], None
    for i in range(len(chain) - 1, 0, -1):
        p, n = chain[i - 1], chain[i]
        if p.type == "lambda_expression":
            lam = p
            break
        if p.type in _LOOP_TYPES and not (p.type == "for_statement" and n == p.child_by_field_name("initializer")):
            loops.append(p)
    verdict = _hot_here(model, f, node, loops, via)
    if verdict is not None:
        return verdict
    # no hot loop here: a fixed number of evaluations per call of ``f`` (or of the lambda)
    multipliers = {lp.id for lp in loops if _varies_in(model, node, lp)}
    region = lam if lam is not None else f.body
    if region is None or _work_loop(model, f, region, multipliers):
        return False  # the helper runs a loop of its own each call: the division is amortised over it
    if lam is not None:
        return _lambda_repeated(model, f, lam, node, depth)
    if f.is_entry or depth > 2 or f.body is None:
        return False
    loads = _varies_in(model, node, f.body)  # reads more than the helper's parameters
    used = None if loads else _params_used(model, f, node, 0)
    for call in calls_to(model, f.name):
        g = model.function_at(call.start_byte)
        if g is None or g is f:
            continue
        args = [call] if loads else [a for k, a in enumerate(_args(model, call)) if used is None or k in used]
        if any(_repeated(model, g, e, depth + 1, via=call) for e in args):
            return True
    return False


def _params_used(model, f, node, depth: int) -> set[int] | None:
    """Indices of the parameters of ``f`` that the value of ``node`` depends on (through locals of
    ``f`` initialized from them and never assigned), or None when it cannot be told: only these
    arguments of a call can make the division change from call to call (``gather(row, i)`` with
    ``row % n`` in it does not change with ``i``)."""
    out: set[int] = set()
    for n in descendants(node, "identifier"):
        if n.parent is not None and n.parent.type == "field_expression" and n.parent.child_by_field_name("field") == n:
            continue
        v = model.resolve(n)
        if v is None:
            if model.is_constant(n) or model._builtin(model.text(n)) is not None:
                continue
            return None
        if v.is_param and v.function is f:
            if v not in f.params:
                return None
            out.add(f.params.index(v))
        elif v.function is f:
            if v.init is None or depth > 4 or model.direct_writes(v):
                return None
            got = _params_used(model, f, v.init, depth + 1)
            if got is None:
                return None
            out |= got
        elif not v.is_global or model.writes_into(v):
            return None  # (a global the file writes may change between calls)
    return out


def _runs(model, f) -> bool:
    """Whether ``f`` is an entry point or a function that one calls (through other functions of
    the file, at most 6 deep): a helper nothing in the file calls may never run (a header's helper:
    its callers, their loops and launch sizes are not in view), even a loop of its own is not
    known to be hot."""
    cache = model.__dict__.setdefault("_sl201_runs", {})
    got = cache.get(id(f))
    if got is None:
        got = cache[id(f)] = _runs_uncached(model, f)
    return got


def _runs_uncached(model, f) -> bool:
    seen, todo = {id(f)}, [f]
    for _ in range(7):
        nxt = []
        for g in todo:
            if g.is_entry or g.kind == "kernel":
                return True
            for call in calls_to(model, g.name):
                h = model.function_at(call.start_byte)
                if h is not None and id(h) not in seen:
                    seen.add(id(h))
                    nxt.append(h)
        todo = nxt
    return False


def _hot_here(model, f, node, loops: list, via) -> bool | None:
    """The verdict for the division ``node`` inside the loops ``loops`` of ``f`` (innermost first).
    The *hot loop* is the innermost run-time-trip loop that changes the division's operands; the
    loops between it and the division that change them only multiply it (constant or geometric
    trip counts). None when there is no hot loop (a fixed number of evaluations per call of
    ``f``). False when the division is amortised: the hot loop's iteration also runs another loop
    with a run-time trip count, or calls something that may cost more than the division, or the
    innermost *work* loop around the division (the first of the multipliers that is not short,
    else the hot loop) also runs another loop that is not short (:func:`_work_loop`). True when
    it is hot."""
    multipliers: list = []
    for lp in loops:  # (asked lazily: the innermost loops decide almost every division)
        if not _varies_in(model, node, lp):
            continue  # hoisted out of this loop; if it does work, that is work of the iteration
        if _loop_kind(model, f, lp) != "runtime":
            multipliers.append(lp)
            continue
        exclude = {m.id for m in multipliers} | {lp.id}
        work = next((m for m in multipliers if not _short(model, f, m)), lp)
        if _work_loop(model, f, work, exclude) or _work_loop(model, f, lp, exclude, runtime_only=True) \
                or _costly_call(model, f, lp, via) or _global_atomic(model, lp):
            return False
        return True
    return None


_SHORT_TRIPS = 16


def _loop_kind(model, f, loop) -> str:
    """``"runtime"``: its trip count is a run-time value (or a constant above the full-unroll limit);
    ``"fixed"``: a compile-time-constant trip count (literal, ``constexpr``, template parameter,
    macro) up to the limit or of unknown value, or a geometric loop (``s *= 2``, ``s >>= 1``: a
    logarithmic trip count)."""
    return _loop_facts(model, f, loop)[0]


def _loop_facts(model, f, loop) -> tuple[str, int | None]:
    """(kind as in :func:`_loop_kind`, trip count when a constant one is known or estimated)."""
    cache = model.__dict__.setdefault("_sl201_loop_facts", {})
    got = cache.get(loop.id)
    if got is None:
        got = cache[loop.id] = _loop_facts_uncached(model, f, loop)
    return got


def _loop_facts_uncached(model, f, loop) -> tuple[str, int | None]:
    lp = _loop_record(model, f, loop)
    if lp is not None and lp.constant_trip:
        trips = lp.trip_count if lp.trip_count is not None else _geometric_trips(model, lp)
        if trips is not None and trips > _FULL_UNROLL_TRIPS and lp.unroll != 0:
            return "runtime", trips
        return "fixed", trips
    if _geometric(model, f, loop, lp):
        return "fixed", None
    bound = _array_bound(model, loop, lp)
    if bound is not None:
        return "fixed", bound
    return "runtime", None


def _array_bound(model, loop, lp) -> int | None:
    """The size of a thread-private array of constant size (at most ``_FULL_UNROLL_TRIPS``) that the
    loop's counter indexes in its body, moving by 1 each step: the loop runs at most that many times
    (more would index out of bounds), e.g. a mixed-radix decode over ``int coord[5]`` up to a
    run-time rank."""
    if lp is None or lp.var is None or lp.step not in (1, -1):
        return None
    body = loop.child_by_field_name("body")
    if body is None:
        return None
    for sub in nodes_in(model, "subscript", body.start_byte, body.end_byte):
        index = subscript_index(sub)
        arr = sub.child_by_field_name("argument")
        if index is None or arr is None or unparen(index).type != "identifier" or unparen(arr).type != "identifier":
            continue
        if model.resolve(unparen(index)) is not lp.var:
            continue
        v = model.resolve(unparen(arr))
        if v is None or v.is_param or v.is_global or not v.dims or v.address_space not in (None, "thread") \
                or v.type.kind == "pointer":
            continue
        n = v.dims[0]
        if isinstance(n, int) and 0 < n <= _FULL_UNROLL_TRIPS:
            return n
    return None


def _loop_record(model, f, loop):
    """The model's :class:`Loop` for a ``for`` statement of ``f``."""
    index = model.__dict__.get("_sl201_loop_records")
    if index is None:
        index = model.__dict__["_sl201_loop_records"] = {lp.node.id: lp for g in model.functions for lp in g.loops}
    return index.get(loop.id)


_GEOMETRIC_OPS = {"*=": "*", "<<=": "<<", ">>=": ">>", "/=": "/"}


def _geometric_step(model, write, v) -> str | None:
    """The operator when ``write`` scales ``v`` by a constant (``v *= 2``, ``v >>= 1``, ``v = v / 2``)."""
    if write.type != "assignment_expression":
        return None
    op = model.text(write.child_by_field_name("operator"))
    right = write.child_by_field_name("right")
    if right is None:
        return None
    if op in _GEOMETRIC_OPS:
        return _GEOMETRIC_OPS[op] if model.is_constant(right) else None
    r = unparen(right)
    if op == "=" and r.type == "binary_expression":
        rop = model.text(r.child_by_field_name("operator"))
        a, b = r.child_by_field_name("left"), r.child_by_field_name("right")
        if rop in ("*", "<<", ">>", "/") and a is not None and b is not None and unparen(a).type == "identifier" \
                and model.resolve(unparen(a)) is v and model.is_constant(b):
            return rop
    return None


def _geometric(model, f, loop, lp) -> bool:
    """A loop whose counter (the variable its condition compares) changes only by constant
    scaling inside it (``for (s = n; s > 0; s >>= 1)``, ``while (s < n) { ...; s *= 2; }``)."""
    v = lp.var if lp is not None else None
    if v is None:
        cond = loop.child_by_field_name("condition")
        if cond is None:
            return False
        c = unparen(cond)
        if c.type == "condition_clause":
            c = unparen(c.child_by_field_name("value") or c)
        for side in (c.child_by_field_name("left"), c.child_by_field_name("right")) if c.type == "binary_expression" else ():
            if side is not None and unparen(side).type == "identifier":
                v = model.resolve(unparen(side))
                if v is not None and compared_with(model, c, v) is not None:
                    break
                v = None
        if v is None:
            return False
    writes = [w for w in model.direct_writes(v) if loop.start_byte <= w.start_byte < loop.end_byte]
    return bool(writes) and all(_geometric_step(model, w, v) is not None for w in writes)


def _geometric_trips(model, lp) -> int | None:
    """The trip count of a constant geometric ``for`` loop, by stepping it (at most 64 steps)."""
    if lp.start is None or lp.bound is None or lp.var is None:
        return None
    update = lp.node.child_by_field_name("update")
    op = _geometric_step(model, update, lp.var) if update is not None else None
    right = update.child_by_field_name("right") if op is not None else None
    if right is not None and model.text(update.child_by_field_name("operator")) == "=":
        right = unparen(right).child_by_field_name("right")
    k = model.const_value(right) if right is not None else None
    cond = unparen(lp.node.child_by_field_name("condition"))
    if not isinstance(k, int) or not isinstance(lp.start, int) or cond is None or cond.type != "binary_expression":
        return None
    cmp = model.text(cond.child_by_field_name("operator"))
    if unparen(cond.child_by_field_name("right")).type == "identifier" and \
            model.resolve(unparen(cond.child_by_field_name("right"))) is lp.var:
        cmp = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(cmp, cmp)
    tests = {"<": lambda x: x < lp.bound, "<=": lambda x: x <= lp.bound, ">": lambda x: x > lp.bound,
             ">=": lambda x: x >= lp.bound, "!=": lambda x: x != lp.bound}
    test = tests.get(cmp)
    if test is None:
        return None
    x, n = lp.start, 0
    while test(x):
        n += 1
        if n > 64:
            return None
        if op == "*":
            nxt = x * k
        elif op in ("<<", ">>"):
            nxt = x if not 0 <= k < 64 else (x << k if op == "<<" else x >> k)
        else:  # C division truncates towards zero
            nxt = x if k == 0 else (abs(x) // abs(k)) * (1 if (x >= 0) == (k > 0) else -1)
        if nxt == x:
            return None
        x = nxt
    return n


def _inside(model, region):
    """(loop nodes, call nodes) inside ``region`` (a loop, a function body or a lambda), cached."""
    cache = model.__dict__.setdefault("_sl201_inside", {})
    got = cache.get(region.id)
    if got is None:
        loops, calls = [], []
        stack = list(region.children)
        while stack:
            n = stack.pop()
            if n.type in _LOOP_TYPES:
                loops.append(n)
            elif n.type == "call_expression":
                calls.append(n)
            stack.extend(n.children)
        got = cache[region.id] = (loops, calls)
    return got


def _short(model, f, loop) -> bool:
    """A constant-trip loop of at most ``_SHORT_TRIPS`` known iterations: straight-line code once
    unrolled, not a loop doing work of its own."""
    kind, trips = _loop_facts(model, f, loop)
    return kind == "fixed" and trips is not None and trips <= _SHORT_TRIPS


def _work_loop(model, f, region, exclude: set, runtime_only: bool = False) -> bool:
    """Whether ``region`` holds a loop (other than those in ``exclude``: the ones that repeat the
    division) that is not short (:func:`_short`; with ``runtime_only``, one with a run-time trip
    count): its work runs next to the division in each iteration."""
    for lp in _inside(model, region)[0]:
        if lp.id in exclude:
            continue
        if runtime_only:
            if _loop_kind(model, f, lp) == "runtime":
                return True
        elif not _short(model, f, lp):
            return True
    return False


def _costly_call(model, f, region, via) -> bool:
    """Whether ``region`` calls something that may cost more than an emulated division: anything
    but the language's built-in functions (math, conversions, loads, atomics, shuffles, barriers) and
    functions, lambdas and macros of the file without loops that call only such things. ``via`` (the
    call of the helper holding the division) does not count."""
    return any(c.id != (via.id if via is not None else -1) and not _cheap_call(model, f, c, 0)
               for c in _inside(model, region)[1])


_ATOMIC = re.compile(r"atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)\w*|atomic_fetch_\w+|atomic_exchange\w*"
                     r"|atomic_compare_exchange\w*")


def _global_atomic(model, region) -> bool:
    """Whether ``region`` makes an atomic read-modify-write on device (global) memory whose value
    it uses (``int pos = atomicAdd(&count[e], 1)``): the thread waits for a round trip to the L2
    cache (`atom.global`, hundreds of cycles, more under contention), which costs more than an
    emulated division. Its address must be based on a device buffer or a pointer parameter of a
    kernel (not shared/threadgroup memory, not a pointer the analysis cannot place). An atomic
    whose value is unused does not count: nothing waits for it (a scattered ``atomicAdd`` of a
    gradient is issued and left to the memory system)."""
    for call in _inside(model, region)[1]:
        if not _ATOMIC.fullmatch(model.callee_name(call) or ""):
            continue
        args = _args(model, call)
        parent = call.parent
        while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
            parent = parent.parent
        if not args or parent is None or parent.type == "expression_statement" \
                or (call.parent.type == "cast_expression" and "void" in model.text(call.parent.child_by_field_name("type") or call)):
            continue  # its value unused: nothing in the thread waits for it
        if _global_base(model, args[0], 0):
            return True
    return False


def _global_base(model, node, depth: int) -> bool:
    """Whether the address ``node`` (``&a[i]``, ``a + i``, ``a``) points into device (global)
    memory: ``a`` is a device buffer, a pointer parameter of a kernel, or a pointer parameter of a
    helper that every call in the file passes such an address (shared memory, a local pointer or
    anything else the analysis cannot place: no)."""
    n = unparen(node)
    while True:
            if n.type == "pointer_expression" or n.type == "unary_expression":
                n = unparen(n.child_by_field_name("argument") or n)
            elif n.type == "subscript_expression":
                n = unparen(n.child_by_field_name("argument") or n)
            elif n.type == "field_expression":
                n = unparen(n.child_by_field_name("argument") or n)
            elif n.type == "binary_expression" and model.text(n.child_by_field_name("operator")) == "+":
                n = unparen(n.child_by_field_name("left") or n)
            else:
                break
            if n.type == "identifier":
                break
    if n.type != "identifier":
        return False
    v = model.resolve(n)
    if v is None or v.address_space in ("threadgroup", "shared", "thread", "constant"):
        return False
    if v.address_space == "device":
        return True
    g = v.function
    if not v.is_param or g is None or v.type.kind != "pointer" or model.language != "cuda" or depth > 3:
        return False
    if g.is_entry or g.kind == "kernel":
        return True
    calls = calls_to(model, g.name)
    index = g.params.index(v) if v in g.params else -1
    if not calls or index < 0:
        return False
    for call in calls:
        args = _args(model, call)
        if index >= len(args) or not _global_base(model, args[index], depth + 1):
            return False
    return True


#: Built-in functions beyond the model's register-only ones that cost about as much as a load or
#: an atomic, not more than an emulated division: loads with cache hints, atomics, texture and image
#: access, subgroup operations, compiler intrinsics.
_BUILTIN_CALL = re.compile(
    r"__ld(?:g|ca|cs|cg|lu|cv)|__st(?:wb|cg|cs|wt)|atomic\w*|tex[123]D\w*|tex1Dfetch|surf\w+|__builtin_\w+"
    r"|image\w+|texture\w*|texelFetch\w*|subgroup\w+|memoryBarrier\w*|as_type|__float2\w+|__half\w+")
#: Methods of built-in objects (Metal textures, CUDA cooperative groups) that are as cheap.
_BUILTIN_METHODS = frozenset(
    "read write sample gather get_width get_height get_depth get_array_size get_num_mip_levels "
    "thread_rank size num_threads meta_group_rank meta_group_size shfl shfl_down shfl_up shfl_xor sync "
    "ballot any all load store fetch_add exchange".split())


def _cheap_call(model, f, call, depth: int) -> bool:
    """A call that costs no more than about an emulated division: a built-in (math, conversions,
    loads, atomics, shuffles, barriers, texture access), a type constructor, or a function, named
    lambda or function-like macro of the file with no loop and only such calls (three levels
    deep). Anything else (a header's function, a functor, a method) may do any amount of work."""
    from shaderlint.model import builtins as B  # noqa: PLC0415
    name = model.callee_name(call)
    fn = call.child_by_field_name("function")
    if not name or fn is None:
        return False
    if fn.type == "field_expression":
        return name in _BUILTIN_METHODS
    lang = model.language
    if B.register_only(lang, name) or name in B.GENERIC_MATH or name in B.VALUE_ARG or name in B.FIXED_RESULT \
            or name in B.SCALAR_RESULT or name in B.BARRIERS.get(lang, {}) or _BUILTIN_CALL.fullmatch(name) \
            or parse_type_name(name).is_arithmetic or name in model.structs or name in model.typedefs \
            or name in f.template_params \
            or re.search(rb"\btypename\s*$", model.source.data[max(0, fn.start_byte - 40):fn.start_byte]):
        return True  # (a template parameter or a dependent type: `T(x)`, `typename K::value_t(x)`)
    if fn.type == "identifier" and name.isupper() and len(_args(model, call)) == 1 and model.resolve(fn) is None \
            and name not in model.function_by_name and _macro_body(model, name) is None:
        return True  # `D_TYPE(x)`: a header's (or the build's) type macro used as a conversion
    if depth > 2:
        return False
    cache = model.__dict__.setdefault("_sl201_cheap", {})
    g = model.function_by_name.get(name)
    if g is not None and g.body is not None:
        key = ("f", id(g))
        if key not in cache:
            cache[key] = False  # recursion
            cache[key] = not _work_loop(model, g, g.body, set()) and not any(
                not _cheap_call(model, g, c, depth + 1) for c in _inside(model, g.body)[1])
        return cache[key]
    if fn.type == "identifier":
        v = model.resolve(fn)
        if v is not None:
            lam = v.init
            if lam is None or lam.type != "lambda_expression":
                return False
            key = ("l", lam.id)
            if key not in cache:
                cache[key] = False
                cache[key] = not _work_loop(model, f, lam, set()) and not any(
                    not _cheap_call(model, f, c, depth + 1) for c in _inside(model, lam)[1])
            return cache[key]
    body = _macro_body(model, name)
    return body is not None and re.search(rb"\b(?:for|while|do)\b", body) is None


def _macro_body(model, name: str) -> bytes | None:
    """The body of the function-like macro ``name`` the file ``#define``s (None if it does not)."""
    cache = model.__dict__.setdefault("_sl201_macros", {})
    if name not in cache:
        data = model.source.data
        mt = re.search(rb"^[ \t]*#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"\(((?:[^\n]*\\\r?\n)*[^\n]*)",
                       data, re.M)
        cache[name] = mt.group(1) if mt else None
    return cache[name]


def _ancestors(top, node) -> list:
    """``node`` and its ancestors below ``top``, outermost first (``[node]`` alone if ``top`` does not
    hold it). Found downwards from ``top``: ``.parent`` costs time proportional to a node's depth, and
    walking up with it was quadratic in the nesting depth (10,000 nested blocks: 4.8 s of CPU)."""
    chain = []
    c = top
    while c.id != node.id:
        c = c.child_with_descendant(node)
        if c is None:
            return [node]
        chain.append(c)
    return chain


def _lambda_repeated(model, f, lam, node, depth: int) -> bool:
    """Whether ``f`` calls the lambda ``lam`` holding the division ``node`` (``auto fetch = [&](int k)
    {...};``) where a loop repeats it: with an argument the loop changes, or in a loop that changes
    what the division reads (a captured variable, a load). A lambda not bound to a name is passed
    somewhere the analysis cannot follow: not reported."""
    decl = lam.parent
    name = decl.child_by_field_name("declarator") if decl is not None and decl.type == "init_declarator" else None
    if name is None or name.type != "identifier" or depth > 2:
        return False
    for call in calls_to(model, model.text(name)):
        if not (lam.end_byte <= call.start_byte < f.node.end_byte):
            continue
        if _repeated(model, f, node, depth + 1, at=call, via=call) \
                or any(_repeated(model, f, a, depth + 1, via=call) for a in _args(model, call)):
            return True
    return False


def _args(model, call) -> list:
    return [a for a in model.call_args(call) if a.type != "comment"]


def _varies_in(model, node, loop, depth: int = 0) -> bool:
    """Whether a value in ``node`` may change from one iteration of ``loop`` to the next: a load, a
    call (but ``min``/``max``/conversions of values that do not change), a name the analysis
    cannot follow, a variable written in the loop (or whose address is taken there, or that a
    call there passes to a reference or ``out`` parameter), or one declared in the loop with an
    initializer that may change. A call to a function the file does not define is taken to pass
    a bare variable by value (CUDA intrinsics, math functions)."""
    start, end = loop.start_byte, loop.end_byte
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            name = model.callee_name(n)
            fn = n.child_by_field_name("function")
            if fn is None or fn.type == "field_expression" or not (
                    name in _PURE_CALLS or parse_type_name(name).is_arithmetic):
                return True
            stack.extend(model.call_args(n))
            continue
        if n.type in ("subscript_expression", "pointer_expression"):
            return True
        stack.extend(n.named_children)
        if n.type != "identifier" or (n.parent is not None and n.parent.type == "field_expression"
                                      and n.parent.child_by_field_name("field") == n):
            continue
        v = model.resolve(n)
        if v is None:
            if not (model.is_constant(n) or model._builtin(model.text(n)) is not None):
                return True
            continue
        if any(start <= w.start_byte < end for w in model.writes_into(v)) or _address_taken(model, v, loop) \
                or id(v) in _passed_out(model, loop):
            return True
        if start <= v.node.start_byte < end and (v.init is None or depth > 4 or _varies_in(model, v.init, loop, depth + 1)):
            return True
    return False


def _address_taken(model, v, loop) -> bool:
    """Whether ``&v`` appears in ``loop`` (not ``x & v`` or ``c && v``): a call may write it there."""
    if model.language == "glsl":
        return False
    # Once per loop and variable: every division in a loop asks it, and the search reads the whole loop.
    cache = model.__dict__.setdefault("_sl201_address_taken", {})
    key = (loop.id, id(v))
    got = cache.get(key)
    if got is None:
        text = model.source.data[loop.start_byte:loop.end_byte]
        got = cache[key] = any(not model.source.in_comment_or_string(loop.start_byte + m.end() - 1) for m in
                               re.finditer(rb"(?:^|[^\w)\]&\s])\s*&\s*" + re.escape(v.name.encode()) + rb"\b", text))
    return got


def _passed_out(model, loop) -> set[int]:
    """Ids of the variables that calls in ``loop`` pass, by name, to a function of the file whose
    parameter is a non-``const`` reference (C++) or ``out``/``inout`` (GLSL): the call may write them."""
    from shaderlint.model.memory import is_reference  # noqa: PLC0415
    cache = model.__dict__.setdefault("_sl201_passed_out", {})
    got = cache.get(loop.id)
    if got is None:
        got = cache[loop.id] = set()
        for call in nodes_in(model, "call", loop.start_byte, loop.end_byte):
            g = model.function_by_name.get(model.callee_name(call))
            if g is None:
                continue
            for a, param in zip(_args(model, call), g.params):
                writable_ref = is_reference(param) and not any(
                    c.type == "type_qualifier" and model.text(c) == "const" for c in param.decl.children)
                if unparen(a).type == "identifier" and (writable_ref or param.address_space in ("out", "inout")):
                    v = model.resolve(unparen(a))
                    if v is not None:
                        got.add(id(v))
    return got


#: Operand node types whose value two evaluations in one block share (no call, load or write).
_PURE = frozenset({"identifier", "number_literal", "field_expression", "parenthesized_expression",
                   "binary_expression", "unary_expression", "cast_expression", "type_descriptor",
                   "primitive_type", "type_identifier", "field_identifier", "sized_type_specifier",
                   "true", "false", "char_literal"})


def _pure(model, node, loads: bool = False) -> bool:
    """Whether ``node`` has no side effect and no call (with ``loads``, array element reads
    ``a[i]`` count as pure: the caller checks that nothing stores between two of them)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not n.is_named:
            continue  # an operator or a parenthesis
        if loads and n.type in ("subscript_expression", "subscript_argument_list"):
            stack.extend(n.children)
            continue
        if n.type not in _PURE or (n.type == "field_expression" and model.text(n.child(1) or n) == "->"):
            return False
        if n.type == "unary_expression" and model.text(n.child(0) or n) in ("*", "&"):
            return False
        stack.extend(n.children if n.type != "field_expression" else n.children[:1])
    return True


def _canonical(model, node) -> str:
    """``node``'s text without blanks and redundant parentheses: ``(a / b) % c`` and ``a / b % c``
    name the same sub-expression ``a / b``."""
    n = unparen(node)
    if n.type == "binary_expression":
        left, right, op = n.child_by_field_name("left"), n.child_by_field_name("right"), n.child_by_field_name("operator")
        if left is not None and right is not None and op is not None:
            return f"({_canonical(model, left)}{model.text(op)}{_canonical(model, right)})"
    return "".join(model.text(n).split())


def _operands(model, node) -> tuple[str, str] | None:
    """The canonical texts of a division's dividend and divisor (side-effect free, array reads
    allowed), or None."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if node.type not in ("binary_expression", "assignment_expression") or left is None or right is None \
            or not _pure(model, left, loads=True) or not _pure(model, right, loads=True):
        return None
    return _canonical(model, left), _canonical(model, right)


def _loads(node) -> bool:
    return bool(descendants(node, "subscript_expression"))


def _stores_between(model, start: int, end: int) -> bool:
    """Whether memory may be written between ``start`` and ``end``: a store through an array
    element, a pointer or a member, or a call (but ``min``/``max``/conversions)."""
    for call in nodes_in(model, "call", start, end):
        name = model.callee_name(call)
        if not (name in _PURE_CALLS or parse_type_name(name).is_arithmetic):
            return True
    node = model.root.descendant_for_byte_range(start, end)
    while node is not None and not (node.start_byte <= start and end <= node.end_byte):
        node = node.parent
    for n in (node,) if node is not None else ():
        for w in list(descendants(n, "assignment_expression")) + list(descendants(n, "update_expression")):
            if not (start <= w.start_byte < end):
                continue
            target = unparen(w.child_by_field_name("left") or w.child_by_field_name("argument") or w)
            if target.type != "identifier":
                return True
    return False


#: Statements that run as a whole once reached (a division in them runs whenever the statement does,
#: unless it sits in a conditional part of an expression).
_STRAIGHT = ("declaration", "expression_statement", "return_statement")


def _unconditional_in(node, stmt) -> bool:
    """Whether evaluating ``stmt`` always evaluates ``node`` (not in a ``?:`` branch or on the right
    of ``&&``/``||``; in an ``if``, only its condition)."""
    child, p = node, node.parent
    while p is not None and child.id != stmt.id:
        if p.type == "conditional_expression" and child != p.child_by_field_name("condition"):
            return False
        if p.type == "binary_expression" and child == p.child_by_field_name("right"):
            op = p.child_by_field_name("operator")
            if op is not None and op.type in ("&&", "||", "and", "or"):
                return False
        if p.type in ("if_statement", "switch_statement") and p.id == stmt.id:
            return child == p.child_by_field_name("condition")
        if p.type.endswith("_statement") and p.id != stmt.id or p.type == "lambda_expression":
            return False
        child, p = p, p.parent
    return child.id == stmt.id and (stmt.type in _STRAIGHT or stmt.type in ("if_statement", "switch_statement"))


def _statement_of(node):
    """(the statement holding ``node`` directly inside a block, that block)."""
    n = node
    while n.parent is not None and n.parent.type not in ("compound_statement", "translation_unit"):
        n = n.parent
    return n, n.parent


def _same_iteration(first, second, block) -> bool:
    """Whether ``second`` lies in ``block`` with no loop or lambda between them (it runs in the same
    iteration as ``block``'s statements, if at all)."""
    p = second.parent
    while p is not None and p.id != block.id:
        if p.type in _LOOP_TYPES or p.type == "lambda_expression":
            return False
        p = p.parent
    return p is not None


def _same_divisions(model, sites) -> dict[int, int]:
    """Index -> index of an earlier division of the same function that computes the same quotient:
    the same operands (after blanks and parentheses), side-effect free, with the earlier one always
    evaluated before the later in the same loop iteration (in a statement of a block that holds the
    later, not conditionally) and no write to their variables between them. ``a / b`` again is the
    same value (common subexpression), and ``a % b`` after ``a / b`` (or the reverse) is derived from
    the quotient (`nvcc -ptx`: one ``div``, then ``mul.lo`` and ``sub``): one emulated division. Each
    maps to the first of its group. ``/=`` and ``%=`` write their left side and are never merged."""
    keyed: dict[tuple, list[int]] = {}
    for i, (f, node) in enumerate(sites):
        op = node.child_by_field_name("operator")
        if op is None or model.text(op) not in ("/", "%", "/=", "%="):
            continue
        ops = _operands(model, node)
        if ops is not None:
            keyed.setdefault((id(f), ops), []).append(i)
    out: dict[int, int] = {}
    for members in keyed.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: sites[i][1].start_byte)
        for k, j in enumerate(members):
            later = sites[j][1]
            for i in reversed(members[:k]):
                first = sites[i][1]
                if first.type != "binary_expression":
                    continue  # `x /= d` writes x: only the later of two
                stmt, block = _statement_of(first)
                if block is None or block.type != "compound_statement" or later.start_byte < first.end_byte:
                    continue
                if not ((_unconditional_in(first, stmt) and _same_iteration(first, later, block))
                        or _statement_of(later)[1] == block):
                    continue  # (two statements of one block: a guard such as `if (x % s) continue;` before `x / s`)
                if _written_between(model, first, first.end_byte, later.start_byte) \
                        or (_loads(first) and _stores_between(model, first.end_byte, later.start_byte)):
                    continue
                out[j] = out.get(i, i)  # the group's first
                break
    return out


def _written_between(model, node, start: int, end: int) -> bool:
    """Whether a variable named in ``node``'s operands may be written between ``start`` and ``end``:
    assigned, its address taken (``&v``), or passed by name to a call that may take it by reference
    (anything but a function of the file with a by-value parameter there and the math built-ins)."""
    from shaderlint.model.memory import is_reference  # noqa: PLC0415
    data = model.source.data[start:end]
    calls = None
    for n in descendants(node, "identifier"):
        v = model.resolve(n)
        if v is None:
            if n.parent is None or n.parent.type != "field_expression":
                return True  # a name the analysis cannot follow: assume it may change
            continue
        if any(start <= w.start_byte < end for w in model.direct_writes(v)):
            return True
        if model.language != "glsl" and re.search(rb"&\s*" + re.escape(v.name.encode()) + rb"\b", data):
            return True
        if calls is None:
            calls = [c for c in nodes_in(model, "call", start, end)]
        for call in calls:
            for k, a in enumerate(_args(model, call)):
                if unparen(a).type != "identifier" or model.resolve(unparen(a)) is not v:
                    continue
                name = model.callee_name(call)
                g = model.function_by_name.get(name)
                if g is not None and k < len(g.params) and not is_reference(g.params[k]) \
                        and g.params[k].address_space not in ("out", "inout"):
                    continue
                if g is None and (name in _PURE_CALLS or parse_type_name(name).is_arithmetic):
                    continue
                return True
    return False


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
    for n in descendants(node, "identifier"):
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
    return True


# ---- a helper's parameter that every call in the file passes the same constant -----------------------
#: Files included by others (their helpers may be called there with anything): not a whole program.
_HEADER_SUFFIXES = frozenset((".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl", ".glsl", ".ipp", ".tcc"))
_INTERNAL = re.compile(rb"\b(?:static|inline|__inline__|__forceinline__|always_inline)\b")
_NOINLINE = re.compile(rb"\b(?:__noinline__|noinline)\b")


def _constant_from_callers(model, f, node) -> bool:
    """True when the denominator is built from constants and parameters of ``f`` that every call of
    ``f`` in the file passes a constant: the same value (or, for a bare parameter, powers of two
    only); see :func:`_param_from_callers`."""
    n = unparen(node)
    if n.type == "identifier":
        v = model.resolve(n)
        return v is not None and _param_from_callers(model, f, v) is not None
    if n.type in ("binary_expression", "unary_expression", "cast_expression", "parenthesized_expression"):
        kids = [c for c in n.named_children if c.type not in ("type_descriptor", "comment")]
        found = False
        for c in kids:
            if model.is_constant(c):
                continue
            c = unparen(c)
            v = model.resolve(c) if c.type == "identifier" else None
            if v is None or _param_from_callers(model, f, v) != "same":
                return False
            found = True
        return found
    return False


def _param_from_callers(model, f, v) -> str | None:
    """``"same"`` when every call of helper ``f`` in the file passes parameter ``v`` the same
    constant, ``"cheap"`` when they pass powers of two (different ones), else None. Only for a
    whole program (not a header; GLSL: a file with ``main``), a helper no other file can call
    (CUDA/Metal: ``static``, ``inline``/``__forceinline__``, a template or in an anonymous
    namespace; not ``__noinline__``), one definition of the name, named only as the callee of
    calls (never as a value), with ``v`` a by-value parameter it never writes or takes the
    address of. A constant of unknown value (a specialization constant, a header macro) counts
    when every call spells it the same way with file-scope names only."""
    cache = model.__dict__.setdefault("_sl201_callers", {})
    if id(v) not in cache:
        cache[id(v)] = _param_from_callers_uncached(model, f, v)
    return cache[id(v)]


def _param_from_callers_uncached(model, f, v) -> str | None:
    from shaderlint.model.memory import is_reference  # noqa: PLC0415
    if not v.is_param or v.function is not f or f.is_entry or f.body is None or v.dims or is_reference(v):
        return None
    if v.type.kind == "pointer" or v.address_space in ("out", "inout"):
        return None
    if PurePath(model.source.path).suffix.lower() in _HEADER_SUFFIXES:
        return None
    data = model.source.data
    head = data[(f.outer or f.node).start_byte:f.name_node.start_byte]
    if _NOINLINE.search(head):
        return None
    if model.language == "glsl":
        if "main" not in model.function_by_name:
            return None
    elif f.outer is None and not _INTERNAL.search(head) and not _in_anonymous_namespace(f.node):
        return None
    if sum(1 for g in model.functions if g.name == f.name) != 1:
        return None
    if model.writes_into(v):
        return None
    body = data[f.body.start_byte:f.body.end_byte]
    if model.language != "glsl" and re.search(rb"&\s*" + re.escape(v.name.encode()) + rb"\b", body):
        return None  # `&v` (or a look-alike `x & v`): it may be written through a pointer
    index = f.params.index(v)
    calls = _calls_of(model, f)
    if not calls:
        return None
    values, texts = [], set()
    for call in calls:
        args = [a for a in model.call_args(call) if a.type != "comment"]
        if len(args) > len(f.params) or index >= len(args):
            return None  # variadic, or the parameter's default value: not read here
        a = args[index]
        if not model.is_constant(a):
            return None
        value = model.const_value(a)
        if value is None and not _file_scope_names(model, a):
            return None  # a constant of the caller (a template parameter): not one value for all calls
        values.append(value)
        texts.add(" ".join(model.text(a).split()))
    if all(x is not None for x in values):
        if len(set(values)) == 1:
            return "same"
        if all(isinstance(x, int) and x > 0 and x & (x - 1) == 0 for x in values):
            return "cheap"
        return None
    return "same" if len(texts) == 1 and all(x is None for x in values) else None


def _calls_of(model, f) -> list | None:
    """Every call of ``f`` in the file, or None when its name also appears other than as the
    callee of a call or its own definition's name (a function pointer, a macro body)."""
    data = model.source.data
    name = f.name.encode()
    calls = []
    for mt in re.finditer(rb"\b" + re.escape(name) + rb"\b", data):
        pos = mt.start()
        if model.source.in_comment_or_string(pos):
            continue
        if pos == f.name_node.start_byte:
            continue
        n = model.root.descendant_for_byte_range(pos, mt.end())
        if n is None or n.type != "identifier" or n.start_byte != pos:
            return None
        child, p = n, n.parent
        if p is not None and p.type == "template_function" and child == p.child_by_field_name("name"):
            child, p = p, p.parent
        while p is not None and p.type == "qualified_identifier" and child == p.child_by_field_name("name"):
            child, p = p, p.parent
        if p is None or p.type != "call_expression" or child != p.child_by_field_name("function"):
            return None
        calls.append(p)
    return calls


def _file_scope_names(model, node) -> bool:
    """True when every name in ``node`` is file-scope (a global, a macro, an enumerator, a built-in)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is not None and not v.is_global:
                return False
        stack.extend(n.named_children)
    return True


def _in_anonymous_namespace(node) -> bool:
    p = node.parent
    while p is not None:
        if p.type == "namespace_definition" and p.child_by_field_name("name") is None:
            return True
        p = p.parent
    return False
