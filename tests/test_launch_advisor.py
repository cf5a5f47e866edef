"""The launch-configuration advisor: :mod:`shaderlint.estimate.launch` and ``report --suggest-launch``.

The seeds' numbers (issue 20, SPEC "Sources"): a 13×13 workgroup on sm_75 is 169 invocations in
6 warps with 23 idle lanes, 5 groups per SM, 30 of 32 warps = 93.75 %; 1920×1080 threads in 16×16
threadgroups are 120×68 groups.
"""

from __future__ import annotations

import copy
import json
import math
import random

import jsonschema
import pytest

from shaderlint.estimate.launch import MARGIN, as_dims, describe, dispatched_space, suggest
from shaderlint.estimate.targets import TARGETS, get_target
from shaderlint.report import main
from tests.test_report import SCHEMA as REPORT_SCHEMA

SM75 = get_target("sm_75")
SM80 = get_target("sm_80")

FIGURES = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "required": ["shape", "threads", "simd_groups", "idle_lanes", "fits", "groups_per_core", "occupancy", "limiter",
                 "groups", "threads_launched", "threads_needed", "edge_waste"],
    "properties": {
        "shape": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 3, "maxItems": 3},
        "threads": {"type": "integer", "minimum": 1},
        "simd_groups": {"type": "integer", "minimum": 1},
        "idle_lanes": {"type": "integer", "minimum": 0},
        "fits": {"type": "boolean"},
        "groups_per_core": {"type": "integer", "minimum": 0},
        "occupancy": {"type": "number", "minimum": 0, "maximum": 1},
        "limiter": {"type": ["string", "null"]},
        "groups": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 1}},
        "threads_launched": {"type": ["integer", "null"], "minimum": 1},
        "threads_needed": {"type": ["integer", "null"], "minimum": 1},
        "edge_waste": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    },
}
LAUNCH = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "required": ["target", "iteration_space", "iteration_space_source", "current", "current_is_upper_bound",
                 "suggested", "same_as_current", "reasons"],
    "properties": {
        "target": {"type": "string"},
        "iteration_space": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 1}},
        "iteration_space_source": {"enum": ["grid-size", "launch", None]},
        "current": FIGURES,
        "current_is_upper_bound": {"type": "boolean"},
        "suggested": FIGURES,
        "same_as_current": {"type": "boolean"},
        "reasons": {"type": "array", "items": {"type": "string"}},
    },
}
#: The report's stable row with the optional "launch" object of --suggest-launch.
SCHEMA = copy.deepcopy(REPORT_SCHEMA)
SCHEMA["items"]["properties"]["launch"] = LAUNCH

GLSL_13 = """#version 450
layout(local_size_x = 13, local_size_y = 13) in;
layout(rgba8, binding = 0) uniform image2D img;
void main() { ivec2 p = ivec2(gl_GlobalInvocationID.xy); imageStore(img, p, imageLoad(img, p) * 0.5); }
"""

METAL = """#include <metal_stdlib>
using namespace metal;
// shaderlint: threadgroup-size=16x16
// shaderlint: grid-size=1920x1080
kernel void grade(texture2d<half, access::read_write> frame [[texture(0)]],
                  uint2 gid [[thread_position_in_grid]]) {
    frame.write(frame.read(gid) * 0.9h, gid);
}

// shaderlint: grid-size=1920x1080
kernel void unsized(device float* d [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) { d[gid.y * 1920 + gid.x] = 1.0f; }

kernel void unknown(device float* d [[buffer(0)]], uint gid [[thread_position_in_grid]]) { d[gid] = 1.0f; }

vertex float4 vs(uint vid [[vertex_id]]) { return float4(0); }
"""

CUDA = """
__global__ void add(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }
__global__ void __launch_bounds__(128) bounded(float* a) { a[threadIdx.x] = 0; }
__global__ void ok(float* a) { a[blockIdx.x * 256 + threadIdx.x] = 0; }
const int M = 1000;
__global__ void tail(float* x) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < M) x[i] = 0; }
__global__ void rows(float* x) { x[blockIdx.y * 64 + threadIdx.x] = 0; }
__global__ void rows2d(float* x) { x[threadIdx.y * 160 + blockIdx.x * 16 + threadIdx.x] = 0; }
void go(float* a) {
    add<<<10, 100>>>(a, 1000); ok<<<4096, 256>>>(a); tail<<<(M + 127) / 128, 128>>>(a);
    dim3 g((M + 31) / 32, 7), blk(32, 4);
    rows<<<g, blk>>>(a);
    rows2d<<<10, dim3(16, 16)>>>(a);
}
"""


