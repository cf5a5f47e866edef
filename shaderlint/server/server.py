"""The shaderlint language server (pygls 2): ``shaderlint lsp`` on stdio.

Thin by design: it keeps the open documents, calls the engine
(:func:`shaderlint.engine.lint_source`) directly and converts the results
(:mod:`.convert`). Features: diagnostics pushed (``publishDiagnostics``, on
open/change/save, debounced) and pulled (``textDocument/diagnostic``), code
actions (:mod:`.code_actions`), hover and code lens (:mod:`.hover`), settings
from ``initializationOptions`` and ``workspace/configuration``
(:mod:`.settings`).

Pushing is automatic unless the client can pull (then it pulls and nothing is
pushed, so no diagnostic shows twice); ``pushDiagnostics`` overrides that.
Nothing a client sends may stop the server: lint failures become an SL001
diagnostic, handler errors become an error response or a log message.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import logging
import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from shaderlint import __version__
from shaderlint.config import Settings
from shaderlint.engine import resolve_target
from shaderlint.server import code_actions as actions
from shaderlint.server import hover as hovers
from shaderlint.server.convert import UTF16, encode_text
from shaderlint.server.diagnostics import Document, Linter
from shaderlint.server.settings import ClientSettings, ConfigFiles, language_for

log = logging.getLogger("shaderlint.server")

CONFIG_FILES = ("shaderlint.toml", "pyproject.toml")


#: Stands for a message already answered: pygls drops messages whose ``jsonrpc`` is not "2.0".
_ANSWERED = SimpleNamespace(jsonrpc="answered")


class ShaderlintProtocol(LanguageServerProtocol):
    """Document synchronisation goes to the server's own store (bytes, last parse, tree edits) only:
    pygls' text workspace would keep a second copy of every document and could fail on edits the
    store clamps."""

    def structure_message(self, data: dict[str, Any]):
        """A request whose params do not match the protocol gets an InvalidParams error response
        (pygls would log it and leave the client waiting for an answer)."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not (isinstance(data, dict) and "method" in data and "id" in data):
                raise
            log.warning("invalid %s request: %s", data.get("method"), exc.__cause__ or exc)
            self._send_response(data["id"], error=exc.to_response_error())
            return _ANSWERED

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


class _InterruptingReader:
    """stdin for pygls' reader thread: every header line that arrives interrupts a confirming
    whole-file lint (``Linter.interrupt``), so a keystroke never waits for one."""

    def __init__(self, raw, on_input) -> None:
        self.raw = raw
        self.on_input = on_input

    def readline(self, *args):
        line = self.raw.readline(*args)
        if line:
            self.on_input()
        return line

    def read(self, *args):
        return self.raw.read(*args)

    def __getattr__(self, name):
        return getattr(self.raw, name)


