"""Deep syntax trees: no RecursionError anywhere, expression questions answer "unknown" past a depth
limit (``shaderlint.model.expr.MAX_EXPR_DEPTH``), and ordinary depths keep their precise answers.
Deeper than ``shaderlint.languages.depth.MAX_TREE_DEPTH`` the front end cuts the code (SL001): see
``test_bounds.py``."""

from __future__ import annotations

import re
import sys
import time

import pytest

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.languages import FRONT_ENDS
from shaderlint.languages.depth import MAX_TREE_DEPTH
from shaderlint.model.build import build_model
from shaderlint.model.expr import MAX_EXPR_DEPTH
from shaderlint.model.source import Source
from shaderlint.model.types import UNKNOWN
from tests.robustness.conftest import SENTINEL_RULES

DEPTH = 10_000
# Deeper than the expression limit but within the tree the front end keeps (a call or subscript nests
# two tree levels a time), so that the model holds the deep expressions.
EXPR_DEPTH = (MAX_TREE_DEPTH - 50) // 2
assert EXPR_DEPTH > 2 * MAX_EXPR_DEPTH
CRASH = re.compile(r"failed on this file|could not analyse this file: [A-Z]\w*(Error|Exception)\b")

#: Deeply nested expressions of every shape the grammars produce; ``E`` marks where each goes.
SHAPES = {
    "parens": lambda n: "(" * n + "a[1]" + ")" * n,
    "unary_minus": lambda n: "-" * n + "a[1]",
    "unary_not": lambda n: "!" * n + "a[1]",
    "bit_not": lambda n: "~" * n + "a[1]",
    "sum_left": lambda n: "a[1]" + " + a[1]" * n,
    "sum_right": lambda n: "(a[1] + " * n + "a[1]" + ")" * n,
    "product_of_sums": lambda n: "(a[1] * (a[2] + " * (n // 2) + "1" + "))" * (n // 2),
    "division_chain": lambda n: "a[1]" + " / a[2]" * n,
    "ternary": lambda n: "a[1] ? " * n + "1" + " : 2" * n,
    "calls": lambda n: "f(" * n + "a[1]" + ")" * n,
    "casts": lambda n: "(int)" * n + "a[1]",
    "subscripts": lambda n: "a[" * n + "0" + "]" * n,
    "comma": lambda n: "(" + "a[1], " * n + "a[2])",
    "shifts": lambda n: "a[1]" + " << 1" * n,
    "logic": lambda n: "a[1] && " * n + "a[2]",
    "compare": lambda n: "a[1] < " * n + "a[2]",
}

WRAP = {
    "cuda": ("k.cu", "__device__ int f(int x) {{ return x; }}\n"
                     "__global__ void k(int* a) {{ int t[4]; t[a[0]] = {E}; a[0] = t[a[3]] / {E}; }}\n"),
    "metal": ("k.metal", "int f(int x) {{ return x; }}\n"
                         "kernel void k(device int* a [[buffer(0)]], uint tid [[thread_position_in_grid]]) "
                         "{{ int t[4]; t[a[0]] = {E}; a[tid] = t[a[3]] / {E}; }}\n"),
    "glsl": ("k.comp", "#version 450\nlayout(local_size_x = 64) in;\n"
                       "layout(std430, binding = 0) buffer B {{ int a[]; }};\nint f(int x) {{ return x; }}\n"
                       "void main() {{ int t[4]; t[a[0]] = {E}; a[gl_GlobalInvocationID.x] = t[a[3]] / {E}; }}\n"),
}


@pytest.mark.parametrize("language", sorted(WRAP))
def test_deep_expressions_never_crash(language):
    """Every shape in CUDA; Metal and GLSL share the C expression grammar, so a few shapes suffice there."""
    path, wrap = WRAP[language]
    shapes = SHAPES if language == "cuda" else {k: SHAPES[k] for k in ("parens", "unary_minus", "sum_left",
                                                                       "sum_right", "ternary", "calls")}
    for shape, make in shapes.items():
        data = wrap.format(E=make(DEPTH)).encode()
        t0 = time.monotonic()
        r = lint_source(path, data, Settings(extend_select=SENTINEL_RULES, time_budget=1.0))  # past it: an SL001, which is fine here
        assert time.monotonic() - t0 < 6, shape
        for d in r.diagnostics:
            assert not (d.code == "SL001" and CRASH.search(d.message)), (shape, d.message)
            assert 0 <= d.start <= d.end <= len(data)


def _model(language: str, data: bytes):
    path = WRAP[language][0]
    return build_model(FRONT_ENDS[language].parse(Source(path, data)))


def _exprs(model):
    """Every expression node of the model's captures, outermost and innermost alike."""
    out = []
    for cap in ("binary", "assign", "call", "subscript", "init"):
        out += model.nodes(cap)
    return out


@pytest.mark.parametrize("shape", ["parens", "sum_left", "sum_right", "unary_minus", "calls", "ternary", "comma"])
def test_expression_questions_answer_unknown_when_too_deep(shape):
    data = WRAP["cuda"][1].format(E=SHAPES[shape](EXPR_DEPTH)).encode()
    m = _model("cuda", data)
    nodes = _exprs(m)
    assert nodes and not m.errors
    # Ask from deep inside an already deep Python stack, as a recursive rule would.
    def ask(k: int):
        if k:
            return ask(k - 1)
        for n in nodes[:200] + nodes[-200:]:
            m.type_of(n)
            m.const_value(n)
            m.is_constant(n)
            m.deps(n)
            m.base_var(n)
    limit = sys.getrecursionlimit()
    ask(max(0, limit - 3 * MAX_EXPR_DEPTH - 150))


def test_ordinary_depths_stay_precise():
    """Well inside the limit the answers are exact: a 40-term constant folds, a 40-term sum has a type."""
    n = 40
    const = "(1 + " * n + "1" + ")" * n
    var = "(x + " * n + "x" + ")" * n
    data = (f"__global__ void k(int* a, int x) {{ for (int i = 0; i < x; ++i) {{ a[i] = a[i] / {const}; "
            f"a[i] += a[i + 1] / {var}; }} }}\n").encode()
    r = lint_source("k.cu", data, Settings(select=("SL201",)))
    # The constant denominator is folded (no report); the variable one is reported once, at its `/`.
    assert [d.code for d in r.diagnostics] == ["SL201"]
    assert data[r.diagnostics[0].start:r.diagnostics[0].start + 1] == b"/"
    m = _model("cuda", data)
    divs = m.nodes("binary_div")
    assert m.const_value(divs[0].child_by_field_name("right")) == n + 1
    assert m.type_of(divs[1].child_by_field_name("right")) != UNKNOWN


def test_depth_counter_is_restored_after_errors():
    data = WRAP["cuda"][1].format(E=SHAPES["sum_left"](EXPR_DEPTH)).encode()
    m = _model("cuda", data)
    for n in _exprs(m)[:50]:
        m.type_of(n)
        m.deps(n)
    assert m.__dict__.get("_expr_depth", 0) == 0


@pytest.mark.parametrize("language", sorted(WRAP))
def test_deep_statements_never_crash(language):
    path, wrap = WRAP[language]
    bodies = {
        "blocks": "{" * DEPTH + "a[0] = a[1] / a[2];" + "}" * DEPTH,
        "ifs": "if (a[0] > 0) " * 3000 + "a[0] = a[1] / a[2];",
        "else_ifs": "if (a[0] == 0) a[0] = 1; else " * 3000 + "a[0] = 2;",
        "loops": "for (int i = 0; i < 4; i++) " * 500 + "a[0] = a[1] / a[2];",
        "whiles": "while (a[0] > 0) " * 2000 + "a[0] = a[0] - 1;",
        "switches": "switch (a[0]) { case 1: " * 1000 + "a[0] = 2;" + " }" * 1000,
        "returns": "if (a[0] == 1) return; " * 5000,
    }
    for name, body in bodies.items():
        data = wrap.format(E="a[1]").replace("int t[4];", body).encode()
        r = lint_source(path, data, Settings(extend_select=SENTINEL_RULES, time_budget=1.0))
        for d in r.diagnostics:
            assert not (d.code == "SL001" and CRASH.search(d.message)), (name, d.message)
