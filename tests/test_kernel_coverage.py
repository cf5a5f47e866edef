"""bench/kernel_coverage.py's pure parts: mangled names, ptxas output, definitions, matching (no nvcc)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))

import kernel_coverage as kc  # noqa: E402


@pytest.mark.parametrize("symbol, expected", [
    ("_Z4statPi", ((), "stat")),
    ("bar", ((), "bar")),  # extern "C"
    ("_Z3fooIfEvPT_", ((), "foo")),
    ("_Z3fooI6__halfEvPT_", ((), "foo")),
    ("_ZN4vllm11silu_kernelIfEEvPT_PKS1_i", (("vllm",), "silu_kernel")),
    ("_ZN31_GLOBAL__N__81c2f8b8_4_k_cu_bar4anonEPi", (("_GLOBAL__N__81c2f8b8_4_k_cu_bar",), "anon")),
    ("_ZL12local_kernelPf", ((), "local_kernel")),
    ("_ZN3cub6detail6reduce12ReduceKernelINS0_6policyEEEvv", (("cub", "detail", "reduce"), "ReduceKernel")),
    ("_ZNSt6detail1kEv", (("std", "detail"), "k")),
    ("_ZN2ns1kB5cxx11Ev", (("ns",), "k")),  # ABI tag after the name
    # a kernel whose name holds an 'E' and 'I': lengths, not letters, delimit names
    ("_ZN5EdgeI8IEkernelIiEEvv", (("EdgeI",), "IEkernel")),
    # not understood: the symbol comes back whole
    ("_ZZ4mainE1k", ((), "_ZZ4mainE1k")),
    ("_Z999x", ((), "_Z999x")),
])
def test_base_name(symbol, expected):
    assert kc.base_name(symbol) == expected


@pytest.mark.parametrize("kernel, expected", [
    ("k", "k"), ("k<float, 4>", "k"), ("ns::k<ns::T<int>>", "k"), ("a::b::c", "c"),
])
def test_report_base(kernel, expected):
    assert kc.report_base(kernel) == expected


PTXAS = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3fooIfEvPT_' for 'sm_90'
ptxas info    : Function properties for _Z3fooIfEvPT_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Function properties for _Z6helperv
    8 bytes stack frame
ptxas info    : Compiling entry function 'bar' for 'sm_90'
ptxas info    : Function properties for bar
ptxas info    : Compiling entry function '_Z3fooIfEvPT_' for 'sm_90'
"""


def test_parse_ptxas_lists_entry_functions_once_and_not_device_functions():
    assert kc.parse_ptxas(PTXAS) == ["_Z3fooIfEvPT_", "bar"]
    assert kc.parse_ptxas("") == []


def test_blank_comments_keeps_offsets_and_strings():
    src = 'a /* __global__ x */ b // __global__\n"//not" \\\nc'
    out = kc.blank_comments(src)
    assert len(out) == len(src)
    assert "__global__" not in out
    assert '"//not"' in out and out.count("\n") == src.count("\n")  # lines kept


SRC = """\
#include "h.cuh"
// __global__ void commented(int* p) {}
template <typename T, int N = 4>
__global__ void __launch_bounds__(256) plain(T* x, int n) { x[0] = n; }
__global__ void declared(int* p);
#define UNARY(name, op) \\
  __global__ void name##_kernel(float* x) { x[0] = op(x[0]); }
#define WHOLE(T) __global__ void whole(T* x) { }
UNARY(usin, sinf)
void host() { plain<float><<<1, 1>>>(0, 0); }
"""


def test_find_kernel_definitions():
    clean = kc.blank_comments(SRC)
    assert [d[1] for d in kc.find_kernel_definitions(clean, "plain")] == [False]
    assert kc.find_kernel_definitions(clean, "commented") == []
    assert kc.find_kernel_definitions(clean, "declared") == []  # a declaration is not a definition
    assert [d[1] for d in kc.find_kernel_definitions(clean, "whole")] == [True]  # inside a #define
    assert kc.find_kernel_definitions(clean, "host") == []  # not __global__
    assert kc.kernel_macros(clean) == ["UNARY", "WHOLE"]


