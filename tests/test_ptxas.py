"""ptxas wrapper: parsing is tested everywhere, compiling where nvcc exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from shaderlint.estimate.ptxas import (
    base_name,
    compile_ptxas,
    parse_ptxas_log,
    ptxas_available,
)

needs_nvcc = pytest.mark.skipif(not ptxas_available(), reason="nvcc not on PATH")

KERNELS = r"""
namespace blas {
__global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
}

// A histogram in a thread-private array indexed by data: lives on the stack.
__global__ void local_histogram(int* out, const int* in, int n) {
    int hist[64];
    for (int i = 0; i < 64; ++i) hist[i] = 0;
    for (int i = 0; i < n; ++i) hist[in[i] & 63]++;
    out[blockIdx.x * blockDim.x + threadIdx.x] = hist[threadIdx.x & 63];
}

__global__ void reverse_tile(float* p) {
    __shared__ float tile[256];
    tile[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    p[threadIdx.x] = tile[255 - threadIdx.x];
}

template <int N>
__global__ void unrolled(float* out, const float* in) {
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) acc += in[threadIdx.x * N + i];
    out[threadIdx.x] = acc;
}
template __global__ void unrolled<2>(float*, const float*);
template __global__ void unrolled<8>(float*, const float*);
"""

SAMPLE_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4tileILi8EEvPf' for 'sm_80'
ptxas info    : Function properties for _Z4tileILi8EEvPf
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 360 bytes cmem[0]
ptxas info    : Compile time = 1.0 ms
ptxas info    : Function properties for _Z6helperf
    32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'plain' for 'sm_80'
ptxas info    : Function properties for plain
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
"""


def test_parse_log_without_compiler() -> None:
    kernels = parse_ptxas_log(SAMPLE_LOG, demangled={"_Z4tileILi8EEvPf": "void tile<8>(float*)"})
    assert set(kernels) == {"_Z4tileILi8EEvPf", "plain"}  # helper is not a kernel
    tile = kernels["_Z4tileILi8EEvPf"]
    assert (tile.name, tile.demangled, tile.arch) == ("tile", "void tile<8>(float*)", "sm_80")
    assert (tile.registers, tile.stack_bytes, tile.spill_store_bytes, tile.spill_load_bytes) == (40, 16, 8, 4)
    assert (tile.shared_bytes, tile.barriers, tile.cmem_bytes) == (2048, 1, 360)
    plain = kernels["plain"]
    assert (plain.name, plain.registers, plain.shared_bytes, plain.cmem_bytes) == ("plain", 8, 0, 0)


@pytest.mark.parametrize(
    ("demangled", "name"),
    [
        ("saxpy(float, float const*, float*, int)", "saxpy"),
        ("blas::saxpy(float, float const*, float*, int)", "saxpy"),
        ("void unrolled<8>(float*, float const*)", "unrolled"),
        ("void ns::tile<8, float>(float*, int)", "tile"),
        ("(anonymous namespace)::k(int)", "k"),
        ("void f<void (*)(int)>(int)", "f"),
        ("cfun", "cfun"),
    ],
)
def test_base_name(demangled: str, name: str) -> None:
    assert base_name(demangled) == name


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compile_source_text(arch: str) -> None:
    result = compile_ptxas(KERNELS, arch=arch)
    assert result.ok, result.error
    by_name = {k.name: k for k in result.values() if k.name != "unrolled"}
    assert set(by_name) == {"saxpy", "local_histogram", "reverse_tile"}
    for kernel in result.values():
        assert isinstance(kernel.registers, int) and kernel.registers > 0
        assert kernel.arch == arch
    assert by_name["saxpy"].demangled.startswith("blas::saxpy(")
    assert by_name["saxpy"].stack_bytes == 0
    # Dynamically indexed private array -> local memory stack frame.
    assert by_name["local_histogram"].stack_bytes >= 64 * 4
    assert by_name["reverse_tile"].shared_bytes == 256 * 4
    assert by_name["reverse_tile"].barriers == 1
    # Template instances stay distinct.
    instances = sorted(k.demangled for k in result.by_name("unrolled"))
    assert instances == [
        "void unrolled<2>(float*, float const*)",
        "void unrolled<8>(float*, float const*)",
    ]


