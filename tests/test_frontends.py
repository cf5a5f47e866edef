"""Front ends and kernel model on the constructs the stock grammars cannot read."""

from __future__ import annotations

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.build import build_model
from shaderlint.model.source import Source


def model(path: str, code: str):
    parsed = FRONT_ENDS[{"metal": "metal", "cu": "cuda"}.get(path.rsplit(".", 1)[1], "glsl")].parse(Source(path, code.encode()))
    return build_model(parsed)


METAL = """#include <metal_stdlib>
using namespace metal;
constant uint kN [[function_constant(0)]];
[[max_total_threads_per_threadgroup(256)]]
kernel void f(device float* a [[buffer(0)]], constant float4& p [[buffer(1)]],
              threadgroup float* tg [[threadgroup(0)]],
              uint gid [[thread_position_in_grid]], ushort lid [[thread_position_in_threadgroup]]) {
    half h = 0.5h * 2;
    a[gid] = p.x + tg[lid];
}
fragment half4 fs(float4 pos [[position]]) { return half4(1.0h); }
"""


def test_metal_masks_keep_offsets_exact_and_record_qualifiers():
    m = model("k.metal", METAL)
    assert not m.errors
    f = m.function_by_name["f"]
    assert (f.kind, f.is_entry) == ("kernel", True)
    assert f.group_size is not None and f.group_size.dims == (256, 1, 1) and not f.group_size.exact
    params = {p.name: p for p in f.params}
    assert params["a"].address_space == "device" and params["a"].attribute("buffer") == ("0",)
    assert params["p"].address_space == "constant" and params["p"].type.name == "float4"
    assert params["tg"].address_space == "threadgroup"
    assert params["gid"].role == "thread_position_in_grid"
    assert params["lid"].type.name == "ushort"
    # byte offsets point into the original text
    assert m.text(f.name_node) == "f"
    assert METAL.encode()[f.name_node.start_byte:f.name_node.end_byte] == b"f"
    assert m.function_by_name["fs"].kind == "fragment"
    assert [g.name for g in m.globals if g.function_constant] == ["kN"]


def test_metal_thread_dependence():
    m = model("k.metal", METAL)
    f = m.function_by_name["f"]
    dep = {p.name: m.var_deps.get(p, frozenset()) for p in f.params}
    assert dep["gid"] == {"local", "group"} and dep["lid"] == {"local"} and dep["a"] == frozenset()


GLSL = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
precision highp float;
layout(local_size_x = 13, local_size_y = 13) in;
layout(constant_id = 0) const uint N = 64;
layout(std430, binding = 0) buffer Buf { float data[]; } buf;
shared float s[169];
const float kW[3] = float[](0.25, 0.5, 0.25);
void main() {
    float16_t h = 0.5hf;
    uint i = gl_GlobalInvocationID.x;
    s[gl_LocalInvocationIndex] = buf.data[i] * kW[i % 3u];
    barrier();
}
"""


def test_glsl_layout_suffix_and_array_constructor():
    m = model("k.comp", GLSL)
    assert not m.errors, m.errors
    assert m.stage == "compute"
    assert m.workgroup_size == (13, 13, 1)
    main = m.function_by_name["main"]
    assert main.group_size.dims == (13, 13, 1) and main.group_size.origin == "local_size"
    h = next(v for v in main.vars if v.name == "h")
    assert h.type.is_half and m.type_of(h.init).is_half  # 0.5hf is a half literal
    assert [b.name for b in main.barriers] == ["barrier"]
    spaces = {g.name: g.address_space for g in m.globals}
    assert spaces["buf"] == "buffer" and spaces["s"] == "shared"
    assert next(g for g in m.globals if g.name == "N").function_constant


def test_glsl_workgroup_size_over_several_declarations():
    # The declarations add up; an axis from a specialization constant with no literal beside it is
    # unknown (the constant's default of 1 is not what the pipeline runs).
    m = model("k.comp", "#version 450\nlayout(local_size_x_id = 0) in;\nlayout(local_size_y = 4) in;\n"
                        "layout(local_size_z = 1) in;\nvoid main() {}\n")
    assert m.workgroup_size == (None, 4, 1) and m.workgroup_spec_ids == ("0", None, None)
    assert m.function_by_name["main"].group_size is None
    m = model("k.comp", "#version 450\nlayout(local_size_x = 64) in;\nlayout(local_size_x_id = 3) in;\n"
                        "layout(local_size_y = 2) in;\nvoid main() {}\n")
    assert m.workgroup_size == (64, 2, 1) and m.workgroup_spec_ids == ("3", None, None)  # 64 until specialized


def test_glsl_workgroup_size_from_a_file_scope_constant():
    # llama.cpp's `const uint num_threads = 256; layout(local_size_x = num_threads, ...) in;`; a
    # specialization constant named there stays unknown (the pipeline may set it).
    m = model("k.comp", "#version 450\nconst uint num_threads = 2 * 128;\n"
                        "layout(local_size_x = num_threads, local_size_y = 1, local_size_z = 1) in;\nvoid main() {}\n")
    assert m.workgroup_size == (256, 1, 1) and m.function_by_name["main"].group_size.dims == (256, 1, 1)
    m = model("k.comp", "#version 450\nlayout(constant_id = 0) const uint num_threads = 256;\n"
                        "layout(local_size_x = num_threads) in;\nvoid main() {}\n")
    assert m.workgroup_size == (None, 1, 1) and m.function_by_name["main"].group_size is None


def test_glsl_stage_of_dot_glsl_by_content():
    m = model("k.glsl", "#version 450\nlayout(local_size_x = 8) in;\nvoid main() {}\n")
    assert m.stage == "compute"


def test_glsl_paren_constructor_const_in_array_type_and_scope_qualifiers():
    src = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) workgroupcoherent buffer B { uint vals[]; };
const uint[4] lut = {0u, 2u, 4u, 6u};
float dec(const in uint32_t bits, const in float s) { return s * (float(bits & 3u) - 1.0); }
void main() {
    const uint16_t[2] h = {uint16_t(1), uint16_t(2)};
    uint w = (uint32_t(h[1]) << 16) | lut[gl_LocalInvocationID.x & 3u];
    int q = (int(w) / 3);
    vals[gl_GlobalInvocationID.x] = uint(dec(w, float(q)));
}
"""
    m = model("k.comp", src)
    assert not m.errors, m.errors
    main = m.function_by_name["main"]
    q = next(v for v in main.vars if v.name == "q")
    assert m.text(q.init) == "(int(w) / 3)" and m.type_of(q.init).kind == "int"
    dec = m.function_by_name["dec"]
    assert [p.name for p in dec.params] == ["bits", "s"]
    # the rewrite only touches the parse buffer: a constructor name after '(' stays as written
    assert "(float(" in m.text(dec.node) and m.parsed.parse_bytes.count(b"(f____(") == 1


CUDA = """#define BLOCK 256
template <int N> __global__ void __launch_bounds__(BLOCK) k(float* a, int n) {
    extern __shared__ __align__(16) unsigned char dyn[];
    __shared__ float s[N];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = s[threadIdx.x];
    __syncthreads();
}
#define DEFINE_SCALE(T) __global__ void scale_##T(T* x) { x[threadIdx.x] *= 2; }
DEFINE_SCALE(float)
DEFINE_SCALE(double)
void host(float* a, int n) { k<32><<<(n + 255) / 256, BLOCK, 0>>>(a, n); auto l = [=] __device__ (int x) { return x; }; }
"""


