"""The dispatch and synchronisation facts (shaderlint.model.dispatch / .sync) and the rules that use
them where fixtures cannot reach: configuration facts, annotation scope, control flow corners."""

from __future__ import annotations

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.model import sync
from shaderlint.model.build import build_model
from shaderlint.model.dispatch import dispatch_mode, group_size, kernel_fact
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.source import Source


def model_of(path: str, text: str):
    lang = {"metal": "metal", "cu": "cuda", "comp": "glsl"}[path.rsplit(".", 1)[1]]
    return build_model(FRONT_ENDS[lang].parse(Source(path, text.encode())))


def codes(path: str, text: str, select: str, **kw) -> list[tuple[int, str]]:
    result = lint_source(path, text.encode(), Settings(select=tuple(select.split(",")) + ("SL001",), **kw))
    return [(d.line, d.code) for d in result.diagnostics]


METAL_SMALL = """#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], threadgroup float* t [[threadgroup(0)]],
              uint lid [[thread_index_in_threadgroup]]) {
    t[lid] = out[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid] = t[lid ^ 1];
}
"""


def test_configured_threadgroup_size_reaches_the_rules():
    assert codes("k.metal", METAL_SMALL, "SL401") == []
    facts = (("*.metal", (("threadgroup-size", "32"),)),)
    assert codes("k.metal", METAL_SMALL, "SL401", facts=facts) == [(6, "SL401")]
    facts = (("*.metal", (("threadgroup-size", "10x10"),)),)
    got = lint_source("k.metal", METAL_SMALL.encode(), Settings(select=("SL501",), facts=facts)).diagnostics
    assert [(d.line, d.code) for d in got] == [(3, "SL501")]  # reported at the kernel's name
    assert "10×10 = 100" in got[0].message and "configured" in got[0].message
    m = model_of("k.metal", METAL_SMALL)
    gs = group_size(m, m.kernels[0], {"threadgroup-size": "8x4"})
    assert gs is not None and gs.dims == (8, 4, 1) and gs.origin == "config"


def test_annotation_above_a_kernel_is_not_file_wide():
    text = """// shaderlint: dispatch=threads
kernel void a(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 0; }
kernel void b(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1; }
"""
    m = model_of("k.metal", text)
    a, b = m.kernels
    assert dispatch_mode(m, a) == "threads"
    assert dispatch_mode(m, b) is None
    assert dispatch_mode(m, b, {"dispatch": "threadgroups"}) == "threadgroups"
    top = "// shaderlint: dispatch=threadgroups\n#include <metal_stdlib>\n" + text
    m = model_of("k.metal", top)
    a, b = m.kernels
    assert m.facts["dispatch"] == "threadgroups"
    assert dispatch_mode(m, a) == "threads" and dispatch_mode(m, b) == "threadgroups"
    assert kernel_fact(m, b, "grid-size", {"grid-size": "1920x1080"}) == "1920x1080"


def test_group_size_from_agreeing_launch_sites():
    text = """__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }
__global__ void j(float* a) { a[threadIdx.x] = 1.0f; }
void host(float* a, int n) {
    int threads;
    threads = 384;
    dim3 block(threads);
    k<<<n, block>>>(a);
    k<<<n, 384>>>(a);
    j<<<n, 64>>>(a);
    j<<<n, 128>>>(a);
}
"""
    m = model_of("k.cu", text)
    k, j = (m.function_by_name[x] for x in ("k", "j"))
    assert k.group_size is not None and k.group_size.dims == (384, 1, 1)
    assert j.group_size is None  # two different sizes
    assert codes("k.cu", text, "SL501") == []
    assert codes("k.cu", text, "SL506") == []  # 384 threads fit 168 registers; only ptxas's count could say more


def test_break_in_a_loop_makes_every_barrier_in_it_divergent():
    text = """__global__ void k(const int* keys, int key, int n) {
    __shared__ int w[256];
    for (int base = 0; base < n; base += 256) {
        __syncthreads();
        w[threadIdx.x] = keys[base + threadIdx.x];
        __syncthreads();
        if (w[threadIdx.x] == key) continue;
        __syncthreads();
    }
    for (int base = 0; base < n; base += 256) {
        __syncthreads();
        if (keys[base + threadIdx.x] == key) break;
    }
    __syncthreads();
}
"""
    # continue only skips the rest of its iteration; break ends the loop for some threads, which
    # then reach the last barrier (without it they would only exit: exit_after_loop.cu)
    assert codes("k.cu", text, "SL403") == [(8, "SL403"), (11, "SL403")]


def test_redundant_barriers_follow_switch_break_and_return():
    text = """__global__ void k(float* out, int mode) {
    __shared__ float t[256];
    switch (mode) {
    case 0:
        t[threadIdx.x] = 1.0f;
        break;
    default:
        return;
    }
    __syncthreads();
    out[threadIdx.x] = t[255 - threadIdx.x];
    for (int i = 0; i < mode; ++i) {
        if (i == 3) break;
        __syncthreads();
    }
}
"""
    m = model_of("k.cu", text)
    got = [(m.source.position(r.barrier.node.start_byte)[0], r.side) for r in sync.redundant_barriers(m, m.kernels[0])]
    # line 10 orders the case-0 write against the read; line 14 has nothing after it
    assert got == [(14, "after")]


