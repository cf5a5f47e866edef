"""Lint-time compiler figures (``compiler`` setting): SL505 and SL506 decide register verdicts only on
a compiler's count. The compile is replaced by a fixed ptxas report here, so these run without nvcc;
tests/fixtures/cuda/sl505/measured_registers.cu and sl506/*.cu check the real compiler where it exists."""

from __future__ import annotations

import pytest

from shaderlint.config import ConfigError, Settings, settings_from_table
from shaderlint.engine import lint_source
from shaderlint.estimate import measured
from shaderlint.estimate.ptxas import PtxasKernel, PtxasResult, ptxas_available

HEAVY = b"""
#define TAPS 16
__global__ void correlate(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[TAPS];
#pragma unroll
    for (int k = 0; k < TAPS; ++k) acc[k] = in[i + k * n];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS; ++k)
#pragma unroll
        for (int j = 0; j < TAPS; ++j) s += acc[k] * acc[j] * __sinf(acc[k] - acc[j]);
    out[i] = s;
}
void run(const float* in, float* out, int n) { correlate<<<(n + 1023) / 1024, 1024>>>(in, out, n); }
"""


def _fake(registers: int, calls: list):
    def compiled(model, settings, target):
        calls.append(settings.compiler)
        if settings.compiler == "none":
            return None
        k = PtxasKernel("correlate", "correlate(const float*, float*, int)", "_Z9correlatePKfPfi",
                        target.ptxas_arch, registers, 0, 0, 0, 0, 0)
        return PtxasResult({k.mangled: k}, arch=target.ptxas_arch)
    return compiled


@pytest.mark.parametrize("registers,reported", [(91, True), (64, False), (40, False)])
def test_sl506_reports_only_a_count_over_what_the_block_fits(monkeypatch, registers, reported):
    calls: list = []
    monkeypatch.setattr(measured, "compiled", _fake(registers, calls))
    got = lint_source("k.cu", HEAVY, Settings(select=("SL506",), compiler="ptxas")).diagnostics
    assert [d.code for d in got] == (["SL506"] if reported else [])
    if reported:
        assert "ptxas gives it 91 registers" in got[0].message and "fits at most 64" in got[0].message


def test_sl506_is_silent_without_a_compiler(monkeypatch):
    calls: list = []
    monkeypatch.setattr(measured, "compiled", _fake(91, calls))
    assert lint_source("k.cu", HEAVY, Settings(select=("SL506",))).diagnostics == []


def test_sl505_uses_the_compilers_count_for_a_register_limited_kernel(monkeypatch):
    src = HEAVY.replace(b"__global__ void correlate", b"__global__ void __launch_bounds__(256) correlate")
    src = src.replace(b"<<<(n + 1023) / 1024, 1024>>>", b"<<<(n + 255) / 256, 256>>>")
    calls: list = []
    monkeypatch.setattr(measured, "compiled", _fake(200, calls))
    (d,) = lint_source("k.cu", src, Settings(select=("SL505",), compiler="ptxas")).diagnostics
    assert "200 per thread from ptxas" in d.message and "estimated" not in d.message
    monkeypatch.setattr(measured, "compiled", _fake(60, calls))
    assert lint_source("k.cu", src, Settings(select=("SL505",), compiler="auto")).diagnostics == []
    assert lint_source("k.cu", src, Settings(select=("SL505",))).diagnostics == []


def test_compiler_setting_is_validated_and_keyed():
    assert settings_from_table({"compiler": "auto"}).compiler == "auto"
    with pytest.raises(ConfigError):
        settings_from_table({"compiler": "nvcc"})
    assert Settings().key() != Settings(compiler="ptxas").key()


def test_no_compile_without_the_setting(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("compiled without a compiler configured")
    monkeypatch.setattr(measured, "compile_ptxas", boom)
    lint_source("k.cu", HEAVY, Settings(select=("ALL",)))


@pytest.mark.skipif(not ptxas_available(), reason="nvcc not on PATH")
def test_real_ptxas_count_reaches_sl506():
    got = lint_source("k.cu", HEAVY, Settings(select=("SL506",), compiler="ptxas")).diagnostics
    assert [d.code for d in got] == ["SL506"]


def test_the_language_server_never_compiles(tmp_path):
    """An editor must not wait on nvcc: the server lints with compiler = "none" whatever is configured."""
    from types import SimpleNamespace

    from shaderlint.server.server import ShaderlintServer

    (tmp_path / "shaderlint.toml").write_text('compiler = "ptxas"\nextend-select = ["SL506"]\n')
    server = ShaderlintServer()
    assert server.configs.settings_for(str(tmp_path / "k.cu"), server.client_settings)[0].compiler == "ptxas"
    settings, error = server.settings_for(SimpleNamespace(path=str(tmp_path / "k.cu")))
    assert error is None and settings.compiler == "none"
    assert "SL506" in settings.extend_select  # the rest of the configuration applies


@pytest.mark.skipif(not ptxas_available(), reason="nvcc not on PATH")
def test_the_compile_searches_the_configured_include_dirs(tmp_path, monkeypatch):
    """``include-dirs`` reaches nvcc as -I (after the file's own directory): a kernel whose header lives
    there compiles, and is compiled device-only (-cubin)."""
    from shaderlint.model.build import build_model
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.source import Source

    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "taps.cuh").write_text("#define TAPS 4\n")
    src = tmp_path / "src"
    src.mkdir()
    data = b'#include "taps.cuh"\n__global__ void k(float* p) { p[threadIdx.x] *= TAPS; }\n'
    model = build_model(FRONT_ENDS["cuda"].parse(Source(str(src / "k.cu"), data)))
    assert "taps.cuh" in (measured.compile_file(model, "sm_80").error or "")
    model = build_model(FRONT_ENDS["cuda"].parse(Source(str(src / "k.cu"), data)))
    got = measured.compile_file(model, "sm_80", (), (str(inc),))
    assert got.ok and [k.name for k in got.values()] == ["k"] and "-cubin" in got.command