class ShaderlintServer(LanguageServer):
    def start_io(self, stdin=None, stdout=None):
        return super().start_io(_InterruptingReader(stdin or sys.stdin.buffer, self.linter.interrupt), stdout)

    def __init__(self) -> None:
        super().__init__("shaderlint", __version__, protocol_cls=ShaderlintProtocol)
        self.init_settings = ClientSettings()
        self.client_settings = ClientSettings()
        self.configs = ConfigFiles()
        self.linter = Linter(self.settings_for, self.publish, self.encoding, self.publish_capabilities)
        self.config_pending = False

    # ---- client facts --------------------------------------------------------------------------
    def capability(self, path: str) -> Any:
        node: Any = self.client_capabilities
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                return None
        return node

    def encoding(self) -> str:
        try:
            enc = self.workspace.position_encoding
        except RuntimeError:
            return UTF16
        return getattr(enc, "value", enc) or UTF16

    def publish_capabilities(self) -> types.PublishDiagnosticsClientCapabilities | None:
        return self.capability("text_document.publish_diagnostics")

    def document_changes(self) -> bool:
        return bool(self.capability("workspace.workspace_edit.document_changes"))

    def push_enabled(self) -> bool:
        mode = self.client_settings.push_diagnostics
        if mode == "auto":
            return self.capability("text_document.diagnostic") is None
        return bool(mode)

    # ---- settings --------------------------------------------------------------------------------
    def settings_for(self, doc: Document) -> tuple[Settings, str | None]:
        return self.configs.settings_for(doc.path, self.client_settings)

    def set_client_settings(self, settings: ClientSettings) -> None:
        for problem in settings.problems:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning,
                                                           message=f"shaderlint settings: {problem}"))
        self.client_settings = settings

    async def pull_configuration(self) -> None:
        if not self.capability("workspace.configuration"):
            return
        self.config_pending = True
        try:
            result = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="shaderlint")]))
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        finally:
            self.config_pending = False
        value = result[0] if isinstance(result, (list, tuple)) and result else None
        log.info("workspace/configuration: %r", value)
        if isinstance(value, dict):  # no section: the settings stay as they are
            self.set_client_settings(self.init_settings.merged(value))
        self.refresh_all()

    def refresh_all(self) -> None:
        """Settings changed: every open document is stale."""
        self.linter.invalidate_all()
        if self.push_enabled():
            for doc in list(self.linter.documents.values()):
                self.linter.schedule(doc, 0, publish=True)
        elif self.linter.documents and self.capability("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)
        if (self.linter.documents and self.client_settings.code_lens
                and self.capability("workspace.code_lens.refresh_support")):
            self.workspace_code_lens_refresh(None)

    # ---- documents -------------------------------------------------------------------------------
    def publish(self, doc: Document) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, version=doc.version, diagnostics=doc.lsp))

    def document(self, uri: str, full: bool = False) -> Document | None:
        """An open document with up-to-date diagnostics; ``full``: with the whole file's model too."""
        doc = self.linter.get(uri)
        if doc is not None:
            self.linter.ensure(doc, full)
        return doc

    def estimate_context(self, doc: Document) -> tuple[Any, dict[str, str]]:
        """The target and the configured facts (threadgroup-size=…) the estimates of ``doc`` assume."""
        settings, _ = self.settings_for(doc)
        try:
            target = resolve_target(settings, doc.language or "cuda")
        except Exception:
            target = resolve_target(Settings(), doc.language or "cuda")
        return target, settings.facts_for(doc.path)


