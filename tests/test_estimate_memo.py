"""The register walk's memos (shaderlint.estimate.liveness, shaderlint.estimate.registers) answer
what depends on a variable or a model alone: a value the walk knows at one point and not at
another, or a model without a global in shared memory, must not change another answer."""

from __future__ import annotations

from shaderlint.estimate.registers import estimate_kernel
from shaderlint.estimate.targets import get_target
from shaderlint.languages import FRONT_ENDS, language_for_path
from shaderlint.model.build import build_model
from shaderlint.model.source import Source
from tests.test_impact import SL101_CUDA

SM80 = get_target("sm_80")


def estimate(src: str, path: str = "k.cu"):
    m = build_model(FRONT_ENDS[language_for_path(path)].parse(Source(path, src.encode())))
    return estimate_kernel(m, m.kernels[0], SM80)


# ``a`` is read while the walk knows its value (4), then assigned a run-time value, and read or
# updated after the loads (the update's value is dead, but it keeps ``a`` live across them): the
# memos of what reading or assigning a variable does hold what depends on the variable alone, not on
# whether its value was known when they were first asked.
KNOWN_THEN_NOT = """
__global__ void k(float* out, const float* in, int n) {{
    {START}
    float x = in[0] * {FIRST};
    {ASSIGN}
    float y = in[1] * in[2] + in[3] * in[4] + in[5] * in[6] + in[7] * in[8];
    {TAIL}
}}
"""


def test_a_value_known_at_its_first_uses_is_counted_once_it_is_not():
    for tail in ("out[threadIdx.x] = x * y + a;", "out[threadIdx.x] = x * y; a += 1;"):
        known = estimate(KNOWN_THEN_NOT.format(START="int a = 4;", FIRST="a", ASSIGN="a = n * 3 + threadIdx.x;",
                                               TAIL=tail))
        never = estimate(KNOWN_THEN_NOT.format(START="", FIRST="4", ASSIGN="int a = n * 3 + threadIdx.x;",
                                               TAIL=tail))
        assert known.peak == never.peak, tail
        assert known.registers == never.registers, tail


SHARED_GLOBAL = """
__shared__ float tile[256];
__device__ float load(int i) { return tile[i]; }
__global__ void k(float* out) { out[threadIdx.x] = load(threadIdx.x); }
"""

NO_SHARED_GLOBAL = """
__device__ float table[256];
__device__ float load(int i) { return table[i]; }
__global__ void k(float* out) { out[threadIdx.x] = load(threadIdx.x); }
"""


def test_global_shared_memory_is_found_per_model():
    # a model without a global in shared memory skips the search for the ones the kernel uses;
    # another model's answer must not carry over (in either order)
    assert estimate(NO_SHARED_GLOBAL).shared_bytes == 0
    assert estimate(SHARED_GLOBAL).shared_bytes == 1024
    assert estimate(NO_SHARED_GLOBAL).shared_bytes == 0
    unused = SHARED_GLOBAL.replace("return tile[i];", "return (float)i;")
    assert estimate(unused).shared_bytes == 0


CHAIN = """
template <int N>
__global__ void k(float* out) {
    int b = N * 2;
    int c = b + 1;
    out[b] = 1.0f;
    out[c] = 2.0f;
}
"""


def test_evaluation_follows_chains_of_locals_whatever_was_asked_first():
    # ``b``'s dependencies are found first (they are reused for ``c``, which reaches ``N`` through
    # ``b``): the value of ``c`` must still follow ``N``
    from shaderlint.estimate.static import evaluate

    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", CHAIN.encode())))
    f = m.kernels[0]
    n = f.template_params["N"]
    index = {}
    stack = [f.body]
    while stack:
        x = stack.pop()
        if x.type == "subscript_expression":
            i = x.child_by_field_name("index") or x.named_children[-1]
            while i.type == "subscript_argument_list" and i.named_children:
                i = i.named_children[0]
            index[m.text(i)] = i
        stack.extend(x.named_children)
    assert evaluate(m, index["b"], {id(n): 3}) == 6
    assert evaluate(m, index["c"], {id(n): 3}) == 7
    assert evaluate(m, index["c"], {id(n): 5}) == 11
    assert evaluate(m, index["b"], {id(n): 5}) == 10