def test_cuda_kernels_launches_and_macro_wrapped_kernels():
    m = model("k.cu", CUDA)
    assert not m.errors, m.errors
    k = m.function_by_name["k"]
    assert k.kind == "kernel" and k.launch_bounds == (256,) and "N" in k.template_params
    assert m.function_by_name["host"].is_device_code is False
    [launch] = m.launches
    assert launch.kernel == "k" and m.text(launch.grid) == "(n + 255) / 256" and m.const_value(launch.block) == 256
    i = next(v for v in k.vars if v.name == "i")
    assert m.var_deps[i] == {"local", "group"}
    assert m.macros["BLOCK"] == 256


def test_preprocessor_branches_are_analysed():
    code = """#ifdef FAST
__global__ void k(int* a, int n) { for (int i = 0; i < n; ++i) a[i] = a[i + 1] / n; }
#else
__global__ void k(int* a, int n) { for (int i = 0; i < n; ++i) a[i] = a[i + 1] % n; }
#endif
"""
    r = lint_source("k.cu", code.encode(), Settings(select=("SL201",)))
    assert [d.code for d in r.diagnostics] == ["SL201", "SL201"]


def test_garbage_never_crashes():
    for data in (b"\x00\xff\xfe garbage {{{{", "kernel void f(".encode(), b""):
        for path in ("x.metal", "x.cu", "x.comp"):
            r = lint_source(path, data)
            assert all(d.code == "SL001" for d in r.diagnostics)


def test_bom_is_masked():
    r = lint_source("x.metal", b"\xef\xbb\xbf" + METAL.encode())
    assert not [d for d in r.diagnostics if d.code == "SL001"]


def test_pragmas_between_loop_header_and_body_are_masked_and_still_read():
    code = """__global__ void k(float* out, const float* in) {
    float acc[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll 2
        for (int j = 0; j < 4; ++j) acc[j] = in[i * 4 + j];
    _Pragma("unroll 1") for (int i = 0; i < 4; ++i) out[i] = acc[i];
}
"""
    m = model("k.cu", code)
    assert not m.errors, m.errors
    loops = m.function_by_name["k"].loops
    assert [lp.unroll for lp in loops] == [0, 2, 1]


def test_statement_macros_are_masked():
    code = """#define BODY { out[threadIdx.x] = 1.0f; }
__global__ void k(float* out) { BODY }
"""
    assert not model("k.cu", code).errors


def test_metal_attribute_applies_across_comments():
    code = """[[max_total_threads_per_threadgroup(64)]]
// a comment between the attribute and the kernel
kernel void k(device float* a [[buffer(0)]], uint gid [[thread_position_in_grid]]) { a[gid] = 1.0f; }
[[early_fragment_tests]] /* note */
fragment half4 fs(float4 p [[position]]) { return half4(1.0h); }
"""
    m = model("k.metal", code)
    assert m.function_by_name["k"].group_size.dims == (64, 1, 1)
    assert m.function_by_name["fs"].attribute("early_fragment_tests") == ()


def test_metal_helper_macros_and_instantiation_lines_are_masked():
    code = """#include <metal_stdlib>
using namespace metal;
#define MAKE_INST(n, T) template [[host_name(n)]] kernel void fill<T>(device T*, uint);
#define MAKE_BOTH(T) MAKE_INST("fill_a", T) MAKE_INST("fill_b", T)
struct Rng {
    float s;
    Rng() thread = default;
    Rng() device = default;
    METAL_FUNC float next() thread { s = fract(s * 13.0f); return s; }
};
METAL_FUNC uint wrap(uint i, uint n) { return i % n; }
template <typename T>
kernel void fill(device T* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) { out[gid] = T(wrap(gid, 7u)); }
MAKE_INST("fill_f32", float)
MAKE_INST("fill_f16", half) MAKE_INST("fill_i32", int) // two on one line
MAKE_BOTH(short);
"""
    m = model("k.metal", code)
    assert not m.errors, m.errors
    assert "wrap" in m.function_by_name and "fill" in m.function_by_name


def test_extern_instantiation_macro_lines_are_masked():
    """llama.cpp declares instantiations made in other files with `extern DECL_CASE(...);`."""
    code = """#define DECL_CASE(D, ncols) \\
    template void launch_case<D, ncols>(int n)
template <int D, int ncols>
__global__ void attn(float* out, int n) { out[threadIdx.x] = D * ncols / n; }
template <int D, int ncols>
void launch_case(int n) { attn<D, ncols><<<1, 32>>>(nullptr, n); }
extern DECL_CASE(64, 8);
extern DECL_CASE(128, 16);
DECL_CASE(256, 16);
"""
    m = model("k.cu", code)
    assert not m.errors, m.errors
    assert "attn" in m.function_by_name and "launch_case" in m.function_by_name


def test_bare_header_macro_lines_are_masked_between_statements():
    code = """void host(const float* p, int* out) {
    const int n = out[0];
    HEADER_DECLARES_LOCALS
    const int m = n * 2;
    out[1] = m;
}
__global__ void k(int* a) {
    int v[] = {
        1, 2
    };
    a[threadIdx.x] = v[threadIdx.x & 1];
}
"""
    m = model("k.cu", code)
    assert not m.errors, m.errors


def test_glsl_restrict_and_godot_section_lines_are_masked():
    code = """#[compute]

#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(r32f, set = 0, binding = 0) uniform restrict readonly image2D src;
layout(set = 0, binding = 1) restrict writeonly buffer Out { float v[]; };
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    v[p.y * 8 + p.x] = imageLoad(src, p).r;
}
"""
    m = model("k.glsl", code)
    assert not m.errors, m.errors


def test_loop_header_macros_are_read_as_for():
    code = """#include <metal_stdlib>
using namespace metal;
#define LOOP_N(x) for (x)
kernel void k(device float* out [[buffer(0)]], constant int& n [[buffer(1)]],
              ushort lane [[thread_index_in_simdgroup]]) {
    float acc[4];
    FOR_UNROLL (int i = 0; i < 4; ++i) { acc[i] = out[i * 32 + lane]; }
    for (int j = 0; j < n; ++j)
        FOR_UNROLL (int i = 0; i < 4; ++i) acc[i] += 1.0f;
    LOOP_N(int i = 0; i < 4; ++i) out[i * 32 + lane] = acc[i];
    if (n > 0) CALL_LIKE(out, n); // a call-like macro: not a loop
}
"""
    m = model("k.metal", code)
    assert not m.errors, m.errors
    loops = m.function_by_name["k"].loops
    assert len(loops) == 4
    assert sorted(lp.unroll for lp in loops if lp.unroll is not None) == [0, 0]
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float v[]; };
void main() {
    float a[4];
    UNROLL_FOR (int i = 0; i < 4; i++) a[i] = v[i];
    v[gl_GlobalInvocationID.x] = a[0] + a[3];
}
"""
    assert not model("k.comp", glsl).errors


def test_qualifier_macros_and_dangling_else_across_preprocessor_branches():
    glsl = """#ifdef GL_ES
