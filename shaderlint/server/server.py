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
import asyncio
import dataclasses
import functools
import hashlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from lsprotocol import types
from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import FeatureRequestError, JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from shaderlint import __version__
from shaderlint.config import Settings
from shaderlint.deadline import Deadline, TimeBudgetExceeded
from shaderlint.diagnostics import Severity
from shaderlint.engine import FileResult, _internal, resolve_target
from shaderlint.model.source import Source
from shaderlint.server import code_actions as actions
from shaderlint.server import hover as hovers
from shaderlint.server.compiled import CompiledFigures
from shaderlint.server.convert import UTF16, PositionMap, encode_text, to_lsp_diagnostic
from shaderlint.server.diagnostics import Document, Linter
from shaderlint.server.hostfacts import HostIndexes
from shaderlint.server.settings import ClientSettings, ConfigFiles, language_for
from shaderlint.server.transport import DEFAULT_MAX_MESSAGE_BYTES, Frame, Reader

log = logging.getLogger("shaderlint.server")

CONFIG_FILES = ("shaderlint.toml", "pyproject.toml")

# JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: LSP 3.17 ServerCancelled: a pull-diagnostics request given up for other messages (the client pulls again).
SERVER_CANCELLED = -32802

#: Documents at least this large are linted in the background when their lint is not asked for by a
#: request about them (didOpen, a debounced change, new settings): any message that arrives stops the
#: lint, which is retried after RETRY_AFTER_S, so that they never hold up requests about other documents.
BACKGROUND_BYTES = 256 * 1024
RETRY_AFTER_S = 1.0
#: CPU seconds a background lint may run (the engine's per-file budget stops it first).
BACKGROUND_MAX_S = 600.0


#: Stands for a message already answered: pygls drops messages whose ``jsonrpc`` is not "2.0".
_ANSWERED = SimpleNamespace(jsonrpc="answered")


