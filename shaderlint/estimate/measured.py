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


def ptxas_flags(path: str, defines: tuple[str, ...], include_dirs: tuple[str, ...]) -> list[str]:
    """nvcc's flags for the file at ``path``: its directory then ``include_dirs`` as -I, ``defines`` as -D."""
    folder = os.path.dirname(os.path.abspath(path))
    dirs = [d for d in dict.fromkeys([folder, *include_dirs]) if os.path.isdir(d)]
    return [x for d in dirs for x in ("-I", d)] + [f"-D{d}" for d in defines]


def _flags(model: "FileModel", defines: tuple[str, ...], include_dirs: tuple[str, ...]) -> list[str]:
    return ptxas_flags(model.source.path, defines, include_dirs)


def _compile_text(model: "FileModel", text: str, arch: str, flags: list[str]) -> PtxasResult:
    # (a newline: source text, never a path)
    got = compile_ptxas(text + "\n", arch, flags, device_only=True, cache_dir="default")
    if got.error and len(got.command) > 3:  # name the file, not the temporary copy nvcc compiled
        got.error = got.error.replace(got.command[-3], model.source.path)
    return got


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
        memo[key] = _compile_text(model, original_text(model), arch, _flags(model, defines, include_dirs))
    return memo[key]


def original_text(model: "FileModel") -> str:
    """The file's text as read: without the macro expansions the model appends (shaderlint.model.expand)."""
    return model.source.data[:model.parsed.length].decode("utf-8", errors="replace")


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


# ---- measured what-if impacts ---------------------------------------------------------------------
def fixed_text(model: "FileModel", fix) -> str | None:
    """The file's text with ``fix``'s edits applied (byte offsets of the original file), or None when
    an edit lies outside it (in a macro expansion the model appended) or edits overlap."""
    from shaderlint.fixes import apply_edits

    data = model.source.data[:model.parsed.length]
    edits = sorted(fix.edits, key=lambda e: (e.start, e.end))
    at = 0
    for e in edits:
        if e.start < at or e.end > len(data) or e.start > e.end:
            return None
        at = e.end
    return apply_edits(data, edits).decode("utf-8", errors="replace")


def _occupancy(target: "Target", threads: int | None, registers: float, shared: int) -> float | None:
    from shaderlint.estimate.occupancy import occupancy

    try:
        if threads:
            return round(occupancy(target, threads, registers, shared).occupancy, 4)
        return round(max(occupancy(target, t, registers, shared).occupancy
                         for t in range(target.simd_width, target.max_threads_per_group + 1, target.simd_width)), 4)
    except ValueError:
        return None


def exact_compiler(model: "FileModel", settings: "Settings", target: "Target") -> str | None:
    """The compiler measured impacts use for this file ("ptxas", "radv"), or None: only when the
    ``compiler`` setting asks (each fix costs a compile) and the compiler applies and is installed
    (:func:`shaderlint.report.auto_compiler`; RADV only with ``auto``)."""
    compiler = getattr(settings, "compiler", "none")
    if compiler == "none":
        return None
    from shaderlint.report import auto_compiler

    got, _ = auto_compiler(model.language, target, model)
    if got == "none" or (got == "radv" and compiler != "auto"):
        return None
    return got