#define COMPAT_PRECISION mediump
#else
#define COMPAT_PRECISION
#endif
#define COMPAT_IN varying
#define SCALE 2.0
uniform COMPAT_PRECISION float Gain;
COMPAT_IN vec2 uv;
uniform sampler2D Source;
void main() {
#ifdef CLIP
    if (uv.x > 1.0) gl_FragColor = vec4(0.0);
    else
#endif
    { gl_FragColor = texture2D(Source, uv) * Gain * SCALE; }
}
"""
    m = model("k.frag", glsl)
    assert not m.errors, m.errors
    metal = """kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
#if USE_CLAMP
    if (a[i] < 0.0f) a[i] = 0.0f;
    else
#endif
    { a[i] *= 2.0f; }
}
"""
    assert not model("k.metal", metal).errors


def test_file_scope_declaration_macro_lines_are_masked():
    from shaderlint.languages import FRONT_ENDS
    code = """#version 450
RESOURCES_INFO(blur)

layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0, rgba8) uniform writeonly image2D dst;
void main() {
    imageStore(dst, ivec2(gl_GlobalInvocationID.xy), vec4(1.0));
}
"""
    m = model("k.comp", code)
    assert not m.errors, m.errors
    parsed = FRONT_ENDS["glsl"].parse(Source("k.comp", code.encode()))
    assert [mk.text for mk in parsed.masks if mk.kind == "macro-invocation"] == ["RESOURCES_INFO(blur)"]
    # Inside a function, or before a body or initializer, such a line is left alone.
    kept = """float f(float x) {
    float y = x;
    SCALE_IT(y)
    return y;
}
WRAPPED(g)
{
}
"""
    parsed = FRONT_ENDS["glsl"].parse(Source("k.glsl", kept.encode()))
    assert not [mk for mk in parsed.masks if mk.kind == "macro-invocation"]


def test_macro_statement_arguments():
    code = b"""void f(int t, float* p, int n) {
    DISPATCH_TYPES(t, "f", run<scalar_t>(p, n);)
    DISPATCH_TYPES(t, "g", run<scalar_t>(p, n); run<scalar_t>(p, n); );
    FOR_EACH (int i = 0; i < n; ++i) p[i] = 0;
}
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code))
    text = parsed.parse_bytes.decode()
    assert 'DISPATCH_TYPES(t, "f", run<scalar_t>(p, n));' in text
    assert 'DISPATCH_TYPES(t, "g", run<scalar_t>(p, n), run<scalar_t>(p, n)) ;;' in text
    assert "FOR_EACH (int i = 0; i < n; ++i)" in text  # a loop header is not an argument list of statements
    assert len(parsed.parse_bytes) == len(code)


def test_cuda_qualifier_macros():
    code = b"""#define GRID_KERNEL __global__ static
typedef float REAL;
GRID_KERNEL void a(float* p) { p[0] = 1.0f; }
HEADER_KERNEL void b(float* p) { p[0] = 1.0f; }
REAL __device__ c(REAL x) { return x; }
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code))
    masked = {mk.text: mk.args for mk in parsed.masks if mk.kind == "function-qualifier"}
    assert masked == {"GRID_KERNEL": ("__global__", "static"), "HEADER_KERNEL": ()}  # REAL is a type
    m = model("k.cu", code.decode())
    assert not m.errors, m.errors
    assert {f.name: f.kind for f in m.functions} == {"a": "kernel", "b": "host", "c": "device"}


def test_header_function_macros_open_host_functions():
    """`TEST(Suite, Name) {` (googletest, Catch2) at file scope or in namespaces becomes a host
    function of the same length; a macro the file defines, one inside a function body (a loop macro
    such as `CUDA_KERNEL_LOOP(i, n) {`) or one not followed by `{` is left alone."""
    code = b"""#define LOCAL_TEST(a, b) void a##b()
__global__ void k(int* p, int n) {
    CUDA_KERNEL_LOOP(i, n) {
        p[i] = 0;
    }
}
TEST(Suite,
     Name) {
}
TEST(
    NoRoom, OnTheFirstLine) {
}
namespace ns {
TEST_F(F, G) { }
}
LOCAL_TEST(x, y) {
}
NOT_A_FUNCTION(x, y);
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code))
    masked = [code[mk.start:mk.end] for mk in parsed.masks if mk.kind == "header-function-macro"]
    assert masked == [b"TEST(Suite,\n     Name)", b"TEST(\n    NoRoom, OnTheFirstLine)", b"TEST_F(F, G)"]
    assert parsed.parse_bytes.count(b"\n") == code.count(b"\n") and len(parsed.parse_bytes) == len(code)
    assert b"void _" in parsed.parse_bytes
    # inside a function, a header macro before a block is a loop header (mask_block_header_macros)
    assert [mk.text for mk in parsed.masks if mk.kind == "loop-macro"] == ["CUDA_KERNEL_LOOP"]
    m = model("k.cu", code.decode())
    assert [f.name for f in m.functions if f.is_entry] == ["k"]


def test_dead_preprocessor_branches_are_blanked():
    code = """kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
#if 0
    a[i] = a[i] / a[0];
#else
    a[i] = 1.0f;
#endif
#if 1
    a[i] += 2.0f;
#else
    a[i] = oops(
#endif
#if 0
    a[i] = 3.0f;
#elif FAST
    a[i] = 4.0f;
#endif
}
"""
    m = model("k.metal", code)
    assert not m.errors, m.errors
    text = m.parsed.parse_bytes.decode()
    assert "/ a[0]" not in text and "oops" not in text and "a[i] = 1.0f" in text and "+= 2.0f" in text
    # in a chain with #elif, the dead branch goes and the unknown one stays, under its directives
    assert "3.0f" not in text and "a[i] = 4.0f" in text and "#elif FAST" in text
    assert len(text) == len(code) and text.count("\n") == code.count("\n")


