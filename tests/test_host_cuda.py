"""The CUDA host scanner: launches read from host files, values constant only when the file says so."""

from __future__ import annotations

import os
import random

import pytest

from shaderlint.host import scanners_for
from shaderlint.host.cuda import scan


def launches(src: str, path: str = "host.cu"):
    return [r for r in scan(path, src.encode()) if r.api != "reference"]


def one(src: str, path: str = "host.cu"):
    got = launches(src, path)
    assert len(got) == 1, got
    return got[0]


def test_registered_for_host_extensions():
    for ext in (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp"):
        assert scan in scanners_for("dir.v1/file" + ext.upper())


def test_literal_launch_with_template_arguments():
    r = one("void f(float* x, int n, cudaStream_t s) {\n  k<float, 4><<<dim3(4, 2), 256, 0, s>>>(x, n);\n}\n")
    assert (r.api, r.kernel, r.group, r.grid, r.dispatch) == ("cuda", "k", (256, 1, 1), (4, 2, 1), "threadgroups")
    assert r.template_args == ("float", "4")
    assert r.at.line == 2 and r.at.column == 3 and r.at.path == "host.cu"


def test_constants_through_defines_constexpr_and_dim3_variables():
    src = ("#define BS 128\n#define TWICE (BS * 2)\nconstexpr int T = 8;\n"
           "void f(int n) {\n  dim3 block(T, T);\n  k<<<1, block>>>(n);\n  k<<<1, TWICE>>>(n);\n  dim3 b2(BS);\n"
           "  k<<<1, b2>>>(n);\n}\n")
    rs = launches(src)
    assert [r.group for r in rs] == [(8, 8, 1), (256, 1, 1), (128, 1, 1)]
    assert rs[0].group_at.line == 5  # the dim3 declaration
    assert rs[2].group_at.line == 8  # `dim3 b2(BS);` (C++'s most vexing parse)


def test_runtime_values_stay_unknown():
    src = ("void f(int n, int bs) {\n  int g = (n + 255) / 256;\n  k<<<g, bs>>>(n);\n  int t = 64; t *= 2;\n"
           "  k<<<1, t>>>(n);\n  dim3 b; b.x = 32;\n  k<<<1, b>>>(n);\n  int u = 32; tune(&u);\n  k<<<1, u>>>(n);\n"
           "  int v = 32; configure(v);\n  k<<<1, v>>>(n);\n}\n")
    rs = launches(src)
    assert [r.group for r in rs] == [None] * 5
    assert rs[0].grid is None


def test_parameter_shadows_a_file_constant():
    src = "const int N = 256;\nvoid f(int N) { k<<<1, N>>>(); }\nvoid g() { k<<<1, N>>>(); }\n"
    assert [r.group for r in launches(src)] == [None, (256, 1, 1)]


def test_template_parameter_shadows_a_file_constant():
    src = "const int BS = 256;\ntemplate <int BS>\nvoid f() { k<<<1, BS>>>(); }\nvoid g() { k<<<1, BS>>>(); }\n"
    assert [r.group for r in launches(src, "host.cu")] == [None, (256, 1, 1)]


def test_mutable_global_is_not_a_constant():
    assert one("int threads = 256;\nvoid f() { k<<<1, threads>>>(); }\n").group is None


def test_cuda_launch_kernel_and_cooperative():
    src = ("void f(void** args, cudaStream_t s) {\n  cudaLaunchKernel((void*)k1, dim3(16), dim3(64), args, 0, s);\n"
           "  cudaLaunchKernel(k2<float>, 16, 32, args);\n  cudaLaunchCooperativeKernel(&k3, 2, 128, args, 0, s);\n}\n")
    rs = launches(src, "host.cpp")
    assert [(r.api, r.kernel, r.group, r.grid) for r in rs] == [
        ("cudaLaunchKernel", "k1", (64, 1, 1), (16, 1, 1)),
        ("cudaLaunchKernel", "k2", (32, 1, 1), (16, 1, 1)),
        ("cudaLaunchCooperativeKernel", "k3", (128, 1, 1), (2, 1, 1)),
    ]
    assert rs[1].template_args == ("float",)
    r = one("void f(int n) {\n  hipLaunchKernelGGL(k4, dim3(8), dim3(64), 0, 0, n);\n}\n", "host.cpp")
    assert (r.api, r.kernel, r.group, r.grid) == ("hipLaunchKernelGGL", "k4", (64, 1, 1), (8, 1, 1))


def test_kernel_used_as_a_value_is_a_reference():
    src = ("void f(int n) {\n  register_kernel(k7);\n  cudaLaunchKernelEx(&cfg, k8, n);\n"
           "  cudaFuncSetAttribute(k9, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024);\n  k9<<<1, 32>>>(n);\n}\n")
    refs = {r.kernel for r in scan("h.cu", src.encode()) if r.api == "reference"}
    assert {"k7", "k8"} <= refs
    assert "k9" not in refs and "n" not in refs


def test_kernel_stored_chosen_or_returned_is_a_reference():
    src = ("void* table[] = {k1, (void*)k2};\nvoid f(bool c, void** a) {\n  auto p = &k3;\n  void* q; q = k4;\n"
           "  cudaLaunchKernel(c ? (void*)k5 : (void*)k6, 1, 32, a);\n  int n = 4; int m = n;\n}\n"
           "auto g() { return k7; }\n")
    refs = {r.kernel for r in scan("h.cpp", src.encode()) if r.api == "reference"}
    assert refs == {"k1", "k2", "k3", "k4", "k5", "k6", "k7"}


def test_launch_inside_a_macro_is_a_reference():
    src = ("#define LAUNCH(B) scale<float, 4><<<1, B>>>(x)\n#define RUN k2 <<<1, 64>>>()\n"
           "void f(float* x) { LAUNCH(128); }\n")
    refs = [(r.kernel, r.at.line) for r in scan("h.cu", src.encode()) if r.api == "reference"]
    assert ("scale", 1) in refs and ("k2", 2) in refs


def test_cpp_file_without_markers_is_not_parsed():
    assert scan("a.cpp", b"int main() { return 0; }\n") == []


@pytest.mark.parametrize("seed", range(20))
def test_never_raises_on_noise(seed):
    rnd = random.Random(seed)
    pieces = [b"<<<", b">>>", b"(", b")", b"{", b"}", b"k", b"dim3", b",", b"#define ", b"\n", b"cudaLaunchKernel",
              b"\xff", b"\x00", b"256", b"const int", b";", b"&", b"(void*)"]
    data = b"".join(rnd.choice(pieces) for _ in range(400))
    assert isinstance(scan("x.cu", data), list)
    assert isinstance(scan("x.cpp", data), list)


def test_bounded_on_a_deep_expression():
    data = b"void f(){ k<<<1, " + b"(" * 5000 + b"1" + b")" * 5000 + b">>>(); }\n"
    assert isinstance(scan("x.cu", data), list)


def test_template_arguments_resolved_to_the_files_constants():
    src = ("#define TILE 8\nconstexpr int W = 4;\nvoid f(float* x) {\n  tiled<float, TILE><<<1, 32>>>(x);\n"
           "  tiled<double, W * 2><<<1, 32>>>(x);\n  cudaLaunchKernel((void*)tiled<int, TILE>, 1, 32, 0);\n"
           "  tiled<T, N><<<1, 32>>>(x);\n}\n")
    assert [r.template_args for r in launches(src)] == [("float", "8"), ("double", "8"), ("int", "8"), ("T", "N")]


def test_constant_division_truncates_toward_zero_exactly():
    from shaderlint.host._c import _binop

    assert [_binop("/", 7, 2), _binop("/", -7, 2), _binop("%", -7, 2), _binop("%", 7, -2)] == [3, -3, -1, 1]
    big = (1 << 60) + 1  # float division rounded this to 2^60
    assert _binop("/", big, 1) == big and _binop("%", big, 2) == 1


_NESTED = (b"#define N 4\nconst int G = 2;\nstruct S { void m() { int a = 1; g(a); } };\n"
           b"void f(int n) {\n  struct L { int h() { int b = N; return k(b); } };\n  int c = n ? 1 : 2;\n"
           b"  auto z = c > 0 ? k1 : k2;\n  k<float, T><<<G, N>>>(c);\n  dim3 w(T);\n}\n"
           b"template <int B> void t() { int q[] = {B, 2}; x = q[0]; return y(q); }\n"
           b"void broken( { int d = ; k<<<1, >>>(\n")


@pytest.mark.parametrize("cut", [None, 60, 150, 230, 300])
def test_scope_of_from_ranges_is_the_closest_enclosing_function(cut):
    """The range-based answer equals climbing ``node.parent`` for every node (nested local class
    methods, templates, broken code with missing nodes)."""
    from shaderlint.host._c import Constants, MAX_NODES, parse, walk

    data = _NESTED if cut is None else _NESTED[:cut] + _NESTED[cut + 7:]
    for grammar in ("cuda", "cpp"):
        tree = parse(data, grammar)
        consts = Constants(tree.root_node, [MAX_NODES], language=tree.language)
        assert consts._enclosing is not None
        slow = Constants(tree.root_node, [MAX_NODES], language=tree.language)
        slow._enclosing = None
        seen = 0
        for n in walk(tree.root_node, [MAX_NODES]):
            fast, ref = consts.scope_of(n), slow.scope_of(n)
            if ref is slow.file:
                assert fast is consts.file
            else:
                seen += 1
                assert fast is not consts.file and fast is consts.functions[next(
                    i for i, s in slow.functions.items() if s is ref)]
        assert seen > 10


@pytest.mark.parametrize("cut", [None, 60, 150, 230, 300])
def test_nodes_of_types_meets_nodes_as_the_walk_does(cut):
    from shaderlint.host._c import MAX_NODES, nodes_of_types, parse, walk
    from shaderlint.host.cuda import _COLLECTED

    data = _NESTED if cut is None else _NESTED[:cut] + _NESTED[cut + 7:]
    tree = parse(data, "cuda")
    types = _COLLECTED + ("translation_unit", "function_definition", "parameter_declaration", "identifier",
                          "number_literal", "compound_statement", "expression_statement",
                          "type_descriptor", "type_identifier", "primitive_type", "sized_type_specifier")
    budget = [MAX_NODES]
    got = nodes_of_types(tree.root_node, types, budget, tree.language)
    want = [n for n in walk(tree.root_node, [MAX_NODES]) if n.type in types]
    assert [(n.id, n.type) for n in got] == [(n.id, n.type) for n in want] and len(want) > 20
    assert budget[0] == MAX_NODES - tree.root_node.descendant_count
    from shaderlint.host._c import Constants
    also = Constants(tree.root_node, [MAX_NODES], language=tree.language, also=types).also  # (one query for both)
    assert also is not None and [n.id for n in also] == [n.id for n in got]
    small = [5]  # a tree larger than the budget: the walk itself, as far as it goes
    assert nodes_of_types(tree.root_node, types, small, tree.language) == \
        [n for n in walk(tree.root_node, [5]) if n.type in types]
