"""RADV measurement: SPIR-V reflection and worker handling everywhere, the driver where it is installed.

The driver tests need ``glslang-tools``, ``libvulkan1`` and ``mesa-vulkan-drivers``
(``.ci/install-system-deps`` installs them). Without them they skip, except under
``.ci/run`` on a machine where that script can install them: there
``SHADERLINT_REQUIRE_RADV=1`` makes a missing package a failure, so CI cannot pass
by skipping. Figures asserted exactly are those of Mesa 22.3.6 (Debian 12), and
only where they follow from the hardware's allocation rules.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import textwrap

import jsonschema
import pytest

from shaderlint.estimate import radv
from shaderlint.estimate.radv import (
    FAMILIES,
    Job,
    RadvResult,
    check_family,
    compile_spirv,
    measure_radv,
    measure_spirv,
    unavailable_reason,
)
from shaderlint.estimate.spirv import (
    COMBINED_IMAGE_SAMPLER,
    RUNTIME_ARRAY_COUNT,
    STORAGE_BUFFER,
    STORAGE_IMAGE,
    STORAGE_TEXEL_BUFFER,
    UNIFORM_BUFFER,
    UNIFORM_TEXEL_BUFFER,
    reflect,
)
from shaderlint.report import main as report_main
from tests.test_report import SCHEMA


def needs_radv() -> None:
    """Skip (or, under .ci/run, fail) when the RADV packages are missing."""
    missing = unavailable_reason()
    if missing:
        if os.environ.get("SHADERLINT_REQUIRE_RADV") == "1":
            pytest.fail(f"RADV {missing}, and SHADERLINT_REQUIRE_RADV=1 (.ci/run on a machine where "
                        ".ci/install-system-deps can install it): see that script's output")
        pytest.skip(f"RADV {missing} (.ci/install-system-deps installs glslang-tools, libvulkan1, "
                    "mesa-vulkan-drivers)")


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    """Every test starts with an empty memory cache and its own disk cache."""
    monkeypatch.setattr(radv, "_MEMORY", {})
    monkeypatch.setattr(radv, "_SPIRV_MEMORY", {})
    monkeypatch.setattr(radv, "_SPIRV_FAILED", {})
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))


# ---- a tiny SPIR-V assembler for tests that need no glslang ------------------------------------
def _string(text: str) -> list[int]:
    raw = text.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def assemble(*instructions: tuple, bound: int = 64) -> bytes:
    words = [0x07230203, 0x00010500, 0, bound, 0]
    for op, *operands in instructions:
        flat: list[int] = []
        for o in operands:
            flat.extend(_string(o) if isinstance(o, str) else [o])
        words += [(len(flat) + 1) << 16 | op, *flat]
    return struct.pack(f"<{len(words)}I", *words)


def module(local_x: int = 8) -> bytes:
    """A compute entry point with a storage buffer at set 1 binding 3 and a 32-byte push block."""
    return assemble(
        (15, 5, 1, "main"),                 # OpEntryPoint GLCompute %1 "main"
        (16, 1, 17, local_x, 8, 1),         # OpExecutionMode %1 LocalSize x 8 1
        (71, 10, 33, 3), (71, 10, 34, 1),   # %10: Binding 3, DescriptorSet 1
        (71, 5, 2),                         # %5 Block
        (72, 5, 0, 35, 0), (72, 5, 1, 35, 16),  # member offsets 0 and 16
        (22, 2, 32),                        # %2 float
        (23, 3, 2, 4),                      # %3 vec4
        (30, 5, 2, 3),                      # %5 struct { float; vec4; }
        (32, 6, 12, 5),                     # %6 pointer StorageBuffer
        (59, 6, 10, 12),                    # %10 variable
        (32, 7, 9, 5),                      # %7 pointer PushConstant
        (59, 7, 11, 9),                     # %11 variable
    )


def test_reflect_hand_assembled_module() -> None:
    r = reflect(module())
    assert r.ok, r.error
    assert (r.entry_point, r.local_size, r.push_constant_bytes) == ("main", (8, 8, 1), 32)
    assert r.sets() == [[], [(3, STORAGE_BUFFER, 1)]]


def test_reflect_reads_big_endian_modules() -> None:
    data = module()
    swapped = b"".join(data[i:i + 4][::-1] for i in range(0, len(data), 4))
    assert reflect(swapped) == reflect(data)


def test_reflect_never_raises_on_damaged_input() -> None:
    data = module()
    assert not reflect(b"").ok and not reflect(b"\x00" * 40).ok and not reflect(data[:-2]).ok
    for cut in range(0, len(data), 4):
        reflect(data[:cut])  # truncated anywhere: a result, not an exception
    for i in range(20, len(data), 4):
        for word in (0, 0xFFFFFFFF, 0x00010000):
            reflect(data[:i] + struct.pack("<I", word) + data[i + 4:])


def test_reflect_rejects_modules_without_a_compute_entry_point() -> None:
    fragment = assemble((15, 4, 1, "main"), (16, 1, 7))  # Fragment, OriginUpperLeft
    r = reflect(fragment)
    assert not r.ok and "GLCompute" in r.error


# ---- worker handling with a stand-in worker (no driver) ----------------------------------------
FAKE_WORKER = textwrap.dedent("""
    import json, os, sys, time
    request = json.loads(sys.stdin.read())
    print(json.dumps({"device": "Fake GPU", "driver_info": "Fake 1.0"}), flush=True)
    for job in request["jobs"]:
        if job["id"] == 1:
            os.abort()                       # a driver abort on this shader
        if job["id"] == 3:
            time.sleep(60)                   # a driver that hangs
        print(json.dumps({"id": job["id"], "executables": [{"name": "cs", "subgroup_size": 64,
              "statistics": {"VGPRs": 8 * (job["id"] + 1), "SGPRs": 16, "Subgroups per SIMD": 20}}]}), flush=True)
