"""Open documents, incremental re-linting and diagnostics (pushed and pulled).

Each open document keeps its bytes and the :class:`~shaderlint.languages.Parsed`
of its last lint. ``didChange`` edits are applied to the bytes and, with
``Tree.edit``, to a copy of that parse's tree, so the next lint re-parses
incrementally (``lint_source(..., old=...)``). The front ends mask constructs
the grammars cannot read with same-length blanks, so edits map 1:1 onto the
masked text; but an edit can also change masks *outside* the edited bytes
(typing ``[[`` or ``//`` in front of code). After an incremental parse the
masked text is compared with the previous one, edits applied, outside the
edited ranges; when they differ the file is parsed again from scratch.

Diagnostics are the engine's, for the same text and settings as the CLI.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import tree_sitter as ts
from lsprotocol import types

from shaderlint import incremental
from shaderlint.config import Settings
from shaderlint.engine import FileResult, _internal, lint_source
from shaderlint.incremental import Outline, build_outline, carry_outline, partial_lint
from shaderlint.deadline import Deadline, TimeBudgetExceeded
from shaderlint.languages import FRONT_ENDS, Parsed
from shaderlint.languages.base import _parse
from shaderlint.model.source import Source
from shaderlint.server.convert import (
    UTF16,
    PositionMap,
    encode_text,
    to_lsp_diagnostic,
    ts_point,
    ts_point_after,
)

log = logging.getLogger(__name__)

#: Seconds of quiet after an incremental lint before the whole file is linted again (see Linter._confirm).
CONFIRM_AFTER_S = 1.5
#: CPU seconds a parse of the whole text may take for the check of a partial lint. An incremental parse
#: after a keystroke takes about a millisecond on 3,000 lines; one that runs long is tree-sitter's error
#: recovery spreading a half-typed statement over the file (240 ms on the latency bench's CUDA file), and
#: the per-function lint then answers without it (shaderlint.incremental._mid_edit).
WHOLE_TREE_BUDGET_S = 0.02
#: Seconds a confirming whole-file lint may take before it gives up (it is retried at the next pause).
CONFIRM_MAX_S = 30.0
#: Run a full garbage collection after each confirming lint (the server's serve() makes full
#: collections rare while the user types; see shaderlint.server.server.tune_gc).
IDLE_GC = True


@dataclass(eq=False)
class Document:
    uri: str
    path: str
    language_id: str
    language: str | None
    version: int | None
    data: bytes
    # State of the last lint.
    result: FileResult | None = None
    lsp: list[types.Diagnostic] = field(default_factory=list)
    linted: bool = False  # result/lsp match ``data`` and the current settings
    # Incremental parsing: the last parse, a copy of its tree with the edits since, the masked text
    # with the same edits applied (None: full parse next) and the edited byte ranges (current offsets).
    parsed: Parsed | None = None
    tree: ts.Tree | None = None
    expected: bytearray | None = None
    edited: list[list[int]] = field(default_factory=list)
    full_parse_next: bool = True
    timer: asyncio.TimerHandle | None = None
    publish_after_lint: bool = False
    stats: dict[str, int] = field(default_factory=lambda: {"incremental": 0, "full": 0, "mask_fallback": 0,
                                                           "partial": 0, "confirmed": 0, "mismatch": 0,
                                                           "interrupted": 0, "mid_edit": 0})
    # Per-function incremental linting (shaderlint.incremental): the functions of the last lint, with the
    # edits since. None: the next lint is a whole-file one.
    outline: Outline | None = None
    confirm_timer: asyncio.TimerHandle | None = None
    # The last lint was a per-function one of functions mid-edit (shaderlint.incremental._mid_edit):
    # not what a whole-file lint of the text says, so it is not confirmed by one.
    mid_edit: bool = False

    def position_map(self, encoding: str) -> PositionMap:
        source = self.result.source if self.result is not None and self.result.source.data is self.data else None
        return PositionMap(self.data, encoding, source)

    # ---- edits ------------------------------------------------------------------------------------
    def replace_all(self, text: str) -> None:
        self.data = encode_text(text)
        self.linted = False
        self.full_parse_next = True
        self.tree = self.expected = None
        self.edited = []
        self.outline = None

    def apply_change(self, change: types.TextDocumentContentChangeEvent, encoding: str = UTF16) -> None:
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self.replace_all(change.text)
            return
        old = self.data
        known = self.result.source if self.result is not None and self.result.source.data is old else None
        start, end = PositionMap(old, encoding, known).offsets(change.range)  # known: its line table is built
        new = encode_text(change.text)
        self.data = old[:start] + new + old[end:]
        self.linted = False
        if self.outline is not None:
            self.outline.edit(start, end, len(new))
        if self.full_parse_next or self.parsed is None:
            return
        if self.tree is None:  # first edit since the last lint: edit copies, keep the last parse intact
            self.tree = self.parsed.tree.copy()
            self.expected = bytearray(self.parsed.parse_bytes)
            self.edited = []
        start_point = ts_point(old, start)
        self.tree.edit(start, end, start + len(new), start_point, ts_point(old, end), ts_point_after(start_point, new))
        self.expected[start:end] = new
        delta = len(new) - (end - start)
        for r in self.edited:
            r[0] = r[0] if r[0] <= start else (start if r[0] <= end else r[0] + delta)
            r[1] = r[1] if r[1] < start else (start + len(new) if r[1] <= end else r[1] + delta)
        self.edited.append([start, start + len(new)])

    def _masks_unchanged(self, parsed: Parsed) -> bool:
        """Whether the new masked text equals the old one (edits applied) outside the edited ranges."""
        actual, expected = parsed.parse_bytes, self.expected
        if expected is None or len(actual) != len(expected):
            return False
        pos = 0
        for a, b in sorted((max(0, r[0]), min(len(actual), r[1])) for r in self.edited):
            if a > pos and actual[pos:a] != expected[pos:a]:
                return False
            pos = max(pos, b)
        return actual[pos:] == expected[pos:]

    # ---- linting ----------------------------------------------------------------------------------
    def _whole_tree(self, patches: list[tuple[int, int, bytes]]) -> ts.Tree | None:
        """The whole current text parsed for a check of the partial lint: the last whole-file parse's
        masked text with the edits since (``expected``), the given ranges (edited bodies) replaced by
        their masked text, parsed incrementally on the edited tree. Nothing is stored: the next
        whole-file lint still starts from the last whole-file parse."""
        if self.full_parse_next or self.parsed is None or self.language is None:
            return None
        if self.tree is None:  # no edit since the last whole-file parse
            return self.parsed.tree
        masked = bytearray(self.expected)
        for start, end, text in sorted(patches, reverse=True):
            if len(text) != end - start or end > len(masked):
                return None
            masked[start:end] = text
        try:
            with Deadline(WHOLE_TREE_BUDGET_S) as dl:  # error recovery can run long: cancellable
                return _parse(FRONT_ENDS[self.language].parser(), bytes(masked), self.tree, dl)
        except TimeBudgetExceeded:
            log.debug("parsing %s for an incremental check took too long", self.uri)
            return None
        except Exception:
            log.warning("parsing %s for an incremental check failed", self.uri)
            return None

    def lint(self, settings: Settings, config_error: str | None = None, full: bool = False,
             context: Callable[[], object] | None = None, host: object = None) -> FileResult:
        """Lint the current text: only the functions the edits can affect when that is known to give
        the whole-file answer (``shaderlint.incremental``), else the whole file (incremental parse).
        ``context()``: the file's :class:`shaderlint.project.includes.FileContext` for a whole-file
        lint (the per-function lints keep the one of the last whole-file lint). ``host``: the
        :class:`shaderlint.host.index.HostFacts` of the code launching the file's kernels
        (:mod:`shaderlint.server.hostfacts`); a file with host facts is linted whole (the
        per-function lint does not carry them)."""
        if host is not None and not host.launches:
            host = None
        if not full and not config_error and host is None and self.outline is not None and self.result is not None \
                and self.result.host is None:
            part = partial_lint(self.path, self.data, settings, self.language, self.outline,
                                whole_parse=self._whole_tree, mid_edit=True)
            if part is not None:
                self.stats["mid_edit" if part.mid_edit else "partial"] += 1
                self.result, self.outline, self.linted, self.mid_edit = part.result, part.outline, True, part.mid_edit
                return part.result  # the tree edits keep accumulating for the next whole-file parse
            log.debug("%s: whole-file lint (%s)", self.uri, incremental.last_fallback)
        old = None
        if not self.full_parse_next and self.parsed is not None:
            old = dataclasses.replace(self.parsed, tree=self.tree if self.tree is not None else self.parsed.tree)
        self.mid_edit = False
        file_context = context() if context is not None else None
        if old is not None and (file_context.digest() if file_context is not None else None) != (
                self.result.file_context.digest() if self.result is not None and self.result.file_context is not None
                else None):
            old = None  # other header macros: other masks, parse the whole file again
        result = lint_source(self.path, self.data, settings, language=self.language, old=old, file_context=file_context,
                             host=host)
        if old is not None:
            if result.parsed is not None and self.tree is not None and not self._masks_unchanged(result.parsed):
                self.stats["mask_fallback"] += 1
                result = lint_source(self.path, self.data, settings, language=self.language, file_context=file_context,
                                     host=host)
                self.stats["full"] += 1
            else:
                self.stats["incremental"] += 1
        else:
            self.stats["full"] += 1
        if config_error:
            result.diagnostics.insert(0, _internal(result.source, config_error))
        self.result = result
        self.parsed = result.parsed
        self.tree = self.expected = None
        self.edited = []
        self.full_parse_next = result.parsed is None
        self.linted = True
        prev, self.outline = self.outline, None
        if not config_error:
            # A file that does not parse right now (a statement half typed) keeps the functions the last
            # outline knew, so that the next keystrokes are linted per function again.
            self.outline = build_outline(result, settings) or carry_outline(prev, result, settings)
        return result


def crash_result(doc: Document, exc: BaseException) -> FileResult:
    """A lint that failed inside the server: one SL001 so the user sees why nothing else is reported."""
    source = Source(doc.path, doc.data)
    result = FileResult(doc.path, source, doc.language)
    result.diagnostics = [_internal(source, f"shaderlint server error: {type(exc).__name__}: {exc}")]
    return result


class Linter:
    """Lints documents on demand or after a debounce, and publishes the results."""

    def __init__(self, settings_for: Callable[[Document], tuple[Settings, str | None]],
                 publish: Callable[[Document], None], encoding: Callable[[], str],
                 publish_capabilities: Callable[[], types.PublishDiagnosticsClientCapabilities | None],
                 context_for: Callable[[Document, Settings], object] | None = None,
                 host_for: Callable[[Document, Settings], object] | None = None) -> None:
        self.documents: dict[str, Document] = {}
        self._context_for = context_for  # a document's FileContext (shaderlint.project), or None
        self._host_for = host_for  # a document's HostFacts (shaderlint.server.hostfacts), or None
        self._settings_for = settings_for
        self._publish = publish
        self._encoding = encoding
        self._capabilities = publish_capabilities
        self._confirming: Deadline | None = None  # the budget of a confirming lint now running

    def get(self, uri: str) -> Document | None:
        return self.documents.get(uri)

    def ensure(self, doc: Document, full: bool = False) -> Document:
        """Lint ``doc`` now if its diagnostics are stale (cancelling a pending debounce). ``full``: the
        caller needs the whole file's model (hover, code lens), not only up-to-date diagnostics."""
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None
        if full and doc.result is not None and doc.result.partial:
            self._cancel_confirm(doc)
            self._confirm(doc.uri, doc, interruptible=False)
        if not doc.linted:
            self._lint(doc, full)
            if doc.publish_after_lint:
                doc.publish_after_lint = False
                self._publish(doc)
        return doc

    def _lint(self, doc: Document, full: bool = False) -> None:
        self._cancel_confirm(doc)
        try:
            settings, error = self._settings_for(doc)
            context = None
            if self._context_for is not None and not error:
                def context(doc=doc, settings=settings):
                    return self._context_for(doc, settings)
            host = None
            if self._host_for is not None and not error:
                try:
                    host = self._host_for(doc, settings)
                except Exception:  # host facts are an extra: the file alone
                    log.exception("the host facts of %s could not be read", doc.uri)
            result = doc.lint(settings, error, full=full, context=context, host=host)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # incl. the engine's time-budget exception: keep serving, show an SL001
            running = self._confirming
            if isinstance(exc, TimeBudgetExceeded) and running is not None and running.fired:
                raise  # a message interrupted the confirming lint: _confirm keeps the per-function result
            log.exception("linting %s failed", doc.uri)
            result = crash_result(doc, exc)
            doc.result, doc.parsed, doc.tree, doc.expected = result, None, None, None
            doc.full_parse_next, doc.linted, doc.outline, doc.mid_edit = True, True, None, False
        doc.lsp = self._convert(doc, result)
        if result.partial and not doc.mid_edit:
            self._schedule_confirm(doc)

    def _convert(self, doc: Document, result: FileResult) -> list[types.Diagnostic]:
        pmap = doc.position_map(self._encoding())
        caps = self._capabilities()
        lsp = []
        for d in result.diagnostics:
            try:
                lsp.append(to_lsp_diagnostic(d, pmap, doc.uri, doc.version, caps))
            except Exception:
                log.exception("could not convert a diagnostic of %s", doc.uri)
        return lsp

    # ---- confirming incremental results -----------------------------------------------------------
    def _schedule_confirm(self, doc: Document) -> None:
        """Once the user pauses, lint the whole file: it gives hover and code lens their model and
        checks the incremental result (a difference is logged as a defect and published)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # in-process use without an event loop: the partial result stands
            return
        doc.confirm_timer = loop.call_later(CONFIRM_AFTER_S, self._confirm, doc.uri, doc)

    def _cancel_confirm(self, doc: Document) -> None:
        if doc.confirm_timer is not None:
            doc.confirm_timer.cancel()
            doc.confirm_timer = None

    def interrupt(self) -> None:
        """A message arrived (called from the reader thread): stop a confirming lint, if one runs, so
        that the message is answered first. The document keeps its per-function result."""
        running = self._confirming
        if running is not None:
            running.expire_now()

    def _confirm(self, uri: str, doc: Document, interruptible: bool = True) -> None:
        doc.confirm_timer = None
        if self.documents.get(uri) is not doc or not doc.linted or doc.result is None or not doc.result.partial:
            return
        if doc.mid_edit and interruptible:
            return  # nothing to confirm (see Document.mid_edit); a request that needs the model still lints
        before, mid_edit = doc.lsp, doc.mid_edit
        kept = (doc.result, doc.lsp, doc.outline, doc.parsed, doc.tree, doc.expected, list(doc.edited),
                doc.full_parse_next, doc.mid_edit)
        dl = Deadline(CONFIRM_MAX_S)
        try:
            with dl:
                self._confirming = dl if interruptible else None
                try:
                    self._lint(doc, full=True)
                finally:
                    self._confirming = None
        except TimeBudgetExceeded:
            pass
        except Exception:
            log.exception("confirming lint of %s failed", uri)
            return
        if dl.fired:  # interrupted (or too slow): keep the per-function result, confirm at the next pause
            (doc.result, doc.lsp, doc.outline, doc.parsed, doc.tree, doc.expected, doc.edited,
             doc.full_parse_next, doc.mid_edit) = kept
            doc.stats["interrupted"] += 1
            self._schedule_confirm(doc)
            return
        if mid_edit:
            # Linted whole for its model (hover, code lens asked): the diagnostics shown stay those of
            # the functions mid-edit (the whole file's error recovery reads them worse), and so does the
            # outline the next keystroke is linted on.
            doc.result.diagnostics = kept[0].diagnostics
            doc.lsp, doc.outline, doc.mid_edit = before, kept[2], True
            return
        doc.stats["confirmed"] += 1
        if IDLE_GC:
            gc.collect()  # the user paused: the full collection the server's GC settings put off
        if doc.lsp != before:
            doc.stats["mismatch"] += 1
            log.warning("%s: the incremental diagnostics differed from a whole-file lint (a shaderlint defect; "
                        "please report it); publishing the whole-file ones", uri)
            self._publish(doc)

    def schedule(self, doc: Document, delay_ms: float, publish: bool) -> None:
        """Lint after ``delay_ms`` of quiet (0: now); publish the result when ``publish``."""
        doc.linted = False
        doc.publish_after_lint = doc.publish_after_lint or publish
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None
        if delay_ms <= 0 or not publish:
            if publish:
                self.ensure(doc)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (in-process use): no debounce
            self.ensure(doc)
            return
        doc.timer = loop.call_later(delay_ms / 1000.0, self._fire, doc.uri, doc)

    def _fire(self, uri: str, doc: Document) -> None:
        doc.timer = None
        if self.documents.get(uri) is doc:
            try:
                self.ensure(doc)
            except Exception:
                log.exception("debounced lint of %s failed", uri)

    def invalidate_all(self) -> None:
        for doc in self.documents.values():
            doc.linted = False

    def dependents(self, path: str) -> list[Document]:
        """The open documents whose last lint read the header at ``path`` (their context's files)."""
        import os

        p = os.path.normpath(os.path.abspath(path))
        out = []
        for doc in self.documents.values():
            ctx = doc.result.file_context if doc.result is not None else None
            if ctx is not None and doc.path != path and (any(f == p for f, _ in ctx.files) or ctx.includer == p):
                out.append(doc)
        return out

    def close(self, uri: str) -> Document | None:
        doc = self.documents.pop(uri, None)
        if doc is not None and doc.timer is not None:
            doc.timer.cancel()
        if doc is not None:
            self._cancel_confirm(doc)
        return doc
