"""Vulkan host code read across functions and files (shaderlint.host._vulkan_summary): the project
under tests/host_projects/vulkan_summaries builds each pipeline from a descriptor struct filled by
a lambda in another file, through a cached wrapper and a path helper; dispatch helpers bind the
pipeline they are passed. Each negative case changes one thing that makes a fact unknowable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shaderlint.cli import main
from shaderlint.config import SettingsResolver
from shaderlint.engine import predefined_for
from shaderlint.host.index import HostIndex, apply
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

PROJECT = Path(__file__).parent / "host_projects" / "vulkan_summaries"
SHADERS = ["shaders/blur.comp", "shaders/reduce.comp", "shaders/scan.comp"]


@pytest.fixture
def root(tmp_path, monkeypatch):
    dest = tmp_path / "p"
    shutil.copytree(PROJECT, dest)
    monkeypatch.chdir(dest)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return dest


def kernels() -> dict[str, object]:
    """Each shader's entry point with the host's facts applied (name -> Function)."""
    resolver = SettingsResolver(None, {})
    index = HostIndex.build(["."], SHADERS, resolver.for_path)
    out = {}
    for path in SHADERS:
        st = resolver.for_path(path)
        model = build_model(FRONT_ENDS["glsl"].parse(Source(path, Path(path).read_bytes()),
                                                     predefined=predefined_for(st, "glsl", None)))
        apply(model, index.facts_for(path))
        out[Path(path).stem] = next(f for f in model.functions if f.name == "main")
    return out


def host_group(f) -> tuple | None:
    gs = f.group_size
    return (gs.dims, gs.host.path, gs.host.line) if gs is not None and gs.origin == "host" else None


def edit(path: str, old: str, new: str) -> None:
    p = Path(path)
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new, 1))


def sl503(capsys) -> list[tuple[str, int]]:
    capsys.readouterr()
    main(["--output-format", "json", "-j", "1", "--no-cache", "--select", "SL503", "."])
    return [(d["path"], d["line"]) for d in json.loads(capsys.readouterr().out) if d["code"] == "SL503"]


def test_group_sizes_from_constants_set_through_a_lambda_a_struct_and_a_wrapper_in_another_file(root):
    k = kernels()
    # `make("blur", 16, 8)`: d.size_x/size_y -> Device::build's `values = {size_x, size_y}` for ids 0 and 1
    assert host_group(k["blur"]) == ((16, 8, 1), "src/app.cpp", 30)
    assert host_group(k["reduce"]) == ((128, 1, 1), "src/app.cpp", 31)  # id 1 set to 1 (its ROWS, not a size)
    # `make("scan", 0, 0)`: `if (desc.size_x > 0)` is false, no constants: the shader's own literal size
    assert k["scan"].group_size.dims == (64, 1, 1) and k["scan"].group_size.origin != "host"


def test_dispatches_link_to_the_pipeline_their_caller_passes(root, capsys):
    k = kernels()
    for name, line in (("blur", 38), ("reduce", 44), ("scan", 50)):
        mode, at = k[name].host_facts["dispatch"]
        assert mode == "threadgroups" and (at.path, at.line) == ("src/app.cpp", line)
    grid, at = k["reduce"].host_facts["grid-size"]  # run_fixed: 4 groups of 128
    assert grid == "512" and at.line == 44
    assert "grid-size" not in k["blur"].host_facts  # (its grid is computed by the caller)
    assert sl503(capsys) == [("src/app.cpp", 50)]  # `count / 64` with scan.comp's 64


OTHER_WRAPPER = """#include <string>
#include <unordered_map>
#include "device.h"

