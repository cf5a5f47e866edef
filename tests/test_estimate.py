"""The static register estimator on small kernels: monotonic in the obvious ways,
arrays on the stack when indexed dynamically, group sizes and memory from the code."""

from __future__ import annotations

import glob
from dataclasses import replace

import pytest

from shaderlint.estimate.registers import (
    DEFAULT_COEFFICIENTS, Adjustment, estimate_file, estimate_kernel, register_cap, template_instances, type_bytes,
)
from shaderlint.estimate.targets import default_target, get_target
from shaderlint.languages import FRONT_ENDS, language_for_path
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

SM80 = get_target("sm_80")
M1 = get_target("apple-m1")


def model_of(src: str, path: str = "k.cu"):
    lang = language_for_path(path)
    return build_model(FRONT_ENDS[lang].parse(Source(path, src.encode())))


def estimate(src: str, path: str = "k.cu", kernel: str | None = None, target=SM80, **kw):
    m = model_of(src, path)
    f = next(k for k in m.kernels if kernel is None or k.name == kernel)
    return estimate_kernel(m, f, target, **kw)


ACCUMULATORS = """
__global__ void sum_acc(float* out, const float* __restrict__ in, int n) {{
    float acc[{N}];
#pragma unroll
    for (int k = 0; k < {N}; ++k) acc[k] = 0.0f;
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = tid * {N}; i + {N} <= n; i += blockDim.x * gridDim.x * {N}) {{
#pragma unroll
        for (int k = 0; k < {N}; ++k) acc[k] += in[i + k];
    }}
    float total = 0.0f;
#pragma unroll
    for (int k = 0; k < {N}; ++k) total += acc[k];
    out[tid] = total;
}}
"""


def test_unrolled_accumulators_cost_registers():
    one = estimate(ACCUMULATORS.format(N=1))
    eight = estimate(ACCUMULATORS.format(N=8))
    thirty_two = estimate(ACCUMULATORS.format(N=32))
    assert one.registers < eight.registers < thirty_two.registers
    assert thirty_two.registers - one.registers >= 24  # ~one register per extra accumulator
    assert eight.stack_bytes == 0 and eight.register_arrays == ["acc"]


def test_doubles_cost_more_than_floats():
    src = """
__global__ void axpy({T}* y, const {T}* x, {T} a, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {T} s0 = x[i], s1 = x[i + n], s2 = x[i + 2 * n], s3 = x[i + 3 * n];
    y[i] = a * s0 + s1 * s2 - s3 * a + s0 * s3;
}}
"""
    f32 = estimate(src.format(T="float"))
    f64 = estimate(src.format(T="double"))
    assert f64.peak > f32.peak
    assert f64.registers > f32.registers


def test_dynamic_index_puts_the_array_on_the_stack():
    dynamic = estimate("""
__global__ void hist(const int* bins, float* out, int n) {
    float h[16];
    for (int i = 0; i < 16; ++i) h[i] = 0.0f;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; ++k) h[bins[t * n + k] & 15] += 1.0f;
    for (int i = 0; i < 16; ++i) out[t * 16 + i] = h[i];
}
""")
    assert dynamic.stack_bytes == 64
    assert dynamic.stack_arrays == {"h": 64}
    static = estimate("""
__global__ void scale(float* out, const float* in) {
    float v[16];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = in[t * 16 + i];
#pragma unroll
    for (int i = 0; i < 16; ++i) out[t * 16 + i] = v[i] * v[15 - i];
}
""")
    assert static.stack_bytes == 0
    assert static.registers > 16


def test_promoting_an_array_moves_it_off_the_stack():
    src = """
__global__ void gather(float* out, const float* in, const int* idx) {
    float buf[8];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 8; ++k) buf[k] = in[t * 8 + k];
    out[t] = buf[idx[t] & 7];
}
"""
    m = model_of(src)
    f = m.kernels[0]
    before = estimate_kernel(m, f, SM80)
    buf = next(v for v in f.vars if v.name == "buf")
    after = estimate_kernel(m, f, SM80, adjust=Adjustment(promote=(buf,)))
    assert before.stack_bytes == 32 and after.stack_bytes == 0


def test_half_costs_half_a_register_on_apple_only():
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void mix4(device const {T}4* a [[buffer(0)]], device {T}4* out [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {{
    {T}4 x = a[gid], y = a[gid + 1], z = a[gid + 2], w = a[gid + 3];
    out[gid] = x * y + z * w + x * w + y * z;
}}
"""
    half_m1 = estimate(src.format(T="half"), "k.metal", target=M1)
    float_m1 = estimate(src.format(T="float"), "k.metal", target=M1)
    assert half_m1.peak < float_m1.peak
    assert half_m1.registers_exact != int(half_m1.registers_exact) or half_m1.peak * 2 == int(half_m1.peak * 2)
    half_nv = estimate(src.format(T="half"), "k.metal", target=SM80)
    assert half_nv.peak <= float_m1.peak


def test_template_instances_and_bindings():
    src = """
template <int N>
__global__ void tile(float* out, const float* in) {
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; ++i) acc[i] = in[i * 128 + threadIdx.x];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) s += acc[i] * acc[N - 1 - i];
    out[threadIdx.x] = s;
}
template __global__ void tile<4>(float*, const float*);
template __global__ void tile<64>(float*, const float*);
"""
    m = model_of(src)
    f = m.kernels[0]
    assert template_instances(m, f) == [{"N": "4"}, {"N": "64"}]
    small = estimate_kernel(m, f, SM80, bindings={"N": "4"})
    big = estimate_kernel(m, f, SM80, bindings={"N": "64"})
    assert big.registers > small.registers + 40
    assert big.name == "tile<64>"
    unbound = estimate_kernel(m, f, SM80)
    assert any("unbound" in n for n in unbound.notes)


def test_nested_pragma_loops_without_braces_are_unrolled():
    # tree-sitter reads `for (...)` + `#pragma unroll` + `for` as two statements;
    # the estimator re-attaches the body.
    est = estimate("""
__global__ void outer(float* C, const float* A, const float* B, int K) {
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] += A[i * K + k] * B[k * 4 + j];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) C[i * 4 + j] = acc[i][j];
}
""")
    assert est.stack_bytes == 0
    assert est.registers >= 16


def test_clamped_to_the_register_cap_with_spills():
    src = """
__global__ void {LB} huge(float* out, const float* in, int K) {{
    float acc[300];
#pragma unroll
    for (int i = 0; i < 300; ++i) acc[i] = 0.0f;
    for (int k = 0; k < K; ++k) {{
#pragma unroll
        for (int i = 0; i < 300; ++i) acc[i] += in[k * 300 + i];
    }}
#pragma unroll
    for (int i = 0; i < 300; ++i) out[i] = acc[i];
}}
"""
    est = estimate(src.format(LB=""))
    assert est.registers == 255 and est.spill_bytes > 0 and est.stack_bytes >= est.spill_bytes
    bounded = estimate(src.format(LB="__launch_bounds__(256, 4)"))
    assert bounded.register_cap == 64 and bounded.registers == 64


def test_register_cap_from_launch_bounds():
    m = model_of("__global__ void __launch_bounds__(128, 8) k(float* p) { p[threadIdx.x] = 1.0f; }")
    assert register_cap(SM80, m.kernels[0]) == 64
    assert register_cap(M1, m.kernels[0]) == M1.max_registers_per_thread


def test_group_size_and_shared_memory():
    est = estimate("""