def test_cuda_statement_macros_and_type_arguments():
    code = b"""#define CASE_N(n) case n: go<n>(); break;
#define PLUS_ONE(x) (x + 1)
int MAX(int, int);
LAUNCH_BOUNDS(256)
__global__ void k(float* p, int w) {
    switch (w) {
        CASE_N(2)
        CASE_N(4)
    }
    CHECK(p != nullptr, "p")
    int y = PLUS_ONE(w);
    if (w) CHECK(w > 0, "w");
    CONVERT(uint8_t, float, p);
    typename T::value_t z = typename T::value_t(3);
    f.template operator()<true, 2>(y);
}
void g(Vec a = {}, int b = 0) { Vec c = {}; }
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code))
    text = parsed.parse_bytes.decode()
    assert len(parsed.parse_bytes) == len(code)
    assert "CASE_N" not in text.split("\n", 2)[2]  # the two case lines are blanked, the #define stays
    assert 'CHECK(p != nullptr, "p")' not in text
    assert 'if (w) CHECK(w > 0, "w");' in text  # followed by ';': already a statement
    assert "LAUNCH_BOUNDS(256)" in text  # before a declaration: not a statement
    assert "int MAX(int, int);" in text  # a declaration's parameter types stay types
    assert "CONVERT(_int8_t, _loat, p);" in text
    assert "typename T::value_t z =          T::value_t(3);" in text
    assert "f                             (y);" in text
    assert "void g(Vec a     , int b = 0) { Vec c = {}; }" in text
    # the grammar reads everything after the (unexpanded) LAUNCH_BOUNDS line
    errors, stack = [], [parsed.root]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            errors.append(n.start_point[0])
        stack.extend(n.children)
    assert errors and max(errors) <= 4, errors


def test_cuda_unbalanced_conditionals():
    opens_closes = b"""__global__ void k(float* p) {
#if OLD
    if (p == 0) { return; } else {
#endif
    p[0] = 1.0f;
#if OLD
    }
#endif
#ifdef FAST
    p[1] = 2.0f;
#endif
}
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", opens_closes))
    text = parsed.parse_bytes.decode()
    assert "#if OLD" not in text and "#endif\n    p[0]" not in text
    assert "#ifdef FAST" in text  # a balanced block keeps its directives
    assert not parsed.root.has_error
    # a lone block that opens a brace nothing closes is left alone (not valid code to pair up)
    lone = b"void f() {\n#if A\n  if (x) {\n#endif\n  y();\n}\n"
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", lone))
    assert "#if A" in parsed.parse_bytes.decode()
    # the stub branch of '#if OLD } stub #else } real #endif' is blanked, the #else branch read
    stub = b"namespace n {\nvoid g();\n#if OLD\n}\nvoid h() {}\n#else\n}\nvoid h() { g(); }\n#endif\n"
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", stub))
    text = parsed.parse_bytes.decode()
    assert "void h() {}" not in text and "void h() { g(); }" in text
    assert not parsed.root.has_error
    # llama.cpp's mmf.cuh: an `#if / #elif / #else` chain whose every branch opens the `else {` that
    # the code after the chain closes, with a nested `#ifdef / #else` pair of the same shape inside the
    # `#else`: the inner pair is read first, then the chain (its #else branch)
    chain = b"""template <int R> __global__ void mul_mat_f(float* p) {
#if defined(A) || defined(B) || defined(C)
#if defined(A)
    if constexpr (R != 1) {return;} else {
    p[0] = 1.0f;
#elif defined(B)
    if constexpr (R != 2) {return;} else {
    p[0] = 2.0f;
#else
#ifdef C
    if constexpr (R != 3) {return;} else {
    p[0] = 3.0f;
#else
    if constexpr (R != 4) {return;} else {
    p[0] = 4.0f;
#endif // C
#endif // A
    p[1] = 5.0f;
    }
#else
    p[2] = 6.0f;
#endif
}
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("mmf.cuh", chain))
    text = parsed.parse_bytes.decode()
    assert not parsed.root.has_error
    assert "p[0] = 4.0f;" in text and "p[0] = 1.0f;" not in text and "p[0] = 3.0f;" not in text
    assert "#else\n    p[2] = 6.0f;" in text  # the balanced outer group keeps its directives


def test_cuda_qualifier_macro_line():
    code = b"""struct S {
    HEADER_DEVICE
    static int f(int x) { return x; }
};
void g(int y) {
    int r = y;
    SOME_VALUE
        + g2(r);
}
"""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code))
    masked = [mk.text for mk in parsed.masks if mk.kind == "function-qualifier"]
    assert masked == ["HEADER_DEVICE"]  # the value before '+ g2(r)' is not a function's qualifier
    assert "SOME_VALUE" in parsed.parse_bytes.decode()


def test_statement_headers_split_across_preprocessor_branches():
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float v[]; };
void main() {
    uint n = 4u;
#if ncnn_vendorID == 0x5143
    // comment inside the branch
    [[dont_unroll]] for (uint k = 0; k < n; k++)
#else
    [[unroll]] for (uint k = 0; k < n; k++)
#endif
    {
        v[k] += 1.0;
    }
#if A
    if (n > 1u)
#else
    if (n > 1u && n < 8u)
#endif
    {
        v[0] = 2.0;
    }
#if B
    [[unroll]]
#endif
    for (uint k = 0; k < 4u; k++) v[k] *= 2.0;
#if C
    v[1] = 3.0;
#else
    if (n > 2u)
#endif
    { v[2] = 1.0; }
}
"""
    m = model("k.comp", glsl)
    kinds = [mk for mk in m.parsed.masks if mk.kind == "split-header"]
    assert kinds, "the split headers are masked"
    # the #else header is kept, the other branch blanked with the directives
    blanked = " ".join(mk.text for mk in kinds)
    assert "[[dont_unroll]]" in blanked and "n > 1u)" in blanked and "n < 8u" not in blanked
    # a group with a complete statement in a branch is left alone (still a parse error)
    assert all(mk.start < m.source.data.index(b"#if C") for mk in kinds)
    assert m.errors and all(e.start > m.source.data.index(b"#if C") for e in m.errors), m.errors


def test_macro_names_that_refuse_unrolling_do_not_ask_for_it():
    """`DONT_UNROLL for (...)` and `NO_UNROLL` are the opposite of `UNROLL` (found in review: the
    underscore-free check caught NOUNROLL but not DONTUNROLL)."""
    from shaderlint.languages.base import name_asks_unroll

    assert name_asks_unroll(b"UNROLL") and name_asks_unroll(b"FOR_UNROLL")
    assert not any(name_asks_unroll(n) for n in (b"DONT_UNROLL", b"NO_UNROLL", b"NOUNROLL", b"DONTUNROLL", b"LOOP"))
    code = b"""#version 450
layout(local_size_x = 64) in;
layout(binding = 0) buffer B { float d[]; };
void main() {
    DONT_UNROLL for (int i = 0; i < 4; i++) { d[i] = 0.0; }
    UNROLL for (int i = 0; i < 4; i++) { d[i] = 1.0; }
}
"""
    parsed = FRONT_ENDS["glsl"].parse(Source("k.comp", code))
    kinds = [(code[mk.start:mk.end], mk.kind) for mk in parsed.masks if mk.kind in ("unroll-macro", "qualifier")]
    assert kinds == [(b"DONT_UNROLL", "qualifier"), (b"UNROLL", "unroll-macro")]


def test_scan_directives_finds_what_finditer_finds():
    """The directive-line scan tries a ``^[ \\t]*#`` pattern at lines starting with ``#`` only; its
    matches must be exactly ``finditer``'s (continuation lines, CR line ends, first line, comments)."""
    import re

    from shaderlint.languages.base import _CONDITIONAL, _FUNC_MACRO, _OBJ_MACRO, _PRAGMA, scan_directives

    text = (b"#if 1\n  #  define A(x) x \\\n#define B 1\n\t#define C(y) \\\r\n  y\r\n# pragma unroll\n"
            b"x = 1; # not a directive\n/* \n #define D 2 */\n#endif\n#define E")
    src = Source("t.cu", text)
    assert src.directive_starts[0] == 0
    for pattern in (_CONDITIONAL, _FUNC_MACRO, _OBJ_MACRO, _PRAGMA, re.compile(rb"^[ \t]*#[^\n]*", re.M)):
        assert [m.span() for m in scan_directives(src, pattern)] == [m.span() for m in pattern.finditer(text)]


def test_macro_call_patterns_match_only_at_upper_call_starts():
    """The macro-call passes try their patterns at Source.upper_call_starts only; their matches must be
    exactly ``finditer``'s."""
    from shaderlint.languages.base import _LOOP_MACRO, _UPPER_CALL, match_at, word_starts
    from shaderlint.languages.cuda import _STATEMENT_CALL, _TYPE_ARG_CALL

    text = (b"FOO(a) x.BAR(b) p->BAZ (c) N::QUX(d) #DEF(e) _U(f) aBC(g) A_B (h)\n__builtin_bit_cast(int, x)"
            b" X_builtin_y(z) UNROLL_FOR (i = 0; i < n; ++i) _(k) 9X(l) G\t(\nM(")
    src = Source("t.cu", text)
    assert src.upper_call_starts[0] == 0
    builtins = sorted({*src.upper_call_starts, *word_starts(text, (b"__builtin_",))})
    for pattern, starts in ((_UPPER_CALL, src.upper_call_starts), (_LOOP_MACRO, src.upper_call_starts),
                            (_STATEMENT_CALL, src.upper_call_starts), (_TYPE_ARG_CALL, builtins)):
        assert [m.span(1) for m in match_at(text, pattern, starts)] == [m.span(1) for m in pattern.finditer(text)]


