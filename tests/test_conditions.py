"""Conditional compilation where the macros are known (shaderlint.languages.conditions): the #if
evaluator's three values, the walk over a file's directives, the build's predefined macros, and what
the model sees of dead branches."""

from __future__ import annotations

import pytest

from shaderlint.languages import FRONT_ENDS
from shaderlint.languages.conditions import OPAQUE, Evaluator, dead_regions, parse_define, predefined
from shaderlint.model.build import build_model
from shaderlint.model.preproc import macro_names
from shaderlint.model.source import Source

STATE = {"TILE": "256", "STAGES": "(TILE / 64)", "SUM": "1 + 2", "EMPTY": "", "GONE": None, "ARCH": OPAQUE,
         "F": OPAQUE, "SELF": "SELF + 1", "NEG": "-1", "HEX": "0x10u"}


@pytest.mark.parametrize("cond,value", [
    ("TILE == 256", 1), ("STAGES * 2 == 8", 1), ("SUM * 3", 7),  # expanded as tokens: 1 + 2 * 3
    ("defined(TILE) && defined GONE", 0), ("defined(GONE) || !defined(TILE)", 0), ("!GONE", 1),  # undefined is 0
    ("UNKNOWN_NAME", None), ("defined(UNKNOWN_NAME)", None), ("defined(ARCH)", 1), ("ARCH >= 800", None),
    ("UNKNOWN_NAME && 0", 0), ("0 && UNKNOWN_NAME", 0), ("UNKNOWN_NAME || TILE", 1), ("UNKNOWN_NAME || 0", None),
    ("UNKNOWN_NAME ? 2 : 2", 2), ("TILE > 100 ? 1 : UNKNOWN_NAME", 1), ("(TILE << 2) % 1000 - (7 / -2)", 27),
    ("EMPTY", None), ("EMPTY == 1", None), ("F(1)", None), ("__has_include(<cuda.h>)", None), ("SELF", None),
    ("1 / 0", None), ("NEG < 0u", None), ("HEX == 16", 1), ("1.5 > 1", None), ("'a' == 97", None), ("09", None),
    ("(1", None), ("1 +", None), ("", None), ("1, 2", None), ("0x7fffffffffffffff * 4", None),
])
def test_evaluator_three_values(cond, value):
    assert Evaluator(dict(STATE)).value(cond) == value


def test_expansion_is_bounded():
    state = {f"M{i}": f"M{i + 1} + M{i + 1}" for i in range(40)}
    state["M40"] = "1"
    assert Evaluator(state).value("M0 > 0") is None  # 2^40 tokens: unknown, quickly


def live_text(code: str, pre=()) -> str:
    src = Source("k.cu", code.encode())
    buf = bytearray(src.data)
    for s, e in dead_regions(src, pre):
        buf[s:e] = bytes(c if c in b"\n" else 32 for c in buf[s:e])
    return " ".join(buf.decode().split())


def test_file_order_and_groups():
    code = """#ifdef A
a1
#endif
#define A
#ifdef A
a2
#else
a3
#endif
#undef A
#if defined(A)
a4
#elif B
b1
#else
c1
#endif
"""
    assert live_text(code) == "#ifdef A a1 #endif #define A a2 #undef A #if defined(A) #elif B b1 #else c1 #endif"


def test_definitions_in_a_branch_that_may_be_read():
    code = """#define T 1
#ifdef MAYBE
#define T 2
#endif
#if T == 1
t1
#endif
#define U 1
#ifdef MAYBE
#undef U
#define U 1
#else
#define W 5
#endif
#if U == 1
u1
#endif
#if W == 5
w1
#endif
#if 1
#define V 3
#else
#define V 4
#endif
#if V == 4
v4
#endif
"""
    # T is 1 or 2: unknown; U is 1 either way; W may be undefined: unknown; V is 3
    text = live_text(code)
    assert "t1" in text and "#if T == 1" in text
    assert "u1" in text and "#if U == 1" not in text
    assert "w1" in text and "#if W == 5" in text
    assert "v4" not in text and "#define V 3" in text and "#define V 4" not in text