// Pipelines made elsewhere (a VkComputePipelineCreateInfo each), looked up by kernel name.
class Registry {
public:
    VkPipeline pipeline_for(const KernelDesc& desc) { return table_.at(desc.name); }

private:
    std::unordered_map<std::string, VkPipeline> table_;
};
"""


def test_a_second_definition_of_the_wrapper_gives_no_fact(root, capsys):
    (root / "src" / "registry.cpp").write_text(OTHER_WRAPPER)
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None
    assert all("dispatch" not in f.host_facts for f in k.values())  # `pipeline_for` names two functions
    assert sl503(capsys) == []


def test_a_name_that_is_not_a_constant_makes_every_group_size_unknown(root):
    edit("src/app.cpp", '    k_.scan = make("scan", 0, 0);',
         '    k_.scan = make("scan", 0, 0);\n    extra_ = make(config_name(), 32, 1);')
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None  # it may be either
    assert k["reduce"].host_facts["dispatch"][0] == "threadgroups"  # (the dispatches still link)


def test_a_caller_passing_an_unknown_name_makes_every_group_size_unknown(root):
    with open("src/app.cpp", "a") as fh:
        fh.write("\nVkPipeline load_named(Device& dev, const char* name)\n{\n    KernelDesc d;\n    d.name = name;\n"
                 "    d.size_x = 32;\n    d.size_y = 1;\n    return dev.pipeline_for(d);\n}\n"
                 "void load_user(Device& dev, const char* user) { load_named(dev, user); }\n")
    assert host_group(kernels()["blur"]) is None


def test_a_wrapper_whose_callers_are_not_seen_makes_every_group_size_unknown(root):
    with open("src/app.cpp", "a") as fh:
        fh.write("\nVkPipeline load_named(Device& dev, const char* name)\n{\n    KernelDesc d;\n    d.name = name;\n"
                 "    d.size_x = 32;\n    d.size_y = 1;\n    return dev.pipeline_for(d);\n}\n")
    assert host_group(kernels()["blur"]) is None


def test_two_creations_with_other_constants_give_that_shader_no_size(root):
    edit("src/app.cpp", '    k_.scan = make("scan", 0, 0);',
         '    k_.scan = make("scan", 0, 0);\n    k_.blur_small = make("blur", 8, 8);')
    k = kernels()
    assert host_group(k["blur"]) is None
    assert host_group(k["reduce"]) == ((128, 1, 1), "src/app.cpp", 31)


def test_a_pipeline_member_assigned_twice_links_no_dispatch(root):
    edit("src/app.cpp", '    k_.scan = make("scan", 0, 0);',
         '    k_.scan = make("scan", 0, 0);\n    k_.reduce = make("scan", 0, 0);')
    k = kernels()
    assert "dispatch" not in k["reduce"].host_facts  # run_fixed's pipeline may be either
    assert host_group(k["reduce"]) == ((128, 1, 1), "src/app.cpp", 31)  # (still its only creation)


def test_the_summaries_survive_the_scan_cache(root, capsys):
    assert sl503(capsys) == [("src/app.cpp", 50)]
    capsys.readouterr()
    main(["--output-format", "json", "-j", "1", "--select", "SL503", "."])  # cold, fills the cache
    first = json.loads(capsys.readouterr().out)
    main(["--output-format", "json", "-j", "1", "--select", "SL503", "."])  # warm: summaries from the cache
    assert [(d["path"], d["line"]) for d in json.loads(capsys.readouterr().out)] == \
        [(d["path"], d["line"]) for d in first] == [("src/app.cpp", 50)]


def test_constants_set_under_a_condition_count_only_where_it_holds():
    from shaderlint.host._vulkan_summary import spec_value

    when = [[["i", 16], ">", ["i", 0]]]
    spec = {"e": [[0, 0, 4, when], [1, 4, 4, when]], "d": [[["i", 16], when], [["i", 2], when]]}
    assert spec_value(spec) == ((0, 16), (1, 2))
    never = [[["i", 0], ">", ["i", 0]]]
    assert spec_value({"e": [[0, 0, 4, never]], "d": [[["i", 0], never]]}) == ()  # no constants set
    unknown = [[["?"], ">", ["i", 0]]]
    assert spec_value({"e": [[0, 0, 4, unknown]], "d": [[["i", 16], []]]}) is None
    assert spec_value({"e": [[0, 0, 4, []]], "d": [[["?"], []]]}) is None  # a value not known
    assert spec_value({"e": [[0, 0, 4, []], [0, 4, 4, []]], "d": [[["i", 1], []], [["i", 2], []]]}) is None  # id twice
    assert spec_value({"e": [[0, 0, 2, []]], "d": [[["i", 1], []]]}) is None  # not a 32-bit constant


def test_a_summary_round_trips_through_the_scan_store(tmp_path):
    from shaderlint.host._vulkan_summary import VulkanSummary
    from shaderlint.host.index import ScanStore, scan_file, load_scanners

    load_scanners()
    path = str(PROJECT / "src" / "device.cpp")
    data = Path(path).read_bytes()
    store = ScanStore(str(tmp_path))
    got = scan_file(path, data, store)
    summaries = [x for x in got if isinstance(x, VulkanSummary)]
    assert len(summaries) == 1 and any(f.get("creates") for f in summaries[0].data["fns"])
    store.save()
    again = ScanStore(str(tmp_path)).get(ScanStore.key(path, data))
    assert again == got


def test_a_pipeline_member_also_set_in_a_constructor_links_no_dispatch(root):
    edit("src/app.cpp", "struct Kernels {", "struct Kernels {\n    explicit Kernels(VkPipeline r) : reduce(r) {}")
    k = kernels()
    assert "dispatch" not in k["reduce"].host_facts and "dispatch" in k["blur"].host_facts


def test_a_descriptor_filled_in_after_the_call_gives_no_fact(root):
    edit("src/app.cpp", "        d.size_y = y;\n        return device_->pipeline_for(d);",
         "        VkPipeline p = device_->pipeline_for(d);\n        d.size_y = y;\n        return p;")
    assert host_group(kernels()["blur"]) is None


def test_a_dispatch_bound_only_sometimes_links_nothing(root):
    edit("src/app.cpp", "    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);\n    vkCmdDispatch(cmd, 4, 1, 1);",
         "    if (pipe != VK_NULL_HANDLE)\n        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);\n"
         "    vkCmdDispatch(cmd, 4, 1, 1);")
    k = kernels()
    assert "dispatch" not in k["reduce"].host_facts and "dispatch" in k["blur"].host_facts


def test_a_field_of_a_parameter_assigned_in_the_maker_is_not_the_callers_value(root):
    edit("src/device.cpp", "Device::Built Device::build(const KernelDesc& desc)\n{\n",
         "Device::Built Device::build(KernelDesc desc)\n{\n    desc.size_x = 32;\n")
    edit("src/device.h", "Built build(const KernelDesc& desc);", "Built build(KernelDesc desc);")
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None  # (32 wins, not 16 or 128)


@pytest.mark.parametrize("change", ["        d.size_x++;\n", "        bump(&d.size_x);\n", "        d.size_x.v = 1;\n"])
def test_a_descriptor_field_changed_after_its_assignment_gives_no_fact(root, change):
    edit("src/app.cpp", "        d.size_y = y;\n", "        d.size_y = y;\n" + change)
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None


@pytest.mark.parametrize("old, new", [
    ("spec.mapEntryCount = static_cast<uint32_t>(entries.size());", "spec.mapEntryCount = 1;"),  # id 1 not set
    ("std::vector<uint32_t> values;", "std::vector<uint64_t> values;"),  # 8-byte words: offset 4 is x's high half
    ("values = {desc.size_x, desc.size_y};", "values = {desc.size_x, desc.size_y};\n        load(values.data());"),
    ("values = {desc.size_x, desc.size_y};", "values = {desc.size_x, desc.size_y};\n        load(&values);"),
])
def test_constants_the_map_does_not_set_as_written_give_no_fact(root, old, new):
    edit("src/device.cpp", old, new)
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None


@pytest.mark.parametrize("change", ["    device_->rebuild(&k_.blur);\n", "    VkPipeline& b = k_.blur;\n    b = other_;\n"])
def test_a_pipeline_member_written_through_a_pointer_or_reference_links_no_dispatch(root, change):
    edit("src/app.cpp", "void App::frame(", "void App::reinit()\n{\n" + change + "}\n\nvoid App::frame(")
    k = kernels()
    assert "dispatch" not in k["blur"].host_facts and "dispatch" in k["reduce"].host_facts


def test_a_parameter_written_through_a_reference_is_not_the_callers_value(root):
    edit("src/device.cpp", "Device::Built Device::build(const KernelDesc& desc)\n{\n",
         "Device::Built Device::build(KernelDesc desc)\n{\n    KernelDesc& alias = desc;\n    alias.size_x = 32;\n")
    edit("src/device.h", "Built build(const KernelDesc& desc);", "Built build(KernelDesc desc);")
    assert host_group(kernels()["blur"]) is None


def test_a_pipeline_member_also_set_in_a_local_struct_copied_over_it_links_no_dispatch(root):
    edit("src/app.cpp", "void App::frame(", "Kernels fast_kernels(Device& dev)\n{\n    KernelDesc d;\n    d.name = \"scan\";\n"
         "    d.size_x = 64;\n    d.size_y = 1;\n    Kernels k;\n    k.blur = dev.pipeline_for(d);\n    return k;\n}\n\n"
         "void App::use_fast() { k_ = fast_kernels(*device_); }\n\nvoid App::frame(")
    k = kernels()
    assert "dispatch" not in k["blur"].host_facts and "dispatch" in k["reduce"].host_facts  # k_.blur may be scan's


def test_a_long_chain_of_additions_is_summarised_in_linear_time():
    import time

    from shaderlint.host.vulkan import scan_with_summary

    data = ("VkPipeline p;\nvoid f(const char* name, int x) {\n  std::string q = " + " + ".join(["name"] * 20000)
            + ' + ".spv";\n  int n = ' + " + ".join(["x"] * 20000) + ";\n}\n").encode()
    start = time.process_time()
    assert isinstance(scan_with_summary("x.cpp", data), list)
    assert time.process_time() - start < 8  # (0.7 s; 40 s when the query matched `+` and read each node's parent)


def _stage_from(stage: str) -> None:
    """Device::build with no specialization of its own: its create info's stage is ``stage``."""
    text = Path("src/device.cpp").read_text()
    text = text[:text.index("    std::vector<VkSpecializationMapEntry> entries;")] + text[text.index("    Built out{};"):]
    text = text[:text.index("    ci.stage.sType")] + stage + text[text.index("    ci.layout = out.layout;"):]
    Path("src/device.cpp").write_text(text.replace("Device::Built Device::build(", (
        "static VkSpecializationMapEntry g_entries[2] = {{0, 0, 4}, {1, 4, 4}};\nstatic uint32_t g_values[2];\n"
        "static VkSpecializationInfo g_spec = {2, g_entries, 8, g_values};\n"
        "VkPipelineShaderStageCreateInfo stage_for(VkShaderModule m, uint32_t x, uint32_t y)\n{\n"
        "    VkPipelineShaderStageCreateInfo st{};\n    st.stage = VK_SHADER_STAGE_COMPUTE_BIT;\n    st.module = m;\n"
        "    st.pName = \"main\";\n    g_values[0] = x;\n    g_values[1] = y;\n    st.pSpecializationInfo = &g_spec;\n"
        "    return st;\n}\n\nDevice::Built Device::build("), 1))
    edit("shaders/blur.comp", "layout(local_size_x_id", "layout(local_size_x = 32, local_size_y = 4) in;\nlayout(local_size_x_id")