def test_glsl_unbalanced_conditionals_pair_up_and_keep_their_condition():
    """llama.cpp's mul_mat_vec.comp: `#if K == 4 if (a) { ... } else { #endif loop #if K == 4 } #endif`
    made the whole file a parse error. The directive lines are blanked (read as if the condition
    held), and the code inside still counts as compiled under it: the barrier in `#ifdef SHMEM`
    and the `continue` in `#ifndef SHMEM` (fwht.comp) never meet, so SL403 stays silent."""
    split = b"""#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer D { float d[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
#if K_PER_ITER == 4
    if (d[0] > 0.0) {
        d[i] = 1.0;
    } else {
#endif
    d[i] += 2.0;
#if K_PER_ITER == 4
    }
#endif
}
"""
    m = model("k.comp", split.decode())
    assert not m.errors and not m.parsed.root.has_error
    assert "#if K_PER_ITER" not in m.parsed.parse_bytes.decode()
    fwht = b"""#version 450
layout(local_size_x = 32, local_size_y = 4) in;
layout(std430, binding = 0) buffer D { float d[]; };
shared float sh[128];
void main() {
    uint row = gl_WorkGroupID.x * 4u + gl_LocalInvocationID.y;
    for (uint base = 0u; base < 64u; base += 4u) {
#ifndef SHMEM
        if (row >= uint(d[0])) {
            continue;
        }
#endif
        sh[gl_LocalInvocationIndex] = d[row];
#ifdef SHMEM
        if (row < uint(d[0])) {
#endif
            d[row] = sh[gl_LocalInvocationIndex ^ 1u];
#ifdef SHMEM
        }
        barrier();
#endif
    }
}
"""
    diags = lint_source("k.comp", fwht, Settings(extend_select=("SL403",))).diagnostics
    assert not [d for d in diags if d.code in ("SL001", "SL403")], diags
    # the same barrier without the #ifdef around it does meet the continue
    plain = fwht.replace(b"#ifdef SHMEM\n        }\n        barrier();\n#endif", b"        barrier();") \
        .replace(b"#ifdef SHMEM\n        if (row < uint(d[0])) {\n#endif\n", b"")
    assert [d.code for d in lint_source("k.comp", plain, Settings(extend_select=("SL403",))).diagnostics
            if d.code == "SL403"] == ["SL403"]


def test_expressions_completed_by_the_preprocessor():
    """`uint pos_a =\\n#ifdef ID\\n e * s +\\n#else\\n b * s +\\n#endif\\n rest;` and branches that end
    the statement (`a_offset =\\n#ifdef ID\\n e * s;\\n#else\\n b * s;\\n#endif`) read as one
    expression: the #else branch is kept, the other blanked with the directives."""
    glsl = b"""#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer D { uint d[]; };
void main() {
    uint pos_a =
#ifdef MUL_MAT_ID
        d[1] * 4u +
#else
        d[2] * 8u +
#endif
        gl_GlobalInvocationID.x;
    uint off =
#ifdef MUL_MAT_ID
        d[3];
#else
        d[4];
#endif
    d[pos_a] = off;
}
"""
    m = model("k.comp", glsl.decode())
    assert not m.errors, m.errors
    text = m.parsed.parse_bytes.decode()
    assert "d[2] * 8u" in text and "d[1] * 4u" not in text and "d[4]" in text and "d[3]" not in text
    cuda = b"""__global__ void k(const int* a, int* out, int n) {
    const int i =
#if defined(WIDE)
        blockIdx.x * 256
#else
        blockIdx.x * 128
#endif
        + threadIdx.x;
    if (i < n) out[i] = a[i];
}
"""
    mc = model("k.cu", cuda.decode())
    assert not mc.errors, mc.errors
    # statements in a branch are not an expression: left alone
    stmt = b"void f(int* p) {\n    p[0] = 1;\n#ifdef A\n    p[1] = 2;\n#else\n    p[1] = 3;\n#endif\n}\n"
    ms = model("k.cu", stmt.decode())
    assert not [mk for mk in ms.parsed.masks if mk.kind == "split-expression"]


def test_glsl_statement_macro_calls_without_semicolon():
    """llama.cpp's flash_attn_dequant.glsl: `case T: FA_DEQUANT4(k_packed)` with `#define
    FA_DEQUANT4(BUF) return ...;` was a parse error for the whole function; the CUDA front end's
    pass blanks such invocations in GLSL too. A macro the file defines as an expression stays."""
    code = """#version 450
#define DEQUANT4(BUF) \\
    return vec4(BUF.data[ib]);
#define SCALE(x) (x * 2.0)
layout(std430, binding = 0) buffer A { vec4 data[]; } a_packed;
layout(std430, binding = 1) buffer B { vec4 data[]; } b_packed;
vec4 dequantize4(uint ib, uint which) {
    switch (which) {
        case 0u: DEQUANT4(a_packed)
        case 1u: DEQUANT4(b_packed)
    }
    return vec4(0.0);
}
void main() {}
"""
    m = model("k.comp", code)
    assert not m.errors, m.errors
    assert [mk.text for mk in m.parsed.masks if mk.kind == "macro-invocation"] == ["DEQUANT4(a_packed)", "DEQUANT4(b_packed)"]
    broken = code.replace("return vec4(0.0);", "float y = SCALE(1.0)\\n    return vec4(y);")
    assert model("k.comp", broken).errors  # an expression macro without `;` is a real error


def test_lambda_qualifier_macros_are_blanked_and_recorded():
    code = ("#define DEV __host__ __device__\n"
            "void f(float* a, int n) {\n"
            "  auto g = [=] XGBOOST_DEVICE(int i) -> float { return a[i]; };\n"
            "  auto h = [a] DEV(int i) mutable { return a[i]; };\n"
            "}\n")
    m = model("k.cu", code)
    assert not m.errors
    quals = [mk for mk in m.parsed.masks if mk.kind == "function-qualifier" and mk.value == "lambda"]
    assert [(mk.text, mk.args) for mk in quals] == [("XGBOOST_DEVICE", ()), ("DEV", ("__host__", "__device__"))]
    # after a subscript or an attribute, an upper-case name is no lambda qualifier
    bad = model("k.cu", "void f(float* a, int n) { float x = a[n] FOO(n); }\n[[nodiscard]] BAR(int x) { }\n")
    assert not [mk for mk in bad.parsed.masks if mk.kind == "function-qualifier"]
    assert bad.errors


