"""Inline suppressions: ``// shaderlint: ignore[SL101]`` and ``// shaderlint: ignore-file[SL201]``.

An ``ignore`` comment at the end of a code line covers that line; on a line of
its own it covers the next line that holds code. Codes may be prefixes
(``SL1``). A bare ``ignore`` (no codes) covers every rule on that line and is
reported by ``--show-unused-ignores`` as too broad.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shaderlint.diagnostics import Diagnostic
from shaderlint.model.source import Source

_DIRECTIVE = re.compile(r"shaderlint:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?")


@dataclass(eq=False)
class Suppression:
    start: int
    end: int
    file_level: bool
    codes: tuple[str, ...]  # empty = all
    line: int  # 1-based line it covers (0 for file level)
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return not self.codes or any(code.startswith(c) for c in self.codes)


def parse_suppressions(source: Source) -> list[Suppression]:
    out: list[Suppression] = []
    for c in source.comments:
        for m in _DIRECTIVE.finditer(c.text):
            codes = tuple(x.strip().upper() for x in (m.group(2) or "").split(",") if x.strip())
            file_level = m.group(1) == "ignore-file"
            line_idx = source.line_of(c.start)
            line_start = source.line_starts[line_idx]
            before = source.data[line_start:c.start].strip()
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
            out.append(Suppression(c.start, c.end, file_level, codes, 0 if file_level else target))
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