def test_a_stage_made_by_another_function_may_carry_constants(root):
    _stage_from("    ci.stage = stage_for(module, desc.size_x, desc.size_y);\n")
    assert host_group(kernels()["blur"]) is None  # (not the shader's own 32x4: the helper sets 16x8)


def test_a_stage_filled_here_without_constants_runs_the_shaders_own_size(root):
    _stage_from("    VkPipelineShaderStageCreateInfo st{};\n    st.stage = VK_SHADER_STAGE_COMPUTE_BIT;\n"
                "    st.module = module;\n    st.pName = \"main\";\n    ci.stage = st;\n")
    assert host_group(kernels()["blur"]) == ((32, 4, 1), "src/app.cpp", 30)


def test_a_function_holding_thousands_of_lambdas_is_summarised_in_linear_time():
    import time

    from shaderlint.host.vulkan import scan_with_summary

    body = "".join(f'  r.add("op{i}", [&](int a, int b) {{ int c = a + b + d.size + {i}; return c * a; }});\n'
                   for i in range(4000))
    data = ('VkPipeline p;\nvoid reg(Registry& r) {\n  Desc d;\n  d.name = "blur";\n' + body + "  make(d);\n}\n").encode()
    start = time.process_time()
    assert isinstance(scan_with_summary("x.cpp", data), list)
    assert time.process_time() - start < 5  # (0.9 s; 10 s when each identifier was tested against every lambda)


