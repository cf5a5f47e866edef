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
that is never written (`vals[order[i]]` with `int order[8] = {0, 2, ...}`), and
a function-like macro of static arguments whose body uses only its parameters
(`#define MIN(a, b) ((a) < (b) ? (a) : (b))`), or an upper-case one the file
does not define (`CEIL_DIV(K, 8)` from a header). A
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

Tables of constants follow what each compiler does with them. In Metal and
GLSL, a private array initialized from constants and never written after (not
stored into, not passed to a call or bound to a pointer), `const` or not, is not
reported: Apple's and the drivers' LLVM-based compilers replace the private copy
of a constant by the constant itself, and Mesa's `nir_opt_large_constants` moves
such arrays to constant data. NVVM does not: a CUDA table that is not `static`
(`const float w[8] = {...};`, `constexpr` too) is stored into a `.local` depot
at every launch, and ptxas keeps it there when it is indexed at run time, like
any other array (see Evidence); a `static const` table is a `.global` constant
and is not reported.

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
`occupancy_after` shows whether the change costs residency on the active target,
where the estimate's measured register range decides it (the occupancy is the
same at both ends of the range; null otherwise: an estimated "62.5 % -> 100 %"
whose range crosses an occupancy step is not claimed); an array too large for
the register budget shows up as a spill instead.

