"""SL503 reported in host files (shaderlint.host.lint): the projects under tests/host_projects/sl503,
one per host language, and the pass's integration (suppressions, selection, cache, merging, formats)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from shaderlint.cli import main

PROJECTS = Path(__file__).parent / "host_projects" / "sl503"
_EXPECT = re.compile(r"//\s*expect:\s*SL503\s*$")
HOST_EXTS = (".swift", ".m", ".cpp")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


def lint_json(capsys, *args: str) -> list[dict]:
    capsys.readouterr()
    main(["--output-format", "json", "-j", "1", *args])
    return json.loads(capsys.readouterr().out)


def copy_project(name: str, dest: Path, monkeypatch) -> Path:
    root = dest / name
    shutil.copytree(PROJECTS / name, root)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("name", ["swift", "objc", "metalcpp", "vulkan", "cuda"])
def test_host_project_reports_exactly_the_expected_lines(name, isolated, monkeypatch, capsys):
    root = copy_project(name, isolated, monkeypatch)
    want = set()
    for p in sorted(root.rglob("*")):
        if p.suffix in HOST_EXTS:
            for i, line in enumerate(p.read_text().splitlines(), start=1):
                if _EXPECT.search(line):
                    want.add((str(p.relative_to(root)), i))
    assert want, "each project has positives"
    got = [d for d in lint_json(capsys, "--no-cache", "--select", "SL503", ".") if d["code"] == "SL503"]
    assert {(d["path"], d["line"]) for d in got} == want
    for d in got:
        assert d["path"].endswith(HOST_EXTS) and d["fix"] is None
        kernel = [r for r in d["related"] if "defined here" in r["message"]]
        assert len(kernel) == 1 and not kernel[0]["path"].endswith(HOST_EXTS)  # the kernel's definition
        assert any(r["path"] == d["path"] and r["message"] in ("launch", "dispatched here") for r in d["related"])


def test_related_locations_point_at_the_kernel_and_the_launch(isolated, monkeypatch, capsys):
    copy_project("cuda", isolated, monkeypatch)
    got = lint_json(capsys, "--no-cache", "--select", "SL503", ".")
    first = next(d for d in got if d["line"] == 8)
    assert first["path"] == "launch.cpp" and first["column"] == 13 and first["kernel"] == "saxpy"
    assert "`(n + 255) / 256`" in first["message"]
    assert {"path": "kernels.cu", "line": 1, "column": 17, "message": "kernel 'saxpy' defined here"} in first["related"]
    assert {"path": "launch.cpp", "line": 8, "column": 5, "message": "launch"} in first["related"]


def test_vulkan_compares_with_the_shaders_workgroup_size_and_reports_each_axis(isolated, monkeypatch, capsys):
    copy_project("vulkan", isolated, monkeypatch)
    got = lint_json(capsys, "--no-cache", "--select", "SL503", ".")
    invert = next(d for d in got if d["path"] == "invert.cpp")
    assert invert["kernel"] == "main" and "shaders/invert.comp" in invert["message"]
    also = [r for r in invert["related"] if r["message"] == "also rounds down"]
    assert [(r["line"], r["column"]) for r in also] == [(13, 57)]  # `imageHeight / 32` on the y axis
    tint = next(d for d in got if d["path"] == "tint.cpp")  # the group size from a specialization constant
    assert "rounds to nearest" in tint["message"] and "176" in tint["message"]


def test_a_suppression_on_the_host_line_and_the_selection_apply(isolated, monkeypatch, capsys):
    root = copy_project("cuda", isolated, monkeypatch)
    assert len(lint_json(capsys, "--no-cache", ".")) == 3
    assert lint_json(capsys, "--no-cache", "--ignore", "SL503", ".") == []
    assert lint_json(capsys, "--no-cache", "--select", "SL105", ".") == []
    host = root / "launch.cpp"
    host.write_text(host.read_text().replace("saxpy<<<n / 256, 256>>>(a, x, y, n);  // expect: SL503",
                                             "saxpy<<<n / 256, 256>>>(a, x, y, n);  // shaderlint: ignore SL503"))
    assert sorted(d["line"] for d in lint_json(capsys, "--no-cache", ".")) == [9, 18]
    (root / "shaderlint.toml").write_text('per-file-ignores = { "launch.cpp" = ["SL503"] }\n')
    assert lint_json(capsys, "--no-cache", ".") == []


def test_host_code_false_turns_the_pass_off(isolated, monkeypatch, capsys):
    copy_project("cuda", isolated, monkeypatch)
    assert lint_json(capsys, "--no-cache", "--config", "host-code = false", ".") == []


def test_cached_results_follow_the_kernel_file(isolated, monkeypatch, capsys):
    root = copy_project("cuda", isolated, monkeypatch)
    cold = lint_json(capsys, ".")
    warm = lint_json(capsys, ".")
    assert cold == warm and len(cold) == 3
    # the kernel gains a grid-stride loop: the host file is unchanged, its findings go
    k = root / "kernels.cu"
    k.write_text(k.read_text().replace(
        "    if (i < n) y[i] = a * x[i] + y[i];",
        "    for (; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];"))
    assert [d["line"] for d in lint_json(capsys, ".")] == [18]


def test_a_linted_cu_host_file_gets_the_findings_with_its_own(isolated, monkeypatch, capsys):
    root = isolated / "p"
    root.mkdir()
    monkeypatch.chdir(root)
    (root / "k.cu").write_text("__global__ void inc(int* x, int n) {\n"
                               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i < n) x[i] += 1;\n}\n")
    (root / "main.cu").write_text("__global__ void inc(int* x, int n);\n"
                                  "__global__ void local(int* x, int n) { x[threadIdx.x] = n; }\n"
                                  "void run(int* x, int n) {\n"
                                  "    inc<<<n / 128, 128>>>(x, n);\n"
                                  "    local<<<n / 64, 64>>>(x, n);\n}\n")
    got = lint_json(capsys, "--no-cache", "--select", "SL503", ".")
    # line 4: the host pass (kernel in k.cu); line 5: the engine (kernel in the same file), once each
    assert sorted((d["path"], d["line"]) for d in got) == [("main.cu", 4), ("main.cu", 5)]


def test_text_and_sarif_show_the_host_finding(isolated, monkeypatch, capsys):
    copy_project("objc", isolated, monkeypatch)
    capsys.readouterr()
    main(["--no-cache", "-j", "1", "--select", "SL503", "."])
    out = capsys.readouterr().out
    assert "Host.m:12:47: SL503" in out and "= Kernels.metal:4:13: kernel 'blur' defined here" in out
    main(["--no-cache", "-j", "1", "--select", "SL503", "--output-format", "sarif", "."])
    sarif = json.loads(capsys.readouterr().out)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert any(u.endswith("Host.m") for u in uris)


def test_no_kernel_linted_no_finding(isolated, monkeypatch, capsys):
    root = copy_project("cuda", isolated, monkeypatch)
    (root / "kernels.cu").unlink()
    (root / "other.cu").write_text("__global__ void unrelated(float* x) { x[threadIdx.x] = 0.0f; }\n")
    assert lint_json(capsys, "--no-cache", ".") == []


def test_constant_numerators_are_decided(isolated, monkeypatch, capsys):
    root = copy_project("cuda", isolated, monkeypatch)
    (root / "launch.cpp").write_text(
        "#define N 1000\n"
        "__global__ void saxpy(float a, const float* x, float* y, int n);\n"
        "void run(float a, const float* x, float* y) {\n"
        "    saxpy<<<N / 256, 256>>>(a, x, y, N);\n"  # 1000 = 3 * 256 + 232
        "    saxpy<<<(int)(1000 / 256.0 + 0.5), 256>>>(a, x, y, 1000);\n"  # rounds up to 4: covered
        "    saxpy<<<(int)(600 / 256.0f + 0.5f), 256>>>(a, x, y, 600);\n"  # 600 = 2 * 256 + 88: rounds down
        "    saxpy<<<N * 4 / 256, 256>>>(a, x, y, N * 4);\n"  # 4000 / 256 is not exact either
        "    saxpy<<<N * 256 / 256, 256>>>(a, x, y, N * 256);\n"  # exact
        "}\n")
    got = lint_json(capsys, "--no-cache", "--select", "SL503", ".")
    assert [d["line"] for d in got] == [4, 6, 7]
    assert "N = 1000 is not a multiple of 256, the last 232 items get no thread" in got[0]["message"]
    assert "rounds to nearest: 600 is not a multiple of 256, the last 88 items" in got[1]["message"]


SCALE_METAL = ("#include <metal_stdlib>\nusing namespace metal;\n"
               "kernel void scale(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
               "    x[i] *= 2.0f;\n}\n")
SCALE_SWIFT = ("import Metal\n"
               "func run(enc: MTLComputeCommandEncoder, lib: MTLLibrary, dev: MTLDevice) throws {\n"
               "    let pso = try dev.makeComputePipelineState(function: lib.makeFunction(name: \"scale\")!)\n"
               "    enc.setComputePipelineState(pso)\n"
               "    enc.dispatchThreads(MTLSize(width: 4096, height: 1, depth: 1),\n"
               "                        threadsPerThreadgroup: MTLSize(width: 100, height: 1, depth: 1))\n"
               "}\n")


def test_single_files_get_the_projects_host_facts(isolated, monkeypatch, capsys):
    """pre-commit and editors name single files: with a configuration file, the host index reads the
    project, so a kernel gets the facts a run over the directory gives it."""
    root = isolated / "p"
    (root / "kernels").mkdir(parents=True)
    (root / "host").mkdir()
    monkeypatch.chdir(root)
    (root / "kernels" / "scale.metal").write_text(SCALE_METAL)
    (root / "host" / "Run.swift").write_text(SCALE_SWIFT)
    args = ("--no-cache", "--select", "SL501")
    assert lint_json(capsys, *args, "kernels/scale.metal") == []  # no configuration: only what is named
    (root / "shaderlint.toml").write_text("")
    whole = lint_json(capsys, *args, ".")
    single = lint_json(capsys, *args, "kernels/scale.metal")
    assert len(whole) == 1 and single == whole
    assert any(r["path"] == "host/Run.swift" for r in single[0]["related"])
    # a kernel of the same name in another Metal file of the project, not named: ambiguous either way
    (root / "kernels" / "scale_copy.metal").write_text(SCALE_METAL)
    assert lint_json(capsys, *args, "kernels/scale.metal") == []
    assert lint_json(capsys, *args, ".") == []


def test_single_files_report_only_in_the_host_files_named(isolated, monkeypatch, capsys):
    root = copy_project("cuda", isolated, monkeypatch)
    (root / "shaderlint.toml").write_text("")
    assert lint_json(capsys, "--no-cache", "kernels.cu") == []
    got = lint_json(capsys, "--no-cache", "kernels.cu", "launch.cpp")
    assert sorted(d["line"] for d in got) == [8, 9, 18]


def test_ceil_needs_integer_operands(isolated, monkeypatch, capsys):
    root = copy_project("vulkan", isolated, monkeypatch)
    (root / "invert.cpp").write_text(
        "#include <cmath>\n#define W 32\n#define WF 32.0f\nconst float kW = 32;\n"
        "void invert(VkDevice d, VkCommandBuffer cmd, uint32_t n, float x) {\n"
        "    info.stage.module = loadShader(d, \"shaders/invert.comp.spv\");\n"
        "    vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);\n"
        "    vkCmdDispatch(cmd, (uint32_t)ceil(n / W), 1, 1);\n"  # an integer macro: truncates first
        "    vkCmdDispatch(cmd, (uint32_t)ceil(n / WF), 1, 1);\n"  # floating-point macro
        "    vkCmdDispatch(cmd, (uint32_t)ceil(n / kW), 1, 1);\n"  # a float constant
        "    vkCmdDispatch(cmd, (uint32_t)ceil(x / W), 1, 1);\n"  # a float numerator
        "}\n")
    got = [d for d in lint_json(capsys, "--no-cache", "--select", "SL503", ".") if d["path"] == "invert.cpp"]
    assert [d["line"] for d in got] == [8]


def test_add_ignore_writes_the_suppressions_into_host_files(isolated, monkeypatch, capsys):
    root = copy_project("objc", isolated, monkeypatch)
    before = (root / "Host.m").read_text()
    main(["--no-cache", "-j", "1", "--add-ignore", "."])
    assert "added suppressions for 2 findings in 1 file" in capsys.readouterr().err
    after = (root / "Host.m").read_text()
    assert after.count("shaderlint: ignore[SL503]") == 2 and after.replace(" shaderlint: ignore[SL503]", "") == before
    assert lint_json(capsys, "--no-cache", ".") == []


def test_the_pass_reports_the_registrys_sl503():
    """(The pass imports the rule's class itself, not the whole registry.)"""
    from shaderlint.host.lint import RULE_CODE
    from shaderlint.rules.registry import BY_CODE
    from shaderlint.rules.sl503_truncating_grid_division import TruncatingGridDivision

    assert BY_CODE[RULE_CODE] is TruncatingGridDivision