class ShaderlintProtocol(LanguageServerProtocol):
    """JSON-RPC as the specification says, whatever arrives (pygls logs and drops what it cannot
    read, so the client waits for ever, or answers Internal error):

    - a body that is not JSON (or not UTF-8), and every framing error of :mod:`.transport`, gets a
      Parse error (-32700) with id null;
    - JSON that is not a message (not an object, no or a wrong ``jsonrpc``, a ``method`` that is not
      a string, an ``id`` that is neither an integer nor a string, neither a request nor a response)
      gets an Invalid Request error (-32600), with the id when there is a usable one, else null;
    - a request whose params do not match the protocol gets Invalid params (-32602);
    - after ``shutdown``, requests get Invalid Request (the LSP specification) and notifications other
      than ``exit`` are dropped.

    Document synchronisation goes to the server's own store (bytes, last parse, tree edits) only:
    pygls' text workspace would keep a second copy of every document and could fail on edits the
    store clamps."""

    def _send_handler_result(self, future, *, msg_id) -> None:
        """A request the server cancels on purpose (a pull for a large document while other messages
        wait: ServerCancelled with retriggerRequest) is answered without pygls' error log: it is no
        error, and a traceback in the log for every pull would drown real ones."""
        if not future.cancelled():
            exc = future.exception()
            if isinstance(exc, JsonRpcException) and exc.code == SERVER_CANCELLED:
                self._request_futures.pop(msg_id, None)
                self._send_response(msg_id, error=exc.to_response_error())
                return
        super()._send_handler_result(future, msg_id=msg_id)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """An error response; ``msg_id`` None is sent as ``"id": null`` (pygls would leave it out)."""
        if msg_id is None:
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
        else:
            self._send_response(msg_id, error=types.ResponseError(code=code, message=message))

    def handle_frame(self, frame: Frame) -> None:
        """One message from the transport (or its framing error)."""
        if frame.body is None:
            self.send_error(None, PARSE_ERROR, f"Parse error: {frame.error}")
            return
        try:
            data = json.loads(frame.body.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            log.warning("a message that is not JSON (%d bytes): %s", len(frame.body), reason)
            self.send_error(None, PARSE_ERROR, f"Parse error: the message is not JSON in UTF-8 ({reason})")
            return
        problem = envelope_problem(data)
        if problem is not None:
            reason, msg_id = problem
            log.warning("invalid message: %s", reason)
            self.send_error(msg_id, INVALID_REQUEST, f"Invalid Request: {reason}")
            return
        message = self.structure_message(data)
        if message is not _ANSWERED:
            self.handle_message(message)

    def structure_message(self, data: dict[str, Any]):
        """The message as its lsprotocol type (pygls' dispatch, without its logged traceback). Params
        that do not match the protocol: a request gets an InvalidParams error response (pygls would
        leave the client waiting), a notification is logged and dropped, and the request a response
        answers fails with the error."""
        try:
            if "id" in data:
                if "error" in data:
                    return self._converter.structure(data, ResponseErrorMessage)
                if "method" in data:
                    return self._converter.structure(data, self.get_message_type(data["method"]) or JsonRPCRequestMessage)
                return self._converter.structure(data, self._result_types.pop(data["id"], None) or JsonRPCResponseMessage)
            return self._converter.structure(data, self.get_message_type(data.get("method", "")) or JsonRPCNotification)
        except Exception as exc:  # noqa: BLE001 - cattrs raises many kinds; all mean "not the protocol's shape"
            log.warning("invalid %s message: %s", data.get("method", "response"), _short(exc))
            if "method" in data and "id" in data:
                self._send_response(data["id"], error=JsonRpcInvalidParams().to_response_error())
            elif "method" not in data and (future := self._request_futures.pop(data.get("id"), None)) is not None:
                future.set_exception(JsonRpcInvalidParams(f"the response does not match the protocol: {_short(exc)}"))
            return _ANSWERED

    def handle_message(self, message) -> None:
        method = getattr(message, "method", None)
        if self._shutdown and method != types.EXIT:
            if method is not None and getattr(message, "id", None) is not None:
                self.send_error(message.id, INVALID_REQUEST,
                                f"Invalid Request: {method} after shutdown (only exit is accepted)")
            elif method is not None:
                log.warning("%s after shutdown: ignored", method)
            return
        if method == types.CANCEL_REQUEST:
            target = getattr(getattr(message, "params", None), "id", None)
            if isinstance(target, bool) or not isinstance(target, (int, str)):
                log.warning("$/cancelRequest with an id that is neither an integer nor a string: ignored")
                return  # a notification gets no answer; pygls would fail hashing the id
        super().handle_message(message)

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


def _short(exc: BaseException) -> str:
    """One line about a structuring error (cattrs nests the cause in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:300]


def envelope_problem(data: Any) -> tuple[str, Any] | None:
    """Why decoded JSON is not a JSON-RPC 2.0 message, with the id to answer with (None: null); None
    when it is one (a request, a notification or a response)."""
    if not isinstance(data, dict):
        return (f"a JSON {type(data).__name__ if data is not None else 'null'}, not a message object"
                if not isinstance(data, list) else "a batch (LSP has none)"), None
    msg_id = data.get("id")
    good_id = isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)
    answer_id = msg_id if good_id else None
    if data.get("jsonrpc") != "2.0":
        return 'no "jsonrpc": "2.0"', answer_id
    if "method" in data:
        if not isinstance(data["method"], str) or not data["method"]:
            return '"method" is not a non-empty string', answer_id
        if "id" in data and not good_id:
            return '"id" is neither an integer nor a string', None
        return None
    if ("result" in data) == ("error" in data):
        return "neither a request, a notification nor a response", answer_id
    if not good_id and not (msg_id is None and "error" in data):
        return 'a response whose "id" is neither an integer nor a string', None
    return None


class ServerLinter(Linter):
    """The linter with the server's two protections for large documents (no change to how other
    documents are linted):

    - a document over ``max_bytes()`` (setting ``maxDocumentBytes``) is not analysed: it gets one
      informational SL001 saying so;
    - a document of :data:`BACKGROUND_BYTES` or more is linted interruptibly, whoever asks: a message
      arriving stops the lint (the document keeps its state from before) and it is retried after
      :data:`RETRY_AFTER_S`; when messages are already waiting (``busy()``) it is not started. A
      request about it is then answered with what there is (nothing, or the per-function result), a
      diagnostic pull is cancelled for the client to pull again: its analysis never holds up a
      message about another document.
    """

    def __init__(self, *args: Any, max_bytes: Any = lambda: 0, busy: Any = lambda: False, host_for: Any = None) -> None:
        super().__init__(*args, host_for=host_for)
        self._max_bytes = max_bytes
        self._busy = busy
        self._retries: dict[str, tuple[asyncio.TimerHandle, bool]] = {}  # uri -> (timer, publish then)
        self.retried = 0  # background lints stopped or put off (for tests and logs)
        self.interrupted_at: float | None = None  # when a message last stopped a lint (wall clock)

    def _lint(self, doc: Document, full: bool = False) -> None:
        limit = self._max_bytes()
        if limit and len(doc.data) > limit:
            self._not_analysed(doc, limit)
            return
        if self._confirming is not None or len(doc.data) < BACKGROUND_BYTES:
            super()._lint(doc, full)
            return
        if self._busy():
            self._defer(doc)
            return
        kept = (doc.result, doc.lsp, doc.outline, doc.parsed, doc.tree, doc.expected, list(doc.edited),
                doc.full_parse_next, doc.linted, doc.mid_edit)
        dl = Deadline(BACKGROUND_MAX_S)
        self.interrupted_at = None
        try:
            with dl:
                self._confirming = dl
                try:
                    super()._lint(doc, full)
                finally:
                    self._confirming = None
        except TimeBudgetExceeded:
            pass
        if dl.fired:  # interrupted: the state from before, and again later
            if self.interrupted_at is not None and time.monotonic() - self.interrupted_at > 1.0:
                log.warning("the lint of %s stopped %.1f s after a message arrived", doc.uri,
                            time.monotonic() - self.interrupted_at)
            (doc.result, doc.lsp, doc.outline, doc.parsed, doc.tree, doc.expected, doc.edited,
             doc.full_parse_next, doc.linted, doc.mid_edit) = kept
            if doc.linted:  # a confirming lint of a per-function result: at the next pause
                self._schedule_confirm(doc)
            else:
                self._defer(doc)

    def interrupt(self) -> None:
        self.interrupted_at = time.monotonic()
        super().interrupt()

    def _not_analysed(self, doc: Document, limit: int) -> None:
        # The note is at the first byte: positions come from the first line alone (a line table of the
        # whole document, 3 million lines for 21 MB, took seconds on the event loop).
        nl = doc.data.find(b"\n", 0, 4096)
        head = doc.data[:nl + 1] if nl >= 0 else doc.data[:4096]
        source = Source(doc.path, head)
        result = FileResult(doc.path, source, doc.language)
        note = _internal(source, f"not analysed: the document has {len(doc.data):,} bytes, over the language "
                                 f"server's limit of {limit:,} (setting maxDocumentBytes; the command line "
                                 f"has no such limit)")
        result.diagnostics = [dataclasses.replace(note, severity=Severity.INFO)]
        doc.result, doc.parsed, doc.tree, doc.expected, doc.edited = result, None, None, None, []
        doc.full_parse_next, doc.linted, doc.outline, doc.mid_edit = True, True, None, False
        doc.lsp = [to_lsp_diagnostic(d, PositionMap(head, self._encoding()), doc.uri, doc.version, self._capabilities())
                   for d in result.diagnostics]

    def _defer(self, doc: Document) -> None:
        """Lint ``doc`` later (publishing then, if it was to be published now)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # in-process use without an event loop: lint now
            Linter._lint(self, doc)
            return
        self.retried += 1
        publish, doc.publish_after_lint = doc.publish_after_lint, False
        if (old := self._retries.pop(doc.uri, None)) is not None:
            old[0].cancel()
            publish = publish or old[1]
        self._retries[doc.uri] = (loop.call_later(RETRY_AFTER_S, self._retry, doc.uri, doc, publish), publish)

    def _retry(self, uri: str, doc: Document, publish: bool) -> None:
        self._retries.pop(uri, None)
        if self.documents.get(uri) is not doc:
            return
        doc.publish_after_lint = doc.publish_after_lint or publish
        if doc.linted:  # a request linted it meanwhile
            if doc.publish_after_lint:
                doc.publish_after_lint = False
                self._publish(doc)
            return
        try:
            self.ensure(doc)
        except Exception:
            log.exception("background lint of %s failed", uri)

    def close(self, uri: str) -> Document | None:
        if (retry := self._retries.pop(uri, None)) is not None:
            retry[0].cancel()
        return super().close(uri)