@needs_nvcc
def test_compile_file(tmp_path: Path) -> None:
    source = tmp_path / "k.cu"
    source.write_text(KERNELS)
    result = compile_ptxas(source)
    assert result.ok and len(result) == 5
    assert compile_ptxas(str(source)).keys() == result.keys()


@needs_nvcc
def test_device_only_gives_the_same_report_without_the_host_compile() -> None:
    full = compile_ptxas(KERNELS, arch="sm_80")
    device = compile_ptxas(KERNELS, arch="sm_80", device_only=True)
    assert "-cubin" in device.command and "-c" not in device.command
    assert device.ok and device == full


@needs_nvcc
def test_compile_error_does_not_raise() -> None:
    result = compile_ptxas("__global__ void broken(int* p) { p[0] = ; }")
    assert not result.ok
    assert "error" in (result.error or "").lower()
    assert dict(result) == {}


@needs_nvcc
def test_missing_file_is_an_error(tmp_path: Path) -> None:
    result = compile_ptxas(str(tmp_path / "absent.cu"))
    assert result.error is not None and "no such file" in result.error


def test_missing_nvcc_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = compile_ptxas("__global__ void k() {}")
    assert result.error == "nvcc not found on PATH"
    assert dict(result) == {}


# ---- the content cache (cache_dir="default") --------------------------------------------------------
LOG = """ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'
ptxas info    : Function properties for _Z1kPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used {regs} registers, used 0 barriers, 360 bytes cmem[0]
"""


def _fake_nvcc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, header: Path, calls: list) -> None:
    """nvcc replaced by a function that writes the depfile nvcc -MD would (naming ``header``, unless it
    is missing: then it fails as nvcc does, without a depfile) and reports the header's size as registers."""
    import subprocess

    from shaderlint.estimate import ptxas

    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(ptxas, "nvcc_path", lambda: "/fake/nvcc")
    monkeypatch.setattr(ptxas, "_identity", lambda nvcc: "fake nvcc 1.0")
    monkeypatch.setattr(ptxas, "demangle", lambda symbols: {s: "k(float*)" for s in symbols})

    def run(command, **kwargs):
        calls.append(list(command))
        if not header.is_file():
            return subprocess.CompletedProcess(command, 1, "", "k.cu:1:10: fatal error: h.cuh: No such file")
        if "-MF" in command:
            Path(command[command.index("-MF") + 1]).write_text(f"/dev/null : {command[-3]} \\\n    {header}\n")
        return subprocess.CompletedProcess(command, 0, "", LOG.format(regs=len(header.read_bytes())))

    monkeypatch.setattr(ptxas.subprocess, "run", run)