__global__ void __launch_bounds__(256) stage(float* out, const float* in) {
    __shared__ float a[1024];
    __shared__ double b[16][17];
    a[threadIdx.x] = in[threadIdx.x];
    b[threadIdx.x & 15][0] = a[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = a[255 - threadIdx.x] + (float)b[0][threadIdx.x & 15];
}
""")
    assert est.shared_bytes == 4096 + 16 * 17 * 8
    assert est.threads_per_group == 256
    assert est.occupancy is not None and not est.occupancy_is_bound


def test_dynamic_shared_memory_from_the_launch():
    src = """
__global__ void scan(float* d) {
    extern __shared__ float s[];
    s[threadIdx.x] = d[threadIdx.x];
    __syncthreads();
    d[threadIdx.x] = s[threadIdx.x ^ 1];
}
void run(float* d) { scan<<<4, 128, 128 * sizeof(float)>>>(d); }
"""
    est = estimate(src)
    assert est.threads_per_group == 128
    assert est.shared_bytes == 512 and not est.shared_unknown


def test_unknown_group_size_gives_a_best_case_bound():
    est = estimate("__global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }")
    assert est.threads_per_group is None and est.occupancy_is_bound
    assert est.occupancy_value == 1.0


def test_glsl_and_metal_group_sizes():
    glsl = estimate("""#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) buffer B { float data[]; };
shared float tile[64];
void main() {
    tile[gl_LocalInvocationIndex] = data[gl_GlobalInvocationID.x];
    barrier();
    data[gl_GlobalInvocationID.x] = tile[63u - gl_LocalInvocationIndex];
}
""", "k.comp", target=default_target("glsl"))
    assert glsl.threads_per_group == 64 and glsl.shared_bytes == 256
    metal = estimate("""
#include <metal_stdlib>
using namespace metal;
[[max_total_threads_per_threadgroup(128)]]
kernel void k(device float* d [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float t[128];
    t[tid] = d[tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    d[tid] = t[127 - tid];
}
""", "k.metal", target=M1)
    assert metal.threads_per_group == 128 and metal.shared_bytes == 512


MODULE_TABLE = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint glyph[]; float data[]; };
%s uint FONT[48] = uint[](%s);
void main() {
    uint i = gl_GlobalInvocationID.x;
    data[i] = float(FONT[glyph[i] %% 48u]);
}
"""


def test_glsl_module_scope_constant_table_is_constant_data():
    """A module-scope `const` table read at a run-time index is constant data (Mesa's
    nir_opt_large_constants), not 48 per-invocation values; the same table without `const` is a
    private array of each invocation, and costs registers or stack."""
    values = ",".join(f"{i}u" for i in range(48))
    glsl = default_target("glsl")
    const = estimate(MODULE_TABLE % ("const", values), "k.comp", target=glsl)
    private = estimate(MODULE_TABLE % ("", values), "k.comp", target=glsl)
    assert const.registers <= 16 and const.stack_bytes == 0
    assert private.registers >= const.registers + 8 or private.stack_bytes > 0


def test_helpers_are_inlined():
    src = """
__device__ float poly(const float* c, float x) {
    float r[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) r[i] = c[i] * x;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) s += r[i] * r[7 - i];
    return s;
}
__global__ void k(float* out, const float* c, const float* x) {
    out[threadIdx.x] = poly(c, x[threadIdx.x]);
}
"""
    est = estimate(src)
    assert any("poly" in n for n in est.notes)
    plain = estimate("__global__ void k(float* out, const float* c, const float* x) { out[threadIdx.x] = c[0] * x[threadIdx.x]; }")
    assert est.peak > plain.peak


def test_type_bytes():
    m = model_of("struct P { float3 pos; float w; }; __global__ void k(P* p) {}")
    from shaderlint.model.types import parse_type_name
    assert type_bytes(m, parse_type_name("float4")) == 16
    assert type_bytes(m, parse_type_name("double")) == 8
    mm = model_of("#include <metal_stdlib>\nkernel void k(device float* p [[buffer(0)]]) {}", "k.metal")
    assert type_bytes(mm, parse_type_name("float3")) == 16  # Metal 3-vectors take 4 lanes


@pytest.mark.parametrize("path", sorted(glob.glob("examples/*")) + sorted(glob.glob("bench/calibration/*.cu")))
def test_estimator_never_raises_on_real_kernels(path):
    lang = language_for_path(path)
    if lang is None:
        pytest.skip("not a shader")
    with open(path, "rb") as fh:
        m = build_model(FRONT_ENDS[lang].parse(Source(path, fh.read())))
    for est in estimate_file(m, default_target(lang)):
        assert est.registers >= 1
        assert est.stack_bytes >= 0 and est.shared_bytes >= 0
        assert est.registers <= default_target(lang).max_registers_per_thread


TILED = """
typedef void (*load_t)(const float* __restrict__ src, float* dst, int i);

template <int N> static __device__ __forceinline__ void load_tile(const float* __restrict__ src, float* dst, int i) {
#pragma unroll
    for (int k = 0; k < N; ++k) dst[i * N + k] = src[i * N + k] * src[i * N + k + 1] + src[i * N + k + 2];
}

template <int rows, load_t load> static __device__ __forceinline__ void tiled(const float* src, float* dst, int i) {
    float acc[rows];
#pragma unroll
    for (int r = 0; r < rows; ++r) acc[r] = src[i + r];
    load(src, dst, i);
#pragma unroll
    for (int r = 0; r < rows; ++r) dst[i + r] = acc[r];
}

__global__ void k(const float* src, float* dst) {
    const int rows = 8;
    const int width = 16;
    tiled<rows, load_tile<width>>(src, dst, threadIdx.x);
}
"""


def test_function_template_arguments_of_a_helper_are_inlined():
    """``tiled<rows, load_tile<width>>(...)``: ``rows`` (a local constant the parser reads as a type)
    sizes the helper's array, and the function argument, itself a template instance, is inlined
    where the helper calls it (ggml's ``mul_mat_q<..., load_tiles_q4_0<mmq_y>, ...>``)."""
    e = estimate(TILED)
    inlined = next(n for n in e.notes if n.startswith("inlined: "))
    assert "load_tile" in inlined, e.notes
    assert e.stack_bytes == 0 and "acc" in e.register_arrays, e.notes
    assert not any("unknown size" in n for n in e.notes), e.notes
    plain = estimate(TILED.replace("    load(src, dst, i);\n", ""))
    assert e.peak > plain.peak  # the bound function's loads and temporaries are counted


STATE = """
template <int HEAD> __global__ void k(const float* s, const float* kk, float* dst, int T, int C) {
    const int tid = threadIdx.x;
    float state[HEAD];
#pragma unroll
    for (int i = 0; i < HEAD; i++) state[i] = s[i * HEAD + tid];
    for (int t = tid; t < T; t += C) {
        const float v = kk[t];
        float y = 0;
        for (int j = 0; j < HEAD; j += 4) {
            float4 a;
            a.x = state[j] * v + kk[j];
            a.y = state[j + 1] * v + kk[j + 1];
            a.z = state[j + 2] * v + kk[j + 2];
            a.w = state[j + 3] * v + kk[j + 3];
            state[j] = a.x; state[j + 1] = a.y; state[j + 2] = a.z; state[j + 3] = a.w;
            y += a.x * a.y + a.z * a.w;
        }
        dst[t] = y;
    }
#pragma unroll
    for (int i = 0; i < HEAD; i++) dst[T * C + i * HEAD + tid] = state[i];
}
template __global__ void k<64>(const float*, const float*, float*, int, int);
"""


def test_loop_over_a_private_array_is_unrolled_past_the_plain_budget():
    """nvcc unrolls a constant-trip loop indexing a thread-private array far beyond its usual size limit
    (the array then lives in registers: llama.cpp's rwkv/gla kernels, 0 bytes of stack by ptxas); the
    same body over a global array stays rolled."""
    m = model_of(STATE)
    f = next(k for k in m.kernels if k.name == "k")
    e = estimate_kernel(m, f, SM80, bindings={"HEAD": "64"})
    assert e.stack_bytes == 0 and "state" in e.register_arrays, e.notes
    assert e.registers >= 64
    tight = estimate_kernel(m, f, SM80, bindings={"HEAD": "64"},
                            coefficients=replace(DEFAULT_COEFFICIENTS, array_unroll_boost=1.0))
    assert tight.stack_bytes == 256  # without the boost the loop is rolled and the array on the stack


RUNTIME = """
__global__ void k(const float* __restrict__ a, const float* __restrict__ b, float* out, int n) {
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += 32) {
        acc += a[i] * b[i] + a[i + n] * b[i + n];
        BODY
    }
    out[threadIdx.x] = acc;
}
"""


def test_runtime_unroll_latency_only_for_small_loops_without_collectives():
    """A small counted loop is unrolled at run time (loads of several iterations in flight); one that
    calls a warp collective, or whose body is large, runs one iteration at a time."""
    small = estimate(RUNTIME.replace("BODY", ""))
    shfl = estimate(RUNTIME.replace("BODY", "acc = __shfl_xor_sync(0xffffffff, acc, 1);"))
    assert shfl.peak < small.peak
    big = estimate(RUNTIME.replace("BODY", ""), coefficients=replace(DEFAULT_COEFFICIENTS, runtime_unroll_budget=5))
    assert big.peak < small.peak


HEADER = """
#pragma once
static __device__ __forceinline__ void dequant(const float* __restrict__ x, int ib, float* y, int tid) {
    float a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = x[ib * 64 + tid * 8 + k] * x[ib * 64 + k];
#pragma unroll
    for (int k = 0; k < 8; ++k) y[tid * 8 + k] = a[k] * a[7 - k] + a[(k + 1) % 8];
}
"""

CALLER = """
#include "quant.cuh"
#include <cuda_fp16.h>
__global__ void k(const float* x, float* y) {
    const int i = blockIdx.x;
    dequant(x, i, y + i * 256, threadIdx.x);
}
"""


def test_helpers_of_the_project_headers_are_inlined(tmp_path):
    """A kernel calling a helper of a header it includes (llama.cpp's convert.cu and dequantize.cuh): the
    helper is walked as nvcc inlines it, not costed as nothing; without the header the call is unknown."""
    (tmp_path / "quant.cuh").write_text(HEADER)
    src = tmp_path / "convert.cu"
    src.write_text(CALLER)
    e = estimate(CALLER, path=str(src))
    assert any(n.startswith("inlined: ") and "dequant" in n for n in e.notes), e.notes
    (tmp_path / "quant.cuh").unlink()
    alone = estimate(CALLER, path=str(src))
    assert not any(n.startswith("inlined: ") for n in alone.notes)
    assert e.registers >= alone.registers + 8  # the eight values of `a` and their loads


NS_HEADER = """
#pragma once
namespace quant {
template <int N>
__device__ __forceinline__ void dequant(const float* __restrict__ x, int ib, float* y, int tid) {
    float a[N];
#pragma unroll
    for (int k = 0; k < N; ++k) a[k] = x[ib * 64 + tid * N + k] * x[ib * 64 + k];
#pragma unroll
    for (int k = 0; k < N; ++k) y[tid * N + k] = a[k] * a[N - 1 - k] + a[(k + 1) % N];
}
}
"""

INCLUDE_DIR_CALLER = """
#include "quant/ops.cuh"
__global__ void k(const float* x, float* y) {
    const int i = blockIdx.x;
    quant::dequant<8>(x, i, y + i * 256, threadIdx.x);
}
"""


def test_helpers_of_headers_on_the_include_path_are_inlined(tmp_path, monkeypatch):
    """deepspeed's ``#include "reduction_utils.h"`` found through ``-I csrc/includes``, calling
    ``reduce::partitioned<ROp::Add, N>(...)``: with ``CONTEXT_HELPERS`` the helper comes from the
    headers the file's project context read (as lint builds it), with its template arguments bound;
    the file alone, whose directory holds no such header, sees nothing. Off (the shipped default, see
    headers.CONTEXT_HELPERS), the call stays unseen even with the context."""
    from shaderlint.config import Settings
    from shaderlint.engine import lint_source
    from shaderlint.estimate import headers
    from shaderlint.project.includes import Project

    monkeypatch.setattr(headers, "CONTEXT_HELPERS", True)

    inc = tmp_path / "includes" / "quant"
    inc.mkdir(parents=True)
    (inc / "ops.cuh").write_text(NS_HEADER)
    src = tmp_path / "kernels" / "convert.cu"
    src.parent.mkdir()
    src.write_text(INCLUDE_DIR_CALLER)
    data = INCLUDE_DIR_CALLER.encode()
    settings = Settings(include_dirs=(str(tmp_path / "includes"),))
    ctx = Project().context(str(src), data, settings, "cuda")
    assert [p for p, _ in ctx.files] == [str(inc / "ops.cuh")]
    m = lint_source(str(src), data, settings, file_context=ctx).model
    assert m.parsed.headers == ctx.files
    e = estimate_kernel(m, m.kernels[0], SM80)
    assert any(n.startswith("inlined: ") and "dequant" in n for n in e.notes), e.notes
    assert e.unseen_calls == ()
    alone = estimate(INCLUDE_DIR_CALLER, path=str(src))
    # found nowhere the walk looked: named, but no claim that the figure is low
    assert alone.unseen_calls == () and any(n.startswith("calls dequant: not found") for n in alone.notes)
    assert e.registers >= alone.registers + 8  # the eight values of `a` (N bound to 8) and their loads
    two = INCLUDE_DIR_CALLER.replace("dequant<8>", "dequant<2>").encode()
    m2 = lint_source(str(src), two, settings, file_context=ctx).model
    assert estimate_kernel(m2, m2.kernels[0], SM80).registers <= e.registers - 4  # N bound through `quant::`
    monkeypatch.setattr(headers, "CONTEXT_HELPERS", False)
    off = lint_source(str(src), data, settings, file_context=ctx).model
    e_off = estimate_kernel(off, off.kernels[0], SM80)
    assert e_off.unseen_calls == () and any(n.startswith("calls dequant: not found") for n in e_off.notes)


SIZEOF_T = """
namespace ln { constexpr int granularity = 16; }
template <typename T, int unRoll>
__global__ void k(const T* x, float* y) {
    constexpr int T_per_load = ln::granularity / sizeof(T);
    T buf[unRoll * T_per_load];
#pragma unroll
    for (int i = 0; i < unRoll * T_per_load; i++) buf[i] = x[threadIdx.x * 64 + i];
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < unRoll * T_per_load; i++) s += (float)buf[i] * (float)buf[unRoll * T_per_load - 1 - i];
    y[threadIdx.x] = s;
}
"""


def test_sizeof_a_bound_type_parameter_is_folded():
    """deepspeed's ``T local_buffer[unRoll * (ln::granularity / sizeof(T))]``: with T and unRoll bound
    the array's size is known and grows with unRoll (it was an array of unknown size, the same
    estimate for every instance); the size is per binding, not memoized across instances."""
    m = model_of(SIZEOF_T)
    f = m.kernels[0]
    est = {u: estimate_kernel(m, f, SM80, bindings={"T": "float", "unRoll": u}) for u in ("1", "4", "8")}
    assert est["1"].registers < est["4"].registers < est["8"].registers
    assert not any("unknown size" in n for n in est["4"].notes), est["4"].notes
    char = estimate_kernel(m, f, SM80, bindings={"T": "char", "unRoll": "1"})
    assert char.registers > est["1"].registers  # 16 chars per 16-byte load, not 4 floats


def test_libdevice_functions_cost_what_ptxas_measured():
    """sinf's slow-path argument reduction takes about 12 registers more than a multiply (ptxas, sm_80
    and sm_90), expf about 2: the costs are per function, not one figure for every libdevice call."""
    body = "__global__ void k(const float* x, float* y) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = {}(x[i]); }}"
    sin, exp = estimate(body.format("sinf")), estimate(body.format("expf"))
    assert sin.registers >= exp.registers + 8


TYPEDEF_FN = """
typedef void (*dequantize_kernel_t)(const float* vx, int ib, float& v);
static __device__ void dequantize_q8(const float* vx, int ib, float& v) {
    v = vx[ib] * vx[ib + 1] + vx[ib + 2] * vx[ib + 3];
}
template <int qk, dequantize_kernel_t dequantize_kernel>
__global__ void dequantize_block(const float* vx, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v;
    dequantize_kernel(vx, i * qk, v);
    y[i] = v;
}
"""


def test_function_template_parameter_declared_through_a_typedef_is_bound():
    """ggml's ``template <int qk, dequantize_kernel_t dequantize_kernel>``: the parameter's type is a
    typedef of a function-pointer type; bound to a function of the file, the call is inlined."""
    m = model_of(TYPEDEF_FN)
    f = next(k for k in m.kernels if k.name == "dequantize_block")
    e = estimate_kernel(m, f, SM80, bindings={"qk": "32", "dequantize_kernel": "dequantize_q8"})
    assert any(n.startswith("inlined: ") and "dequantize_q8" in n for n in e.notes), e.notes


def test_calls_into_unseen_code_are_named():
    """A call to a function neither the file nor its headers define is code the walk cannot see: the
    estimate names it; builtins, intrinsics and atomics it costs by rule are not. It says "likely low"
    only where the code is known to exist (a functor, a function pointer, a declaration, cuRAND)."""
    e = estimate("""
__global__ void k(float* y, const float* x) {
    int i = threadIdx.x;
    float v = lib::transform<float, 4>(x[i]) + expf(x[i]);
    atomicAdd(y, __shfl_xor_sync(0xffffffff, v, 1));
    y[i] = fmaxf(v, 0.f) + static_cast<float>(i) + make_float2(v, v).x;
}
""")
    # a name found nowhere (a library's header not read): named, without the "likely low" claim
    assert e.unseen_calls == ()
    assert any(n.startswith("calls transform: not found") for n in e.notes), e.notes
    assert not any(n.startswith("calls code not seen") for n in e.notes), e.notes
    assert estimate("__global__ void k(float* y) { y[threadIdx.x] = sinf(y[0]); }").unseen_calls == ()
    # code known to exist and left out: a call through a functor (its operator() is not walked)
    f = estimate("template <typename F> __global__ void k(F op, float* y) { y[threadIdx.x] = op(y[0]); }")
    assert f.unseen_calls == ("op",)
    assert any(n.startswith("calls code not seen (op)") for n in f.notes), f.notes
    # a functional cast to a fixed-width integer type (llama.cpp's `int64_t(i) * ne00`) is not code
    cast = estimate("#include <cstdint>\n__global__ void k(float* y, const float* x, int n) {\n"
                    "    int64_t i = int64_t(blockIdx.x) * n + uint32_t(threadIdx.x);\n    y[i] = x[i];\n}\n")
    assert cast.unseen_calls == (), cast.unseen_calls


UNIFORM_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; uint s0; uint s1; uint s2; uint s3; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    const uint base = SEED;
    const uint o0 = base * p.s0, o1 = base * p.s1, o2 = base * p.s2, o3 = base * p.s3;
    const uint o4 = o0 + o1, o5 = o1 + o2, o6 = o2 + o3, o7 = o3 + o0;
    float acc = 0.0;
    for (uint i = 0; i < p.n; ++i) {
        acc += a[i * 64 + gl_LocalInvocationID.x];
    }
    d[gl_GlobalInvocationID.x] = acc + a[o0] + a[o1] + a[o2] + a[o3] + a[o4] + a[o5] + a[o6] + a[o7];
}
"""


def test_uniform_integers_take_no_vgprs_on_amd():
    """On AMD, integers uniform across the wave (push constants, workgroup IDs, loop counters over them)
    live in scalar registers: only per-invocation values count as VGPRs. The same offsets computed
    from the invocation ID take eight VGPRs more; on NVIDIA both cost the same."""
    rdna = get_target("rdna2-wave64")
    uniform = estimate(UNIFORM_GLSL.replace("SEED", "gl_WorkGroupID.x"), path="k.comp", target=rdna)
    divergent = estimate(UNIFORM_GLSL.replace("SEED", "gl_LocalInvocationID.x"), path="k.comp", target=rdna)
    assert divergent.peak >= uniform.peak + 8
    generic = get_target("generic-32")
    assert estimate(UNIFORM_GLSL.replace("SEED", "gl_WorkGroupID.x"), path="k.comp", target=generic).peak \
        >= uniform.peak + 8


def test_divergent_vars_follow_values_and_control():
    from shaderlint.estimate.uniform import divergent_vars

    m = model_of("""#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; } p;
shared float s[64];
void main() {
    uint a = p.n * 2u;
    uint b = gl_LocalInvocationID.x;
    uint c = a + 1u;
    uint e = 0u;
    if (b < 3u) { e = 1u; }
    uint f = uint(s[a]);
    for (uint i = 0u; i < p.n; ++i) { c += i; }
}
""", path="k.comp")
    names = {v.name for vs in m._vars_by_name.values() for v in vs if id(v) in divergent_vars(m)}
    assert names == {"b", "e", "f"}


RANGE_CLASS = """
class stride_range {
public:
    __device__ stride_range(size_t b, size_t e) : b_(b), e_(e) {}
    class iterator {
    public:
        __device__ iterator(size_t p) : p_(p) {}
        __device__ size_t operator*() const { return p_; }
        __device__ iterator& operator++() { p_ += (size_t)gridDim.x * blockDim.x; return *this; }
        __device__ bool operator!=(const iterator& o) const { return p_ < o.p_; }
    private:
        size_t p_;
    };
    __device__ iterator begin() const { return iterator(b_ + blockIdx.x * blockDim.x + threadIdx.x); }
    __device__ iterator end() const { return iterator(e_); }
private:
    size_t b_, e_;
};
"""

RANGE_KERNEL = """
__global__ void k(float* out, const float* a, const float* b, float s, size_t n) {
    for (auto i : stride_range(0, n)) out[i] = a[i] * s + b[i] * b[i];
}
"""

RANGE_EXPLICIT = """
__global__ void k(float* out, const float* a, const float* b, float s, size_t n) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = a[i] * s + b[i] * b[i];
}
"""


def test_range_based_for_over_a_class_keeps_its_iterators(tmp_path):
    """``for (auto i : stride_range(0, n))`` (dlib's grid_stride_range) is ``begin()``/``end()`` iterators
    live through the loop and ``i = *it``, a size_t: as costly as the explicit 64-bit grid-stride loop
    it inlines to (ptxas, nvcc 13.0: 18 registers for both on sm_80, 14 on sm_90), not a loop over one
    unknown value. The class may sit in a header next to the file."""
    explicit = estimate(RANGE_EXPLICIT)
    ranged = estimate(RANGE_CLASS + RANGE_KERNEL)
    assert abs(ranged.registers - explicit.registers) <= 2, (ranged.registers, explicit.registers)
    assert ranged.registers >= explicit.registers
    (tmp_path / "range.cuh").write_text("#pragma once\n#include <cstddef>\n" + RANGE_CLASS)
    src = '#include "range.cuh"\n' + RANGE_KERNEL
    (tmp_path / "k.cu").write_text(src)
    assert estimate(src, path=str(tmp_path / "k.cu")).registers == ranged.registers
    # a range the walk cannot see into stays a loop over the range expression
    unknown = estimate(RANGE_KERNEL.replace("stride_range(0, n)", "lib::rows(n)"))
    assert unknown.registers < ranged.registers


LAMBDA_KERNELS = """
template <typename F>
__device__ void each(int n, F f) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) f(i);
}
__global__ void k_lambda(float* out, const float* a, const float* b, float s, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    auto f = [&](float x, float y) { return x * s + y * y + a[t + 1] * b[t + 2]; };
    if (t < n) out[t] = f(a[t], b[t]);
}
__global__ void k_plain(float* out, const float* a, const float* b, float s, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = a[t] * s + b[t] * b[t] + a[t + 1] * b[t + 2];
}
__global__ void k_each(float* out, const float* a, const float* b, float s, int n) {
    each(n, [&](int i) { out[i] = a[i] * s + b[i] * b[i] + a[i + 1] * b[i + 2]; });
}
__global__ void k_each_plain(float* out, const float* a, const float* b, float s, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = a[i] * s + b[i] * b[i] + a[i + 1] * b[i + 2];
}
"""


def test_lambdas_are_inlined_at_their_calls():
    """nvcc inlines a lambda where it is called (ptxas, nvcc 13.0: each pair below compiles to the same
    registers, 14 on sm_80): a local lambda called by name, and one passed to a helper that calls its
    parameter, are walked with their captures read from the frame they were defined in; they are not
    calls into unseen code costing their arguments only."""
    lam, plain = estimate(LAMBDA_KERNELS, kernel="k_lambda"), estimate(LAMBDA_KERNELS, kernel="k_plain")
    assert lam.unseen_calls == ()
    assert abs(lam.registers - plain.registers) <= 1, (lam.registers, plain.registers)
    each, each_plain = estimate(LAMBDA_KERNELS, kernel="k_each"), estimate(LAMBDA_KERNELS, kernel="k_each_plain")
    assert each.unseen_calls == ()
    assert abs(each.registers - each_plain.registers) <= 1, (each.registers, each_plain.registers)


def test_default_template_arguments_of_a_helper_are_bound():
    """``copy<8>(...)`` of ``template <int nbytes, int step = 0>`` (llama.cpp's ``ggml_cuda_memcpy_1``):
    the default is instantiated, so the unrolled copy loop has its trip count."""
    src = """
template <int nbytes, int step = 0>
__device__ __forceinline__ void copy(float* __restrict__ dst, const float* __restrict__ src) {
    constexpr int per = step == 0 ? 1 : step;
#pragma unroll
    for (int i = 0; i < nbytes / per; ++i) dst[i] = src[i] * src[nbytes - 1 - i];
}
__global__ void k(float* y, const float* x) { copy<CALL>(y + threadIdx.x * 8, x + blockIdx.x * 8); }
"""
    implicit = estimate(src.replace("CALL", "8"))
    explicit = estimate(src.replace("CALL", "8, 0"))
    assert implicit.registers == explicit.registers
    assert implicit.peak == explicit.peak


OVERLOADS = """
__device__ __forceinline__ int red(int x) { return x + 1; }
__device__ __forceinline__ float4 red(float4 a) {
    for (int o = 16; o > 0; o >>= 1) {
        a.x += __shfl_xor_sync(0xffffffff, a.x, o); a.y += __shfl_xor_sync(0xffffffff, a.y, o);
        a.z += __shfl_xor_sync(0xffffffff, a.z, o); a.w += __shfl_xor_sync(0xffffffff, a.w, o);
    }
    return a;
}
__device__ __forceinline__ float red(float a) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffff, a, o);
    return a;
}
"""

OVERLOAD_CALLER = """
__global__ void k_float(float* out, const float* x) { out[threadIdx.x] = red(x[threadIdx.x]); }
__global__ void k_float4(float4* out, const float4* x) { float4 v = x[threadIdx.x]; out[threadIdx.x] = red(v); }
"""


def test_overloads_are_resolved_by_argument_types(tmp_path):
    """Overloads of one name with the same parameter count (llama.cpp's ``warp_reduce_sum`` for int,
    float, float2, half2): the walk inlines the one whose parameter types the arguments have, in
    the file (it took the first definition) and in a header next to it (the call stayed unknown).
    ptxas 13.0 gives the float4 caller 18 registers and the float one 14 on sm_80."""
    src = OVERLOADS + OVERLOAD_CALLER
    f4, f1 = estimate(src, kernel="k_float4"), estimate(src, kernel="k_float")
    assert f4.registers >= f1.registers + 4, (f4.registers, f1.registers)  # four lanes reduced
    (tmp_path / "red.cuh").write_text("#pragma once\n" + OVERLOADS)
    hsrc = '#include "red.cuh"\n' + OVERLOAD_CALLER
    (tmp_path / "k.cu").write_text(hsrc)
    h4 = estimate(hsrc, path=str(tmp_path / "k.cu"), kernel="k_float4")
    assert h4.unseen_calls == () and any(n.startswith("inlined: ") for n in h4.notes), h4.notes
    assert h4.registers == f4.registers


def test_type_template_parameters_of_a_helper_are_deduced_from_its_arguments():
    """``twice(x[i], x)`` of ``template <typename T> T twice(T v, const T* p)``: T is what the
    arguments are (double here, 2 registers a value), as the compiler deduces it; it was one
    unknown register whatever the arguments. ptxas 13.0, sm_80: 16 registers with double, 14 with
    float."""
    src = """