def test_helpers_that_synchronise_and_reduce():
    text = """__device__ void stage(float* t) { t[threadIdx.x] = 0.0f; __syncthreads(); }
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__global__ void k(float* out) {
    __shared__ float t[256];
    stage(t);
    float s = warp_sum(out[threadIdx.x]);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
"""
    m = model_of("k.cu", text)
    k = m.function_by_name["k"]
    assert [m.text(c) for c, _ in sync.sync_calls(m, k)] == ["stage(t)"]
    assert set(sync.reducing_functions(m)) == {"warp_sum"}
    stores = sync.group_result_stores(m, k, 32)
    assert [m.text(s.reduction) for s in stores] == ["warp_sum(out[threadIdx.x])"]
    assert sync.spans_several_simd_groups(m, k, 32)  # the helper's barrier says so
    assert codes("k.cu", text, "SL404") == [(9, "SL404")]


def test_rules_never_raise_on_odd_input():
    odd = [
        "__global__ void k() { __syncthreads(",
        "void h() { k<<<>>>(); }",
        "__global__ void k() { goto x; x: __syncthreads(); }",
        "__global__ void k(int n) { for (;;) { __syncthreads(); if (n) break; } }",
        "__global__ void k(int n) { do { __syncthreads(); } while (threadIdx.x < n); }",
        "void h(int n) { dim3 g; g.x = n / 256; k<<<g, 256>>>(); }",
    ]
    select = "SL401,SL402,SL403,SL404,SL501,SL502,SL503,SL504,SL506"
    for text in odd:
        for d in lint_source("k.cu", text.encode(), Settings(select=tuple(select.split(",")) + ("SL001",))).diagnostics:
            assert "failed on this file" not in d.message, d.message


def test_thread_index_conditions_evaluated_per_thread():
    from shaderlint.model.lanes import thread_function

    text = """#define WARP_SIZE 32
__global__ void k(float* out, int n) {
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x >> 5;
    if (warp == 0 && lane < 8) out[0] = 1.0f;
    if ((threadIdx.x & 31) == 0 || n > 4) out[1] = 1.0f;
    if (threadIdx.x - 32 < 4) out[2] = 1.0f;
    if (threadIdx.x < n) out[3] = 1.0f;
    if (threadIdx.y == 0 && threadIdx.x == 0) out[4] = 1.0f;
}
"""
    m = model_of("k.cu", text)
    k = m.function_by_name["k"]
    stack, conds = [k.body], []
    while stack:
        n = stack.pop()
        if n.type == "if_statement":
            conds.append(n.child_by_field_name("condition"))
        stack.extend(n.named_children)
    conds.sort(key=lambda c: c.start_byte)
    fns = [thread_function(m, c, 32) for c in conds]
    assert [fns[0](t) for t in (0, 7, 8, 32)] == [1, 1, 0, 0]
    assert [fns[1](t) for t in (0, 32, 1)] == [1, 1, None]  # `n > 4` decides the others
    assert fns[2](40) == 0 and fns[2](3) is None  # 3 - 32 wraps around in unsigned arithmetic: not evaluated
    assert fns[3] is None  # depends on n in every thread
    assert fns[4](0) is None and fns[4](1) == 0  # threadIdx.y unknown


def test_two_level_reduction_decided_on_the_storing_threads_path():
    base = """__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__global__ void __launch_bounds__(256) k(const float* in, float* out) {
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float v = warp_sum(in[threadIdx.x]);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (COND) v = warp_sum(lane < 8 ? partial[lane] : 0.0f);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"""
    for cond, want in (("warp == 0", []), ("threadIdx.x < 32", []), ("warp < 1", []),
                       ("warp == 1", [(8, "SL404")]), ("threadIdx.x >= 32", [(8, "SL404")]),
                       ("in[0] > 0.0f", []),  # undecided: thread 0 may store the second level
                       ("0", [(8, "SL404")])):
        assert codes("k.cu", base.replace("COND", cond), "SL404") == want, cond


def test_long_write_chains_and_per_thread_branches_stay_within_bounds():
    """600 sequential writes of the stored value (deeper than Python's stack if followed one inside
    another) and 100 branches telling threads apart one by one: unknown, hence silent, not a failure."""
    head = """__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__global__ void __launch_bounds__(256) k(const float* in, float* out) {
    float v = warp_sum(in[threadIdx.x]);
"""
    chain = head + "".join(f"    v = v * 1.0001f + in[{i}];\n" for i in range(600)) + \
        "    if (threadIdx.x == 0) out[blockIdx.x] = v;\n}\n"
    assert codes("k.cu", chain, "SL404") == []
    short = head + "".join(f"    v = v * 1.0001f + in[{i}];\n" for i in range(20)) + \
        "    if (threadIdx.x == 0) out[blockIdx.x] = v;\n}\n"
    assert codes("k.cu", short, "SL404") == [(6, "SL404")]
    branches = head + "".join(f"    if (threadIdx.x == {i}) out[512 + {i}] = 0.0f;\n" for i in range(100)) + \
        "    if (threadIdx.x == 0) out[blockIdx.x] = v;\n}\n"
    assert codes("k.cu", branches, "SL404") == []