def _package(tmp_path, files: dict[str, str]) -> kc.PackageTree:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return kc.PackageTree(str(tmp_path), system=(str(tmp_path / "sys"),))


def test_include_resolution_and_unit_scan(tmp_path):
    tree = _package(tmp_path, {
        "src/a.cu": '#include "common.cuh"\n#include <lib/api.h>\n#include <cuda.h>\n#include <torch/extension.h>\n',
        "src/common.cuh": '#include "detail/x.h"\n',
        "src/detail/x.h": "",
        "include/lib/api.h": '#include "lib/inner.h"\n',
        "include/lib/inner.h": "",
        "vendors/cuda.h": "",      # a project file named like a toolkit header
        "sys/cuda.h": "",          # the toolkit's: <cuda.h> is it
    })
    unit = kc.scan_unit(tree, "pkg", str(tmp_path / "src/a.cu"))
    rel = sorted(os.path.relpath(h, tmp_path) for h in unit.headers)
    assert rel == ["include/lib/api.h", "include/lib/inner.h", "src/common.cuh", "src/detail/x.h"]
    assert unit.include_dirs == [str(tmp_path / "include")]
    assert unit.missing == ["torch/extension.h"]


def test_no_include_dir_shadows_a_toolkit_header(tmp_path):
    # ggml's vendors/musa.h includes the MUSA SDK's <musa.h>: not itself, so vendors/ is no -I dir
    # (it would make <cuda.h> the project's vendors/cuda.h)
    tree = _package(tmp_path, {
        "src/a.cu": '#include "vendors/musa.h"\n#include <cuda.h>\n',
        "src/vendors/musa.h": "#include <musa.h>\n",
        "src/vendors/cuda.h": "",
        "sys/cuda.h": "",
    })
    unit = kc.scan_unit(tree, "pkg", str(tmp_path / "src/a.cu"))
    assert unit.include_dirs == []
    assert [os.path.relpath(h, tmp_path) for h in unit.headers] == ["src/vendors/musa.h"]


def test_match_and_classify(tmp_path):
    tree = _package(tmp_path, {
        "k.cu": ('#include "read.cuh"\n#include "unread.h"\n' + SRC.split("\n", 1)[1]
                 + "__global__ void seen(int* p) { }\n__global__ void lost(int* p) { }\n"),
        "read.cuh": "__global__ void in_read(int* p) { }\n",
        "unread.h": "template <class T> __global__ void in_unread(T* p) { }\n",
    })
    unit = kc.scan_unit(tree, "pkg", str(tmp_path / "k.cu"))
    entries = ["_Z5plainIfLi4EEvPT_i", "_Z5plainIiLi4EEvPT_i", "_Z11usin_kernelPf", "_Z5wholeIfEvPT_",
               "_Z4seenPi", "_Z4lostPi", "_Z7in_readPi", "_Z9in_unreadIfEvPT_",
               "_ZN3cub6detail11EmptyKernelIvEEvv"]
    k = os.path.realpath(str(tmp_path / "k.cu"))
    read = os.path.realpath(str(tmp_path / "read.cuh"))
    rows = {k: {"plain", "seen"}, read: set()}
    kernels, listed, missing, toolkit = kc.match_unit(tree, unit, entries, rows, {k, read})
    assert set(kernels) == {"plain", "usin_kernel", "whole", "seen", "lost", "in_read", "in_unread"}
    assert listed == {"plain", "seen"}
    assert toolkit == {"EmptyKernel"}
    got = {m.kernel: (m.reason, m.where) for m in missing}
    assert got["usin_kernel"][0] == "macro-generated" and "UNARY" in got["usin_kernel"][1]
    assert got["whole"] == ("macro-generated", "k.cu:9")
    assert got["lost"][0] == "other"
    assert got["in_read"] == ("header-read", "read.cuh:1")
    assert got["in_unread"] == ("header-not-read", "unread.h:1")
    # a header kernel listed under the header's path counts for the unit
    rows[read] = {"in_read"}
    _, listed, missing, _ = kc.match_unit(tree, unit, entries, rows, {k, read})
    assert "in_read" in listed and "in_read" not in {m.kernel for m in missing}


