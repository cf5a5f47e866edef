"""Divisibility and lower-bound proofs over host code (shaderlint.model.divisibility), where the
fixtures (tests/fixtures/cuda/sl503/) cannot reach: which variables keep their value, the proof's
budget on long call chains, odd syntax."""

from __future__ import annotations

import time

from shaderlint.config import Settings
from shaderlint.engine import lint_source

KERNEL = "__global__ void k(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = 0.0f; }\n"


def sl503_lines(text: str) -> list[int]:
    result = lint_source("t.cu", (KERNEL + text).encode(), Settings(select=("SL503", "SL001")))
    assert not [d for d in result.diagnostics if d.code == "SL001"]
    return [d.line - 1 for d in result.diagnostics if d.code == "SL503"]


def test_checked_value_changed_before_the_launch_is_not_trusted():
    # the textual check of the launching function (any `n % 256` in it) is older and more lenient;
    # a fact on a variable written after the check does not prove anything by itself
    assert sl503_lines("void f(float* y, int n, int m) {\n"
                       "  int a = m;\n"
                       "  assert(a % 256 == 0);\n"
                       "  a += 1;\n"
                       "  int b = a;\n"
                       "  k<<<b / 256, 256>>>(y, b);\n"
                       "}\n") == [6]


def test_value_handed_by_reference_is_not_a_constant():
    text = ("void read_size(int& v);\n"
            "void f(float* y) {\n"
            "  int n = 4096;\n"
            "  read_size(n);\n"
            "  k<<<n / 256, 256>>>(y, n);\n"
            "}\n")
    assert sl503_lines(text) == [5]
    assert sl503_lines(text.replace("  read_size(n);\n", "")) == []


def test_caller_facts_need_every_caller_and_the_right_argument():
    callee = "void launch(float* y, int n, int m) { k<<<n / 256, 256>>>(y, n); }\n"
    ok = "void a(float* y, int n) { assert(n % 256 == 0); launch(y, n, 3); }\n"
    wrong_arg = "void b(float* y, int n, int m) { assert(m % 256 == 0); launch(y, n, m); }\n"
    method = "struct S { void launch(float*, int, int); };\nvoid c(float* y, int n, S s) { s.launch(y, n, 1); }\n"
    assert sl503_lines(callee + ok) == []
    assert sl503_lines(callee + ok + wrong_arg) == [1]
    assert sl503_lines(callee + ok + "void d(float* y) { launch(y, 1000, 0); }\n") == [1]
    assert sl503_lines(callee + ok + "void e(float* y) { launch(y, 4096, 0); }\n") == []
    assert sl503_lines(callee + ok + method) == [1]  # a method of the same name: not told apart
    assert sl503_lines(callee + ok + "auto p = &launch;\n") == [1]  # called from who knows where


def test_recursive_callers_prove_nothing():
    text = ("void launch(float* y, int n) { if (n > 4096) { launch(y, n / 2); return; } k<<<n / 256, 256>>>(y, n); }\n"
            "void a(float* y, int n) { assert(n % 256 == 0); launch(y, n); }\n")
    assert sl503_lines(text) == [1]


def test_long_call_chains_stay_within_budget():
    # 3 levels of functions, each called from 60 places (all checked in the end): the proof gives up
    # (the finding stays) rather than walk the 60**3 paths, which the depth limit alone allows
    parts = ["void f0(float* y, int n) { k<<<n / 256, 256>>>(y, n); }\n"]
    for i in range(1, 3):
        calls = " ".join(f"f{i - 1}(y, n * {j});" for j in range(1, 61))
        parts.append(f"void f{i}(float* y, int n) {{ {calls} }}\n")
    parts.append("void top(float* y, int n) { assert(n % 256 == 0); f2(y, n); }\n")
    t0 = time.process_time()
    lines = sl503_lines("".join(parts))
    assert time.process_time() - t0 < 20  # generous: well under a second in practice
    assert lines == [1]
    # a shorter chain is proven within the budget
    assert sl503_lines("".join(parts[:2]) + "void top(float* y, int n) { assert(n % 256 == 0); f1(y, n); }\n") == []


def test_odd_syntax_does_not_crash():
    for text in ("void f(float* y, int n) { assert(n % 0 == 0); k<<<n / 256, 256>>>(y, n); }\n",
                 "void f(float* y, int n) { assert(); k<<<n / 256, 256>>>(y, n); }\n",
                 "void f(float* y, int n) { if (n %) return; k<<<n / 256, 256>>>(y, n); }\n",
                 "void f(float* y, int s) { int n = 1 << s; assert(s >= 100); k<<<n / 256, 256>>>(y, n); }\n",
                 "static int g = 1 << 70;\nvoid f(float* y) { k<<<g / 256, 256>>>(y, g); }\n"):
        lint_source("t.cu", (KERNEL + text).encode(), Settings(select=("SL503",)))