def test_cache_hit_needs_no_compile_and_an_edited_header_is_a_miss(monkeypatch, tmp_path: Path) -> None:
    header = tmp_path / "h.cuh"
    header.write_text("x" * 12)
    calls: list = []
    _fake_nvcc(monkeypatch, tmp_path, header, calls)
    source = '#include "h.cuh"\n__global__ void k(float* p) {}\n'
    first = compile_ptxas(source, "sm_80", ["-I", str(tmp_path)], cache_dir="default")
    assert first.ok and not first.cached and [k.registers for k in first.values()] == [12]
    assert "-MD" in calls[0]
    again = compile_ptxas(source, "sm_80", ["-I", str(tmp_path)], cache_dir="default")
    assert len(calls) == 1 and again.cached and dict(again) == dict(first)
    # on disk too: a new process (an empty memory cache) does not compile either
    from shaderlint.estimate import ptxas
    monkeypatch.setattr(ptxas, "_MEMORY", {})
    assert compile_ptxas(source, "sm_80", ["-I", str(tmp_path)], cache_dir="default").cached and len(calls) == 1
    # another arch, other flags, other text: compiled
    compile_ptxas(source, "sm_90", ["-I", str(tmp_path)], cache_dir="default")
    compile_ptxas(source, "sm_80", ["-I", str(tmp_path), "-DX"], cache_dir="default")
    compile_ptxas(source + "\n", "sm_80", ["-I", str(tmp_path)], cache_dir="default")
    assert len(calls) == 4
    # the header the compile read changes: a miss, and the new figure
    header.write_text("x" * 20)
    edited = compile_ptxas(source, "sm_80", ["-I", str(tmp_path)], cache_dir="default")
    assert len(calls) == 5 and not edited.cached and [k.registers for k in edited.values()] == [20]
    # without cache_dir nothing is cached
    compile_ptxas(source, "sm_80", ["-I", str(tmp_path)])
    compile_ptxas(source, "sm_80", ["-I", str(tmp_path)])
    assert len(calls) == 7 and "-MD" not in calls[-1]


def test_a_compile_missing_a_header_is_not_cached(monkeypatch, tmp_path: Path) -> None:
    header = tmp_path / "h.cuh"
    calls: list = []
    _fake_nvcc(monkeypatch, tmp_path, header, calls)
    source = '#include "h.cuh"\n__global__ void k(float* p) {}\n'
    assert not compile_ptxas(source, cache_dir="default").ok
    header.write_text("x" * 7)  # the header appears: the next compile must see it
    got = compile_ptxas(source, cache_dir="default")
    assert got.ok and not got.cached and len(calls) == 2 and [k.registers for k in got.values()] == [7]


@needs_nvcc
def test_real_nvcc_cache_follows_the_headers(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "h.cuh").write_text("#define TAPS 2\n")
    source = tmp_path / "k.cu"
    source.write_text('#include "h.cuh"\n__global__ void k(int* p, int n) {\n'
                      '    int h[TAPS] = {};\n    for (int j = 0; j < n; ++j) h[p[j] & (TAPS - 1)]++;\n'
                      '    p[threadIdx.x] = h[threadIdx.x & (TAPS - 1)];\n}\n')
    first = compile_ptxas(source, cache_dir="default")
    assert first.ok and not first.cached
    assert compile_ptxas(source, cache_dir="default").cached
    (tmp_path / "h.cuh").write_text("#define TAPS 64\n")
    edited = compile_ptxas(source, cache_dir="default")
    assert not edited.cached
    assert [k.stack_bytes for k in edited.values()] != [k.stack_bytes for k in first.values()]


def test_cached_ptxas_answers_from_the_cache_only(monkeypatch, tmp_path: Path) -> None:
    from shaderlint.estimate.ptxas import cached_ptxas

    header = tmp_path / "h.cuh"
    header.write_text("x" * 9)
    calls: list = []
    _fake_nvcc(monkeypatch, tmp_path, header, calls)
    source = '#include "h.cuh"\n__global__ void k(float* p) {}\n'
    assert cached_ptxas(source, "sm_80", ["-I", str(tmp_path)], device_only=True) is None and calls == []
    compile_ptxas(source, "sm_80", ["-I", str(tmp_path)], device_only=True, cache_dir="default")
    hit = cached_ptxas(source, "sm_80", ["-I", str(tmp_path)], device_only=True)
    assert hit is not None and hit.cached and [k.registers for k in hit.values()] == [9] and len(calls) == 1
    assert cached_ptxas(source, "sm_80", ["-I", str(tmp_path)]) is None  # -c, not -cubin: another entry
    header.write_text("x" * 10)
    assert cached_ptxas(source, "sm_80", ["-I", str(tmp_path)], device_only=True) is None and len(calls) == 1