def report_json(capsys, *argv) -> list[dict]:
    assert main([*argv, "--format", "json", "--suggest-launch"]) == 0
    rows = json.loads(capsys.readouterr().out)
    jsonschema.validate(rows, SCHEMA)
    return rows


# ---- the seeds -------------------------------------------------------------------------------------


def test_13x13_workgroup_on_sm_75():
    fig = describe((13, 13), None, SM75, registers=32)
    assert (fig.threads, fig.simd_groups, fig.idle_lanes) == (169, 6, 23)
    assert fig.groups_per_core == 5 and fig.occupancy == 0.9375 and fig.limiter == "group-size"
    assert fig.groups is None and fig.edge_waste is None  # no iteration space: no grid figures
    s = suggest(None, SM75, 32, 0, (13, 13))
    assert s.figures.shape == (32, 4, 1) and not s.same_as_current
    assert (s.figures.simd_groups, s.figures.idle_lanes, s.figures.groups_per_core, s.figures.occupancy) == (4, 0, 8, 1.0)
    assert any("idle lanes per group 23 -> 0" in r for r in s.reasons)
    assert any("93.75 % -> 100.00 %" in r for r in s.reasons)


def test_13x13_through_the_report(tmp_path, capsys):
    (tmp_path / "blur.comp").write_text(GLSL_13)
    [row] = report_json(capsys, str(tmp_path), "--target", "sm_75")
    cur, sug = row["launch"]["current"], row["launch"]["suggested"]
    assert cur["shape"] == [13, 13, 1] and cur["threads"] == 169 and cur["simd_groups"] == 6
    assert cur["idle_lanes"] == 23 and cur["groups_per_core"] == 5 and cur["occupancy"] == 0.9375
    assert row["launch"]["iteration_space"] is None and cur["groups"] is None
    assert sug["shape"] == [32, 4, 1] and sug["idle_lanes"] == 0
    assert main([str(tmp_path), "--target", "sm_75", "--suggest-launch"]) == 0
    out = capsys.readouterr().out
    assert "current   13×13     169 threads = 6 warps, 23 idle lanes; 5 groups per SM, occupancy ~93.75%" in out
    assert "suggested 32×4      128 threads = 4 warps, 0 idle lanes; 8 groups per SM" in out


def test_1920x1080_in_16x16_groups():
    fig = describe((16, 16), (1920, 1080), SM75, registers=32)
    assert fig.groups == (120, 68, 1) and fig.total_groups == 8160
    assert fig.threads_needed == 1920 * 1080 and fig.threads_launched == 1920 * 1088
    assert fig.edge_waste == pytest.approx(15360 / (1920 * 1088))
    assert (fig.simd_groups, fig.idle_lanes, fig.groups_per_core, fig.occupancy) == (8, 0, 4, 1.0)
    s = suggest((1920, 1080), SM75, 32, 0, (16, 16))
    # 32 wide (a warp spans one row segment), trimmed to divide 1080: no thread launched past the edge.
    assert s.figures.shape == (32, 8, 1) and s.figures.groups == (60, 135, 1)
    assert s.figures.threads_launched == s.figures.threads_needed == 2073600 and s.figures.edge_waste == 0
    assert s.figures.occupancy == 1.0 and not s.same_as_current
    assert any("coalesced" in r for r in s.reasons)
    assert any("threads launched 2088960 -> 2073600" in r for r in s.reasons)


def test_1920x1080_through_the_report(tmp_path, capsys):
    (tmp_path / "grade.metal").write_text(METAL)
    rows = {r["kernel"]: r for r in report_json(capsys, str(tmp_path), "--target", "sm_75")}
    grade = rows["grade"]["launch"]
    assert grade["iteration_space"] == [1920, 1080, 1] and grade["iteration_space_source"] == "grid-size"
    assert grade["current"]["groups"] == [120, 68, 1] and grade["current"]["threads_launched"] == 2088960
    assert grade["suggested"]["shape"] == [32, 8, 1] and grade["suggested"]["groups"] == [60, 135, 1]
    # No group size but a known iteration space: a suggestion only.
    unsized = rows["unsized"]["launch"]
    assert unsized["current"] is None and unsized["suggested"]["shape"] == [32, 8, 1]
    # Neither: no advice; a vertex function has no groups.
    assert rows["unknown"]["launch"] is None and rows["vs"]["launch"] is None
    assert main([str(tmp_path), "--target", "sm_75", "--suggest-launch"]) == 0
    out = capsys.readouterr().out
    assert "120×68 groups, 2088960 threads for 2073600 (0.74% edge waste)" in out
    assert "60×135 groups, 2073600 threads for 2073600 (no edge waste)" in out
    assert "group shape and iteration space unknown" in out and "vertex function has no compute groups" in out


