"""The host scanners' byte-level prefilters (session 18): a file they reject is one in which the
scanner finds nothing, and such a file is not parsed."""

from __future__ import annotations

import shaderlint.host.vulkan as vulkan

CREATE = b"""
VkPipeline make(VkDevice d, VkComputePipelineCreateInfo* ci) {
    VkPipeline p;
    VkShaderModule m = load("shaders/blur.comp.spv");
    vkCreateComputePipelines(d, 0, 1, ci, 0, &p);
    return p;
}
void run(VkCommandBuffer cmd) { vkCmdDispatch(cmd, 4, 2, 1); }
"""


def _parses(monkeypatch) -> list[int]:
    seen: list[int] = []
    real = vulkan.parse
    monkeypatch.setattr(vulkan, "parse", lambda data, g: seen.append(len(data)) or real(data, g))
    return seen


def test_every_creation_name_holds_a_prefilter_name():
    for name in vulkan._CREATE:
        assert any(m.decode() in name for m in vulkan._CREATE_NAMES), name


def test_a_vulkan_file_creating_a_pipeline_is_read(monkeypatch):
    seen = _parses(monkeypatch)
    got = vulkan.scan("host.cpp", CREATE)
    assert seen and [(r.shader_literal, r.grid) for r in got] == [("shaders/blur.comp.spv", (4, 2, 1))]


def test_a_file_naming_a_compute_pipeline_without_creating_one_is_not_parsed(monkeypatch):
    # (WebGPU's and Metal's compute pipelines: the marks are there, no creation the scanner counts)
    data = CREATE.replace(b"vkCreateComputePipelines", b"wgpuDeviceCreateComputePipeline")
    seen = _parses(monkeypatch)
    assert vulkan.scan("host.cpp", data) == [] and seen == []
    monkeypatch.undo()
    assert vulkan._scan("host.cpp", data)[0] == []  # (what the whole reading finds there too)


# ---- Constants: a declaration's qualifiers are read only where its bytes hold ``const`` ------------------


def _groups(src: bytes) -> list:
    from shaderlint.host.cuda import scan

    return [r.group for r in scan("host.cu", src) if r.api == "cuda"]


def test_a_file_scope_const_is_constant_wherever_the_file_starts():
    body = b"const int N = 64;\nint M = 32;\nvoid f(float* x) {\n  k<<<1, N>>>(x);\n  k<<<1, M>>>(x);\n}\n"
    # (the tree's root starts at the first token: the qualifiers are found at their place after blank lines)
    for lead in (b"", b"\n\n\n   \n", b"// a comment first\n"):
        assert _groups(lead + body) == [(64, 1, 1), None]


def test_a_const_loop_counter_and_a_constexpr_local():
    src = (b"void f(float* x) {\n  constexpr int B = 128;\n  for (const int i : {1, 2}) { k<<<1, i>>>(x); }\n"
           b"  k<<<1, B>>>(x);\n  int c = 2; /* const */ k<<<1, c>>>(x);\n}\n")
    assert _groups(src) == [None, (128, 1, 1), (2, 1, 1)]


def test_a_file_dispatching_only_indirectly_or_by_base_is_read():
    # (vulkan-hpp's other dispatch calls: their names hold no "dispatch(", and a file must still be read)
    hpp = b"""
vk::Pipeline make(vk::Device d, vk::ComputePipelineCreateInfo ci) {
    auto m = load("shaders/blur.comp.spv");
    return d.createComputePipeline(nullptr, ci).value;
}
void run(vk::CommandBuffer cmd, vk::Pipeline p) { cmd.bindPipeline(vk::PipelineBindPoint::eCompute, p); CALL }
"""
    for call in (b"cmd.dispatch(4, 2, 1);", b"cmd.dispatchIndirect(buf, 0);", b"cmd.dispatchBase(0, 0, 0, 4, 2, 1);",
                 b"cmd.dispatch (4, 2, 1);"):
        got = vulkan.scan("host.cpp", hpp.replace(b"CALL", call))
        assert [r.shader_literal for r in got] == ["shaders/blur.comp.spv"], call
