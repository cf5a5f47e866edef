"""Macro-generated kernels (shaderlint.model.expand): the preprocessor's expansion, and the kernels
file-scope invocations produce, analysed and reported at the invocation."""

from __future__ import annotations

import time

import pytest

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.expand import MAX_TOKENS, Expander, ExpansionError, kernel_macros
from shaderlint.model.source import Source
from shaderlint.project.macros import scan_macros


def table(text: str):
    return scan_macros("t.h", text.encode())


def expand(defines: str, text: str) -> str:
    return Expander(table(defines)).expand_text(text)


def squeeze(text: str) -> str:
    return "".join(text.split())


# ---- the expansion: C11 6.10.3.5's examples ---------------------------------------------------------
C11_EXAMPLE_3 = r"""
#define x 3
#define f(a) f(x * (a))
#undef x
#define x 2
#define g f
#define z z[0]
#define h g(~
#define m(a) a(w)
#define w 0,1
#define t(a) a
#define p() int
#define q(x) x
#define r(x,y) x ## y
#define str(x) # x
"""


def test_c11_example_3_rescanning_and_hide_sets():
    got = expand(C11_EXAMPLE_3, "f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);")
    assert squeeze(got) == squeeze("f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);")
    got = expand(C11_EXAMPLE_3, "g(x+(3,4)-w) | h 5) & m\n(f)^m(m);")
    assert squeeze(got) == squeeze("f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))^m(0,1);")
    got = expand(C11_EXAMPLE_3, "p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };")
    assert squeeze(got) == squeeze("int i[] = { 1, 23, 4, 5, };")
    got = expand(C11_EXAMPLE_3, "char c[2][6] = { str(hello), str() };")
    assert got == 'char c[2][6] = { "hello", "" };'


def test_c11_example_4_stringizing_and_pasting():
    defines = r"""
#define str(s) # s
#define xstr(s) str(s)
#define debug(s, t) printf("x" # s "= %d, x" # t "= %s", \
 x ## s, x ## t)
#define glue(a, b) a ## b
#define xglue(a, b) glue(a, b)
#define HIGHLOW "hello"
#define LOW LOW ", world"
"""
    assert expand(defines, "debug(1, 2);") == 'printf("x" "1" "= %d, x" "2" "= %s", x1, x2);'
    assert expand(defines, r"""fputs(str(strncmp("abc\0d", "abc", '\4') == 0) str(: @\n), s);""") == \
        r"""fputs("strncmp(\"abc\\0d\", \"abc\", '\\4') == 0" ": @\n", s);"""
    assert expand(defines, "glue(HIGH, LOW);") == '"hello";'
    assert expand(defines, "xglue(HIGH, LOW)") == '"hello" ", world"'


def test_arguments_are_expanded_except_as_operands_of_hash_and_paste():
    defines = "#define N 4\n#define str(x) #x\n#define xstr(x) str(x)\n#define cat(a, b) a##b\n#define xcat(a, b) cat(a, b)\n"
    assert expand(defines, "str(N) xstr(N)") == '"N" "4"'
    assert expand(defines, "cat(N, 2) xcat(N, 2)") == "N2 42"


def test_variadic_arguments():
    defines = ("#define call(f, ...) f(__VA_ARGS__)\n#define log(fmt, args...) printf(fmt, ## args)\n"
               "#define opt(a, ...) g(a __VA_OPT__(,) __VA_ARGS__)\n#define all(...) #__VA_ARGS__\n")
    assert expand(defines, "call(h, 1, (2, 3))") == "h(1, (2, 3))"
    assert expand(defines, "call(h)") == "h()"
    assert expand(defines, 'log("x")') == 'printf("x")'
    assert expand(defines, 'log("x", 1, 2)') == 'printf("x", 1, 2)'
    assert expand(defines, "opt(1)") == "g(1)"
    assert expand(defines, "opt(1, 2)") == "g(1, 2)"
    assert expand(defines, "all(a, b)") == '"a, b"'


def test_recursive_macros_stop_at_their_own_name():
    assert expand("#define A B + 1\n#define B A * 2\n", "A") == "A * 2 + 1"
    assert expand("#define f(x) f(x + 1)\n", "f(f(0))") == "f(f(0 + 1) + 1)"


def test_a_function_like_name_without_arguments_stays_a_name():
    assert expand("#define f(x) [x]\n", "f + f(1)") == "f + [1]"