def test_deeply_nested_blocks_are_summarised_in_linear_time():
    import time

    from shaderlint.host.vulkan import scan_with_summary

    n = 1000
    data = ("VkPipeline p;\nvoid f(Kernels& k, int x) {\n" + "".join(f"  {{ k.p{i} = make(x);\n" for i in range(n))
            + "  }" * n + "\n}\n").encode()
    start = time.process_time()
    assert isinstance(scan_with_summary("x.cpp", data), list)
    assert time.process_time() - start < 5  # (0.2 s; 10 s when each store climbed its parents to the body)


def test_map_entries_assigned_whole_give_no_fact(root):
    edit("src/device.cpp", "entries.push_back({0, 0, sizeof(uint32_t)});\n        entries.push_back({1, 4, sizeof(uint32_t)});",
         "entries = {{0, 0, sizeof(uint32_t)}, {1, 4, sizeof(uint32_t)}};")
    edit("shaders/blur.comp", "layout(local_size_x_id", "layout(local_size_x = 32, local_size_y = 4) in;\nlayout(local_size_x_id")
    assert host_group(kernels()["blur"]) is None  # (not 32x4 as if no constants were set: the host sets 16x8)


def test_a_descriptor_read_after_a_call_it_was_handed_to_gives_no_fact(root):
    edit("src/app.cpp", "        d.size_y = y;\n        return device_->pipeline_for(d);",
         "        d.size_y = y;\n        tweak(d);  // (may change it)\n        KernelDesc e;\n        e.name = d.name;\n"
         "        e.size_x = d.size_x;\n        e.size_y = d.size_y;\n        return device_->pipeline_for(e);")
    assert host_group(kernels()["blur"]) is None


