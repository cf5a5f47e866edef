"""The thread-dependence fixpoint of the model runs when first asked for, not in every build: a file
whose rules never ask skips its cost, and the answers are those the eager build gave."""

from __future__ import annotations

from pathlib import Path

import pytest

import shaderlint.model.build as build
from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.languages import FRONT_ENDS, language_for_path
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

FIXTURES = Path(__file__).parent / "fixtures"

NO_QUESTION = """
__global__ void add_one(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + 1.0f;
}
"""

BARRIER = """
__global__ void stage(const float* a, float* out) {
    __shared__ float tile[256];
    int t = threadIdx.x;
    tile[t] = a[t];
    __syncthreads();
    if (t < 128) {
        __syncthreads();
    }
    out[t] = tile[255 - t];
}
"""


DIVISION = """
__global__ void scale(const float* a, float* out, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[i] / s + a[i >> 2];
}
"""


def _model(path: str, text: str):
    return build_model(FRONT_ENDS[language_for_path(path)].parse(Source(path, text.encode())))


def test_not_computed_when_no_rule_asks(fixpoint_runs):
    r = lint_source("k.cu", NO_QUESTION.encode(), Settings())
    assert r.model is not None and r.diagnostics == []
    assert fixpoint_runs == []


def test_not_computed_for_divisions_by_other_than_the_simd_width(fixpoint_runs):
    """SL404 asks whether the left side of ``x / 32`` (``x >> 5``) is thread-dependent only when the
    divisor is the SIMD width."""
    r = lint_source("k.cu", DIVISION.encode(), Settings())
    assert r.diagnostics == []
    assert fixpoint_runs == []


def test_computed_once_when_a_rule_asks(fixpoint_runs):
    r = lint_source("k.cu", BARRIER.encode(), Settings(select=("SL403",)))
    assert [d.code for d in r.diagnostics] == ["SL403"]
    assert fixpoint_runs == [1]
    r.model.var_deps, r.model.flow, r.model.deps(r.model.root)  # answered from the first run
    assert fixpoint_runs == [1]


def _answers(model) -> dict:
    out = {}
    for f in model.functions:
        for v in list(f.params) + list(f.vars):
            out[(f.name, v.name, v.node.start_byte)] = model.var_deps.get(v, frozenset())
        out[(f.name, "<intrinsic>")] = model.intrinsic_deps.get(f, frozenset())
    for n in model.nodes("binary") + model.nodes("call"):
        out[("node", n.start_byte, n.end_byte, n.type)] = model.deps(n)
    return out


@pytest.mark.parametrize("path", sorted(str(p) for p in FIXTURES.rglob("*")
                                        if p.is_file() and language_for_path(str(p)) and ".fixed." not in p.name))
def test_same_answers_as_computed_at_the_end_of_the_build(path):
    text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    eager = _model(path, text)
    eager._ensure_dependence()  # what the build used to do as its last step
    lazy = lint_source(path, text.encode("utf-8", "surrogateescape"), Settings(select=("ALL",))).model
    if lazy is None:
        pytest.skip("not analysed")
    assert _answers(lazy) == _answers(eager)


def test_an_interrupted_fixpoint_starts_over_when_asked_again(monkeypatch):
    model = _model("k.cu", BARRIER)
    original = build.ReachingWrites

    def interrupted(*a, **kw):  # halfway through the fixpoint (as a time budget running out would)
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "ReachingWrites", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.var_deps
    monkeypatch.setattr(build, "ReachingWrites", original)
    eager = _model("k.cu", BARRIER)
    eager._ensure_dependence()
    assert model.var_deps and _answers(model) == _answers(eager)


REWRITTEN = """
__global__ void k(const float* a, float* out) {
    float s = a[threadIdx.x];
    s = s * 2.0f;
    out[threadIdx.x] = s;
}
"""


def test_the_flows_structure_is_answered_without_the_fixpoint(fixpoint_runs):
    """model.write_flow (which writes reach a use) collects the writes without running the fixpoint;
    the fixpoint, asked later, takes the same flow over, and the answers are the eager build's."""
    model = _model("k.cu", REWRITTEN)
    f = model.functions[0]
    s = next(v for v in f.vars if v.name == "s")
    use = _last_s(model)
    flow = model.write_flow
    got = flow.reaching(s, use)
    assert fixpoint_runs == [] and got is not None and len(got) == 1  # (only `s = s * 2.0f` reaches the store)
    assert model.var_deps and fixpoint_runs == [1] and model.flow is flow and model.write_flow is flow
    eager = _model("k.cu", REWRITTEN)
    eager._ensure_dependence()
    assert _answers(model) == _answers(eager)
    assert len(eager.flow.reaching(eager.functions[0].vars[0], _last_s(eager))) == 1
    assert got[0] in flow.deps  # (the fixpoint filled the flow the structure question made)


def _last_s(model):
    stack, found = [model.functions[0].body], []
    while stack:
        n = stack.pop()
        if n.type == "identifier" and model.text(n) == "s":
            found.append(n)
        stack.extend(n.named_children)
    return max(found, key=lambda n: n.start_byte)
