"""The Rule base class and the context rules run in.

A rule is pure: the file's :class:`~shaderlint.model.build.FileModel` and the
:class:`RuleContext` in, :class:`~shaderlint.diagnostics.Finding` objects out.
No I/O, no printing, no imports between rules. Its documentation is its
module's docstring (sections checked by a registry test, rendered to
``rules/SLnnn.md``, ``shaderlint rule`` and LSP hover).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from shaderlint.diagnostics import Finding, Severity

if TYPE_CHECKING:
    from shaderlint.config import Settings
    from shaderlint.estimate.registers import Adjustment
    from shaderlint.estimate.targets import Target
    from shaderlint.model.build import FileModel

LANGUAGE_NAMES = {"metal": "Metal", "cuda": "CUDA", "glsl": "GLSL"}
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Impact", "Options")
DOCS_URL = "https://github.com/shaderlint/shaderlint/blob/main/rules/{code}.md"


@dataclass
class RuleContext:
    settings: "Settings"
    target: "Target"
    facts: dict[str, str] = field(default_factory=dict)  # merged config + file-level annotations
    estimator: object | None = None  # shaderlint.estimate model, when available


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    languages: ClassVar[frozenset[str]]
    severity: ClassVar[Severity]
    fix: ClassVar[str] = "none"  # none | safe | unsafe | display
    default_on: ClassVar[bool] = True
    summary: ClassVar[str] = ""

    def check(self, model: "FileModel", ctx: RuleContext) -> Iterable[Finding]:
        raise NotImplementedError

    # ---- impact (optional) ------------------------------------------------------------
    @classmethod
    def what_if(cls, model: "FileModel", function, finding: Finding, target: "Target") -> "Adjustment | None":
        """How following ``finding``'s advice would change ``function`` (the function the
        finding is in; ``target`` is the active GPU profile), as an
        :class:`~shaderlint.estimate.registers.Adjustment` built with the
        helpers of :mod:`shaderlint.estimate.whatif` (``promote_array``, ``cheap_division``,
        ``register_delta``, ``group_size``, ``no_change`` …). The engine estimates the kernel
        with and without it and fills in the finding's ``impact``. None (the default) means
        unknown: ``occupancy_before`` is reported and the other fields are null. A rule that
        sets ``Finding.impact`` itself is left alone."""
        return None

    # ---- documentation --------------------------------------------------------------
    @classmethod
    def doc(cls) -> str:
        return (sys.modules[cls.__module__].__doc__ or "").strip()

    @classmethod
    def sections(cls) -> dict[str, str]:
        """The docstring's ``## Section`` blocks, by title."""
        out: dict[str, str] = {}
        current = None
        lines: list[str] = []
        for line in cls.doc().splitlines():
            m = re.match(r"^##\s+(.*?)\s*$", line)
            if m:
                if current is not None:
                    out[current] = "\n".join(lines).strip()
                current, lines = m.group(1), []
            elif current is not None:
                lines.append(line)
        if current is not None:
            out[current] = "\n".join(lines).strip()
        return out

    @classmethod
    def first_paragraph(cls, section: str = "What it does") -> str:
        text = cls.sections().get(section, cls.summary)
        return " ".join(text.split("\n\n")[0].split())

    @classmethod
    def markdown(cls) -> str:
        langs = ", ".join(LANGUAGE_NAMES[x] for x in ("metal", "cuda", "glsl") if x in cls.languages)
        head = [
            f"# {cls.code} {cls.name}",
            "",
            "<!-- Generated from the rule's docstring by `python -m shaderlint.dev docs`. Do not edit. -->",
            "",
            "| code | name | languages | severity | fix | default |",
            "|---|---|---|---|---|---|",
            f"| {cls.code} | {cls.name} | {langs} | {cls.severity.value} | {cls.fix} | "
            f"{'on' if cls.default_on else 'opt-in'} |",
            "",
            "",
        ]
        body = cls.doc().split("\n", 1)[1].strip() if "\n" in cls.doc() else ""
        return "\n".join(head) + body + "\n"

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(code=cls.code)
