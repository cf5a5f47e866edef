"""Applying fixes: non-overlapping edits, re-parse, refuse on new parse errors, iterate to a fixed point.

- :func:`apply_fixes` ``(path, data, diagnostics, unsafe=False) -> (new_bytes, applied_count)``: the
  fixes carried by ``diagnostics`` (safe ones, and unsafe ones with ``unsafe=True``), then further passes
  (re-lint, apply) until nothing changes or ``max_passes`` is reached, so applying twice changes nothing.
- :func:`fix_source`: the same with the full outcome (reasons for refusals, the final lint result).
- :func:`cli_fix`: ``--fix`` / ``--diff`` for the command line (atomic writes, permissions kept).

Within one pass the fixes are taken in file order; a fix whose edits overlap an edit already taken is
skipped (a later pass picks it up once the file has been re-linted). A fix that would delete a comment
is skipped, unless the comment is what the diagnostic is about (an unused suppression). After each pass
the result is re-parsed with the file's front end: if it has more parse errors than the input had, the
whole file is left unchanged and the reason is reported.
"""

from __future__ import annotations

import difflib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shaderlint.diagnostics import Applicability, Diagnostic, Edit

if TYPE_CHECKING:
    from shaderlint.config import Settings
    from shaderlint.result import FileResult

MAX_PASSES = 10


@dataclass
class FixOutcome:
    data: bytes  # the fixed text (the input if nothing applied or the fix was refused)
    applied: int = 0  # fixes applied over all passes
    passes: int = 0
    refused: list[str] = field(default_factory=list)  # why (part of) the fixes were not applied
    result: "FileResult | None" = None  # lint result of ``data`` (when the passes re-linted)

    @property
    def changed(self) -> bool:
        return self.applied > 0


def fixable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and bool(d.fix.edits) and (unsafe or d.fix.applicability == Applicability.SAFE)


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one point: order would be ambiguous
    return a.start < b.end and b.start < a.end or (a.start == a.end and b.start < a.start < b.end) \
        or (b.start == b.end and a.start < b.start < a.end)


def _deletes_comment(data: bytes, d: Diagnostic, e: Edit) -> bool:
    from shaderlint.model.source import Source

    if e.start == e.end:
        return False
    src = Source(d.path, data)
    for c in src.comments:
        if c.start >= e.end:
            break
        if c.end <= e.start:
            continue
        if c.start <= d.start < c.end:
            continue  # the diagnostic is about this comment (an unused suppression)
        if c.text.strip() not in e.text:
            return True
    return False


def select_edits(data: bytes, diagnostics: Iterable[Diagnostic], unsafe: bool,
                 reasons: list[str] | None = None) -> tuple[list[Edit], list[Diagnostic]]:
    """The edits of one pass: non-overlapping, in file order; returns (edits, diagnostics fixed)."""
    chosen: list[Edit] = []
    fixed: list[Diagnostic] = []
    cands = sorted((d for d in diagnostics if fixable(d, unsafe)),
                   key=lambda d: (min(e.start for e in d.fix.edits), d.start, d.code))
    for d in cands:
        edits = sorted(set(d.fix.edits), key=lambda e: (e.start, e.end))
        if any(_overlaps(a, b) for i, a in enumerate(edits) for b in edits[i + 1:]):
            continue  # a malformed fix: its own edits overlap
        if any(_deletes_comment(data, d, e) for e in edits):
            if reasons is not None:
                reasons.append(f"{d.path}:{d.line}: {d.code} fix skipped: it would delete a comment")
            continue
        new = [e for e in edits if e not in chosen]
        if any(_overlaps(e, c) for e in new for c in chosen):
            continue  # picked up by a later pass
        chosen.extend(new)
        fixed.append(d)
    return chosen, fixed


def apply_edits(data: bytes, edits: Sequence[Edit]) -> bytes:
    out = bytearray(data)
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        try:  # surrogateescape: text decoded that way from the source gets its original bytes back
            text = e.text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            text = e.text.encode("utf-8", "replace")
        out[e.start:e.end] = text
    return bytes(out)


PARSE_BUDGET = 10.0  # seconds for the parse that checks a fix; past it the fix is refused


