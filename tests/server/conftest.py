"""pytest-lsp fixtures: the real server over stdio, driven like an editor would.

``client`` is an initialized session that selects the rules in :data:`SELECT`.
Per test, ``@pytest.mark.lsp(...)`` sets ``init`` (initializationOptions, over
that selection), ``config`` (the client's ``shaderlint``
section for workspace/configuration), ``capabilities`` (a client name known to
pytest-lsp, default VS Code), ``pull`` (advertise pull diagnostics) and
``encodings`` (general.positionEncodings) and ``workspace`` (the test's ``tmp_path`` as the
workspace folder). The server is the one from
``fixable_server.py``: the real server plus a test rule that offers fixes.

Waiting is on notifications only (no sleeps): :func:`wait_diagnostics` returns
once the diagnostics published for a document satisfy a predicate.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SERVER = [sys.executable, os.path.join(HERE, "fixable_server.py")]
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
TIMEOUT = 20.0
#: The rules these tests are about; the session selects them unless a test says otherwise, so that
#: new rules do not change what the tests see.
SELECT = ["SL001", "SL101", "SL201", "SL990", "SL991"]


def pytest_configure(config):
    config.addinivalue_line("markers", "lsp(**options): options for the `client` language-server session")


def make_client() -> LanguageClient:
    """pytest-lsp's test client, which also keeps the version of every publishDiagnostics, in order
    (``client.published``; pytest-lsp itself keeps only the last diagnostics per document), and the
    capabilities the server registers (``client.registrations``)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]

    def on_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append((params.uri, params.version, list(params.diagnostics)))  # type: ignore[attr-defined]

    def on_code_lens_refresh(client: LanguageClient, params: None) -> None:
        client.code_lens_refreshes = getattr(client, "code_lens_refreshes", 0) + 1  # type: ignore[attr-defined]

    def on_diagnostic_refresh(client: LanguageClient, params: None) -> None:
        client.diagnostic_refresh_count += 1
        refreshed(client).set()

    def on_register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    client.registrations = []  # type: ignore[attr-defined]
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: on_publish,
                                   types.CLIENT_REGISTER_CAPABILITY: on_register,
                                   types.WORKSPACE_CODE_LENS_REFRESH: on_code_lens_refresh,
                                   types.WORKSPACE_DIAGNOSTIC_REFRESH: on_diagnostic_refresh})
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV, client_factory=make_client))
async def client(lsp_client: LanguageClient, request):
    marker = request.node.get_closest_marker("lsp")
    opts = dict(marker.kwargs) if marker else {}
    caps = client_capabilities(opts.get("capabilities", "visual-studio-code"))
    if opts.get("pull"):
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    if "encodings" in opts:
        caps.general = types.GeneralClientCapabilities(position_encodings=opts["encodings"])
    if "config" in opts:
        lsp_client.set_configuration(opts["config"], section="shaderlint")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps, initialization_options={"select": SELECT, **opts.get("init", {})}, root_uri=None,
        workspace_folders=[types.WorkspaceFolder(uri=request.getfixturevalue("tmp_path").as_uri(), name="tmp")]
        if opts.get("workspace") else None))
    yield
    await lsp_client.shutdown_session()


def refreshed(client: LanguageClient) -> asyncio.Event:
    """Set when the server asks a pulling client to pull again (workspace/diagnostic/refresh)."""
    if not hasattr(client, "refresh_event"):
        client.refresh_event = asyncio.Event()  # type: ignore[attr-defined]
    return client.refresh_event  # type: ignore[attr-defined]


async def wait_diagnostics(client: LanguageClient, uri: str,
                           predicate: Callable[[Sequence[types.Diagnostic]], bool] = lambda d: True,
                           timeout: float = TIMEOUT) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` once published ones satisfy ``predicate``."""

    async def wait() -> list[types.Diagnostic]:
        while True:
            have = client.diagnostics.get(uri)
            if have is not None and predicate(have):
                return list(have)
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


def codes(diags: Sequence[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


def open_doc(client: LanguageClient, uri: str, text: str, language_id: str = "cuda-cpp", version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=version, text=text)))


def change(client: LanguageClient, uri: str, version: int, *edits: tuple[tuple[int, int, int, int], str]) -> None:
    """didChange with incremental edits ((line, char, end_line, end_char), text), in order."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[
            types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=a, character=b), end=types.Position(line=c, character=d)),
                text=text)
            for (a, b, c, d), text in edits
        ]))


def apply_text_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    """What an editor does with a WorkspaceEdit's TextEdits (UTF-16 positions, all relative to ``text``)."""
    lines = text.splitlines(keepends=True) or [""]

    def offset(p: types.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        line = lines[p.line]
        units = 0
        for i, ch in enumerate(line):
            if units >= p.character or ch in "\r\n":
                return sum(len(x) for x in lines[:p.line]) + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return sum(len(x) for x in lines[:p.line + 1])

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset(e.range.start), offset(e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None
    if edit.document_changes:
        return [e for dc in edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    return list((edit.changes or {}).get(uri, []))
