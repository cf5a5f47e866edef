"""SL101 dynamic-stack-array

## What it does
Flags a thread-private (stack) array that is not a compile-time constant and is
indexed by a value the compiler cannot resolve: not a literal or constant, and
not the counter of a constant-trip loop that the compiler will unroll (or of a
loop whose start, bound and step come from such counters and constants, as in a
butterfly `for (s = 32; s < N; s *= 2) for (k = 0; k < s / 32; k++)`: every
unrolled copy of the outer loop gives it a constant trip count). A constant bound
joined with runtime tests by `&&` (`for (row = 0; row < NR && first + row < n;
++row)`) still bounds the trip count: the loop unrolls completely with an exit
test in each copy, and its counter is static. A name the file
does not declare but that reads as a constant (a member of a type such as
`F::kLanes`, a variable template `kElems<T>`, an upper-case or `kName` macro or
constant from a header) is taken for a constant of unknown value, not for a
run-time value, and so is any name that sizes an array (`float v[TILE];`: C++
and GLSL have no variable-length arrays); so is an entry of a table of constants
that is never written (`vals[order[i]]` with `int order[8] = {0, 2, ...}`). A
macro's body is read as the preprocessor reads it, without its comments
(`#define ROWS 4 // rows per thread` is 4). A loop that declares
several variables (`for (ldg = 0, col = start; ldg < 4; ++ldg, col += 32)`)
counts with the one its condition tests (with `&&`, the one its update steps),
and its other variables are static too when they start static and every
iteration steps them by a constant, in the update or in straight-line statements
of the body (vLLM's hadacore: `for (i = 0, rem = N - l * 8; i < 2 && rem > 0;
i++) { ...; rem -= 4; }`). A constant declared in each branch of an
`#if`/`#else` (`#ifdef FAST_FP16 constexpr int cs = 4; #else constexpr int cs = 2; #endif`)
stays visible after the `#endif`, as only one branch is compiled. A parameter of a
lambda bound to a name in the kernel is static when every call of the lambda passes
a static value (`auto dot = [&](int g) { return sh[g]; }; ... dot(0) + dot(1)`); a
lambda handed to another function is not followed, and its index is not reported.
In GLSL, `x.length()` of a local array, vector, matrix or cooperative matrix is fixed
when the pipeline is compiled, so a loop up to it unrolls (a buffer's run-time-sized
array `data.length()` is not). Only the array's own dimensions are
indices into it: `bufs[i][idx]` on `float* bufs[4]` indexes the memory the
element points at. It is reported once, at the array's declaration, with each
dynamic index as a related location.

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
Estimated by the register model (`docs/register-model.md`): the kernel as
written is compared with the same kernel where the array is indexed statically
and kept in registers. `stack_bytes` is negative (the array's element count ×
element size leaves the stack); `registers` is the balance of the elements
becoming live values (more registers) and the local-memory addressing and copy
loops going away (fewer: ptxas gives kernels with stack arrays about 16 more
registers on the calibration corpus), so it can have either sign.
`occupancy_after` shows whether the change costs residency on the active target;
an array too large for the register budget shows up as a spill instead.

## Default
Opt-in (`--extend-select SL101`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 213 findings, every one judged by reading
the code (CUDA cases settled with ptxas on extracts), were 46 true (DeepSpeed's
layer-norm and softmax kernels with 128- to 1,280-byte stack frames, top-k
routing writes at a data-dependent index, a k-nearest list of run-time size),
99 false, 68 debatable (32 %). The false ones: loop bounds that are constants
the analysis does not follow (a `static constexpr` member or template-derived
bound used inside a capturing lambda, CuTe's `size(fragment)`, a constant from
another header, a second loop counter copying the first, a counter stepped in
an unrolled body), a single dynamic read or write outside loops that ptxas
turns into selects (0 bytes of stack frame), `min(CONST, n)` bounds that NVVM
unrolls fully, template arguments that make the array four elements or fewer,
tiny coordinate arrays in Vulkan shaders that Mesa lowers to selects, values
fixed at the hot call site or by a specialization constant, and kernels the
package never instantiates. The debatable ones: scalar geometry code whose
arrays of hundreds of bytes have no register alternative, and arrays that
reach the stack only for some template instances. It
becomes a default rule again when most of its findings are worth acting on.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture shows the array in
`.local .align 16 .b8 __local_depot0[64]` with `ld.local.f32`/`st.local.f32`
at the dynamic index; `-Xptxas -v` reports "64 bytes stack frame" for a
16-float histogram updated inside a runtime loop. The unrolled negative
(`acc[i]` in `for (int i = 0; i < 8; ++i)`) compiles to registers only
("0 bytes stack frame", no `__local_depot`).

On CUDA, an array of at most four 16- or 32-bit elements (scalars or vectors of
them) is not reported: ptxas keeps it in registers and reads and writes it with
selects, with 0 bytes of stack frame for data-dependent reads, writes and
read-modify-writes, once or in a run-time loop (`-Xptxas -v`, sm_80 and sm_90;
five or six elements already reach the stack for some element types, and
`double` or `char` arrays of three do). Such selects cost 1.06-1.3× on an
H100 (`shared/data/h100-pitfall-costs.md`), against 20-33× for an array that
really lands in local memory. Larger arrays accessed at a dynamic index only a
few times outside loops are often also turned into selects by ptxas (0 bytes of
stack for up to 32 floats in the same probes); the rule still reports them,
since Apple's and other compilers do not, and the cost of the selects grows with
the array.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.estimate import whatif
from shaderlint.estimate.static import is_constant_array as _constant_array
from shaderlint.estimate.static import is_thread_private as _thread_private
from shaderlint.estimate.static import static_index as _static_index
from shaderlint.estimate.static import subscript_index as _index
from shaderlint.model.expr import descendants, unparen
from shaderlint.rules.base import Rule, RuleContext


class DynamicStackArray(Rule):
    code = "SL101"
    name = "dynamic-stack-array"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    default_on = False
    summary = "thread-private array indexed by a value the compiler cannot resolve"

    @classmethod
    def what_if(cls, model, function, finding, target):
        var = whatif.declared_at(function, finding.start)
        return whatif.promote_array(var) if var is not None else None

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
                # only the array's own dimensions: `tmps[i][idx]` on `P* tmps[N]` indexes the memory
                # the element points at, not the array (vLLM custom_all_reduce.cuh)
                while p is not None and p.type == "subscript_expression" and p.child_by_field_name("argument") == s \
                        and len(idx_nodes) < max(1, len(v.dims)):
                    idx_nodes.append(_index(p))
                    s, p = p, p.parent
                for idx in idx_nodes:
                    if idx is not None and not _static(model, f, idx):
                        uses.setdefault(id(v), []).append(idx)
            for key, idxs in uses.items():
                v = wanted[key]
                el = v.type
                while el.kind == "array" and el.pointee is not None:
                    el = el.pointee
                count = 1
                for d in v.dims:
                    count = count * d if d is not None and count is not None else None
                if model.language == "cuda" and _selects_in_ptxas(el, count):
                    continue
                size = f"{count} × {el.name}" if count is not None and 0 < count < 1 << 62 and el.is_known else "array"
                first = model.text(idxs[0])
                related = tuple(Related(i.start_byte, i.end_byte, f"dynamic index '{model.text(i)}'") for i in idxs)
                yield Finding(
                    v.node.start_byte, v.node.end_byte,
                    f"thread-private array '{v.name}' ({size}) is indexed by '{first}', which the compiler cannot "
                    f"resolve; it will be placed in stack memory instead of registers",
                    kernel=f.name, related=related,
                )


def _selects_in_ptxas(el, count: int | None) -> bool:
    """ptxas keeps a CUDA array of at most four 16- or 32-bit elements (scalars or vectors of them)
    in registers whatever its indices, reading and writing it with selects: 0 bytes of stack frame
    for reads, writes and read-modify-writes at a data-dependent index, once or in a run-time loop
    (`-Xptxas -v`, sm_80 and sm_90; five or six elements already spill for some element types, and
    `double` or `char` arrays of three do). Such selects cost 1.06-1.3x on an H100, not the 20-33x of
    local memory."""
    return count is not None and 0 < count <= 4 and el.kind in ("int", "uint", "float") and el.bits in (16, 32)


_PASS_THROUGH = ("parenthesized_expression", "binary_expression", "unary_expression", "cast_expression",
                 "conditional_expression")


def _static(model, f, node, depth: int = 0) -> bool:
    """:func:`static_index`, plus the parameters of a lambda defined in the kernel (which the model
    does not declare): a lambda is inlined at each call, so its parameter is static when every call
    passes a static value (vLLM octave_decode: ``auto dot = [&](int g, int e) { return Sh[g][e]; }``
    called as ``dot(0, e)`` in an unrolled loop)."""
    if _static_index(model, f, node, 0):
        return True
    if depth > 6:
        return False
    node = unparen(node)
    if node.type == "identifier":
        return model.resolve(node) is None and _static_lambda_param(model, f, node, depth)
    if node.type in _PASS_THROUGH:
        kids = [c for c in node.named_children if c.type not in ("type_descriptor", "comment")]
        return bool(kids) and all(_static(model, f, c, depth + 1) for c in kids)
    return False


def _static_lambda_param(model, f, ident, depth: int) -> bool:
    """``ident`` names a parameter of an enclosing lambda and every call of that lambda in ``f``
    passes a static argument for it. A lambda that is not bound to a name (passed to a function)
    is not followed: its arguments are unknown, and an unknown index is not reported."""
    name = model.text(ident)
    lam = ident.parent
    while lam is not None and lam is not f.body:
        if lam.type == "lambda_expression":
            decl = lam.child_by_field_name("declarator")
            params = decl.child_by_field_name("parameters") if decl is not None else None
            names = []
            for p in (params.named_children if params is not None else ()):
                d = p.child_by_field_name("declarator")
                while d is not None and d.type != "identifier":
                    d = d.child_by_field_name("declarator")
                names.append(model.text(d) if d is not None else None)
            if name in names:
                return _static_calls(model, f, lam, names.index(name), depth)
        lam = lam.parent
    return False


def _static_calls(model, f, lam, position: int, depth: int) -> bool:
    holder = lam.parent
    if holder is None or holder.type != "init_declarator":
        return True  # not bound to a name: cannot tell
    target = holder.child_by_field_name("declarator")
    if target is None or target.type != "identifier":
        return True
    var = model.resolve(target)
    for call in descendants(f.body, "call_expression"):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "identifier" or model.text(fn) != model.text(target) \
                or model.resolve(fn) is not var:
            continue
        args = [a for a in model.call_args(call) if a.type != "comment"]
        if position < len(args) and not _static(model, f, args[position], depth + 1):
            return False
    return True
