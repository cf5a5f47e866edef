"""Hover (rule document, kernel summary), code lens, and settings from the client."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types

from tests.server.conftest import codes, open_doc, wait_diagnostics

CUDA = """\
__global__ void __launch_bounds__(256) scale(int *out, const int *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int tmp[8];
    for (int k = 0; k < 8; ++k) tmp[k] = in[i + k];
    for (int j = i; j < n; j += 256) out[j] = tmp[in[j] & 7] / n;  // a load divided in every iteration
}
"""
METAL = """\
#include <metal_stdlib>
using namespace metal;

[[max_total_threads_per_threadgroup(64)]]
kernel void tile(device float *out [[buffer(0)]],
                 constant uint &n [[buffer(1)]],
                 uint gid [[thread_position_in_grid]])
{
    out[gid] = float(gid / n);
}
"""


async def _hover(client, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))


async def test_hover_on_a_diagnostic_shows_the_rule_document(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 2)
    div = next(d for d in diags if d.code == "SL201")
    h = await _hover(client, uri, div.range.start.line, div.range.start.character)
    assert h.contents.kind == types.MarkupKind.Markdown
    assert "# SL201 variable-integer-division" in h.contents.value
    assert "## Why is this bad?" in h.contents.value
    assert div.message in h.contents.value
    assert h.range == div.range
    stack = next(d for d in diags if d.code == "SL101")
    h = await _hover(client, uri, stack.range.start.line, stack.range.start.character)
    assert "# SL101 dynamic-stack-array" in h.contents.value
    # Nowhere in particular: nothing.
    assert await _hover(client, uri, 2, 2) is None


async def test_hover_on_a_kernel_name(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    await wait_diagnostics(client, uri)
    h = await _hover(client, uri, 0, CUDA.index("scale(") + 2)
    text = h.contents.value
    assert "`scale`" in text
    assert "threads per group: 256" in text and "__launch_bounds__" in text
    assert "`int *out`" in text and "`int n`" in text
    assert "on `sm_80`" in text  # the estimate names its target
    assert h.range.start == types.Position(line=0, character=CUDA.index("scale("))
    # the estimate with the range ptxas gave for real kernels estimated alike (sm_80 was measured)
    from shaderlint.estimate.uncertainty import register_interval
    regs = int(text.split("registers per thread: ~")[1].split(" ")[0])
    iv = register_interval("cuda", "sm_80", regs)
    assert iv is not None and f"ptxas gave {iv.low}–{iv.high} for 8 in 10 real kernels" in text

    uri = (tmp_path / "tile.metal").as_uri()
    open_doc(client, uri, METAL, language_id="metal")
    await wait_diagnostics(client, uri)
    line = METAL.splitlines().index(next(x for x in METAL.splitlines() if "kernel void" in x))
    h = await _hover(client, uri, line, METAL.splitlines()[line].index("tile"))
    assert "`tile`" in h.contents.value and "threads per group: 64" in h.contents.value
    assert "on `apple-m1`" in h.contents.value
    assert "ptxas gave" not in h.contents.value  # no measured range for Metal



async def test_hover_reads_a_workgroup_size_an_included_file_declares(client, tmp_path):
    (tmp_path / "head.glsl").write_text("layout(local_size_x = 1, local_size_y = 128) in;\n")
    text = ('#version 450\n#extension GL_GOOGLE_include_directive : enable\n#include "head.glsl"\n'
            "layout(binding = 0) buffer A { float a[]; };\n"
            "void main() { a[gl_GlobalInvocationID.y] *= 2.0; }\n")
    (tmp_path / "k.comp").write_text(text)  # (includes are found next to the file on disk)
    uri = (tmp_path / "k.comp").as_uri()
    open_doc(client, uri, text, language_id="glsl")
    await wait_diagnostics(client, uri)
    h = await _hover(client, uri, 4, text.splitlines()[4].index("main") + 1)
    assert "threads per group: 128 (1×128×1), from `layout(local_size_…) in;` in an included file" in h.contents.value

@pytest.mark.lsp(init={"codeLens": True, "target": "sm_90"})
async def test_code_lens_above_each_kernel(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    await wait_diagnostics(client, uri)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert len(lenses) == 1
    assert lenses[0].range.start.line == 0
    assert "256 threads/group" in lenses[0].command.title and "sm_90" in lenses[0].command.title
    assert "registers" in lenses[0].command.title and "–" in lenses[0].command.title  # the measured range


@pytest.mark.lsp(init={"codeLens": True})
async def test_code_lens_marks_an_estimate_that_cannot_see_a_callee(client, tmp_path):
    uri = (tmp_path / "u.cu").as_uri()
    src = ("__device__ float helper(float x);\n"
           "__global__ void k(float* out, const float* in) { out[threadIdx.x] = helper(in[threadIdx.x]); }\n")
    open_doc(client, uri, src)
    await wait_diagnostics(client, uri)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert len(lenses) == 1
    title = lenses[0].command.title
    assert "registers" in title and re.search(r"~\d+\+", title), title  # likely low: a callee not seen
    # a floor: no two-sided range, and the occupancy it implies is a ceiling
    assert "–" not in title and "occupancy ≤" in title, title
    h = await _hover(client, uri, 1, src.splitlines()[1].index("k(") + 0)
    assert re.search(r"registers per thread: ~\d+\+ \(estimate, likely low", h.contents.value), h.contents.value


async def test_code_lens_is_off_by_default(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    await wait_diagnostics(client, uri)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert not lenses


@pytest.mark.lsp(init={"ignore": ["SL201"]})
async def test_ignore_from_initialization_options(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    assert codes(await wait_diagnostics(client, uri)) == ["SL101"]


@pytest.mark.lsp(init={"select": ["SL201"]})
async def test_select_from_initialization_options(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    assert codes(await wait_diagnostics(client, uri)) == ["SL201"]


@pytest.mark.lsp(config={"ignore": ["SL201"], "target": ""})
async def test_ignore_from_workspace_configuration(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    assert codes(await wait_diagnostics(client, uri)) == ["SL101"]
    # The client's settings change: the server asks again and re-lints.
    client.set_configuration({"ignore": ["SL101"]}, section="shaderlint")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert codes(await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL201"])) == ["SL201"]


@pytest.mark.lsp(capabilities="neovim@v0.7.0")
async def test_settings_pushed_with_did_change_configuration(client, tmp_path):
    """A client without workspace/configuration (Neovim 0.7) sends the settings in the notification."""
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA, language_id="cuda")
    assert codes(await wait_diagnostics(client, uri)) == ["SL101", "SL201"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shaderlint": {"ignore": ["SL101"]}}))
    await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL201"])


async def test_project_configuration_file_is_merged(client, tmp_path):
    (tmp_path / "shaderlint.toml").write_text('ignore = ["SL101"]\n')
    uri = (tmp_path / "src" / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    assert codes(await wait_diagnostics(client, uri)) == ["SL201"]


async def test_invalid_project_configuration_is_reported(client, tmp_path):
    (tmp_path / "shaderlint.toml").write_text('ignore = "SL101"\n')
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    diags = await wait_diagnostics(client, uri)
    assert codes(diags) == ["SL001", "SL101", "SL201"]
    assert "configuration not used" in next(d for d in diags if d.code == "SL001").message


@pytest.mark.lsp(init={"ignore": ["nonsense"], "target": "no-such-gpu", "debounce": "fast"})
async def test_invalid_client_settings_are_logged_and_dropped(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, CUDA)
    assert codes(await wait_diagnostics(client, uri)) == ["SL101", "SL201"]
    logged = "\n".join(m.message for m in client.log_messages)
    assert "'nonsense' is not a rule code" in logged
    assert "'no-such-gpu' is not a known target" in logged
    assert "debounce must be" in logged
