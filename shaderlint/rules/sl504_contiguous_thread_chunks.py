"""SL504 contiguous-thread-chunks

## What it does
Flags a `for` loop in which each thread walks its own contiguous chunk of the
data: the loop starts at `t * chunk` (directly or through locals such as
`begin = t * chunk`) and its condition stops one chunk later (`i < (t + 1) *
chunk`, `i < min(begin + chunk, n)`), or it counts `k` from 0 to `chunk` and
indexes `a[t * chunk + k]`. `t` is a thread index along x (`threadIdx.x`, the
global x index, `thread_position_in_grid`, `gl_GlobalInvocationID.x`,
`gl_LocalInvocationIndex`, …); indices along y/z (rows of a 2-D launch) are
left alone. The chunk must come from the problem size (`ceil(len / threads)`, a
parameter) or be a constant wider than one vector load: a span of at most 4
elements (`t * 4 + k`, the vector-load idiom) is not flagged, and neither is a
constant whose value the file does not give (`constexpr int DPL = D / 32;` with
`D` from a header, a template parameter). A chunk per warp or SIMD group (`t =
threadIdx.x / 32`, `/ WARP_SIZE`, `>> 5`, `simdgroup_index_in_threadgroup`,
`gl_SubgroupID`) is not a chunk per thread: the lanes of one warp share it; so
is one indexed by such a quotient taken modulo a uniform value (`out_ch = (gid /
ne0) % ne1`, a channel whose filter taps every thread of the run reads).
Only loops that walk device memory with their counter are flagged: a
thread's own run of threadgroup/shared memory or of a private array (a
merge-path sort's merge, a register-tiled GEMM micro-tile) is the algorithm,
not a coalescing problem, and memory the analysis cannot place (a local
pointer) is left alone. Reported at the `for` statement.

## Why is this bad?
Neighbouring threads of a SIMD group then read addresses `chunk` elements
apart, so a warp-wide load touches up to 32 different cache lines instead of
one: the accesses are not coalesced. And with `chunk = ceil(l / t)` for `t`
threads, only `ceil(l / chunk)` threads get any work: "961 and surprisingly
unused CUDA threads" shows that for t = 32 every length up to (t − 1)² = 961
can leave whole threads idle — 961 itself gives chunks of 31 and one idle
thread, l = 100 gives chunks of 4 and 7 idle threads; 496 of the lengths 1–961
idle at least one thread, and none above 961 does. The interleaved (strided)
loop spreads the tail over all threads and makes each load instruction read
consecutive addresses.

## Example
```cuda
int t = blockIdx.x * blockDim.x + threadIdx.x;
int threads = gridDim.x * blockDim.x;
int chunk = (len + threads - 1) / threads;
for (int i = t * chunk; i < (t + 1) * chunk && i < len; ++i)   // SL504
    s += data[i];
```

## Use instead
```cuda
for (int i = t; i < len; i += threads)
    s += data[i];
```

## Impact
Memory throughput, not registers or occupancy: no register or occupancy
change is estimated (the impact's deltas are null). Up to a
factor of the SIMD width in memory transactions for 4-byte elements when the
chunk is 32 elements or more.

## Default
Opt-in (`--extend-select SL504`). On the real-code corpus (`bench/realcode/`: 33
PyPI source distributions, none of them ours; judgements in
`bench/realcode/judged.tsv`), its 15 findings were 2 true, 6 false, 7 debatable:
chunks counted in elements that are one 64- or 128-bit load, chunk indices
shared by neighbouring lanes, algorithms that need contiguous segments (a
single-block reduce-then-scan), and per-thread state rows read once per kernel.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: in `chunked_sum` each thread's
start is `mul.lo.s32 %r27, %r2, %r1` (chunk × thread index) and the unrolled
body loads `[%rd9]`, `[%rd9+4]`, `[%rd9+8]`, `[%rd9+12]` — one thread's
consecutive floats, so lane k of a warp reads 4 × chunk × k bytes away from
lane 0. In the strided rewrite `strided_sum` the loop starts at the global
thread index (`mad.lo.s32 %r1, %r14, %r13, %r15`) and advances by
`mul.wide.s32 %rd3, %r2, 4` (grid size × 4 bytes), so the 32 lanes of a
`ld.global.nc.f32` read 32 adjacent floats.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Severity
from shaderlint.model import builtins as B
from shaderlint.model.dispatch import follow
from shaderlint.model.expr import descendants, unparen
from shaderlint.rules.base import Rule, RuleContext

_VECTOR_SPAN = 4  # `tid * 4 + k`: the vector-load idiom


class ContiguousThreadChunks(Rule):
    code = "SL504"
    name = "contiguous-thread-chunks"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    default_on = False
    summary = "each thread loops over its own contiguous chunk instead of a strided range"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            for loop in f.loops:
                if loop.var is None or loop.step != 1 or loop.counter_modified:
                    continue
                chunk = _chunk_loop(model, loop)
                if chunk is None:
                    continue
                tid, size = chunk
                if _group_index(model, tid) or not _walks_device_memory(model, f, loop):
                    continue
                t, c = " ".join(model.text(tid).split()), " ".join(model.text(size).split())
                if unparen(tid).type not in ("identifier", "field_expression", "call_expression"):
                    t = f"({t})"
                # a chunk of constant length sets the thread count (n / 8 threads): no thread is left idle
                idle = "" if model.const_value(size) is not None else \
                    ", and chunks of ceil(n / threads) can leave whole threads idle"
                yield Finding(
                    loop.node.start_byte, loop.node.start_byte + 3,
                    f"each thread walks its own contiguous chunk of `{c}` elements (from `{t} * {c}`): neighbouring "
                    f"threads access addresses `{c}` elements apart, so their loads are not coalesced{idle}; "
                    f"stride by the thread count instead "
                    f"(`for (i = {t[1:-1] if t.startswith('(') and t.endswith(')') else t}; i < n; i += threads)`)",
                    kernel=f.name,
                )


def _walks_device_memory(model, f, loop) -> bool:
    """The loop reads or writes device memory at an index that moves with its counter. Chunks of
    threadgroup memory or of private arrays are not a coalescing question (a merge-path sort's run
    in shared memory, a register-tiled micro-tile), nor is memory the analysis cannot place."""
    start, end = loop.node.start_byte, loop.node.end_byte
    for a in f.accesses:
        if a.space in ("device", "constant") and a.index is not None and start <= a.node.start_byte < end \
                and any(model.resolve(i) is loop.var for i in descendants(a.index, "identifier")):
            return True
    return False


def _chunk_loop(model, loop):
    """(thread index, chunk) if ``loop`` walks ``[t * c, t * c + c)`` or ``k in [0, c)`` over ``t * c + k``."""
    init = loop.node.child_by_field_name("initializer")
    cond = loop.node.child_by_field_name("condition")
    body = loop.node.child_by_field_name("body")
    if cond is None or body is None:
        return None
    start = loop.var.init if init is not None and init.type == "declaration" else (
        init.child_by_field_name("right") if init is not None and init.type == "assignment_expression" else None)
    if start is None:
        return None
    split = _thread_times_chunk(model, start)
    if split is not None:  # i = t * c; i < (t + 1) * c  /  i < min(begin + c, n)
        tid, size = split
        if B.LOCAL in model.deps(cond) and _mentions(model, cond, size) and _wide(model, size):
            return split
        return None
    if model.const_value(start) != 0 or B.LOCAL in model.deps(cond):
        return None
    bound = _bound(model, cond, loop.var)
    if bound is None or not _wide(model, bound):
        return None
    for sub in descendants(body, "subscript_expression"):  # k in [0, c): a[t * c + k]
        idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
        if idx is None:
            continue
        kids = [x for x in idx.named_children if x.type != "comment"] if idx.type == "subscript_argument_list" else [idx]
        for k in kids:
            split = _offset_by(model, k, loop.var)
            if split is not None and _same(model, split[1], bound):
                return split
    return None


def _thread_times_chunk(model, expr, depth=0):
    """(t, c) for ``t * c`` (plus a uniform offset) with ``t`` an x-axis thread index and ``c`` uniform."""
    if depth > 4:
        return None
    e, _ = follow(model, expr)
    e = unparen(e)
    if e.type != "binary_expression":
        return None
    op = model.text(e.child_by_field_name("operator"))
    left, right = unparen(e.child_by_field_name("left")), unparen(e.child_by_field_name("right"))
    if op == "+":
        local = [s for s in _sum_terms(e) if B.LOCAL in model.deps(s)]
        return _thread_times_chunk(model, local[0], depth + 1) if len(local) == 1 else None
    if op != "*":
        return None
    for t, c in ((left, right), (right, left)):
        if B.LOCAL not in model.deps(c) and B.UNKNOWN_DEP not in model.deps(c) and _x_thread_index(model, t):
            return t, c
    return None


def _offset_by(model, index, var):
    """(t, c) for an index ``t * c + var`` (any order, plus uniform terms)."""
    terms = _sum_terms(unparen(index))
    if not any(_is_var(model, t, var) for t in terms):
        return None
    local = [t for t in terms if not _is_var(model, t, var) and B.LOCAL in model.deps(t)]
    return _thread_times_chunk(model, local[0]) if len(local) == 1 else None


def _sum_terms(e):
    if e.type == "binary_expression" and e.child_by_field_name("operator").type == "+":
        return _sum_terms(unparen(e.child_by_field_name("left"))) + _sum_terms(unparen(e.child_by_field_name("right")))
    return [e]


def _is_var(model, node, var) -> bool:
    return node.type == "identifier" and model.resolve(node) is var


def _x_thread_index(model, node, depth=0) -> bool:
    """True if ``node`` varies along the x axis of the threads (and not only along y/z)."""
    if depth > 4:
        return False
    text = model.text(node)
    if any(w in text for w in (".y", ".z")):
        return False
    if B.LOCAL not in model.deps(node):
        return False
    for ident in descendants(node, "identifier"):
        name = model.text(ident)
        if name in ("threadIdx", "gl_LocalInvocationID", "gl_GlobalInvocationID", "gl_LocalInvocationIndex"):
            return True
        v = model.resolve(ident)
        if v is None:
            continue
        if v.role is not None and v.type.width == 1:
            return True
        if v.role is not None and ".x" in model.text(ident.parent or ident):
            return True
        d, _ = follow(model, ident)
        if d is not ident and _x_thread_index(model, d, depth + 1):
            return True
    return False


def _wide(model, size) -> bool:
    """A chunk wider than one vector load: a constant > 4, or a run-time size. A constant of unknown
    value (a template parameter, a function constant, a constexpr from a header's constant) may be
    the vector-load idiom: silent."""
    expr = follow(model, size)[0]
    v = model.const_value(expr)
    if v is None:
        v = model.const_value(size)
    if v is None:
        # `constexpr int DPL = D / 32;` is a constant even when `D` comes from a header (following
        # it to `D / 32` lost that: vLLM octave_attn.cu was reported for 8 halves, one 16-byte load).
        return not (model.is_constant(expr) or model.is_constant(size))
    return v > _VECTOR_SPAN


_GROUP_INDEX_NAMES = ("simdgroup_index_in_threadgroup", "gl_SubgroupID", "meta_group_rank")


def _group_index(model, node, depth=0) -> bool:
    """True if ``node`` is a warp / SIMD-group index (``threadIdx.x / 32``, ``tid / WARP_SIZE``,
    ``tid >> 5``, ``simdgroup_index_in_threadgroup``): every lane of a warp has the same value, so a
    chunk indexed by it is one warp's (vLLM moe_align_sum_kernels.cu: `warp_id * experts_per_warp`).
    A divisor or shift the file gives no value for counts as a warp size (silent)."""
    if depth > 4:
        return False
    e = unparen(node)
    if e.type in ("identifier", "field_expression", "call_expression"):
        text = model.text(e)
        if any(n in text for n in _GROUP_INDEX_NAMES):
            return True
        v = model.resolve(e) if e.type == "identifier" else None
        if v is not None and v.role in ("simdgroup_index_in_threadgroup",):
            return True
        d, _ = follow(model, e)
        return d is not e and _group_index(model, d, depth + 1)
    if e.type == "cast_expression":
        val = e.child_by_field_name("value")
        return val is not None and _group_index(model, val, depth + 1)
    if e.type != "binary_expression":
        return False
    op = model.text(e.child_by_field_name("operator"))
    left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
    if op in ("/", ">>") and B.LOCAL not in model.deps(right) and B.UNKNOWN_DEP not in model.deps(right):
        v = model.const_value(right)
        if v is None:
            return True
        return v >= 32 if op == "/" else v >= 5
    if op == "%" and B.LOCAL not in model.deps(right) and B.UNKNOWN_DEP not in model.deps(right):
        # `(gid / ne0) % ne1`: a channel index, the same for the lanes that share `gid / ne0`
        # (llama.cpp conv-transpose-1d.cu reads that channel's filter taps)
        return _group_index(model, left, depth + 1)
    if op in ("+", "-", "*"):  # `warp + k`, `2 * warp`: still one value per warp
        return all(_group_index(model, x, depth + 1) or B.LOCAL not in model.deps(x) for x in (left, right)) \
            and any(_group_index(model, x, depth + 1) for x in (left, right))
    return False


def _bound(model, cond, var):
    c = unparen(cond)
    if c.type != "binary_expression" or model.text(c.child_by_field_name("operator")) not in ("<", "!="):
        return None
    left, right = unparen(c.child_by_field_name("left")), c.child_by_field_name("right")
    return right if _is_var(model, left, var) else None


def _same(model, a, b) -> bool:
    va, vb = model.const_value(a), model.const_value(b)
    if va is not None or vb is not None:
        return va == vb
    return "".join(model.text(unparen(a)).split()) == "".join(model.text(unparen(b)).split())


def _mentions(model, cond, size) -> bool:
    want = "".join(model.text(unparen(size)).split())
    texts = ["".join(model.text(cond).split())]
    for ident in descendants(cond, "identifier"):
        v = model.resolve(ident)
        if v is not None and v.function is not None and not v.is_param:
            d, _ = follow(model, ident)
            texts.append("".join(model.text(d).split()))
    return any(want in t for t in texts)

