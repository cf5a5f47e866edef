"""The language server keeps serving whatever a client sends: malformed JSON-RPC (raw bytes on its
stdin), unknown methods, requests about documents never opened, out-of-range edits, bursts of
edits. Each test ends by checking that a normal request still gets a normal answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.robustness.conftest import ROOT
from tests.server.conftest import change, make_client, open_doc, wait_diagnostics
from tests.server.raw_client import RawServer, frame

SERVER = [sys.executable, "-m", "shaderlint", "lsp"]
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
# The division repeats with a changing operand (a load in a block-stride loop): SL201 reports it.
KERNEL = ("__global__ void scale(int* a, int n) {\n    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
          "        a[i] = a[i] / n;\n}\n")
DIV = (2, KERNEL.splitlines()[2].index("/ n"))  # 0-based line, character of the SL201 finding


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV, client_factory=make_client))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"select": ["SL001", "SL201"]}, root_uri=None))
    yield
    await lsp_client.shutdown_session()


async def _still_serving(client: LanguageClient, tmp_path, name: str = "alive.cu") -> None:
    uri = (tmp_path / name).as_uri()
    open_doc(client, uri, KERNEL)
    (d,) = await wait_diagnostics(client, uri, lambda ds: len(ds) == 1)
    assert (d.range.start.line, d.range.start.character) == DIV
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start))
    assert h is not None and "SL201" in h.contents.value


async def test_unknown_methods(client, tmp_path):
    with pytest.raises(JsonRpcException) as e:
        await client.protocol.send_request_async("shaderlint/noSuchRequest", {"x": 1})
    assert e.value.code == -32601  # MethodNotFound
    client.protocol.notify("shaderlint/noSuchNotification", {"x": 1})  # ignored
    client.protocol.notify("$/noSuchProtocolNotification", {})
    await _still_serving(client, tmp_path)


async def test_requests_about_unopened_documents(client, tmp_path):
    uri = (tmp_path / "never_opened.cu").as_uri()
    doc = types.TextDocumentIdentifier(uri=uri)
    pos = types.Position(line=3, character=4)
    assert await client.text_document_hover_async(types.HoverParams(text_document=doc, position=pos)) is None
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc, range=types.Range(start=pos, end=pos), context=types.CodeActionContext(diagnostics=[])))
    assert not actions
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
    assert not lenses
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=doc))
    assert not getattr(report, "items", [])
    # Notifications about it: a change, a save and a close of a document that is not open.
    change(client, uri, 7, ((0, 0, 0, 0), "x"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc))
    await _still_serving(client, tmp_path)


async def test_out_of_range_and_odd_edits(client, tmp_path):
    uri = (tmp_path / "k.cu").as_uri()
    text = KERNEL.replace("for (", "/* 😀 */ for (")
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri, lambda ds: len(ds) == 1)
    edits = [
        ((10_000, 0, 10_001, 5), "// far past the end\n"),
        ((0, 10_000, 0, 20_000), " "),
        ((3, 1, 1, 0), ""),  # end before start
        ((1, 8, 1, 9), "x"),  # inside the emoji's surrogate pair (UTF-16 units 7..8)
        ((2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1), "\n"),
    ]
    for version, edit in enumerate(edits, start=2):
        change(client, uri, version, edit)
    await wait_diagnostics(client, uri, lambda ds: client.published[-1][:2] == (uri, len(edits) + 1))
    # Full replacement after all that brings the document back to a known state.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=50),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=KERNEL)]))
    (d,) = await wait_diagnostics(client, uri, lambda ds: client.published[-1][:2] == (uri, 50) and len(ds) == 1)
    assert (d.range.start.line, d.range.start.character) == DIV
    await _still_serving(client, tmp_path)


async def test_burst_of_a_hundred_changes(client, tmp_path):
    """100 didChange in a row: the last version's diagnostics are published, at the right place."""
    uri = (tmp_path / "burst.cu").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, lambda ds: len(ds) == 1)
    text = KERNEL
    for v in range(2, 102):
        # Insert a comment line at the top (with an emoji: two UTF-16 units), then rewrite a word in it.
        if v % 2 == 0:
            change(client, uri, v, ((0, 0, 0, 0), "// 😀 edit\n"))
            text = "// 😀 edit\n" + text
        else:
            change(client, uri, v, ((0, 6, 0, 10), "x"))  # "edit" starts at UTF-16 unit 6
            text = text.replace("// 😀 edit\n", "// 😀 x\n", 1)
    await wait_diagnostics(client, uri, lambda ds: client.published[-1][:2] == (uri, 101))
    (d,) = client.diagnostics[uri]
    line = next(i for i, ln in enumerate(text.splitlines()) if "/ n" in ln)
    assert (d.range.start.line, d.range.start.character) == (line, text.splitlines()[line].index("/ n"))
    versions = [v for u, v, _ in client.published if u == uri]
    assert versions == sorted(versions)  # never an older version after a newer one
    await _still_serving(client, tmp_path)