GGML = """#if defined(GGML_USE_HIPBLAS)
#define __CUDA_ARCH__ 1300
#endif
#ifndef CC_TURING
#define CC_TURING 700
#endif
#if __CUDA_ARCH__ < CC_TURING
bounded
#endif
#if CUDART_VERSION >= 12000 || defined(_WIN32) || INT_MAX > 0
toolkit
#endif
#ifdef CUDART_VERSION
#define T 2
#endif
#if T == 2
t2
#endif
#ifdef NDEBUG
nodebug
#endif
"""


def test_complete_defines_make_names_nothing_defines_undefined():
    """ggml's launch bound under `#if __CUDA_ARCH__ < CC_TURING`: with the build's defines complete,
    GGML_USE_HIPBLAS is undefined (the file's `__CUDA_ARCH__ 1300` is not read) and CC_TURING is the
    file's 700, so sm_80 does not read the branch. Names a header never read or the compiler may define
    (CUDART_VERSION, _WIN32, INT_MAX) stay unknown, and so does one a branch read or not defines."""
    sm80 = predefined("cuda", "sm_80")
    assert "bounded" in live_text(GGML, sm80) and "nodebug" in live_text(GGML, sm80)  # not complete: unknown
    text = live_text(GGML, predefined("cuda", "sm_80", complete=True))
    assert "bounded" not in text and "1300" not in text and "#define CC_TURING 700" in text
    assert "toolkit" in text and "#if CUDART_VERSION" in text
    assert "nodebug" not in text
    assert "#if T == 2" in text and "t2" in text  # T is 2 or undefined: unknown, not undefined
    assert "bounded" in live_text(GGML, predefined("cuda", "sm_75", ("CC_TURING=800",), complete=True))
    text = live_text(GGML, predefined("cuda", "sm_90", ("GGML_USE_HIPBLAS",), complete=True))
    assert "#define __CUDA_ARCH__ 1300" in text and "bounded" not in text


ALTERNATIVES = """#ifdef W64
#define WARP 64
#else
#define WARP 32
#endif
#if WARP >= 32
at_least_32
#endif
#if WARP == 32
exactly_32
#endif
#ifndef WARP
no_warp
#endif
#ifdef MAYBE
#define T 1
#endif
#if T > 1
t_above_1
#endif
"""


def test_a_condition_every_alternative_decides_alike_is_decided():
    """WARP is 64 or 32 after the group: `WARP >= 32` and `defined WARP` hold either way, `WARP ==
    32` is unknown. T is 1 or unknown (a -D may define it), or with complete defines 1 or undefined:
    `T > 1` is false both ways then."""
    text = live_text(ALTERNATIVES)
    assert "at_least_32" in text and "#if WARP >= 32" not in text
    assert "exactly_32" in text and "#if WARP == 32" in text
    assert "no_warp" not in text
    assert "t_above_1" in text and "#if T > 1" in text
    assert "t_above_1" not in live_text(ALTERNATIVES, predefined("cuda", "sm_80", complete=True))
    assert "exactly_32" not in live_text(ALTERNATIVES, predefined("cuda", "sm_80", ("W64",)))


def test_dead_branches_nest_and_lines_stay():
    code = "#if 0\n#if 1\nx\n#else\ny\n#endif\n#define Z 1\n#endif\n#ifdef Z\nz\n#endif\n"
    text = live_text(code)
    assert "x" not in text and "y" not in text and text == "#ifdef Z z #endif"  # Z's #define was dead
    src = Source("k.cu", code.encode())
    assert all(code[s:e].count("\n") == code[s:e].count("\n") for s, e in dead_regions(src))