def test_a_loop_variable_named_like_a_pipeline_member_is_not_that_member(root):
    edit("src/app.cpp", "    run_scan(cmd, k_.scan, count);\n}",
         "    run_scan(cmd, k_.scan, count);\n    for (VkPipeline scan : extra_)\n        run_fixed(cmd, scan);\n}")
    mode, at = kernels()["scan"].host_facts["dispatch"]
    assert at.line == 50  # (run_fixed's dispatch, line 44, runs the loop's pipelines, not k_.scan)


ALT_BLUR = """#include "device.h"

VkPipeline alt_blur(VkDevice dev, VkPipelineLayout layout, VkShaderModule module)
{
    const char* path = "build/spv/blur.spv";
    load_module(dev, path, &module);
    VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    uint32_t values[2] = {4, 4};
    VkSpecializationInfo spec{};
    spec.mapEntryCount = 2;
    spec.pMapEntries = entries;
    spec.dataSize = sizeof(values);
    spec.pData = values;
    VkComputePipelineCreateInfo ci{};
    ci.stage.module = module;
    ci.stage.pSpecializationInfo = &spec;
    ci.layout = layout;
    VkPipeline p = VK_NULL_HANDLE;
    vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &p);
    return p;
}
"""


def test_a_creation_from_a_shader_path_that_does_not_resolve_but_names_a_shader_makes_sizes_unknown(root):
    (root / "src" / "alt.cpp").write_text(ALT_BLUR)  # (blur.spv built elsewhere: it may be blur.comp, at 4x4)
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None
    assert "dispatch" in k["blur"].host_facts  # (the dispatches still link)


# A file that never names a Vulkan pipeline type is not summarised (host/vulkan.py's marks): what it
# calls and assigns is looked for by name (host/index.py's _unseen) before a fact rests on it.
UNSUMMARISED_CALLER = """#include "device.h"

// no pipeline type is named here: `auto` keeps what the wrapper returns
void prewarm(Device& dev)
{
    KernelDesc d;
    d.name = "blur";
    d.size_x = 8;
    d.size_y = 8;
    auto p = dev.pipeline_for(d);
    (void)p;
}
"""

UNSUMMARISED_STORE = """#include "app.h"

void App::swap_blur() { k_.blur = k_.reduce; }
"""


def test_a_wrapper_called_from_a_file_not_summarised_makes_every_group_size_unknown(root):
    (root / "src" / "prewarm.cpp").write_text(UNSUMMARISED_CALLER)
    k = kernels()
    assert host_group(k["blur"]) is None and host_group(k["reduce"]) is None  # 8x8 elsewhere, maybe
    (root / "src" / "prewarm.cpp").write_text(UNSUMMARISED_CALLER.replace("dev.pipeline_for(d)", "d.name.size()"))
    assert host_group(kernels()["blur"]) == ((16, 8, 1), "src/app.cpp", 30)  # (no call: as before)


def test_a_pipeline_field_assigned_in_a_file_not_summarised_links_no_dispatch(root):
    (root / "src" / "swap.cpp").write_text(UNSUMMARISED_STORE)
    k = kernels()
    assert "dispatch" not in k["blur"].host_facts  # k_.blur may hold reduce's pipeline
    assert k["reduce"].host_facts["dispatch"][0] == "threadgroups"
    assert host_group(k["blur"]) == ((16, 8, 1), "src/app.cpp", 30)  # (its creation is still the one seen)