template <typename T>
__device__ T twice(T v, const T* p) {
    T a = v; T b = p[threadIdx.x]; T c = p[threadIdx.x + 32]; T d = p[threadIdx.x + 64];
    return a * b + c * d;
}
__global__ void k_d(double* out, const double* x) { out[threadIdx.x] = twice(x[blockIdx.x], x); }
__global__ void k_f(float* out, const float* x) { out[threadIdx.x] = twice(x[blockIdx.x], x); }
__global__ void k_e(double* out, const double* x) { out[threadIdx.x] = twice<double>(x[blockIdx.x], x); }
"""
    d, f, e = (estimate(src, kernel=k) for k in ("k_d", "k_f", "k_e"))
    assert d.registers >= f.registers + 3, (d.registers, f.registers)
    assert e.registers == d.registers


def test_lambda_parameters_given_constants_index_arrays_statically():
    """A lambda called with constants (an unrolled counter) indexes a private array statically in
    each inlined copy (ptxas 13.0, sm_80: 0 bytes of stack frame); one called with a run-time value
    does not (32 bytes of stack frame)."""
    src = """
__global__ void lambda_local(const float* __restrict__ in, float* __restrict__ out) {
    float frag[2][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) frag[i / 4][i % 4] = in[i * blockDim.x + threadIdx.x];
    auto step = [&](int k) { int k2 = k % 2; return frag[k2][0] + frag[k2][3]; };
    float v = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) v += step(k);
    out[threadIdx.x] = v;
}
__global__ void lambda_lane(const long long* __restrict__ in, float* __restrict__ out) {
    long long vals[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) vals[i] = in[i * blockDim.x + threadIdx.x];
    auto pick = [&](int i) { return vals[i]; };
    out[threadIdx.x] = (float)(pick(0) + pick(threadIdx.x & 3));
}
"""
    local, lane = estimate(src, kernel="lambda_local"), estimate(src, kernel="lambda_lane")
    assert local.stack_bytes == 0 and local.register_arrays == ["frag"], (local.stack_bytes, local.notes)
    assert lane.stack_bytes == 32, (lane.stack_bytes, lane.notes)


SPEC_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const bool WIDE = DEFAULT;
layout(binding = 0) readonly buffer A { vec4 a[]; };
layout(binding = 1) writeonly buffer D { vec4 d[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (WIDE) {
        vec4 x0 = a[i], x1 = a[i + 64], x2 = a[i + 128], x3 = a[i + 192];
        vec4 x4 = a[i + 256], x5 = a[i + 320], x6 = a[i + 384], x7 = a[i + 448];
        d[i] = x0 * x1 + x2 * x3 + x4 * x5 + x6 * x7;
    } else {
        d[i] = a[i] * 2.0;
    }
}
"""


@pytest.mark.parametrize("target", ["rdna2-wave64", "generic-32"])
def test_glsl_specialization_constants_at_their_default(target):
    """A specialization constant is compiled at its declared default when the application sets none
    (what RADV measures): the estimate takes the branch the default selects, not both."""
    t = get_target(target)
    narrow = estimate(SPEC_GLSL.replace("DEFAULT", "false"), path="k.comp", target=t)
    wide = estimate(SPEC_GLSL.replace("DEFAULT", "true"), path="k.comp", target=t)
    assert wide.peak >= narrow.peak + 16, (narrow.peak, wide.peak)


def test_glsl_specialization_constants_the_host_sets():
    """The value the host's pipelines set (host index: ``model.pipeline_specialization``) wins over the
    declared default."""
    t = get_target("rdna2-wave64")
    m = model_of(SPEC_GLSL.replace("DEFAULT", "false"), "k.comp")
    narrow = estimate_kernel(m, m.kernels[0], t).peak
    m2 = model_of(SPEC_GLSL.replace("DEFAULT", "false"), "k.comp")
    m2.pipeline_specialization = ((0, 1),)
    assert estimate_kernel(m2, m2.kernels[0], t).peak >= narrow + 16


def test_aco_scheduler_budget():
    """ACO's scheduler wave target and register budget (Mesa 22.3, aco_scheduler.cpp): up to 7 waves'
    worth (x2 on RDNA2 wave64) below a demand of 25 VGPRs, 6 from 25, 5 from 29, the shader's own waves
    when fewer; the budget is what one wave may address at that target, less 2."""
    from shaderlint.estimate import aco

    rdna = get_target("rdna2-wave64")
    assert aco.vgpr_granule(rdna) == 8 and aco.simd_vgprs(rdna) == 512
    assert [aco.scheduler_budget(rdna, d) for d in (5, 24, 25, 29, 60, 200)] == [30, 30, 38, 46, 62, 254]
    gfx9 = get_target("gfx9")
    assert aco.vgpr_granule(gfx9) == 4 and aco.simd_vgprs(gfx9) == 256
    assert [aco.scheduler_budget(gfx9, d) for d in (5, 25, 29, 60)] == [34, 38, 46, 62]
    assert aco.vgpr_granule(get_target("rdna2-wave32")) == 16 and aco.simd_vgprs(get_target("rdna2-wave32")) == 1024
    # the wave target in multiples of f (SIMD VGPRs / 256), rounded down: RDNA3 wave32 (f 6) reaches 16 waves
    # with a small demand, 12 for the budget, 118 VGPRs; RDNA2 wave64 at 5 waves (83 VGPRs, llama.cpp's
    # gla.comp) targets 4, 126 VGPRs (RADV on the null device: gla.comp 128, 120 on gfx1100 wave32)
    rdna3 = get_target("rdna3-wave32")
    assert [aco.scheduler_budget(rdna3, d) for d in (5, 94)] == [118, 118]
    assert aco.scheduler_budget(rdna, 83) == 126
    assert aco.scheduler_budget(get_target("rdna2-wave32"), 5) == 62


COPY16_GLSL = """#version 450
layout(local_size_x = 256) in;
layout(push_constant) uniform P { uint n; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
shared float s[256];
void main() {
    const uint i = gl_GlobalInvocationID.x * 16;
    if (i >= p.n) { return; }
    [[unroll]] for (uint l = 0; l < 16; l++) {
        d[i + l] = a[i + l] * 2.0;
        BARRIER
    }
}
"""