async def test_burst_of_hostile_documents(client, tmp_path):
    """Documents the engine cannot read at all, opened in a row, each get an answer."""
    texts = ["\x00" * 5000, "(" * 10_000, "{" * 10_000 + "}" * 10_000, "\udcff\udcfe" * 100, "#define A {\nA\n",
             "kernel void k(" * 2000]
    uris = []
    for i, text in enumerate(texts):
        uri = (tmp_path / f"hostile{i}.cu").as_uri()
        uris.append(uri)
        open_doc(client, uri, text)
    for uri in uris:
        diags = await wait_diagnostics(client, uri, timeout=60)
        assert all(str(d.code) == "SL001" for d in diags)
    await _still_serving(client, tmp_path)


# ---- raw bytes on stdin (more in tests/server/test_framing.py) ----------------------------------------
def test_malformed_json_rpc_on_stdin():
    with RawServer() as raw:
        garbage = [  # (bytes, the code of the error response with id null they get, or None: no answer)
            (b"Content-Length: 5\r\n\r\n{{{{{", -32700),  # not JSON
            (b"Content-Length: 2\r\n\r\n[]", -32600),  # JSON, not a message
            (frame({"foo": 1}), -32600),
            (frame(body=b"\xff\xfe\x00 not UTF-8"), -32700),
            (b"X-Header: 1\r\n\r\n", -32700),  # a header block without Content-Length
            (b"just text\r\n\r\n", None),  # skipped with the above, up to the next Content-Length header
            (b"Content-Length: abc\r\n\r\n", None),
            (frame({"jsonrpc": "2.0", "method": "no/such/notification", "params": {}}), None),
            (frame({"jsonrpc": "2.0", "id": [1, 2], "method": "shutdown"}), -32600),  # an id that is not an id
            (frame({"jsonrpc": "2.0", "result": {}, "id": 9999}), None),  # a response to nothing
            (frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 5}}), None),
        ]
        for g, code in garbage:
            raw.send(g)
            if code is not None:
                assert raw.next_error()["error"]["code"] == code, g
        requests = [
            (frame({"jsonrpc": "1.0", "id": 50, "method": "shutdown"}), -32600),  # wrong version: not a shutdown
            (frame({"jsonrpc": "2.0", "id": 58}), -32600),  # neither request nor response
            (frame({"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {}}), -32601),
            (frame({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": "not an object"}), -32602),
            (frame({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": "file:///nowhere.cu"}, "position": {"line": -1, "character": -5}}}), -32602),
        ]
        for r, code in requests:
            raw.send(r)
            assert raw.response(json.loads(r.split(b"\r\n\r\n", 1)[1])["id"])["error"]["code"] == code
        raw.send(frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": "file:///nowhere.cu"}, "position": {"line": 0, "character": 0}}}))
        assert raw.response(5)["result"] is None  # a document that was never opened
        # And after all that, ordinary work.
        raw.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///tmp/k.cu", "languageId": "cuda-cpp", "version": 1, "text": KERNEL}}}))
        raw.send(frame({"jsonrpc": "2.0", "id": 100, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": "file:///tmp/k.cu"}, "position": {"line": DIV[0], "character": DIV[1]}}}))
        assert "SL201" in raw.response(100)["result"]["contents"]["value"]
        assert not [m for m in raw.received if m.get("method") == "window/showMessage"]  # no pop-up
        assert raw.stop() == 0


def test_stdin_closed_mid_message():
    """The client dies halfway through a message: the server exits instead of hanging."""
    with RawServer() as raw:
        raw.send(b"Content-Length: 1000\r\n\r\n{\"jsonrpc\": \"2.0\", ")
        raw.p.stdin.close()
        try:
            raw.p.wait(20)
        except subprocess.TimeoutExpired:
            pytest.fail("the server did not exit when its input closed")


def test_a_short_server_fuzzing_session():
    """``bench/fuzz.py --server`` for a few rounds (fixed seed): framing garbage, invalid messages and
    large documents, each followed by a hover that must be answered; then shutdown and exit 0."""
    from tests.robustness.conftest import load_fuzz

    fuzz = load_fuzz()
    out = fuzz.server_session(__import__("random").Random(7), fuzz.load_seeds(), rounds=12)
    assert out["rounds"] == 12 and not out["failures"], [f.detail[:2000] for f, _ in out["failures"]]
