"""``impact`` on diagnostics: the kernel estimated as written and as the advice would leave it."""

from __future__ import annotations

from dataclasses import replace

from shaderlint.config import Settings
from shaderlint.diagnostics import Finding
from shaderlint.engine import lint_source
from shaderlint.estimate import whatif
from shaderlint.estimate.targets import get_target
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.build import build_model
from shaderlint.model.source import Source
from shaderlint.rules.base import Rule

SL101_CUDA = """
__global__ void hist(const int* __restrict__ bins, float* out, int n) {
    float h[16];
    for (int i = 0; i < 16; ++i) h[i] = 0.0f;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; ++k) h[bins[t * n + k] & 15] += 1.0f;
    for (int i = 0; i < 16; ++i) out[t * 16 + i] = h[i];
}
"""

SL201_CUDA = """
__device__ int cells(int a, int b) { return a / b; }
__global__ void unpack(const int* in, int2* out, int width, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = make_int2(i % width, cells(in[i], width));
}
__device__ int unused_helper(const int* p, int n, int b) { int s = 0; for (int k = 0; k < n; ++k) s += p[k] % b; return s; }
"""


def lint(src: str, path: str, select: tuple[str, ...], **kw):
    return lint_source(path, src.encode(), Settings(select=select, **kw)).diagnostics


def test_sl101_impact_frees_the_stack():
    (d,) = lint(SL101_CUDA, "k.cu", ("SL101",))
    assert d.impact is not None and d.impact.target == "sm_80"
    assert d.impact.stack_bytes == -64
    assert d.impact.registers is not None
    # ~28 registers, measured range 23-45 on sm_80: 32 registers is an occupancy step within it, so the
    # estimate does not decide the occupancy, and the impact does not claim one
    assert d.impact.occupancy_before is None and d.impact.occupancy_after is None
    assert d.to_json()["impact"]["stack_bytes"] == -64


SMALL_CUDA = """
__global__ void scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0f;
}
"""


def test_an_impact_shows_occupancy_only_where_the_estimates_range_decides_it():
    """The occupancy before and after the advice is shown when it is the same at both ends of the
    register range the estimate may be off by (the interval measured on sm_80; from the estimate to
    the cap for a floor ``~N+``; from 1 to the cap where no error was measured)."""
    from shaderlint.estimate.registers import cached_estimate
    from shaderlint.estimate.uncertainty import register_interval

    sm80 = get_target("sm_80")
    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", SMALL_CUDA.encode())))
    e = cached_estimate(m, m.kernels[0], sm80)
    iv = register_interval("cuda", "sm_80", e.registers)
    assert iv is not None and iv.high <= 32  # every count in the range allows full occupancy
    assert whatif.occupancy_decided(m, sm80, e)
    assert whatif.impact_of(m, m.kernels[0], whatif.no_change(), sm80).occupancy_before == 1.0
    floor = replace(e, unseen_calls=("op",))  # ~8+: could be any count up to the cap
    assert not whatif.occupancy_decided(m, sm80, floor)
    # 1024 threads per group: a register more or less than 64 moves the occupancy between 100 % and 0
    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", ("// shaderlint: threadgroup-size=1024\n" + SMALL_CUDA).encode())))
    e = cached_estimate(m, m.kernels[0], sm80)
    assert e.threads_per_group == 1024 and whatif.occupancy_decided(m, sm80, e)
    # an estimate whose measured range crosses 64 registers: undecided; one whose range stays below: decided
    crossing = next(r for r in range(40, 129) if (iv := register_interval("cuda", "sm_80", r)) and iv.low <= 64 < iv.high)
    assert not whatif.occupancy_decided(m, sm80, replace(e, registers_exact=float(crossing), registers=crossing))
    below = next(r for r in range(64, 8, -1) if (iv := register_interval("cuda", "sm_80", r)) and iv.high <= 64)
    assert whatif.occupancy_decided(m, sm80, replace(e, registers_exact=float(below), registers=below))


def test_sl101_impact_on_metal_uses_the_metal_target():
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void lut(device const uchar* px [[buffer(0)]], device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
    float t[8];
    for (int i = 0; i < 8; ++i) t[i] = float(i) * 0.5f;
    out[gid] = t[px[gid] & 7];
}
"""
    (d,) = lint(src, "k.metal", ("SL101",))
    assert d.impact.target == "apple-m1" and d.impact.stack_bytes == -32


def test_sl201_impact_is_a_small_register_delta():
    diags = lint(SL201_CUDA, "k.cu", ("SL201",))
    by_line = {d.line: d for d in diags}
    in_kernel = by_line[5]
    assert in_kernel.impact.stack_bytes == 0
    assert -4 <= in_kernel.impact.registers <= 0
    helper = by_line[2]  # in a helper the kernel inlines: impact on that kernel
    assert helper.impact is not None and helper.impact.registers is not None
    assert 7 not in by_line  # a helper no kernel calls may never run: SL201 does not report it


def test_sl505_impact_reaches_the_threshold():
    src = """