def test_amd_scheduler_moves_the_loads_of_unrolled_copies_up():
    """ACO's scheduler moves the loads of an unrolled loop's copies up within their block, as far as its
    register budget allows (llama.cpp's dequant_f32.comp: 5 VGPRs before scheduling, 24 allocated); a
    barrier in the body makes each copy a block of its own, and nothing moves."""
    rdna = get_target("rdna2-wave64")
    straight = estimate(COPY16_GLSL.replace("BARRIER", ""), path="k.comp", target=rdna)
    blocked = estimate(COPY16_GLSL.replace("BARRIER", "barrier();"), path="k.comp", target=rdna)
    assert 16 < straight.registers <= 32, straight.registers
    assert blocked.registers == 8, blocked.registers
    # sixteen vec4 loads would take 64 VGPRs: the scheduler stops at its budget (30 for this demand)
    wide = estimate(COPY16_GLSL.replace("BARRIER", "").replace("float a[]", "vec4 a[]").replace("float d[]", "vec4 d[]"),
                    path="k.comp", target=rdna)
    assert 24 < wide.registers <= 30, wide.registers


RUNTIME_LOOP_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; } p;
layout(binding = 0) readonly buffer A { vec4 a[]; };
layout(binding = 1) writeonly buffer D { vec4 d[]; };
void main() {
    const uint t = gl_LocalInvocationID.x;
    vec4 acc = vec4(0.0);
    for (uint i = 0; i < p.n; ++i) {
        acc += a[i * 64 + t] * a[i * 64 + t + 32];
    }
    d[gl_GlobalInvocationID.x] = acc;
}
"""


def test_amd_runtime_loops_are_not_unrolled():
    """NIR unrolls only loops whose trip count it knows: a loop over a push constant runs one iteration at a
    time on AMD (no further iterations' loads in flight), while ptxas unrolls it by 4."""
    rdna = get_target("rdna2-wave64")
    assert estimate(RUNTIME_LOOP_GLSL, path="k.comp", target=rdna).registers <= 16
    assert estimate(RUNTIME_LOOP_GLSL, path="k.comp", target=get_target("generic-32")).peak >= 24
    # nor in part when asked (llama.cpp's pool1d.comp: `#pragma unroll` over a window set at run time)
    pragma = RUNTIME_LOOP_GLSL.replace("    for (uint i = 0; i < p.n; ++i)", "    #pragma unroll\n    for (uint i = 0; i < p.n; ++i)")
    assert "#pragma unroll" in pragma
    assert estimate(pragma, path="k.comp", target=rdna).registers == estimate(RUNTIME_LOOP_GLSL, path="k.comp",
                                                                               target=rdna).registers


PREPROC_GLSL = """#version 450
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    const uint i = gl_GlobalInvocationID.x * 8;
    [[unroll]] for (uint l = 0; l < 8; l++) {
BODY
    }
}
"""


@pytest.mark.parametrize("target", ["rdna2-wave64", "gfx9"])
def test_glsl_undecided_preprocessor_branches_are_alternatives(target):
    """An #if/#elif/#else group whose macros are not known compiles one branch: the estimate walks its
    branches as alternatives (llama.cpp's contig_copy.comp: four variants of one copy, RADV 8 VGPRs), not
    as four copies in a row whose loads would all be in flight."""
    t = get_target(target)
    one = estimate(PREPROC_GLSL.replace("BODY", "        d[i + l] = a[i + l];"), path="k.comp", target=t)
    three = estimate(PREPROC_GLSL.replace("BODY", "#if defined(A_BF16)\n        d[i + l] = a[i + l] * 2.0;\n"
                                                  "#elif defined(D_BF16)\n        d[i + l] = a[i + l] * 3.0;\n"
                                                  "#else\n        d[i + l] = a[i + l];\n#endif"),
                     path="k.comp", target=t)
    assert three.registers == one.registers, (one.registers, three.registers)


def test_glsl_helpers_of_included_files_are_inlined(tmp_path):
    """glslang compiles a helper of a file the shader #includes (llama.cpp's vulkan-shaders keep their index
    math in generic_binary_head.glsl and utils.glsl) into the shader: the walk inlines it, as it does CUDA's."""
    (tmp_path / "helpers.glsl").write_text("""
layout(binding = 0) readonly buffer A { vec4 a[]; };
vec4 sum8(uint i) {
    vec4 x0 = a[i], x1 = a[i + 64], x2 = a[i + 128], x3 = a[i + 192];
    vec4 x4 = a[i + 256], x5 = a[i + 320], x6 = a[i + 384], x7 = a[i + 448];
    return x0 * x1 + x2 * x3 + x4 * x5 + x6 * x7;
}
""")
    shader = tmp_path / "k.comp"
    shader.write_text("""#version 450
#extension GL_GOOGLE_include_directive : enable
layout(local_size_x = 64) in;
#include "helpers.glsl"
layout(binding = 1) writeonly buffer D { vec4 d[]; };
void main() {
    d[gl_GlobalInvocationID.x] = sum8(gl_GlobalInvocationID.x);
}
""")
    m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
    e = estimate_kernel(m, m.kernels[0], get_target("rdna2-wave64"))
    assert any(n.startswith("inlined: sum8") for n in e.notes), e.notes
    assert e.peak >= 16, e.peak


def test_invocation_id_along_an_axis_of_size_one_is_uniform_on_amd():
    """gl_GlobalInvocationID.y is gl_WorkGroupID.y when local_size_y is 1 (gl_LocalInvocationID.y is 0): the
    same in every invocation, a scalar register on AMD (llama.cpp's im2col and mul_mat_vec_p021 index rows
    and channels so). Along an axis larger than 1 it is per-invocation."""
    rdna = get_target("rdna2-wave64")
    flat = estimate(UNIFORM_GLSL.replace("SEED", "gl_GlobalInvocationID.y"), path="k.comp", target=rdna)
    workgroup = estimate(UNIFORM_GLSL.replace("SEED", "gl_WorkGroupID.y"), path="k.comp", target=rdna)
    tall = estimate(UNIFORM_GLSL.replace("SEED", "gl_GlobalInvocationID.y")
                    .replace("layout(local_size_x = 64) in;", "layout(local_size_x = 64, local_size_y = 2) in;"),
                    path="k.comp", target=rdna)
    assert flat.peak == workgroup.peak
    assert tall.peak >= flat.peak + 8
    assert estimate(UNIFORM_GLSL.replace("SEED", "gl_GlobalInvocationID.x"), path="k.comp", target=rdna).peak \
        >= flat.peak + 8


INDEXED_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint k; uint n; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float arr[N];
    for (uint j = 0; j < N; ++j) arr[j] = a[i * N + j];
    float s = 0.0;
    for (uint j = 0; j < p.n; ++j) s += arr[(j * 7u + i) % N];
    d[i] = s;
}
"""


def test_amd_arrays_indexed_at_run_time_stay_in_vgprs_up_to_64():
    """RADV (Mesa 22.3, measured on navi21): a private array of up to 64 floats indexed by a run-time value
    stays in VGPRs (72 allocated for 64, no scratch); from 65 it goes to scratch, whose accesses cost no
    more VGPRs than the loads around them (32 allocated for 65 and for 128)."""
    rdna = get_target("rdna2-wave64")
    in_vgprs = estimate(INDEXED_GLSL.replace("N", "64"), path="k.comp", target=rdna)
    assert in_vgprs.registers >= 64 and in_vgprs.stack_bytes == 0, (in_vgprs.registers, in_vgprs.stack_bytes)
    scratch = estimate(INDEXED_GLSL.replace("N", "65"), path="k.comp", target=rdna)
    assert scratch.stack_bytes == 260 and scratch.registers <= 32, (scratch.registers, scratch.stack_bytes)
    # NVIDIA: local memory from the first dynamic index (ptxas keeps no indexed register arrays)
    assert estimate(INDEXED_GLSL.replace("N", "16"), path="k.comp", target=get_target("generic-32")).stack_bytes == 64


def test_glsl_specialization_constants_of_included_files(tmp_path):
    """A specialization constant an included file declares (llama.cpp: NUM_ROWS in mul_mat_vec_base.glsl)
    takes its default in the shader's own code too: the array it sizes has a known size."""
    (tmp_path / "base.glsl").write_text("layout(constant_id = 1) const uint NUM = 4;\n")
    shader = tmp_path / "k.comp"
    shader.write_text("""#version 450
#extension GL_GOOGLE_include_directive : enable
layout(local_size_x = 64) in;
#include "base.glsl"
layout(push_constant) uniform P { uint k; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float acc[NUM];
    [[unroll]] for (uint j = 0; j < NUM; ++j) acc[j] = a[i * NUM + j];
    d[i] = acc[(p.k + i) % NUM];
}
""")
    m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
    e = estimate_kernel(m, m.kernels[0], get_target("generic-32"))
    assert e.stack_bytes == 16 and not any("unknown size" in n for n in e.notes), (e.stack_bytes, e.notes)