def test_file_scope_macro_invocation_lines_are_blanked():
    code = ("#define CHECK(x) \\\n"
            "  AT_ASSERTM(x, \"msg\")\n"
            "#define inst(t, n) \\\n"
            "  instantiate_kernel(\"k_\" #t, k, t, n)\n"
            "inst(float, 4)\n"
            "instantiate_kernel(\"k_half\",\n"
            "    k, half, 8);\n"
            "namespace a {\n"
            "DEFINE_HAS_MEMBER(ptr)\n"
            "}\n"
            "KERNEL_HEAD(f)\n"
            "{ }\n"
            "static void\n"
            "WRAP(g)(int x) { }\n")
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code.encode()))
    blanked = [mk.text.split("(")[0] for mk in parsed.masks if mk.kind == "macro-invocation"]
    # the body line of CHECK (a continuation line), the line before `{` and the one after `void` stay
    assert blanked == ["inst", "instantiate_kernel", "DEFINE_HAS_MEMBER"]
    assert b"AT_ASSERTM" in parsed.parse_bytes and b"WRAP(g)" in parsed.parse_bytes


def test_functional_cast_as_first_argument_of_a_declaration():
    code = ("__global__ void k(float* p);\n"
            "void run(float* p, int n, int m) {\n"
            "    const dim3 grid(unsigned((n + 63) / 64), unsigned(m), 1);\n"
            "    k<<<grid, 64>>>(p);\n"
            "}\n"
            "void take(int (*fp)(int), int x);\n"
            "int g(int x) { return h(int(x)); }\n")
    m = model("k.cu", code)
    assert not m.errors
    casts = [mk for mk in m.parsed.masks if mk.kind == "constructor-name"]
    assert [(mk.text, m.source.line_of(mk.start)) for mk in casts] == [("unsigned", 2)]
    assert b"(_nsigned(" in m.parsed.parse_bytes and b"int (*fp)" in m.parsed.parse_bytes


def test_decltype_values_and_template_member_calls():
    code = ("__device__ void f(T tiled_mma, S o_smem, int w) {\n"
            "    constexpr int n = cute::tile_size<1>(decltype(tiled_mma){});\n"
            "    auto l = make_tile(typename decltype(tiled_mma)::AtomThrID{});\n"
            "    o_smem.template store_128b(w, n);\n"
            "    decltype(w) b{3};\n"
            "}\n")
    m = model("k.cu", code)
    assert not m.errors
    masked = [mk.text for mk in m.parsed.masks if mk.kind in ("decltype-value", "template-args")]
    assert masked == ["decltype(tiled_mma)", "typename decltype(tiled_mma)::", "template"]
    assert b"decltype(w) b{3}" in m.parsed.parse_bytes  # a declaration keeps its type


def test_qualifier_macro_before_a_member_of_a_template_specialization():
    code = ("#define FI_INLINE inline __device__\n"
            "template <> struct vec_t<__nv_fp8_e4m3, 1> { __nv_fp8_e4m3 data; void fill(__nv_fp8_e4m3 val); };\n"
            "FI_INLINE void vec_t<__nv_fp8_e4m3, 1>::fill(__nv_fp8_e4m3 val) { data = val; }\n")
    m = model("k.cu", code)
    assert not m.errors
    assert [(mk.text, mk.args) for mk in m.parsed.masks if mk.kind == "function-qualifier"] == [
        ("FI_INLINE", ("inline", "__device__"))]
    assert [f.kind for f in m.functions] == ["device"]


def test_function_headers_split_across_preprocessor_branches():
    code = ("#if defined(USE_HIP) && \\\n"
            "    (VERSION < 2)\n"
            "int gemm(rocblas_handle h,\n"
            "         int m)\n"
            "#else\n"
            "int gemm(cublasHandle_t h, int m)\n"
            "#endif\n"
            "{\n"
            "    return m;\n"
            "}\n"
            "template <>\n"
            "DS_D_INLINE float act_fn<ActivationType::RELU>(float val)\n"
            "{ return val; }\n")
    m = model("k.cu", code)
    assert not m.errors
    assert len(m.functions) == 2 and m.functions[0].name == "gemm"
    kept = m.parsed.parse_bytes.decode()
    assert "cublasHandle_t" in kept and "rocblas_handle" not in kept  # the #else branch is read
    # a branch that is not one header (here a declaration ending in ';') leaves the group alone
    other = model("k.cu", "#ifdef A\nint f(int a);\n#else\nint f(int b)\n#endif\n{ return 0; }\n")
    assert b"#ifdef A" in other.parsed.parse_bytes


def test_null_directive_lines_are_blanked():
    code = ("kernel void f(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
            "#if QK_K == 256\n"
            "#\n"
            "    a[i] = 1.0f;\n"
            "#  // nothing\n"
            "#endif\n"
            "}\n")
    m = model("k.metal", code)
    assert not m.errors
    assert [mk.text for mk in m.parsed.masks if mk.kind == "null-directive"] == ["#", "#  // nothing"]


def test_statement_bodies_split_across_preprocessor_branches():
    code = ("__device__ float warp_sum(float val) {\n"
            "  for (int offset = 16; offset > 0; offset /= 2)\n"
            "#ifdef USE_HIP\n"
            "    val += __shfl_down(val, offset);\n"
            "#else\n"
            "    val += __shfl_down_sync(0xffffffff, val, offset);\n"
            "#endif\n"
            "  return val;\n"
            "}\n")
    m = model("k.cu", code)
    assert not m.errors
    text = m.parsed.parse_bytes.decode()
    assert "__shfl_down_sync" in text and "__shfl_down(" not in text  # the #else branch is read
    # after a statement that is no header, the group is left to the other passes
    other = FRONT_ENDS["cuda"].parse(Source("k.cu", b"void f(int a) {\n  g(a);\n#ifdef X\n  a = 1;\n#else\n  a = 2;\n#endif\n}\n"))
    assert b"#ifdef X" in other.parse_bytes


def test_unnamed_enum_with_an_underlying_type():
    m = model("k.cu", "typedef enum : int {\n    MODE_0 = 0,\n    MODE_1 = 1\n} adamMode_t;\nenum Named : int { A };\n")
    assert not m.errors
    assert [mk.text for mk in m.parsed.masks if mk.kind == "enum-base"] == [": int"]


def test_unnamed_pointer_template_parameter_with_a_default():
    code = ("template <typename F, std::enable_if_t<std::is_integral_v<F>>* = nullptr>\n"
            "void f(F x) {}\n"
            "template <typename T = size_t,\n"
            "          std::enable_if_t<std::is_same_v<size_t, T>> * =  // NOLINT\n"
            "              nullptr>\n"
            "void g(T x) {}\n"
            "void h(int* p = nullptr) {}\n")
    m = model("k.cu", code)
    assert not m.errors
    assert len([mk for mk in m.parsed.masks if mk.kind == "default-argument"]) == 2  # not h's


def _cuda(code: bytes):
    """(parsed, model) of CUDA ``code``; the masked text keeps every offset and line."""
    parsed = FRONT_ENDS["cuda"].parse(Source("k.cu", code))
    assert len(parsed.parse_bytes) == len(code) and parsed.parse_bytes.count(b"\n") == code.count(b"\n")
    return parsed, build_model(parsed)