""")


def test_a_crash_or_hang_costs_only_that_shader(monkeypatch, tmp_path) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text(FAKE_WORKER)
    monkeypatch.setattr(radv, "_WORKER", str(worker))
    monkeypatch.setattr(radv, "unavailable_reason", lambda: None)
    jobs = [Job(module(local_x=i + 1), "navi21") for i in range(5)]
    results = measure_spirv(jobs, timeout=3, cache_dir=None)
    assert [r.vgprs for r in results] == [8, None, 24, None, 40]
    assert "crashed" in results[1].error and "signal 6" in results[1].error
    assert "did not finish within 3 s" in results[3].error
    assert results[4].ok and results[4].device == "Fake GPU" and results[4].local_size == (5, 8, 1)
    # navi21 is gfx10.3: RADV's 20 subgroups in wave64 are 10 waves per SIMD.
    assert (results[0].subgroups_per_simd, results[0].waves_per_simd) == (20, 10)


def test_results_are_cached_by_content(monkeypatch, tmp_path) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text(FAKE_WORKER)
    monkeypatch.setattr(radv, "_WORKER", str(worker))
    monkeypatch.setattr(radv, "unavailable_reason", lambda: None)
    first = measure_spirv([Job(module(), "navi21")], timeout=10)[0]
    assert first.ok and not first.cached
    assert list((tmp_path / "cache" / "radv").rglob("*.json"))
    monkeypatch.setattr(radv, "_MEMORY", {})  # a new process: the disk entry answers
    worker.write_text("import sys; sys.exit(3)\n")
    again = measure_spirv([Job(module(), "navi21")], timeout=10)[0]
    assert again.cached and again.vgprs == first.vgprs
    other = measure_spirv([Job(module(), "navi21", subgroup_size=32)], timeout=10)[0]
    assert not other.ok and "crashed while starting (exit status 3)" in other.error  # another key: compiled again


def test_unknown_family_is_refused_before_the_driver_aborts() -> None:
    assert check_family("NAVI21") == "navi21"
    for name in ("gfx1030", "gfx900", "gfx1103", "sienna_cichlid", ""):
        assert check_family(name) is None
        assert "unknown RADV family" in measure_radv("void main(){}", name).error


def test_result_json_round_trip() -> None:
    r = RadvResult(family="gfx1100", wave_size=32, vgprs=144, subgroups_per_simd=10, local_size=(64, 1, 1))
    back = RadvResult.from_json(json.loads(json.dumps(r.to_json())))
    assert back == r and back.waves_per_simd == 10  # wave32: no doubling to undo


# ---- the driver ---------------------------------------------------------------------------------
SAXPY = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float data[]; };
layout(push_constant) uniform P { float a; uint n; } pc;
void main() { uint i = gl_GlobalInvocationID.x; if (i < pc.n) data[i] = pc.a * data[i]; }
"""

# 34 vec4 loads kept live: about 140 VGPRs.
HEAVY = "\n".join(
    ["#version 450", "layout(local_size_x = 64) in;", "layout(std430, binding = 0) buffer B { vec4 d[]; };",
     "void main() {", "uint i = gl_GlobalInvocationID.x;"]
    + [f"vec4 v{k} = d[i * 34 + {k}];" for k in range(34)]
    + ["vec4 s = vec4(0);"]
    + [f"s += v{a} * v{b};" for a in range(34) for b in range(a + 1, min(a + 4, 34))]
    + ["d[i] = s;", "}"]
)

