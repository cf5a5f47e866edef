"""Host facts across files: the index links launches to kernels, the engine, report and cache use them."""

from __future__ import annotations

import json
import os

import pytest

import shaderlint.runner as runner
from shaderlint.cli import main
from shaderlint.config import SettingsResolver
from shaderlint.host.index import HostIndex, kernel_names, shader_candidates

SCALE_CU = ("__global__ void scale(float* x, int n) {\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n) x[i] *= 2.0f;\n}\n")


def host_cpp(threads: int, name: str = "scale") -> str:
    return ("#include <cuda_runtime.h>\n"
            f"#define THREADS {threads}\n"
            "void run(float* x, int n) {\n"
            "    void* args[] = {&x, &n};\n"
            f"    cudaLaunchKernel((void*)&{name}, dim3((n + THREADS - 1) / THREADS), dim3(THREADS), args, 0, 0);\n"
            "}\n")


BLUR_COMP = ("#version 450\n"
             "layout(local_size_x_id = 0, local_size_y_id = 1) in;\n"
             "layout(binding = 0) buffer B { float data[]; };\n"
             "void main() {\n    uint i = gl_GlobalInvocationID.x;\n    data[i] = data[i] * 2.0;\n}\n")

VK_CPP = ("void create(VkDevice d) {\n"
          "  VkShaderModule m = loadShader(\"shaders/blur.comp.spv\");\n"
          "  VkSpecializationMapEntry e[] = {{0, 0, 4}, {1, 4, 4}};\n"
          "  uint32_t vals[] = {13, 13};\n"
          "  VkSpecializationInfo si = {2, e, sizeof(vals), vals};\n"
          "  vkCreateComputePipelines(d, 0, 1, &info, nullptr, &pipe);\n}\n"
          "void record(VkCommandBuffer c) { vkCmdDispatch(c, 148, 84, 1); }\n")


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


def write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def lint_json(capsys, *args: str) -> list[dict]:
    capsys.readouterr()
    main(["--output-format", "json", "-j", "1", "--extend-select", "SL105,SL501", *args])
    return json.loads(capsys.readouterr().out)


def by_code(diags: list[dict], code: str) -> list[dict]:
    return [d for d in diags if d["code"] == code]


