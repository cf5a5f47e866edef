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


def test_a_name_handed_to_an_unknown_call_is_found_wherever_the_file_starts():
    # (the tree's root starts at the first token: the name's place in the root's bytes is not its place
    # in the file when blank lines come first)
    body = "void f(float* x) {\n  int n = 256;\n  read_size(n);\n  k<<<1, n>>>(x);\n}\n"
    for lead in ("", "\n\n", "  \n\t", "// first\n"):
        assert groups(lead + body) == [None], repr(lead)


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


# ---- the index: host files whose bytes name no kernel a launch can link to -----------------------------

SCALE = "__global__ void scale(float* x, int n) {\n    x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f;\n}\n"
OTHER = "__global__ void other(float* x) {}\n"


def _write(root, files: dict[str, str]) -> None:
    for rel, body in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body)


def _build(root, kernels, cache=False):
    from shaderlint.config import SettingsResolver
    from shaderlint.host.index import HostIndex

    return HostIndex.build(["."], kernels, SettingsResolver(None, {}).for_path,
                           cache_dir=str(root / ".cache") if cache else None)


def _scanned(monkeypatch) -> list[str]:
    import shaderlint.host.cuda as cuda

    seen: list[str] = []
    real = cuda._scan
    monkeypatch.setattr(cuda, "_scan", lambda path, data: seen.append(path) or real(path, data))
    return seen


def test_a_host_file_naming_no_linkable_kernel_is_not_read_by_the_cuda_scanner(tmp_path, monkeypatch):
    import shaderlint.host.index as index

    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"k/scale.cu": SCALE, "k/twice_a.cu": OTHER, "k/twice_b.cu": OTHER,
                      "host/a.cpp": "void f(float* x) { scale<<<4, 128>>>(x, 1); }\n",
                      "host/b.cpp": "void g(float* x) { other<<<4, 64>>>(x); helper(x); }\n",
                      "host/c.cpp": "int h() { return 1; }\n"})
    kernels = ["k/scale.cu", "k/twice_a.cu", "k/twice_b.cu"]
    index._SCANNED.clear()
    seen = _scanned(monkeypatch)
    got = _build(tmp_path, kernels)
    # (`other` is defined twice: no launch of it links; b.cpp names nothing else)
    assert seen == ["host/a.cpp"]  # (the kernel files launch nothing: no marker)
    assert [n for n, _ in got.facts_for("k/scale.cu").launches] == ["scale"]
    assert got.facts_for("k/scale.cu").for_kernel("scale")[0].group == (128, 1, 1)
    # the same facts as reading every file with every scanner
    index._SCANNED.clear()
    monkeypatch.setattr(index, "BY_NAME", set())
    seen.clear()
    full = _build(tmp_path, kernels)
    assert "host/b.cpp" in seen and full.by_file == got.by_file and full.paths == got.paths


def test_a_partial_scan_is_not_kept_for_a_run_in_which_the_name_links(tmp_path, monkeypatch):
    import shaderlint.host.index as index

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)  # (stat data trusted: the files were written just now)
    _write(tmp_path, {"k/twice_a.cu": OTHER, "k/twice_b.cu": OTHER,
                      "host/b.cpp": "void g(float* x) { other<<<4, 64>>>(x); }\n"})
    index._SCANNED.clear()
    seen = _scanned(monkeypatch)
    assert _build(tmp_path, ["k/twice_a.cu", "k/twice_b.cu"], cache=True).by_file == {}
    assert "host/b.cpp" not in seen
    (tmp_path / "k/twice_b.cu").unlink()  # `other` is now defined once: b.cpp's launch links
    index._SCANNED.clear()
    got = _build(tmp_path, ["k/twice_a.cu"], cache=True)
    assert "host/b.cpp" in seen
    assert got.facts_for("k/twice_a.cu").for_kernel("other")[0].group == (64, 1, 1)


def test_names_any_matches_whole_words_as_identifiers_are_read():
    from shaderlint.host.index import _names_any

    names = {b"scale", b"k2"}
    assert _names_any(b"void f() { scale<<<1, 2>>>(x); }", names)
    assert _names_any(b"x = 9k2;", names)  # (a run with leading digits: the word after them)
    assert _names_any(b"a$scale(1)", names) and _names_any(b"\xc3\xa9k2", names)
    assert not _names_any(b"rescale(scaled, k22, _k2, k2_)", names)
    assert not _names_any(b"", names) and not _names_any(b"scale", set())