def test_stratified_sample_round_robin_and_stable():
    units = {p: [kc.Unit(p, f"/{p}/{i}.cu") for i in range(n)] for p, n in (("a", 5), ("b", 1), ("c", 3))}
    got = kc.stratified(units, 5)
    assert [u.package for u in got] == ["a", "b", "c", "a", "c"]
    assert [u.path for u in got] == [u.path for u in kc.stratified(units, 5)]
    assert len(kc.stratified(units, 100)) == 9


def test_extra_projects_are_pinned():
    sys.path.insert(0, os.path.join(os.path.dirname(kc.__file__), "realcode"))
    import fetch

    pkgs = fetch.parse_packages(kc.EXTRA)
    assert {p.name for p in pkgs} >= {"candle-nn", "mistralrs"}
    assert all(len(p.sha256) == 64 for p in pkgs)
    assert all(len(sha) == 64 for _, _, sha in kc.CUDA_LIB_WHEELS)


def test_context_config_is_toml_with_the_package_flags():
    import tomllib

    doc = tomllib.loads(kc.context_config("llama-cpp-python", ["/a/include", "/b"]))
    assert doc == {"defines": ["GGML_USE_CUDA", "GGML_CUDA_USE_GRAPHS"], "include-dirs": ["/a/include", "/b"]}


def test_demangle_for_display():
    import shutil

    assert kc.demangle_all([]) == {}
    got = kc.demangle_all(["_Z3fooIfEvPT_", "bar"])
    assert got["bar"] == "bar"
    if shutil.which("cu++filt") or shutil.which("c++filt"):
        assert got["_Z3fooIfEvPT_"] == "void foo<float>(float*)"


def _fake_nvcc(tmp_path, body: str) -> str:
    exe = tmp_path / "fake-nvcc"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return str(exe)


def test_compile_unit_caches_by_content(tmp_path):
    log = tmp_path / "runs"
    nvcc = _fake_nvcc(tmp_path, f"echo run >> {log}\n"
                                "echo \"ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\" >&2\n")
    src = tmp_path / "a.cu"
    src.write_text("__global__ void k() {}\n")
    unit = kc.Unit("pkg", str(src))
    cache = str(tmp_path / "cache")
    first = kc.compile_unit(nvcc, unit, "v1", cache)
    assert first["ok"] and first["entries"] == ["_Z1kv"] and not first["cached"]
    again = kc.compile_unit(nvcc, unit, "v1", cache)
    assert again["cached"] and again["entries"] == ["_Z1kv"]
    assert log.read_text().count("run") == 1
    src.write_text("__global__ void k() { }\n")  # new content: compiled again
    assert not kc.compile_unit(nvcc, unit, "v1", cache)["cached"]
    assert not kc.compile_unit(nvcc, unit, "v2", cache)["cached"]  # another nvcc
    assert log.read_text().count("run") == 3


def test_compile_unit_timeout_is_cached_for_shorter_limits(tmp_path):
    nvcc = _fake_nvcc(tmp_path, "sleep 5\n")
    src = tmp_path / "a.cu"
    src.write_text("")
    unit = kc.Unit("pkg", str(src))
    cache = str(tmp_path / "cache")
    r = kc.compile_unit(nvcc, unit, "v", cache, timeout=0.3)
    assert not r["ok"] and r["error"].startswith("timeout") and r["timed_out"]
    assert kc.compile_unit(nvcc, unit, "v", cache, timeout=0.3)["cached"]
    assert not kc.compile_unit(nvcc, unit, "v", cache, timeout=0.6)["cached"]  # a longer limit tries again
