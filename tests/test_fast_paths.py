"""Fast paths that must answer exactly as the straightforward code they replace (pure speed changes):
the answers are compared with that code, kept here, on inputs chosen at the edges of each shortcut."""

from __future__ import annotations

import re

import pytest

from shaderlint.model.source import Source
from shaderlint.rules.sl203_half_literal_overflow import HALF_MAX, _BIG_NUMBER, _has_big_literal


def _line_starts_reference(data: bytes) -> list[int]:
    return [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]


@pytest.mark.parametrize("data", [
    b"", b"a", b"\n", b"\n\n", b"a\n", b"a\nb", b"a\nb\n", b"\n\n\nx\n", b"a\r\nb\rc\n", b"\r", b"\r\n\r\n",
    b"x\n" * 1000, "é\nü\n".encode(),
])
def test_line_starts_match_the_regex_split(data):
    assert Source("f.cu", data).line_starts == _line_starts_reference(data)


_CAPS_WORD_REFERENCE = re.compile(rb"(?<![\w])[A-Z][A-Z0-9_]")


@pytest.mark.parametrize("data", [
    b"", b"A", b"AB", b"AB(", b"A1", b"A_", b"Ab", b"aAB", b"_AB", b"1AB", b"x.AB y->CD z::EF #GH",
    b"CamelCase MAX_X(1) N M2 K_dim __global__ CUTLASS_HOST_DEVICE", b"(AB,CD)\n\tEF\rGH",
    "é AB \xffCD".encode("latin-1"), b"AB" * 50, b" A A1 A_ AA",
])
def test_caps_word_starts_match_the_regex(data):
    assert Source("f.cu", data).caps_word_starts == [m.start() for m in _CAPS_WORD_REFERENCE.finditer(data)]


def test_caps_word_starts_cover_the_patterns_tried_there():
    """Every match of the patterns tried at Source.caps_word_starts only starts at one of them."""
    from shaderlint.languages import base, cuda

    data = (b"UNROLL for (;;) {}\nvoid f(const T * RESTRICT p, GRID_CONST Params const p2,\n  MANAGED __device__ int x)\n"
            b"__global__ LB(128) void k(int a PROF_PARAMS)\nCUTLASS_DEVICE void g(); RET_T f(int); static MAX_N(a, b)")
    src = Source("f.cu", data)
    starts = set(src.caps_word_starts)
    for pattern in (base._STATEMENT_PREFIX_MACRO, base._PARAMETER_QUALIFIER_MACRO, cuda._UPPER_WORD,
                    cuda._QUALIFIER_MACRO_START, cuda._RETURN_TYPE_MACRO, cuda._TRAILING_LIST_MACRO,
                    cuda._VARIABLE_QUALIFIER_MACRO):
        found = [m.start() for m in pattern.finditer(data)]
        assert found and set(found) <= starts, pattern.pattern
    assert [m.start() for m in base._POINTER_QUALIFIER_MACRO.finditer(data)] == base._pointer_qualifier_starts(src)
    assert [m.start() for m in cuda._SPECIFIER_MACRO.finditer(data)] == cuda._specifier_macro_starts(src) != []


@pytest.mark.parametrize("data", [
    b"", b"A(", b"(", b"_(", b"9(", b"A9(", b"a(", b"aB(", b"Ab(", b"FOO_x_BAR(", b"x.FOO(", b"p->FOO(", b"N::FOO(",
    b"#FOO(", b"FOO \t (", b"FOO\n(", b"(FOO(BAR(", b"MAX(A, B) + MIN (C,D)", b"__global__(", b"(((", "é_X(".encode(),
])
def test_upper_call_starts_match_the_forward_regex(data):
    from shaderlint.model.source import _UPPER_CALL

    assert Source("f.cu", data).upper_call_starts == [m.start() for m in _UPPER_CALL.finditer(data)]


def test_start_finders_give_the_matches_of_a_full_scan():
    """The passes that try a pattern only at the starts found from a literal (``= {}``, ``operator``,
    ``] name``) find what ``finditer`` finds."""
    from shaderlint.languages import cuda, glsl
    from shaderlint.languages.base import match_at

    data = (b"void f(Vec w = {}, Args a\t=  { }, int b[2] = {}) { x == {}; y.operator float(); p->\n operator half();"
            b" q-> operator new(); r.operator  int *(); }\nconst uint[4] g = {1}; vec4[2] pair(float[ 4 ] w, x.y[3] z);"
            b" const  float[N] h; xconst int[2] k; a[1] b[2] c; 1x[2] d;")
    for pattern, starts in ((cuda._EMPTY_BRACE_DEFAULT, cuda._empty_brace_starts(data)),
                            (cuda._CONVERSION_CALL, cuda._member_operator_starts(data)),
                            (glsl._ARRAY_TYPE_DECL, glsl._array_type_starts(data))):
        found = [m.span() for m in pattern.finditer(data)]
        assert len(found) >= 2 and [m.span() for m in match_at(data, pattern, starts)] == found, pattern.pattern


