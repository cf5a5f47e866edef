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


TEMPLATE = b"""
template <typename T>
__global__ void __launch_bounds__(256) scale(T* out, const T* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}
"""


def _fake_named(name: str, registers: int):
    def compiled(model, settings, target):
        if settings.compiler == "none":
            return None
        k = PtxasKernel(name, f"void {name}<float>(float*, const float*, int)", f"_Z5{name}IfEvPT_PKS0_i",
                        target.ptxas_arch, registers, 0, 0, 0, 0, 0)
        return PtxasResult({k.mangled: k}, arch=target.ptxas_arch)
    return compiled


def test_sl505_decides_an_unbound_template_on_the_compilers_count(monkeypatch):
    """The file never instantiates ``scale``: the estimate cannot tell its registers, but the instances
    the compiler built (its count) can; the impact is the count's, not a what-if on the estimate."""
    monkeypatch.setattr(measured, "compiled", _fake_named("scale", 80))
    (d,) = lint_source("k.cu", TEMPLATE, Settings(select=("SL505",), compiler="ptxas")).diagnostics
    assert "80 per thread from ptxas" in d.message and "37.5%" in d.message
    assert (d.impact.registers, d.impact.occupancy_before, d.impact.occupancy_after, d.impact.source) == \
        (-16, 0.375, 0.5, "ptxas")
    assert lint_source("k.cu", TEMPLATE, Settings(select=("SL505",))).diagnostics == []  # no compiler: silent
    monkeypatch.setattr(measured, "compiled", _fake_named("scale", 64))
    assert lint_source("k.cu", TEMPLATE, Settings(select=("SL505",), compiler="ptxas")).diagnostics == []


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


# ---- measured what-if impacts ---------------------------------------------------------------------
def _fake_compile(calls: list):
    """ptxas as a function of the text: the kernel gets 91 registers, 64 and a 40-byte spill stack once
    __launch_bounds__(1024) is declared (what nvcc 13 does with HEAVY on sm_80)."""
    def compile_ptxas(text, arch, flags, **kw):
        calls.append(text)
        bounded = "__launch_bounds__(1024)" in text
        regs, stack = (64, 40) if bounded else (91, 0)
        k = PtxasKernel("correlate", "correlate(const float*, float*, int)", "_Z9correlatePKfPfi",
                        arch, regs, stack, stack, stack, 0, 0)
        return PtxasResult({k.mangled: k}, arch=arch)
    return compile_ptxas


def test_a_fix_gets_the_measured_impact_when_a_compiler_is_configured(monkeypatch):
    """SL506's fix (declare __launch_bounds__) compiled as written and fixed: the impact is ptxas's
    difference, labelled as measured, where the estimate could not say (it is at the launch, host code)."""
    from shaderlint.diagnostics import Impact
    from shaderlint.estimate import ptxas

    calls: list = []
    monkeypatch.setattr(ptxas, "ptxas_available", lambda: True)
    monkeypatch.setattr(measured, "compile_ptxas", _fake_compile(calls))
    result = lint_source("k.cu", HEAVY, Settings(select=("SL506",), compiler="ptxas"))
    (d,) = result.diagnostics
    assert d.impact == Impact("sm_80", registers=-27, stack_bytes=40, occupancy_before=0.0, occupancy_after=0.5,
                              source="ptxas")
    assert len(calls) == 2 and "__launch_bounds__(1024)" in calls[1] and "__launch_bounds__" not in calls[0]
    assert d.to_json()["impact"]["source"] == "ptxas"
    from shaderlint.formatters.text import format_text
    text = format_text([result], {})
    assert "impact if fixed (measured by ptxas, sm_80): registers -27, stack +40 B, occupancy 0% → 50%" in text


