"""Questions the rules ask in the order that spares the costly ones: SL404 judges the group-size
evidence that needs the file's thread-dependence fixpoint (``x / 32`` with ``x`` thread-dependent)
only for a kernel that stores a SIMD reduction to memory; SL203 reads casts and user-defined
literals from the model's captures. The answers are those of the questions asked in the old order."""

from __future__ import annotations

import pytest

import shaderlint.model.sync as sync
from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

WARP_SUM = """
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}
"""

STORED = WARP_SUM + """
__global__ void total(const float* a, float* out) {
    int warp = threadIdx.x / 32;
    float s = warp_sum(a[threadIdx.x]);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
"""

NOT_STORED = WARP_SUM + """
__global__ void scaled(const float* a, float* out) {
    int warp = threadIdx.x / 32;
    float s = warp_sum(a[threadIdx.x]);
    out[threadIdx.x] = a[threadIdx.x] * 2.0f + warp;
}
"""

UNIFORM_DIVISION = WARP_SUM + """
__global__ void total(const float* a, float* out, int n) {
    int rows = n / 32;
    float s = warp_sum(a[threadIdx.x]);
    if (threadIdx.x == 0) out[rows] = s;
}
"""


def _model(text: str):
    return build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", text.encode())))


def test_sl404_does_not_ask_for_the_fixpoint_without_a_stored_reduction(fixpoint_runs):
    r = lint_source("k.cu", NOT_STORED.encode(), Settings(select=("SL404",)))
    assert r.model is not None and r.diagnostics == []
    assert fixpoint_runs == []


def test_sl404_still_reports_a_stored_reduction_on_the_division_evidence(fixpoint_runs):
    r = lint_source("k.cu", STORED.encode(), Settings(select=("SL404",)))
    assert [d.code for d in r.diagnostics] == ["SL404"]
    assert "warp_sum" in r.diagnostics[0].message
    assert fixpoint_runs == [1]  # (the division's thread dependence decided it)


def test_sl404_a_uniform_division_is_no_evidence():
    r = lint_source("k.cu", UNIFORM_DIVISION.encode(), Settings(select=("SL404",)))
    assert r.diagnostics == []


def test_the_evidence_in_two_steps_is_spans_several_simd_groups():
    for text, spans in ((STORED, True), (NOT_STORED, True), (UNIFORM_DIVISION, False)):
        m = _model(text)
        k = next(f for f in m.functions if f.is_entry)
        found = sync.simd_group_evidence(m, k, 32)
        assert isinstance(found, list) and [m.text(x) for x in found] == [m.text(found[0])] \
            and m.text(found[0]) in ("threadIdx.x", "n")
        assert sync.spans_several_simd_groups(m, k, 32) is spans
        assert sync.simd_group_evidence(m, k, 64) == []  # (divided by 32, not by the width)
    barrier = _model("__global__ void k(float* a) { __syncthreads(); a[0] = 1.0f; }")
    assert sync.simd_group_evidence(barrier, barrier.functions[0], 32) is True


def test_reduction_stores_are_the_stores_of_a_reduction_to_memory():
    m = _model(STORED)
    k = next(f for f in m.functions if f.is_entry)
    got = sync.reduction_stores(m, k)
    assert [(m.text(left), space) for _, left, _, space in got] == [("out[blockIdx.x]", "device")]
    assert sync.reduction_stores(m, k) is got  # memoized
    m = _model(NOT_STORED)
    assert sync.reduction_stores(m, next(f for f in m.functions if f.is_entry)) == []


@pytest.mark.parametrize("text, literal", [
    ("__global__ void k(__half* o) { o[0] = (__half)70000.0f; }", "70000.0f"),
    ("__device__ __half operator\"\"_h(long double);\n__global__ void k(__half* o) { o[0] = 1e5_h; }", "1e5_h"),
])
def test_sl203_finds_casts_and_user_defined_literals_in_the_model_captures(text, literal):
    m = _model(text)
    assert m.nodes("cast") or m.nodes("udl")
    r = lint_source("k.cu", text.encode(), Settings(select=("SL203",)))
    assert [d.code for d in r.diagnostics] == ["SL203"] and literal in r.diagnostics[0].message
