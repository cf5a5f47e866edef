"""Exact figures for hover and code lens (shaderlint.server.compiled): compiled in the background, never
waited on, one compile at a time, none for a text the document no longer has."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from lsprotocol import types

from shaderlint.config import Settings
from shaderlint.estimate import ptxas
from shaderlint.estimate.ptxas import PtxasKernel, PtxasResult, ptxas_available
from shaderlint.estimate.targets import get_target
from shaderlint.server import compiled
from shaderlint.server.compiled import CompiledFigures, Figures, Lookup, apply_exact
from tests.server.conftest import open_doc, wait_diagnostics

SM80 = get_target("sm_80")


class FakeCompiler:
    """compile_ptxas replaced: registers = the text's length; each compile waits for ``gate`` (set by
    default) and is recorded."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.running = threading.Event()

    def __call__(self, text, arch, flags, **kw):
        self.texts.append(text)
        self.running.set()
        assert self.gate.wait(10)
        k = PtxasKernel("k", "k(float*)", "_Z1kPf", arch, len(text), 16, 0, 0, 0, 0)
        return PtxasResult({k.mangled: k}, arch=arch)


@pytest.fixture()
def fake(monkeypatch, tmp_path):
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(ptxas, "ptxas_available", lambda: True)
    monkeypatch.setattr(ptxas, "cached_ptxas", lambda *a, **k: None)
    f = FakeCompiler()
    monkeypatch.setattr(ptxas, "compile_ptxas", f)
    return f


def _doc(uri: str, version: int, text: str):
    return SimpleNamespace(uri=uri, path=f"/tmp/x/{uri[-4:]}", version=version, data=text.encode(), language="cuda",
                           result=None)


def test_a_lookup_never_waits_and_the_figures_arrive_once(fake):
    versions = {"file:///a.cu": 1}
    ready: list[str] = []
    figures = CompiledFigures(versions.get, ready.append)
    doc = _doc("file:///a.cu", 1, "__global__ void k(float* p) {}")
    fake.gate.clear()
    got = figures.lookup(doc, Settings(), SM80)
    assert got is not None and got.pending and got.kernels is None  # queued, not waited on
    assert fake.running.wait(10)
    assert figures.lookup(doc, Settings(), SM80).pending  # still compiling: no second compile queued
    fake.gate.set()
    figures.wait(doc.uri, 10)
    got = figures.lookup(doc, Settings(), SM80)
    assert not got.pending and got.for_kernel("k") == Figures("ptxas", len(doc.data) + 1, 16, 0, None, "k(float*)")
    assert len(fake.texts) == 1 and ready == [doc.uri] and figures.started == 1
    figures.shutdown()


def test_a_document_edited_before_its_compile_starts_is_not_compiled_for_the_old_text(fake):
    versions = {"file:///a.cu": 1, "file:///b.cu": 1}
    figures = CompiledFigures(versions.get, None, workers=1)
    fake.gate.clear()
    busy = _doc("file:///b.cu", 1, "__global__ void k(float* p) { /* b */ }")
    figures.lookup(busy, Settings(), SM80)  # occupies the one worker
    assert fake.running.wait(10)
    old = _doc("file:///a.cu", 1, "__global__ void k(float* p) {}")
    figures.lookup(old, Settings(), SM80)  # queued behind it
    versions["file:///a.cu"] = 2  # the user typed: version 1 is stale before its compile starts
    fake.gate.set()
    figures.wait(busy.uri, 10)
    figures.wait(old.uri, 10)
    assert figures.skipped == 1 and fake.texts == [busy.data.decode() + "\n"]
    new = _doc("file:///a.cu", 2, "__global__ void k(float* p) { p[0] = 1; }")
    assert figures.lookup(new, Settings(), SM80).pending
    figures.wait(new.uri, 10)
    assert figures.lookup(new, Settings(), SM80).for_kernel("k").registers == len(new.data) + 1
    figures.shutdown()