def result_digest(diags: list[types.Diagnostic]) -> str:
    """A pull result id: equal diagnostics, equal id (settings that change nothing keep "unchanged")."""
    return hashlib.sha1(repr(diags).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _notification(fn):
    """Notifications have no response to carry an error: log it and keep serving."""
    @functools.wraps(fn)
    def wrapper(ls: ShaderlintServer, params: Any) -> None:
        try:
            fn(ls, params)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # BaseException too: an escaped time-budget exception must not stop the loop
            log.exception("%s failed", fn.__name__)
    return wrapper


def _request(fn):
    """An error in a request handler becomes an error response (pygls turns an Exception into one;
    a BaseException such as the engine's time-budget exception would end the server instead)."""
    @functools.wraps(fn)
    def wrapper(ls: ShaderlintServer, params: Any) -> Any:
        try:
            return fn(ls, params)
        except (KeyboardInterrupt, SystemExit, Exception):
            raise
        except BaseException as exc:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
    return wrapper


def create_server() -> ShaderlintServer:
    server = ShaderlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: ShaderlintServer, params: types.InitializeParams) -> None:
        ls.init_settings = ClientSettings().merged(params.initialization_options)
        ls.set_client_settings(ls.init_settings)
        ls.config_pending = bool(ls.capability("workspace.configuration"))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: ShaderlintServer, params: types.InitializedParams) -> None:
        await ls.pull_configuration()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: ShaderlintServer, params: types.DidChangeConfigurationParams) -> None:
        # The new settings come in the notification (VS Code with `synchronize`, Neovim), or are to be asked for.
        section = params.settings.get("shaderlint") if isinstance(params.settings, dict) else None
        if isinstance(section, dict):
            ls.set_client_settings(ls.init_settings.merged(section))
            ls.refresh_all()
        elif ls.capability("workspace.configuration"):
            await ls.pull_configuration()
        else:
            ls.refresh_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @_notification
    def did_open(ls: ShaderlintServer, params: types.DidOpenTextDocumentParams) -> None:
        td = params.text_document
        path = to_fs_path(td.uri) or td.uri
        doc = Document(td.uri, path, td.language_id, language_for(td.language_id, path), td.version,
                       encode_text(td.text))
        old = ls.linter.close(td.uri)
        ls.linter.documents[td.uri] = doc
        if old is not None:
            log.info("%s opened twice; the new text replaces the old", td.uri)
        # While the client's settings are on their way, wait for them (refresh_all lints), but not forever.
        ls.linter.schedule(doc, 1000 if ls.config_pending else 0, publish=ls.push_enabled())

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @_notification
    def did_change(ls: ShaderlintServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.linter.get(params.text_document.uri)
        if doc is None:
            log.warning("didChange for %s, which is not open", params.text_document.uri)
            return
        doc.version = params.text_document.version
        encoding = ls.encoding()
        for change in params.content_changes:
            doc.apply_change(change, encoding)
        ls.linter.schedule(doc, ls.client_settings.debounce_ms, publish=ls.push_enabled())

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @_notification
    def did_save(ls: ShaderlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if os.path.basename(to_fs_path(uri) or uri) in CONFIG_FILES:
            ls.refresh_all()
            return
        doc = ls.linter.get(uri)
        if doc is None:
            return
        if params.text is not None:
            doc.replace_all(params.text)
        doc.linted = False  # the configuration may have changed on disk
        ls.linter.schedule(doc, 0, publish=ls.push_enabled())

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_notification
    def did_close(ls: ShaderlintServer, params: types.DidCloseTextDocumentParams) -> None:
        if ls.linter.close(params.text_document.uri) is not None and ls.push_enabled():
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="shaderlint", inter_file_dependencies=False,
                                            workspace_diagnostics=False))
    @_request
    def pull_diagnostics(ls: ShaderlintServer, params: types.DocumentDiagnosticParams):
        doc = ls.document(params.text_document.uri)
        if doc is None:  # not open: nothing to say about it
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = f"{doc.version}:{result_digest(doc.lsp)}"
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=doc.lsp, result_id=result_id)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=True))
    @_request
    def code_action(ls: ShaderlintServer, params: types.CodeActionParams):
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        resolvable = ls.capability("text_document.code_action.resolve_support.properties") or []
        return actions.code_actions(doc, params, ls.encoding(), ls.document_changes(), ls.settings_for(doc)[0],
                                    "edit" in resolvable) or None

    @server.feature(types.CODE_ACTION_RESOLVE)
    @_request
    def code_action_resolve(ls: ShaderlintServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        doc = ls.document(str(data.get("uri", "")))
        if action.kind != actions.FIX_ALL or doc is None or data.get("version") != doc.version:
            return action  # stale or not ours: nothing to add
        return actions.resolve_fix_all(doc, action, ls.encoding(), ls.document_changes(), ls.settings_for(doc)[0])

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_request
    def hover(ls: ShaderlintServer, params: types.HoverParams):
        doc = ls.document(params.text_document.uri, full=True)
        if doc is None:
            return None
        return hovers.hover(doc, params.position, ls.encoding(), *ls.estimate_context(doc))

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    @_request
    def code_lens(ls: ShaderlintServer, params: types.CodeLensParams):
        if not ls.client_settings.code_lens:
            return None
        doc = ls.document(params.text_document.uri, full=True)
        if doc is None:
            return None
        return hovers.code_lenses(doc, ls.encoding(), *ls.estimate_context(doc)) or None

    return server


def serve(argv: Sequence[str] = ()) -> int:
    """Run the server on stdin/stdout until the client exits it. ``--stdio`` is accepted (and implied)."""
    p = argparse.ArgumentParser(prog="shaderlint lsp", description="The shaderlint language server, on stdio.")
    p.add_argument("--stdio", action="store_true", help="communicate over stdin/stdout (the default and only transport)")
    p.add_argument("--log-level", default=os.environ.get("SHADERLINT_LOG", "WARNING"),
                   choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="stderr log level (default WARNING)")
    try:
        args = p.parse_args(list(argv))
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="shaderlint-lsp %(levelname)s %(name)s: %(message)s")
    logging.getLogger("shaderlint").setLevel(getattr(logging, args.log_level))
    server = create_server()
    tune_gc()
    server.start_io()
    return 0


def tune_gc() -> None:
    """Garbage collection off the typing path: a lint allocates hundreds of thousands of objects, and
    the collector's full passes over everything the server holds (trees, models, outlines) showed as
    10-30 ms pauses in the keystroke latency. Start-up objects are frozen out of the collector,
    young collections run less often and full ones (nearly) only when the server is idle
    (``Linter`` collects after the confirming lint, see ``IDLE_GC``)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)  # a full pass at most every ~10^8 net allocations