def test_cuda_kernel_gets_its_block_size_from_a_cpp_host_file(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    d = by_code(lint_json(capsys, "--no-cache", "."), "SL501")
    assert len(d) == 1
    assert d[0]["path"] == "kernels/scale.cu" and d[0]["line"] == 1
    assert "block size 100" in d[0]["message"] and "host/main.cpp:5" in d[0]["message"]
    assert {"path": "host/main.cpp", "line": 5, "column": 72, "message": "block size set here"} in d[0]["related"]


def test_no_host_file_no_fact(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_vulkan_dispatch_links_to_the_comp_file_through_the_spv_name(project, capsys):
    write(project, {"shaders/blur.comp": BLUR_COMP, "host/vk.cpp": VK_CPP})
    d = by_code(lint_json(capsys, "--no-cache", "."), "SL501")
    assert len(d) == 1 and d[0]["path"] == "shaders/blur.comp"
    assert "13×13 = 169" in d[0]["message"] and "23 idle lanes" in d[0]["message"]
    assert d[0]["related"][-1]["path"] == "host/vk.cpp" and d[0]["related"][-1]["line"] == 4  # `vals`


def test_vulkan_literal_naming_no_linted_shader_is_dropped(project):
    write(project, {"shaders/other.comp": BLUR_COMP, "host/vk.cpp": VK_CPP})
    index = HostIndex.build(["."], ["shaders/other.comp"], SettingsResolver(None, {}).for_path)
    assert index.by_file == {} and index.launches == 1


def test_conflicting_launches_give_no_size(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/a.cpp": host_cpp(100), "host/b.cpp": host_cpp(96)})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []
    index = HostIndex.build(["."], ["kernels/scale.cu"], SettingsResolver(None, {}).for_path)
    assert len(index.facts_for("kernels/scale.cu").for_kernel("scale")) == 2  # linked, but they disagree


def test_agreeing_launches_give_the_size(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/a.cpp": host_cpp(100), "host/b.cpp": host_cpp(100)})
    assert len(by_code(lint_json(capsys, "--no-cache", "."), "SL501")) == 1


def test_kernel_used_as_a_value_elsewhere_gives_no_size(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/a.cpp": host_cpp(100),
                    "host/table.cpp": "void reg() { register_kernel(scale); }\nvoid f() { cudaLaunchKernel(0, 1, 1, 0); }\n"})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_ambiguous_kernel_name_links_nowhere(project, capsys):
    write(project, {"a/scale.cu": SCALE_CU, "b/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []
    index = HostIndex.build(["."], ["a/scale.cu", "b/scale.cu"], SettingsResolver(None, {}).for_path)
    assert index.by_file == {}


def test_annotation_in_the_source_wins(project, capsys):
    write(project, {"kernels/scale.cu": "// shaderlint: threadgroup-size=128\n" + SCALE_CU,
                    "host/main.cpp": host_cpp(100)})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_declaration_in_the_source_wins(project, capsys):
    write(project, {"kernels/scale.cu": "__launch_bounds__(256)\n" + SCALE_CU, "host/main.cpp": host_cpp(100)})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_same_file_launches_are_launches_like_the_others(project, capsys):
    from shaderlint.report import main as report

    same = "void go(float* x) { scale<<<1, 100>>>(x, 100); }\n"
    write(project, {"kernels/scale.cu": SCALE_CU + same, "host/main.cpp": host_cpp(100)})
    capsys.readouterr()
    report(["--format", "json", "."])
    assert json.loads(capsys.readouterr().out)[0]["threads_per_group"] == 100  # all launches agree
    (project / "host/main.cpp").write_text(host_cpp(128))
    report(["--format", "json", "."])
    assert json.loads(capsys.readouterr().out)[0]["threads_per_group"] is None  # 100 here, 128 there
    d = by_code(lint_json(capsys, "--no-cache", "."), "SL501")  # the in-file launch's own size is still checked
    assert len(d) == 1 and d[0]["path"] == "kernels/scale.cu" and d[0]["line"] == 5


def test_host_code_false_turns_it_off(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "shaderlint.toml": "host-code = false\n"})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_cache_entry_changes_with_the_host_file(project, capsys, monkeypatch):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    calls: list[str] = []
    real = runner.lint_source

    def spy(path, data, settings=None, *a, **kw):
        calls.append(path)
        return real(path, data, settings, *a, **kw)

    monkeypatch.setattr(runner, "lint_source", spy)
    first = by_code(lint_json(capsys, "."), "SL501")
    assert calls == ["kernels/scale.cu"] and len(first) == 1
    again = by_code(lint_json(capsys, "."), "SL501")
    assert calls == ["kernels/scale.cu"] and again == first  # a hit, related location in the host file kept
    assert again[0]["related"][-1]["path"] == "host/main.cpp"
    (project / "host/main.cpp").write_text("\n" + host_cpp(100))  # the launch moves a line down
    moved = by_code(lint_json(capsys, "."), "SL501")
    assert len(calls) == 2 and moved[0]["related"][-1]["line"] == 6
    (project / "host/main.cpp").write_text(host_cpp(128))
    assert by_code(lint_json(capsys, "."), "SL501") == [] and len(calls) == 3


def test_report_shows_where_the_size_comes_from(project, capsys):
    from shaderlint.report import main as report

    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    capsys.readouterr()
    assert report(["."]) == 0
    out = capsys.readouterr().out
    assert "100†" in out and "host: threads per group 100 from host/main.cpp:5" in out
    assert report(["--format", "json", "."]) == 0
    rows = json.loads(capsys.readouterr().out)
    # SPEC's keys (the interval keys of estimates), and where the host sets the size (additive)
    assert rows[0]["threads_per_group"] == 100 and set(rows[0]) == {
        "path", "kernel", "line", "language", "threads_per_group", "registers", "registers_source",
        "threadgroup_memory_bytes", "stack_bytes", "target", "occupancy", "limiter", "host",
        *(("registers_interval", "occupancy_interval") if rows[0]["registers_source"] == "estimate" else ())}
    assert rows[0]["host"] == [{"fact": "threads_per_group", "value": [100, 1, 1], "path": "host/main.cpp", "line": 5}]


def test_workers_receive_the_host_facts(project, capsys):
    # enough source for the pool (runner.POOL_MIN_BYTES) so the facts travel to worker processes
    files = {f"kernels/k{i}.cu": SCALE_CU.replace("scale", f"scale{i}") + "// " + "x" * 9000 + "\n" for i in range(8)}
    files["host/main.cpp"] = "".join(host_cpp(100, f"scale{i}").replace("run(", f"run{i}(") for i in range(8))
    write(project, files)
    capsys.readouterr()
    main(["--output-format", "json", "-j", "2", "--no-cache", "--extend-select", "SL501", "."])
    got = by_code(json.loads(capsys.readouterr().out), "SL501")
    assert sorted(d["path"] for d in got) == sorted(f for f in files if f.endswith(".cu"))


def test_kernel_names():
    src = (b"template <int N> __global__ void __launch_bounds__(256) tiled(float* x) {}\n"
           b"extern \"C\" __global__ void plain(int n) {}\n__device__ void helper() {}\n")
    assert kernel_names(src, "cuda") == {"tiled", "plain"}
    assert kernel_names(b"kernel void add(device float* a [[buffer(0)]]) {}\n[[kernel]] void mul() {}\n",
                        "metal") == {"add", "mul"}


def test_shader_candidates():
    assert shader_candidates("shaders/blur.comp.spv") == ["shaders/blur.comp"]
    assert shader_candidates("blur.spv") == ["blur.comp", "blur.glsl"]
    assert shader_candidates("blur.comp") == ["blur.comp"]
    assert shader_candidates("blur.vert") == []


ADD_METAL = ("#include <metal_stdlib>\nusing namespace metal;\n"
             "kernel void add(device float* a [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n"
             "    a[gid] = a[gid] + 1.0f;\n}\n")


@pytest.fixture
def fake_swift(monkeypatch):
    """A stand-in Metal host scanner for .swift files: one line `dispatch <mode> <kernel> <w>x<h>` per
    launch (the real ones live in their own modules; the index must work for any HostLaunch)."""
    from shaderlint.host import ALL_SCANNERS, HostLaunch, Span

    def scan(path: str, data: bytes):
        out = []
        for no, line in enumerate(data.decode().splitlines(), 1):
            parts = line.split()
            if len(parts) == 4 and parts[0] == "dispatch":
                w, h = (int(x) for x in parts[3].split("x"))
                out.append(HostLaunch(Span(path, 0, len(line), no, 1), "metal", kernel=parts[2], dispatch=parts[1],
                                      group=(w, h, 1), group_at=Span(path, 0, len(line), no, 1)))
        return out

    monkeypatch.setitem(ALL_SCANNERS, ".swift", [scan])
    return scan


def test_metal_sl105_decided_by_the_host_dispatch(project, capsys, fake_swift):
    write(project, {"Shaders/add.metal": ADD_METAL, "App/Renderer.swift": "// x\ndispatch threadgroups add 16x16\n"})
    d = by_code(lint_json(capsys, "--no-cache", "."), "SL105")
    assert len(d) == 1 and d[0]["path"] == "Shaders/add.metal"
    assert {"path": "App/Renderer.swift", "line": 2, "column": 1, "message": "dispatched here; threadgroup size set here"} in d[0]["related"]
    (project / "App/Renderer.swift").write_text("dispatch threads add 16x16\n")
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL105") == []
    (project / "App/Renderer.swift").write_text("dispatch threads add 16x16\ndispatch threadgroups add 16x16\n")
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL105") == []  # they disagree: Metal's default


def test_metal_threadgroup_size_from_the_host(project, capsys, fake_swift):
    write(project, {"Shaders/add.metal": ADD_METAL, "App/Renderer.swift": "dispatch threads add 13x13\n"})
    d = by_code(lint_json(capsys, "--no-cache", "."), "SL501")
    assert len(d) == 1 and "13×13 = 169" in d[0]["message"]
    assert d[0]["related"][-1]["path"] == "App/Renderer.swift"


def test_a_cuda_launch_does_not_link_to_a_metal_kernel(project):
    write(project, {"Shaders/add.metal": ADD_METAL, "host/main.cpp": host_cpp(100, "add")})
    index = HostIndex.build(["."], ["Shaders/add.metal"], SettingsResolver(None, {}).for_path)
    assert index.by_file == {}


def test_one_thread_launches_from_host_code_are_on_purpose(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU,
                    "host/main.cpp": "void f(float* x) { void* a[] = {&x}; cudaLaunchKernel((void*)scale, 1, 1, a); }\n"})
    diags = lint_json(capsys, "--no-cache", "--extend-select", "SL501,SL506", ".")
    assert by_code(diags, "SL501") == [] and by_code(diags, "SL506") == []
    (project / "host/main.cpp").write_text("void f(float* x, int n) { void* a[] = {&x}; "
                                           "cudaLaunchKernel((void*)scale, n, 1, a); }\n")
    assert len(by_code(lint_json(capsys, "--no-cache", "."), "SL501")) == 1  # one-thread blocks over a grid


def test_one_thread_launches_of_a_template_kernel_are_on_purpose(project, capsys):
    """mmcv's determin_voxel_num<int><<<1, 1, 0, stream>>>: a serial kernel; the template has no grid
    fact (its instances have their own launches), but one thread is still one thread."""
    write(project, {"kernels/count.cu": "template <typename T> __global__ void count(T* x, int n) {\n"
                                        "    for (int i = 0; i < n; ++i) x[0] += x[i];\n}\n",
                    "host/main.cpp": "void f(int* x, int n, cudaStream_t s) { count<int><<<1, 1, 0, s>>>(x, n); }\n"})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_sarif_related_location_in_the_host_file(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    capsys.readouterr()
    main(["--output-format", "sarif", "-j", "1", "--no-cache", "--extend-select", "SL501", "."])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    sl501 = [r for r in results if r["ruleId"] == "SL501"]
    assert len(sl501) == 1
    rel = sl501[0]["relatedLocations"][-1]["physicalLocation"]
    assert rel["artifactLocation"]["uri"].endswith("host/main.cpp") and rel["region"]["startLine"] == 5


def test_vulkan_literal_relative_to_the_project_root(project):
    write(project, {"shaders/blur.comp": BLUR_COMP, "app/src/vk.cpp": VK_CPP})
    os.chdir(project / "app")  # neither the cwd, the linted path nor the host file's directory holds shaders/
    index = HostIndex.build(["."], ["../shaders/blur.comp"], SettingsResolver(None, {}).for_path)
    assert index.by_file == {} and index.launches == 1
    (project / "shaderlint.toml").write_text("")  # the project root: the configuration's directory
    index = HostIndex.build(["."], ["../shaders/blur.comp"], SettingsResolver(None, {}).for_path)
    assert len(index.facts_for("../shaders/blur.comp").for_kernel("")) == 1


def test_index_never_raises(project, monkeypatch):
    import shaderlint.host.index as index_mod

    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})

    def boom(path, data, store=None):
        raise RuntimeError("scanner bug")

    monkeypatch.setattr(index_mod, "_scan_keyed", boom)
    index = HostIndex.build(["."], ["kernels/scale.cu"], SettingsResolver(None, {}).for_path)
    assert index.by_file == {} and index.facts_for("kernels/scale.cu") is None


def test_a_scanner_that_raises_loses_only_its_own_records(project, monkeypatch):
    # (the scanners themselves broken, not the index's seam: whatever path a scan takes goes through them)
    import shaderlint.host as host
    import shaderlint.host.cuda  # noqa: F401  (the scanners registered before they are replaced)
    import shaderlint.host.index as index_mod
    import shaderlint.host.metal  # noqa: F401
    import shaderlint.host.vulkan  # noqa: F401

    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100), "host/other.cc": host_cpp(64)})
    monkeypatch.setattr(index_mod, "_SCANNED", {})  # (no earlier test's scan of the same bytes answers)

    def boom(path, data):
        raise RuntimeError("scanner bug")

    monkeypatch.setitem(host.ALL_SCANNERS, ".cc", [boom])
    index = HostIndex.build(["."], ["kernels/scale.cu"], SettingsResolver(None, {}).for_path)
    assert [f.group for f in index.facts_for("kernels/scale.cu").for_kernel("scale")] == [(100, 1, 1)]
    monkeypatch.setitem(host.ALL_SCANNERS, ".cpp", [boom])
    monkeypatch.setattr(index_mod, "_SCANNED", {})
    index = HostIndex.build(["."], ["kernels/scale.cu"], SettingsResolver(None, {}).for_path)
    assert index.facts_for("kernels/scale.cu") is None