def test_a_newer_text_cancels_the_queued_compile_of_the_older(fake):
    versions = {"file:///a.cu": 1, "file:///b.cu": 1}
    figures = CompiledFigures(versions.get, None, workers=1)
    fake.gate.clear()
    figures.lookup(_doc("file:///b.cu", 1, "__global__ void k(float* p) { /* b */ }"), Settings(), SM80)
    assert fake.running.wait(10)
    figures.lookup(_doc("file:///a.cu", 1, "__global__ void k(float* p) {}"), Settings(), SM80)
    versions["file:///a.cu"] = 2
    newer = _doc("file:///a.cu", 2, "__global__ void k(float* p) { p[0] = 2; }")
    figures.lookup(newer, Settings(), SM80)
    fake.gate.set()
    figures.wait(newer.uri, 10)
    assert [t for t in fake.texts if "/* b */" not in t] == [newer.data.decode() + "\n"]
    figures.shutdown()


def test_no_compiler_no_lookup(monkeypatch):
    monkeypatch.setattr(ptxas, "ptxas_available", lambda: False)
    figures = CompiledFigures(lambda uri: 1)
    assert figures.lookup(_doc("file:///a.cu", 1, "x"), Settings(), SM80) is None
    metal = SimpleNamespace(**{**vars(_doc("file:///a.metal", 1, "x")), "language": "metal"})
    assert figures.lookup(metal, Settings(), get_target("apple-m1")) is None
    assert CompiledFigures(lambda uri: 1, workers=0).lookup(_doc("file:///a.cu", 1, "x"), Settings(), SM80) is None


def test_exact_figures_replace_the_estimate_in_the_summary_and_say_so():
    from shaderlint.server.hover import KernelSummary

    fn = SimpleNamespace(name="k")
    s = KernelSummary(fn, "sm_80", 256, registers=30.0, stack_bytes=0, shared_bytes=0, occupancy=1.0,
                      notes=("an estimate's assumption",))
    apply_exact(s, Lookup("ptxas", kernels={"k": [Figures("ptxas", 128, 8, 0), Figures("ptxas", 40, 0, 0)]}), SM80)
    assert (s.source, s.registers, s.stack_bytes) == ("ptxas", 128, 8)
    assert s.occupancy == pytest.approx(0.25) and s.limiter == "registers"
    assert "128 registers (ptxas)" in s.one_line() and "(estimate)" not in s.one_line()
    pending = KernelSummary(fn, "sm_80", 256, registers=30.0)
    apply_exact(pending, Lookup("ptxas", pending=True), SM80)
    assert pending.source == "estimate" and "compiling in the background" in pending.notes[0]
    assert "~30 registers" in pending.one_line()


@pytest.mark.skipif(not ptxas_available(), reason="nvcc not on PATH")
@pytest.mark.lsp(init={"codeLens": True})
async def test_the_server_shows_the_estimate_then_ptxas_figures(client, tmp_path):
    import asyncio

    # a text no cache has seen (the server's cache directory is the user's)
    text = (f"// {tmp_path}\n__global__ void __launch_bounds__(128) k(float* p, int n) {{\n"
            "    float a[8];\n    for (int i = 0; i < 8; ++i) a[i] = p[i * n];\n"
            "    p[threadIdx.x] = a[threadIdx.x & 7];\n}\n")
    path = tmp_path / "k.cu"
    uri = path.as_uri()
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri)
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    seen = getattr(client, "code_lens_refreshes", 0)  # (settings from the client refresh them too)
    (lens,) = await client.text_document_code_lens_async(params)
    assert "~" in lens.command.title and "(estimate)" in lens.command.title
    for _ in range(600):  # the server asks for a code lens refresh when the compile is done
        if getattr(client, "code_lens_refreshes", 0) > seen:
            seen = client.code_lens_refreshes
            (lens,) = await client.text_document_code_lens_async(params)
            if "(ptxas)" in lens.command.title:
                break
        await asyncio.sleep(0.1)
    path.write_text(text)
    want = ptxas.compile_ptxas(path, "sm_80").by_name("k")[0]
    assert f"{want.registers} registers (ptxas)" in lens.command.title
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=text.splitlines()[1].index("k(") )))
    assert f"registers per thread: {want.registers} (measured by ptxas)" in hover.contents.value
