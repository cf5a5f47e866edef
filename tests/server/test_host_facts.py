"""Host facts in the editor: a kernel buffer's findings use the launches in the project's host code,
as the command line's do, and follow the host file when it is saved or changes on disk."""

from __future__ import annotations

import asyncio
import os
import re
import shutil

import pytest
from lsprotocol import types

from tests.server.conftest import ROOT, TIMEOUT, change, codes, open_doc, refreshed, wait_diagnostics

SAMPLE = os.path.join(ROOT, "examples", "host-cuda")


def project(tmp_path):
    for name in ("blur.cu", "launch.cpp", "shaderlint.toml"):
        shutil.copy(os.path.join(SAMPLE, name), tmp_path / name)
    return tmp_path / "blur.cu", tmp_path / "launch.cpp"


def set_block(launch, dims: str) -> None:
    launch.write_text(re.sub(r"dim3 block\([^)]*\);", f"dim3 block({dims});", launch.read_text(), count=1))


@pytest.mark.lsp(init={"select": ["SL501"]})
async def test_a_host_launch_gives_the_kernel_its_block_size_and_follows_saves(client, tmp_path):
    kernel, launch = project(tmp_path)
    # Another kernel, larger than box_blur, so that an edit of box_blur can be linted per function.
    body = "".join(f"        acc = acc * 0.5f + src[(i + {k}) % n];\n" for k in range(40))
    with open(kernel, "a") as fh:
        fh.write("\n__global__ void other(const float* src, float* dst, int n) {\n"
                 "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n"
                 f"        float acc = 0.0f;\n{body}        dst[i] = acc;\n    }}\n}}\n")
    uri = kernel.as_uri()
    open_doc(client, uri, kernel.read_text())
    # The first lint does not wait for the host index; once it is built the buffer is linted again.
    diags = await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL501"])
    assert "13×13" in diags[0].message and "launch.cpp:7" in diags[0].message
    related = [(r.location.uri, r.location.range.start.line) for r in diags[0].related_information or ()]
    assert (launch.as_uri(), 6) in related  # the host line, in the host file

    # Typing in the kernel keeps the host facts (the buffer is linted whole: the per-function lint
    # would lint the edited kernel without them).
    change(client, uri, 2, ((8, 18, 8, 19), "5"))  # 'float sum = 0.0f;' -> '0.5f'
    published = client.published  # type: ignore[attr-defined]
    await wait_diagnostics(client, uri, lambda d: published[-1][1] == 2)
    assert codes(published[-1][2]) == ["SL501"]

    # The host file is edited and saved in the editor: a warp-multiple block, no SL501.
    host_uri = launch.as_uri()
    open_doc(client, host_uri, launch.read_text(), language_id="cpp")
    set_block(launch, "32, 8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=host_uri)))
    await wait_diagnostics(client, uri, lambda d: codes(d) == [])

    # Changed on disk by another tool: the client's watched-files notification (the server asked for it).
    assert [r.method for r in client.registrations] == ["workspace/didChangeWatchedFiles"]
    set_block(launch, "12, 12")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=host_uri, type=types.FileChangeType.Changed)]))
    diags = await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL501"])
    assert "12×12" in diags[0].message


def test_the_root_of_a_document_and_its_index(tmp_path):
    """Which host code a document's facts come from: its configuration's directory, else the workspace
    folder it is in, else none; ``host-code = false`` turns them off; the index links the launch."""
    from shaderlint.config import load_config
    from shaderlint.config import Settings
    from shaderlint.server.hostfacts import HostIndexes

    kernel, launch = project(tmp_path)
    configured = load_config(str(tmp_path / "shaderlint.toml"))
    hosts = HostIndexes(lambda p: configured, lambda *a: None, lambda: [])
    assert hosts.root_for(str(kernel), configured) == os.path.normcase(str(tmp_path))
    assert hosts.root_for(str(kernel), Settings()) is None  # no configuration, no workspace folder
    hosts_ws = HostIndexes(lambda p: Settings(), lambda *a: None, lambda: [str(tmp_path.parent)])
    assert hosts_ws.root_for(str(kernel), Settings()) == os.path.normcase(str(tmp_path.parent))
    off = configured.with_overrides(host_code=False)
    assert hosts.root_for(str(kernel), off) is None
    assert hosts.facts_for(str(kernel), off) is None
    # No event loop here: nothing is built in the background, and the lint is not held up.
    assert hosts.facts_for(str(kernel), configured) is None
    index = hosts.build(str(tmp_path))
    facts = index.facts_for(str(kernel))
    assert [(name, [(l.group, os.path.basename(l.at.path), l.at.line) for l in ls]) for name, ls in facts.launches] == [
        ("box_blur", [((13, 13, 1), "launch.cpp", 9)])]
    root = os.path.normcase(str(tmp_path))
    assert hosts.changed(str(launch)) == [root] and hosts.changed(str(kernel)) == [root]
    assert hosts.changed(str(tmp_path / "shaderlint.toml")) == [root]
    assert hosts.changed(str(tmp_path / "notes.txt")) == []  # no host file, no kernel: no rebuild
    assert hosts.changed(str(tmp_path.parent / "other.cpp")) == []  # outside the root


@pytest.mark.lsp(pull=True, init={"select": ["SL501"]})
async def test_a_pulling_client_is_asked_to_pull_again_when_the_host_facts_arrive(client, tmp_path):
    kernel, _ = project(tmp_path)
    uri = kernel.as_uri()
    event = refreshed(client)
    open_doc(client, uri, kernel.read_text())
    ident = types.TextDocumentIdentifier(uri=uri)

    async def until_sl501() -> list[str]:
        while True:
            event.clear()
            report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
            if codes(report.items) == ["SL501"]:
                return codes(report.items)
            await event.wait()  # (no polling: only a refresh from the server makes the next pull)

    assert await asyncio.wait_for(until_sl501(), TIMEOUT) == ["SL501"]


@pytest.mark.lsp(init={"select": ["SL105"]})
async def test_a_metal_kernel_gets_the_dispatch_mode_of_its_swift_host_code(client, tmp_path):
    # SL105 on Metal is silent unless the dispatch mode is known: here it comes from Compute.swift's
    # dispatchThreadgroups (examples/host-metal), as in a command-line run.
    sample = os.path.join(ROOT, "examples", "host-metal")
    for name in ("Compute.swift", "Shaders.metal", "shaderlint.toml"):
        shutil.copy(os.path.join(sample, name), tmp_path / name)
    uri = (tmp_path / "Shaders.metal").as_uri()
    open_doc(client, uri, (tmp_path / "Shaders.metal").read_text(), language_id="metal")
    diags = await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL105"])
    related = {(r.location.uri, r.location.range.start.line, r.message) for r in diags[0].related_information or ()}
    assert ((tmp_path / "Compute.swift").as_uri(), 41, "dispatched here") in related


@pytest.mark.lsp(workspace=True, init={"select": ["SL501"]})
async def test_without_a_configuration_the_workspace_folder_is_the_root(client, tmp_path):
    kernel, _ = project(tmp_path)
    os.unlink(tmp_path / "shaderlint.toml")  # (the rule comes from the client's settings)
    uri = kernel.as_uri()
    open_doc(client, uri, kernel.read_text())
    diags = await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL501"])
    assert "13×13" in diags[0].message