def test_pasting_forms_one_token_and_keeps_invalid_pastes_apart():
    assert expand("#define k(n) n##_kernel\n#define op(a) a##=\n", "k(add) op(+)") == "add_kernel +="
    assert expand("#define bad(a) a##+\n", "bad(x)") == "x+"  # two tokens (the compiler rejects it): nothing lost


def test_output_never_joins_tokens_that_were_apart():
    assert expand("#define neg(x) -x\n", "-neg(1)") == "- -1"
    assert expand("#define id(x) x\n", "id(a)b") == "a b"


@pytest.mark.parametrize("text", ["f(1, (2)", "f(1, 2, 3)", "g(", "g(1"])
def test_invocations_the_compiler_rejects_raise(text):
    with pytest.raises(ExpansionError):
        expand("#define f(a, b) a b\n#define g(x) x\n", text)


def test_exponential_expansion_is_bounded():
    defines = "#define A0 x x\n" + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 40))
    t0 = time.process_time()
    with pytest.raises(ExpansionError):
        expand(defines, "A39")
    assert time.process_time() - t0 < 20  # bounded by MAX_TOKENS, not by 2**40
    assert len(expand(defines, "A10").split()) == 2 ** 11 < MAX_TOKENS


def test_deeply_nested_arguments_are_bounded():
    defines = "#define f(x) x\n"
    with pytest.raises(ExpansionError):
        expand(defines, "f(" * 500 + "1" + ")" * 500)


def test_kernel_macros_follow_macros_that_name_them():
    t = table("#define K(n) __global__ void n() {}\n#define ALL(M) M(a) M(b)\n#define TWO K(x) K(y)\n"
              "#define DEV(n) __device__ void n() {}\n#define S(n) const char *n = \"__global__\";\n")
    assert kernel_macros(t, "cuda") == {"K", "TWO"}  # ALL is kernel-defining only through its argument
    assert kernel_macros(t, "glsl") == set()


# ---- the kernels the invocations produce -------------------------------------------------------------
UNARY = b"""#include <cuda_runtime.h>
#define UNARY_OP(T, NAME, FN)                                        \\
extern "C" __global__ void NAME(const T *in, T *out, int n, int d) { \\
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;      \\
         i += blockDim.x * gridDim.x) {                              \\
        T x = in[i];                                                 \\
        out[i] = FN;                                                 \\
    }                                                                \\
}
UNARY_OP(float, uneg_f32, -x)
UNARY_OP(int, umod_i32, x % d)
UNARY_OP(int, udiv_i32, x / d)  // shaderlint: ignore[SL201]
#undef UNARY_OP
"""


def lint(data: bytes, path: str = "k.cu", **kw):
    return lint_source(path, data, Settings(select=("ALL",), **kw))


def test_generated_kernels_are_analysed_and_reported_at_the_invocation():
    r = lint(UNARY)
    assert [f.name for f in r.model.kernels] == ["uneg_f32", "umod_i32", "udiv_i32"]
    found = [d for d in r.diagnostics if d.code == "SL201"]
    assert [(d.line, d.column, d.kernel) for d in found] == [(11, 1, "umod_i32")]  # line 12: suppressed
    d = found[0]
    assert (d.end_line, d.end_column) == (11, 31)  # the whole invocation
    assert [(x.line, x.column, x.message) for x in d.related] == [(2, 9, "expanded from macro `UNARY_OP`")]
    assert d.fix is None
    assert not [x for x in r.diagnostics if x.code == "SL002"]  # the suppression on line 12 was used


def test_no_fix_inside_an_expansion():
    data = b"""#include <metal_stdlib>
using namespace metal;
#define K(NAME, T) kernel void NAME(device T *p [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) { p[lid] = T(1); }
K(one_f32, float)
kernel void written(device float *p [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) { p[lid] = 1.0f; }
"""
    r = lint(data, "k.metal")
    got = {d.line: d for d in r.diagnostics if d.code == "SL301"}
    assert set(got) == {4, 5}
    assert got[4].fix is None and got[5].fix is not None  # the written-out kernel keeps its fix
    assert [(x.line, x.column, x.message) for x in got[4].related] == [
        (3, 9, "expanded from macro `K`"), (3, 64, "in the definition of macro `K`")]  # at `uint`


