"""The result of linting one file (:class:`FileResult`), apart from :mod:`shaderlint.engine` that
computes it: a run answered from the cache, its formatters and baseline need the type, not the analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shaderlint.diagnostics import Diagnostic
from shaderlint.model.source import Source
from shaderlint.suppression import Suppression

if TYPE_CHECKING:
    from shaderlint.languages import Parsed
    from shaderlint.model.build import FileModel


@dataclass
class FileResult:
    path: str
    source: Source
    language: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    model: FileModel | None = None
    suppressions: list[Suppression] = field(default_factory=list)
    parsed: Parsed | None = None
    timed_out: bool = False  # the time budget cut the analysis short (an SL001 says so); do not cache
    partial: bool = False  # diagnostics from shaderlint.incremental: no model or parse of the whole file
    unread: int = 0  # regions the front end could not read, not listed because SL001 is not selected
    host: object = None  # the shaderlint.host.index.HostFacts it was linted with (a re-lint after --fix uses them)
    file_context: object = None  # the shaderlint.project.includes.FileContext it was linted with (likewise)
