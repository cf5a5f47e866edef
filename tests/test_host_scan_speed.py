"""The CUDA host scanner's cheaper paths give what the whole reading gives: names handed to calls
(read per name when asked), and the index's skipping of host files that cannot link."""

from __future__ import annotations

from shaderlint.host._c import Constants, parse
from shaderlint.host.cuda import scan


def groups(src: str) -> list:
    return [r.group for r in scan("host.cu", src.encode()) if r.api == "cuda"]


def test_a_local_handed_to_an_unknown_call_is_not_constant():
    src = ("void f(float* x) {\n  int n = 256;\n  read_size(n);\n  k<<<1, n>>>(x);\n}\n"
           "void g(float* x) {\n  int n = 128;\n  printf(\"%d\", n);\n  k<<<1, n>>>(x);\n}\n")
    assert groups(src) == [None, (128, 1, 1)]  # (printf only reads it; the other function's call is not g's)


def test_a_taint_is_the_whole_name_not_a_part_of_another():
    src = ("void f(float* x) {\n  int n = 64;\n  int nn = 2, n2 = 3;\n  touch(nn); touch(n2); touch(xn);\n"
           "  k<<<1, n>>>(x);\n  int m = 32;\n  touch(&m);\n  k<<<1, m>>>(x);\n}\n")
    assert groups(src) == [(64, 1, 1), None]


def test_a_name_handed_to_a_launch_or_a_constructor_stays_constant():
    src = ("void f(float* x) {\n  int n = 64;\n  k<<<1, n>>>(n);\n  Buffer b(n);\n  dim3 g(n);\n"
           "  k<<<g, n>>>(x);\n}\n")
    assert groups(src) == [(64, 1, 1), (64, 1, 1)]


def test_taints_match_the_identifiers_text_outside_ascii():
    src = "void f(float* x) {\n  int größe = 64;\n  touch(größe);\n  k<<<1, größe>>>(x);\n  int w = 8;\n  k<<<1, w>>>(x);\n}\n"
    assert groups(src) == [None, (8, 1, 1)]


def test_tainted_per_scope_as_the_collection_reads_it():
    data = b"int g;\nvoid f() {\n  int a = 1, b = 2;\n  use(a);\n  b += 1;\n}\nvoid h() {\n  int a = 3;\n}\n"
    tree = parse(data, "cpp")
    consts = Constants(tree.root_node, [10_000], language=tree.language)
    fns = [n for n in tree.root_node.named_children if n.type == "function_definition"]
    f, h = (consts.scope_of(fn.child_by_field_name("body")) for fn in fns)
    assert consts.tainted(f, "a") and consts.tainted(f, "b") and not consts.tainted(h, "a")
    assert not consts.tainted(consts.file, "a") and not consts.tainted(f, "g")