def test_host_facts_rank_above_configuration(project, capsys, fake_swift):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "Shaders/add.metal": ADD_METAL, "App/Renderer.swift": "dispatch threadgroups add 64x1\n",
                    "shaderlint.toml": '[facts]\n"**" = { threadgroup-size = "128", dispatch = "threads" }\n'})
    diags = lint_json(capsys, "--no-cache", ".")
    assert [d["path"] for d in by_code(diags, "SL501")] == ["kernels/scale.cu"]  # 100 from host code, not 128
    assert [d["path"] for d in by_code(diags, "SL105")] == ["Shaders/add.metal"]  # threadgroups from host code


def test_vulkan_grid_counted_in_the_shaders_own_workgroups(project):
    from shaderlint.engine import lint_source
    from shaderlint.config import Settings

    comp = BLUR_COMP.replace("local_size_x_id = 0, local_size_y_id = 1", "local_size_x = 16, local_size_y = 8")
    write(project, {"shaders/blur.comp": comp, "host/vk.cpp": VK_CPP})
    index = HostIndex.build(["."], ["shaders/blur.comp"], SettingsResolver(None, {}).for_path)
    r = lint_source("shaders/blur.comp", comp.encode(), Settings(), host=index.facts_for("shaders/blur.comp"))
    main_fn = next(f for f in r.model.functions if f.name == "main")
    assert main_fn.group_size.origin == "local_size" and main_fn.group_size.dims == (16, 8, 1)
    assert main_fn.host_facts["grid-size"][0] == "2368x672"  # 148x84 groups of 16x8