# ``h`` is found indexed at run time by the first walk: a complete kernel is walked again with it on
# the stack; one cut at the visit limit is not (a second walk would cover another first part).
DYNAMIC_ARRAY = SL101_CUDA  # (the impact tests' kernel)


def test_a_walk_cut_at_the_visit_limit_is_not_walked_again(monkeypatch):
    from shaderlint.estimate import liveness

    walks = []
    run = liveness.Walker.run

    def counting(self):
        walks.append(set(self.stack_vars))
        return run(self)

    monkeypatch.setattr(liveness.Walker, "run", counting)
    whole = estimate(DYNAMIC_ARRAY)
    assert whole.complete and len(walks) == 2 and walks[0] == set() and len(walks[1]) == 1
    assert whole.stack_arrays == {"h": 64}
    walks.clear()
    monkeypatch.setattr(liveness, "_MAX_VISITS", 100)  # past the loop that indexes `h` at run time
    cut = estimate(DYNAMIC_ARRAY)
    assert not cut.complete and len(walks) == 1
    assert cut.stack_arrays == {"h": 64}  # found indexed at run time: on the stack all the same


# Arrays indexed at run time: `h` (in registers, initialized), `g` (no initializer), `big` (too large for
# registers, initialized). A what-if keeping one in registers starts from the first walk of the kernel
# as written when that walk tells what its own first walk would find.
WHAT_IFS = """
__global__ void k(const int* __restrict__ bins, float* out, int n) {
    float h[16] = {0.0f};
    float g[8];
    float big[1024] = {1.0f, 2.0f};
    for (int i = 0; i < 8; ++i) g[i] = 0.0f;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; ++k) {
        h[bins[t * n + k] & 15] += 1.0f;
        g[bins[k] & 7] += 2.0f;
        big[bins[k] & 1023] += 3.0f;
    }
    for (int i = 0; i < 16; ++i) out[t * 16 + i] = h[i] + g[i & 7] + big[i];
}
"""


def test_a_what_if_keeping_arrays_in_registers_starts_from_the_walk_as_written(monkeypatch):
    from shaderlint.estimate import liveness, registers
    from shaderlint.estimate.registers import Adjustment

    walks = []
    run = liveness.Walker.run

    def counting(self):
        walks.append((frozenset(self.promote), frozenset(self.stack_vars)))
        return run(self)

    monkeypatch.setattr(liveness.Walker, "run", counting)

    def figures(skip: bool):
        if not skip:
            monkeypatch.setattr(registers, "_first_walk_dynamic", lambda *a, **kw: None)
        m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", WHAT_IFS.encode())))
        f = m.kernels[0]
        arrays = {v.name: v for v in f.vars if v.is_array}
        out = [estimate_kernel(m, f, SM80)]
        for names in (("h",), ("g",), ("big",), ("h", "g")):
            adj = Adjustment(promote=tuple(arrays[n] for n in names))
            e = estimate_kernel(m, f, SM80, adjust=adj)
            out.append((names, e.registers, e.registers_exact, e.peak, e.stack_bytes, e.stack_arrays, e.notes))
        monkeypatch.undo()
        monkeypatch.setattr(liveness.Walker, "run", counting)
        return out, arrays

    walks.clear()
    fast, arrays = figures(True)
    fast_walks = list(walks)
    walks.clear()
    slow, slow_arrays = figures(False)
    assert fast[1:] == slow[1:]
    assert fast[0].stack_arrays == slow[0].stack_arrays == {"h": 64, "g": 32, "big": 4096}
    # every what-if skips its first walk, `big`'s too (not in registers as written, initialized with
    # literals: in registers, the what-if only visits them)
    firsts = [p for p, s in fast_walks if p and not s]
    assert firsts == []
    # one walk fewer for three what-ifs; the one keeping `h` and `g` in registers takes one walk either
    # way: its own first walk finds only `big` indexed at run time, which that walk never kept in
    # registers (too large), so it is not walked again with `big` on the stack (the same walk)
    assert len(walks) - len(fast_walks) == 3
    hg = frozenset({id(slow_arrays["h"]), id(slow_arrays["g"])})
    assert [s for p, s in walks if p == hg] == [frozenset()]


