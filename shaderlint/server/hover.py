"""Hover and code lens.

Hover on a diagnostic's range shows the diagnostic's message and a short form of
its rule's document (:func:`rule_hover`): the one-line summary, *Why is this
bad?*, *Use instead* (the fix), and a link to the full page (``shaderlint rule
CODE`` prints it) -- the whole page is about 60 lines, too long for an editor's
hover window (a Neovim float). Hover on a kernel's name shows what the
model knows about the kernel: its kind, threads per group and where they are
declared, its parameters and the occupancy estimate on the active target.
The optional code lens (setting ``codeLens``) puts the same one-line summary
above each kernel.

Estimates are labelled as estimates with the target they assume. They come
from the register model (``shaderlint/estimate/``) through the hook
:func:`kernel_estimate`; without it, only the group-size bound on occupancy.
Where a compiler applies and is installed, the compiler's figures replace them
once a background compile is done (:mod:`.compiled`), labelled "measured by ptxas".
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from shaderlint.estimate.uniform import included_workgroup_size
from shaderlint.formatters.text import percent
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
    occupancy_is_bound: bool = False  # the best case over group sizes, or a ceiling without registers
    notes: tuple[str, ...] = ()
    #: The estimate's measured 10–90 % range (shaderlint.estimate.uncertainty), where one was measured.
    registers_interval: tuple[int, int] | None = None
    #: Where registers and stack come from: "estimate", or the compiler that measured them ("ptxas", "radv").
    source: str = "estimate"
    #: The estimate leaves out calls into code it cannot see: likely low (shown ``~8+``).
    lower_bound: bool = False

    def one_line(self) -> str:
        parts = [f"{self.threads} threads/group" if self.threads else "threads/group unknown"]
        measured = self.source != "estimate"
        if self.registers is not None:
            parts.append(f"{self.registers:g} registers ({self.source})" if measured
                         else f"~{self.registers:g}{'+' if self.lower_bound else ''}{self._range()} registers")
        if self.occupancy is not None:
            bound = " ≤" if self.occupancy_is_bound else ""
            parts.append(f"occupancy{bound} {percent(self.occupancy)} on {self.target}"
                         + ("" if measured else " (estimate)"))
        return "shaderlint: " + " · ".join(parts)

    def _range(self) -> str:
        return f" ({self.registers_interval[0]}–{self.registers_interval[1]})" if self.registers_interval else ""


def kernel_estimate(model: Any, function: Function, target: Any, facts: dict[str, str]) -> Any | None:
    """HOOK: the per-kernel register/occupancy estimate of the register model.

    Uses ``shaderlint.estimate.registers.cached_estimate(model, function, target,
    facts=...)`` (memoized on the model, so the estimate SL505 made is reused)
    when that module is present; without it, hover and code lens fall back to
    what the kernel model itself knows (group size and the occupancy ceiling it
    implies). Any attribute of the result may be missing or None.
    """
    try:
        registers = importlib.import_module("shaderlint.estimate.registers")
    except ImportError:
        return None
    estimator = getattr(registers, "cached_estimate", None)
    if estimator is None or model is None:
        return None
    try:
        return estimator(model, function, target, facts=facts)
    except Exception:
        return None


def summarize(doc: Document, function: Function, target: Any, facts: dict[str, str] | None = None,
              exact: Any = None) -> KernelSummary:
    """The kernel's figures: the estimate, replaced by the compiler's where ``exact`` (a
    :class:`shaderlint.server.compiled.Lookup`) has them; a pending compile or a failed one is noted."""
    from shaderlint.estimate.occupancy import occupancy

    gs = function.group_size
    s = KernelSummary(function, getattr(target, "name", str(target)), gs.total if gs else None)
    model = doc.result.model if doc.result else None
    est = kernel_estimate(model, function, target, {**(facts or {}), **function.facts})
    if est is not None:
        s.threads = getattr(est, "threads_per_group", None) or s.threads
        s.registers = getattr(est, "registers", None)
        s.stack_bytes = getattr(est, "stack_bytes", None)
        s.shared_bytes = getattr(est, "shared_bytes", None)
        occ = getattr(est, "occupancy", None)
        if occ is not None:
            s.occupancy, s.limiter = getattr(occ, "occupancy", None), getattr(occ, "limiter", None)
            s.occupancy_is_bound = bool(getattr(est, "occupancy_is_bound", False))
        s.notes = tuple(getattr(est, "notes", ()) or ())
        s.lower_bound = bool(getattr(est, "lower_bound", False))
        if s.lower_bound and s.occupancy is not None:
            s.occupancy_is_bound = True  # registers likely more: the occupancy is a ceiling (as in report)
        if s.registers is not None and model is not None and not s.lower_bound:
            from shaderlint.estimate.uncertainty import register_interval

            iv = register_interval(model.language, s.target, s.registers)
            s.registers_interval = (iv.low, iv.high) if iv else None
    elif s.threads:
        try:
            o = occupancy(target, s.threads, None, 0)
            s.occupancy, s.limiter, s.occupancy_is_bound = o.occupancy, o.limiter, True
        except (ValueError, TypeError, AttributeError):
            pass
    if exact is not None:
        from shaderlint.server.compiled import apply_exact

        apply_exact(s, exact, target)
    return s


def kernel_markdown(doc: Document, s: KernelSummary) -> str:
    fn = s.function
    model = doc.result.model
    lines = [f"**{fn.kind}** `{fn.name}`", ""]
    gs = fn.group_size
    if gs is not None:
        dims = "×".join(str(d) for d in gs.dims)
        lines.append(f"- threads per group: {gs.total} ({dims}), from {_ORIGIN.get(gs.origin, gs.origin)}")
    elif (included := included_workgroup_size(model)) is not None:
        dims = "×".join(str(d) for d in included)
        lines.append(f"- threads per group: {math.prod(included)} ({dims}), from `layout(local_size_…) in;` "
                     "in an included file")
    else:
        lines.append("- threads per group: unknown (declare it, or annotate `// shaderlint: threadgroup-size=N`)")
    if fn.params:
        params = ", ".join(f"`{' '.join(model.text(p.decl).split())}`" for p in fn.params)
        lines.append(f"- parameters: {params}")
    how = "estimate" if s.source == "estimate" else f"measured by {s.source}"
    if s.registers is not None:
        if s.source != "estimate":
            lines.append(f"- registers per thread: {s.registers:g} ({how})")
        elif s.lower_bound:
            lines.append(f"- registers per thread: ~{s.registers:g}+ (estimate, likely low: the kernel calls code "
                         "the estimate cannot see)")
        elif s.registers_interval:
            lines.append(f"- registers per thread: ~{s.registers:g} (estimate; ptxas gave "
                         f"{s.registers_interval[0]}–{s.registers_interval[1]} for 8 in 10 real kernels estimated alike)")
        else:
            lines.append(f"- registers per thread: ~{s.registers:g} (estimate)")
    if s.stack_bytes:
        lines.append(f"- stack: {s.stack_bytes} bytes ({how})")
    if s.shared_bytes:
        lines.append(f"- threadgroup/shared memory: {s.shared_bytes} bytes per group")
    if s.occupancy is not None:
        if s.registers is None:
            what = "occupancy ceiling from the group size alone (registers not estimated)"
        elif s.source != "estimate":
            what = f"best-case occupancy (registers from {s.source})" if s.occupancy_is_bound \
                else f"occupancy (registers from {s.source})"
        else:
            what = "best-case estimated occupancy" if s.occupancy_is_bound else "estimated occupancy"
        limiter = f", limited by {s.limiter}" if s.limiter else ""
        lines.append(f"- {what} on `{s.target}`: {percent(s.occupancy)}{limiter}")
    for note in s.notes:
        lines.append(f"- note: {note}")
    return "\n".join(lines)


def rule_hover(rule) -> str:
    """The part of a rule's document worth a hover: its summary, why it matters, what to write
    instead, and a link to the whole page."""
    sections = rule.sections()
    fix = {"safe": "safe fix available", "unsafe": "unsafe fix available (`--unsafe-fixes`)"}.get(rule.fix)
    head = f"### {rule.code} {rule.name}\n\n{rule.severity.value}" + (f" · {fix}" if fix else "") \
        + f" — {rule.summary}"
    parts = [head]
    for title in ("Why is this bad?", "Use instead"):
        body = sections.get(title)
        if body:
            parts.append(f"#### {title}\n{body}")
    parts.append(f"[Full documentation of {rule.code}]({rule.url()})")
    return "\n\n".join(parts)


def kernel_at(doc: Document, offset: int) -> Function | None:
    model = doc.result.model if doc.result is not None else None
    if model is None:
        return None
    for fn in model.functions:
        if fn.is_entry:
            start, end = name_span(model, fn)
            if start <= offset <= end:
                return fn
    return None


def name_span(model, fn: Function) -> tuple[int, int]:
    """The span of ``fn``'s name in the file; a kernel a macro invocation generates
    (:mod:`shaderlint.model.expand`): the invocation's."""
    e = model.parsed.expansion_at(fn.name_node.start_byte)
    return (e.inv_start, e.inv_end) if e is not None else (fn.name_node.start_byte, fn.name_node.end_byte)