def test_host_code_setting_from_the_command_line(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    assert by_code(lint_json(capsys, "--no-cache", "--config", "host-code = false", "."), "SL501") == []
    capsys.readouterr()
    main(["--show-settings", "--config", "host-code = false", "kernels/scale.cu"])
    assert "host-code = false" in capsys.readouterr().out.splitlines()
    main(["--show-settings", "kernels/scale.cu"])
    assert "host-code = true" in capsys.readouterr().out.splitlines()


def test_bad_host_code_value_is_a_configuration_error(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "shaderlint.toml": 'host-code = "yes"\n'})
    capsys.readouterr()
    assert main(["kernels/scale.cu"]) == 2
    assert "host-code" in capsys.readouterr().err


def test_kernel_of_the_same_name_in_a_header_not_linted_makes_it_ambiguous(project, capsys):
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "third/scale.h": "__global__ void scale(double* x, int n) { }\n"})
    assert by_code(lint_json(capsys, "--no-cache", "."), "SL501") == []


def test_template_instances_launched_in_host_code(project, capsys):
    from shaderlint.report import main as report

    write(project, {
        "k.cuh": ("template <typename T, int N>\n__global__ void tiled(T* x, int n) {\n    T acc[N];\n"
                  "    for (int j = 0; j < N; ++j) acc[j] = x[threadIdx.x * N + j];\n    x[threadIdx.x] = acc[0];\n}\n"),
        "host.cu": ("#include \"k.cuh\"\n#define TILE 8\nvoid run(float* x, double* y, int n) {\n"
                    "    tiled<float, TILE><<<(n + 255) / 256, 256>>>(x, n);\n"
                    "    tiled<double, 4><<<(n + 255) / 256, 256>>>(y, n);\n}\n")})
    capsys.readouterr()
    report(["--format", "json", "."])
    rows = [r for r in json.loads(capsys.readouterr().out) if r["path"] == "k.cuh"]
    assert [(r["kernel"], r["threads_per_group"]) for r in rows] == [("tiled<float, 8>", 256), ("tiled<double, 4>", 256)]


