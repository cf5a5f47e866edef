"""``shaderlint report [PATH ...]``: registers, memory and occupancy per kernel.

One row per kernel (per template instance found in the file): path, kernel, line,
language, threads per group, registers per thread, where the register count
comes from, threadgroup/shared memory, stack bytes, target, occupancy and its
limiter. Registers are exact where a compiler applies and is installed
(``--compiler auto``, the default), estimated by the static model
(:mod:`shaderlint.estimate.registers`) otherwise:

* ``--compiler ptxas``: NVIDIA's compiler (CUDA files, NVIDIA targets, nvcc on
  PATH); registers, stack and static shared memory are ptxas's own figures, one
  row per instance ptxas compiled.
* ``--compiler radv``: Mesa's RADV driver on its null device (GLSL compute
  shaders, AMD targets, Mesa's Vulkan driver and glslang installed; see
  :mod:`shaderlint.estimate.radv`); VGPRs, LDS and scratch are the ACO
  compiler's figures for the target's chip and wave size.
* ``--compiler auto`` (default): ptxas for CUDA files on NVIDIA targets when nvcc
  is on PATH, RADV for GLSL compute shaders on AMD targets when it is installed,
  the estimate otherwise.
* ``--compiler none``: estimates only (no compile).

Where a compiler does not apply or fails, the row is the estimate and its notes
say why; ``registers_source`` says which it is (``estimate``, ``ptxas``,
``radv``). Compiles are cached by content (the text, the flags, the compiler's
version and the headers read), so only a changed file costs a compile (about a
second per CUDA file). Lint runs compile only when the ``compiler`` setting asks.

``--suggest-launch`` adds, per kernel, the figures of its group shape and the
shape :mod:`shaderlint.estimate.launch` suggests (SIMD groups, idle lanes,
groups per core, occupancy ceiling; with a known iteration space -- the
``grid-size`` fact, or every constant ``<<<grid, block>>>`` launch of the kernel
in the file agreeing -- the groups per dimension, threads launched and edge
waste): an indented block under the row in text, a ``"launch"`` object per row
in JSON (only with the option, so the stable array is unchanged without it).

``--format json`` prints the stable array of SPEC.md; the text table labels
estimates (``~``) with the target they assume. ``main(argv) -> int``: 0 on
success, 2 on usage errors and when a path could not be read (missing, not a
file or directory), after the rows of the others.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from shaderlint.config import ConfigError, SettingsResolver, check_target
from shaderlint.discovery import discover, display_path
from shaderlint.estimate.occupancy import occupancy
from shaderlint.estimate.registers import KernelEstimate, cached_estimate, template_instances
from shaderlint.estimate.uncertainty import coverage as uncertainty_coverage
from shaderlint.estimate.uncertainty import measured_for, register_interval
from shaderlint.estimate.uncertainty import source_note as uncertainty_source
from shaderlint.estimate.targets import Target, default_target, get_target
from shaderlint.languages import FRONT_ENDS, language_for_path
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

COMPILERS = ("none", "ptxas", "radv", "auto")
JSON_KEYS = ("path", "kernel", "line", "language", "threads_per_group", "registers", "registers_source",
             "threadgroup_memory_bytes", "stack_bytes", "target", "occupancy", "limiter")


@dataclass
class Row:
    path: str
    kernel: str
    line: int
    language: str
    threads_per_group: int | None
    registers: int | None
    registers_source: str  # "estimate" | "ptxas" | "radv"
    threadgroup_memory_bytes: int | None
    stack_bytes: int | None
    target: str
    occupancy: float | None
    limiter: str | None
    #: Not in the JSON: assumptions and fallbacks, shown by the text table with --notes.
    notes: list[str] = field(default_factory=list)
    occupancy_is_bound: bool = False
    shared_unknown: bool = False
    #: ``--suggest-launch``: the launch advice (:func:`launch_advice`); None when nothing is known.
    launch: dict | None = None
    launch_asked: bool = False
    #: Text only: why there is no launch advice.
    launch_note: str | None = None
    #: Not in the JSON: the estimate's unrounded registers (half registers on Apple), for the launch advice.
    registers_exact: float | None = None
    #: An estimate's measured uncertainty (shaderlint.estimate.uncertainty): the range the compiler's
    #: count fell in for 8 in 10 real kernels with estimates like this one; None where not measured.
    registers_interval: tuple[int, int] | None = None
    #: The occupancy at the two ends of ``registers_interval`` (lowest first), when they differ.
    occupancy_interval: tuple[float, float] | None = None
    #: The facts host code gives the kernel and where (:func:`host_facts`); in the JSON when any.
    host: list[dict] = field(default_factory=list)
    #: An estimate that leaves out calls into code it cannot see (their registers): likely low.
    #: In the JSON (``"registers_lower_bound": true``) only when set.
    registers_lower_bound: bool = False

    def to_json(self) -> dict:
        out = {k: getattr(self, k) for k in JSON_KEYS}
        if self.host:
            out["host"] = self.host
        if self.registers_lower_bound and self.registers_source == "estimate":
            out["registers_lower_bound"] = True
        if self.registers_source == "estimate":
            out["registers_interval"] = list(self.registers_interval) if self.registers_interval else None
            out["occupancy_interval"] = list(self.occupancy_interval) if self.occupancy_interval else None
        if self.launch_asked:
            out["launch"] = self.launch
        return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="shaderlint report",
        description="Registers, threadgroup memory, stack, threads per group and occupancy per kernel "
                    "(exact from ptxas or RADV where they apply and are installed, else estimated by shaderlint's "
                    "register model).",
    )
    p.add_argument("paths", nargs="*", help="files or directories (default: .)")
    p.add_argument("--output-format", "--format", dest="format", choices=("text", "json"), default="text",
                   metavar="FORMAT", help="text (a table, default) or json (the stable array of SPEC.md)")
    p.add_argument("--target", metavar="NAME", help="GPU profile (default: per language, or the configured target)")
    p.add_argument("--compiler", choices=COMPILERS, default="auto",
                   help="auto (default): exact figures where a compiler applies and is installed (ptxas for CUDA on "
                        "NVIDIA targets, RADV for GLSL compute on AMD targets), estimates elsewhere; ptxas: compile CUDA "
                        "files with nvcc for the target's architecture; radv: compile GLSL compute shaders with Mesa's "
                        "RADV for the AMD target's chip (no GPU needed); none: estimates only, no compile")
    p.add_argument("--notes", action="store_true", help="text format: list the assumptions behind each row")
    p.add_argument("--suggest-launch", action="store_true",
                   help="per kernel: the figures of its group shape (SIMD groups, idle lanes, groups per core, "
                        "occupancy; groups, threads launched and edge waste when the iteration space is known) and "
                        "the shape the launch advisor suggests")
    p.add_argument("--config", metavar="FILE", help="configuration file (default: closest shaderlint.toml / pyproject.toml)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    try:
        if args.target is not None:
            args.target = check_target(args.target, "--target")
        resolver = SettingsResolver(args.config, {"target": args.target} if args.target else {})
    except ConfigError as e:
        print(f"shaderlint: {e}", file=sys.stderr)
        return 2
    errors: list[tuple[str, str]] = []
    paths = args.paths or ["."]
    files = list(discover(paths, (), errors, is_excluded=lambda p: resolver.for_path(p).is_excluded(p),
                          language_for=lambda p: resolver.for_path(p).language_for(p)))
    for p, reason in errors:
        print(f"shaderlint: {p}: {reason}", file=sys.stderr)
    from shaderlint.host.index import HostIndex

    host = HostIndex.build(paths, files, resolver.for_path)
    if args.compiler in ("radv", "auto"):
        _prefetch_radv(files, resolver, host)
    from shaderlint.project.run import plan_run, under_roots

    # contexts, and the headers the CUDA sources include, analysed in context (as when linting)
    plan = plan_run(files, resolver.for_path, under_roots(paths))
    rows: list[Row] = []
    for path in plan.files:
        settings = resolver.for_path(path)
        rows.extend(report_file(path, settings, compiler=args.compiler, suggest_launch=args.suggest_launch,
                                host=host.facts_for(path), data=plan.data.pop(path, None),
                                language=plan.languages.get(path), file_context=plan.contexts.get(path)))
    text = format_json(rows) if args.format == "json" else format_text(rows, notes=args.notes)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 2 if errors else 0  # as for linting: a path that could not be read fails the run


# ---- rows ---------------------------------------------------------------------------------------
def report_file(path: str, settings=None, *, compiler: str = "none", data: bytes | None = None,
                target: Target | None = None, suggest_launch: bool = False, host=None, language: str | None = None,
                file_context=None) -> list[Row]:
    """Rows for one file (never raises for bad input: an unreadable file has no rows). ``host``: the
    :class:`shaderlint.host.index.HostFacts` of the code launching the file's kernels; ``language``
    overrides the settings' (a header analysed in context); ``file_context``: its
    :class:`shaderlint.project.includes.FileContext`."""
    from shaderlint.deadline import Deadline, TimeBudgetExceeded

    from shaderlint.config import Settings

    if language is None:
        language = settings.language_for(path) if settings is not None else language_for_path(path)
    if language is None:
        return []

    try:
        if data is None:
            with open(path, "rb") as fh:
                data = fh.read()
        budget = (settings or Settings()).budget_for(data)
        with Deadline(budget) as dl:  # the same per-file budget as linting (see shaderlint.deadline)
            from shaderlint.engine import predefined_for

            model = build_model(FRONT_ENDS[language].parse(
                Source(path, data), deadline=dl, predefined=predefined_for(settings or Settings(), language, file_context),
                extra_macros=file_context.macros if file_context is not None and file_context.macros else None,
                headers=file_context.files if file_context is not None else None))
            if host is not None:
                from shaderlint.host.index import apply as apply_host
                apply_host(model, host)
    except TimeBudgetExceeded:
        print(f"shaderlint: {path}: could not analyse: the per-file time budget of {budget:.3g} s was exceeded",
              file=sys.stderr)
        return []
    except (OSError, Exception) as exc:  # a file we cannot read has no kernels to report
        print(f"shaderlint: {path}: could not analyse: {exc}", file=sys.stderr)
        return []
    if target is None:
        name = getattr(settings, "target", None) if settings is not None else None
        target = get_target(name) if name else default_target(language)
    facts = dict(settings.facts_for(path)) if settings is not None else {}
    facts.update(model.facts)
    estimates = []
    try:
        with Deadline(budget):
            for f in model.kernels:
                if not f.is_device_code:
                    continue
                merged = {**facts, **f.facts}
                for b in template_instances(model, f) or [None]:
                    estimates.append(cached_estimate(model, f, target, bindings=b, facts=merged))
    except TimeBudgetExceeded:
        print(f"shaderlint: {path}: estimates stopped: the per-file time budget of {budget:.3g} s was exceeded",
              file=sys.stderr)
    why_not = None
    if compiler == "auto":
        compiler, why_not = auto_compiler(language, target, model)
    if compiler == "ptxas" and language == "cuda":
        rows = _ptxas_rows(path, model, estimates, target, settings.defines if settings is not None else (),
                          settings.include_dirs if settings is not None else ())
    elif compiler == "radv" and language == "glsl":
        from shaderlint.host.index import pipeline_specialization

        rows = _radv_rows(path, data, model, estimates, target, settings.defines if settings is not None else (),
                          pipeline_specialization(host))
    else:
        rows = [_estimate_row(path, model, e, target) for e in estimates]
        if compiler == "ptxas":
            why_not = f"--compiler ptxas applies to CUDA files only; {language} is estimated"
        elif compiler == "radv":
            why_not = f"--compiler radv applies to GLSL compute shaders only; {language} is estimated"
        if why_not:
            for r in rows:
                r.notes.insert(0, why_not)
    if suggest_launch:
        _attach_launch(rows, model, estimates, target, settings.facts_for(path) if settings is not None else {})
    return rows


# ---- launch advice (--suggest-launch) -------------------------------------------------------------
def _attach_launch(rows: list[Row], model, estimates: list[KernelEstimate], target: Target,
                   config: dict[str, str]) -> None:
    by_line: dict[int, list[KernelEstimate]] = {}
    by_name = {}
    for e in estimates:
        line = kernel_line(model, e.function.name_node.start_byte)
        by_line.setdefault(line, []).append(e)
        by_name.setdefault((line, e.name), e)
    for r in rows:
        r.launch_asked = True
        e = by_name.get((r.line, r.kernel))
        bindings = e.bindings if e is not None else None
        if e is None and r.line in by_line:
            e = by_line[r.line][0]
            # An instance we cannot match to its estimate: no template launch is taken for it.
            bindings = e.bindings if len(by_line[r.line]) == 1 else {"": ""}
        if e is None:
            continue
        f = e.function
        if f.kind not in ("kernel", "compute") and f.group_size is None:
            r.launch_note = f"a {f.kind} function has no compute groups to shape"
            continue
        r.launch_note = ("group shape and iteration space unknown (annotate // shaderlint: threadgroup-size=WxH "
                         "or grid-size=WxH)")
        try:
            regs = r.registers_exact if r.registers_source == "estimate" and r.registers_exact else r.registers
            r.launch = launch_advice(model, f, target, config, r.threads_per_group, regs, r.threadgroup_memory_bytes,
                                     shared_unknown=r.shared_unknown, bindings=bindings)
        except Exception as exc:  # advice is optional: never lose the row over it
            r.notes.append(f"launch advice failed: {exc}")
            r.launch = None


def iteration_space(model, f, config: dict[str, str] | None = None,
                    bindings: dict[str, str] | None = None) -> tuple[tuple[int, int, int], str] | None:
    """The kernel's iteration space in threads and where it comes from: the ``grid-size`` fact
    (annotation or configuration), else what its launches in the file cover when every one has
    constant sizes and they agree: grid × block, or ``n`` where the grid is ``(n + b - 1) / b``.
    With ``bindings`` (a template instance), launches of other instances do not count."""
    from shaderlint.estimate.registers import _instance_args
    from shaderlint.model.dispatch import dim_exprs, kernel_fact, launch_sizes, parse_dims

    spec = kernel_fact(model, f, "grid-size", config)
    if spec:
        dims = parse_dims(spec)
        return (dims, "grid-size") if dims is not None else None
    sites = launch_sizes(model).get(f.name, [])
    seen = set()
    for site, gs in sites:
        fn = site.node.child_by_field_name("function")
        if bindings and fn is not None and fn.type == "template_function" \
                and _instance_args(model, f, fn.child_by_field_name("arguments")) != dict(bindings):
            continue  # another instance's launch
        got = dim_exprs(model, site.grid) if site.grid is not None and gs is not None else None
        if got is None:
            return None
        exprs = got[0]
        # A dimension the grid leaves out is one group: the block's extent there.
        work = [_work_extent(model, exprs[i], b) if i < len(exprs) else b for i, b in enumerate(gs.dims)]
        if any(w is None for w in work):
            return None
        seen.add(tuple(work))
    if len(seen) == 1:
        return seen.pop(), "launch"
    return None


def _work_extent(model, expr, block: int) -> int | None:
    """The threads one grid dimension covers: ``n`` for the round-up ``(n + b - 1) / b`` of a
    constant ``n`` over the block's ``b`` (the work, not the threads launched), else the constant
    grid times the block."""
    from shaderlint.model.dispatch import follow
    from shaderlint.model.expr import unparen

    e = unparen(follow(model, expr)[0])
    if e.type == "binary_expression" and model.text(e.child_by_field_name("operator")) == "/":
        left, right = unparen(e.child_by_field_name("left")), e.child_by_field_name("right")
        if right is not None and model.const_value(right) == block and left.type == "binary_expression" \
                and model.text(left.child_by_field_name("operator")) == "+":
            a, c = left.child_by_field_name("left"), left.child_by_field_name("right")
            n = model.const_value(a) if a is not None else None
            if c is not None and model.const_value(c) == block - 1 and isinstance(n, int) and n > 0:
                return n
    v = model.const_value(e)
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        return None
    return v * block


def launch_advice(model, f, target: Target, config: dict[str, str] | None, threads: int | None,
                  registers: float | None, shared_bytes: int | None, *, shared_unknown: bool = False,
                  bindings: dict[str, str] | None = None) -> dict | None:
    """The ``"launch"`` object of a report row (README, "Launch advice"), or None when neither the
    group shape nor the iteration space is known, or the kernel has no compute groups."""
    from shaderlint.estimate.launch import describe, suggest
    from shaderlint.model.dispatch import agreed_launch_size, group_size

    gs = group_size(model, f, config) or (agreed_launch_size(model, f) if model.launches else None)
    if f.kind not in ("kernel", "compute") and gs is None:
        return None  # vertex, fragment, ...: no groups to shape
    space = iteration_space(model, f, config, bindings)
    current, bound = None, False
    if gs is not None and (threads is None or gs.total == threads):
        current, bound = gs.dims, not gs.exact
    if current is None and space is None:
        return None
    shared = shared_bytes or 0
    now = describe(current, space[0] if space else None, target, registers, shared) if current else None
    sug = suggest(space[0] if space else None, target, registers, shared, current, current_is_upper_bound=bound,
                  uses_threadgroup_memory=shared > 0 or shared_unknown)
    return {
        "target": target.name,
        "iteration_space": list(space[0]) if space else None,
        "iteration_space_source": space[1] if space else None,
        "current": now.to_json() if now else None,
        "current_is_upper_bound": bound,
        "suggested": sug.figures.to_json() if sug else None,
        "same_as_current": bool(sug and sug.same_as_current),
        "reasons": list(sug.reasons) if sug else [],
    }


def auto_compiler(language: str | None, target: Target, model) -> tuple[str, str | None]:
    """The compiler ``--compiler auto`` uses for a file (also the language server's hover), and why none
    when none."""
    if language == "cuda":
        from shaderlint.estimate.ptxas import ptxas_available

        if target.ptxas_arch is None:
            return "none", None
        if not ptxas_available():
            return "none", "auto: nvcc is not on PATH: estimated"
        return "ptxas", None
    if language == "glsl":
        from shaderlint.estimate.radv import unavailable_reason

        if target.radv_family is None or getattr(model, "stage", None) != "compute":
            return "none", None
        missing = unavailable_reason()
        if missing:
            return "none", f"auto: RADV {missing}: estimated"
        return "radv", None
    return "none", None


def kernel_line(model, offset: int) -> int:
    """The 1-based line of ``offset`` of the model's text; a kernel generated by a macro invocation
    (:mod:`shaderlint.model.expand`) is on the invocation's line."""
    e = model.parsed.expansion_at(offset)
    return model.source.position(e.inv_start if e is not None else offset)[0]


def expansion_notes(model, f) -> list[str]:
    """"expanded from macro `X` (file:line)" for a kernel a macro invocation generates."""
    e = model.parsed.expansion_at(f.name_node.start_byte)
    if e is None:
        return []
    d = e.macro
    where = f"line {d.line}" if d.path == model.source.path else f"{d.path}:{d.line}"
    return [f"expanded from macro `{d.name}` ({where})"]


def _estimate_row(path: str, model, e: KernelEstimate, target: Target) -> Row:
    line = kernel_line(model, e.function.name_node.start_byte)
    # An estimate that leaves out code it knows is there (``+``) is a floor: the interval measured on
    # kernels estimated alike does not describe it, and its occupancy is a ceiling.
    lower = e.lower_bound  # (unseen calls, or a kernel too large to walk completely)
    interval = None if lower else register_interval(model.language, target.name, e.registers)
    host = host_facts(model, e.function)
    return Row(
        path=path, kernel=e.name, line=line, language=model.language, threads_per_group=e.threads_per_group,
        registers=e.registers, registers_source="estimate", threadgroup_memory_bytes=e.shared_bytes,
        stack_bytes=e.stack_bytes, target=target.name,
        occupancy=_round(e.occupancy_value), limiter=e.limiter,
        notes=expansion_notes(model, e.function) + host_notes(host) + list(e.notes),
        host=host, registers_lower_bound=lower,
        occupancy_is_bound=e.occupancy_is_bound or (lower and e.occupancy is not None), shared_unknown=e.shared_unknown, registers_exact=e.registers_exact,
        registers_interval=(interval.low, interval.high) if interval else None,
        occupancy_interval=_occupancy_interval(e, target, interval),
    )


def _occupancy_interval(e: KernelEstimate, target: Target, interval) -> tuple[float, float] | None:
    """Occupancy with the registers at each end of their measured interval (same group size, or the
    same best case over group sizes, and memory), lowest first; None when it does not change."""
    if interval is None or e.occupancy is None:
        return None
    from shaderlint.estimate.registers import _occupancy

    ends = []
    for regs in (interval.high, interval.low):
        regs = min(regs, target.max_registers_per_thread)
        occ, _ = _occupancy(target, e.threads_per_group, regs, e.shared_bytes, [], e.function)
        if occ is None:
            return None
        ends.append(_round(occ.occupancy))
    lo, hi = min(ends), max(ends)
    return None if lo == hi else (lo, hi)


def host_facts(model, f) -> list[dict]:
    """The kernel's facts that come from the host code launching it, each with where the host sets
    it: ``{"fact": "threads_per_group" | "grid" | "dispatch", "value": [x, y, z] (threads) |
    "threads" | "threadgroups", "path", "line"}`` (``path``/``line`` None where not known)."""
    from shaderlint.model.dispatch import host_fact

    out = []
    gs = f.group_size
    if gs is not None and gs.origin == "host" and gs.host is not None:
        out.append({"fact": "threads_per_group", "value": list(gs.dims), "path": gs.host.path, "line": gs.host.line})
    for key, name in (("dispatch", "dispatch"), ("grid-size", "grid")):
        if key == "dispatch" and model.language != "metal":
            continue  # CUDA and Vulkan always dispatch whole groups: nothing to learn
        got = host_fact(model, f, key)
        if got is not None:
            value, at = got
            if name == "grid":
                dims = [int(v) for v in str(value).split("x")]
                value = dims + [1] * (3 - len(dims))
            out.append({"fact": name, "value": value, "path": at.path if at is not None else None,
                        "line": at.line if at is not None else None})
    return out


def host_notes(facts: list[dict]) -> list[str]:
    """The text table's lines for :func:`host_facts` (``host: … from path:line``)."""
    from shaderlint.model.dispatch import format_dims

    out = []
    for h in facts:
        v = h["value"]
        if h["fact"] == "threads_per_group":
            what = f"threads per group {format_dims(tuple(v))}"
        elif h["fact"] == "grid":
            what = "grid (threads) " + format_dims(tuple(v)).replace("×", "x")
        else:
            what = f"dispatch {v}"
        out.append(f"host: {what}" + (f" from {h['path']}:{h['line']}" if h["path"] else ""))
    return out


def _ptxas_rows(path: str, model, estimates: list[KernelEstimate], target: Target,
                defines: tuple[str, ...] = (), include_dirs: tuple[str, ...] = ()) -> list[Row]:
    from shaderlint.estimate.measured import compile_file
    from shaderlint.estimate.ptxas import ptxas_available

    fallback = None
    if target.ptxas_arch is None:
        fallback = f"ptxas does not apply to target {target.name} (not an NVIDIA GPU): estimated"
    elif not ptxas_available():
        fallback = "nvcc is not on PATH: estimated"
    result = None
    if fallback is None:
        # The text the model was built from, with the build's defines, compiled as lint runs compile it
        # (shaderlint.estimate.measured): the rows and SL505/SL506 agree on one count.
        result = compile_file(model, target.ptxas_arch, defines, include_dirs)
        if result.error and not len(result):
            fallback = f"ptxas failed ({result.error}): estimated"
    rows: list[Row] = []
    done: set[int] = set()
    emitted: set[str] = set()  # mangled symbols already in a row: overloads share a name, not an instance
    for e in estimates:
        f = e.function
        if id(f) in done:
            continue
        compiled = [k for k in result.by_name(f.name) if k.mangled not in emitted] if result is not None else []
        if sum(1 for g in model.kernels if g.name == f.name and g.is_device_code) > 1:  # overloads
            compiled = [k for k in compiled if _param_count(k.demangled) in (None, len(f.params))]
        if not compiled:
            row = _estimate_row(path, model, e, target)
            if fallback:
                row.notes.insert(0, fallback)
            elif result is not None:
                row.notes.insert(0, "ptxas compiled no instance of this kernel (uninstantiated template?): estimated")
            rows.append(row)
            continue
        done.add(id(f))
        by_args = {_args_text(e): e for e in estimates if e.function is f}
        for k in compiled:
            est = by_args.get(_template_args(k.demangled, f.name), e)
            rows.append(_ptxas_row(path, model, f, k, est, target))
            emitted.add(k.mangled)
    return rows


def _param_count(demangled: str) -> int | None:
    """How many parameters a demangled signature lists (``k(float*, int)`` -> 2), or None (not a signature)."""
    text = demangled.strip()
    if not text.endswith(")"):
        return None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += text[i] == ")"
        depth -= text[i] == "("
        if depth == 0:
            args = text[i + 1:-1].strip()
            return 0 if args in ("", "void") else len(_split(args))
    return None


def _ptxas_row(path: str, model, f, k, est: KernelEstimate, target: Target) -> Row:
    shared = k.shared_bytes
    host = host_facts(model, f)
    notes = expansion_notes(model, f) + host_notes(host) + [f"ptxas {k.arch}: {k.registers} registers, {k.stack_bytes} bytes stack frame, "
             f"{k.spill_store_bytes} bytes spill stores, {shared} bytes static shared memory"]
    dynamic = est.shared_bytes - _static_shared(est)
    if dynamic > 0:
        shared += dynamic
        notes.append(f"plus {dynamic} bytes of dynamic shared memory from the launch")
    threads = est.threads_per_group
    occ, bound = None, False
    try:
        if threads:
            o = occupancy(target, threads, k.registers, shared)
        else:
            o = max((occupancy(target, t, k.registers, shared)
                     for t in range(target.simd_width, target.max_threads_per_group + 1, target.simd_width)),
                    key=lambda x: x.occupancy)
            bound = True
            notes.append(f"threads per group unknown: best case over group sizes ({o.threads_per_group} threads)")
        occ = o
    except ValueError:
        pass
    head = _signature_head(k.demangled)
    at = head.rfind(f.name + "<")
    name = f.name + head[at + len(f.name):] if at >= 0 else f.name
    if at >= 0 and "&" in name:  # `kp<&(heavy_fn(float))>` named as the estimate names it: `kp<heavy_fn>`
        name = f"{f.name}<{', '.join(_function_arg(a).strip() for a in _split(head[at + len(f.name) + 1: head.rfind('>')]))}>"
    return Row(
        path=path, kernel=name, line=kernel_line(model, f.name_node.start_byte), language="cuda",
        threads_per_group=threads, registers=k.registers, registers_source="ptxas", threadgroup_memory_bytes=shared,
        stack_bytes=k.stack_bytes, target=target.name, occupancy=_round(occ.occupancy) if occ else None,
        limiter=occ.limiter if occ else None, notes=notes, occupancy_is_bound=bound, shared_unknown=est.shared_unknown,
        host=host,
    )


def _prefetch_radv(files: list[str], resolver, host=None) -> None:
    """Measure every GLSL compute shader the report will ask RADV about in one driver process per chip
    (with the specialization constants its host code sets, as :func:`_radv_rows` asks)."""
    from shaderlint.estimate import radv
    from shaderlint.host.index import pipeline_specialization

    if radv.unavailable_reason():
        return
    shaders = []
    for path in files:
        settings = resolver.for_path(path)
        if settings.language_for(path) != "glsl":
            continue
        target = get_target(settings.target) if settings.target else default_target("glsl")
        if target.radv_family is None:
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if FRONT_ENDS["glsl"].stage_for(path, Source(path, data)) != "compute":
            continue
        spec = pipeline_specialization(host.facts_for(path)) if host is not None and settings.host_code else None
        shaders.append((data.decode("utf-8", "replace"), [os.path.dirname(os.path.abspath(path))],
                        target.radv_family, radv.subgroup_size_for(target), settings.defines, spec))
    radv.prefetch(shaders)


def _radv_rows(path: str, data: bytes, model, estimates: list[KernelEstimate], target: Target,
               defines: tuple[str, ...] = (), specialization: tuple[tuple[int, int], ...] | None = None) -> list[Row]:
    from shaderlint.estimate.radv import measure_radv, subgroup_size_for, unavailable_reason

    fallback = None
    stage = getattr(model, "stage", None)
    if target.radv_family is None:
        fallback = f"RADV does not apply to target {target.name} (not an AMD GPU): estimated"
    elif stage != "compute":
        fallback = f"RADV measures compute shaders only, not {stage or 'a shader of unknown stage'}: estimated"
    elif missing := unavailable_reason():
        fallback = f"RADV {missing}: estimated"
    result = None
    if fallback is None:
        wave = subgroup_size_for(target)
        # The text as read (it may be an editor's buffer), with the file's directory for #include and
        # the build's defines (the estimate beside it was parsed with them) and the specialization
        # constants the host's pipeline sets; as _prefetch_radv asks.
        result = measure_radv(data.decode("utf-8", "replace"), target.radv_family, subgroup_size=wave,
                              include_dirs=[os.path.dirname(os.path.abspath(path))], defines=defines,
                              specialization=specialization)
        if not result.ok:
            fallback = f"RADV failed ({result.error}): estimated"
    rows: list[Row] = []
    done = False
    for e in estimates:
        if result is not None and result.ok and not done and e.function.name == (result.entry_point or "main"):
            rows.append(_radv_row(path, model, e, result, target))
            if specialization:
                rows[-1].notes.append("compiled with the specialization constants the host's pipeline sets: "
                                      + ", ".join(f"{cid} = {v}" for cid, v in specialization))
            done = True
            continue
        row = _estimate_row(path, model, e, target)
        if fallback:
            row.notes.insert(0, fallback)
        elif result is not None:
            row.notes.insert(0, f"not the compute entry point ({result.entry_point}): estimated")
        rows.append(row)
    return rows


def _radv_row(path: str, model, est: KernelEstimate, r, target: Target) -> Row:
    wave = r.wave_size or target.simd_width
    scratch = r.scratch_bytes or 0
    stack = -(-scratch // wave) if wave else None
    shared = r.lds_bytes if r.lds_bytes is not None else est.shared_bytes
    host = host_facts(model, est.function)
    notes = host_notes(host) + [
             f"RADV {r.driver or 'Mesa'} on {r.device or r.family}: {r.vgprs} VGPRs allocated in wave{wave}, "
             f"{r.sgprs} SGPRs, {r.spilled_vgprs or 0} VGPRs and {r.spilled_sgprs or 0} SGPRs spilled, "
             f"{scratch} B scratch per wave, {r.lds_bytes or 0} B LDS"]
    if r.wave_size and r.wave_size != target.simd_width:
        notes.append(f"the driver compiled wave{r.wave_size}, not the target's wave{target.simd_width}")
    if r.waves_per_simd is not None:
        raw = r.subgroups_per_simd
        doubled = ""
        if raw != r.waves_per_simd:
            doubled = f" (its 'Subgroups per SIMD' is {raw}: gfx10+ counts in wave32 units)"
        notes.append(f"RADV's own occupancy: {r.waves_per_simd} waves per SIMD{doubled}")
    notes.extend(r.notes)
    threads = r.threads_per_group or est.threads_per_group
    if not _declares_workgroup_size(model):
        # glslang gives a compute shader that names no size (the application injects it, as ncnn
        # does) a workgroup of one invocation: RADV measured that shader, not the one that runs.
        notes.append("the shader declares no workgroup size: glslang compiled it as one invocation per "
                     "workgroup, so RADV's figures are for that and may differ at the size the application sets")
        threads = est.threads_per_group
    from shaderlint.estimate.registers import _occupancy

    occ, bound = _occupancy(target, threads or None, float(r.vgprs), shared, notes, est.function)  # (unknown: best case)
    return Row(
        path=path, kernel=est.name, line=kernel_line(model, est.function.name_node.start_byte),
        language="glsl", threads_per_group=threads, registers=r.vgprs, registers_source="radv",
        threadgroup_memory_bytes=shared, stack_bytes=stack, target=target.name,
        occupancy=_round(occ.occupancy) if occ else None, limiter=occ.limiter if occ else None, notes=notes,
        occupancy_is_bound=bound, host=host,
    )


def _declares_workgroup_size(model) -> bool:
    """Whether the GLSL shader of ``model`` names its workgroup size: a literal, a constant or a
    specialization constant in ``layout(local_size_…) in;``, in the file or a file it includes."""
    from shaderlint.estimate.uniform import workgroup_size

    if workgroup_size(model):
        return True
    text = model.source.data if isinstance(model.source.data, bytes) else bytes(model.source.data)
    return b"local_size_" in text


def _static_shared(e: KernelEstimate) -> int:
    dyn = 0
    for n in e.notes:
        if n.startswith("dynamic shared memory") and ": " in n:
            try:
                dyn += int(n.rsplit(": ", 1)[1].split()[0])
            except ValueError:
                pass
    return e.shared_bytes - dyn


def _args_text(e: KernelEstimate) -> str | None:
    if not e.bindings:
        return None
    return ", ".join(_norm(v) for v in e.bindings.values())


def _template_args(demangled: str, name: str) -> str | None:
    head = _signature_head(demangled)
    at = head.rfind(name + "<")
    if at < 0:
        return None
    return ", ".join(_norm(_function_arg(a)) for a in _split(head[at + len(name) + 1: head.rfind(">")]))


def _signature_head(demangled: str) -> str:
    """A demangled signature up to its parameter list: the first ``(`` outside template arguments
    (``void kp<&(heavy_fn(float))>(float*)`` -> ``void kp<&(heavy_fn(float))>``)."""
    depth = 0
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            return demangled[:i]
    return demangled


def _function_arg(arg: str) -> str:
    """A function-pointer template argument as the function's name: ``&(heavy_fn(float))`` ->
    ``heavy_fn`` (what an instance's bindings hold); anything else unchanged."""
    a = arg.strip()
    if not a.startswith("&"):
        return arg
    a = a[1:].strip()
    while a.startswith("(") and a.endswith(")"):
        a = a[1:-1].strip()
    name = a.split("(", 1)[0].strip()
    return name.split("::")[-1] if name.replace("::", "").replace("_", "a").isalnum() else arg


def _split(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<(" and 1 or 0
        depth -= ch in ">)" and 1 or 0
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + ([cur] if cur.strip() else [])


def _norm(v: str) -> str:
    return " ".join(v.replace("(", " ").replace(")", " ").split()).rstrip("uUlL") or v


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


# ---- formatting -----------------------------------------------------------------------------------
def format_json(rows: list[Row]) -> str:
    return json.dumps([r.to_json() for r in rows], indent=2) + "\n"


def _host_threads(r: Row) -> bool:
    return any(h["fact"] == "threads_per_group" for h in r.host)


def format_text(rows: list[Row], notes: bool = False) -> str:
    if not rows:
        return "No kernels found.\n"
    header = ("path", "kernel", "line", "lang", "threads", "registers", "source", "tg memory", "stack",
              "target", "occupancy", "limiter")
    table = [header]
    for r in rows:
        regs = "?" if r.registers is None else (f"~{r.registers}" if r.registers_source == "estimate" else str(r.registers))
        if r.registers is not None and r.registers_source == "estimate" and r.registers_lower_bound:
            regs += "+"
        if r.registers_interval is not None:
            regs += f" ({r.registers_interval[0]}–{r.registers_interval[1]})"
        mem = "?" if r.threadgroup_memory_bytes is None else f"{r.threadgroup_memory_bytes} B" + ("+?" if r.shared_unknown else "")
        stack = "?" if r.stack_bytes is None else f"{r.stack_bytes} B"
        occ = "?" if r.occupancy is None else ("≤" if r.occupancy_is_bound else "") + f"{r.occupancy * 100:.1f}%"
        if r.occupancy is not None and r.occupancy_interval is not None:
            occ += f" ({r.occupancy_interval[0] * 100:.1f}–{r.occupancy_interval[1] * 100:.1f}%)"
        threads = str(r.threads_per_group or "?") + ("†" if _host_threads(r) else "")
        table.append((display_path(r.path), r.kernel, str(r.line), r.language, threads, regs,
                      r.registers_source, mem, stack, r.target, occ, r.limiter or "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = {2, 4, 5, 7, 8, 10}
    lines = []
    for i, row in enumerate(table):
        cells = [c.rjust(widths[j]) if j in right else c.ljust(widths[j]) for j, c in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
        else:
            if notes and rows[i - 1].notes:
                lines.extend(f"    - {n}" for n in rows[i - 1].notes)
            elif rows[i - 1].notes:  # where host code sets the kernel's facts: always shown
                lines.extend(f"    - {n}" for n in rows[i - 1].notes if n.startswith("host: "))
            if rows[i - 1].launch_asked:
                lines.extend(_launch_lines(rows[i - 1]))
    targets = sorted({r.target for r in rows})
    lines.append("")
    if any(r.registers_source == "estimate" for r in rows):
        lines.append(f"~ registers are estimates of shaderlint's register model (target {', '.join(targets)}); "
                     "see docs/register-model.md. Where nvcc (CUDA, NVIDIA targets) or Mesa's RADV (GLSL compute, "
                     "AMD targets) is installed, report measures them instead (--compiler auto, the default).")
        with_range = sorted({(r.language, r.target) for r in rows if r.registers_interval})
        if with_range:
            held = [c for c in (uncertainty_coverage(lang, t) for lang, t in with_range) if c is not None]
            lines.append("(a–b) after an estimate: the range ptxas's count fell in for 8 in 10 real kernels "
                         "estimated alike (" + uncertainty_source() + ")"
                         + (f"; it held for {min(held) * 100:.0f} % of the kernels of projects left out of the "
                            "measurement" if held else "")
                         + "; the occupancy range follows from it.")
        bare = [r for r in rows if r.registers_source == "estimate" and r.registers is not None
                and r.registers_interval is None and not r.registers_lower_bound]
        unmeasured = sorted({f"{r.language} on {r.target}" for r in bare if not measured_for(r.language, r.target)})
        sparse = any(measured_for(r.language, r.target) for r in bare)
        if unmeasured or sparse:
            where = unmeasured + (["estimates in a band with too few measured kernels (above 64 registers)"]
                                  if sparse else [])
            lines.append("Estimates without a range: their error against a compiler is not measured for "
                         + ", ".join(where) + "; see docs/register-model.md.")
    if any(r.registers_lower_bound and r.registers is not None and r.registers_source == "estimate" for r in rows):
        lines.append("+ after an estimate: the kernel calls code the estimate cannot see (through a function pointer "
                     "or functor, a declaration without its body, a library); their registers are not counted and "
                     "the figure is likely low (--notes names the calls).")
    if any(r.registers_source == "radv" for r in rows):
        lines.append("radv: VGPRs measured by Mesa's RADV/ACO for the target's chip, as allocated (rounded to the "
                     "allocation granule); stack is scratch per lane.")
    floors = [r for r in rows if r.occupancy_is_bound and r.registers_lower_bound and r.registers_source == "estimate"]
    if any(r.occupancy_is_bound and (r not in floors or any(n.startswith("threads per group unknown") for n in r.notes))
           for r in rows):
        lines.append("≤ occupancy is the best case over group sizes: the kernel does not declare its group size "
                     "(annotate with // shaderlint: threadgroup-size=N).")
    if floors:
        lines.append("≤ occupancy with a + estimate: at most this, as the registers are likely more.")
    if any(_host_threads(r) for r in rows):
        lines.append("† threads per group from the host code that launches the kernel (the line is listed under "
                     "the row).")
    if any(r.shared_unknown for r in rows):
        lines.append("+? part of the threadgroup memory is sized at dispatch and not counted.")
    if any(r.launch for r in rows):
        lines.append("launch: SIMD groups, idle lanes, groups and threads are exact; the occupancy ceiling rests on "
                     "the row's registers (~ estimated) and assumes the same threadgroup memory for every shape. "
                     "Check that the kernel does not depend on its shape (tiles, gl_WorkGroupSize) before changing it.")
    return "\n".join(lines) + "\n"


def _launch_lines(r: Row) -> list[str]:
    from shaderlint.estimate.targets import get_target
    from shaderlint.model.dispatch import format_dims, simd_terms

    a = r.launch
    if a is None:
        return [f"    launch: {r.launch_note or 'no advice'}"] if r.launch_note else []
    try:
        simd, core = simd_terms(get_target(a["target"]))
    except KeyError:
        simd, core = "SIMD group", "core"
    approx = "~" if r.registers_source == "estimate" else ""
    space = a["iteration_space"]
    head = f"    launch on {a['target']}: "
    head += (f"iteration space {format_dims(space)} threads (from {'the grid-size fact' if a['iteration_space_source'] == 'grid-size' else 'the launches in this file'})"
             if space else "iteration space unknown")
    out = [head]

    def figures(label: str, fig: dict) -> str:
        text = (f"      {label:<9} {format_dims(fig['shape']):<9} {fig['threads']} threads = {fig['simd_groups']} "
                f"{simd}{'s' if fig['simd_groups'] != 1 else ''}, {fig['idle_lanes']} idle lane"
                f"{'s' if fig['idle_lanes'] != 1 else ''}")
        if not fig["fits"]:
            text += ", cannot launch on this target"
        else:
            text += (f"; {fig['groups_per_core']} group{'s' if fig['groups_per_core'] != 1 else ''} per {core}, "
                     f"occupancy {approx}{fig['occupancy'] * 100:.2f}%"
                     f" ({fig['limiter']})")
        if fig["groups"] is not None:
            waste = fig["edge_waste"]
            rank = max(len(format_dims(space).split("×")), len(format_dims(fig["shape"]).split("×")))
            text += (f"; {format_dims(fig['groups'], rank)} groups, {fig['threads_launched']} threads for {fig['threads_needed']}"
                     f" ({'no edge waste' if not waste else f'{waste * 100:.2f}% edge waste'})")
        return text

    if a["current"] is not None:
        label = "current≤" if a["current_is_upper_bound"] else "current"
        out.append(figures(label, a["current"]))
        if a["current_is_upper_bound"]:
            out.append("      (the declared size is an upper bound: the launch may use fewer threads)")
    else:
        out.append("      current   group shape unknown")
    if a["suggested"] is None:
        out.append("      suggested none: no shape fits a core with these registers and threadgroup memory")
    elif a["same_as_current"]:
        out.append("      suggested the current shape: already the best by the launch rules")
    else:
        out.append(figures("suggested", a["suggested"]))
        if a["reasons"]:
            out.append(f"      changes: {'; '.join(a['reasons'])}")
    return out