def test_without_a_compiler_setting_impacts_stay_estimates_and_nothing_compiles(monkeypatch):
    from shaderlint.estimate import ptxas

    monkeypatch.setattr(ptxas, "ptxas_available", lambda: True)
    calls: list = []
    monkeypatch.setattr(measured, "compile_ptxas", _fake_compile(calls))
    path = "tests/fixtures/cuda/sl402/redundant_barrier.cu"
    with open(path, "rb") as fh:
        data = fh.read()
    got = [d for d in lint_source(path, data, Settings(select=("SL402",))).diagnostics if d.fix is not None]
    assert got and all(d.impact is not None and d.impact.source == "estimate" for d in got)
    assert calls == []


@pytest.mark.skipif(not ptxas_available(), reason="nvcc not on PATH")
def test_real_measured_impact_equals_ptxas_on_the_fixed_text(tmp_path, monkeypatch):
    from shaderlint.estimate.ptxas import compile_ptxas

    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    (d,) = lint_source("k.cu", HEAVY, Settings(select=("SL506",), compiler="ptxas")).diagnostics
    fixed = HEAVY.decode()
    for e in sorted(d.fix.edits, key=lambda e: -e.start):
        start = len(HEAVY[:e.start].decode())
        fixed = fixed[:start] + e.text + fixed[start + len(HEAVY[e.start:e.end].decode()):]
    (before,) = compile_ptxas(HEAVY.decode(), "sm_80").values()
    (after,) = compile_ptxas(fixed, "sm_80").values()
    assert d.impact.source == "ptxas"
    assert (d.impact.registers, d.impact.stack_bytes) == (after.registers - before.registers,
                                                         after.stack_bytes - before.stack_bytes)
    assert d.impact.registers < 0 and d.impact.occupancy_before == 0.0 and d.impact.occupancy_after > 0


def test_radv_measures_glsl_impacts_with_compiler_auto_on_an_amd_target(tmp_path, monkeypatch):
    from shaderlint.estimate import radv

    if radv.unavailable_reason():
        pytest.skip(f"RADV: {radv.unavailable_reason()}")
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    path = "tests/fixtures/glsl/sl202/float_literal_in_half_math.comp"
    with open(path, "rb") as fh:
        data = fh.read()
    settings = Settings(select=("SL202",), compiler="auto", target="rdna2-wave32")
    got = [d for d in lint_source(path, data, settings).diagnostics if d.fix is not None]
    assert got and all(d.impact.source == "radv" and d.impact.target == "rdna2-wave32" for d in got)
    # each equals RADV's figures on the file with that one fix applied
    d = got[0]
    fixed = data[:d.fix.edits[0].start] + d.fix.edits[0].text.encode() + data[d.fix.edits[0].end:]
    assert len(d.fix.edits) == 1
    old, new = (radv.measure_radv(t.decode(), "navi21", subgroup_size=32, include_dirs=["tests/fixtures/glsl/sl202"])
                for t in (data, fixed))
    assert d.impact.registers == new.vgprs - old.vgprs
    assert lint_source(path, data, Settings(select=("SL202",), target="rdna2-wave32")).diagnostics[0].impact.source \
        == "estimate"


def test_the_lint_cache_key_names_the_radv_driver_for_auto(monkeypatch):
    """Measured GLSL impacts come from RADV with compiler = "auto": a driver change must miss the lint cache."""
    from shaderlint import config
    from shaderlint.estimate import radv

    monkeypatch.setattr(config, "_COMPILER_IDS", {})
    monkeypatch.setattr(radv, "unavailable_reason", lambda: None)
    monkeypatch.setattr(radv, "_driver_stamp", lambda icd: "mesa-A")
    a = Settings(compiler="auto").key()
    assert "mesa-A" in config.compiler_identity("auto") and "mesa-A" not in config.compiler_identity("ptxas")
    monkeypatch.setattr(config, "_COMPILER_IDS", {})
    monkeypatch.setattr(radv, "_driver_stamp", lambda icd: "mesa-B")
    assert Settings(compiler="auto").key() != a