def test_a_kernel_prototype_in_the_launching_file_is_not_a_second_definition(project, capsys):
    """The launching .cpp declares the kernel (`__global__ void scale(float*, int);`): a declaration,
    not another kernel of that name, so the link stands."""
    assert kernel_names(b"__global__ void scale(float* x,\n  int n);\n__global__ void run(int) {}\n", "cuda") == {"run"}
    write(project, {"kernels/scale.cu": SCALE_CU,
                    "host/main.cpp": host_cpp(100).replace("void run(", "__global__ void scale(float* x, int n);\nvoid run(")})
    assert len(by_code(lint_json(capsys, "--no-cache", "."), "SL501")) == 1


def test_scan_results_are_kept_across_runs(project, capsys, monkeypatch):
    """A warm run reads the host files' launches from the cache directory, not with tree-sitter."""
    import shaderlint.host.index as index

    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    assert len(by_code(lint_json(capsys, "."), "SL501")) == 1
    assert list((project / ".cache" / "host").glob("scans-*.json"))
    index._SCANNED.clear()
    real = index.scanners_for
    monkeypatch.setattr(index, "scanners_for",  # a scan now would find nothing
                        lambda path: [lambda p, data: []] if real(path) else [])
    monkeypatch.setattr(index, "load_scanners", lambda: None)
    (project / "kernels/scale.cu").write_text(SCALE_CU + "\n")  # the kernel file's own result is not cached
    d = by_code(lint_json(capsys, "."), "SL501")
    assert len(d) == 1 and "host/main.cpp:5" in d[0]["message"]
    index._SCANNED.clear()
    (project / "host/main.cpp").write_text(host_cpp(128))  # changed content: scanned again (and finds nothing)
    assert by_code(lint_json(capsys, "."), "SL501") == []