OUT_ARGS_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void split4(uint v, out uint q0, out uint q1, out uint q2, out uint q3) {
    q0 = v * 3u; q1 = v * 5u; q2 = v * 7u; q3 = v * 11u;
}
void main() {
    uint q0, q1, q2, q3;
    split4(SEED, q0, q1, q2, q3);
    float acc = 0.0;
    for (uint i = 0; i < p.n; ++i) {
        acc += a[i * 64 + gl_LocalInvocationID.x];
    }
    d[gl_GlobalInvocationID.x] = acc + a[q0] + a[q1] + a[q2] + a[q3];
}
"""


def test_amd_out_arguments_are_as_divergent_as_the_call():
    """A local a helper assigns through an out parameter (llama.cpp's get_indices(idx, i00, i01, i02, i03))
    takes the helper's value: per-invocation when its inputs are, a VGPR on AMD; it was left uniform."""
    rdna = get_target("rdna2-wave64")
    uniform = estimate(OUT_ARGS_GLSL.replace("SEED", "gl_WorkGroupID.x"), path="k.comp", target=rdna)
    divergent = estimate(OUT_ARGS_GLSL.replace("SEED", "gl_LocalInvocationID.x"), path="k.comp", target=rdna)
    assert divergent.peak >= uniform.peak + 4, (uniform.peak, divergent.peak)


OVERLOADS_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer A { vec4 a[]; };
layout(binding = 1) writeonly buffer D { vec4 d[]; };
vec4 dot8(uint i, uint s) {
    vec4 x0 = a[i], x1 = a[i + s], x2 = a[i + 2u * s], x3 = a[i + 3u * s];
    vec4 x4 = a[i + 4u * s], x5 = a[i + 5u * s], x6 = a[i + 6u * s], x7 = a[i + 7u * s];
    return x0 * x7 + x1 * x6 + x2 * x5 + x3 * x4;
}
vec4 dot8(uint i) { return dot8(i, 64u); }
void main() {
    d[gl_GlobalInvocationID.x] = dot8(gl_GlobalInvocationID.x);
}
"""


def test_glsl_overloads_resolved_by_arity():
    """GLSL overloads a helper by its parameters (llama.cpp's get_indices with 5 and 9): a call takes the
    overload with as many parameters, not whichever the name finds first."""
    e = estimate(OVERLOADS_GLSL, path="k.comp", target=get_target("rdna2-wave64"))
    assert any(n == "inlined: dot8, dot8" for n in e.notes), e.notes
    assert e.peak >= 16, e.peak


HEADER_HELPER = """
uint mix8(uint v, uint s0, uint s1, uint s2, uint s3, uint s4, uint s5, uint s6, uint s7) {
    uint o0 = v * 3u, o1 = v * 5u + 1u, o2 = v * 7u + 2u, o3 = v * 11u + 3u;
    uint o4 = v * 13u, o5 = v * 17u, o6 = v * 19u, o7 = v * 23u;
    return o0 * s0 + o1 * s1 + o2 * s2 + o3 * s3 + o4 * s4 + o5 * s5 + o6 * s6 + o7 * s7;
}
"""

HEADER_CALLER = """#version 450
#extension GL_GOOGLE_include_directive : enable
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint s0; uint s1; uint s2; uint s3; uint s4; uint s5; uint s6; uint s7; } p;
#include "mix.glsl"
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    d[gl_GlobalInvocationID.x] = float(mix8(gl_LocalInvocationID.x, p.s0, p.s1, p.s2, p.s3, p.s4, p.s5, p.s6, p.s7));
}
"""


def test_amd_header_helper_values_follow_the_call(tmp_path):
    """A helper of an included file (llama.cpp's get_indices in utils.glsl) is walked in the header's own
    model, where nobody calls it: its values were all taken as uniform (free on AMD). Now its parameters
    are as divergent as the arguments at the call: the eight products of a per-invocation value take
    VGPRs, the eight push constants passed beside it do not."""
    (tmp_path / "mix.glsl").write_text(HEADER_HELPER)
    shader = tmp_path / "k.comp"
    shader.write_text(HEADER_CALLER)
    m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
    e = estimate_kernel(m, m.kernels[0], get_target("rdna2-wave64"))
    assert any(n.startswith("inlined: mix8") for n in e.notes), e.notes
    assert 8 <= e.peak <= 12, e.peak


HEADER_INDEX = """
uint rows_of(uint v) {
    uint o0 = v * 3u, o1 = v * 5u + 1u, o2 = v * 7u + 2u, o3 = v * 11u + 3u;
    uint o4 = v * 13u, o5 = v * 17u, o6 = v * 19u, o7 = v * 23u;
    return o0 ^ o1 ^ o2 ^ o3 ^ o4 ^ o5 ^ o6 ^ o7;
}
uint lane_of() { return gl_LocalInvocationID.x * 2u; }
"""

HEADER_INDEX_CALLER = """#version 450
#extension GL_GOOGLE_include_directive : enable
layout(local_size_x = 64) in;
#include "index.glsl"
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    const uint row = rows_of(SEED);
    const uint lane = lane_of();
    d[row * 64u + lane] = a[row * 64u + lane];
}
"""


def test_amd_header_helper_locals_are_uniform_at_a_uniform_call(tmp_path):
    """NIR inlines a helper before it decides what is uniform: a helper of an included file (llama.cpp's
    src0_idx(row * p.ne00) in generic_unary_head.glsl, with `row` from the workgroup IDs) called with
    uniform arguments computes its locals in SGPRs. They were all VGPRs (nobody calls the helper in its
    own file's model), and a header helper reading gl_LocalInvocationID without arguments (get_idx())
    gave a uniform result."""
    (tmp_path / "index.glsl").write_text(HEADER_INDEX)
    shader = tmp_path / "k.comp"
    rdna = get_target("rdna2-wave64")
    peaks = {}
    for seed in ("gl_WorkGroupID.x", "gl_LocalInvocationID.x"):
        shader.write_text(HEADER_INDEX_CALLER.replace("SEED", seed))
        m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
        peaks[seed] = estimate_kernel(m, m.kernels[0], rdna).peak
    assert peaks["gl_WorkGroupID.x"] <= 4, peaks  # the lane (a VGPR), the address, the loaded value
    assert peaks["gl_LocalInvocationID.x"] >= 8, peaks
    # lane_of() is per invocation: `lane` is a VGPR, so the uniform row's index math still needs one
    shader.write_text(HEADER_INDEX_CALLER.replace("SEED", "gl_WorkGroupID.x").replace("lane_of()", "5u"))
    m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
    assert estimate_kernel(m, m.kernels[0], rdna).peak < peaks["gl_WorkGroupID.x"]


MULHI_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint mp; uint shift; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
uint fastdiv(uint n, uint mp, uint L) {
    uint msbs, lsbs;
    umulExtended(n, mp, msbs, lsbs);
    return (msbs + n) >> L;
}
void main() {
    const uint i = gl_GlobalInvocationID.x;
    const uint b0 = i * 3u, b1 = i * 5u, b2 = i * 7u, b3 = i * 11u;
    const uint q = fastdiv(i + 1u, p.mp, p.shift);
    d[i] = a[q] + float(b0 ^ b1 ^ b2 ^ b3);
}
"""


def test_glsl_out_argument_never_read_is_not_a_register():
    """umulExtended's low half that nothing reads (llama.cpp's fastdiv keeps only `msbs`) is removed by
    the compiler: it took a VGPR at the call, on the peak of every shader indexing through fastdiv."""
    rdna = get_target("rdna2-wave64")
    dead = estimate(MULHI_GLSL, path="k.comp", target=rdna)
    read = estimate(MULHI_GLSL.replace("return (msbs + n) >> L;", "return (msbs + n + lsbs) >> L;"),
                    path="k.comp", target=rdna)
    assert dead.peak < read.peak, (dead.peak, read.peak)


BLOCKS_GLSL = """#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x = 64) in;
struct block { float d; uint8_t qs[16]; };
layout(binding = 0) readonly buffer A { ACCESS_DECL };
layout(binding = 1) writeonly buffer D { float data_b[]; };
void main() {
    const uint ib = gl_GlobalInvocationID.x;
    [[unroll]] for (uint l = 0; l < 8; ++l) {
        data_b[16 * ib + l] = float(ACCESS);
    }
}
"""


def test_glsl_indexed_array_member_is_one_load():
    """`data_a[ib].qs[l]` (llama.cpp's dequant shaders) loads one byte: the member `data_a[ib].qs` is its
    address, not a value loaded before it. The walk counted two loads per copy, which doubled what the
    AMD scheduler estimate moves up (dequant_q4_1.comp: 30 VGPRs against RADV's 24)."""
    rdna = get_target("rdna2-wave64")
    member = estimate(BLOCKS_GLSL.replace("ACCESS_DECL", "block data_a[];").replace("ACCESS", "data_a[ib].qs[l]"),
                      path="k.comp", target=rdna)
    flat = estimate(BLOCKS_GLSL.replace("ACCESS_DECL", "uint8_t qs[];").replace("ACCESS", "qs[16u * ib + l]"),
                    path="k.comp", target=rdna)
    assert member.registers_exact <= flat.registers_exact + 1, (member.registers_exact, flat.registers_exact)


def test_amd_workgroup_size_of_an_included_file(tmp_path):
    """llama.cpp's rope shaders declare `local_size_x = 1, local_size_y = 256` in rope_head.glsl, which they
    include: along x every invocation has the same gl_GlobalInvocationID.x (an SGPR on AMD). The axis
    sizes were read only from the shader's own file."""
    (tmp_path / "head.glsl").write_text("layout(local_size_x = 1, local_size_y = 64, local_size_z = 1) in;\n")
    shader = tmp_path / "k.comp"
    body = """#version 450
#extension GL_GOOGLE_include_directive : enable
INCLUDE
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    const uint r = gl_GlobalInvocationID.x;
    const uint r0 = r * 3u, r1 = r * 5u, r2 = r * 7u, r3 = r * 11u, r4 = r * 13u, r5 = r * 17u;
    d[gl_GlobalInvocationID.y] = a[r0] + a[r1] + a[r2] + a[r3] + a[r4] + a[r5];
}
"""
    rdna = get_target("rdna2-wave64")
    peaks = []
    for include in ('#include "head.glsl"', "layout(local_size_x = 64) in;"):
        shader.write_text(body.replace("INCLUDE", include))
        m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
        peaks.append(estimate_kernel(m, m.kernels[0], rdna).peak)
    assert peaks[0] + 4 <= peaks[1], peaks



def test_amd_threads_per_group_of_an_included_file(tmp_path):
    """The same shader's occupancy: its 64 threads per group come from the included declaration (the
    report, hover and impacts said "threads per group unknown" and showed a best case)."""
    (tmp_path / "head.glsl").write_text("layout(local_size_x = 1, local_size_y = 64, local_size_z = 1) in;\n")
    shader = tmp_path / "k.comp"
    shader.write_text('#version 450\n#extension GL_GOOGLE_include_directive : enable\n#include "head.glsl"\n'
                      "layout(binding = 0) buffer A { float a[]; };\n"
                      "void main() { a[gl_GlobalInvocationID.y] *= 2.0; }\n")
    m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
    e = estimate_kernel(m, m.kernels[0], get_target("rdna2-wave64"))
    assert e.threads_per_group == 64 and not e.occupancy_is_bound, (e.threads_per_group, e.notes)
    assert any("a file the shader includes" in n for n in e.notes), e.notes
    (tmp_path / "head.glsl").write_text("// no size here\n")
    m = build_model(FRONT_ENDS["glsl"].parse(Source(str(shader), shader.read_bytes())))
    e = estimate_kernel(m, m.kernels[0], get_target("rdna2-wave64"))
    assert e.threads_per_group is None and e.occupancy_is_bound

COPY_GLSL = """#version 450
layout(local_size_x = 32, local_size_y = 8) in;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
shared float sh[8][33];
void main() {
    const uint col = gl_LocalInvocationID.x;
    const uint row = gl_LocalInvocationID.y;
    const uint r2 = row;
    sh[r2][col] = a[gl_WorkGroupID.x * 256u + gl_LocalInvocationID.y * 32u + gl_LocalInvocationID.x];
    barrier();
    d[gl_WorkGroupID.x * 256u + col * 8u + row] = sh[gl_LocalInvocationID.x % 8u][gl_LocalInvocationID.y];
}
"""


def test_glsl_plain_copies_share_a_register():
    """`const uint tid_col = gl_LocalInvocationID.x;` (llama.cpp's copy_transpose.comp) names the invocation
    ID's register again: the walk counted both the built-in and the copy (10 VGPRs against RADV's 6 before
    scheduling, 8 allocated); a copy of another local that neither reassigns is the same value too."""
    rdna = get_target("rdna2-wave64")
    copies = estimate(COPY_GLSL, path="k.comp", target=rdna)
    direct = estimate(COPY_GLSL.replace("const uint col = gl_LocalInvocationID.x;", "")
                      .replace("const uint row = gl_LocalInvocationID.y;", "")
                      .replace("const uint r2 = row;", "")
                      .replace("[r2][col]", "[gl_LocalInvocationID.y][gl_LocalInvocationID.x]")
                      .replace("col * 8u + row", "gl_LocalInvocationID.x * 8u + gl_LocalInvocationID.y"),
                      path="k.comp", target=rdna)
    assert copies.peak == direct.peak, (copies.peak, direct.peak)


PUSH_FLOATS_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { float f0; float f1; float f2; float f3; float f4; float f5; uint n; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer B { float b[]; };
float ramp(float lo, float hi, float x) { return (x - lo) / max(0.001, hi - lo); }
void main() {
    uint i = gl_GlobalInvocationID.x;
    DECLS
    float s = a[i];
    for (uint k = 0; k < p.n; k++) { s = s * USES + a[i + k]; }
    b[i] = s;
}
"""


def test_amd_float_locals_read_from_push_constants_take_no_vgpr():
    """ACO loads push constants into scalar registers and vector instructions read them there: a float
    local holding one (llama.cpp's rope `mscale = p.attn_factor`), or a helper's float parameter given one
    (rope_yarn_ramp(p.corr_dims[0], p.corr_dims[1], i0)), takes no VGPR. Measured with RADV 22.3: six such
    locals, 5 VGPRs before scheduling, as with the push constants read in place; the walk counted 13."""
    rdna = get_target("rdna2-wave64")
    in_place = estimate(PUSH_FLOATS_GLSL.replace("DECLS", "").replace(
        "USES", " + s * ".join(f"p.f{j}" for j in range(6))), path="k.comp", target=rdna)
    locals_ = estimate(PUSH_FLOATS_GLSL.replace("DECLS", " ".join(f"float u{j} = p.f{j};" for j in range(6))).replace(
        "USES", " + s * ".join(f"u{j}" for j in range(6))), path="k.comp", target=rdna)
    params = estimate(PUSH_FLOATS_GLSL.replace("DECLS", "").replace(
        "USES", "ramp(p.f0, p.f1, s) * ramp(p.f2, p.f3, s) * ramp(p.f4, p.f5, s)"), path="k.comp", target=rdna)
    assert locals_.peak == in_place.peak, (locals_.peak, in_place.peak)
    assert params.peak <= in_place.peak + 1, (params.peak, in_place.peak)
    # a float computed from them is a vector value again (no scalar float ALU before gfx11.5)
    computed = estimate(PUSH_FLOATS_GLSL.replace("DECLS", " ".join(f"float u{j} = p.f{j} * 2.0;" for j in range(6)))
                        .replace("USES", " + s * ".join(f"u{j}" for j in range(6))), path="k.comp", target=rdna)
    assert computed.peak >= in_place.peak + 5, (computed.peak, in_place.peak)


def test_glsl_an_implicit_conversion_is_not_a_copy():
    """`float f = i;` converts the integer: a new value, not a second name for `i`'s register."""
    rdna = get_target("rdna2-wave64")
    src = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
void main() {
    const uint i = gl_GlobalInvocationID.x * 3u;
    const DECL = i;
    d[i] = a[i] + float(f);
}
"""
    same = estimate(src.replace("DECL", "uint f"), path="k.comp", target=rdna)
    converted = estimate(src.replace("DECL", "float f"), path="k.comp", target=rdna)
    assert converted.peak >= same.peak + 1, (converted.peak, same.peak)


SSBO_FLOATS_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; } p;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) writeonly buffer B { float b[]; };
layout(binding = 2) QUAL buffer C { float c[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint w = gl_WorkGroupID.x;
    float u0 = c[w * 4u], u1 = c[w * 4u + 1u], u2 = c[w * 4u + 2u], u3 = c[w * 4u + 3u];
    float s = a[i];
    for (uint k = 0; k < p.n; k++) { s = s * u0 + s * u1 + s * u2 + s * u3 + a[i + k]; }
    b[i] = s;
}
"""


def test_amd_float_locals_read_from_a_readonly_buffer_at_a_uniform_index_take_no_vgpr():
    """A readonly storage buffer read at a workgroup-uniform index is a scalar load on AMD (llama.cpp's
    `sink = data_s[n]` with n = gl_WorkGroupID.x): measured with RADV 22.3, eight such float locals used
    in a loop 5 VGPRs before scheduling, as eight push constants (here four). A buffer the shader may
    write is read with vector loads: its values stay VGPRs."""
    rdna = get_target("rdna2-wave64")
    readonly = estimate(SSBO_FLOATS_GLSL.replace("QUAL", "readonly"), path="k.comp", target=rdna)
    writable = estimate(SSBO_FLOATS_GLSL.replace("QUAL", "coherent"), path="k.comp", target=rdna)
    assert readonly.peak + 4 <= writable.peak, (readonly.peak, writable.peak)


ABI_CALL = """
__global__ void k(const float* x, float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[16];
#pragma unroll
    for (int j = 0; j < 16; j++) v[j] = x[i + j * n];
    {call}
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 16; j++) s += v[j] * v[15 - j];
    y[i] = s;
}}
"""


def test_assert_and_printf_are_calls_with_the_abi():
    """nvcc lowers ``assert`` to a call of ``__assertfail`` and ``printf`` to one of ``vprintf``: values
    live across the call cannot stay in the ABI's caller-saved registers. ptxas (nvcc 13.0, sm_80 and
    sm_90): 32 registers without the call, 40 with either, 24 for a kernel of 10 with an assert."""
    plain = estimate(ABI_CALL.format(call=""))
    for call in ("assert(v[0] > 0.f);", 'if (i == 0) printf("%f\\n", v[0]);'):
        e = estimate(ABI_CALL.format(call=call))
        assert 38 <= e.registers <= 44, (call, e.registers)
        assert e.registers >= plain.registers + 12, (call, e.registers, plain.registers)
    small = estimate("__global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; "
                     "assert(n > 0); if (i < n) y[i] = x[i] * 2.f; }")
    assert 22 <= small.registers <= 28, small.registers


FN_PARAM_HEADER = """
#pragma once
typedef void (*dequantize_kernel_t)(const float* vx, int ib, float* v);
static __device__ __forceinline__ void dequantize_q8(const float* vx, int ib, float* v) {
    float a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = vx[ib * 8 + k] * vx[ib + k];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = a[k] * a[7 - k] + a[(k + 1) % 8];
}
"""

FN_PARAM_CALLER = """
#include "dequantize.cuh"
template <int qk, dequantize_kernel_t dequantize_kernel>
__global__ void dequantize_block(const float* vx, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    dequantize_kernel(vx, i * qk, y + i * 8);
}
template <int qk, dequantize_kernel_t dequantize_kernel>
static __device__ void dequantize_row(const float* vx, float* y, int i) {
    dequantize_kernel(vx, i * qk, y + i * 8);
}
__global__ void through_helper(const float* vx, float* y) {
    dequantize_row<32, dequantize_q8>(vx, y, blockIdx.x * blockDim.x + threadIdx.x);
}
"""


def test_function_template_argument_from_a_header_is_inlined(tmp_path):
    """llama.cpp's convert.cu instantiates ``dequantize_block<32, 2, dequantize_q4_0>`` with functions of
    dequantize.cuh: bound to the kernel's function-pointer parameter, or given to a helper's, the header's
    function is walked as nvcc inlines it, not left as a call the walk cannot see."""
    (tmp_path / "dequantize.cuh").write_text(FN_PARAM_HEADER)
    src = tmp_path / "convert.cu"
    src.write_text(FN_PARAM_CALLER)
    m = build_model(FRONT_ENDS["cuda"].parse(Source(str(src), src.read_bytes())))
    f = next(k for k in m.kernels if k.name == "dequantize_block")
    e = estimate_kernel(m, f, SM80, bindings={"qk": "32", "dequantize_kernel": "dequantize_q8"})
    assert any(n.startswith("inlined: ") and "dequantize_q8" in n for n in e.notes), e.notes
    assert "dequantize_kernel" not in e.unseen_calls
    assert e.peak >= 8, e.peak  # the eight values of `a`
    h = estimate_kernel(m, next(k for k in m.kernels if k.name == "through_helper"), SM80)
    assert any(n.startswith("inlined: ") and "dequantize_q8" in n for n in h.notes), h.notes
    assert h.peak >= 8, h.peak


SIZEOF_NAMED = """
#include <cuda_fp16.h>
template <int chunks>
__global__ void k(const __half2* x, __half2* y) {
    constexpr int per = 16 / sizeof(__half2);
    __half2 buf[chunks * per];
#pragma unroll
    for (int i = 0; i < chunks * per; i++) buf[i] = x[threadIdx.x + i * 64];
    __half2 s = buf[0];
#pragma unroll
    for (int i = 1; i < chunks * per; i++) s = __hadd2(s, __hmul2(buf[i], buf[chunks * per - i]));
    y[threadIdx.x] = s;
}
"""


def test_sizeof_a_named_type_is_folded():
    """deepspeed's ``constexpr int storage_values = 16 / sizeof(__half2)``: tree-sitter reads
    ``sizeof(__half2)`` as the size of an expression naming a type; folded, the arrays sized by it are
    known (they were of unknown size, one estimate for every ``totalChunks``)."""
    m = model_of(SIZEOF_NAMED)
    f = m.kernels[0]
    est = {c: estimate_kernel(m, f, SM80, bindings={"chunks": c}) for c in ("1", "4")}
    assert not any("unknown size" in n for n in est["1"].notes), est["1"].notes
    assert est["4"].registers >= est["1"].registers + 16, (est["1"].registers, est["4"].registers)


FDIV = """
__global__ void k(const {T}* x, {T}* y, int n) {{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    y[i] = x[i] {op};
}}
"""


def test_float_division_by_a_constant_is_an_ieee_division():
    """Without fast math, ``x / 6.f`` is an IEEE division like ``x / y`` (ptxas, sm_80 and sm_90: 13
    registers against 10 for ``x * 2.f``); only a power of two becomes a multiplication. A double
    division takes 10 to 14 registers more than a double multiplication."""
    est = {op: estimate(FDIV.format(T="float", op=op)).peak for op in ("* 2.f", "/ 4.f", "/ 6.f", "/ x[i + 1]")}
    assert est["/ 6.f"] >= est["* 2.f"] + 2, est
    assert est["/ 4.f"] == est["* 2.f"], est
    assert est["/ x[i + 1]"] >= est["* 2.f"] + 2, est
    dmul = estimate(FDIV.format(T="double", op="* x[i + 1]")).peak
    ddiv = estimate(FDIV.format(T="double", op="/ x[i + 1]")).peak
    assert ddiv >= dmul + 8, (dmul, ddiv)


ITERATION_BUFFER = """
#include <cuda_fp16.h>
template <typename T, int UNROLL>
__global__ void k(const T* x, const T* r, T* y, T g, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    T local_buffer[UNROLL * 8];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        T* iteration_buffer = local_buffer + u * 8;
        T residual_buffer[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            iteration_buffer[j] = x[i * 8 + u * n + j];
            residual_buffer[j] = r[i * 8 + u * n + j];
        }
#pragma unroll
        for (int j = 0; j < 8; j++) iteration_buffer[j] += residual_buffer[j];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        T* iteration_buffer = local_buffer + u * 8;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            iteration_buffer[j] *= g;
            y[i * 8 + u * n + j] = iteration_buffer[j];
        }
    }
}
"""


def test_pointer_into_a_private_array_reaches_its_elements():
    """deepspeed's ``T* iteration_buffer = local_buffer + i * T_per_load``: a pointer to a constant element
    of an array kept in registers; ``iteration_buffer[j]`` is an element of the array (a register), not a
    memory access. The 64 values stay live between the loops; half arithmetic keeps halves in pairs
    (this kernel with ptxas, nvcc 13.0, sm_80 and sm_90: float/8 80 registers, __half/8 48, float/2 32;
    estimated 84, 52, 36)."""
    m = model_of(ITERATION_BUFFER)
    f = m.kernels[0]
    fl = estimate_kernel(m, f, SM80, bindings={"T": "float", "UNROLL": "8"})
    hf = estimate_kernel(m, f, SM80, bindings={"T": "__half", "UNROLL": "8"})
    small = estimate_kernel(m, f, SM80, bindings={"T": "float", "UNROLL": "2"})
    assert 64 <= fl.peak <= 84, fl.peak
    assert fl.peak >= small.peak + 40, (small.peak, fl.peak)
    assert 32 <= hf.peak <= fl.peak - 24, (hf.peak, fl.peak)
    assert not fl.stack_bytes and not hf.stack_bytes


IF_CONSTANT = """
template <int dim>
__global__ void k(const float* x, float* y, long n) {
    for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if constexpr (dim == 0) {
            y[i] = x[i];
        } else if (dim == 1) {
            float a = x[i], b = x[i + n], c = x[i + 2 * n], d = x[i + 3 * n], e = x[i + 4 * n], f = x[i + 5 * n];
            y[i] = a * b + c * d + e * f + a * f * c * d * b * e;
        } else {
            y[i] = x[i] * 2.f;
        }
    }
}
"""


def test_a_branch_the_bindings_decide_is_the_only_one_walked():
    """``if constexpr (dim == 0)`` and ``if (dim == 1)`` under a bound ``dim`` (llama.cpp's concat_cont):
    C++'s condition_clause around the condition hid its value from the walk, which walked every branch
    and gave every instance the worst one's figure; nvcc compiles only the branch taken."""
    m = model_of(IF_CONSTANT)
    f = m.kernels[0]
    est = {d: estimate_kernel(m, f, SM80, bindings={"dim": d}).peak for d in ("0", "1", "2")}
    assert est["1"] >= est["0"] + 8, est
    assert est["0"] == est["2"], est


REFERENCE_OUT = """
__device__ void set_count(int& n) { n = 2; }
__global__ void k(float* out, const float* in) {
    int n = 16;
    set_count(n);
    float acc[16];
#pragma unroll
    for (int i = 0; i < n; ++i) acc[i] = in[threadIdx.x * 16 + i];
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < n; ++i) s += acc[i] * acc[n - 1 - i];
    out[threadIdx.x] = s;
}
"""


def test_a_reference_parameter_writes_the_callers_constant():
    """``int n = 16; set_count(n);`` with ``set_count(int& n) { n = 2; }``: after the inlined call the
    caller's ``n`` is 2 (the loops run twice: ptxas 10 registers on sm_80), not the 16 of its
    initializer (25 before); a callee that leaves it unknown leaves it unknown."""
    e = estimate(REFERENCE_OUT)
    assert e.registers <= 12, e.registers
    unknown = estimate(REFERENCE_OUT.replace("{ n = 2; }", "{ if (n > 4) n = n / 3; }"))
    by_value = estimate(REFERENCE_OUT.replace("int& n) { n = 2; }", "int n) { n = 2; }"))
    assert by_value.registers >= 20 and unknown.registers != e.registers


def test_cuda_array_member_of_an_element_is_one_load():
    """`x[b].qs[j]`: the element's array member indexed further is one load of a byte at an address,
    not a load of the element and then of the member (the walk held both live: 41 registers; ptxas
    13.0 for sm_80 uses 32, the walk now 31)."""
    src = """struct Block { float d; unsigned char qs[16]; };
__global__ void dot(const Block *x, const float *y, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
    for (int b = 0; b < n; ++b) {
        #pragma unroll
        for (int j = 0; j < 16; j += 4) {
            s0 += x[b].qs[j] * y[j];
            s1 += x[b].qs[j + 1] * y[j + 1];
            s2 += x[b].qs[j + 2] * y[j + 2];
            s3 += x[b].qs[j + 3] * y[j + 3];
        }
    }
    out[i] = s0 + s1 + s2 + s3;
}
"""
    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", src.encode())))
    e = estimate_kernel(m, m.kernels[0], get_target("sm_80"))
    assert 26 <= e.registers <= 36, e.registers


PACKS = """
#include <utility>
__device__ float acc(const float* x, int n) {
    float s = 0.f;
    for (int i = 0; i < n; ++i) s += x[i] * x[i + n];
    return s;
}
template <typename... A> __device__ float fwd(A&&... a) { return acc(std::forward<A>(a)...); }
struct Acc {
    template <typename... A> __device__ float operator ()(A... a) { return acc(a...); }
};
template <typename T> struct AccT {
    __device__ T operator()(const T* x, int n) { return acc(x, n); }
};
__global__ void direct(float* y, const float* x) { y[threadIdx.x] = acc(x + threadIdx.x, 8); }
__global__ void through_pack(float* y, const float* x) { y[threadIdx.x] = fwd(x + threadIdx.x, 8); }
template <typename F, typename... Args>
__global__ void functor_pack(float* y, const float* x, Args... args) { F f; y[threadIdx.x] = f(x + threadIdx.x, args...); }
template <typename F>
__global__ void functor_tmpl(float* y, const float* x, int n) { F f; y[threadIdx.x] = f(x + threadIdx.x, n); }
"""


def test_parameter_packs_pass_their_elements():
    """A function parameter pack expanded at a call (`acc(std::forward<A>(a)...)`, `f(x, args...)`)
    gives the callee's parameters its elements, as the compiler's instance does: a constant passed
    through a variadic forwarder still bounds the loop (ptxas: 24 registers both ways)."""
    direct = estimate(PACKS, kernel="direct")
    through = estimate(PACKS, kernel="through_pack")
    assert through.registers == direct.registers and through.peak == direct.peak


def test_functor_templates_are_walked():
    """A functor that is an instance of a struct template (`AccT<float>`) or whose `operator ()` is a
    member template (cupy's distributions' pattern) is bound like a plain functor: its body is walked,
    the call is not "code not seen" (ptxas: 28 registers for both kernels)."""
    m = model_of(PACKS)
    pack = next(k for k in m.kernels if k.name == "functor_pack")
    tmpl = next(k for k in m.kernels if k.name == "functor_tmpl")
    e1 = estimate_kernel(m, pack, SM80, bindings={"F": "Acc"})
    e2 = estimate_kernel(m, tmpl, SM80, bindings={"F": "AccT<float>"})
    for e in (e1, e2):
        assert e.unseen_calls == (), e.unseen_calls
        assert any(n.startswith("inlined: ") and "acc" in n for n in e.notes), e.notes
        assert e.registers > estimate_kernel(m, tmpl, SM80, bindings={"F": "Missing"}).registers
    assert e1.registers == e2.registers


STRIDED_SUM = """
#include <cstddef>
__global__ void k(const float* __restrict__ y, float* dst, const int n, int st, unsigned ust) {
    float s = 0.f;
    for (COUNTER c = threadIdx.x; c < n; c += STEP) { s += y[c]; }
    dst[threadIdx.x] = s;
}
"""


def strided(counter: str, step: str):
    return estimate(STRIDED_SUM.replace("COUNTER", counter).replace("STEP", step))


def test_runtime_unrolling_needs_a_step_that_cannot_wrap():
    """NVVM unrolls a runtime loop by 4 only when it can count its trips: the counter's addition is
    signed (nvcc 13.0, PTX: five loads for `int c; c += st`, one for `int c; c += blockDim.x`, where C
    adds in unsigned, for `unsigned c; c += ust` and `size_t c; c += st`). ptxas: 16 registers against
    10-12; without unrolling no loads of further iterations are in flight."""
    unrolled = strided("int", "st")
    for counter, step in (("int", "blockDim.x"), ("unsigned", "ust"), ("size_t", "st")):
        assert strided(counter, step).peak < unrolled.peak, (counter, step)
    assert strided("long", "blockDim.x * gridDim.x").peak >= unrolled.peak  # signed 64-bit sum: unrolled


def test_loads_of_a_constant_step_loop_fill_the_full_occupancy_registers():
    """A loop unrolled at run time with a constant step (`c += 32`, a bound `block_size`, `c++`) lets
    ptxas batch its loads up to the registers of full occupancy: 31 on sm_80 for one load per
    iteration (nvcc 13.0; 29-31 with 1-4 loads), 16 with `c += st` (unrolled, addresses unknown),
    10 with `c += blockDim.x` (rolled). Above that demand the loop adds what it adds elsewhere."""
    filled = strided("int", "32")
    assert 29 <= filled.registers <= 32, filled.registers
    assert strided("int", "st").registers < 20
    assert strided("unsigned", "32").registers < 20  # unsigned: rolled, nothing batched


def test_loads_in_flight_stop_at_the_occupancy_the_demand_allows():
    """ptxas moves the loads of an unrolled loop's copies up only as far as the occupancy of the
    demand without them: `s += x0[c] + ... + x9[c]` with `c += st` takes 32 registers on sm_80 (nvcc
    13.0) for 6, 8 and 10 loads per iteration; the loads in flight no longer push it past 32."""
    for loads in (6, 8, 10):
        params = ", ".join(f"const float* __restrict__ x{j}" for j in range(loads))
        body = " + ".join(f"x{j}[c]" for j in range(loads))
        e = estimate(f"__global__ void k({params}, float* dst, const int n, int st) {{ float s = 0.f;\n"
                     f"    for (int c = threadIdx.x; c < n; c += st) {{ s += {body}; }} dst[threadIdx.x] = s; }}")
        assert e.registers <= 32, (loads, e.registers)
    assert estimate("__global__ void k(const float* x, float* y, int n, int st) {\n"
                    "    float s = 0.f; for (int c = threadIdx.x; c < n; c += st) s += x[c]; y[0] = s; }").registers < 20


MMQ = """
#define WS 32
__device__ __forceinline__ float dot(const int* __restrict__ xq, const int* __restrict__ yq,
                                     const float* __restrict__ xd, const float* __restrict__ yd, int i, int j, int k) {
    int s = 0;
#pragma unroll
    for (int l = 0; l < 4; ++l) s = __dp4a(xq[i * (WS + 1) + k + l], yq[j * WS + k + l], s);
    return s * xd[i] * yd[j];
}
__global__ void mmq(const int* __restrict__ gx, const int* __restrict__ gy, const float* __restrict__ gd,
                    float* __restrict__ dst, int nb, int nrows) {
    __shared__ int tx[MY * (WS + 1)];
    __shared__ int ty[MX * WS];
    __shared__ float txd[MY];
    __shared__ float tyd[MX];
    float sum[MY / WS][MX / 4] = {0.0f};
    for (int ib = 0; ib < nb; ib++) {
#pragma unroll
        for (int i = 0; i < MY; i += 4)
            tx[(threadIdx.y + i) * (WS + 1) + threadIdx.x] = gx[(ib * MY + threadIdx.y + i) * WS + threadIdx.x];
#pragma unroll
        for (int j = 0; j < MX; j += 4)
            ty[(threadIdx.y + j) * WS + threadIdx.x] = gy[(ib * MX + threadIdx.y + j) * WS + threadIdx.x];
        if (threadIdx.y == 0) { txd[threadIdx.x] = gd[ib * 64 + threadIdx.x]; tyd[threadIdx.x % MX] = gd[ib * 64 + 32 + threadIdx.x]; }
        __syncthreads();
        for (int k = 0; k < WS; k += 4) {
#pragma unroll
            for (int j = 0; j < MX; j += 4) {
#pragma unroll
                for (int i = 0; i < MY; i += WS)
                    sum[i / WS][j / 4] += dot(tx, ty, txd, tyd, threadIdx.x + i, threadIdx.y + j, k);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < MX; j += 4)
#pragma unroll
        for (int i = 0; i < MY; i += WS)
            dst[(blockIdx.y * MX + j + threadIdx.y) * nrows + blockIdx.x * MY + threadIdx.x + i] = sum[i / WS][j / 4];
}
"""


def test_loads_of_an_unrolled_nest_take_the_top_of_the_next_occupancy_step():
    """ggml's mul_mat_q shape (a runtime loop around an unrolled nest of 4-int dot products from
    shared tiles): above full occupancy, ptxas (nvcc 13.0, sm_80 and sm_90) keeps the nest's loads in
    flight past the occupancy step of the demand without them, up to the top of the step they reach:
    64 accumulators 128 registers (96 without spills, `-maxrregcount`), 16 accumulators 56 (38), 32
    accumulators 72 (59). The walk stopped at the step of the demand without the loads: 96, 48, 64."""
    for mx, my, ptxas in ((64, 128, 128), (32, 64, 56), (64, 64, 72)):
        src = f"#define MX {mx}\n#define MY {my}\n" + MMQ
        for target in (SM80, get_target("sm_90")):
            assert estimate(src, target=target).registers == ptxas, (mx, my, target.name)


def test_clamps_of_loop_invariant_values_in_unrolled_copies_are_held_through_the_runtime_loop():
    """ggml's mul_mat_q clamps each y row it copies (`min(col0 + threadIdx.y + j, ncols - 1)`): the
    clamps (times the row stride) of the loop-invariant values are computed once before the runtime
    `ib` loop, one register per unrolled copy held through it. The nest test's kernel so clamped takes
    64 and 96 registers (ptxas, nvcc 13.0, sm_80 and sm_90) for 8 and 16 rows against 56 and 72; a
    clamp that reads the loop's counter is computed in the loop (sm_90 56 and 72 again)."""
    plain = "gy[(ib * MX + threadIdx.y + j) * WS + threadIdx.x]"
    clamped = "gy[(min((int)(blockIdx.y * MX + threadIdx.y + j), BOUND) * nb + ib) * WS + threadIdx.x]"
    assert plain in MMQ
    src = MMQ.replace("int nb, int nrows)", "int nb, int nrows, int ncols)").replace(plain, clamped)
    for mx, ptxas, rolled in ((32, 64, 56), (64, 96, 72)):
        head = f"#define MX {mx}\n#define MY 64\n"
        for target in (SM80, get_target("sm_90")):
            assert estimate(head + src.replace("BOUND", "ncols - 1"), target=target).registers == ptxas, (mx, target.name)
            assert estimate(head + src.replace("BOUND", "ncols - 1 - ib"), target=target).registers == rolled
        # a named clamp (`const int c = min(...)`) is the same value
        named = (head + src.replace("BOUND", "ncols - 1")
                 .replace("for (int j = 0; j < MX; j += 4)\n", "for (int j = 0; j < MX; j += 4) {\n"
                          "            const int c = min((int)(blockIdx.y * MX + threadIdx.y + j), ncols - 1);\n")
                 .replace("gy[(min((int)(blockIdx.y * MX + threadIdx.y + j), ncols - 1) * nb + ib) * WS + threadIdx.x];",
                          "gy[(c * nb + ib) * WS + threadIdx.x]; }"))
        assert "const int c" in named and "c * nb" in named
        assert estimate(named).registers == ptxas, mx


def test_copies_of_a_runtime_loop_stay_within_the_step_of_the_demand_without_them():
    """A loop unrolled at run time (its copies' loads in flight) is not a nest: with 24 accumulators
    and 6 loads per iteration ptxas (nvcc 13.0, sm_80) takes 48 registers, 43 without spills; the
    copies' loads would reach 67."""
    params = ", ".join(f"const float* __restrict__ x{j}" for j in range(6))
    body = " + ".join(f"x{j}[c]" for j in range(6))
    src = (f"__global__ void k({params}, float* dst, const int n, int st) {{ float a[24];\n"
           "#pragma unroll\n for (int q = 0; q < 24; ++q) a[q] = dst[q * n];\n"
           f"    for (int c = threadIdx.x; c < n; c += st) {{ float v = {body};\n"
           "#pragma unroll\n for (int q = 0; q < 24; ++q) a[q] = a[q] * v + q; }\n"
           "#pragma unroll\n for (int q = 0; q < 24; ++q) dst[q] = a[q]; }\n")
    assert estimate(src).registers == 48


def test_64_bit_counters_of_the_grid_geometry():
    """nvcc 13.0 leaves `for (int64_t i = blockIdx.y; i < n; i += gridDim.y)` rolled (one load in the
    PTX, 12 registers; llama.cpp's convert_unary) but unrolls the same loop from `blockIdx.y * 2` or
    by `st`; unrolled with a 64-bit counter, every copy keeps its load and 64-bit address in flight
    (ptxas 22 against 12)."""
    src = ("#include <cstdint>\n__global__ void k(const float* x, float* y, int64_t n, int st) {\n"
           "    float s = 0; for (int64_t i = START; i < n; i += STEP) s += x[i]; y[0] = s; }\n")
    rolled = estimate(src.replace("START", "blockIdx.y").replace("STEP", "gridDim.y"))
    for start, step in (("blockIdx.y * 2", "gridDim.y"), ("threadIdx.x", "st")):
        unrolled = estimate(src.replace("START", start).replace("STEP", step))
        assert unrolled.registers >= rolled.registers + 6, (start, step, unrolled.registers, rolled.registers)
    assert rolled.registers <= 14


def test_unrolled_copies_of_a_loop_with_an_unknown_step_keep_their_loads_in_flight():
    """`int c; c += st` unrolled by 4: ptxas (nvcc 13.0, sm_80) takes 16, 24, 32, 32 registers for 1-4
    loads per iteration (10-16 rolled): each copy's loads and address stay live."""
    for loads, ptxas in ((1, 16), (2, 24), (3, 32)):
        params = ", ".join(f"const float* __restrict__ x{j}" for j in range(loads))
        body = " + ".join(f"x{j}[c]" for j in range(loads))
        e = estimate(f"__global__ void k({params}, float* dst, const int n, int st) {{ float s = 0.f;\n"
                     f"    for (int c = threadIdx.x; c < n; c += st) {{ s += {body}; }} dst[threadIdx.x] = s; }}")
        assert abs(e.registers - ptxas) <= 2, (loads, e.registers, ptxas)


def test_copies_of_a_branchy_body_do_not_keep_every_load_in_flight():
    """Unrolled at run time with a 64-bit counter and a computed step, a body whose loads sit under a
    branch (`if`/`else`, `?:`) is a block per copy: ptxas (nvcc 13.0, sm_80) takes 22-26 registers
    (llama.cpp's concat_cont<T, 0>: 30), not the 32 of every copy's loads and addresses in flight; the
    same loop without the branch keeps them (28)."""
    head = ("#include <cstdint>\n__global__ void k(const unsigned* x, const unsigned* y, unsigned* dst, int64_t n, "
            "int64_t s0) {\n    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
            "i += (int64_t)blockDim.x * gridDim.x) { BODY } }\n")
    for body, ptxas in (("if (i < s0) dst[i] = x[i]; else dst[i] = y[i - s0];", 24),
                        ("dst[i] = i < s0 ? x[i] : y[i - s0];", 24),
                        ("if (i < s0) dst[i] = x[i];", 22),
                        ("unsigned v = y[i]; if (i < s0) v += x[i]; dst[i] = v;", 26)):
        e = estimate(head.replace("BODY", body))
        assert abs(e.registers - ptxas) <= 2, (body, e.registers, ptxas)
    assert estimate(head.replace("BODY", "dst[i] = x[i];")).registers == 28
    # a branch the walk decides (a constant condition) leaves the copies in flight
    assert estimate(head.replace("BODY", "if (sizeof(unsigned) == 4) dst[i] = x[i];")).registers == 28


def test_a_temporary_functor_is_walked():
    """`Op()(a, b)` and `Acc<float, 16>()(p, s)` (deepspeed's `divide<half, 8>()(x, s)`): nvcc inlines
    the temporary's operator(), the struct template's arguments bound (ptxas, nvcc 13.0, sm_80: 32
    registers; the walk left both calls out: 9)."""
    src = """
struct Div { __device__ float operator()(float a, float b) const { return sinf(a) / b; } };
template <typename T, int N> struct Acc { __device__ T operator()(const T* p, int s) const {
    T r[N];
#pragma unroll
    for (int k = 0; k < N; ++k) r[k] = p[k * s];
    T t = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) t += r[k] * r[(k + 1) % N];
    return t; } };
__global__ void k(const float* x, const float* y, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = Div()(x[i], y[i]) + Acc<float, 16>()(x + i, n); }
"""
    e = estimate(src)
    assert "inlined: Div::operator(), Acc::operator()" in e.notes, e.notes
    assert 26 <= e.registers <= 34, e.registers
    # a constructor with arguments keeps state the walk does not model: not walked
    assert "Div::operator()" not in " ".join(estimate(src.replace("Div()(", "Div(1)(")).notes)


def test_unrolled_copies_that_may_exit_keep_no_loads_in_flight():
    """A `break` or the kernel's `return` under a run-time condition in an unrolled loop (llama.cpp's
    dequantize_block_q8_0_f16<need_check>): each copy may end the loop, and ptxas (nvcc 13.0, sm_80)
    moves no copy's load above it: 11 registers with the check, 31 without (17 loads batched)."""
    src = """#include <cstdint>
template <bool chk>
__global__ void ex(const int* __restrict__ x, int* __restrict__ y, const int64_t k) {
    __shared__ int vals[544];
    const int* x0 = x + blockIdx.x * 544;
#pragma unroll
    for (int ix0 = 0; ix0 < 544; ix0 += 32) {
        if (chk && 544 * (int64_t)blockIdx.x + ix0 + threadIdx.x >= k) EXIT;
        vals[ix0 + threadIdx.x] = x0[ix0 + threadIdx.x];
    }
    __syncthreads();
    y[blockIdx.x * 32 + threadIdx.x] = vals[threadIdx.x * 17 % 544];
}
"""
    for exit_ in ("break", "return"):
        checked = estimate(src.replace("EXIT", exit_), bindings={"chk": "true"})
        plain = estimate(src.replace("EXIT", exit_), bindings={"chk": "false"})
        assert checked.registers <= 12, (exit_, checked.registers)
        assert plain.registers > checked.registers, (exit_, plain.registers, checked.registers)


def test_a_constant_step_loop_with_its_loads_in_an_unrolled_loop_is_filled():
    """A constant-step loop whose loads all sit in a `#pragma unroll` loop of its body (ctransformers'
    dequantize_mul_mat_vec<qk, qr, f>) is batched as any constant-step loop: ptxas (nvcc 13.0, sm_80)
    32 and 31 registers for V = 2 and 4 (the walk gave 17 and 21: the loads were not the loop's)."""
    src = """
template <int V>
__global__ void fl(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ dst, const int ncols, const int nrows) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= nrows) return;
    float tmp = 0.0f;
    for (int i = 0; i < ncols; i += 64) {
        const int col = i + V * threadIdx.x;
#pragma unroll
        for (int j = 0; j < V; j += 2) {
            tmp += x[row * ncols + col + j] * y[col + j] + x[row * ncols + col + j + 1] * y[col + j + 1];
        }
    }
    if (threadIdx.x == 0) dst[row] = tmp;
}
"""
    for v, ptxas in (("2", 32), ("4", 31)):
        e = estimate(src, bindings={"V": v})
        assert abs(e.registers - ptxas) <= 2, (v, e.registers, ptxas)


def test_a_store_only_loop_unrolled_with_an_unknown_step_keeps_its_copies_addresses():
    """Unrolled at run time with a step it does not know, a loop that only stores (llama.cpp's
    tri_kernel zeroing a row) still computes every copy's address ahead: ptxas (nvcc 13.0, sm_80)
    20 registers for a 64-bit counter (12 rolled), 18 for `int i; i += st` (8 rolled)."""
    e64 = estimate("#include <cstdint>\n__global__ void k(float* dst, int64_t n, int64_t a) {\n"
                   "    const int64_t s = (int64_t)blockIdx.x + a;\n"
                   "    for (int64_t i = threadIdx.x + s; i < n; i += blockDim.x) dst[i] = 0.0f; }\n")
    e32 = estimate("__global__ void k(float* dst, int n, int a, int st) {\n"
                   "    for (int i = threadIdx.x + a; i < n; i += st) dst[i] = 0.0f; }\n")
    assert 16 <= e64.registers <= 22, e64.registers
    assert 13 <= e32.registers <= 20, e32.registers


def test_copies_into_shared_memory_issue_their_loads_together():
    """A run of `sh[..] = g[..];` statements (llama.cpp's rwkv_wkv7_f32_t1_warp_row staging ten rows,
    dequantize_block_q8_0_f16's unrolled copy loop): ptxas (nvcc 13.0, sm_80) issues the loads
    together, also across a `__syncthreads()`: 14, 18 and 24 registers for 2, 4 and 10 copies, 24
    with a barrier after each (the walk gave 11, 12, 12); another statement between them ends the run
    in the walk."""
    def kernel(n: int, between: str = "") -> str:
        lines = [f"    sh[{j}][lane] = r[base + lane + {j} * 64 * {1 if j % 2 else 3}];{between}" for j in range(n)]
        return ("__global__ void k(const float* __restrict__ r, float* o, int C) {\n"
                f"    __shared__ float sh[{n}][64]; int lane = threadIdx.x; int base = blockIdx.x * C;\n"
                + "\n".join(lines) + "\n"
                f"    __syncthreads(); float s = 0; for (int j = 0; j < {n}; ++j) s += sh[j][(lane + j) & 63];\n"
                "    o[base + lane] = s; }\n")
    ten = estimate(kernel(10))
    assert 17 <= ten.registers <= 26, ten.registers
    assert estimate(kernel(2)).registers <= 14
    assert 17 <= estimate(kernel(10, " __syncthreads();")).registers <= 26
    assert estimate(kernel(10, " o[lane] = 0.f;")).registers <= 13


def test_a_computed_step_is_held_through_the_loop():
    """`i += (size_t)gridDim.x * blockDim.x` is computed once and kept (64 bits) through the loop, in an
    explicit loop and in a range-for whose iterator's operator++ adds it (dlib's grid_stride_range):
    ptxas (nvcc 13.0, sm_80) 14 registers for a size_t grid-stride sum with one load, 20 with four."""
    src = ("#include <cstddef>\n__global__ void k(const float* __restrict__ x, float* dst, const size_t n) {\n"
           "    float s = 0.f; for (size_t c = blockIdx.x * blockDim.x + threadIdx.x; c < n; c += STEP) s += x[c];\n"
           "    dst[threadIdx.x] = s; }\n")
    computed = estimate(src.replace("STEP", "(size_t)gridDim.x * blockDim.x"))
    plain = estimate(src.replace("STEP", "n"))
    assert computed.peak >= plain.peak + 2, (computed.peak, plain.peak)
    assert abs(computed.registers - 14) <= 1, computed.registers
    assert estimate(RANGE_CLASS + RANGE_KERNEL).peak == estimate(RANGE_EXPLICIT).peak


GENERATOR = """
template <typename S> struct wrapped {
    S s;
    __device__ unsigned next() { unsigned t = s ^ (s << 11); s = t ^ (t >> 8) ^ (s * 2654435761u); return s; }
    __device__ double rk_double() { unsigned a = next(), b = next(); return (a * 67108864.0 + b) * 1.1102230246251565e-16 * log((double)a + 1.0); }
};
"""
GEN_KERNEL = """
template <typename R>
__global__ void k(R* states, double* out, int n) {
    int id = threadIdx.x + blockIdx.x * blockDim.x;
    R* state = states + id;
    for (int i = id; i < n; i += blockDim.x * gridDim.x) out[i] = state->rk_double();
}
"""


def test_member_calls_of_a_class_of_the_file_or_its_headers_are_walked(tmp_path):
    """`state->rk_double()` with `R* state` and `R` bound to an instance of a class template (cupy's
    generators, `wrapped<unsigned>`) runs the method's body, which the walk now inlines, from the file
    or a header next to it; an object of a class nobody defines stays a call of unknown cost."""
    m = model_of(GENERATOR + GEN_KERNEL)
    e = estimate_kernel(m, m.kernels[0], SM80, bindings={"R": "wrapped<unsigned>"})
    assert any(n.startswith("inlined: ") and "rk_double" in n for n in e.notes), e.notes
    unknown = estimate_kernel(m, m.kernels[0], SM80, bindings={"R": "lib::state"})
    assert e.registers > unknown.registers + 8, (e.registers, unknown.registers)
    (tmp_path / "gen.cuh").write_text("#pragma once\n" + GENERATOR)
    src = '#include "gen.cuh"\n' + GEN_KERNEL
    (tmp_path / "k.cu").write_text(src)
    hm = model_of(src, path=str(tmp_path / "k.cu"))
    assert estimate_kernel(hm, hm.kernels[0], SM80, bindings={"R": "wrapped<unsigned>"}).registers == e.registers


PACK = """
template <typename T, int N>
struct Pack {
    using Elem = T;
    static const int count = N;
    Elem v[N];
    __device__ T& operator[](int i) { return v[i]; }
    __device__ const T& operator[](int i) const { return v[i]; }
};
template <int N>
__device__ Pack<float, N> load_pack(const float* p, int s) {
    Pack<float, N> r;
#pragma unroll
    for (int k = 0; k < N; ++k) r[k] = p[k * s];
    return r;
}
__global__ void packed(const float* x, float* o, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    using Row = Pack<float, 16>;
    Row a = load_pack<16>(x + i, s);
    float t = 0.f;
#pragma unroll
    for (int k = 0; k < 16; ++k) t += a[k] * a[(k + 3) % 16];
    o[i] = t;
}
__global__ void plain(const float* x, float* o, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) a[k] = x[i + k * s];
    float t = 0.f;
#pragma unroll
    for (int k = 0; k < 16; ++k) t += a[k] * a[(k + 3) % 16];
    o[i] = t;
}
"""


def test_an_array_wrapped_in_a_struct_is_kept_element_by_element():
    """A struct whose one data member is a fixed-size array (deepspeed's `AlignedArray<T, N>`, CUTLASS's
    `Array<T, N>`), indexed through its `operator[]` or its member, returned by value from a helper and
    named through a `using` alias: nvcc splits it into its elements as it does the plain array. ptxas
    (nvcc 13.0) gives both kernels below 32 registers on sm_80 and sm_90; the walk gave the struct one
    register (14) before."""
    packed = estimate(PACK, kernel="packed")
    plain = estimate(PACK, kernel="plain")
    assert 24 <= packed.registers <= 34, packed.registers
    assert abs(packed.registers - plain.registers) <= 4, (packed.registers, plain.registers)
    # `s.e[j]` reaches element j as `s[j]` does: four floats converted one by one take 14 registers in
    # ptxas (sm_80 and sm_90) whatever the element types; counting each struct whole gave 20
    quad = """#include <cstdint>
template <typename T> struct alignas(sizeof(T) * 4) quad { T e[4]; };
template <typename S, typename D>
__global__ void conv4(const void* __restrict__ x, D* __restrict__ y, const int64_t n4) {
    const int64_t i = (int64_t)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n4) return;
    const quad<S> a = ((const quad<S>*)x)[i];
    quad<D> b;
#pragma unroll
    for (int j = 0; j < 4; ++j) b.e[j] = (D)(float)a.e[j];
    ((quad<D>*)y)[i] = b;
}
"""
    e = estimate(quad, bindings={"S": "float", "D": "float"})
    assert 12 <= e.registers <= 16, e.registers
    # halves divided by a scale through a functor on such structs (deepspeed's dequantize_int8_to_half):
    # ptxas 33 (sm_80) and 37 (sm_90); the walk gave 12
    div = """#include <cuda_fp16.h>
#include <stdint.h>
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
    T data[N];
    __device__ T& operator[](int i) { return data[i]; }
    __device__ const T& operator[](int i) const { return data[i]; }
};
template <typename T, int N>
struct scale_by {
    __device__ Vec<T, N> operator()(const Vec<T, N>& v, const T& s) {
        Vec<T, N> r;
#pragma unroll
        for (int i = 0; i < N; ++i) r[i] = v[i] / s;
        return r;
    }
};
template <int N>
__device__ Vec<half, N> widen(const Vec<uint8_t, N>& b) {
    Vec<half, N> r;
#pragma unroll
    for (int i = 0; i < N; ++i) r[i] = half(int(b[i]));
    return r;
}
__global__ void vdiv(const uint8_t* in, half* out, const half* sc, int n, int g) {
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
        Vec<uint8_t, 8> b = reinterpret_cast<const Vec<uint8_t, 8>*>(in)[i];
        half s = sc[i / g];
        Vec<half, 8> h = widen(b);
        h = scale_by<half, 8>()(h, s);
        reinterpret_cast<Vec<half, 8>*>(out)[i] = h;
    }
}
"""
    assert estimate(div).registers >= 22


def test_an_address_read_twice_in_a_statement_is_loaded_once():
    """`q[i] & 3 ... (q[i] >> 2) & 3` in one expression (ctransformers' dequantize_mul_mat_vec_q2_k):
    nvcc loads each address once, as if the code named the value (ptxas, nvcc 13.0: 21 registers on
    sm_80, 24 on sm_90 both ways; the walk gave the repeated form 23, the named one 17). Through a
    `volatile` pointer every read is a load (ptxas 25)."""
    src = """
__global__ void k(const unsigned char* __restrict__ q, const float* __restrict__ y, float* __restrict__ o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    o[i] = y[8 * i] * (A & 3) + y[8 * i + 1] * ((A >> 2) & 3) + y[8 * i + 2] * ((A >> 4) & 3)
         + y[8 * i + 3] * ((A >> 6) & 3) + y[8 * i + 4] * (B & 3) + y[8 * i + 5] * ((B >> 2) & 3)
         + y[8 * i + 6] * ((B >> 4) & 3) + y[8 * i + 7] * ((B >> 6) & 3);
}
"""
    repeated = estimate(src.replace("A", "q[i]").replace("B", "q[i + n]"))
    named = estimate(src.replace("if (i >= n) return;", "if (i >= n) return;\n    const unsigned char a = q[i], b = q[i + n];")
                     .replace("A", "a").replace("B", "b"))
    assert repeated.registers == named.registers, (repeated.registers, named.registers)
    volatile = estimate(src.replace("A", "q[i]").replace("B", "q[i + n]")
                        .replace("const unsigned char* __restrict__ q", "volatile unsigned char* q"))
    assert volatile.registers > repeated.registers, (volatile.registers, repeated.registers)
    # a call between two reads may write memory: the second is a load again
    sums = """__device__ float g(float* p);
__global__ void c(const float* __restrict__ p, float* __restrict__ o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    o[i] = (p[i] + p[i + n] + p[i + 2 * n] + p[i + 3 * n] + p[i + 4 * n] + p[i + 5 * n] + p[i + 6 * n] + p[i + 7 * n])
         * MID * (p[i] + p[i + n] + p[i + 2 * n] + p[i + 3 * n] + p[i + 4 * n] + p[i + 5 * n] + p[i + 6 * n] + p[i + 7 * n]);
}
"""
    assert estimate(sums.replace("MID", "g(o)")).registers >= estimate(sums.replace("MID", "o[n]")).registers + 6
    # ... also what the call's own arguments read
    inside = sums.replace("__device__ float g(float* p);", "__device__ float g(float* p, float x);")
    first = "(p[i] + p[i + n] + p[i + 2 * n] + p[i + 3 * n] + p[i + 4 * n] + p[i + 5 * n] + p[i + 6 * n] + p[i + 7 * n])"
    assert estimate(inside.replace(first + "\n         * MID", "g(o, " + first + ")")).registers \
        >= estimate(inside.replace(first + "\n         * MID", "o[n] * " + first)).registers + 6


def test_halves_combined_by_half_arithmetic_are_kept_in_pairs():
    """Arrays of halves loaded 16 bytes at a time and combined element by element in half arithmetic
    (`a[k] = a[k] * q[k] + b[k] * p[k]`, deepspeed's moe_res_matmul<__half>): nvcc computes them two at
    a time, each pair in one register, read-only operands too (ptxas, nvcc 13.0: 24 registers on sm_80,
    26 on sm_90, where the float version of 4 elements per array takes 28/30; the walk gave 43)."""
    src = """#include <cuda_fp16.h>
template <typename T>
__global__ void fma4(T* r, T* c, T* o, int n) {
    constexpr int V = 16 / sizeof(T);
    for (unsigned t = threadIdx.x * V; t < n; t += blockDim.x * V) {
        T a[V], b[V], p[V], q[V];
        *(uint4*)a = *(const uint4*)(o + t);
        *(uint4*)b = *(const uint4*)(r + t);
        *(uint4*)p = *(const uint4*)(c + t);
        *(uint4*)q = *(const uint4*)(c + t + n);
#pragma unroll
        for (int k = 0; k < V; k++) a[k] = a[k] * q[k] + b[k] * p[k];
        *(uint4*)(o + t) = *(uint4*)a;
    }
}
"""
    half = estimate(src, bindings={"T": "half"}).registers
    single = estimate(src, bindings={"T": "float"}).registers
    assert 22 <= half <= 30, half
    assert half <= single + 2, (half, single)