def parse_error_count(path: str, data: bytes, language: str | None, budget: float = PARSE_BUDGET) -> int:
    """Parse errors (ERROR and MISSING nodes) in ``data``. Raises
    :class:`shaderlint.deadline.TimeBudgetExceeded` when the parse takes over ``budget`` seconds
    (tree-sitter's error recovery can take minutes on some hostile inputs)."""
    from shaderlint.deadline import Deadline
    from shaderlint.languages import FRONT_ENDS, language_for_path
    from shaderlint.model.source import Source

    language = language or language_for_path(path)
    if language is None:
        return 0
    with Deadline(budget) as dl:
        root = FRONT_ENDS[language].parse(Source(path, data), deadline=dl).tree.root_node
    return tree_error_count(root)


def tree_error_count(root) -> int:
    """ERROR and MISSING nodes under ``root`` (an error node's own errors count once)."""
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            count += 1
            continue
        stack.extend(c for c in n.children if c.has_error or c.is_missing)
    return count


def _relint_settings(diagnostics: Sequence[Diagnostic]) -> "Settings":
    """Without the caller's settings, later passes run the rules that reported something (never more:
    a rule that did not run before must not start fixing now)."""
    from shaderlint.config import Settings

    codes = tuple(sorted({d.code for d in diagnostics} | {"SL001"}))
    return Settings(select=codes)


def fix_source(path: str, data: bytes, settings: "Settings | None" = None, unsafe: bool = False,
               language: str | None = None, diagnostics: Sequence[Diagnostic] | None = None,
               max_passes: int = MAX_PASSES, host=None, file_context=None) -> FixOutcome:
    """Apply fixes until none applies. ``diagnostics`` are those of ``data`` (linted here when None);
    later passes re-lint with ``settings`` (default: the rules that produced fixes in ``diagnostics``)
    and ``host``, the host facts of the first lint (:class:`shaderlint.host.index.HostFacts`)."""
    from shaderlint.engine import lint_source

    if diagnostics is None:
        result = lint_source(path, data, settings, language, host=host, file_context=file_context)
        diagnostics = result.diagnostics
    else:
        result = None
    if settings is None:
        settings = _relint_settings(diagnostics)
    out = FixOutcome(data, result=result)
    from shaderlint.deadline import TimeBudgetExceeded

    try:
        errors_before = parse_error_count(path, data, language) if any(fixable(d, unsafe) for d in diagnostics) else 0
    except TimeBudgetExceeded:
        out.refused.append(f"{path}: fixes not applied: the file takes too long to parse to check them")
        return out
    current = data
    seen = {current}
    for _ in range(max_passes):
        edits, fixed = select_edits(current, diagnostics, unsafe, out.refused)
        if not edits:
            break
        candidate = apply_edits(current, edits)
        try:
            worse = parse_error_count(path, candidate, language) > errors_before
        except TimeBudgetExceeded:
            worse = True  # cannot be checked: not written
        if worse:
            where = ", ".join(f"{d.code} at line {d.line}" for d in fixed)
            out.refused.append(f"{path}: fixes not applied: they would introduce a parse error ({where})")
            return FixOutcome(data, 0, out.passes + 1, out.refused, None)
        out.passes += 1
        out.applied += len(fixed)
        current = candidate
        out.data = current
        out.result = lint_source(path, current, settings, language, host=host, file_context=file_context)
        diagnostics = out.result.diagnostics
        if current in seen:
            break  # a cycle between fixes: stop
        seen.add(current)
    return out


def apply_fixes(path: str, data: bytes, diagnostics: Sequence[Diagnostic], unsafe: bool = False, *,
                settings: "Settings | None" = None, language: str | None = None,
                max_passes: int = MAX_PASSES, reasons: list[str] | None = None) -> tuple[bytes, int]:
    """Apply the fixes of ``diagnostics`` to ``data``; returns (new bytes, number of fixes applied).
    Refusals (new parse errors) leave ``data`` unchanged; their reasons are appended to ``reasons``."""
    out = fix_source(path, data, settings, unsafe, language, diagnostics, max_passes)
    if reasons is not None:
        reasons.extend(out.refused)
    return out.data, out.applied