KINDS = """#version 450
layout(local_size_x_id = 0, local_size_y = 4) in;
layout(constant_id = 0) const int WX = 16;
layout(std430, set = 0, binding = 0) buffer S { float s[]; };
layout(std140, set = 0, binding = 1) uniform U { vec4 u; };
layout(set = 1, binding = 0) uniform sampler2D tex[4];
layout(set = 1, binding = 2, rgba8) uniform writeonly image2D img;
layout(set = 2, binding = 0) uniform samplerBuffer tb;
layout(set = 2, binding = 1, r32f) uniform imageBuffer ib;
layout(push_constant) uniform P { vec3 a; float b; mat4 m; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  s[i] = u.x + texture(tex[1], vec2(0.5)).x + texelFetch(tb, int(i)).x + imageLoad(ib, int(i)).x + pc.b + pc.m[3][3];
  imageStore(img, ivec2(i, 0), vec4(1));
}
"""


def test_reflection_of_glslang_output() -> None:
    needs_radv()
    spirv, log = compile_spirv(KINDS)
    assert spirv is not None, log
    r = reflect(spirv)
    assert r.ok and r.entry_point == "main"
    # local_size_x_id = 0 shares id 0 with WX = 16: the size an application specializing WX gets.
    assert r.local_size == (16, 4, 1) and r.specialization == {0: 16} and not r.local_size_unknown
    alone, _ = compile_spirv(KINDS.replace("layout(constant_id = 0) const int WX = 16;\n", ""))
    ra = reflect(alone)
    assert ra.local_size == (1, 4, 1) and ra.specialization == {} and ra.local_size_unknown  # no default: 1
    assert r.push_constant_bytes == 80  # vec3 + float + mat4
    assert r.sets() == [[(0, STORAGE_BUFFER, 1), (1, UNIFORM_BUFFER, 1)],
                        [(0, COMBINED_IMAGE_SAMPLER, 4), (2, STORAGE_IMAGE, 1)],
                        [(0, UNIFORM_TEXEL_BUFFER, 1), (1, STORAGE_TEXEL_BUFFER, 1)]]
    unsized, _ = compile_spirv("#version 450\n#extension GL_EXT_nonuniform_qualifier : require\n"
                               "layout(local_size_x = 1) in;\nlayout(binding = 0) uniform sampler2D t[];\n"
                               "layout(std430, binding = 1) buffer O { vec4 o; };\n"
                               "void main() { o = texture(t[nonuniformEXT(int(o.x))], vec2(0)); }\n")
    assert unsized is not None
    ru = reflect(unsized)
    assert ru.sets()[0][0] == (0, COMBINED_IMAGE_SAMPLER, RUNTIME_ARRAY_COUNT) and ru.notes


def test_specialized_workgroup_size_is_compiled() -> None:
    needs_radv()
    shader = ("#version 450\nlayout(local_size_x_id = 0) in;\nlayout(constant_id = 0) const uint BLOCK = 64;\n"
              "layout(std430, binding = 0) buffer B { float d[]; };\nshared float s[BLOCK];\n"
              "void main() { uint i = gl_LocalInvocationID.x; s[i] = d[i]; barrier(); d[i] = s[BLOCK - 1 - i]; }\n")
    r = measure_radv(shader, "navi21", subgroup_size=64)
    assert r.ok, r.error
    assert r.local_size == (64, 1, 1) and r.threads_per_group == 64
    one = measure_radv(shader.replace("layout(constant_id = 0) const uint BLOCK = 64;", "const uint BLOCK = 64;"),
                       "navi21", subgroup_size=64)
    assert one.ok and one.local_size_unknown and one.local_size == (1, 1, 1)
    assert any("without a default" in n for n in one.notes)


def test_spirv_cache_follows_included_files(tmp_path, monkeypatch) -> None:
    needs_radv()
    (tmp_path / "sizes.glsl").write_text("#define N 64\n")
    shader = tmp_path / "k.comp"
    shader.write_text("#version 450\n#extension GL_GOOGLE_include_directive : enable\n#include \"sizes.glsl\"\n"
                      "layout(local_size_x = N) in;\nvoid main() {}\n")
    first, _ = compile_spirv(shader)
    assert reflect(first).local_size == (64, 1, 1)
    calls = []
    real_run = radv.subprocess.run
    monkeypatch.setattr(radv.subprocess, "run", lambda *a, **k: calls.append(a) or real_run(*a, **k))
    monkeypatch.setattr(radv, "_SPIRV_MEMORY", {})  # a new process: the disk entry answers
    assert compile_spirv(shader)[0] == first and calls == []
    (tmp_path / "sizes.glsl").write_text("#define N 128\n")  # the include changes: compiled again
    os.utime(tmp_path / "sizes.glsl", ns=(1, 1))
    again, _ = compile_spirv(shader)
    assert reflect(again).local_size == (128, 1, 1) and len(calls) == 1


