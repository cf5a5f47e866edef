"""``--add-ignore``: suppress every current finding with a ``// shaderlint: ignore[CODE]`` comment
(ruff's ``--add-noqa``), so that a team can adopt shaderlint on an existing code base and gate new
code only.

Each finding's start line (the line a suppression covers, see :mod:`shaderlint.suppression`) gets
the codes reported on it:

- a line already covered by an ``ignore[...]`` directive (at its end, or alone on the line above)
  gets the codes added to that directive's list;
- otherwise ``// shaderlint: ignore[CODES]`` is appended after the line's code (after an existing
  ``//`` comment it joins that comment). A line ending in a ``\\`` continuation (a macro body) gets a
  ``/* shaderlint: ignore[CODES] */`` before the backslash instead: a ``//`` comment would swallow the
  next line.

SL001 (the file could not be analysed) and SL002 (an unused suppression) are never suppressed this
way: the first hides that nothing was checked, the second is fixed by deleting the suppression.
The result is re-parsed like a fix (no new parse errors, else the file is left alone) and written
atomically with its permissions kept (:func:`shaderlint.fixes.write_atomic`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from shaderlint.diagnostics import Diagnostic, Edit
from shaderlint.suppression import UNUSED_CODE, parse_suppressions

if TYPE_CHECKING:
    from shaderlint.config import Settings
    from shaderlint.result import FileResult
    from shaderlint.model.source import Source

NEVER = ("SL001", UNUSED_CODE)


def _sorted_codes(codes) -> str:
    return ", ".join(sorted(set(codes)))


def ignore_edits(source: "Source", diagnostics: list[Diagnostic]) -> tuple[list[Edit], int]:
    """The edits that suppress ``diagnostics`` in ``source``; returns (edits, findings covered)."""
    by_line: dict[int, set[str]] = {}
    covered = 0
    for d in diagnostics:
        if d.code in NEVER or d.path != source.path:
            continue
        by_line.setdefault(d.line, set()).add(d.code)
        covered += 1
    if not by_line:
        return [], 0
    sups = [s for s in parse_suppressions(source) if not s.file_level and s.codes and s.codes_start >= 0]
    data = source.data
    edits: list[Edit] = []
    for line, codes in sorted(by_line.items()):
        existing = next((s for s in sups if s.line == line), None)
        if existing is not None:
            edits.append(Edit(existing.codes_start, existing.codes_end, _sorted_codes(existing.codes + tuple(codes))))
            continue
        idx = line - 1
        start = source.line_starts[idx]
        end = source.line_starts[idx + 1] if idx + 1 < len(source.line_starts) else len(data)
        text = data[start:end].rstrip(b"\r\n")
        body = text.rstrip(b" \t")
        names = _sorted_codes(codes)
        if body.endswith(b"\\"):  # a continued line: a // comment would continue onto the next line
            at = start + len(body) - 1
            pad = b"" if data[at - 1:at] in (b" ", b"\t") else b" "
            edits.append(Edit(at, at, pad.decode() + f"/* shaderlint: ignore[{names}] */ "))
            continue
        at = start + len(body)
        if _in_line_comment(source, at):
            edits.append(Edit(at, at, f" shaderlint: ignore[{names}]"))
        else:
            edits.append(Edit(at, at, f"  // shaderlint: ignore[{names}]"))
    return edits, covered


def _in_line_comment(source: "Source", offset: int) -> bool:
    for c in source.comments:
        if c.start < offset <= c.end and source.data[c.start:c.start + 2] == b"//":
            return True
    return False


def add_ignores(results: list["FileResult"], settings_for: Callable[[str], "Settings"], err=None) -> int:
    """Write the suppressions for every result; returns the number of findings now suppressed."""
    from shaderlint.deadline import TimeBudgetExceeded
    from shaderlint.fixes import apply_edits, is_read_only, parse_error_count, write_atomic

    err = err or sys.stderr
    total = files = 0
    from shaderlint.host import scanners_for
    from shaderlint.host.lint import host_parse_errors

    for r in results:
        if not r.diagnostics or (r.language is None and not scanners_for(r.path)):
            continue  # (a result without a language is a host file's: shaderlint.host.lint)
        edits, covered = ignore_edits(r.source, r.diagnostics)
        if not edits:
            continue
        data = r.source.data
        new = apply_edits(data, edits)
        try:
            if r.language is None:
                after, before = host_parse_errors(r.path, new), host_parse_errors(r.path, data)
                worse = after is None or before is None or after > before
            else:
                worse = parse_error_count(r.path, new, r.language) > parse_error_count(r.path, data, r.language)
        except TimeBudgetExceeded:
            worse = True
        if worse:
            print(f"shaderlint: {r.path}: suppressions not added: they would introduce a parse error", file=err)
            continue
        if is_read_only(r.path):
            print(f"shaderlint: {r.path}: file is read-only; suppressions not added", file=err)
            continue
        try:
            with open(r.path, "rb") as fh:
                if fh.read() != data:
                    print(f"shaderlint: {r.path}: file changed while it was being linted; suppressions not added",
                          file=err)
                    continue
            write_atomic(r.path, new)
        except OSError as e:
            print(f"shaderlint: {r.path}: could not write suppressions: {e.strerror or e}", file=err)
            continue
        total += covered
        files += 1
    print(f"shaderlint: added suppressions for {total} finding{'s' if total != 1 else ''} "
          f"in {files} file{'s' if files != 1 else ''}", file=err)
    return total
