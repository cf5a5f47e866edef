"""What-if impact: a diagnostic's cost in registers, stack and occupancy.

Every diagnostic inside kernel code carries an :class:`~shaderlint.diagnostics.Impact`:
the kernel is estimated twice on the active target -- as written, and as the
rule's advice would leave it -- and the difference is reported. Rules stay pure
and small: a rule describes its advice as an :class:`Adjustment` through the
optional hook :meth:`shaderlint.rules.base.Rule.what_if`, built with the helpers
below, and :func:`attach_impacts` (called once per file by the engine) does the
estimating::

    from shaderlint.estimate import whatif

    class DynamicStackArray(Rule):
        @classmethod
        def what_if(cls, model, function, finding, target):
            var = whatif.declared_at(function, finding.start)
            return whatif.promote_array(var) if var is not None else None

A rule without the hook (or returning None) gets an impact whose
``occupancy_before`` is filled in and whose other fields are null (unknown), and so does
every finding in a kernel too large for the estimator to walk completely. The
occupancy (before and after) is filled in only where the estimate's uncertainty
cannot change it (:func:`occupancy_decided`): an estimated "75 % -> 100 %" whose
register range crosses an occupancy step is not claimed;
:func:`no_change` says "following the advice leaves registers, stack and
occupancy as they are" (deltas 0). Findings outside device code (host code,
file-level SL001/SL002) get no impact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from shaderlint.diagnostics import Finding, Impact
from shaderlint.estimate.registers import Adjustment, KernelEstimate, cached_estimate, template_instances


# ---- adjustments rules can return ---------------------------------------------------------------
def promote_array(var, description: str = "") -> Adjustment:
    """The thread-private array ``var`` is indexed statically and kept in registers."""
    return Adjustment(promote=(var,), description=description or f"array '{getattr(var, 'name', '?')}' in registers")


def demote_array(var, description: str = "") -> Adjustment:
    """The array ``var`` moves to the stack (e.g. advice that makes its indexing dynamic)."""
    return Adjustment(demote=(var,), description=description or f"array '{getattr(var, 'name', '?')}' on the stack")


def cheap_division(operator_start: int, description: str = "", extra=()) -> Adjustment:
    """The division/modulo whose operator starts at ``operator_start`` (and those at ``extra``)
    becomes a shift or multiply (its emulation temporaries disappear)."""
    return Adjustment(cheap_divisions=frozenset({operator_start, *extra}),
                      description=description or "constant divisor")


def register_delta(registers: float, description: str = "") -> Adjustment:
    """Registers per thread change by ``registers`` (negative: fewer)."""
    return Adjustment(registers=registers, description=description)


def stack_delta(stack_bytes: int, description: str = "") -> Adjustment:
    return Adjustment(stack_bytes=stack_bytes, description=description)


def group_size(threads: int, description: str = "") -> Adjustment:
    """The kernel runs with ``threads`` threads per group."""
    return Adjustment(threads_per_group=threads, description=description)


def shared_delta(shared_bytes: int, description: str = "") -> Adjustment:
    """Threadgroup/shared memory per group changes by ``shared_bytes``."""
    return Adjustment(shared_bytes=shared_bytes, description=description)


def no_change(description: str = "") -> Adjustment:
    """Following the advice does not change registers, stack or occupancy."""
    return Adjustment(description=description or "no change")


def combine(*adjustments: Adjustment | None) -> Adjustment:
    """Several changes at once."""
    out = Adjustment()
    for a in adjustments:
        if a is None:
            continue
        out = Adjustment(
            promote=out.promote + a.promote, demote=out.demote + a.demote,
            registers=out.registers + a.registers, stack_bytes=out.stack_bytes + a.stack_bytes,
            threads_per_group=a.threads_per_group if a.threads_per_group is not None else out.threads_per_group,
            shared_bytes=out.shared_bytes + a.shared_bytes,
            cheap_divisions=out.cheap_divisions | a.cheap_divisions,
            description="; ".join(x for x in (out.description, a.description) if x),
        )
    return out


def declared_at(function, start: int):
    """The variable (parameter or local) whose declared name starts at byte ``start``."""
    for v in list(getattr(function, "params", ())) + list(getattr(function, "vars", ())):
        if v.node.start_byte == start:
            return v
    return None


# ---- the engine step -----------------------------------------------------------------------------
def kernels_for(model, start: int, kernel_name: str | None = None) -> list:
    """Entry points whose estimate a finding at byte ``start`` affects: the kernel it is in,
    or the kernels that call (and so inline) the helper it is in."""
    f = model.function_at(start)
    if f is None and kernel_name:
        f = model.function_by_name.get(kernel_name)
    if f is None or not f.is_device_code:
        return []
    if f.is_entry:
        return [f]
    return [k for k in model.kernels if k.is_device_code and _calls(model, k, f.name, set())]


def _calls(model, f, name: str, seen: set) -> bool:
    if f.body is None or id(f) in seen:
        return False
    seen.add(id(f))
    from shaderlint.model.dispatch import nodes_in
    for call in nodes_in(model, "call", f.body.start_byte, f.body.end_byte):
        callee = model.callee_name(call)
        if callee == name:
            return True
        g = model.function_by_name.get(callee)
        if g is not None and g is not f and _calls(model, g, name, seen):
            return True
    return False


def _bindings(model, f) -> Mapping[str, str] | None:
    insts = template_instances(model, f)
    return insts[0] if insts else None


_FIRST = object()


def impact_of(model, function, adjustment: Adjustment | None, target, facts: Mapping[str, str] | None = None,
              bindings=_FIRST) -> Impact:
    """Impact of ``adjustment`` on ``function`` (null fields when ``adjustment`` is None);
    template kernels are estimated for ``bindings`` (default: the first instance in the file)."""
    merged = {**(facts or {}), **function.facts}
    if bindings is _FIRST:
        bindings = _bindings(model, function)
    if adjustment is None:
        got = _occupancy_only(model, function, target, bindings, merged)
        if got is not None:
            return got
    before = cached_estimate(model, function, target, bindings=bindings, facts=merged)
    occ_before = _round(before.occupancy_value) if occupancy_decided(model, target, before) else None
    if adjustment is None or not before.complete:
        # a kernel too large to walk completely: a what-if over its first part would be a guess
        return Impact(target=target.name, occupancy_before=occ_before)
    after = cached_estimate(model, function, target, bindings=bindings, facts=merged, adjust=adjustment)
    impact = _delta(target.name, before, after)
    if occ_before is None or not occupancy_decided(model, target, after, before.registers_exact):
        impact = replace(impact, occupancy_before=None, occupancy_after=None)
    return impact


def _occupancy_only(model, function, target, bindings, facts) -> Impact | None:
    """The impact :func:`impact_of` gives without an adjustment, found without walking the kernel when
    the walk's figures cannot change it (None otherwise: estimate it). Such an impact shows the
    occupancy alone, where :func:`occupancy_decided` holds; that reads the estimate's register count
    only through the interval measured around it and its unseen calls. Where no interval was measured
    for the language and target (Metal, GLSL) and the walk finds no unseen calls (it counts them in
    CUDA only), the range is every count from 1 to the register cap: decided when the occupancy is the
    same at both ends, and then it is the estimate's own (the occupancy only falls as registers grow,
    and the estimate's count is in that range), all from the group size, threadgroup bytes and register
    cap the estimate would use (:func:`~shaderlint.estimate.registers.occupancy_shape`). The kernel is
    then estimated only for a finding whose advice changes it."""
    from shaderlint.estimate.registers import _occupancy, occupancy_shape
    from shaderlint.estimate.uncertainty import measured

    language = getattr(model, "language", "")
    if language == "cuda" or measured(language, target.name):
        return None
    threads, shared, cap = occupancy_shape(model, function, target, bindings=bindings, facts=facts)
    if cap < 1:
        return None
    threads = threads if threads is not None and threads >= 1 else None  # (None: the best case over sizes)
    ends = set()
    for regs in (1.0, float(cap)):
        o, _ = _occupancy(target, threads, regs, shared, [], function)
        if o is None:
            return Impact(target=target.name, occupancy_before=None)
        ends.add(round(o.occupancy, 4))
    return Impact(target=target.name, occupancy_before=ends.pop() if len(ends) == 1 else None)


def occupancy_decided(model, target, est: KernelEstimate, base: float | None = None) -> bool:
    """Whether the estimate's uncertainty leaves its occupancy as it is: the occupancy is the same at
    both ends of the register range the estimate may be off by — the interval measured for it
    against the compiler (:func:`shaderlint.estimate.uncertainty.register_interval`, of ``base``'s
    estimate shifted by the what-if's delta when ``base`` is given), from the estimate to the
    register cap for a floor (``~N+``) of unseen calls, from the low end of that interval (1 where none
    was measured) to the cap for a walk cut at the visit limit (the other floor,
    :attr:`KernelEstimate.lower_bound`), from 1 to the cap where no error was measured (Metal, GLSL,
    other targets). An impact's occupancy is shown only where this holds (before and after):
    otherwise the change could as well not happen."""
    from shaderlint.estimate.registers import _occupancy
    from shaderlint.estimate.uncertainty import register_interval

    if est.occupancy is None:
        return False
    cap = float(est.register_cap or target.max_registers_per_thread)
    ref = est.registers_exact if base is None else base
    shift = 0.0 if base is None else est.registers_exact - base
    if est.unseen_calls:  # a floor: ptxas counted at least the estimate for 89 % of such kernels
        low, high = est.registers_exact, cap
    else:
        iv = register_interval(getattr(model, "language", ""), target.name, int(-(-ref // 1)))
        low, high = (iv.low + shift, iv.high + shift) if iv is not None else (1.0, cap)
        if not est.complete:
            # a walk cut at the visit limit: the part not walked can only add registers, but how far
            # the estimate of the first part is from the compiler's count was never measured: from
            # the low end of the estimate's own error up to the cap
            high = cap
    threads = None if est.occupancy_is_bound else est.threads_per_group
    ends = set()
    for regs in (low, high):
        o, _ = _occupancy(target, threads, min(max(regs, 1.0), cap), est.shared_bytes, [], est.function)
        if o is None:
            return False
        ends.add(round(o.occupancy, 4))
    return len(ends) == 1


def _delta(target: str, before: KernelEstimate, after: KernelEstimate) -> Impact:
    return Impact(
        target=target,
        registers=after.registers - before.registers,
        stack_bytes=after.stack_bytes - before.stack_bytes,
        occupancy_before=_round(before.occupancy_value),
        occupancy_after=_round(after.occupancy_value),
    )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def attach_impacts(model, findings: Iterable[tuple[type, Finding]], target,
                   facts: Mapping[str, str] | None = None) -> list[tuple[type, Finding]]:
    """Fill in ``impact`` on every finding in kernel code that has none (never raises)."""
    out: list[tuple[type, Finding]] = []
    for rule_cls, fd in findings:
        if fd.impact is None:
            try:
                fd = _with_impact(model, rule_cls, fd, target, facts)
            except Exception:  # an estimate must never cost the user a diagnostic
                pass
        out.append((rule_cls, fd))
    return out


def _with_impact(model, rule_cls, fd: Finding, target, facts) -> Finding:
    from dataclasses import replace

    kernels = kernels_for(model, fd.start, fd.kernel)
    if not kernels:
        return fd
    f = kernels[0]
    hook = getattr(rule_cls, "what_if", None)
    owner = model.function_at(fd.start) or f
    adjustment = hook(model, owner, fd, target) if hook is not None else None
    return replace(fd, impact=impact_of(model, f, adjustment, target, facts))