def test_one_report_per_body_token_across_instances():
    data = b"""#include <metal_stdlib>
using namespace metal;
#define K(NAME, T) \\
kernel void NAME(device T *p [[buffer(0)]], /* a comment */ \\
                 uint lid [[thread_index_in_threadgroup]]) { p[lid] = T(1); }
K(one_f32, float)
K(one_f16, half)  // shaderlint: ignore[SL301]
K(one_i32, int)
"""
    r = lint(data, "k.metal")
    (d,) = [d for d in r.diagnostics if d.code == "SL301"]
    assert d.line == 6
    assert [(x.line, x.column, x.message) for x in d.related] == [
        (3, 9, "expanded from macro `K`"), (5, 18, "in the definition of macro `K`"),
        (8, 1, "the same code, expanded here")]  # (line 7's is suppressed there)


def test_report_lists_generated_kernels_under_their_expanded_names(tmp_path):
    from shaderlint.report import report_file

    p = tmp_path / "u.cu"
    p.write_bytes(UNARY + b"#define PK(op) __global__ void op##_kernel(float *p) { p[threadIdx.x] = 0; }\nPK(zero)\n")
    rows = report_file(str(p))
    assert [(r.kernel, r.line) for r in rows] == [("uneg_f32", 10), ("umod_i32", 11), ("udiv_i32", 12),
                                                  ("zero_kernel", 15)]
    assert rows[0].notes[0] == "expanded from macro `UNARY_OP` (line 2)"


def test_table_in_force_at_the_invocation():
    data = (b"#define K(n) __global__ void n(int *p) { p[threadIdx.x] = 1; }\nK(first)\n#undef K\n"
            b"#define K(n) __global__ void n##_v2(int *p) { p[threadIdx.x] = 2; }\nK(second)\n")
    assert [f.name for f in lint(data).model.kernels] == ["first", "second_v2"]


def test_only_namespace_scope_invocations_and_live_branches_are_expanded():
    data = b"""#define K(n) __global__ void n(int *p) { p[threadIdx.x] = 1; }
namespace ops { namespace {
K(in_namespace)
} }
#if 0
K(dead)
#endif
struct S {
K(member)
};
"""
    r = lint(data)
    assert [f.name for f in r.model.kernels] == ["in_namespace"]
    assert not [d for d in r.diagnostics if d.code == "SL001"]
    assert b"namespace ops { namespace {" in r.model.source.data[len(data):]


def test_only_kernel_defining_invocations_are_expanded():
    data = b"#define H(n) __device__ int n(int a) { return a; }\nH(helper)\n#define S(x) int x##_v;\nS(a)\n"
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", data))
    assert parsed.expansions == () and parsed.source.data == data


def test_header_macros_given_as_extra_macros():
    header = scan_macros("inc/ops.h", b"#define OP(n) __global__ void n(float *p) { p[threadIdx.x] = 0; }\n")
    data = b'#include "ops.h"\nOP(from_header)\n'
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", data), extra_macros=header)
    assert [e.macro.path for e in parsed.expansions] == ["inc/ops.h"]
    assert b"from_header" in parsed.source.data[len(data):]


ODD = [
    b"#define K(n) __global__ void n() {\nK(a)\n",  # unbalanced body
    b"#define K(n) __global__ void n() {}\nK(a\n",  # unterminated invocation
    b"#define K(n, m) __global__ void n() {}\nK(a)\n",  # too few arguments
    b"#define K(n) K(n) __global__ void n() {}\nK(a)\n",  # recursive
    b"#define K(n) __global__ void n() {}\n#define A0 K(x) K(x)\n"
    + b"".join(b"#define A%d A%d A%d\n" % (i, i - 1, i - 1) for i in range(1, 30)) + b"A29\n",  # huge
    b"#define K(n) __global__ void n() { }}\nK(a)\n",
    b"#define K(...) __global__ void __VA_ARGS__() {}\nK()\nK(,)\n",
    b"#define K(n) __global__ void n() {}\nK(\"\\\")\n",
]


@pytest.mark.parametrize("data", ODD)
def test_odd_input_never_crashes(data):
    t0 = time.process_time()
    r = lint(data)
    assert time.process_time() - t0 < 30
    assert not [d for d in r.diagnostics if "could not analyse" in d.message or d.message.startswith("rule ")]


def test_truncations_of_a_macro_file_never_crash():
    for cut in range(0, len(UNARY), 7):
        r = lint(UNARY[:cut])
        assert not [d for d in r.diagnostics if d.message.startswith(("could not analyse", "rule "))]