def test_unbalanced_and_odd_directives_do_not_break():
    for code in ("#endif\n#else\nx\n", "#if 0\nx\n", "#if 0 /* a\n b */\nx\n#endif\n", "#if 1 // c\nx\n#else\ny\n#endif\n",
                 "#  if  0 \\\n  || 0\nx\n#endif\n", "#ifdef\n#endif\n", "#if\n#endif\n", "#define\n#undef\n",
                 "// #if 0\nx\n// #endif\n", "s = \"\\\n#if 0\";\n"):
        src = Source("k.cu", code.encode())
        for s, e in dead_regions(src):
            assert 0 <= s <= e <= len(code)
    assert live_text("#if 1 // c\nx\n#else\ny\n#endif\n") == "x"
    assert live_text("#  if  0 \\\n  || 0\nx\n#endif\n") == ""
    assert live_text("#if U\nu\n#elif 0\nx\n#endif\n") == "#if U u #elif 0 #endif"  # U's condition stays
    assert live_text("// #if 0\nx\n// #endif\n") == "// #if 0 x // #endif"


@pytest.mark.parametrize("target,arch", [("sm_75", "750"), ("sm_80", "800"), ("sm_86", "860"), ("sm_89", "890"),
                                         ("sm_90", "900"), (None, OPAQUE), ("rdna2", None), ("generic-32", None)])
def test_cuda_arch_from_the_target(target, arch):
    got = dict(predefined("cuda", target))
    assert got.get("__CUDA_ARCH__") == arch
    assert "__CUDA_ARCH__" not in dict(predefined("metal", target)) and "__CUDA_ARCH__" not in dict(predefined("glsl", target))


def test_defines_setting_is_read_as_dash_d():
    assert [parse_define(d) for d in ("FUSED", "N=4", " N = 4 ", "E=", "F(x)=x", "4", "")] == \
        [("FUSED", "1"), ("N", "4"), ("N", "4"), ("E", ""), None, None, None]
    assert dict(predefined("cuda", "sm_80", ["__CUDA_ARCH__=700", "A"])) == {"__CUDA_ARCH__": "700", "A": "1"}


def test_the_model_sees_only_the_live_definition():
    code = b"""#define NARROW
#ifndef NARROW
#define ROWS 96
#define ONLY_DEAD 1
#else
#define ROWS 48
#endif
__global__ void k(float* a) { a[threadIdx.x] = ROWS; }
"""
    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", code)))
    assert m.macros.get("ROWS") == 48 and "ONLY_DEAD" not in m.macros
    assert "ONLY_DEAD" not in macro_names(m) and "ROWS" in macro_names(m)
    # unknown condition: both definitions may be live, no one value (as before)
    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", code.replace(b"#define NARROW\n", b"\n"))))
    assert "ROWS" not in m.macros and "ONLY_DEAD" in macro_names(m)


def test_glsl_and_metal_read_their_own_defines():
    glsl = b"#version 450\n#define WG 64\n#if WG > 32\nlayout(local_size_x = WG) in;\n#else\nlayout(local_size_x = 1) in;\n#endif\nvoid main() {}\n"
    parsed = FRONT_ENDS["glsl"].parse(Source("k.comp", glsl))
    assert [mk.text for mk in parsed.masks if mk.kind == "dead-branch"] == \
        ["#if WG > 32\n", "#else\n", "layout(local_size_x = 1) in;\n", "#endif\n"]
    metal = b"#define SIMD 32\n#if SIMD != 32\nkernel void a() {}\n#endif\nkernel void b() {}\n"
    parsed = FRONT_ENDS["metal"].parse(Source("k.metal", metal), predefined=(("SIMD_OVERRIDE", "1"),))
    assert b"void a" not in parsed.parse_bytes and b"void b" in parsed.parse_bytes


def test_suppressions_in_dead_branches_are_not_reported_unused():
    from shaderlint.config import Settings
    from shaderlint.engine import lint_source

    code = b"""__global__ void k(float* a, int n) {
#if __CUDA_ARCH__ < 800
    if (threadIdx.x < n) __syncthreads();  // shaderlint: ignore[SL403]
#endif
    a[threadIdx.x] = 0.0f;  // shaderlint: ignore[SL403]
}
"""
    for target, lines in (("sm_75", [5]), ("sm_90", [5])):
        r = lint_source("k.cu", code, Settings(select=("SL403", "SL002"), target=target))
        assert [d.line for d in r.diagnostics if d.code == "SL002"] == lines
    r = lint_source("k.cu", code, Settings(select=("SL403",), target="sm_90"))
    assert r.diagnostics == []
