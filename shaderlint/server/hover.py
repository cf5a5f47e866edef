"""Hover and code lens.

Hover on a diagnostic's range shows the rule's document (``Rule.markdown()``,
the text ``shaderlint rule`` prints); hover on a kernel's name shows what the
model knows about the kernel: its kind, threads per group and where they are
declared, its parameters and the occupancy estimate on the active target.
The optional code lens (setting ``codeLens``) puts the same one-line summary
above each kernel.

Estimates are labelled as estimates with the target they assume. Until the
register model (``shaderlint/estimate/``) offers a per-kernel estimate, only the
group-size bound on occupancy is shown: see :func:`kernel_estimate`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from shaderlint.model.kernel import Function
from shaderlint.rules.registry import get_rule
from shaderlint.server.diagnostics import Document

_ORIGIN = {
    "local_size": "`layout(local_size_…) in;`",
    "launch_bounds": "`__launch_bounds__` (an upper bound)",
    "max_total_threads": "`[[max_total_threads_per_threadgroup]]` (an upper bound)",
    "annotation": "a `// shaderlint: threadgroup-size=` annotation",
    "launch": "the launch site",
    "dim3": "the `dim3` at the launch site",
    "config": "the configuration",
}


@dataclass
class KernelSummary:
    function: Function
    target: str
    threads: int | None
    registers: float | None = None
    stack_bytes: int | None = None
    shared_bytes: int | None = None
    occupancy: float | None = None
    limiter: str | None = None
    registers_estimated: bool = False

    def one_line(self) -> str:
        parts = [f"{self.threads} threads/group" if self.threads else "threads/group unknown"]
        if self.registers is not None:
            parts.append(f"~{self.registers:g} registers")
        if self.occupancy is not None:
            bound = "" if self.registers_estimated else " ≤"
            parts.append(f"occupancy{bound} {self.occupancy:.0%} on {self.target} (estimate)")
        return "shaderlint: " + " · ".join(parts)


def kernel_estimate(model: Any, function: Function, target: Any) -> Any | None:
    """HOOK: the per-kernel register/occupancy estimate.

    ``shaderlint/estimate/`` has targets, the occupancy calculator and the ptxas
    wrapper, but no per-kernel register estimator yet. When it exports
    ``estimate_kernel(model, function, target)`` from ``shaderlint.estimate``,
    its result (attributes ``registers``, ``stack_bytes``,
    ``threadgroup_memory_bytes``, ``occupancy``, ``limiter``; any may be None)
    is shown here without further changes to the server.
    """
    estimator = getattr(importlib.import_module("shaderlint.estimate"), "estimate_kernel", None)
    if estimator is None:
        return None
    try:
        return estimator(model, function, target)
    except Exception:
        return None


def summarize(doc: Document, function: Function, target: Any) -> KernelSummary:
    from shaderlint.estimate.occupancy import occupancy

    gs = function.group_size
    s = KernelSummary(function, getattr(target, "name", str(target)), gs.total if gs else None)
    est = kernel_estimate(doc.result.model if doc.result else None, function, target)
    if est is not None:
        s.registers = getattr(est, "registers", None)
        s.stack_bytes = getattr(est, "stack_bytes", None)
        s.shared_bytes = getattr(est, "threadgroup_memory_bytes", None)
        occ = getattr(est, "occupancy", None)
        s.occupancy = getattr(occ, "occupancy", occ)
        s.limiter = getattr(est, "limiter", None) or getattr(occ, "limiter", None)
        s.registers_estimated = s.registers is not None
    if s.occupancy is None and s.threads:
        try:
            o = occupancy(target, s.threads, s.registers, s.shared_bytes or 0)
            s.occupancy, s.limiter = o.occupancy, o.limiter
            s.registers_estimated = s.registers is not None
        except (ValueError, TypeError, AttributeError):
            pass
    return s


def kernel_markdown(doc: Document, s: KernelSummary) -> str:
    fn = s.function
    model = doc.result.model
    lines = [f"**{fn.kind}** `{fn.name}`", ""]
    gs = fn.group_size
    if gs is not None:
        dims = "×".join(str(d) for d in gs.dims)
        lines.append(f"- threads per group: {gs.total} ({dims}), from {_ORIGIN.get(gs.origin, gs.origin)}")
    else:
        lines.append("- threads per group: unknown (declare it, or annotate `// shaderlint: threadgroup-size=N`)")
    if fn.params:
        params = ", ".join(f"`{' '.join(model.text(p.decl).split())}`" for p in fn.params)
        lines.append(f"- parameters: {params}")
    if s.registers is not None:
        lines.append(f"- registers per thread: ~{s.registers:g} (estimate)")
    if s.stack_bytes:
        lines.append(f"- stack: {s.stack_bytes} bytes (estimate)")
    if s.occupancy is not None:
        what = "estimated occupancy" if s.registers_estimated else "occupancy ceiling from the group size alone"
        limiter = f", limited by {s.limiter}" if s.limiter else ""
        lines.append(f"- {what} on `{s.target}`: {s.occupancy:.0%}{limiter}")
    if not s.registers_estimated:
        lines.append(f"- registers: not estimated (for exact CUDA figures: `shaderlint report --compiler ptxas`)")
    return "\n".join(lines)


def kernel_at(doc: Document, offset: int) -> Function | None:
    model = doc.result.model if doc.result is not None else None
    if model is None:
        return None
    for fn in model.functions:
        if fn.is_entry and fn.name_node.start_byte <= offset <= fn.name_node.end_byte:
            return fn
    return None


def hover(doc: Document, position: types.Position, encoding: str, target: Any) -> types.Hover | None:
    if doc.result is None:
        return None
    pmap = doc.position_map(encoding)
    offset = pmap.offset(position)
    hits = [d for d in doc.result.diagnostics if d.start <= offset < d.end or d.start == d.end == offset]
    if hits:
        parts, seen = [], set()
        for d in hits:
            parts.append(f"**{d.code}** `{d.name}`: {d.message}")
            rule = get_rule(d.code)
            if rule is not None and d.code not in seen:
                seen.add(d.code)
                parts.append(rule.markdown())
        start, end = min(d.start for d in hits), max(d.end for d in hits)
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                           range=pmap.range(start, end))
    fn = kernel_at(doc, offset)
    if fn is None:
        return None
    summary = summarize(doc, fn, target)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=kernel_markdown(doc, summary)),
                       range=pmap.range(fn.name_node.start_byte, fn.name_node.end_byte))


def code_lenses(doc: Document, encoding: str, target: Any) -> list[types.CodeLens]:
    model = doc.result.model if doc.result is not None else None
    if model is None:
        return []
    pmap = doc.position_map(encoding)
    out = []
    for fn in model.kernels:
        s = summarize(doc, fn, target)
        rng = pmap.range(fn.name_node.start_byte, fn.name_node.end_byte)
        out.append(types.CodeLens(range=rng, command=types.Command(title=s.one_line(), command="")))
    return out