def measured_impact(model: "FileModel", settings: "Settings", target: "Target", function, fix,
                    estimate=None):
    """The :class:`~shaderlint.diagnostics.Impact` of applying ``fix`` to kernel ``function``, measured:
    the file is compiled as written and with the fix's edits (both cached by content), and the impact is
    the difference in registers, stack bytes and occupancy of the kernel (for a template, its instance
    with the most registers as written). None when no compiler applies, either compile fails or the
    kernel is missing from either (the caller keeps the estimate). ``estimate``: the kernel's
    :class:`KernelEstimate` as written, for its threads per group and dynamic shared memory."""
    from shaderlint.diagnostics import Impact

    compiler = exact_compiler(model, settings, target)
    if compiler is None or fix is None or not fix.edits:
        return None
    text = fixed_text(model, fix)
    if text is None:
        return None
    threads = getattr(estimate, "threads_per_group", None)
    defines, include_dirs = tuple(settings.defines), tuple(getattr(settings, "include_dirs", ()))
    if compiler == "ptxas":
        before = compile_file(model, target.ptxas_arch, defines, include_dirs)
        if not before.ok:
            return None
        after = _compile_text(model, text, target.ptxas_arch, _flags(model, defines, include_dirs))
        if not after.ok:
            return None
        was = sorted(before.by_name(function.name), key=lambda k: -k.registers)
        if not was:
            return None
        now = next((k for k in after.values() if k.mangled == was[0].mangled), None)
        if now is None:  # the fix changed the kernel's signature: the one instance left, if one
            now = after.by_name(function.name)[0] if len(after.by_name(function.name)) == 1 else None
        if now is None:
            return None
        dynamic = 0
        if estimate is not None:
            from shaderlint.report import _static_shared

            dynamic = max(0, estimate.shared_bytes - _static_shared(estimate))
        old, new = was[0], now
        return Impact(target=target.name, registers=new.registers - old.registers,
                      stack_bytes=new.stack_bytes - old.stack_bytes,
                      occupancy_before=_occupancy(target, threads, old.registers, old.shared_bytes + dynamic),
                      occupancy_after=_occupancy(target, threads, new.registers, new.shared_bytes + dynamic),
                      source="ptxas")
    from shaderlint.estimate.radv import measure_radv, subgroup_size_for

    folder = [os.path.dirname(os.path.abspath(model.source.path)), *include_dirs]
    spec = getattr(model, "pipeline_specialization", None)  # set from the host code (host.index.apply)
    results = [measure_radv(t, target.radv_family, subgroup_size=subgroup_size_for(target), defines=defines,
                            include_dirs=folder, specialization=spec) for t in (original_text(model), text)]
    if not all(r.ok for r in results):
        return None
    old, new = results

    def per_lane(r) -> int:
        return -(-(r.scratch_bytes or 0) // (r.wave_size or target.simd_width))

    return Impact(target=target.name, registers=new.vgprs - old.vgprs, stack_bytes=per_lane(new) - per_lane(old),
                  occupancy_before=_occupancy(target, old.threads_per_group or threads, old.vgprs, old.lds_bytes or 0),
                  occupancy_after=_occupancy(target, new.threads_per_group or threads, new.vgprs, new.lds_bytes or 0),
                  source="radv")


def attach_measured_impacts(model: "FileModel", findings, target: "Target", settings: "Settings",
                            facts=None) -> list:
    """``findings`` ((rule, finding) pairs) with a measured impact for each finding in kernel code that
    has a fix, where :func:`exact_compiler` applies; the others as they were. Never raises."""
    if exact_compiler(model, settings, target) is None:
        return list(findings)
    from dataclasses import replace

    from shaderlint.estimate.registers import cached_estimate
    from shaderlint.estimate.whatif import kernels_for

    out = []
    for rule_cls, fd in findings:
        if fd.fix is not None:
            try:
                kernels = kernels_for(model, fd.start, fd.kernel)
                named = model.function_by_name.get(fd.kernel) if fd.kernel else None
                if not kernels and named is not None and named.is_entry and named.is_device_code:
                    kernels = [named]  # a finding at the launch (SL506): the kernel it names
                if kernels:
                    f = kernels[0]
                    est = cached_estimate(model, f, target, facts={**(facts or {}), **f.facts})
                    got = measured_impact(model, settings, target, f, fd.fix, est)
                    if got is not None:
                        fd = replace(fd, impact=got)
            except Exception:  # a measurement must never cost the user a diagnostic
                pass
        out.append((rule_cls, fd))
    return out