def _build_counting_reads(monkeypatch, project):
    """Build the index for kernels/scale.cu with the cache; the paths it reads from disk."""
    import shaderlint.host.index as index

    index._SCANNED.clear()
    opened: list[str] = []
    real = index._read
    monkeypatch.setattr(index, "_read", lambda p: opened.append(p) or real(p))
    built = HostIndex.build(["."], ["kernels/scale.cu"], SettingsResolver(None, {}).for_path,
                            cache_dir=str(project / ".cache"))
    return built, opened


def test_unchanged_files_are_not_read_again(project, monkeypatch):
    """A warm build knows every unchanged host and kernel file by its stat data: it opens none."""
    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)  # (the files were written just now)
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "host/other.cpp": "int f() { return 1; }\n", "third/k.h": "__global__ void other() {}\n"})
    cold, opened = _build_counting_reads(monkeypatch, project)
    assert sorted(opened) == ["host/main.cpp", "host/other.cpp", "kernels/scale.cu", "third/k.h"]
    warm, opened = _build_counting_reads(monkeypatch, project)
    assert opened == [] and warm.by_file == cold.by_file and warm.by_file
    assert warm.host_files == cold.host_files == 4 and (warm.launches, warm.linked) == (cold.launches, cold.linked)
    # the header's kernel still counts when it is not read: a second `scale` makes the link ambiguous
    (project / "third/k.h").write_text("__global__ void scale() {}\n")
    amb, opened = _build_counting_reads(monkeypatch, project)
    assert opened == ["third/k.h"] and amb.by_file == {}
    amb2, opened = _build_counting_reads(monkeypatch, project)
    assert opened == [] and amb2.by_file == {}


def test_a_host_file_no_scanner_reads_is_not_hashed_nor_kept(project, monkeypatch):
    """A host file without any scanner's marker (most C++ files) gets no content key and no scan in the
    store: its stat record names the NOTHING key, and a warm build neither reads nor scans it."""
    import json

    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "host/other.cpp": "int f() { return 1; }\n"})
    hashed: list[str] = []
    real_key = index.ScanStore.key
    monkeypatch.setattr(index.ScanStore, "key", staticmethod(lambda p, d: hashed.append(p) or real_key(p, d)))
    cold, opened = _build_counting_reads(monkeypatch, project)
    assert "host/other.cpp" in opened and "host/other.cpp" not in hashed and "host/main.cpp" in hashed
    stored = json.loads(next((project / ".cache" / "host").glob("scans-*.json")).read_bytes())
    records = {k.split("\0")[1]: v for files in stored["files"].values() for k, v in files.items()}
    assert records["host/other.cpp"].split("|")[1] == index.NOTHING
    assert len(stored["scans"]) == 1  # (main.cpp's launches only)
    warm, opened = _build_counting_reads(monkeypatch, project)
    assert opened == [] and warm.by_file == cold.by_file and warm.host_files == cold.host_files == 3


