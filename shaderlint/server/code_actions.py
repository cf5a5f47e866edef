"""Code actions: the rules' quick fixes, "ignore on this line" and ``source.fixAll.shaderlint``.

Quick fixes are read from the fix edits each diagnostic carries in ``data``
(nothing is recomputed). Safe fixes are ``isPreferred``; an unsafe fix (one that may change
what the kernel computes or the ordering between its threads, such as removing a barrier) says so
in its title (:func:`action_title`) so that it is never applied unawares. The ignore action
appends ``// shaderlint: ignore[SLnnn]`` to the diagnostic's line, or adds the
code to a directive already there. ``source.fixAll.shaderlint`` applies every
safe fix of the document at once, through :func:`shaderlint.fixes.apply_fixes`
(the CLI's ``--fix``), as one edit; unsafe fixes are never part of it (the server has no setting
to opt in to them: the CLI's ``--unsafe-fixes`` is the only way to apply them in bulk).
"""

from __future__ import annotations

import re

from lsprotocol import types

from shaderlint.config import Settings
from shaderlint.diagnostics import Applicability, Diagnostic
from shaderlint.fixes import apply_fixes
from shaderlint.server.convert import PositionMap, decode_bytes, fix_from_data, ranges_overlap, text_edit
from shaderlint.server.diagnostics import Document

FIX_ALL = "source.fixAll.shaderlint"
FIX_ALL_TITLE = "shaderlint: fix all safe problems"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL]

_DIRECTIVE = re.compile(rb"(shaderlint:\s*ignore\[)([^\]]*)(\])")


def _wanted(kind: str, only: list[str] | None) -> bool:
    """LSP kinds are hierarchical: asking for ``source`` includes ``source.fixAll.shaderlint``."""
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def workspace_edit(doc: Document, edits: list[types.TextEdit], doc_changes: bool) -> types.WorkspaceEdit:
    if doc_changes:
        ident = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=ident, edits=edits)])
    return types.WorkspaceEdit(changes={doc.uri: edits})


def code_actions(doc: Document, params: types.CodeActionParams, encoding: str, doc_changes: bool,
                 settings: Settings, can_resolve: bool) -> list[types.CodeAction]:
    """Quick fixes and ignore actions for the diagnostics in ``params.range``, and fixAll.

    fixAll re-lints to check its result, so it is computed only when asked for by kind
    (``only``: ``source.fixAll`` on save) or, for the light bulb, left to ``codeAction/resolve``."""
    only = [str(k) for k in params.context.only] if params.context.only else None
    actions: list[types.CodeAction] = []
    pmap = doc.position_map(encoding)
    here = [d for d in doc.lsp if ranges_overlap(d.range, params.range)]
    if _wanted(types.CodeActionKind.QuickFix, only):
        for d in here:
            fix = fix_from_data(d.data)
            if fix is not None:
                title, safe, edits = fix
                actions.append(types.CodeAction(
                    title=action_title(title, safe), kind=types.CodeActionKind.QuickFix, diagnostics=[d],
                    edit=workspace_edit(doc, edits, doc_changes), is_preferred=safe))
        seen: set[tuple[int, str]] = set()
        for d in here:
            code = str(d.code or "")
            if not code or code == "SL001" and d.range.start == d.range.end == types.Position(line=0, character=0):
                continue  # a whole-file problem is not a line's
            if (d.range.start.line, code) in seen:
                continue
            seen.add((d.range.start.line, code))
            edit = ignore_edit(doc, pmap, d.range.start.line, code)
            if edit is not None:
                actions.append(types.CodeAction(
                    title=f"Ignore {code} on this line", kind=types.CodeActionKind.QuickFix, diagnostics=[d],
                    edit=workspace_edit(doc, [edit], doc_changes)))
    if _wanted(FIX_ALL, only) and safe_diagnostics(doc):
        action = types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL,
                                  data={"uri": doc.uri, "version": doc.version})
        if only is not None:
            action = resolve_fix_all(doc, action, encoding, doc_changes, settings)
            if action.edit is not None:
                actions.append(action)
        elif can_resolve:
            actions.append(action)  # the edit comes with codeAction/resolve
    return actions