def _what_if_walks(monkeypatch, src: str, names: tuple, skip: bool):
    """(figures of the what-if keeping the arrays ``names`` of ``src``'s kernel in registers, its walks as
    (arrays promoted, arrays on the stack)), from the first walk as written (``skip``) or from a walk of its own."""
    from shaderlint.estimate import liveness, registers
    from shaderlint.estimate.registers import Adjustment

    walks = []
    run = liveness.Walker.run

    def counting(self):
        walks.append((frozenset(self.promote), frozenset(self.stack_vars)))
        return run(self)

    with monkeypatch.context() as mp:
        mp.setattr(liveness.Walker, "run", counting)
        if not skip:
            mp.setattr(registers, "_first_walk_dynamic", lambda *a, **kw: None)
        m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", src.encode())))
        f = m.kernels[0]
        arrays = {v.name: v for v in f.vars if v.is_array}
        estimate_kernel(m, f, SM80)
        del walks[:]
        e = estimate_kernel(m, f, SM80, adjust=Adjustment(promote=tuple(arrays[n] for n in names)))
    return (e.registers, e.registers_exact, e.peak, e.stack_bytes, e.stack_arrays, e.notes, e.complete), \
        [(len(p), len(s)) for p, s in walks]


def test_a_what_if_walks_its_own_first_walk_where_the_walk_as_written_differs(monkeypatch):
    from shaderlint.estimate import liveness

    # `big` initialized with a value the walk reads, or a pointer into it: in registers, the what-if
    # walks what the walk as written did not
    for init, extra in (("{1.0f, (float)n}", ""), ("{1.0f, 2.0f}", "float* p = big + 4; p[0] = 1.0f;")):
        src = WHAT_IFS.replace("{1.0f, 2.0f};", init + "; " + extra)
        fast, fast_walks = _what_if_walks(monkeypatch, src, ("big",), True)
        slow, slow_walks = _what_if_walks(monkeypatch, src, ("big",), False)
        assert fast == slow and fast_walks == slow_walks, init
        assert fast_walks[0] == (1, 0), init  # a first walk of its own
    # the literals the what-if visits would take its walk past the visit limit: walked, and cut alike
    lits = ", ".join(["1.0f"] * 200)
    src = WHAT_IFS.replace("{1.0f, 2.0f}", "{" + lits + "}")
    with monkeypatch.context() as mp:
        limit = {}

        def visits_as_written(self):
            result = run(self)
            limit.setdefault("visits", self.visits)
            return result

        run = liveness.Walker.run
        mp.setattr(liveness.Walker, "run", visits_as_written)
        m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", src.encode())))
        estimate_kernel(m, m.kernels[0], SM80)
    monkeypatch.setattr(liveness, "_MAX_VISITS", limit["visits"] + 100)  # complete as written, not in the what-if
    fast, fast_walks = _what_if_walks(monkeypatch, src, ("big",), True)
    slow, slow_walks = _what_if_walks(monkeypatch, src, ("big",), False)
    assert fast == slow and not fast[-1]
    assert fast_walks == slow_walks and len(fast_walks) == 1