def test_a_scanner_finds_nothing_where_it_does_not_want_the_file():
    """``wanted`` is false only where every scanner returns no record: each registered test against its
    scanner, on every file of the host test projects (and launches through each CUDA/HIP API) read as
    each extension the scanner takes."""
    from pathlib import Path

    import shaderlint.host.index as index
    from shaderlint.host import _WANTS, ALL_SCANNERS

    index.load_scanners()
    samples = [p.read_bytes() for p in (Path(__file__).parent / "host_projects").rglob("*") if p.is_file()]
    samples += [host_cpp(64).replace("cudaLaunchKernel", api).encode()  # (no `<<<` in these)
                for api in ("cudaLaunchKernel", "cudaLaunchCooperativeKernel", "hipLaunchKernelGGL")]
    checked = 0
    for ext, scanners in ALL_SCANNERS.items():
        for scanner in scanners:
            test = _WANTS.get(scanner)
            if test is None:
                continue
            for data in samples:
                if not test(data):
                    assert scanner(f"x{ext}", data) == [], (scanner, ext)
                    checked += 1
    assert checked
    # CUDA's test is the scanner's own first step: each marker alone is wanted, and read
    import shaderlint.host.cuda as cuda

    for api in ("cudaLaunchKernel", "cudaLaunchCooperativeKernel", "hipLaunchKernelGGL"):
        data = host_cpp(64).replace("cudaLaunchKernel", api).encode()
        assert cuda._wants(data) and [x.kernel for x in cuda._scan("x.cpp", data)] == ["scale"], api
    data = b"void run(float* x) { scale<<<1, 64>>>(x, 64); }\n"
    assert cuda._wants(data) and [x.kernel for x in cuda._scan("x.cu", data)] == ["scale"]
    assert not cuda._wants(b"void kernelLaunch(); int Launch = 1;\n")


def test_an_edit_that_keeps_size_and_modification_time_is_seen(project, monkeypatch):
    """Same size, the old modification time put back: the change time differs, the file is read."""
    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    first, _ = _build_counting_reads(monkeypatch, project)
    assert first.facts_for("kernels/scale.cu").for_kernel("scale")[0].group == (100, 1, 1)
    host = project / "host/main.cpp"
    st = os.stat(host)
    host.write_text(host_cpp(128))
    os.utime(host, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(host).st_size == st.st_size and os.stat(host).st_mtime_ns == st.st_mtime_ns
    again, opened = _build_counting_reads(monkeypatch, project)
    assert "host/main.cpp" in opened
    assert again.facts_for("kernels/scale.cu").for_kernel("scale")[0].group == (128, 1, 1)


def test_stat_data_of_a_file_changed_just_now_are_not_trusted(project, monkeypatch):
    """Two writes within one tick of the file system's clock leave the same times: a file read that
    soon after its change is checked by its content next time (its scan is still kept by content)."""
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    _build_counting_reads(monkeypatch, project)
    warm, opened = _build_counting_reads(monkeypatch, project)
    assert "host/main.cpp" in opened and warm.facts_for("kernels/scale.cu") is not None


def test_a_callers_reader_is_always_used(project, monkeypatch):
    """Unsaved buffers (a reader given by the caller) are not the disk's bytes: no stat shortcut."""
    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100)})
    _build_counting_reads(monkeypatch, project)
    index._SCANNED.clear()
    buffers = {"host/main.cpp": host_cpp(64).encode()}
    got = HostIndex.build(["."], ["kernels/scale.cu"], SettingsResolver(None, {}).for_path,
                          read=lambda p: buffers.get(p) or open(p, "rb").read(), cache_dir=str(project / ".cache"))
    assert got.facts_for("kernels/scale.cu").for_kernel("scale")[0].group == (64, 1, 1)


def test_a_warm_build_takes_the_index_from_the_run_summary(project, monkeypatch):
    """Nothing changed: the index comes from the run's summary, without loading the scan store or
    opening a file, and is the index a build from the files gives."""
    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "third/k.h": "__global__ void other() {}\n"})
    cold, _ = _build_counting_reads(monkeypatch, project)
    assert list((project / ".cache" / "host").glob("runs-*.json"))
    loads: list[str] = []
    real_init = index.ScanStore.__init__
    monkeypatch.setattr(index.ScanStore, "__init__", lambda self, d: loads.append(d) or real_init(self, d))
    warm, opened = _build_counting_reads(monkeypatch, project)
    assert opened == [] and loads == []
    assert warm.by_file == cold.by_file and warm.by_file and warm.paths == cold.paths
    assert [f.digest() for f in warm.by_file.values()] == [f.digest() for f in cold.by_file.values()]
    assert (warm.host_files, warm.launches, warm.linked) == (cold.host_files, cold.launches, cold.linked)