class ShaderlintServer(LanguageServer):
    protocol: ShaderlintProtocol

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        super().__init__("shaderlint", __version__, protocol_cls=ShaderlintProtocol)
        self.init_settings = ClientSettings()
        self.client_settings = ClientSettings()
        self.configs = ConfigFiles()
        self.max_message_bytes = max_message_bytes
        self.reader: Reader | None = None
        self.exit_code = 0
        self.linter = ServerLinter(self.settings_for, self.publish, self.encoding, self.publish_capabilities,
                                   self.context_for,
                                   max_bytes=lambda: self.client_settings.max_document_bytes,
                                   busy=lambda: self.reader is not None and self.reader.pending > 0,
                                   host_for=self.host_for)
        self.config_pending = False
        self.hosts = HostIndexes(lambda p: self.configs.settings_for(p, self.client_settings)[0], self.host_index_ready,
                                 self.workspace_folder_paths)
        # exact figures for hover and code lens, compiled in the background (shaderlint.server.compiled)
        self.compiled = CompiledFigures(self._document_version, self._exact_ready)

    # ---- transport -------------------------------------------------------------------------------
    def start_io(self, stdin=None, stdout=None) -> int:
        """Serve on stdin/stdout until ``exit`` or the end of the input; returns the exit code (LSP:
        0 after ``shutdown``, 1 without). Messages are read by :class:`.transport.Reader` on its own
        thread: bounded, resynchronised after framing errors, and every message that arrives
        interrupts a background lint (``Linter.interrupt``)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve_io(stdin or sys.stdin.buffer))
        except BrokenPipeError:
            log.error("the connection to the client is lost; stopping")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.compiled.shutdown()  # queued compiles are dropped (one running finishes)
            self.shutdown()
        return self.exit_code

    async def _serve_io(self, stdin) -> None:
        loop = asyncio.get_running_loop()
        finished = loop.create_future()

        def deliver(frame: Frame | None) -> None:
            if frame is None:  # the end of the input
                if not finished.done():
                    finished.set_result(None)
                return
            reader.done(frame)  # handled from here on: ``busy`` counts the messages still waiting
            t0 = time.monotonic()
            try:
                if not finished.done():
                    self.protocol.handle_frame(frame)
            except SystemExit as exc:  # the exit notification
                self.exit_code = exc.code if isinstance(exc.code, int) else 0
                if not finished.done():
                    finished.set_result(None)
            except BrokenPipeError:
                if not finished.done():
                    finished.set_exception(BrokenPipeError())
            except BaseException:  # noqa: BLE001 - nothing a client sends may stop the server
                log.exception("handling a message failed")
            if time.monotonic() - t0 > 5.0:
                log.warning("handling a message of %d bytes took %.1f s", len(frame.body or b""), time.monotonic() - t0)

        reader = Reader(stdin, loop, deliver, self.linter.interrupt, self.max_message_bytes)
        self.reader = reader.start()
        try:
            await finished
        finally:
            reader.stop()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """An error outside a request's answer: logged (stderr and window/logMessage), never shown as a
        pop-up with a traceback (pygls' default). A request's error is in its answer: stderr only."""
        if source is FeatureRequestError:
            log.info("request failed: %s", error)
            return
        log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error,
                                                           message=f"shaderlint server error: {error}"))
        except Exception:
            pass

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
        settings, error = self.configs.settings_for(doc.path, self.client_settings)
        if settings.compiler != "none":
            # A compile takes about a second per file: the editor never waits on one. Findings that
            # need the compiler's figures (SL505 on registers, SL506) come from CLI and CI runs.
            settings = settings.with_overrides(compiler="none")
        return settings, error

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

    # ---- project context -------------------------------------------------------------------------
    def read_for_context(self, path: str) -> bytes:
        """A header's bytes for a context: the editor's text when it is open, else the file on disk."""
        for doc in self.linter.documents.values():
            if doc.path == path:
                return doc.data
        with open(path, "rb") as fh:
            return fh.read()

    def context_for(self, doc: Document, settings: Settings):
        """The document's :class:`shaderlint.project.includes.FileContext` (headers read now: the editor's
        text of open ones, the disk's of the others; their scans are kept by content)."""
        if doc.language is None or not os.path.isabs(doc.path):
            return None
        from shaderlint.project.includes import Project

        if getattr(self, "_project", None) is None:
            self._project = Project(read=self.read_for_context, cache_reads=False)
        try:
            ctx = self._project.context(doc.path, doc.data, settings, doc.language)
        except Exception as exc:  # never fail a lint over the context: the file alone
            log.warning("the context of %s could not be read: %s", doc.uri, exc)
            return None
        return None if ctx.empty else ctx

    # ---- host facts ------------------------------------------------------------------------------
    def workspace_folder_paths(self) -> list[str]:
        try:
            folders = self.workspace.folders
        except Exception:
            return []
        out = []
        for f in folders.values():
            p = to_fs_path(f.uri)
            if p:
                out.append(p)
        root = getattr(self.workspace, "root_path", None)
        if root and not out:
            out.append(root)
        return out

    def host_for(self, doc: Document, settings: Settings):
        """The :class:`shaderlint.host.index.HostFacts` of ``doc`` (:mod:`shaderlint.server.hostfacts`):
        what the host index of its root says now; never waits for one being built."""
        if doc.language is None or not os.path.isabs(doc.path):
            return None
        return self.hosts.facts_for(doc.path, settings)

    def host_index_ready(self, root: str, old, new) -> None:
        """The host index of ``root`` was (re)built: lint again the open documents whose facts changed."""
        stale = False
        for doc in list(self.linter.documents.values()):
            if doc.language is None or not os.path.isabs(doc.path):
                continue
            was = old.facts_for(doc.path) if old is not None else None
            now = new.facts_for(doc.path) if new is not None else None
            if (was.digest() if was is not None else None) == (now.digest() if now is not None else None):
                continue
            stale = True
            doc.linted = False
            doc.outline = None  # the whole file, with the new facts
            if self.push_enabled():
                self.linter.schedule(doc, 0, publish=True)
        if stale and not self.push_enabled() and self.capability("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)

    def file_changed_on_disk(self, path: str) -> None:
        self.hosts.changed(path)

    async def watch_files(self) -> None:
        """Ask the client for workspace/didChangeWatchedFiles about the files a host index reads."""
        if not self.capability("workspace.did_change_watched_files.dynamic_registration"):
            return
        from shaderlint.host.index import load_scanners
        from shaderlint.host import ALL_SCANNERS
        from shaderlint.languages import EXTENSIONS

        load_scanners()
        exts = sorted({e.lstrip(".") for e in list(ALL_SCANNERS) + list(EXTENSIONS)})
        watchers = [types.FileSystemWatcher(glob_pattern="**/*.{" + ",".join(exts) + "}"),
                    types.FileSystemWatcher(glob_pattern="**/{shaderlint.toml,pyproject.toml}")]
        try:
            await self.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(id="shaderlint-host-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                   register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
        except Exception as exc:
            log.info("watching files not registered: %s", exc)

    def relint_dependents(self, doc: Document) -> None:
        """``doc`` (a header) changed: lint again the open documents that include it."""
        for dep in self.linter.dependents(doc.path):
            dep.outline = None  # the whole file, with the new context
            self.linter.schedule(dep, self.client_settings.debounce_ms, publish=self.push_enabled())

    # ---- documents -------------------------------------------------------------------------------
    def publish(self, doc: Document) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, version=doc.version, diagnostics=doc.lsp))

    def document(self, uri: str, full: bool = False) -> Document | None:
        """An open document with up-to-date diagnostics; ``full``: with the whole file's model too (a
        large document: when its lint was not stopped by other messages, see ServerLinter). None when
        it is not open or has no up-to-date diagnostics."""
        doc = self.linter.get(uri)
        if doc is not None:
            self.linter.ensure(doc, full)
            if not doc.linted:  # a large document whose lint gave way to other messages: nothing yet
                return None
        return doc

    def exact_for(self, doc: Document):
        """The compiler's figures for hover and code lens (None: estimates only); never waits on a compile."""
        try:
            settings, _ = self.configs.settings_for(doc.path, self.client_settings)  # (not settings_for's "none")
            return self.compiled.lookup(doc, settings, self.estimate_context(doc)[0])
        except Exception as exc:  # the estimate is still there
            log.warning("exact figures for %s: %s", doc.uri, exc)
            return None

    def _document_version(self, uri: str) -> Any:
        doc = self.linter.documents.get(uri)
        return None if doc is None else doc.version

    def _exact_ready(self, uri: str) -> None:
        """A background compile finished: code lenses may show its figures now."""
        if self.client_settings.code_lens and self.capability("workspace.code_lens.refresh_support"):
            self.workspace_code_lens_refresh(None)

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


def create_server(max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> ShaderlintServer:
    server = ShaderlintServer(max_message_bytes)

    @server.feature(types.INITIALIZE)
    def initialize(ls: ShaderlintServer, params: types.InitializeParams) -> None:
        ls.init_settings = ClientSettings().merged(params.initialization_options)
        ls.set_client_settings(ls.init_settings)
        ls.config_pending = bool(ls.capability("workspace.configuration"))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: ShaderlintServer, params: types.InitializedParams) -> None:
        await ls.pull_configuration()
        await ls.watch_files()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: ShaderlintServer, params: types.DidChangeConfigurationParams) -> None:
        # The new settings come in the notification (VS Code with `synchronize`, Neovim), or are to be asked
        # for. Settings that come with it apply before the next message is handled (a coroutine would run
        # after it: a pull right behind the notification got the old settings' result).
        section = params.settings.get("shaderlint") if isinstance(params.settings, dict) else None
        if isinstance(section, dict):
            ls.set_client_settings(ls.init_settings.merged(section))
            ls.refresh_all()
        elif ls.capability("workspace.configuration"):
            ls.config_pending = True
            asyncio.ensure_future(ls.pull_configuration())
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
        ls.relint_dependents(doc)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @_notification
    def did_save(ls: ShaderlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = to_fs_path(uri) or uri
        if os.path.isabs(path):
            ls.file_changed_on_disk(path)  # a host file, a kernel file or a configuration: its host index
        if os.path.basename(path) in CONFIG_FILES:
            ls.refresh_all()
            return
        doc = ls.linter.get(uri)
        if doc is None:
            return
        if params.text is not None:
            doc.replace_all(params.text)
        doc.linted = False  # the configuration may have changed on disk
        ls.linter.schedule(doc, 0, publish=ls.push_enabled())
        ls.relint_dependents(doc)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @_notification
    def did_change_watched_files(ls: ShaderlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = to_fs_path(change.uri)
            if path and os.path.isabs(path):
                ls.file_changed_on_disk(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_notification
    def did_close(ls: ShaderlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.compiled.forget(params.text_document.uri)
        if ls.linter.close(params.text_document.uri) is not None and ls.push_enabled():
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="shaderlint", inter_file_dependencies=False,
                                            workspace_diagnostics=False))
    @_request
    def pull_diagnostics(ls: ShaderlintServer, params: types.DocumentDiagnosticParams):
        doc = ls.linter.get(params.text_document.uri)
        if doc is None:  # not open: nothing to say about it
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        # Clients pull for every open document on their own: a large one is linted in the background
        # (ServerLinter), and when other messages stop that, the pull is cancelled for the client to retry.
        ls.linter.ensure(doc)
        if not doc.linted:
            raise JsonRpcException("other messages first: pull again", SERVER_CANCELLED, {"retriggerRequest": True})
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
        return hovers.hover(doc, params.position, ls.encoding(), *ls.estimate_context(doc),
                            exact=lambda: ls.exact_for(doc))

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    @_request
    def code_lens(ls: ShaderlintServer, params: types.CodeLensParams):
        if not ls.client_settings.code_lens:
            return None
        doc = ls.document(params.text_document.uri, full=True)
        if doc is None:
            return None
        return hovers.code_lenses(doc, ls.encoding(), *ls.estimate_context(doc),
                                 exact=ls.exact_for(doc)) or None

    return server


def serve(argv: Sequence[str] = ()) -> int:
    """Run the server on stdin/stdout until the client exits it. ``--stdio`` is accepted (and implied)."""
    p = argparse.ArgumentParser(prog="shaderlint lsp", description="The shaderlint language server, on stdio.")
    p.add_argument("--stdio", action="store_true", help="communicate over stdin/stdout (the default and only transport)")
    p.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES, metavar="N",
                   help="longest message accepted, in bytes; a longer one is skipped and answered with a "
                        f"Parse error (default {DEFAULT_MAX_MESSAGE_BYTES}, 64 MiB)")
    p.add_argument("--log-level", default=os.environ.get("SHADERLINT_LOG", "WARNING"),
                   choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="stderr log level (default WARNING)")
    try:
        args = p.parse_args(list(argv))
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="shaderlint-lsp %(levelname)s %(name)s: %(message)s")
    logging.getLogger("shaderlint").setLevel(getattr(logging, args.log_level))
    server = create_server(max(1, args.max_message_bytes))
    tune_gc()
    return server.start_io()


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