@pytest.mark.parametrize("data", [b"", b"A", b" \tB\n", b"a\nB\n  C\n\td\n\r\nE", b"\n\n X", b"#A\n_B\nZ"])
def test_upper_line_starts_are_line_starts_with(data):
    from shaderlint.languages.base import line_starts_with

    assert Source("f.cu", data).upper_line_starts == line_starts_with(data, rb"[A-Z]")


def _prev_code_byte_reference(source: Source, buf: bytearray, pos: int) -> tuple[bytes, int]:
    data = source.data
    while pos > 0:
        pos -= 1
        c = buf[pos]
        if c in b" \t\r\n\f\v":
            continue
        line_start = data.rfind(b"\n", 0, pos) + 1
        if data[line_start:pos + 1].lstrip().startswith(b"#"):
            pos = line_start
            continue
        span = source.lexical_span(pos)
        if span is not None:
            pos = max(span[0], line_start)
            continue
        return bytes([c]), pos
    return b"", 0


@pytest.mark.parametrize("data", [
    b"", b"   ", b"a", b"  a  ", b"x;" + b" " * 63 + b"\n" * 2 + b"F(", b"x;" + b" \t\r\n\f\v" * 50 + b"F(",
    b"{" + b" " * 70000 + b"F(", b" " * 300 + b"F(", b"a; // c\n  /* d\n e */ \n#define X\n  \n F(",
    b"a\n  # pragma x\n" + b" " * 5000 + b"\"s\" F(",
])
def test_prev_code_byte_matches_the_byte_by_byte_walk(data):
    from shaderlint.languages.base import _prev_code_byte

    src = Source("f.cu", data)
    for blank in (False, True):  # (the masked copy: also with a run of code blanked)
        buf = bytearray(data)
        if blank and len(buf) > 4:
            buf[1:len(buf) // 2] = b" " * (len(buf) // 2 - 1)
        for pos in range(0, len(data) + 1, max(1, len(data) // 200)):
            assert _prev_code_byte(src, buf, pos) == _prev_code_byte_reference(src, buf, pos), pos


_LEXICAL_REFERENCE = re.compile(
    rb"//(?:[^\n\\]+|\\\r?\n|\\.)*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?", re.S)


@pytest.mark.parametrize("data", [
    b"/*/ x", b"/**/", b"/***/", b"/* a **/ b", b"/* a * / b */ c", b"/* unclosed", b"/* a */ /* b */",
    b'"a\\"b" c', b'"unclosed\nx"', b"'\\''", b"'a", b'"\\', b"// a \\\n b\nc", b"x / y * z", b"/*\n*\n*/",
])
def test_lexical_spans_match_the_byte_by_byte_regex(data):
    src = Source("f.cu", data)
    assert [(s, e) for s, e, _ in src.lexical] == [m.span() for m in _LEXICAL_REFERENCE.finditer(data)]


def _has_big_literal_reference(data: bytes) -> bool:
    for m in _BIG_NUMBER.finditer(data):
        text = m.group(0)
        if len(text) < 5 and b"e" not in text.lower():
            continue
        try:
            if abs(float(text)) > HALF_MAX:
                return True
        except ValueError:
            continue
    return False


@pytest.mark.parametrize("text, big", [
    ("x = 65504.0;", False),
    ("x = 65505;", True),
    ("x = 065505;", True),
    ("x = 1e5;", True),
    ("x = 1.e5;", True),
    ("x = .5e10;", True),
    ("x = 1E+5f;", True),
    ("x = 6.5e4;", False),
    # the digits after an exponent's sign are part of the literal, not one of their own (1e-70000 is 0)
    ("x = 1e-70000;", False),
    ("x = 1e+70000;", True),
    ("x = a70000;", False),  # part of a name
    ("x = a.70000;", False),  # after a `.`
    ("x = 1.2.70000;", False),
    ("x = 0x70000;", False),
    ("x = ..70000;", False),
    ("x = . 70000;", True),
    ("f(...); y = 70000.5;", True),
    ("x = 12345 + 1.000 + 99999e-9;", False),
    ("", False),
])
def test_big_literal_prefilter_matches_the_full_scan(text, big):
    data = text.encode()
    assert _has_big_literal_reference(data) == big
    assert _has_big_literal(data) == big


def test_big_literal_prefilter_on_mixed_numbers():
    # many short numbers and long ones around the limit, in every separator context
    parts = []
    for i, n in enumerate(("1", "12", "123.", ".5", "1234", "65504", "65504.9", "65505", "9e4", "1e-9", "0.00001")):
        for sep in (" ", "(", ",", ".", "x", "+", "-", "e"):
            parts.append(sep + n)
    for k in range(len(parts)):
        data = " ".join(parts[k:] + parts[:k]).encode()
        assert _has_big_literal(data) == _has_big_literal_reference(data)
        data = " ".join(p for p in parts[k:] if "655" not in p and "9e4" not in p).encode()
        assert _has_big_literal(data) == _has_big_literal_reference(data)


# A loop inside a loop: the outer loop's second round enters the inner loop with the threadgroup write
# made after the barrier in its first round. The barrier flow's loop memo must key on that entry state:
# reusing the first round's walk would find no threadgroup access before the barrier and report it.
_NESTED_LOOPS = b"""#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant int& n [[buffer(1)]],
              threadgroup float* s [[threadgroup(0)]], uint tid [[thread_position_in_threadgroup]]) {
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            out[j] += 1.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        s[tid] = out[i];
    }
}
"""


def test_barrier_flow_loop_memo_keys_on_the_entry_state():
    from shaderlint.config import Settings
    from shaderlint.engine import lint_source

    r = lint_source("k.metal", _NESTED_LOOPS, Settings(select=("SL402",)))
    assert not [d for d in r.diagnostics if d.code == "SL402"]
    # without the write after it, the barrier orders nothing and is reported (the test reads the flow)
    r = lint_source("k.metal", _NESTED_LOOPS.replace(b"s[tid] = out[i];", b"out[i] = 0.0f;"), Settings(select=("SL402",)))
    assert [d.code for d in r.diagnostics] == ["SL402"]


def _resolve_reference(model, ident):
    """The linear scan ``resolve`` replaced: every declaration of the name, the visible one whose
    scope starts last (of equal starts, the last declared)."""
    name = model.text(ident).split("::")[-1]
    best = None
    pos = ident.start_byte
    for v in model._vars_by_name.get(name, ()):
        s, e = v.scope
        if e <= pos and s < pos and v.function is not None and not v.is_param:
            e = model._branch_scope_end(v, e)
        if s <= pos < e and (v.is_param or v.is_global or v.node.start_byte <= pos or v.template_param):
            if best is None or s >= best.scope[0]:
                best = v
    return best


_RESOLVE_CASES = """
#define N 4
__constant__ float x[N];
int g;
template <int T> __global__ void k(float* x, int T2, int n) {
    int i = threadIdx.x;
    x[i] = g + T;
    { int i = 2; x[i] = i; { float g = 1.f; x[i] = g; } }
    for (int i = 0; i < n; ++i) { x[i] += i; }
#if defined(FAST)
    int m = 1;
#else
    int m = 2;
#endif
    x[m] = m;
    int a = 1, b = a, a2 = b;
    if (n) { int c = a; } else { int c = b; x[c] = c; }
    x[i] = i + a2;
}
__device__ int h(int i) { int j = i; return j + g; }
__device__ int h2(int g) { int i = g; { int g = i; return g; } }
template <typename T> __device__ T tt(T v) { T w = v; return w; }
__device__ int dup(int p, int p) { int q = p, q = 2; return q + p; }
"""


def test_resolve_matches_the_linear_scan():
    """Every identifier resolves to what the scan over all the name's declarations gives: shadowing in
    nested blocks and loops, locals declared in #if/#else branches (visible after the #endif),
    several declarators, parameters, template parameters, globals and a macro; and declarations whose
    scopes start at one offset (a name declared twice in one declaration or parameter list: the last
    one wins)."""
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.build import build_model

    model = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", _RESOLVE_CASES.encode())))
    stack, seen, found = [model.root], 0, 0
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            seen += 1
            got = model.resolve(n)
            assert got is _resolve_reference(model, n), (model.text(n), n.start_byte)
            found += got is not None
        stack.extend(n.named_children)
    assert seen > 60 and found > 40  # (the cases above are read, not an empty tree)


_REDUCER_CASES = """
__device__ float outer_sum(float v) { return mid_sum(v) * 2.f; }
__device__ float mid_sum(float v) { float s = warp_sum(v); return s; }
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}
__device__ float plain(float v) { return v + 1.f; }
__device__ float lane_max(float v) { return __reduce_max_sync(0xffffffff, (unsigned) v); }
__global__ void k(float* out, const float* in) {
    float s = outer_sum(in[threadIdx.x]);
    float p = plain(s);
    if (threadIdx.x % 32 == 0) out[0] = p;
}
"""


def test_reducing_helpers_found_through_chains_of_helpers(monkeypatch):
    """The text test that skips helpers naming no reduction, shuffle or reducing helper finds the same
    reducing helpers and kernel reductions as walking every helper: a helper calling a reducer defined
    after it is found in a later round (its text names a reducer found by then)."""
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model import sync
    from shaderlint.model.build import build_model

    def answers():
        model = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", _REDUCER_CASES.encode())))
        kernel = next(f for f in model.functions if f.name == "k")
        reducers = {name: node.start_byte for name, node in sync.reducing_functions(model).items()}
        reduced = {v.name: node.start_byte for v, node in sync.simd_reductions(model, kernel).items()}
        return reducers, reduced

    fast = answers()
    monkeypatch.setattr(sync, "_may_reduce", lambda model, f: True)
    assert fast == answers()
    assert set(fast[0]) == {"outer_sum", "mid_sum", "warp_sum", "lane_max"} and set(fast[1]) >= {"s", "p"}