def test_measure_small_shaders_on_three_generations() -> None:
    needs_radv()
    w64 = measure_radv(SAXPY, "navi21", subgroup_size=64)
    w32 = measure_radv(SAXPY, "navi21", subgroup_size=32)
    vega = measure_radv(SAXPY, "vega10")
    for r in (w64, w32, vega):
        assert r.ok, r.error
        assert r.driver.startswith("Mesa") and r.family.upper() in r.device
        assert r.local_size == (64, 1, 1) and r.spilled_vgprs == 0 and r.scratch_bytes == 0
    assert (w64.wave_size, w32.wave_size, vega.wave_size) == (64, 32, 64)
    # Allocation granules: gfx10.3 8 (wave64) and 16 (wave32), gfx9 4.
    assert (w64.vgprs % 8, w32.vgprs % 16, vega.vgprs % 4) == (0, 0, 0)
    if w64.driver.startswith("Mesa 22.3"):  # Debian 12's ACO: the tiny shader fits one granule
        assert (w64.vgprs, w32.vgprs, vega.vgprs) == (8, 16, 4)
    # SGPRs: 128 on gfx10+ whatever the use; a real count on gfx9.
    assert w64.sgprs == 128 and vega.sgprs < 128
    # Caps of a trivial shader: 16 waves per SIMD on gfx10.3 (RADV reports 32 for wave64), 10 on gfx9.
    assert (w64.subgroups_per_simd, w64.waves_per_simd, vega.waves_per_simd) == (32, 16, 10)


def test_measured_occupancy_follows_the_vgprs() -> None:
    needs_radv()
    r = measure_radv(HEAVY, "navi21", subgroup_size=64)
    assert r.ok, r.error
    assert 100 < r.vgprs <= 256 and r.vgprs % 8 == 0
    assert r.waves_per_simd == 512 // r.vgprs  # 512 wave64 VGPRs per SIMD on gfx10.3
    g11 = measure_radv(HEAVY, "gfx1100", subgroup_size=32)
    assert g11.ok and g11.vgprs % 24 == 0 and g11.waves_per_simd == 1536 // g11.vgprs


def test_driver_errors_are_results() -> None:
    needs_radv()
    bad = measure_radv("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { x = 1; }\n", "navi21")
    assert not bad.ok and bad.error.startswith("glslang:") and "x" in bad.log
    frag = measure_radv("#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1); }\n", "navi21")
    assert not frag.ok  # compiled as a compute shader: glslang refuses the fragment output


def test_a_driver_abort_is_contained() -> None:
    needs_radv()
    # An unknown chip makes RADV print "Unknown family" and abort(): the worker dies, not the caller.
    spirv, _ = compile_spirv(SAXPY)
    requests = [{"id": i, "spv": "/nonexistent", "sets": [], "push_constant_bytes": 0, "subgroup_size": None}
                for i in range(2)]
    out = list(radv._run_family("gfx1030", requests, radv.radeon_icd(), 30))
    assert [i for i, _ in out] == [0, 1]
    # Dead before it had a device: every shader gets that error at once, without a retry each.
    assert all(not r.ok and "crashed while starting" in r.error and "Unknown family" in r.error for _, r in out)
    assert spirv is not None