__global__ void __launch_bounds__(256) stage(float* out, const float* in) {
    __shared__ float rows[12288];
    for (int i = threadIdx.x; i < 12288; i += 256) rows[i] = in[blockIdx.x * 12288 + i];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = rows[threadIdx.x * 48];
}
"""
    (d,) = lint(src, "k.cu", ("SL505",))
    assert d.impact.occupancy_before < 0.5 <= d.impact.occupancy_after
    assert d.impact.stack_bytes == 0
    (none,) = lint(src, "k.cu", ("SL505",), occupancy_threshold=0.3) or (None,)
    assert none is None


def test_rules_without_a_hook_report_occupancy_before_only():
    class Marker(Rule):
        code = "SL999"
        name = "marker"
        languages = frozenset({"cuda"})

    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", SMALL_CUDA.encode())))
    f = m.kernels[0]
    fd = Finding(f.body.start_byte + 5, f.body.start_byte + 6, "x", kernel=f.name)
    ((_, out),) = whatif.attach_impacts(m, [(Marker, fd)], get_target("sm_80"))
    assert out.impact.occupancy_before is not None
    assert out.impact.registers is None and out.impact.stack_bytes is None and out.impact.occupancy_after is None

    class NoChange(Marker):
        @classmethod
        def what_if(cls, model, function, finding, target):
            return whatif.no_change()

    ((_, out),) = whatif.attach_impacts(m, [(NoChange, fd)], get_target("sm_80"))
    assert out.impact.registers == 0 and out.impact.stack_bytes == 0
    assert out.impact.occupancy_after == out.impact.occupancy_before


def test_a_raising_hook_never_costs_the_diagnostic():
    class Broken(Rule):
        code = "SL998"
        name = "broken"
        languages = frozenset({"cuda"})

        @classmethod
        def what_if(cls, model, function, finding, target):
            raise RuntimeError("boom")

    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", SL101_CUDA.encode())))
    f = m.kernels[0]
    fd = Finding(f.body.start_byte, f.body.start_byte + 1, "x", kernel=f.name)
    ((_, out),) = whatif.attach_impacts(m, [(Broken, fd)], get_target("sm_80"))
    assert out is fd


def test_host_code_gets_no_impact():
    src = """