# ---- more shapes ---------------------------------------------------------------------------------------


def test_one_dimensional_launch():
    fig = describe((100,), (1000,), SM80, registers=16)
    assert (fig.simd_groups, fig.idle_lanes, fig.groups, fig.threads_launched) == (4, 28, (10, 1, 1), 1000)
    s = suggest((1000,), SM80, 16, 0, (100,))
    # Stays 1-D, a warp multiple; 128 is the one nearest 100 among those with the most useful lanes.
    assert s.figures.shape == (128, 1, 1) and s.figures.groups == (8, 1, 1)
    assert s.figures.threads_launched == 1024 and s.figures.idle_lanes == 0
    assert s.figures.lane_efficiency > fig.lane_efficiency  # 1000/1024 against 1000/1280
    assert any("threads launched 1000 -> 1024" in r for r in s.reasons)  # the cost is said too


def test_launches_of_one_template_instance_say_nothing_of_another(tmp_path, capsys):
    from tests.test_report import CUDA as TEMPLATES  # tile<4><<<16, 128>>>; tile<32> is never launched

    (tmp_path / "t.cu").write_text(TEMPLATES)
    rows = {r["kernel"]: r for r in report_json(capsys, str(tmp_path))}
    assert rows["tile<4>"]["launch"]["iteration_space"] == [2048, 1, 1]
    assert rows["tile<32>"]["launch"]["iteration_space"] is None


def test_iteration_space_from_constant_launches(tmp_path, capsys):
    (tmp_path / "k.cu").write_text(CUDA)
    rows = {r["kernel"]: r for r in report_json(capsys, str(tmp_path))}
    add = rows["add"]["launch"]
    assert add["iteration_space"] == [1000, 1, 1] and add["iteration_space_source"] == "launch"
    assert add["current"]["shape"] == [100, 1, 1] and add["suggested"]["shape"] == [128, 1, 1]
    # __launch_bounds__(128): an upper bound, and the suggestion never exceeds it.
    bounded = rows["bounded"]["launch"]
    assert bounded["current_is_upper_bound"] and bounded["suggested"]["threads"] <= 128
    assert rows["ok"]["launch"]["same_as_current"]
    # A round-up grid covers the work it rounds: 1000 threads, not the 1024 launched.
    tail = rows["tail"]["launch"]
    assert tail["iteration_space"] == [1000, 1, 1] and tail["current"]["threads_launched"] == 1024
    assert tail["current"]["edge_waste"] == round(24 / 1024, 6)
    assert rows["rows"]["launch"]["iteration_space"] == [1000, 28, 1]  # 7 groups of 4 rows in y
    assert rows["rows2d"]["launch"]["iteration_space"] == [160, 16, 1]  # a 1-D grid of 16×16 blocks


def test_a_declared_bound_caps_the_threads_not_the_shape(tmp_path, capsys):
    (tmp_path / "img.metal").write_text(
        "#include <metal_stdlib>\nusing namespace metal;\n// shaderlint: grid-size=1920x1080\n"
        "[[max_total_threads_per_threadgroup(1024)]]\n"
        "kernel void img(device float* d [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) "
        "{ d[gid.y * 1920 + gid.x] = 1.0f; }\n")
    [row] = report_json(capsys, str(tmp_path))
    launch = row["launch"]
    assert launch["current_is_upper_bound"] and launch["current"]["shape"] == [1024, 1, 1]
    sug = launch["suggested"]
    assert sug["threads"] <= 1024 and sug["shape"][1] > 1 and sug["edge_waste"] == 0  # 2-D like the grid
    s = suggest(None, SM80, 32, 0, (256,), current_is_upper_bound=True)
    assert s.figures.threads <= 256