def test_report_uses_radv_for_amd_targets(tmp_path, capsys) -> None:
    needs_radv()
    (tmp_path / "heavy.comp").write_text(HEAVY)
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2-wave64", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    jsonschema.validate(rows, SCHEMA)
    direct = measure_radv(HEAVY, "navi21", subgroup_size=64)
    assert [(r["registers_source"], r["registers"], r["threads_per_group"]) for r in rows] == [
        ("radv", direct.vgprs, 64)]
    assert rows[0]["limiter"] == "registers"
    # 2 SIMDs x (512 // VGPRs) waves of one wave per group, over 32 waves per CU.
    assert rows[0]["occupancy"] == pytest.approx(2 * (512 // direct.vgprs) / 32, abs=1e-4)
    assert report_main([str(tmp_path), "--compiler", "auto", "--target", "rdna3", "--notes"]) == 0
    text = capsys.readouterr().out
    assert " radv " in text and "RADV GFX1100" in text and "wave32" in text


def test_report_radv_of_a_shader_without_a_workgroup_size(tmp_path, capsys) -> None:
    # glslang compiles a compute shader that names no size (the application injects it) as one
    # invocation per group: RADV's figures are that shader's, so the row says so and the threads
    # per group stay unknown (occupancy the best case over group sizes, as for an estimate).
    needs_radv()
    body = "#version 450\nlayout(binding = 0) buffer A { float a[]; };\n" \
           "void main() { uint i = gl_GlobalInvocationID.x; a[i] = a[i] * 2.0 + 1.0; }\n"
    (tmp_path / "k.comp").write_text(body)
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["registers_source"] == "radv" and row["threads_per_group"] is None
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--notes"]) == 0
    text = capsys.readouterr().out
    assert "declares no workgroup size" in text and "best case over group sizes" in text and "≤" in text
    # with a declared size the note is absent and the size is RADV's
    (tmp_path / "k.comp").write_text(body.replace("void main", "layout(local_size_x = 64) in;\nvoid main"))
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["threads_per_group"] == 64
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--notes"]) == 0
    assert "declares no workgroup size" not in capsys.readouterr().out


def test_report_starts_the_driver_once_for_many_shaders(tmp_path, capsys, monkeypatch) -> None:
    needs_radv()
    for i in range(3):
        (tmp_path / f"k{i}.comp").write_text(SAXPY.replace("pc.a *", f"{i + 1}.0 * pc.a *"))
    starts = []
    real_popen = radv.subprocess.Popen
    monkeypatch.setattr(radv.subprocess, "Popen", lambda *a, **k: starts.append(a) or real_popen(*a, **k))
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    workers = [a for a in starts if radv._WORKER in a[0]]  # glslang runs go through Popen too
    assert [r["registers_source"] for r in rows] == ["radv"] * 3 and len(workers) == 1


def test_report_compiles_with_the_configured_defines(tmp_path, capsys, monkeypatch) -> None:
    # The report parses with the build's defines; glslang must compile the same build, in the
    # prefetch and in the row alike (one driver start: the row's measurement is the prefetch's).
    needs_radv()
    (tmp_path / "k.comp").write_text(SAXPY.replace("pc.a * data[i]", "SCALE * pc.a * data[i]"))
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--notes"]) == 0
    assert "RADV failed (glslang:" in capsys.readouterr().out  # SCALE undefined without the define
    (tmp_path / "shaderlint.toml").write_text('defines = ["SCALE=2.0"]\n')
    starts = []
    real_popen = radv.subprocess.Popen
    monkeypatch.setattr(radv.subprocess, "Popen", lambda *a, **k: starts.append(a) or real_popen(*a, **k))
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "rdna2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["registers_source"] for r in rows] == ["radv"]
    assert len([a for a in starts if radv._WORKER in a[0]]) == 1


def test_report_auto_estimates_where_radv_does_not_apply(tmp_path, capsys) -> None:
    (tmp_path / "k.comp").write_text(SAXPY)
    (tmp_path / "k.frag").write_text("#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1); }\n")
    assert report_main([str(tmp_path), "--compiler", "auto", "--format", "json"]) == 0  # generic-32: not AMD
    assert {r["registers_source"] for r in json.loads(capsys.readouterr().out)} == {"estimate"}
    assert report_main([str(tmp_path / "k.frag"), "--compiler", "radv", "--target", "rdna2", "--notes"]) == 0
    assert "compute shaders only" in capsys.readouterr().out


def test_report_radv_without_the_packages_falls_back(tmp_path, capsys, monkeypatch) -> None:
    (tmp_path / "k.comp").write_text(SAXPY)
    monkeypatch.setattr(radv, "unavailable_reason", lambda: "not installed: glslangValidator")
    assert report_main([str(tmp_path), "--compiler", "radv", "--target", "gfx9", "--notes"]) == 0
    out = capsys.readouterr().out
    assert "~" in out and "RADV not installed: glslangValidator: estimated" in out
    assert report_main([str(tmp_path), "--compiler", "auto", "--target", "gfx9", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["registers_source"] == "estimate"


def test_every_family_generation_is_known() -> None:
    assert {FAMILIES[f] for f in ("tahiti", "bonaire", "tonga", "vega10", "navi10", "navi21", "gfx1100")} == {
        6, 7, 8, 9, 10, 10.3, 11}
    assert sys.executable  # the worker runs under this interpreter
