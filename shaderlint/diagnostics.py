"""Diagnostics: the immutable result of a rule, with positions, impact and fix.

Rules create :class:`Finding` objects in byte offsets; the engine resolves them
against the :class:`~shaderlint.model.source.Source` into :class:`Diagnostic`
objects that carry both byte offsets and 1-based line/column positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace bytes [start, end) of the original file with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class Impact:
    """Effect of following the advice: estimated by the register/occupancy model, or measured by
    compiling the kernel as written and with the fix applied (``source``: "ptxas" or "radv")."""

    target: str
    registers: int | None = None
    stack_bytes: int | None = None
    occupancy_before: float | None = None
    occupancy_after: float | None = None
    #: Where the figures come from: "estimate" (the register model), "ptxas" or "radv" (measured).
    source: str = "estimate"

    def to_json(self) -> dict[str, Any]:
        return {
            "registers": self.registers,
            "stack_bytes": self.stack_bytes,
            "occupancy_before": self.occupancy_before,
            "occupancy_after": self.occupancy_after,
            "target": self.target,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class Related:
    start: int
    end: int
    message: str
    #: A location in another file (host code): its path and 1-based line and column; start/end are
    #: then byte offsets in that file.
    path: str | None = None
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule reports, in byte offsets of the original file."""

    start: int
    end: int
    message: str
    kernel: str | None = None
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    impact: Impact | None = None
    # Text the baseline fingerprint is computed from (defaults to the flagged text).
    fingerprint_text: str | None = None
    severity: Severity | None = None  # overrides the rule's default when set


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based, characters


@dataclass(frozen=True, slots=True)
class RelatedLocation:
    path: str
    line: int
    column: int
    message: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Diagnostic:
    path: str
    code: str
    name: str
    severity: Severity
    message: str
    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int
    kernel: str | None = None
    related: tuple[RelatedLocation, ...] = ()
    fix: Fix | None = None
    impact: Impact | None = None
    fingerprint: str = ""
    # 1-based (line, column, end_line, end_column) of each fix edit, resolved by the engine.
    fix_ranges: tuple[tuple[int, int, int, int], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def sort_key(self) -> tuple:
        return (self.path, self.start, self.code, self.end)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form of SPEC.md."""
        fix = None
        if self.fix is not None:
            fix = {
                "applicability": self.fix.applicability.value,
                "title": self.fix.title,
                "edits": [
                    {"line": r[0], "column": r[1], "end_line": r[2], "end_column": r[3], "text": e.text}
                    for e, r in zip(self.fix.edits, self.fix_ranges)
                ],
            }
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "kernel": self.kernel,
            "impact": self.impact.to_json() if self.impact else None,
            "related": [
                {"path": r.path, "line": r.line, "column": r.column, "message": r.message} for r in self.related
            ],
            "fix": fix,
        }