def test_appended_text_is_bounded_by_the_files_memory_budget():
    from shaderlint.model.expand import appended_limit

    body = " ".join(f"p[{i}] = {i};" for i in range(400))
    data = (f"#define K(n) __global__ void n(int *p) {{ {body} }}\n".encode()
            + b"".join(b"K(k%d)\n" % i for i in range(1000)))
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", data))
    assert 0 < len(parsed.expansions) < 1000
    assert len(parsed.source.data) - len(data) <= appended_limit(len(data))


def test_editor_positions_of_generated_kernels_are_the_invocations():
    from shaderlint.server.hover import name_span

    r = lint(UNARY)
    spans = [name_span(r.model, f) for f in r.model.kernels]
    assert [r.source.text(a, b) for a, b in spans] == [
        "UNARY_OP(float, uneg_f32, -x)", "UNARY_OP(int, umod_i32, x % d)", "UNARY_OP(int, udiv_i32, x / d)"]


def test_invocations_with_type_name_arguments_and_semicolons_are_expanded(tmp_path, capsys):
    # candle's binary.cu: `BINARY_OP(double, badd_f64, x + y);` -- the CUDA front end renames type-name
    # arguments for the grammar (`_ouble`), which must not keep the invocation from being expanded
    import json

    from shaderlint.cli import main

    (tmp_path / "ops.cuh").write_bytes(
        b"#define BINARY_OP(T, NAME, F) extern \"C\" __global__ void NAME(const T *a, const T *b, T *o) "
        b"{ T x = a[threadIdx.x], y = b[threadIdx.x]; o[threadIdx.x] = F; }\n")
    p = tmp_path / "b.cu"  # the macro comes from the header, as in candle
    p.write_bytes(b"#include \"ops.cuh\"\nBINARY_OP(float, badd_f32, x + y)\nBINARY_OP(double, badd_f64, x + y);\n"
                  b"BINARY_OP(uint8_t, badd_u8, x + y);\n")
    main(["report", "--output-format", "json", str(p)])
    rows = json.loads(capsys.readouterr().out)
    assert [r["kernel"] for r in rows] == ["badd_f32", "badd_f64", "badd_u8"]


SIGNATURE = b"""struct Params { float *p; int n; };
#define DEFINE_KERNEL(kernelName, ...) \\
template<typename Traits, __VA_ARGS__> \\
__global__ void kernelName(const Params params)
namespace flash {
DEFINE_KERNEL(fwd_kernel, bool Is_causal) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < params.n) { __syncthreads(); }
}
}
void host_fn(Params p);
#define NOT_A_SIGNATURE(name) __global__ void name(float *p) { p[0] = 1; }
"""


def test_signature_macro_invocation_with_its_body_is_a_kernel(tmp_path):
    """flash-attn's DEFINE_FLASH_FORWARD_KERNEL(name, ...) { body }: the kernel is named by the argument
    (it read as a function named after the macro); the body's findings stay where it is written."""
    r = lint(SIGNATURE)
    assert [f.name for f in r.model.kernels] == ["fwd_kernel"]
    assert not [d for d in r.diagnostics if d.code == "SL001"]
    (d,) = [d for d in r.diagnostics if d.code == "SL403"]
    assert (d.line, d.column) == (8, 25)
    assert (6, 1, "in the kernel declared by macro `DEFINE_KERNEL`") in [(x.line, x.column, x.message) for x in d.related]
    # the file's own text is blanked there: the body is read once, in the expansion
    parsed = r.model.parsed
    assert b"__syncthreads" not in parsed.parse_bytes[:parsed.length]
    assert parsed.parse_bytes.count(b"__syncthreads") == 1
    from shaderlint.report import report_file

    p = tmp_path / "s.cu"
    p.write_bytes(SIGNATURE)
    assert [(row.kernel, row.line) for row in report_file(str(p))] == [("fwd_kernel", 6)]


def test_signature_macro_needs_a_body_and_file_scope():
    # a prototype (`;` after the invocation) and an invocation inside a function stay as they were
    data = SIGNATURE.replace(b"DEFINE_KERNEL(fwd_kernel, bool Is_causal) {", b"DEFINE_KERNEL(decl, bool B);\nvoid f() {")
    r = lint(data)
    assert [f.name for f in r.model.kernels] == []
    assert not [e for e in r.model.parsed.expansions if e.body_len]
    assert not [d for d in r.diagnostics if d.code == "SL001"]