## Default
Opt-in (`--extend-select SL101`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 210 findings, every one judged by reading
the code (CUDA cases settled with ptxas on extracts), were 46 true (DeepSpeed's
layer-norm and softmax kernels with 128- to 1,280-byte stack frames, top-k
routing writes at a data-dependent index, a k-nearest list of run-time size),
96 false, 68 debatable (32 %). The false ones: loop bounds that are constants
the analysis does not follow (a `static constexpr` member or template-derived
bound used inside a capturing lambda, CuTe's `size(fragment)`, a constant from
another header, a second loop counter copying the first, a counter stepped in
an unrolled body), a single dynamic read or write outside loops that ptxas
turns into selects (0 bytes of stack frame; also a read inside a lambda called
in a loop, at an index the compiler hoists out of it), `min(CONST, n)` bounds that NVVM
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

On CUDA, the rule leaves alone the arrays ptxas keeps in registers, reading and
writing them with selects (`-Xptxas -v`, nvcc 13, sm_80 and sm_90, 0 bytes of
stack frame):

- at most four 16- or 32-bit elements (scalars or vectors of them), whatever
  the accesses: data-dependent reads, writes and read-modify-writes, once or in
  a run-time loop (five or six floats updated in a run-time loop take 24 bytes,
  and `double` or `char` arrays of three reach the stack);
- at most seven 32-bit scalars that are only read at run-time indices (no
  store, `++`, `&a[i]`, reference binding or by-reference call argument at a
  dynamic index), once, twice or in a run-time loop, whether a table of
  constants or loaded values (eight floats or integers read in a run-time loop:
  32 bytes);
- at most twelve 32-bit scalars read that way at most twice in a kernel,
  outside loops and lambdas (sixteen floats of constants read twice: 64 bytes;
  a `const float w[32]` read once: 128 bytes).

`tests/fixtures/cuda/sl101/constant_tables.cu` quotes the figure of each case.
Such selects cost 1.06-1.3× on an H100 (`shared/data/h100-pitfall-costs.md`),
against 20-33× for an array that really lands in local memory. Arrays of loaded
values read a few times outside loops are turned into selects by ptxas up to
larger sizes (0 bytes for 32 floats read twice in the same probes); the rule
still reports those above twelve elements, as the cost of the selects grows
with the array.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.estimate import whatif
from shaderlint.estimate.static import is_constant_array as _constant_array
from shaderlint.estimate.static import is_constant_table as _constant_table
from shaderlint.estimate.static import is_thread_private as _thread_private
from shaderlint.estimate.static import reassigned as _reassigned
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
            arrays = [v for v in f.vars if v.is_array and _thread_private(v) and not _constant_data(model, v)]
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
                if model.language == "cuda" and _selects_in_ptxas(model, f, el, count, idxs):
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


def _constant_data(model, v) -> bool:
    """An array no compiler of the file's language gives stack memory. In Metal and GLSL, a table
    initialized from constants and never written, ``const`` or not: their LLVM-based compilers
    replace the private copy of a constant by the constant itself (constant/uniform data). NVVM
    does not: a non-``static`` ``const``/``constexpr`` table, or one never written, is stored into
    a ``.local`` depot at every launch, and ptxas keeps it there when indexed at run time (``const
    float w[8]`` read in a run-time loop: 32 bytes of stack frame, the same as without ``const``;
    ``static const``: 0 bytes, a ``.global`` constant). On CUDA only ``static`` tables (not
    thread-private) and ``__constant__`` data are constant."""
    if model.language == "cuda":
        return False
    return _constant_array(model, v) or _constant_table(model, v)


def _selects_in_ptxas(model, f, el, count: int | None, idxs) -> bool:
    """ptxas keeps a CUDA array in registers and reads and writes it with selects (0 bytes of stack
    frame, `-Xptxas -v`, nvcc 13, sm_80 and sm_90) when it is

    - at most four 16- or 32-bit elements (scalars or vectors of them), whatever its indices: reads,
      writes and read-modify-writes at a data-dependent index, once or in a run-time loop (five or
      six elements updated in a run-time loop take 24 bytes, and `double` or `char` arrays of three
      reach the stack);
    - at most seven 32-bit scalars only *read* at run-time indices, once, twice or in a run-time
      loop, whether a table of constants (``const float w[7] = {...}``) or loaded values (eight
      floats or integers read in a run-time loop: 32 bytes, though some tables of eight integers
      get 0);
    - at most twelve 32-bit scalars read at run-time indices at most twice in a kernel, outside
      loops (16 floats of constants read twice: 64 bytes; 32 read once: 128 bytes).

    Such selects cost 1.06-1.3x on an H100, not the 20-33x of local memory."""
    if count is None or count <= 0:
        return False
    if count <= 4 and el.kind in ("int", "uint", "float") and el.bits in (16, 32):
        return True
    if count > 12 or el.kind not in ("int", "uint", "float") or el.bits != 32 or el.width != 1 \
            or any(_written_at(model, i) for i in idxs):
        return False
    return count <= 7 or (f.is_entry and len(idxs) <= 2 and not any(_repeated(f, i) for i in idxs))


def _repeated(f, node) -> bool:
    """``node`` may run more than once per thread: it is inside a loop or a lambda."""
    if any(lp.node.start_byte <= node.start_byte < lp.node.end_byte for lp in f.loops):
        return True
    p = node.parent
    while p is not None and p.id != f.body.id:
        if p.type in ("lambda_expression", "for_statement", "while_statement", "do_statement", "for_range_loop"):
            return True
        p = p.parent
    return False


def _written_at(model, idx) -> bool:
    """The element selected by the index ``idx`` may be written: the subscript (or a field of it)
    is the target of an assignment or ``++``/``--``, its address is taken (``&w[i]``), it binds a
    reference, or it is passed to a call that could take it by reference (a call the model cannot
    see into counts as one)."""
    n = idx.parent
    if n is not None and n.type == "subscript_argument_list":
        n = n.parent
    if n is None or n.type != "subscript_expression":
        return True
    # up through `a[i][j]`, `a[i].x` and parentheses to the expression that uses the element
    while n.parent is not None and (n.parent.type == "parenthesized_expression" or (
            n.parent.type in ("subscript_expression", "field_expression")
            and n.parent.child_by_field_name("argument") == n)):
        n = n.parent
    p = n.parent
    if p is None:
        return True
    t = p.type
    if t == "assignment_expression":
        return p.child_by_field_name("left") == n
    if t == "update_expression":
        return True
    if t == "pointer_expression":
        return model.text(p).lstrip().startswith("&")
    if t == "init_declarator":
        d = p.child_by_field_name("declarator")
        return d is not None and d.type == "reference_declarator"
    if t == "argument_list":
        call = p.parent
        if call is None or call.type != "call_expression":
            return True
        args = [a for a in p.named_children if a.type != "comment"]
        flow = model.write_flow
        name = model.callee_name(call)
        return flow is None or not name or n not in args or not flow.by_value(call, name, args.index(n))
    return False


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
        v = model.resolve(node)
        if v is None:
            return _static_lambda_param(model, f, node, depth)
        # a local computed once from the lambda's parameters (Marlin's `int k2 = k % 2;` in a lambda
        # called as `matmul(k)` from an unrolled loop): static when its initializer is
        return v.function is f and not v.is_param and v.init is not None and not _reassigned(model, v) \
            and _static(model, f, v.init, depth + 1)
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
