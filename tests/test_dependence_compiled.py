"""The dependence fixpoint evaluates expressions in a compiled form (their leaves, read once per
round: FileModel._dep_formula) and reuses a loop idiom's answer while nothing changed; the answers
must be those of walking every expression tree each round (the reference, ``compiled=False``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import shaderlint.model.build as build
from shaderlint.languages import FRONT_ENDS, language_for_path
from shaderlint.model import builtins as B
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = Path(__file__).parent.parent / "examples"


def _model(path: str, text: str):
    return build_model(FRONT_ENDS[language_for_path(path)].parse(Source(path, text.encode("utf-8", "surrogateescape"))))


def _computed(path: str, text: str, compiled: bool):
    m = _model(path, text)
    m._dependence_pending = False
    build._Builder(m).compute_dependence(compiled=compiled)
    return m


def _answers(m) -> dict:
    out = {}
    for f in m.functions:
        for v in list(f.params) + list(f.vars):
            out[(f.name, v.name, v.node.start_byte)] = m.var_deps.get(v, frozenset())
        out[(f.name, "<intrinsic>")] = m.intrinsic_deps.get(f, frozenset())
    where = {}
    stack = [m.root]
    while stack:
        n = stack.pop()
        where[n.id] = (n.start_byte, n.end_byte, n.type)
        stack.extend(n.children)
    names = {id(v): (v.name, v.node.start_byte) for f in m.functions for v in list(f.params) + list(f.vars)}
    flow = m.flow
    for (var, stmt), d in (flow.deps.items() if flow is not None else ()):
        out[("write", names.get(var), where[stmt])] = d
    for n in m.nodes("binary") + m.nodes("call") + m.nodes("assign"):
        out[("node", n.start_byte, n.end_byte, n.type)] = m.deps(n)
    return out


def _files():
    return sorted(str(p) for base in (FIXTURES, EXAMPLES) for p in base.rglob("*")
                  if p.is_file() and language_for_path(str(p)) and ".fixed." not in p.name)


@pytest.mark.parametrize("path", _files())
def test_compiled_fixpoint_equals_the_tree_walk(path):
    text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    fast, walk = _computed(path, text, True), _computed(path, text, False)
    assert _answers(fast) == _answers(walk)
    assert fast._dep_leaves is None and not fast._dep_forms  # nothing of the compiled form kept


CHAIN = """
__global__ void k(float* out, int n) {
    int t = threadIdx.x;
    int u = %s;
    __shared__ float s[256];
    s[t] = 1.0f;
    __syncthreads();
    if (u < n) { __syncthreads(); }
    out[t] = u;
}
"""


@pytest.mark.parametrize("depth", [5, 120, 260])
def test_deep_expressions_fall_back_to_the_walk(depth):
    """Below MAX_EXPR_DEPTH / 2 levels the compiled form is used; deeper the walk decides (its depth
    limit makes a too-deep expression 'unknown', which the compiled form must not change)."""
    expr = "(" * depth + "t" + ")" * depth
    fast = _computed("k.cu", CHAIN % expr, True)
    walk = _computed("k.cu", CHAIN % expr, False)
    u = next(v for f in fast.functions for v in f.vars if v.name == "u")
    u2 = next(v for f in walk.functions for v in f.vars if v.name == "u")
    assert fast.var_deps[u] == walk.var_deps[u2]
    if depth > 200:
        assert fast.var_deps[u] == {B.UNKNOWN_DEP}  # (the walk's depth limit, kept)
    else:
        assert B.LOCAL in fast.var_deps[u]


def test_compiled_form_is_used(monkeypatch):
    seen = []
    original = build.FileModel._dep_formula

    def spy(self, node, depth=0):
        seen.append(node.id)
        return original(self, node, depth)

    monkeypatch.setattr(build.FileModel, "_dep_formula", spy)
    _computed("k.cu", CHAIN % "t + 1", True)
    assert seen
