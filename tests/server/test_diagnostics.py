"""Diagnostics over LSP: pushed on open/change/save, pulled, the same as the engine's."""

from __future__ import annotations

import pytest
from lsprotocol import types

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from tests.server.conftest import SELECT, change, codes, open_doc, wait_diagnostics

KERNEL = """\
__global__ void scale(int *out, const int *in, int n, int parts)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int q = in[i] / n;
        out[i] = q;
    }
}
"""
SL201_LINE = 3  # 0-based line of `in[i] / n` (a load divided in every iteration of a grid-stride loop)


def _uri(tmp_path, name: str) -> str:
    return (tmp_path / name).as_uri()


def _same_as_engine(diags, path: str, text: str) -> None:
    """Same codes, messages and positions as lint_source for the same text (ASCII: columns = characters)."""
    expected = lint_source(path, text.encode(), Settings(select=tuple(SELECT)), language="cuda").diagnostics
    got = sorted(((d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
                   str(d.code), d.message) for d in diags))
    want = sorted(((d.line - 1, d.column - 1, d.end_line - 1, d.end_column - 1, d.code, d.message) for d in expected))
    assert got == want


async def test_open_publishes_the_engines_diagnostics(client, tmp_path):
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    diags = await wait_diagnostics(client, uri)
    assert codes(diags) == ["SL201"]
    d = diags[0]
    assert d.range.start.line == SL201_LINE
    assert d.severity == types.DiagnosticSeverity.Warning
    assert d.source == "shaderlint"
    assert d.code_description.href.endswith("/rules/SL201.md")
    assert d.data["kernel"] == "scale"
    _same_as_engine(diags, str(tmp_path / "scale.cu"), KERNEL)


async def test_change_updates_diagnostics(client, tmp_path):
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL201"])
    # Two lines above the kernel: the finding moves down two lines.
    change(client, uri, 2, ((0, 0, 0, 0), "// two lines\n// of comment\n"))
    diags = await wait_diagnostics(client, uri, lambda d: d and d[0].range.start.line == SL201_LINE + 2)
    assert codes(diags) == ["SL201"]
    # `/ n` -> `/ 4`: a constant denominator, nothing to report.
    line = KERNEL.splitlines()[SL201_LINE]
    col = line.index("/ n") + 2
    change(client, uri, 3, ((SL201_LINE + 2, col, SL201_LINE + 2, col + 1), "4"))
    await wait_diagnostics(client, uri, lambda d: len(d) == 0)
    assert client.published[-1][1] == 3  # published for the version that has no finding
    # Back to a variable, several edits in one notification.
    change(client, uri, 4, ((SL201_LINE + 2, col, SL201_LINE + 2, col + 1), "parts"),
           ((0, 0, 2, 0), ""))
    diags = await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL201"])
    assert diags[0].range.start.line == SL201_LINE
    assert "parts" in diags[0].message
    text = KERNEL.replace("in[i] / n", "in[i] / parts")
    _same_as_engine(diags, str(tmp_path / "scale.cu"), text)


async def test_changes_are_debounced(client, tmp_path):
    """Edits in quick succession (default debounce, 150 ms) are linted once, for the last version."""
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    before = len(client.published)
    for v in range(2, 7):
        change(client, uri, v, ((0, 0, 0, 0), "\n"))
    await wait_diagnostics(client, uri, lambda d: d and d[0].range.start.line == SL201_LINE + 5)
    assert [p[1] for p in client.published[before:]] == [6]


async def test_save_relints(client, tmp_path):
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    before = len(client.published)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await wait_diagnostics(client, uri, lambda d: len(client.published) > before)
    assert codes(client.published[-1][2]) == ["SL201"]


async def test_close_clears_diagnostics(client, tmp_path):
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, lambda d: len(d) == 1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await wait_diagnostics(client, uri, lambda d: len(d) == 0)