def test_a_what_if_starts_from_the_walk_as_written_only_when_that_walk_tells():
    from shaderlint.estimate.registers import _first_walk_dynamic

    from shaderlint.estimate.liveness import _MAX_VISITS

    # 1, 2 in registers as written; 3 not, initialized by something else than literals; 4 not, with 10
    # literals; 5 not, with a pointer local into it
    first = (frozenset({1, 2, 3, 4, 5}), True, frozenset({1, 2}), 1000, {3: None, 4: 10}, frozenset({5}))
    assert _first_walk_dynamic(first, {1}) == {2, 3, 4, 5}
    assert _first_walk_dynamic(first, {1, 2}) == {3, 4, 5}
    assert _first_walk_dynamic(None, {1}) is None  # no walk as written yet
    assert _first_walk_dynamic((first[0], False) + first[2:], {1}) is None  # cut at the visit limit
    assert _first_walk_dynamic(first, {3}) is None  # not in registers as written, initialized
    assert _first_walk_dynamic(first, {3}, frozenset({3})) == {1, 2, 4, 5}  # ... without an initializer
    assert _first_walk_dynamic(first, {4}) == {1, 2, 3, 5}  # ... with literals
    assert _first_walk_dynamic(first, {5}) is None  # a pointer into it
    assert _first_walk_dynamic(first, {5}, frozenset({5})) is None
    past = first[:3] + (_MAX_VISITS - 5,) + first[4:]
    assert _first_walk_dynamic(past, {4}) is None  # its literals would take the what-if past the limit
    assert _first_walk_dynamic(past, {1}) == {2, 3, 4, 5}


def test_a_headers_names_are_every_name_followed_by_a_call_or_template_bracket(tmp_path):
    """headers._names: the names a header may define a function of, whole names only (the search does
    not try again inside a name whose start did not match: such a try cannot match)."""
    import re

    from shaderlint.estimate import headers

    text = ("__device__ float foo(int a1b) { return bar<T> (a1b) + 1baz(x) + q_r2 (y) + abc_def\n<x>; }\n"
            "#define P(n) n##tail( ab cd( 0x1f(  e_f_g;h(")
    path = tmp_path / "h.cuh"
    path.write_text(text)
    names = headers._names(str(path))
    assert names == {b"foo", b"bar", b"baz", b"q_r2", b"abc_def", b"P", b"tail", b"cd", b"x1f", b"h"}
    assert names == frozenset(re.findall(rb"([A-Za-z_]\w*)\s*[(<]", text.encode()))  # the plain search's


def test_a_named_cast_parses_no_header(tmp_path, monkeypatch):
    """``static_cast<T>(x)``, ``reinterpret_cast<T*>(p)``: C++ keywords, never a helper of a header. A
    header whose text follows them with ``<`` (so that ``headers._names`` lists them) is not parsed to
    look for one; a helper the kernel does call still is, and the estimate is the same."""
    from shaderlint.estimate import headers

    (tmp_path / "casts.cuh").write_text(
        "#pragma once\n__device__ inline float* as_f(void* p) { return reinterpret_cast<float*>(p); }\n"
        "__device__ inline int as_i(float x) { return static_cast<int>(x); }\n")
    (tmp_path / "helper.cuh").write_text("#pragma once\n__device__ inline float twice(float v) { return v * 2.f; }\n")
    src = tmp_path / "k.cu"
    code = ('#include "casts.cuh"\n#include "helper.cuh"\n'
            "__global__ void k(void* raw, float* out) {\n"
            "    const float* in = reinterpret_cast<const float*>(raw);\n"
            "    out[threadIdx.x] = twice(in[threadIdx.x]) + static_cast<float>(threadIdx.x);\n}\n")
    src.write_text(code)
    assert b"static_cast" in headers._names(str(tmp_path / "casts.cuh"))
    loaded: list[str] = []
    load = headers._load

    def counting(path, model):
        loaded.append(path.rsplit("/", 1)[-1])
        return load(path, model)

    monkeypatch.setattr(headers, "_load", counting)
    headers._MODELS.clear()
    e = estimate(code, path=str(src))
    assert loaded == ["helper.cuh"], loaded  # the helper's header only, for `twice`
    assert any(n.startswith("inlined: ") and "twice" in n for n in e.notes), e.notes
    monkeypatch.setattr(headers, "_CXX_KEYWORDS", frozenset())  # as before: the casts parse casts.cuh
    loaded.clear()
    headers._MODELS.clear()
    before = estimate(code, path=str(src))
    assert "casts.cuh" in loaded, loaded
    assert (before.registers_exact, before.notes) == (e.registers_exact, e.notes)


