"""The project layer: macro tables (scan_macros), include resolution, a file's context."""

from __future__ import annotations

from shaderlint.languages.conditions import OPAQUE
from shaderlint.project.macros import MacroDef, scan_macros


def test_object_and_function_like_macros_with_positions():
    src = (b"// header\n"
           b"#define N 256\n"
           b"  #  define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
           b"#define VA(fmt, ...) printf(fmt, __VA_ARGS__)\n"
           b"#define EMPTY\n"
           b"#define NOARGS() 1\n"
           b"#define SPACED (x) x\n")
    got = scan_macros("k.h", src)
    assert got["N"] == MacroDef("N", None, "256", "k.h", 2, 9)
    assert got["MAX"] == MacroDef("MAX", ("a", "b"), "((a) > (b) ? (a) : (b))", "k.h", 3, 13)
    assert got["VA"].params == ("fmt", "...")
    assert got["EMPTY"].params is None and got["EMPTY"].body == ""
    assert got["NOARGS"].params == () and got["NOARGS"].body == "1"
    # a space before `(`: object-like, the parenthesis is part of the body
    assert got["SPACED"].params is None and got["SPACED"].body == "(x) x"


def test_continuations_joined_and_comments_become_spaces():
    src = (b"#define KERNEL(name) \\\n"
           b"  __global__ void name(float* p) { /* body */ \\\n"
           b"    p[0] = 1; }  // trailing\n"
           b"#define T 4/*four*/+1\n")
    got = scan_macros("k.cuh", src)
    # the comment is one space, the splices are gone (the next line's indentation stays)
    assert got["KERNEL"].body == "__global__ void name(float* p) {   " + "    p[0] = 1; }"
    assert got["T"].body == "4 +1"
    assert got["T"].line == 4


def test_last_definition_wins_and_undef_removes():
    src = b"#define A 1\n#define B 2\n#define A 3\n#undef B\n"
    got = scan_macros("x.h", src)
    assert got["A"].body == "3" and got["A"].line == 3
    assert "B" not in got


def test_dead_branches_define_nothing():
    src = (b"#ifdef FUSED\n#define MODE 1\n#else\n#define MODE 2\n#endif\n"
           b"#if __CUDA_ARCH__ >= 800\n#define WIDE 1\n#endif\n"
           b"#if 0\n#define NEVER 1\n#endif\n")
    got = scan_macros("x.cuh", src)
    assert "NEVER" not in got
    assert got["MODE"].body == "2"  # undecided: both arms read, the last in file order wins
    assert "WIDE" in got  # unknown arch: kept
    got = scan_macros("x.cuh", src, predefined=(("FUSED", "1"), ("__CUDA_ARCH__", "750")))
    assert got["MODE"].body == "1" and "WIDE" not in got
    got = scan_macros("x.cuh", src, predefined=(("FUSED", None), ("__CUDA_ARCH__", OPAQUE)))
    assert got["MODE"].body == "2" and "WIDE" in got


def test_not_directives_in_comments_strings_and_continued_lines():
    src = (b"/*\n#define IN_COMMENT 1\n*/\n"
           b"const char* s = \"\\\n#define IN_STRING 1\";\n"
           b"#define OUTER x \\\n#define CONTINUED 1\n")
    got = scan_macros("x.h", src)
    assert set(got) == {"OUTER"}


def test_never_raises_on_odd_input():
    for data in (b"", b"#define", b"#define (x) 1", b"#define F(a, b 1\n", b"#undef\n", b"\xff\xfe#define A\n",
                 b"#define A \\", b"#if\n#define B 1\n"):
        scan_macros("x.h", data)
    assert "F" not in scan_macros("x.h", b"#define F(a, b 1\n")
