"""Exact figures for lint runs, from the compiler the configuration names.

``compiler = "ptxas"`` or ``"auto"`` (configuration, or ``--compiler`` on the
command line) lets the rules whose verdict hangs on a register count (SL505
low-occupancy, SL506 missing-launch-bounds) ask ptxas instead of the estimate:
the file's text is compiled once per lint for the target's architecture, with
the file's directory on the include path and the configured ``defines``, and
the rules read the per-kernel counts. A file that does not compile, a kernel
ptxas did not emit (an uninstantiated template), a non-NVIDIA target or a
machine without nvcc answer ``None``: the rules then stay silent where only a
compiler could decide. Results are cached with the lint result (the cache key
holds the compiler's version, ``Settings.key``), and each compile by content (its text, flags, arch, nvcc's
version and the headers it read: :func:`shaderlint.estimate.ptxas.compile_ptxas`), so an unchanged
file is not compiled again by the next lint, report or language-server request.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from shaderlint.estimate.ptxas import PtxasResult, compile_ptxas

if TYPE_CHECKING:
    from shaderlint.config import Settings
    from shaderlint.estimate.targets import Target
    from shaderlint.model.build import FileModel


def compile_file(model: "FileModel", arch: str, defines: tuple[str, ...] = (),
                 include_dirs: tuple[str, ...] = ()) -> PtxasResult:
    """ptxas's report for the model's text (what was linted, perhaps an editor's buffer) on ``arch``,
    with the file's directory and then ``include_dirs`` (the configured ``include-dirs``) on the include
    path and ``-D`` for each of ``defines``: compiled once per model, architecture and defines (the lint
    rules and ``shaderlint report`` share it), device code only (``-cubin``: the same ptxas report
    without the host compile, a third of the time), cached by content across runs."""
    memo = model.__dict__.setdefault("_ptxas", {})
    key = (arch, tuple(defines), tuple(include_dirs))
    if key not in memo:
        flags: list[str] = [f"-D{d}" for d in defines]
        folder = os.path.dirname(os.path.abspath(model.source.path))
        dirs = [d for d in dict.fromkeys([folder, *include_dirs]) if os.path.isdir(d)]
        flags[:0] = [x for d in dirs for x in ("-I", d)]
        # the file itself: without the macro expansions the model appends (shaderlint.model.expand)
        text = model.source.data[:model.parsed.length].decode("utf-8", errors="replace")
        # (a newline: source text, never a path)
        got = compile_ptxas(text + "\n", arch, flags, device_only=True, cache_dir="default")
        if got.error and len(got.command) > 3:  # name the file, not the temporary copy nvcc compiled
            got.error = got.error.replace(got.command[-3], model.source.path)
        memo[key] = got
    return memo[key]


def compiled(model: "FileModel", settings: "Settings", target: "Target") -> PtxasResult | None:
    """ptxas's report for the file, compiled once per model; None when no compiler applies."""
    compiler = getattr(settings, "compiler", "none")
    if compiler == "none" or model.language != "cuda" or target.ptxas_arch is None:
        return None
    got = compile_file(model, target.ptxas_arch, settings.defines, settings.include_dirs)  # (no nvcc: an empty result, kept too)
    return got if len(got) else None


def registers(model: "FileModel", settings: "Settings", target: "Target", kernel: str) -> int | None:
    """The most registers ptxas gives any instance of ``kernel`` in this file, or None."""
    result = compiled(model, settings, target)
    if result is None:
        return None
    counts = [k.registers for k in result.by_name(kernel)]
    return max(counts) if counts else None