__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
int grid(int n, int block) { return n / block; }
void run(float* p, int n) { k<<<grid(n, 256), 256>>>(p); }
"""
    m = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", src.encode())))
    host = next(f for f in m.functions if f.name == "grid")
    assert whatif.kernels_for(m, host.body.start_byte) == []


DIVISIONS_CUDA = """
__global__ void early(const float* in, float* out, int width, int n, int tiles) {
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int row = t / width;
    int col = t % width;
    float acc[16];
    #pragma unroll
    for (int k = 0; k < 16; ++k) acc[k] = in[(row * n + k) * width + col];
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 16; ++k) s += acc[k] * acc[15 - k];
    out[row * width + col] = s;
  }
}
__global__ void at_peak(const long long* in, long long* out, long long a, long long b, int n) {
  for (int t = threadIdx.x; t < n; t += 256) {
    long long x0 = in[t], x1 = in[t + 32], x2 = in[t + 64], x3 = in[t + 96];
    long long x4 = in[t + 128], x5 = in[t + 160], x6 = in[t + 192], x7 = in[t + 224];
    out[t] = x0 * x1 * x2 * x3 * x4 * x5 * x6 * (x7 / a) + x0 / b;
  }
}
"""


def test_division_what_ifs_that_skip_the_walk_match_a_full_walk(monkeypatch):
    """A constant-divisor what-if whose division is costed below the kernel's peak reuses the
    walk as written (``Walker.peak_without``); its impact must be the one a fresh walk gives."""
    from shaderlint.estimate import registers
    from shaderlint.estimate.liveness import Walker

    taken = []
    original = Walker.peak_without

    def spy(self, cheap):
        taken.append(original(self, cheap))
        return taken[-1]

    monkeypatch.setattr(Walker, "peak_without", spy)
    registers._SHARED.clear()
    fast = {(d.line, d.column): d.impact for d in lint(DIVISIONS_CUDA, "k.cu", ("SL201",))}
    assert True in taken and False in taken  # `early` skips its re-walks, `at_peak` cannot
    monkeypatch.setattr(Walker, "peak_without", lambda self, cheap: False)
    registers._SHARED.clear()
    slow = {(d.line, d.column): d.impact for d in lint(DIVISIONS_CUDA, "k.cu", ("SL201",))}
    assert fast == slow and len(fast) == 3
    assert fast[4, 17].registers == 0  # `early`: the division is done long before the unrolled loops
    assert fast[19, 53].registers < 0 and fast[19, 63].registers < 0  # at the peak: their temporaries are part of it


def test_a_kernel_too_large_to_walk_gets_no_what_if(monkeypatch):
    """Past the walk's visit budget the estimate covers the kernel's first part: a what-if delta over
    that part would be a guess, so the impact leaves registers, stack and ``occupancy_after`` null."""
    from shaderlint.estimate import liveness, registers

    registers._SHARED.clear()
    (whole,) = lint(SL101_CUDA, "k.cu", ("SL101",))
    assert whole.impact.stack_bytes == -64 and whole.impact.registers is not None
    monkeypatch.setattr(liveness, "_MAX_VISITS", 5)
    registers._SHARED.clear()
    (cut,) = lint(SL101_CUDA, "k.cu", ("SL101",))
    assert cut.impact is not None
    assert (cut.impact.registers, cut.impact.stack_bytes, cut.impact.occupancy_after) == (None, None, None)


def test_suppressed_findings_are_not_estimated(monkeypatch):
    """Estimates are made for the diagnostics that are reported: a suppressed finding costs none, and
    the diagnostics that remain get the same impact as without the suppression."""
    import shaderlint.estimate.registers as registers

    calls = []
    original = registers.estimate_kernel

    def counting(*a, **kw):
        calls.append(a[1].name)
        return original(*a, **kw)

    monkeypatch.setattr(registers, "estimate_kernel", counting)
    monkeypatch.setattr(registers, "_SHARED", type(registers._SHARED)())  # no estimate from another test
    suppressed = SL101_CUDA.replace("float h[16];", "float h[16];  // shaderlint: ignore[SL101]")
    assert lint(suppressed, "k.cu", ("SL101",)) == []
    assert calls == []
    (d,) = lint(SL101_CUDA, "k.cu", ("SL101",))
    assert calls and d.impact.stack_bytes == -64
    both = SL101_CUDA + SL101_CUDA.replace("hist", "hist2").replace("float h[16];", "float h[16];  // shaderlint: ignore")
    calls.clear()
    (kept,) = lint(both, "k.cu", ("SL101",))
    assert kept.kernel == "hist" and kept.impact == d.impact
    assert set(calls) == {"hist"}


def test_sl505_skips_the_walk_when_group_size_and_memory_clear_the_threshold(monkeypatch):
    """SL505 reports an estimate only when group size or threadgroup memory limit it: an instance whose
    occupancy with registers left out (``occupancy_ceiling``) reaches the threshold is not estimated,
    and a kernel whose threadgroup memory keeps it under still is, with the same finding."""
    import shaderlint.estimate.registers as registers
    from shaderlint.estimate.occupancy import occupancy

    calls = []
    original = registers.estimate_kernel

    def counting(*a, **kw):
        calls.append(a[1].name)
        return original(*a, **kw)

    monkeypatch.setattr(registers, "estimate_kernel", counting)
    monkeypatch.setattr(registers, "_SHARED", type(registers._SHARED)())
    light = """