# `h` is indexed only at run time: the first walk takes the stack's path at each of its accesses, so a
# walk with `h` on the stack would be the same walk; a static access (or an initializer) keeps its
# elements in registers in the first walk, which is then walked again.
RUNTIME_ONLY = """
__global__ void k(const int* __restrict__ bins, float* out, int n) {
    float h[16];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    STATIC
    for (int k = 0; k < n; ++k) {
        h[bins[t * n + k] & 15] = (float)k;
        s += h[bins[k] & 15];
    }
    out[t] = s;
}
"""


def test_a_walk_whose_run_time_indexed_arrays_it_never_kept_in_registers_is_not_repeated(monkeypatch):
    import dataclasses

    from shaderlint.estimate import liveness

    def figures(src: str, repeat: bool):
        walks = []
        run = liveness.Walker.run

        def counting(self):
            walks.append(frozenset(self.stack_vars))
            result = run(self)
            if repeat:  # as if the walk had kept them in registers: walked again with them on the stack
                self.held.update(self.dynamic)
            return result

        with monkeypatch.context() as mp:
            mp.setattr(liveness.Walker, "run", counting)
            e = estimate(src)
        return {f.name: getattr(e, f.name) for f in dataclasses.fields(e) if f.name != "function"}, walks

    for static, walked in (("", 1), ("h[0] = 1.0f;", 2), ("float* p = h + 2; p[0] = 1.0f;", 2)):
        src = RUNTIME_ONLY.replace("STATIC", static)
        once, walks = figures(src, False)
        again, walks_again = figures(src, True)
        assert once == again, static
        assert once["stack_arrays"] == {"h": 64}, static
        assert len(walks) == walked and len(walks_again) == 2, static


KEPT_AND_NOT = """
__global__ void k(float* out, const float* in, int n) {
    float a[4];
    #pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = in[i * n + threadIdx.x];
    float b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < n; ++j) b[j & 7] += a[1] * in[j];
    float big[2048];
    #pragma unroll
    for (int i = 0; i < 4; ++i) big[i] = a[i];
    out[threadIdx.x] = a[0] * a[3] + b[1] + big[2];
}
"""


def test_a_what_if_keeping_in_registers_what_every_walk_kept_there_is_the_walk_as_written(monkeypatch):
    """Keeping ``a`` in registers, where every walk as written kept it and never found it indexed at run
    time, takes no walk and gives the figures the what-if's own walks give (computed on a fresh model,
    where no walk as written exists to start from); ``b`` (indexed at run time) and ``big`` (too large to
    be kept in registers) are walked."""
    from shaderlint.estimate import liveness
    from shaderlint.estimate.registers import Adjustment

    walks = []
    run = liveness.Walker.run

    def counting(self):
        walks.append(frozenset(self.promote))
        return run(self)

    monkeypatch.setattr(liveness.Walker, "run", counting)

    def what_if(name: str, after_as_written: bool):
        m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", KEPT_AND_NOT.encode())))
        f = m.kernels[0]
        arrays = {v.name: v for v in f.vars if v.is_array}
        if after_as_written:
            assert estimate_kernel(m, f, SM80).stack_arrays == {"b": 32}
        del walks[:]
        e = estimate_kernel(m, f, SM80, adjust=Adjustment(promote=(arrays[name],)))
        return (e.registers, e.registers_exact, e.peak, e.stack_bytes, e.stack_arrays, e.notes, e.complete), len(walks)

    for name, reused in (("a", True), ("b", False), ("big", False)):
        fast, fast_walks = what_if(name, True)
        alone, alone_walks = what_if(name, False)
        assert fast == alone, name
        assert alone_walks >= 1
        assert (fast_walks == 0) is reused, (name, fast_walks)