UNSAFE_SUFFIX = " (unsafe fix: may change behaviour)"


def action_title(title: str, safe: bool) -> str:
    """A quick fix's title: an unsafe fix says so."""
    return title if safe else title + UNSAFE_SUFFIX


def resolve_fix_all(doc: Document, action: types.CodeAction, encoding: str, doc_changes: bool,
                    settings: Settings) -> types.CodeAction:
    """``action`` with the edit applying every safe fix of ``doc`` (no edit when none applies)."""
    edits = fix_all_edits(doc, doc.position_map(encoding), settings)
    action.edit = workspace_edit(doc, edits, doc_changes) if edits else None
    return action


def ignore_edit(doc: Document, pmap: PositionMap, line: int, code: str) -> types.TextEdit | None:
    """The edit that suppresses ``code`` on a 0-based line, or None where a comment cannot go."""
    starts = pmap.source.line_starts
    if line >= len(starts):
        return None
    start, end = pmap.line_bounds(line)
    text = doc.data[start:end]
    source = pmap.source
    for m in _DIRECTIVE.finditer(text):
        if source.in_comment_or_string(start + m.start()):
            codes = [c.strip() for c in m.group(2).decode("utf-8", "replace").split(",") if c.strip()]
            if any(code.startswith(c.upper()) for c in codes):
                return None
            at = start + m.end(2)
            return text_edit(pmap, at, at, (", " if codes else "") + code)
    if end > start and source.in_comment_or_string(end - 1):
        lexeme = next((s for s, e, _ in source.lexical if s <= end - 1 < e), None)
        if lexeme is not None and (lexeme < start or not _closes_on_line(doc.data, lexeme, end)):
            return None  # inside a comment or string spanning lines
    stripped = text.rstrip()
    if stripped.endswith(b"\\"):  # macro continuation: a // comment would swallow the next line
        at = start + len(stripped) - 1
        return text_edit(pmap, at, at, f"/* shaderlint: ignore[{code}] */ ")
    at = start + len(stripped)
    return text_edit(pmap, at, end, f"  // shaderlint: ignore[{code}]")


def _closes_on_line(data: bytes, lexeme_start: int, line_end: int) -> bool:
    if data.startswith(b"//", lexeme_start):
        return not data[lexeme_start:line_end].rstrip().endswith(b"\\")
    if data.startswith(b"/*", lexeme_start):
        return data.find(b"*/", lexeme_start + 2, line_end) >= 0
    return True


def safe_diagnostics(doc: Document) -> list[Diagnostic]:
    if doc.result is None:
        return []
    return [d for d in doc.result.diagnostics if d.fix is not None and d.fix.applicability == Applicability.SAFE]


def fix_all_edits(doc: Document, pmap: PositionMap, settings: Settings) -> list[types.TextEdit]:
    """One edit that applies every safe fix (several passes; refused when it would break the parse)."""
    diags = safe_diagnostics(doc)
    if not diags:
        return []
    new, applied = apply_fixes(doc.path, doc.data, diags, unsafe=False, settings=settings, language=doc.language)
    if not applied or new == doc.data:
        return []
    start, end, text = minimal_replacement(doc.data, new)
    return [text_edit(pmap, start, end, text)]


def minimal_replacement(old: bytes, new: bytes) -> tuple[int, int, str]:
    """One edit turning ``old`` into ``new``: the bytes between their common prefix and suffix,
    widened to whole UTF-8 characters and never splitting a CRLF."""
    n = min(len(old), len(new))
    p = 0
    while p < n and old[p] == new[p]:
        p += 1
    s = 0
    while s < n - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1

    def widen_left(i: int) -> int:
        while i > 0 and (0x80 <= old[i] < 0xC0 if i < len(old) else False):
            i -= 1
        if 0 < i < len(old) and old[i - 1] == 0x0D and old[i] == 0x0A:
            i -= 1
        return i

    start = widen_left(p)
    end = len(old) - s
    while end < len(old) and 0x80 <= old[end] < 0xC0:
        end += 1
    if 0 < end < len(old) and old[end - 1] == 0x0D and old[end] == 0x0A:
        end += 1
    new_end = len(new) - (len(old) - end)
    return start, end, decode_bytes(new[start:new_end])