__global__ void __launch_bounds__(256) light(float* out, const float* in) {
    __shared__ float rows[256];
    rows[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = rows[255 - threadIdx.x];
}
"""
    assert lint(light, "k.cu", ("SL505",)) == [] and calls == []
    heavy = light.replace("rows[256]", "rows[12288]").replace("light", "heavy")
    (d,) = lint(heavy, "k.cu", ("SL505",))
    assert set(calls) == {"heavy"} and d.impact.occupancy_before < 0.5 <= d.impact.occupancy_after
    # the ceiling is the estimate's occupancy with registers left out
    model = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", heavy.encode())))
    (f,) = model.kernels
    target = get_target("sm_80")
    est = registers.cached_estimate(model, f, target)
    ceiling = registers.occupancy_ceiling(model, f, target)
    assert ceiling == occupancy(target, est.threads_per_group, None, est.shared_bytes)
    assert ceiling.occupancy >= est.occupancy_value


def test_sl505_skip_covers_every_register_count_when_the_group_size_is_unknown(monkeypatch):
    """With no group size known the estimate is a best case over group sizes, which the register
    count shapes: the walk is skipped only when no count up to the cap gives a finding, and the
    estimate's occupancy is always one of those ``register_occupancies`` lists."""
    import shaderlint.estimate.registers as registers
    from shaderlint.estimate.occupancy import THREADGROUP_MEMORY

    calls = []
    original = registers.estimate_kernel

    def counting(*a, **kw):
        calls.append(a[1].name)
        return original(*a, **kw)

    monkeypatch.setattr(registers, "estimate_kernel", counting)
    monkeypatch.setattr(registers, "_SHARED", type(registers._SHARED)())
    free = """
__global__ void free_size(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0f;
}
"""
    assert lint(free, "k.cu", ("SL505",)) == [] and calls == []
    staged = """
__global__ void staged(float* out, const float* in) {
    __shared__ float rows[50000];
    rows[threadIdx.x] = in[blockIdx.x * 50000 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x] = rows[threadIdx.x * 3];
}
"""
    (d,) = lint(staged, "k.cu", ("SL505",))
    assert "staged" in calls and "threadgroup memory" in d.message
    target = get_target("sm_80")
    for src in (free, staged):
        model = build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", src.encode())))
        (f,) = model.kernels
        est = registers.cached_estimate(model, f, target)
        threads, shared, cap = registers.occupancy_shape(model, f, target)
        assert threads is None and est.occupancy_is_bound and shared == est.shared_bytes
        possible = registers.register_occupancies(target, None, shared, cap)
        seen = [(o.threads_per_group, o.occupancy, o.limiter, o.limits) for o in possible]
        o = est.occupancy
        assert (o.threads_per_group, o.occupancy, o.limiter, o.limits) in seen
    assert any(o.limiter == THREADGROUP_MEMORY for o in possible)


OCCUPANCY_ONLY = [  # (path, source, occupancy the impact shows: decided or not by registers)
    ("k.metal", """
#include <metal_stdlib>
using namespace metal;
[[max_total_threads_per_threadgroup(64)]]
kernel void tile(device float* out [[buffer(0)]], uint tid [[thread_position_in_threadgroup]],
                 uint gid [[thread_position_in_grid]]) {
    threadgroup float buf[4096];
    buf[tid] = out[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = buf[(tid + 1) & 63] * 2.0f;
}
""", 0.0625),  # threadgroup memory limits it at any register count
    ("k.metal", """
#include <metal_stdlib>
using namespace metal;
kernel void scale(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) { out[gid] *= 2.0f; }
""", None),
    ("k.comp", """
#version 450
layout(local_size_x = 64) in;
shared float s[8192];
layout(std430, binding = 0) buffer B { float d[]; };
void main() {
    s[gl_LocalInvocationID.x] = d[gl_GlobalInvocationID.x];
    barrier();
    d[gl_GlobalInvocationID.x] = s[(gl_LocalInvocationID.x + 1) & 63];
}
""", 0.125),
    ("k.comp", """
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float d[]; };
void main() { d[gl_GlobalInvocationID.x] *= 2.0; }
""", None),
]


def test_occupancy_only_impacts_skip_the_walk_where_no_interval_is_measured(monkeypatch):
    """A finding whose rule has no what-if shows the occupancy alone, where the estimate's uncertainty
    cannot change it. Where no interval was measured (Metal, GLSL) that is the same answer at 1 register
    and at the register cap: it is found from the group size, threadgroup memory and cap without walking
    the kernel, and is the one the full estimate gives. CUDA (an interval around the estimate, unseen
    calls widen it) still walks."""
    from shaderlint.diagnostics import Impact
    from shaderlint.estimate import liveness, registers
    from shaderlint.estimate.targets import default_target

    class Marker(Rule):
        code = "SL999"
        name = "marker"
        languages = frozenset({"cuda", "metal", "glsl"})

    walks = []
    run = liveness.Walker.run
    monkeypatch.setattr(liveness.Walker, "run", lambda self: walks.append(self.f.name) or run(self))
    monkeypatch.setattr(registers, "_SHARED", type(registers._SHARED)())  # no estimate from another test

    def model(path, src):
        return build_model(FRONT_ENDS["metal" if path.endswith(".metal") else "glsl" if path.endswith(".comp")
                                     else "cuda"].parse(Source(path, src.encode())))

    for path, src, shown, name in [c + (None,) for c in OCCUPANCY_ONLY] + [("k.cu", SMALL_CUDA, None, "sm_80"),
                                                                           ("k.cu", SMALL_CUDA, None, "sm_86")]:
        m = model(path, src)
        f = m.kernels[0]
        target = get_target(name) if name else default_target(m.language)  # (sm_86: no interval measured)
        walks.clear()
        fd = Finding(f.body.start_byte + 5, f.body.start_byte + 6, "x", kernel=f.name)
        ((_, out),) = whatif.attach_impacts(m, [(Marker, fd)], target)
        assert walks == ([f.name] if m.language == "cuda" else [])
        full = registers.estimate_kernel(m, f, target, facts=f.facts)  # the walk's answer
        want = round(full.occupancy_value, 4) if whatif.occupancy_decided(m, target, full) else None
        assert out.impact == Impact(target=target.name, occupancy_before=want)
        if m.language != "cuda":
            assert want == shown