def test_already_optimal_shape_is_kept_and_said_so(tmp_path, capsys):
    s = suggest((1920, 1080), SM75, 32, 0, (32, 8))
    assert s.same_as_current and s.figures.shape == (32, 8, 1) and s.reasons == ()
    # A big 1-D launch: 64 threads would waste 64 fewer lanes of a million (< 0.1 %): 256 stays.
    s = suggest((1_000_000,), SM80, 32, 0, (256,))
    assert s.same_as_current
    # A whole iteration space in one group: nothing uses fewer lanes for it.
    s = suggest((13, 13), SM75, 32, 0, (13, 13))
    assert s.same_as_current and s.figures.groups == (1, 1, 1) and s.figures.idle_lanes == 23
    # 4×4×32 has the same figures, threads and x/y proportions (and a smaller x): the current shape wins the tie.
    assert describe((4, 4, 32), (8, 8, 64), SM80, 32).score == describe((8, 8, 8), (8, 8, 64), SM80, 32).score
    assert suggest((8, 8, 64), SM80, 32, 0, (8, 8, 8)).same_as_current
    (tmp_path / "k.cu").write_text(CUDA)
    assert main([str(tmp_path / "k.cu"), "--suggest-launch"]) == 0
    assert "suggested the current shape: already the best by the launch rules" in capsys.readouterr().out


def test_small_gains_do_not_replace_the_current_shape():
    apple = get_target("apple-m1")
    # 16×16 with 22 estimated registers: 32×4 would gain 4.2 points of occupancy (66.67 -> 70.83 %), within
    # the estimate's noise; a kernel with threadgroup memory (a tiled GEMM) is not reshaped for coalescing alone.
    s = suggest(None, apple, 22, 2048, (16, 16))
    assert s.same_as_current and s.figures.occupancy == pytest.approx(2 / 3)
    # Without threadgroup memory the fit rule still moves x to a SIMD multiple, at no loss: 32×8, not 32×4.
    s = suggest(None, apple, 22, 0, (16, 16))
    assert s.figures.shape == (32, 8, 1) and s.figures.score == describe((16, 16), None, apple, 22).score
    # 256 → 128 on the same estimate is not suggested either (no x to fix).
    assert suggest(None, apple, 22, 0, (256,)).same_as_current
    # A real gain is: 64 threads held to 12.5 % by 32 KB of shared memory per group on sm_80.
    s = suggest(None, SM80, 22, 32768, (64,))
    assert s.figures.shape == (512, 1, 1) and s.figures.occupancy == 1.0


def test_unknown_iteration_space_and_unknown_shape():
    assert suggest(None, SM75, 32, 0, None) is None
    s = suggest(None, SM80, 32, 0, (256,))
    assert s.same_as_current and s.figures.groups is None and s.figures.threads_launched is None
    fig = describe((256,), None, SM80, 32)
    assert fig.iteration_space is None and fig.edge_waste is None and fig.total_groups is None


def test_dispatched_space_of_host_launches():
    # Vulkan: vkCmdDispatch(ceil(1920 / 16), ceil(1080 / 16), 1) of a 16×16 workgroup; Metal dispatchThreads counts threads.
    assert dispatched_space((120, 68), (16, 16), "threadgroups") == (1920, 1088, 1)
    assert dispatched_space((1920, 1080), (16, 16), "threads") == (1920, 1080, 1)
    assert dispatched_space((1920, 1080), None, "threads") == (1920, 1080, 1)
    assert dispatched_space((120, 68), None, "threadgroups") is None
    assert dispatched_space((120, 68), (16, 16), None) is None
    assert dispatched_space(None, (16, 16), "threadgroups") is None
    assert dispatched_space((0, 5), (16, 16), "threadgroups") is None