def _group_of_scale(monkeypatch, project):
    built, _ = _build_counting_reads(monkeypatch, project)
    facts = built.facts_for("kernels/scale.cu")
    launches = facts.for_kernel("scale") if facts is not None else ()
    return sorted(l.group for l in launches if l.api != "reference") or None


_TICKS = iter(range(1, 1 << 30))


def _later(path) -> None:
    """A modification time ``path`` never had (in the past: the stat data stay trusted), so that an
    edit is seen whatever the file system clock's tick (the edits here keep the size)."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, 1_000_000_000_000_000_000 + next(_TICKS) * 1_000_000_000))


def test_the_run_summary_is_never_stale(project, monkeypatch):
    """Every change the index depends on gives the index a build from the files gives: a host file
    edited, added, removed or ignored, another definition of the kernel in a header, the settings."""
    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)
    write(project, {"kernels/scale.cu": SCALE_CU, "host/main.cpp": host_cpp(100),
                    "third/k.h": "__global__ void other() {}\n"})
    assert _group_of_scale(monkeypatch, project) == [(100, 1, 1)]
    assert _group_of_scale(monkeypatch, project) == [(100, 1, 1)]  # (from the summary)
    (project / "host/main.cpp").write_text(host_cpp(128))  # edited (the same size)
    _later(project / "host/main.cpp")
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]
    write(project, {"host/more.cpp": host_cpp(128)})  # added
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1), (128, 1, 1)]
    (project / "host/more.cpp").unlink()  # removed
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]
    write(project, {".gitignore": "host/\n"})  # ignored
    assert _group_of_scale(monkeypatch, project) is None
    (project / ".gitignore").unlink()
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]
    (project / "third/k.h").write_text("__global__ void scale() {}\n")  # a second definition: ambiguous
    _later(project / "third/k.h")
    assert _group_of_scale(monkeypatch, project) is None
    (project / "third/k.h").write_text("__global__ void other() {}\n")
    _later(project / "third/k.h")
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]
    write(project, {"host/shaderlint.toml": "host-code = false\n"})  # the settings of the host files
    assert _group_of_scale(monkeypatch, project) is None
    (project / "host/shaderlint.toml").unlink()
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]
    write(project, {"shaderlint.toml": "host-code = false\n"})  # of every file
    assert _group_of_scale(monkeypatch, project) is None
    write(project, {"shaderlint.toml": "exclude = [\"host/*\"]\n"})
    assert _group_of_scale(monkeypatch, project) is None
    (project / "shaderlint.toml").unlink()
    assert _group_of_scale(monkeypatch, project) == [(128, 1, 1)]


def test_a_kernel_file_read_for_its_names_is_checked_by_the_summary(project, monkeypatch, fake_swift):
    """A Metal file not linted is read for the kernels it defines (one of the launch's name makes the link
    ambiguous), as is the linted one: the summary keeps their stat data and a change to either is seen."""
    import shaderlint.host.index as index

    monkeypatch.setattr(index.ScanStore, "RACY_NS", 0)
    write(project, {"Shaders/add.metal": ADD_METAL, "lib/other.metal": "kernel void other(device float* x) {}\n",
                    "App/Renderer.swift": "dispatch threads add 13x13\n"})
    resolver = SettingsResolver(None, {}).for_path

    def group():
        index._SCANNED.clear()
        built = HostIndex.build(["."], ["Shaders/add.metal"], resolver, cache_dir=str(project / ".cache"))
        facts = built.facts_for("Shaders/add.metal")
        return facts.for_kernel("add")[0].group if facts is not None else None

    assert group() == group() == (13, 13, 1)
    (project / "lib/other.metal").write_text("kernel void add(device float* x) {}\n")
    _later(project / "lib/other.metal")
    assert group() is None
    (project / "lib/other.metal").write_text("kernel void other(device float* x) {}\n")
    _later(project / "lib/other.metal")
    assert group() == group() == (13, 13, 1)
    write(project, {"lib/more.metal": "kernel void add(device float* x) {}\n"})  # a new one
    assert group() is None
    (project / "lib/more.metal").unlink()
    assert group() == group() == (13, 13, 1)
    (project / "Shaders/add.metal").write_text(ADD_METAL.replace("void add(", "void add2("))
    _later(project / "Shaders/add.metal")
    assert group() is None
