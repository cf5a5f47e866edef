"""The Vulkan host scanner: dispatches linked to a compute shader only where the file leaves no choice."""

from __future__ import annotations

import random

import pytest

from shaderlint.host.vulkan import compute_literal, scan

CREATE = "  vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &info, nullptr, &pipe);\n"


def run(src: str):
    return scan("app/main.cpp", src.encode())


def test_dispatch_linked_through_the_files_only_compute_pipeline():
    src = ("#define GX 64\nvoid create(VkDevice d) {\n  VkShaderModule m = loadShader(\"shaders/blur.comp.spv\");\n"
           "  VkShaderModule v = loadShader(\"shaders/tri.vert.spv\");\n" + CREATE + "}\n"
           "void record(VkCommandBuffer cmd, uint32_t w) {\n  vkCmdDispatch(cmd, (w + 15) / 16, GX / 16, 1);\n"
           "  vkCmdDispatch(cmd, 4, 4, 1);\n}\n")
    rs = run(src)
    assert [(r.api, r.shader_literal, r.grid, r.dispatch, r.at.line) for r in rs] == [
        ("vulkan", "shaders/blur.comp.spv", None, "threadgroups", 8),
        ("vulkan", "shaders/blur.comp.spv", (4, 4, 1), "threadgroups", 9),
    ]
    assert rs[0].specialization == ()


def test_two_compute_shaders_in_the_file_link_only_within_their_function():
    src = ("void a(VkCommandBuffer c) {\n  auto m = loadShader(\"a.comp\");\n" + CREATE + "  vkCmdDispatch(c, 1, 1, 1);\n}\n"
           "void b(VkCommandBuffer c) {\n  auto m = loadShader(\"b.comp\");\n" + CREATE + "}\n"
           "void rec(VkCommandBuffer c) {\n  vkCmdDispatch(c, 2, 2, 1);\n}\n")
    rs = run(src)
    assert [(r.shader_literal, r.grid) for r in rs] == [("a.comp", (1, 1, 1))]  # rec's dispatch: unknown pipeline


def test_no_pipeline_creation_no_link():
    assert run("void f(VkCommandBuffer c) {\n  auto m = loadShader(\"a.comp.spv\");\n  vkCmdDispatch(c, 1, 1, 1);\n}\n") == []


def test_file_creating_no_compute_pipeline_is_not_parsed(monkeypatch):
    import shaderlint.host.vulkan as vulkan

    parsed = []
    real = vulkan.parse
    monkeypatch.setattr(vulkan, "parse", lambda data, grammar: parsed.append(grammar) or real(data, grammar))
    src = "void f(VkCommandBuffer c) {\n  auto m = loadShader(\"a.comp.spv\");\n  vkCmdDispatch(c, 1, 1, 1);\n}\n"
    assert run(src) == [] and parsed == []
    assert len(run(src.replace("  vkCmdDispatch", CREATE + "  vkCmdDispatch"))) == 1 and parsed == ["cpp"]
    # every creation the scanner counts names a compute pipeline
    assert all(vulkan._CREATE_MARK.decode() in name for name in vulkan._CREATE)


def test_pipelines_created_several_at_once_do_not_link():
    src = ("void f(VkCommandBuffer c, uint32_t n) {\n  auto m = loadShader(\"a.comp.spv\");\n"
           "  vkCreateComputePipelines(d, 0, n, infos, nullptr, pipes);\n  vkCmdDispatch(c, 1, 1, 1);\n}\n")
    assert run(src) == []


def test_specialization_constants_positional_and_designated():
    src = ("void f(VkCommandBuffer c) {\n  auto m = loadShader(\"s.comp.spv\");\n"
           "  VkSpecializationMapEntry e[] = {{0, 0, sizeof(uint32_t)}, {.constantID = 1, .offset = 4, .size = 4}};\n"
           "  const uint32_t vals[] = {16, 8};\n  VkSpecializationInfo si{};\n  si.pData = vals;\n"
           + CREATE + "  vkCmdDispatch(c, 1, 1, 1);\n}\n")
    assert run(src)[0].specialization == ((0, 16), (1, 8))


def test_specialization_not_read_is_unknown():
    src = ("void f(VkCommandBuffer c, uint32_t bs) {\n  auto m = loadShader(\"s.comp.spv\");\n"
           "  VkSpecializationMapEntry e{};\n  e.constantID = 0; e.offset = 0; e.size = 4;\n"
           "  VkSpecializationInfo si{1, &e, 4, &bs};\n" + CREATE + "  vkCmdDispatch(c, 1, 1, 1);\n}\n")
    assert run(src)[0].specialization is None


def test_vulkan_hpp_dispatch():
    src = ("void f(vk::CommandBuffer c, vk::Device d) {\n  auto m = loadShader(\"k.comp.spv\");\n"
           "  auto p = d.createComputePipeline(nullptr, info);\n  c.dispatch(8, 1, 1);\n}\n")
    assert [(r.shader_literal, r.grid) for r in run(src)] == [("k.comp.spv", (8, 1, 1))]


@pytest.mark.parametrize("s,ok", [("blur.comp", True), ("shaders/blur.comp.spv", True), ("x.spv", True),
                                  ("x.glsl", True), ("tri.vert.spv", False), ("a.frag", False), ("a.txt", False)])
def test_compute_literal(s, ok):
    assert compute_literal(s) is ok


@pytest.mark.parametrize("seed", range(10))
def test_never_raises_on_noise(seed):
    rnd = random.Random(seed)
    pieces = [b"vkCmdDispatch", b"(", b")", b"{", b"}", b"\"a.comp\"", b",", b"VkSpecializationMapEntry", b"pData",
              b"=", b"vkCreateComputePipelines", b"\xff", b"1", b";", b"\n", b".dispatch("]
    assert isinstance(scan("x.cpp", b"".join(rnd.choice(pieces) for _ in range(400))), list)
