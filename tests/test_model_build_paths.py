"""The model build's shortcuts (pure speed changes) answer as the straightforward code they replace,
kept here as the reference: the division nodes found from their operator tokens, the write targets
found from the pointer expressions, the barriers found only in calls whose text holds a barrier name."""

from __future__ import annotations

import pytest

from shaderlint.languages import FRONT_ENDS
from shaderlint.model.build import build_model
from shaderlint.model.expr import descendants
from shaderlint.model.source import Source

_DIV = ("/", "%", "/=", "%=")


def _model(path: str, code: str):
    lang = {"cu": "cuda", "metal": "metal", "comp": "glsl"}[path.rsplit(".", 1)[1]]
    return build_model(FRONT_ENDS[lang].parse(Source(path, code.encode())))


def _division_reference(m) -> list[int]:
    """What the build collected before: every binary expression and assignment (in the order of the
    captures, binaries first) whose operator is a division, stably sorted by start."""
    found = [n for n in m.nodes("binary") + m.nodes("assign")
             if (op := n.child_by_field_name("operator")) is not None and op.type in _DIV]
    return [n.id for n in sorted(found, key=lambda n: n.start_byte)]


CUDA = """
template <int N> __device__ int f(int a, int b, int c) { return a / b / c % (a / 2) + N / 4; }
__global__ void k(float* out, int* hist, int n, int m) {
    __shared__ float tile[256];
    int x = n / m / 2, y = n % m % 3;
    x /= 2; y %= 5;
    x = (x / (y + 1)) / ((y % 2) + 1);
    atomicAdd(&hist[x % 16], 1);
    atomicAdd(&(tile[threadIdx.x]), 1.0f);
    f<8 / 2>(x, y, n / m);
    __syncthreads();
    cooperative_groups::this_thread_block().sync();
    ::__syncthreads();
    out[x / 4] = tile[(threadIdx.x + 1) % 256] / 3.0f;
}
"""
METAL = """
kernel void k(device float* out [[buffer(0)]], threadgroup float* t [[threadgroup(0)]],
              uint i [[thread_position_in_grid]]) {
    float a = out[i / 2] / 3.0f % 2;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = t[i % 32] / a;
}
"""
GLSL = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float d[]; } b;
shared float s[64];
void main() {
    uint i = gl_LocalInvocationID.x / 2 % 64;
    s[i % 64] = b.d[i / 2] / 3.0;
    barrier();
    memoryBarrierShared();
    b.d[i] = s[(i + 1) % 64] / 2.0;
}
"""


@pytest.mark.parametrize("path,code", [("k.cu", CUDA), ("k.metal", METAL), ("k.comp", GLSL)])
def test_division_nodes_are_those_with_a_division_operator_in_capture_order(path, code):
    m = _model(path, code)
    got = [n.id for n in m.nodes("binary_div")]
    assert got == _division_reference(m)
    assert len(got) >= 4
    starts = [n.start_byte for n in m.nodes("binary_div")]
    assert len(set(starts)) < len(starts)  # (divisions starting together: `a / b / c`, `i / 2] / 3.0f % 2`)
    assert "div_operator" not in m.captures


def test_write_targets_are_the_pointer_arguments_of_calls():
    from shaderlint.model.build import _write_targets

    m = _model("k.cu", CUDA)
    reference = set()
    for args in descendants(m.root, "argument_list"):
        for p in args.named_children:
            if p.type == "pointer_expression":
                stack = [p.child_by_field_name("argument")]
                while stack:
                    x = stack.pop()
                    reference.add(x.id)
                    if x.type == "parenthesized_expression":
                        stack.extend(x.named_children)
    assert reference and reference <= _write_targets(m)
    k = m.function_by_name["k"]
    writes = [m.text(a.node) for a in k.accesses if a.is_write]
    assert "hist[x % 16]" in writes and "tile[threadIdx.x]" in writes


@pytest.mark.parametrize("path,code,names", [
    ("k.cu", CUDA, ["__syncthreads", "sync", "__syncthreads"]),
    ("k.metal", METAL, ["threadgroup_barrier"]),
    ("k.comp", GLSL, ["barrier", "memoryBarrierShared"]),
])
def test_barriers_are_found_in_every_call_naming_one(path, code, names):
    m = _model(path, code)
    kernel = next(f for f in m.functions if f.name in ("k", "main"))
    assert [b.name for b in kernel.barriers] == names