def test_cuda_header_macros_where_no_code_stands():
    """Issue 16: upper-case header macros between a return type and the name, before a variable's
    specifiers, closing a parameter list, before an argument, after a string literal, before a loop;
    each blanked. A template parameter used as the return type (`inline T_OUT f(`) is not a macro."""
    code = b"""MANAGED __device__ int counter;
template <typename It>
size_t XGBOOST_DEVICE segment(It first, It last) { return last - first; }
struct Sum { template <typename T> T XGBOOST_DEVICE operator()(T a, T b) { return a + b; } };
template <typename T_OUT, typename T_IN>
__device__ inline T_OUT cast(T_IN v) { return T_OUT(v); }
__global__ void k(float* out, int n, unsigned char* smem PROFILER_PARAMS) {
    UNROLL_HINT for (int i = 0; i < n; i++) out[i] = 0.0f;
    asm volatile("cp.async.cg.shared.global" L2_HINT(128) " [%0], [%1], 16;" :: "r"(n), "l"(out));
}
void host(void* kern, long long n) {
    printf("n=%" PRId64 " on " BACKEND "\\n", n);
    CHECK_ARG(n > 0, "empty")
    void* args[] = {&n};
    cudaFuncSetAttribute(ROCM_ONLY((void *)) kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024);
}
"""
    parsed, m = _cuda(code)
    assert not m.errors, m.errors
    blanked = {code[mk.start:mk.end].decode() for mk in parsed.masks}
    assert {"MANAGED", "XGBOOST_DEVICE", "PROFILER_PARAMS", "UNROLL_HINT", "L2_HINT(128)", "PRId64", "BACKEND",
            "CHECK_ARG(n > 0, \"empty\")", "ROCM_ONLY((void *))"} <= blanked
    assert "T_OUT" not in blanked  # the return type of `cast`
    assert {f.name: f.kind for f in m.functions}.items() >= {"segment": "host", "cast": "device", "k": "kernel"}.items()
    assert [p.name for p in m.function_by_name["k"].params] == ["out", "n", "smem"]
    assert "counter" in {g.name for g in m.globals}


def test_cuda_upper_case_function_name_below_its_return_type():
    """`__global__ void` / `SCALE(float* a) {`: a kernel, not a test macro's header (googletest's
    `TEST(a, b) {` after a `}` still is)."""
    code = b"""__global__ void
SCALE(float* a, int n)
{
    a[threadIdx.x] *= 2.0f;
}
TEST(Suite, Name) {
}
"""
    parsed, m = _cuda(code)
    assert [code[mk.start:mk.end] for mk in parsed.masks if mk.kind == "header-function-macro"] == [b"TEST(Suite, Name)"]
    k = m.function_by_name["SCALE"]
    assert k.kind == "kernel" and [p.name for p in k.params] == ["a", "n"]


def test_cuda_conditional_groups_inside_lists_and_chains():
    """Issue 16: `#if` continuing an expression, a member-initializer list, a launch list and a
    parameter list; launch bounds alone in a group; if-else links in a group (read as if the condition
    held, recorded as "conditional" masks); `#include` inside a parameter and an argument list;
    `and`/`not`/`__has_include(<h>)` in conditions."""
    code = b"""#if defined(A) and not defined(B) && __has_include(<cuda/std/version>)
#define W 64
#endif
struct L {
    unsigned lane;
    __device__ L()
#ifndef USE_ROCM
        : lane(threadIdx.x & 31)
#else
        : lane(threadIdx.x & 63)
#endif
    {}
};
template <bool c> __global__ void
#if __CUDA_ARCH__ < 750
    __launch_bounds__(128, 2)
#else
    __launch_bounds__(256, 2)
#endif
    k(float* a,
#include "params.inc"
) {
    if (c) {
        a[0] = 1.0f;
    }
#if FAST
    else if (a[1] > 0.0f) {
        a[0] = 2.0f;
    }
#endif
    else {
        a[0] = 3.0f;
    }
}
void host(float* a) {
    std::cout << "x"
#ifdef VERBOSE
              << " verbose"
#endif
              << std::endl;
    k<true><<<1, 256
#ifdef STREAM
              , 0, s
#endif
              >>>(a,
#include "args.inc"
    );
}
"""
    parsed, m = _cuda(code)
    assert not m.errors, m.errors
    k = m.function_by_name["k"]
    assert k.kind == "kernel" and [p.name for p in k.params] == ["a"]
    assert k.launch_bounds is not None and "256" in str(k.launch_bounds)  # the #else branch is read
    links = [mk for mk in parsed.masks if mk.kind == "conditional" and mk.value == "else-link"]
    assert [mk.args[:1] for mk in links] == [("read",), ("end",)]
    assert b"else if (a[1] > 0.0f)" in parsed.parse_bytes and b"#if FAST" not in parsed.parse_bytes
    assert sum(mk.kind == "list-include" for mk in parsed.masks) == 4  # two lines and their commas


def test_cuda_declarations_the_grammar_misreads():
    code = b"""template <typename T> struct Buf { T* p; };
template class Buf<float>;
extern template struct Buf<int>;
template <typename T> struct D : Base<T> { using typename Base<T>::value_t; };
struct __CUDA_ALIGN__(8) P { float a, b; };
struct __builtin_align__(32) F8 { float v[8]; };
struct Div { int d; __host__ __device__ friend int operator/(int n, Div const& f); };
bool f(const std::type_info& t) { return t == typeid(float) || t == typeid(int16_t); }
__global__ __maxnreg__(64) void k(float* a, int d) { a[0] = (float)(unsigned(d) >> 2); }
"""
    parsed, m = _cuda(code)
    assert not m.errors, m.errors
    assert m.function_by_name["k"].kind == "kernel"
    kinds = {(mk.kind, mk.value) for mk in parsed.masks}
    assert {("explicit-instantiation", ""), ("typename", ""), ("attribute", "align"), ("ignored-specifier", ""),
            ("launch-attribute", "maxnreg"), ("constructor-name", "")} <= kinds


def test_cuda_identity_macro_with_statement_argument():
    """mmcv's `#define CUDA_INTRINSIC_FUNC(Expr) Expr` (nothing in the other branch) around statements:
    the statements read as written; a macro defined as anything else keeps the call reading."""
    code = b"""#ifdef PARROTS_USE_HALF
#define CUDA_INTRINSIC_FUNC(Expr) Expr
#else
#define CUDA_INTRINSIC_FUNC(Expr)
#endif
#define OTHER(x) do { x } while (0)
__device__ float2 shfl(unsigned mask, float2 var, int lane) {
  CUDA_INTRINSIC_FUNC(float2 r; r.y = __shfl_sync(mask, var.y, lane); return r;);
  OTHER(var.x = 1.0f;);
  return var;
}
"""
    parsed, m = _cuda(code)
    assert not m.errors, m.errors
    identity = [code[mk.start:mk.end] for mk in parsed.masks if mk.value == "identity"]
    assert identity == [b"CUDA_INTRINSIC_FUNC(", b")"]
    assert b"float2 r; r.y = __shfl_sync(mask, var.y, lane); return r;" in parsed.parse_bytes
    assert b"OTHER(" in parsed.parse_bytes


def test_cuda_else_branch_read_when_the_if_branch_reshapes_blocks():
    """ggml-cuda.cu: the #ifdef branch closes the loop opened before the group and opens a block of its
    own (same brace balance as the #else branch, other shape): the #else branch is read."""
    code = b"""void run(bool graph) {
    bool done = false;
    while (!done) {
        done = true;
#ifdef USE_GRAPH
    }
    if (graph) {
        capture();
#else
        done = true;
#endif
    }
}
"""
    parsed, m = _cuda(code)
    assert not m.errors, m.errors
    assert b"capture" not in parsed.parse_bytes and b"done = true;\n#endif" not in parsed.parse_bytes
    assert [mk.value for mk in parsed.masks if mk.kind == "conditional"] == ["unbalanced", "unbalanced"]