def test_report_without_the_option_has_no_launch_key(tmp_path, capsys):
    (tmp_path / "k.cu").write_text(CUDA)
    assert main([str(tmp_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    jsonschema.validate(rows, REPORT_SCHEMA)  # additionalProperties: false
    assert all("launch" not in r for r in rows)
    assert main([str(tmp_path)]) == 0
    assert "launch on" not in capsys.readouterr().out


# ---- the rules hold, and nothing raises ---------------------------------------------------------------


def test_suggestions_keep_the_rules_on_every_target():
    rng = random.Random(20)
    extents = [1, 2, 3, 7, 13, 31, 32, 33, 100, 640, 1000, 1080, 1920, 4097, 100_000]
    for name, target in sorted(TARGETS.items()):
        w = target.simd_width
        for _ in range(40):
            rank = rng.choice((1, 2, 3))
            space = tuple(rng.choice(extents) for _ in range(rank)) if rng.random() < 0.8 else None
            current = tuple(rng.choice((1, 4, 8, 13, 16, 32, 64, 100, 256)) for _ in range(rank)) \
                if rng.random() < 0.8 else None
            regs = rng.choice((None, 8, 32, 64, 128))
            shared = rng.choice((0, 1024, 16384))
            s = suggest(space, target, regs, shared, current)
            if space is None and current is None:
                assert s is None
                continue
            if s is None:
                continue
            f = s.figures
            assert not f.problems and f.occupancy > 0, (name, space, current)
            assert f.threads <= target.max_threads_per_group
            if s.same_as_current:
                assert f.shape == as_dims(current)
                continue
            sp = as_dims(space) if space else None
            keep = len(current) if current else rank
            assert all(d == 1 for d in f.shape[keep:]), "the dimensionality is kept"
            covers = sp is not None and f.shape == sp
            assert f.threads % w == 0 or covers, "whole SIMD groups"
            if sp is not None:
                assert f.shape[0] <= max(sp[0], -(-sp[0] // w) * w), "x fitted: at most the extent rounded up to W"
                assert f.shape[1] <= sp[1] and f.shape[2] <= sp[2], "trimmed to the iteration space"
                if sp[0] >= w:
                    assert f.shape[0] % w == 0, "x a multiple of the SIMD width"
            if current is not None:
                cur = as_dims(current)
                for i in (1, 2):
                    if cur[i] > 1 and (sp is None or sp[i] > 1):
                        assert f.shape[i] > 1, "a dimension the group uses stays in use"
                now = describe(current, space, target, regs, shared)
                if now.fits and now.occupancy > 0:
                    assert f.score >= now.score, "never worse by rule a"
                    fit_only = now.shape[0] % w and f.shape[0] % w == 0 and not shared and (sp is None or sp[0] >= w)
                    assert f.score - now.score >= MARGIN or fit_only, "worth the change (rule g)"


@pytest.mark.parametrize("shape", [0, -3, (0, 4), (4, -1), "16x16", 3.5, True, (1, 2, 3, 4), (), None, [2 ** 50],
                                   (float("nan"),), object()])
def test_absurd_shapes_give_none(shape):
    assert describe(shape, (100,), SM75) is None
    s = suggest((100,), SM75, 32, 0, shape)  # an unusable current shape is ignored, not fatal
    assert s is not None and s.figures.threads % 32 == 0


@pytest.mark.parametrize("registers, shared", [(float("nan"), 0), (-1, -5), ("x", "y"), (None, None), (1e9, 0),
                                               (300, 0), (32, 10 ** 12), (float("inf"), 0)])
def test_absurd_resources_never_raise(registers, shared):
    fig = describe((16, 16), (1920, 1080), SM75, registers, shared)
    assert fig is not None and 0 <= fig.occupancy <= 1
    s = suggest((1920, 1080), SM75, registers, shared, (16, 16))
    if registers in (300, 1e9) or shared == 10 ** 12:  # no group fits a core: nothing to suggest
        assert s is None and fig.occupancy == 0
    else:
        assert s is not None


def test_shapes_over_the_limits_and_huge_spaces():
    fig = describe((2048,), None, SM75)
    assert not fig.fits and fig.occupancy == 0 and fig.problems
    s = suggest(None, SM75, 32, 0, (2048,))
    assert s.figures.threads <= 1024 and any("cannot launch" in r for r in s.reasons)
    fig = describe((4, 4, 128), None, SM75)  # z over 64
    assert not fig.fits and "z = 128 exceeds 64" in fig.problems[0]
    big = describe((256,), (10 ** 12,), SM80, 32)
    assert big.groups == (math.ceil(10 ** 12 / 256), 1, 1)
    assert suggest((10 ** 12, 10 ** 12, 10 ** 12), SM80, 32, 0, (8, 8, 8)).figures.threads % 32 == 0
    assert describe((32,), (100,), None) is None and suggest((100,), None) is None
    assert suggest((100,), SM75, 32, 0, (32,), max_threads=-4).figures is not None