# ---- files -----------------------------------------------------------------------------------------
def is_read_only(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return True
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    return not os.access(path, os.W_OK)


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and ``os.replace``,
    keeping the file's permission bits (and owner, where allowed). A symbolic link is followed: the
    file it points to is rewritten, the link stays a link."""
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    st = os.stat(path)
    mode = stat.S_IMODE(st.st_mode)
    fd, tmp = tempfile.mkstemp(prefix=".shaderlint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if hasattr(os, "chown"):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass  # not ours to give away: the fixed file belongs to whoever runs --fix
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _write_bytes(out, data: bytes) -> None:
    """Write source bytes as they are (invalid UTF-8 and line endings survive) to a text stream."""
    buf = getattr(out, "buffer", None)
    if buf is None:
        out.write(data.decode("utf-8", "surrogateescape"))
        return
    out.flush()
    buf.write(data)
    buf.flush()


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8", "replace").splitlines(keepends=True)
    b = new.decode("utf-8", "replace").splitlines(keepends=True)
    rel = os.path.relpath(path) if os.path.isabs(path) else os.path.normpath(path)  # what `git apply` reads
    path = (path if rel.startswith("..") else rel).replace(os.sep, "/")
    lines = list(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}"))
    return "".join(x if x.endswith(("\n", "\r")) else x + "\n\\ No newline at end of file\n" for x in lines)


def cli_fix(results: list["FileResult"], *, fix: bool, diff: bool, unsafe: bool,
            settings_for: Callable[[str], "Settings"], stdin: bool = False, out=None, err=None) -> int | None:
    """``--fix`` / ``--diff`` for the CLI. With ``--diff`` prints unified diffs and returns the exit code
    (1 if anything would change). With ``--fix`` writes the fixed files (atomically, permissions kept;
    read-only files are left alone with a message), replaces each entry of ``results`` by the lint
    result of the fixed text and returns None, so that the caller reports what remains. Reading from
    stdin, ``--fix`` prints the fixed source instead and returns the exit code (0)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if stdin and fix and not diff:  # the fixed source goes to stdout
        for r in results:
            data = r.source.data
            if r.language is not None and any(fixable(d, unsafe) for d in r.diagnostics):
                outcome = fix_source(r.path, data, settings_for(r.path), unsafe, r.language, r.diagnostics, host=r.host,
                                     file_context=r.file_context)
                for reason in outcome.refused:
                    print(f"shaderlint: {reason}", file=err)
                data = outcome.data
            _write_bytes(out, data)
        return 0
    total = files = hidden = 0
    any_diff = False
    for i, r in enumerate(results):
        if r.language is None or not r.diagnostics:
            continue
        hidden += sum(1 for d in r.diagnostics if fixable(d, True) and not fixable(d, False))
        if not any(fixable(d, unsafe) for d in r.diagnostics):
            continue
        outcome = fix_source(r.path, r.source.data, settings_for(r.path), unsafe, r.language, r.diagnostics,
                             host=r.host, file_context=r.file_context)
        for reason in outcome.refused:
            print(f"shaderlint: {reason}", file=err)
        if not outcome.changed:
            continue
        if diff:
            out.write(unified_diff(r.path, r.source.data, outcome.data))
            any_diff = True
            total += outcome.applied
            files += 1
            continue
        if is_read_only(r.path):
            print(f"shaderlint: {r.path}: file is read-only; {outcome.applied} fix(es) not written", file=err)
            continue
        try:
            if _read(r.path) != r.source.data:  # saved by someone else since it was linted: theirs wins
                print(f"shaderlint: {r.path}: file changed while it was being linted; fixes not written", file=err)
                continue
            write_atomic(r.path, outcome.data)
        except OSError as e:
            print(f"shaderlint: {r.path}: could not write fixes: {e.strerror or e}", file=err)
            continue
        total += outcome.applied
        files += 1
        if outcome.result is not None:
            # Keep the diagnostics, not the tree and model behind them (about 2 MB a file: 1.2 GB on a
            # corpus with --unsafe-fixes); the caller only reports what remains.
            outcome.result.model = outcome.result.parsed = None
            results[i] = outcome.result
    verb = "would fix" if diff else "fixed"
    if total or hidden:
        msg = f"shaderlint: {verb} {total} problem{'s' if total != 1 else ''} in {files} file{'s' if files != 1 else ''}"
        if hidden and not unsafe:
            msg += f"; {hidden} more with --unsafe-fixes"
        print(msg, file=err)
    if diff:
        return 1 if any_diff else 0
    return None
