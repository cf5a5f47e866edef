"""Inline suppressions: ``// shaderlint: ignore[SL101]`` and ``// shaderlint: ignore-file[SL201]``.

An ``ignore`` comment at the end of a code line covers that line; on a line of
its own it covers the next line that holds code. Codes may be prefixes
(``SL1``) and are separated by commas. A bare ``ignore`` (no codes) covers
every rule on that line and is reported by ``--show-unused-ignores`` as too
broad. ``ignore-file`` covers the whole file.

:func:`apply_suppressions` records in :attr:`Suppression.used` which codes each
suppression actually suppressed; :func:`unused_suppressions` turns the ones
that suppressed nothing (or are bare) into SL002 findings, with fixes that
remove the unused codes or name the used ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shaderlint.diagnostics import Applicability, Diagnostic, Edit, Finding, Fix
from shaderlint.model.source import Source

_DIRECTIVE_B = re.compile(rb"shaderlint:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?")
UNUSED_CODE = "SL002"


@dataclass(eq=False)
class Suppression:
    start: int  # the comment holding the directive
    end: int
    file_level: bool
    codes: tuple[str, ...]  # empty = all
    line: int  # 1-based line it covers (0 for file level)
    used: set[str] = field(default_factory=set)
    directive_start: int = -1  # `shaderlint: ignore[...]` within the comment (byte offsets)
    directive_end: int = -1
    codes_start: int = -1  # inside the brackets; -1 without brackets
    codes_end: int = -1
    comment_only: bool = False  # the comment holds nothing but the directive
    own_line: bool = False  # the comment is alone on its line

    def covers(self, code: str) -> bool:
        return not self.codes or any(code.startswith(c) for c in self.codes)


def parse_suppressions(source: Source) -> list[Suppression]:
    out: list[Suppression] = []
    data = source.data
    for c in source.comments:
        raw = data[c.start:c.end]
        for m in _DIRECTIVE_B.finditer(raw):
            codes_text = (m.group(2) or b"").decode("utf-8", "replace")
            codes = tuple(x.strip().upper() for x in codes_text.split(",") if x.strip())
            file_level = m.group(1) == b"ignore-file"
            line_idx = source.line_of(c.start)
            line_start = source.line_starts[line_idx]
            before = data[line_start:c.start].strip()
            line_end = source.line_starts[line_idx + 1] if line_idx + 1 < len(source.line_starts) else len(data)
            after = data[c.end:line_end].strip()
            target = line_idx + 1
            if not before and not file_level:
                # Own line: covers the next line holding code.
                n = line_idx + 1
                total = len(source.line_starts)
                while n < total:
                    text = source.line_text(n + 1).strip()
                    if text and not text.startswith("//"):
                        break
                    n += 1
                target = n + 1
            inner = raw.decode("utf-8", "replace")
            inner = inner[2:-2] if inner.startswith("/*") else inner[2:]
            only = inner.strip() == m.group(0).decode("utf-8", "replace").strip()
            s = Suppression(c.start, c.end, file_level, codes, 0 if file_level else target,
                            directive_start=c.start + m.start(), directive_end=c.start + m.end(),
                            comment_only=only, own_line=not before and not after)
            if m.group(2) is not None:
                s.codes_start, s.codes_end = c.start + m.start(2), c.start + m.end(2)
            out.append(s)
    return out


def apply_suppressions(diags: list[Diagnostic], sups: list[Suppression]) -> list[Diagnostic]:
    if not sups:
        return diags
    by_line: dict[int, list[Suppression]] = {}
    file_level = [s for s in sups if s.file_level]
    for s in sups:
        if not s.file_level:
            by_line.setdefault(s.line, []).append(s)
    kept = []
    for d in diags:
        hit = None
        for s in by_line.get(d.line, []) + file_level:
            if s.covers(d.code):
                hit = s
                break
        if hit is None:
            kept.append(d)
        else:
            hit.used.add(d.code)
    return kept


# ---- unused suppressions (SL002) ---------------------------------------------------------------
def unused_suppressions(source: Source, sups: list[Suppression], enabled: set[str] | frozenset[str],
                        known: set[str] | frozenset[str], blind: list[tuple[int, int]] = ()) -> list[Finding]:
    """SL002 findings: suppressions (or codes in them) that suppressed nothing, unknown codes, and bare
    ``ignore`` directives. ``enabled`` are the codes of the rules that ran on the file, ``known`` every
    registered code. A code that only matches rules that did not run is left alone (it cannot be told
    whether it would be used), and so are suppressions in ``blind`` ranges (functions with parse errors,
    whose findings were dropped) and file-level ones when there are such ranges."""
    out: list[Finding] = []
    for s in sups:
        if blind and (s.file_level or any(a <= s.start < b for a, b in blind)):
            continue
        kind = "ignore-file" if s.file_level else "ignore"
        where = "in this file" if s.file_level else f"on line {s.line}"
        if not s.codes:
            if s.used:
                names = ", ".join(sorted(s.used))
                edit = (Edit(s.codes_start, s.codes_end, names) if s.codes_start >= 0  # `ignore[]`, `ignore[ , ]`
                        else Edit(s.directive_end, s.directive_end, f"[{names}]"))
                fix = Fix(f"Name the codes: {kind}[{names}]", Applicability.SAFE, (edit,))
                msg = (f"bare 'shaderlint: {kind}' suppresses every rule {where}; name the codes it is for: "
                       f"{kind}[{names}]")
            else:
                fix = _removal(source, s)
                msg = f"unused bare 'shaderlint: {kind}': nothing is reported {where}"
            out.append(Finding(s.directive_start, s.directive_end, msg, fix=fix))
            continue
        unused, unknown, keep = [], [], []
        for c in s.codes:
            if UNUSED_CODE.startswith(c) or c.startswith(UNUSED_CODE):
                keep.append(c)
            elif not any(k.startswith(c) for k in known):
                unknown.append(c)
            elif any(u.startswith(c) for u in s.used) or not any(e.startswith(c) for e in enabled):
                keep.append(c)
            else:
                unused.append(c)
        if not unused and not unknown:
            continue
        parts = []
        if unused:
            parts.append(f"no {', '.join(unused)} finding {where}")
        if unknown:
            parts.append(f"unknown rule code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
        if keep:
            fix = Fix(f"Remove {', '.join(unused + unknown)}", Applicability.SAFE,
                      (Edit(s.codes_start, s.codes_end, ", ".join(keep)),))
            msg = f"unused code{'s' if len(unused + unknown) > 1 else ''} in 'shaderlint: {kind}': " + "; ".join(parts)
        else:
            fix = _removal(source, s)
            msg = f"unused suppression 'shaderlint: {kind}[{', '.join(s.codes)}]': " + "; ".join(parts)
        out.append(Finding(s.directive_start, s.directive_end, msg, fix=fix))
    # An SL002 report can itself be suppressed, but only by a directive that names it.
    explicit = [s for s in sups if s.codes and any(UNUSED_CODE.startswith(c) for c in s.codes)]
    if explicit:
        kept = []
        for fd in out:
            line = source.position(fd.start)[0]
            hit = next((s for s in explicit if s.file_level or s.line == line), None)
            if hit is None:
                kept.append(fd)
            else:
                hit.used.add(UNUSED_CODE)
        out = kept
    return out


def _removal(source: Source, s: Suppression) -> Fix | None:
    """Delete a comment that holds nothing but the directive (the whole line when it is alone on it)."""
    if not s.comment_only:
        return None
    data = source.data
    if s.own_line:
        idx = source.line_of(s.start)
        start = source.line_starts[idx]
        end = source.line_starts[idx + 1] if idx + 1 < len(source.line_starts) else len(data)
        return Fix("Remove the unused suppression", Applicability.SAFE, (Edit(start, end, ""),))
    start, end = s.start, s.end
    line_start = source.line_starts[source.line_of(s.start)]
    if data[line_start:start].strip():  # code before it: take the blanks before the comment
        while start > line_start and data[start - 1:start] in (b" ", b"\t"):
            start -= 1
    else:  # code after it: take the blanks after the comment, keep the indentation
        while data[end:end + 1] in (b" ", b"\t"):
            end += 1
    return Fix("Remove the unused suppression", Applicability.SAFE, (Edit(start, end, ""),))