def _masked_kinds(m, kind):
    return [mk.text for mk in m.parsed.masks if mk.kind == kind]


def test_metal_object_address_space_after_const_and_before_initializers():
    code = ("template<typename T, size_t Num>\n"
            "struct spvUnsafeArray {\n"
            "    T elements[Num ? Num : 1];\n"
            "    constexpr const thread T& operator [] (size_t pos) const thread\n"
            "    {\n        return elements[pos];\n    }\n"
            "    threadgroup T& operator [] (size_t pos) threadgroup { return elements[pos]; }\n"
            "};\n"
            "struct Acc { float x; Acc(float a) threadgroup : x(a) {} float get() const device { return x; } };\n"
            "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
            "    o[i] = (i > 2) ? o[0] : o[1];\n}\n")
    m = model("k.metal", code)
    assert not m.errors
    assert _masked_kinds(m, "method-qualifier") == ["thread", "threadgroup", "threadgroup", "device"]
    assert len(m.parsed.parse_bytes) == len(code.encode())
    assert m.function_by_name["k"].is_entry


def test_metal_placeholder_line_of_an_embedded_header_is_blanked():
    code = ("#if defined(EMBED_LIBRARY)\n__embed_common-header.h__\n#else\n#include \"common-header.h\"\n#endif\n"
            "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1.0f; }\n")
    m = model("k.metal", code)
    assert not m.errors
    assert [t.strip() for t in _masked_kinds(m, "placeholder")] == ["__embed_common-header.h__"]
    # a branch that is code (a declaration) is not a placeholder, nor one whose other branch is not an #include
    for other in ("#if A\nfloat x-y;\n#else\n#include \"h.h\"\n#endif\n", "#if A\n__embed_h.h__\n#else\nint x;\n#endif\n"):
        parsed = FRONT_ENDS["metal"].parse(Source("k.metal", other.encode()))
        assert not [mk for mk in parsed.masks if mk.kind == "placeholder"]


GLSL_TYPES = """#version 460
#extension GL_NV_cooperative_vector : enable
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { vec4 data[]; };
vec4[2] pair(uint i) { return vec4[2](data[i], data[i + 1]); }
float first(float[4] w) { return w[0]; }
coopvecNV<float16_t, 16> relu(coopvecNV<float16_t, 16> x) { return max(x, coopvecNV<float16_t, 16>(0.0)); }
void main() {
    coopvecNV<float32_t, 4> v;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a[2];
    bool lt = data[0].x < data[1].x, gt = data[2].x > 1.0;
    vec4[2] q = pair(0u);
}
"""


def test_glsl_array_return_types_and_type_parameters():
    m = model("k.comp", GLSL_TYPES)
    assert not m.errors
    assert {"pair", "first", "relu", "main"} <= set(m.function_by_name)
    assert [p.name for p in m.function_by_name["relu"].params] == ["x"]
    assert _masked_kinds(m, "type-parameters") == ["<float16_t, 16>"] * 3 + ["<float32_t, 4>",
                                                  "<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>"]
    assert _masked_kinds(m, "array-type") == ["[2]", "[4]", "[2]"]
    main = m.function_by_name["main"]
    assert {v.name for v in main.vars} >= {"v", "a", "lt", "gt", "q"}  # declarations, not comparisons
    assert len(m.parsed.parse_bytes) == len(GLSL_TYPES.encode())


def test_glsl_mesh_and_spirv_qualifiers():
    code = ("#version 460\n#extension GL_EXT_mesh_shader : require\n"
            "#extension GL_EXT_spirv_intrinsics : require\n"
            "struct Task { uint id; };\ntaskPayloadSharedEXT Task payload;\n"
            "layout(location = 0) perprimitiveEXT out vec4 c[];\n"
            "perprimitiveEXT layout(location = 1) flat out uint pid[];\n"
            "spirv_instruction(extensions = [\"SPV_VALVE_mixed_float_dot_product\"],\n"
            "                  capabilities = [6912], id = 6916)\n"
            "float dot2(f16vec2 a, f16vec2 b, float acc);\n"
            "void main() { c[0] = vec4(payload.id); }\n")
    m = model("k.mesh", code)
    assert not m.errors
    assert _masked_kinds(m, "qualifier") == ["taskPayloadSharedEXT", "perprimitiveEXT", "perprimitiveEXT"]
    assert [t.split("(")[0] for t in _masked_kinds(m, "spirv-intrinsic")] == ["spirv_instruction"]
    assert "float dot2(f16vec2 a" in m.parsed.parse_bytes.decode()  # the declaration stays


def test_glsl_preprocessor_continuations():
    code = ("#version 460\n"
            "layout(std430, binding = 0) buffer B { uint data_i[]; float dst[]; };\n"
            "#if B_SIZE == 64\n#define SWZ .x\n#else\n#define SWZ\n#endif\n"
            "float g(\n#include \"params.glsl\"\n        float c) { return c; }\n"
            "void main() {\n"
            "    uint i = data_i[0] SWZ;\n"
            "    i += uint(data_i[1] SWZ);\n"
            "    if (i != 0u) {\n        dst[i] = 1.0;\n    }\n"
            "#ifdef COOPMAT2\n    else {\n        dst[i] = 2.0;\n    }\n#endif\n"
            "    if (i < 4u) {\n        PREFETCH(i)\n    }\n"
            "    STORE(i);\n"
            "#undef PREFETCH\n#undef STORE\n"
            "}\n")
    m = model("k.comp", code)
    assert not m.errors
    text = m.parsed.parse_bytes.decode()
    assert "data_i[0]    ;" in text and "data_i[1]    )" in text  # the swizzle macro reads as its empty definition
    assert "#include" not in text and "float c)" in text
    cond = [mk for mk in m.parsed.masks if mk.kind == "conditional"]
    assert [mk.args for mk in cond] == [("read", "ifdef", "COOPMAT2", "1"), ("end",)]
    assert "else {" in text  # the else continues the if
    # the undefined-after-use macro without ';' is opaque code; the call with ';' stays a call
    assert _masked_kinds(m, "macro-invocation") == ["PREFETCH(i)"]
    assert "STORE(i);" in text and "#undef" not in text
    assert len(m.parsed.parse_bytes) == len(code.encode())


def test_glsl_postfix_and_statement_macros_need_evidence():
    # a swizzle macro with no empty definition, a statement-like call the file does not #undef: left alone
    code = ("#version 460\n#define SWZ .x\nlayout(std430, binding = 0) buffer B { uvec2 d[]; };\n"
            "void main() {\n    uint i = d[0] SWZ;\n    if (i < 4u) {\n        PREFETCH(i)\n    }\n}\n")
    parsed = FRONT_ENDS["glsl"].parse(Source("k.comp", code.encode()))
    assert b"SWZ;" in parsed.parse_bytes and b"PREFETCH(i)" in parsed.parse_bytes


def test_glsl_include_in_an_initializer_list_is_left_alone():
    code = "#version 460\nconst float w[3] = float[3](1.0,\n#include \"rest.inc\"\n);\nconst float v[] = { 1.0,\n#include \"rest.inc\"\n};\n"
    parsed = FRONT_ENDS["glsl"].parse(Source("k.comp", code.encode()))
    assert [mk.kind for mk in parsed.masks].count("include-in-list") == 1  # the call's, not the braces'
    assert parsed.parse_bytes.count(b"#include") == 1