def hover(doc: Document, position: types.Position, encoding: str, target: Any,
          facts: dict[str, str] | None = None, exact: Any = None) -> types.Hover | None:
    """The kernel summary on a kernel's name, the rule documents of the diagnostics under the position."""
    if doc.result is None:
        return None
    pmap = doc.position_map(encoding)
    offset = pmap.offset(position)
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    fn = kernel_at(doc, offset)
    if fn is not None:
        # (``exact`` may be a callable: asked only on a kernel's name, where its figures are shown)
        parts.append(kernel_markdown(doc, summarize(doc, fn, target, facts, exact() if callable(exact) else exact)))
        spans.append(name_span(doc.result.model, fn))
    seen: set[str] = set()
    for d in doc.result.diagnostics:
        if not (d.start <= offset < d.end or d.start == d.end == offset):
            continue
        parts.append(f"**{d.code}** `{d.name}`: {d.message}")
        spans.append((d.start, d.end))
        rule = get_rule(d.code)
        if rule is not None and d.code not in seen:
            seen.add(d.code)
            parts.append(rule_hover(rule))
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                       range=pmap.range(min(a for a, _ in spans), max(b for _, b in spans)))


def code_lenses(doc: Document, encoding: str, target: Any, facts: dict[str, str] | None = None,
                exact: Any = None) -> list[types.CodeLens]:
    model = doc.result.model if doc.result is not None else None
    if model is None:
        return []
    pmap = doc.position_map(encoding)
    out = []
    for fn in model.kernels:
        s = summarize(doc, fn, target, facts, exact)
        rng = pmap.range(*name_span(model, fn))
        out.append(types.CodeLens(range=rng, command=types.Command(title=s.one_line(), command="")))
    return out
