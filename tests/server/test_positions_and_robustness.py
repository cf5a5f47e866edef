"""UTF-16 positions (emoji, CJK, CRLF), and a server that keeps serving whatever it is sent."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.server.conftest import apply_text_edits, change, codes, open_doc, refreshed, wait_diagnostics

KERNEL = """\
__global__ void scale(int *out, const int *in, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        /* 😀 漢字 ü */ out[i] = in[i] / n;
}
"""
# (`in[i] / n` repeats with a changing operand, a load in a grid-stride loop: SL201 reports it)


def utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


async def test_utf16_columns_after_emoji_and_cjk(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    (d,) = await wait_diagnostics(client, uri)
    line = KERNEL.splitlines()[3]
    col = utf16_len(line[:line.index("/ n")])
    assert col == line.index("/ n") + 1  # the emoji is two UTF-16 units
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (3, col, col + 1)
    # An edit addressed in UTF-16 units lands on the right bytes: `n` -> `4` clears the finding.
    n_col = utf16_len(line[:line.index("/ n") + 2])
    change(client, uri, 2, ((3, n_col, 3, n_col + 1), "4"))
    await wait_diagnostics(client, uri, lambda ds: len(ds) == 0)
    # ... and a non-BMP character inserted before it (in the comment) moves it by two UTF-16 units.
    emoji = line.index("😀")  # inside the comment, before the emoji (no non-BMP character before it)
    change(client, uri, 3, ((3, n_col, 3, n_col + 1), "n"), ((3, emoji, 3, emoji), "𝔸"))
    (d,) = await wait_diagnostics(client, uri, lambda ds: len(ds) == 1)
    assert d.range.start.character == col + 2


@pytest.mark.lsp(encodings=["utf-8", "utf-16"])
async def test_utf8_positions_when_the_client_prefers_them(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    (d,) = await wait_diagnostics(client, uri)
    line = KERNEL.splitlines()[3]
    col = len(line[:line.index("/ n")].encode())
    assert (d.range.start.line, d.range.start.character) == (3, col)


async def test_crlf_document(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    text = KERNEL.replace("\n", "\r\n")
    open_doc(client, uri, text)
    (d,) = await wait_diagnostics(client, uri)
    line = KERNEL.splitlines()[3]
    assert (d.range.start.line, d.range.start.character) == (3, utf16_len(line[:line.index("/ n")]))
    # Edits across CRLF line breaks: join lines 0 and 1, the finding moves up one line.
    change(client, uri, 2, ((0, len(KERNEL.splitlines()[0]), 1, 0), " "))
    await wait_diagnostics(client, uri, lambda ds: len(ds) == 1 and ds[0].range.start.line == 2)
    # The ignore action appends before the CRLF.
    (d,) = client.diagnostics[uri]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    ignore = next(a for a in actions if a.title.startswith("Ignore"))
    (edit,) = ignore.edit.document_changes[0].edits
    joined = text.replace("\r\n", " ", 1)
    assert apply_text_edits(joined, [edit]).splitlines(keepends=True)[2].endswith(
        "/ n;  // shaderlint: ignore[SL201]\r\n")


async def _hover_works(client, uri: str, ready=lambda ds: len(ds) == 1) -> None:
    """The server still answers a normal request about a normal document."""
    d = next(x for x in await wait_diagnostics(client, uri, ready) if x.code == "SL201")
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start))
    assert "SL201" in h.contents.value


async def test_binary_and_invalid_utf8_content(client, tmp_path):
    good = (tmp_path / "good.cu").as_uri()
    open_doc(client, good, KERNEL)
    # NUL bytes, control characters, lone surrogates (how clients render undecodable bytes), random symbols.
    junk = "\x00\x01\x02\udcff\udc80ELF\x7f\ufffd" + "".join(chr(c) for c in range(0x80, 0x400, 7)) + "\n" * 3
    for i, text in enumerate([junk, KERNEL.replace("out[i]", "\udcff\x00out[i]"), "\x00" * 1000]):
        uri = (tmp_path / f"junk{i}.cu").as_uri()
        open_doc(client, uri, text)
        diags = await wait_diagnostics(client, uri)
        assert all(d.source == "shaderlint" for d in diags)
        # Edits into and around the junk keep working.
        change(client, uri, 2, ((0, 1, 0, 3), "\udcfe😀"), ((5, 0, 5, 0), "int x;\n"))
        await wait_diagnostics(client, uri, lambda ds: client.published[-1][:2] == (uri, 2))
    await _hover_works(client, good)


async def test_unknown_language(client, tmp_path):
    uri = (tmp_path / "notes.txt").as_uri()
    open_doc(client, uri, "int q = a / n;\n", language_id="plaintext")
    assert await wait_diagnostics(client, uri) == []
    change(client, uri, 2, ((0, 0, 0, 0), "x"))
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=9)))
    assert h is None
    good = (tmp_path / "good.cu").as_uri()
    open_doc(client, good, KERNEL)
    await _hover_works(client, good)


async def test_out_of_range_edits_are_clamped(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    # Past the last line, past the end of a line, and a reversed range.
    change(client, uri, 2, ((400, 7, 500, 0), "// tail\n"), ((0, 900, 0, 1000), " "), ((2, 4, 2, 0), ""))
    await wait_diagnostics(client, uri, lambda ds: client.published[-1][:2] == (uri, 2))
    await _hover_works(client, uri)


async def test_unknown_methods_and_unopened_documents(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    with pytest.raises(JsonRpcException, match="Method Not Found"):
        await client.protocol.send_request_async("shaderlint/noSuchMethod", {"x": 1})
    client.protocol.notify("shaderlint/noSuchNotification", {"x": 1})
    nowhere = (tmp_path / "never-opened.cu").as_uri()
    ident = types.TextDocumentIdentifier(uri=nowhere)
    pos = types.Position(line=0, character=0)
    assert await client.text_document_hover_async(types.HoverParams(text_document=ident, position=pos)) is None
    assert await client.text_document_code_action_async(types.CodeActionParams(
        text_document=ident, range=types.Range(start=pos, end=pos),
        context=types.CodeActionContext(diagnostics=[]))) is None
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
    assert list(report.items) == []
    # Changes, saves and closes of documents that were never opened are ignored.
    change(client, nowhere, 2, ((0, 0, 0, 0), "x"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=ident))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=ident))
    await _hover_works(client, uri)


async def test_malformed_params_get_an_error_response(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    # Sent as raw JSON: the client's own types cannot express a position whose line is a string.
    answer: Future = Future()
    client.protocol._request_futures["malformed-1"] = answer
    client.protocol._send_data({"jsonrpc": "2.0", "id": "malformed-1", "method": types.TEXT_DOCUMENT_HOVER,
                                "params": {"textDocument": {"uri": uri}, "position": {"line": "x"}}})
    with pytest.raises(JsonRpcException, match="Invalid Params"):
        await asyncio.wait_for(asyncio.wrap_future(answer), 20)
    await _hover_works(client, uri)


async def test_a_failing_rule_becomes_sl001_and_the_rest_is_reported(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, "// shaderlint-test: crash-rule\n" + KERNEL)
    diags = await wait_diagnostics(client, uri)
    assert codes(diags) == ["SL001", "SL201"]
    assert "rule SL991 failed" in next(d for d in diags if d.code == "SL001").message
    await _hover_works(client, uri, lambda ds: len(ds) == 2)


async def test_a_failing_handler_gets_an_error_response(client, tmp_path):
    bad = (tmp_path / "bad.cu").as_uri()
    open_doc(client, bad, "// shaderlint-test: crash-hover\n" + KERNEL)
    (d,) = await wait_diagnostics(client, bad)
    with pytest.raises(JsonRpcException, match="deliberate hover failure"):
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=bad), position=d.range.start))
    good = (tmp_path / "good.cu").as_uri()
    open_doc(client, good, KERNEL)
    await _hover_works(client, good)


@pytest.mark.lsp(pull=True)
async def test_pulling_clients_are_asked_to_pull_again_when_settings_change(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    ident = types.TextDocumentIdentifier(uri=uri)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
    assert codes(report.items) == ["SL201"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shaderlint": {"ignore": ["SL201"]}}))
    await asyncio.wait_for(refreshed(client).wait(), 20)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=report.result_id))
    assert report.kind == "full" and list(report.items) == []


async def test_full_sync_changes(client, tmp_path):
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, "")
    assert await wait_diagnostics(client, uri) == []
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=KERNEL)]))
    assert codes(await wait_diagnostics(client, uri, lambda ds: len(ds) == 1)) == ["SL201"]