@pytest.mark.lsp(pull=True)
async def test_pull_diagnostics(client, tmp_path):
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    ident = types.TextDocumentIdentifier(uri=uri)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
    assert report.kind == "full"
    assert codes(report.items) == ["SL201"]
    _same_as_engine(report.items, str(tmp_path / "scale.cu"), KERNEL)
    # Nothing changed: the same result id comes back as "unchanged".
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=report.result_id))
    assert again.kind == "unchanged"
    # A change is seen by the next pull, without waiting for a debounce.
    line = KERNEL.splitlines()[SL201_LINE]
    col = line.index("/ n") + 2
    change(client, uri, 2, ((SL201_LINE, col, SL201_LINE, col + 1), "8"))
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=report.result_id))
    assert report.kind == "full" and list(report.items) == []
    # A client that pulls gets nothing pushed (no diagnostic shown twice).
    assert client.published == []


@pytest.mark.lsp(pull=True, init={"pushDiagnostics": True})
async def test_push_can_be_forced_for_pulling_clients(client, tmp_path):
    uri = _uri(tmp_path, "scale.cu")
    open_doc(client, uri, KERNEL)
    assert codes(await wait_diagnostics(client, uri)) == ["SL201"]


@pytest.mark.parametrize("language_id, name", [
    ("metal", "k.metal"), ("cuda", "k.cu"), ("cuda-cpp", "k.cuh"), ("glsl", "k.comp"), ("comp", "k.glsl"),
    ("", "k.metal"), ("plaintext", "k.cu"), ("cpp", "k.cuh"), ("plaintext", "notes.txt"), ("hlsl", "k.hlsl"),
])
async def test_language_from_language_id_or_extension(client, tmp_path, language_id, name):
    texts = {
        "metal": "kernel void k(device int *a [[buffer(0)]], constant int &n [[buffer(1)]],\n"
                 "              uint t [[thread_position_in_grid]]) {\n"
                 "    for (uint i = t; i < 4096; i += 64)\n        a[i] = a[i] / n;\n}\n",
        "cuda": "__global__ void k(int *a, int n) {\n    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
                "        a[i] = a[i] / n;\n}\n",
        "glsl": "#version 450\nlayout(local_size_x = 64) in;\nlayout(std430, binding = 0) buffer B { int a[]; };\n"
                "uniform int n;\nvoid main() {\n    for (uint i = gl_GlobalInvocationID.x; i < 4096u; i += 64u)\n"
                "        a[i] = a[i] / n;\n}\n",
    }
    from shaderlint.server.settings import language_for

    language = language_for(language_id, name)
    uri = _uri(tmp_path, name)
    open_doc(client, uri, texts[language or "cuda"], language_id=language_id)
    diags = await wait_diagnostics(client, uri)
    if language is None:
        assert diags == []  # neither the language id nor the extension is a shader language: nothing to say
    else:
        assert codes(diags) == ["SL201"]
        assert diags[0].range.start.line == texts[language].splitlines().index(
            next(x for x in texts[language].splitlines() if "/ n" in x))


@pytest.mark.lsp(init={"debounce": 0})
async def test_edits_inside_kernels_give_the_engines_diagnostics(client, tmp_path):
    """Per-function linting in the real server (typing inside one kernel of a multi-kernel file,
    including moments when the body does not parse): after every edit the published diagnostics are
    the engine's for the whole text; hover still gets the whole file's model."""
    units = "".join(KERNEL.replace("scale", f"scale{i}") for i in range(8))
    uri = _uri(tmp_path, "many.cu")
    path = str(tmp_path / "many.cu")
    open_doc(client, uri, units)
    await wait_diagnostics(client, uri, lambda d: len(d) == 8)
    lines = units.splitlines()
    target = [i for i, x in enumerate(lines) if "int q = in[i] / n;" in x][5]
    text, version = units, 1
    end = len(lines[target])
    for k, ch in enumerate(" int r = q / parts;"):  # typed after the statement, one character at a time
        version += 1
        change(client, uri, version, ((target, end + k, target, end + k), ch))
        cur = text.splitlines(keepends=True)
        cur[target] = cur[target][:end + k] + ch + cur[target][end + k:]
        text = "".join(cur)
        await wait_diagnostics(client, uri, lambda d: client.published[-1][1] == version)
        _same_as_engine(client.diagnostics[uri], path, text)
    assert codes(client.diagnostics[uri]).count("SL201") == 9  # the new `q / parts` too
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=[i for i, x in enumerate(text.splitlines()) if "scale5" in x][0], character=18)))
    assert hover is not None and "scale5" in str(hover.contents)
