"""Launch-configuration advisor: the figures of a group shape, and the shape these rules suggest.

Pure functions over a target profile (:mod:`shaderlint.estimate.targets`) and the
occupancy calculator (:mod:`shaderlint.estimate.occupancy`); ``shaderlint report
--suggest-launch`` prints them per kernel. Nothing here raises: input that makes
no sense (a shape of zero threads, negative sizes, strings) gives ``None``.

What :func:`describe` gives for a shape ``(x, y, z)`` of ``T`` threads
------------------------------------------------------------------------
* per group: threads, SIMD groups ``ceil(T / W)`` for the target's SIMD width
  ``W``, idle lanes ``ceil(T / W) * W - T``, groups resident per core and the
  occupancy ceiling with its limiter -- :func:`~shaderlint.estimate.occupancy.occupancy`
  with the kernel's registers and threadgroup memory (13×13 = 169 threads on
  sm_75: 6 warps, 23 idle lanes, 5 groups per SM, 30 of 32 warps = 93.75 %);
* with an iteration space ``(nx, ny, nz)`` in threads (the work): groups per
  dimension ``ceil(n / b)`` (1920×1080 in 16×16 groups: 120×68), threads
  launched ``prod(ceil(n / b) * b)`` against the threads needed ``prod(n)``, the
  edge waste ``(launched - needed) / launched``, and the lanes the launch
  occupies, ``groups * ceil(T / W) * W``, of which ``needed`` do work.

Group size, SIMD groups, idle lanes, groups and threads are exact. The
occupancy is as exact as the registers it is given: the report passes ptxas's
or RADV's count when ``--compiler`` measured it and the register model's
estimate otherwise, and Apple's per-core figures are estimates (the target says
which).

The rules of :func:`suggest`
----------------------------
They come from pystencils' ``DynamicBlockSizeLaunchConfiguration`` (pystencils
2.0 documentation, ``pystencils.codegen.gpu_indexing``): its *trim* rule (a
block dimension is never larger than the iteration space in that dimension),
its *fit* rule (block sizes fitted to multiples of the warp size, growing a
dimension that is too small for a warp), and ``grid = ceil(work / block)``;
from Apple's "Calculating threadgroup and grid sizes" (the threadgroup width a
multiple of ``threadExecutionWidth``, the total within
``maxTotalThreadsPerThreadgroup``); and from the "GL_NV_shader_sm_builtins"
write-up the SPEC cites (workgroup sizes a multiple of the subgroup size). The
search and its order below are shaderlint's own.

Candidates -- every shape ``(bx, by, bz)`` such that:

1. *Shape kept.* It has the current shape's dimensionality (a kernel written
   for a 1-D group indexes with x only; a dimension the group uses stays larger
   than 1 unless trimmed to an extent of 1); with no current shape, or only a
   declared bound on its threads, the iteration space's.
2. *Fit x to the SIMD width* (coalescing: a SIMD group then reads whole rows):
   ``bx`` is a multiple of ``W`` no wider than ``nx`` rounded up to ``W``; when
   ``nx < W`` it may also be ``nx`` itself or a power of two below ``W``.
3. *Trim.* ``by`` and ``bz`` are powers of two or the extent itself, never
   larger than the iteration space (``ny``, ``nz``) when it is known.
4. *Limits.* Within the target's per-dimension and total group limits, and
   within ``max_threads`` when the kernel declares an upper bound
   (``__launch_bounds__``, ``[[max_total_threads_per_threadgroup]]``).
5. *Whole SIMD groups.* ``T`` is a multiple of ``W``, unless one group covers
   the whole iteration space (then it may be exactly the work).
6. The current shape, whatever the rules above say, when it can launch: a
   current shape no other beats is then said to be the best rather than
   replaced by an equal one.

Order (the first difference decides):

a. *Useful lanes times occupancy, higher first*, to 0.1 %: the share of
   launched lanes that do work (``needed / lanes`` with an iteration space,
   ``T / (ceil(T / W) * W)`` without) times the occupancy ceiling. Edge waste
   and idle lanes cost what they cost in issued lanes; occupancy in latency
   hiding; a tiny iteration space is not split into more groups for an
   occupancy that one group could never reach.
b. ``bx`` a multiple of ``W`` (the fit rule), where the iteration space allows
   it (``nx >= W``; an unknown iteration space is assumed to).
c. The current shape (no churn for nothing).
d. Total threads closest to the current shape's (in powers of two), or to
   256 without one (the CUDA C++ Best Practices Guide, "Thread and Block
   Heuristics": 128 to 256 threads per block is a good initial range).
e. Proportions closest to the current shape's (``log2(bx / by)``), or the
   squarest with no current shape (or only a bound).
f. Smaller ``bx``, then ``by``, then ``bz``.
g. *Worth the change.* The pick replaces the current shape only when it gains
   at least 5 points in (a) (100 % ideal): smaller steps are within the
   register estimate's noise and not worth a change of the host code. Short of
   that, the one change still suggested is the fit rule's -- the best shape by
   (b)-(f) whose x is a multiple of ``W``, not worse by (a) -- and not for a
   kernel with threadgroup memory, which usually tiles it to its shape.

What is not modelled: the number of cores (a launch of fewer groups than cores
leaves some idle), grid-dimension limits (CUDA's 65535 in y and z), and what the
kernel's code assumes about its shape -- shared-memory tiles sized to the
group, ``gl_WorkGroupSize`` in index arithmetic. Threadgroup memory is taken as
written for every shape. The suggestion is advice to check, not a fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from shaderlint.estimate.occupancy import GROUP_SIZE, group_dims_violations, lane_use, occupancy
from shaderlint.estimate.targets import Target

Dims = tuple[int, int, int]

#: The total thread count preferred when there is no current shape (rule d).
DEFAULT_THREADS = 256
#: Rule a compares its figure to this resolution.
_RESOLUTION = 1000
#: Rule g: the least gain in rule a's figure (in its units: 50 = 5 points) that replaces the current shape.
MARGIN = 50
#: Above this, a size is treated as nonsense (2^40 threads per dimension).
_HUGE = 1 << 40


@dataclass(frozen=True)
class LaunchFigures:
    """The figures of one group shape on one target (see the module docstring)."""

    shape: Dims
    target: str
    threads: int
    simd_width: int
    simd_groups: int
    #: Lanes of the group's SIMD groups no thread occupies.
    idle_lanes: int
    #: False when the shape exceeds the target's group limits (``problems`` says how).
    fits: bool
    groups_per_core: int
    occupancy: float
    limiter: str | None
    #: True when the occupancy rests on the target's estimated figures (Apple); estimated registers are the caller's to say.
    occupancy_estimated: bool
    iteration_space: Dims | None = None
    groups: Dims | None = None
    threads_launched: int | None = None
    threads_needed: int | None = None
    #: (launched - needed) / launched.
    edge_waste: float | None = None
    #: Lanes the whole launch occupies (groups * SIMD groups * width).
    lanes_launched: int | None = None
    problems: tuple[str, ...] = ()

    @property
    def total_groups(self) -> int | None:
        return None if self.groups is None else self.groups[0] * self.groups[1] * self.groups[2]

    @property
    def lane_efficiency(self) -> float:
        """Share of the occupied lanes that do work (the whole launch with an iteration space)."""
        if self.lanes_launched and self.threads_needed is not None:
            return self.threads_needed / self.lanes_launched
        return self.threads / (self.simd_groups * self.simd_width)

    @property
    def score(self) -> int:
        """Rule a: useful lanes times occupancy, to 0.1 %."""
        return round(self.lane_efficiency * self.occupancy * _RESOLUTION)

    def to_json(self) -> dict:
        return {
            "shape": list(self.shape), "threads": self.threads, "simd_groups": self.simd_groups,
            "idle_lanes": self.idle_lanes, "fits": self.fits, "groups_per_core": self.groups_per_core,
            "occupancy": round(self.occupancy, 4), "limiter": self.limiter,
            "groups": list(self.groups) if self.groups is not None else None,
            "threads_launched": self.threads_launched, "threads_needed": self.threads_needed,
            "edge_waste": None if self.edge_waste is None else round(self.edge_waste, 6),
        }


@dataclass(frozen=True)
class Suggestion:
    """The shape :func:`suggest` picks, and how it compares with the current one."""

    figures: LaunchFigures
    #: True when the current shape is the pick: no shape is better by the rules.
    same_as_current: bool
    #: Why the pick beats the current shape (empty when it is the current shape or there is none).
    reasons: tuple[str, ...] = field(default=())


# ---- input -------------------------------------------------------------------------------------------


def as_dims(value: object) -> Dims | None:
    """``(x, y, z)`` from an int or a sequence of 1-3 positive ints; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        return None
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _HUGE:
            return None
        out.append(v)
    out += [1] * (3 - len(out))
    return (out[0], out[1], out[2])


def dispatched_space(grid: object, group: object, dispatch: str | None) -> Dims | None:
    """The iteration space a dispatch covers, in threads: the grid itself for Metal's
    ``dispatchThreads`` (``dispatch == "threads"``: it counts threads), the grid of groups times
    the group for whole-group dispatches (``"threadgroups"``: CUDA, Vulkan, Metal
    ``dispatchThreadgroups`` -- the threads launched, which the work may fall short of); None when
    a size is unknown or the mode is. For host launch records (:class:`shaderlint.host.HostLaunch`:
    ``grid``, ``group``, ``dispatch``)."""
    g = as_dims(grid)
    if g is None:
        return None
    if dispatch == "threads":
        return g
    b = as_dims(group)
    if dispatch != "threadgroups" or b is None:
        return None
    return (g[0] * b[0], g[1] * b[1], g[2] * b[2])


def _registers(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value


def _shared(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


def _rank(d: Dims) -> int:
    return 3 if d[2] > 1 else 2 if d[1] > 1 else 1


# ---- figures -----------------------------------------------------------------------------------------


def describe(shape: object, iteration_space: object, target: Target, registers: object = None,
             shared_bytes: object = 0) -> LaunchFigures | None:
    """The figures of groups of ``shape`` (see the module docstring); None for a shape that makes no sense.

    ``iteration_space`` is the work in threads (``(1920, 1080)``) or None; ``registers`` are
    32-bit registers per thread (fractions allowed on Apple) or None to leave them out;
    ``shared_bytes`` is threadgroup/shared memory per group.
    """
    dims = as_dims(shape)
    if dims is None or target is None:
        return None
    try:
        return _describe(dims, as_dims(iteration_space), target, _registers(registers), _shared(shared_bytes))
    except (ValueError, ArithmeticError, TypeError):  # never raises: nonsense in, None out
        return None


def _describe(dims: Dims, space: Dims | None, target: Target, registers: float | None,
              shared: int) -> LaunchFigures:
    w = target.simd_width
    threads = dims[0] * dims[1] * dims[2]
    simd, idle, _ = lane_use(threads, w)
    problems = tuple(group_dims_violations(target, dims))
    if problems:
        groups_per_core, occ, limiter, estimated = 0, 0.0, GROUP_SIZE, False
    else:
        o = occupancy(target, threads, registers, shared)
        groups_per_core, occ, limiter, estimated = o.groups_per_core, o.occupancy, o.limiter, o.estimated
    extra: dict = {}
    if space is not None:
        groups = (-(-space[0] // dims[0]), -(-space[1] // dims[1]), -(-space[2] // dims[2]))
        launched = math.prod(g * b for g, b in zip(groups, dims))
        needed = math.prod(space)
        extra = dict(iteration_space=space, groups=groups, threads_launched=launched, threads_needed=needed,
                     edge_waste=(launched - needed) / launched, lanes_launched=math.prod(groups) * simd * w)
    return LaunchFigures(
        shape=dims, target=target.name, threads=threads, simd_width=w, simd_groups=simd,
        idle_lanes=idle, fits=not problems, groups_per_core=groups_per_core, occupancy=occ,
        limiter=limiter, occupancy_estimated=estimated, problems=problems,
        **extra,
    )


# ---- suggestion --------------------------------------------------------------------------------------


def suggest(iteration_space: object, target: Target, registers: object = None, shared_bytes: object = 0,
            current: object = None, *, max_threads: int | None = None,
            uses_threadgroup_memory: bool | None = None, current_is_upper_bound: bool = False) -> Suggestion | None:
    """The shape the rules of the module docstring pick, or None when there is nothing to go on
    (neither a current shape nor an iteration space) or no shape can launch (registers or
    threadgroup memory beyond what one group may have).

    ``max_threads`` is a declared upper bound on the group's threads; ``uses_threadgroup_memory``
    (default: ``shared_bytes > 0``) says the kernel has threadgroup memory, sized at dispatch or not
    (rule g). ``current_is_upper_bound`` says ``current`` is a declared bound
    (``__launch_bounds__(256)`` is ``(256, 1, 1)``), not a shape: it caps the threads, and the
    iteration space, when known, decides the dimensionality."""
    if target is None:
        return None
    shared = _shared(shared_bytes)
    if uses_threadgroup_memory is None:
        uses_threadgroup_memory = shared > 0
    cur = as_dims(current)
    cap = max_threads if isinstance(max_threads, int) and not isinstance(max_threads, bool) and max_threads >= 1 \
        else None
    if current_is_upper_bound and cur is not None:
        cap = min(cap or math.prod(cur), math.prod(cur))
    try:
        return _suggest(as_dims(iteration_space), target, _registers(registers), shared, cur, cap,
                        bool(uses_threadgroup_memory), bool(current_is_upper_bound))
    except (ValueError, ArithmeticError, TypeError):
        return None


def _suggest(space: Dims | None, target: Target, registers: float | None, shared: int, current: Dims | None,
             max_threads: int | None, uses_threadgroup_memory: bool, bound: bool = False) -> Suggestion | None:
    if space is None and current is None:
        return None
    w = target.simd_width
    limit = target.max_threads_per_group if max_threads is None else min(max_threads, target.max_threads_per_group)
    rank = _rank(current) if current is not None else _rank(space)  # type: ignore[arg-type]
    if bound and space is not None:
        rank = max(rank, _rank(space))  # a bound says how many threads, not in which shape
    dmax = target.max_group_dims

    def axis(i: int) -> list[int]:
        if i >= rank:
            return [1]
        cap = min(dmax[i], limit)
        n = space[i] if space is not None else None
        out: set[int] = set()
        if i == 0:
            top = cap if n is None else min(cap, -(-n // w) * w)
            out.update(range(w, top + 1, w))  # rule 2: multiples of the SIMD width
            if n is not None and n < w:
                out.update(p for p in _powers(w - 1) if p <= n)
                out.add(n)
        else:
            top = cap if n is None else min(cap, n)  # rule 3: trimmed to the iteration space
            out.update(p for p in _powers(top))
            if n is not None and n <= cap:
                out.add(n)
            if current is not None and current[i] > 1 and len(out) > 1:
                out.discard(1)  # rule 1: a dimension the kernel's group uses stays in use
        return sorted(out)

    xs, ys, zs = axis(0), axis(1), axis(2)
    whole = space is not None and all(space[i] <= dmax[i] for i in range(3)) and math.prod(space) <= limit
    cands: list[LaunchFigures] = []
    for bx in xs:
        for by in ys:
            if bx * by > limit:
                break
            for bz in zs:
                t = bx * by * bz
                if t > limit:
                    break
                covers = whole and (bx, by, bz) == space  # rule 5's exception: one group, exactly the work
                if t % w and not covers:
                    continue
                fig = _describe((bx, by, bz), space, target, registers, shared)
                if fig.occupancy > 0:
                    cands.append(fig)
    now, now_ok = None, False
    if current is not None:
        now = _describe(current, space, target, registers, shared)  # rule 6
        now_ok = now.fits and now.occupancy > 0 and now.threads <= limit
        if now_ok and all(c.shape != current for c in cands):
            cands.append(now)
    if not cands:
        return None
    x_fits = space is None or space[0] >= w

    ref_threads = math.prod(current) if current is not None else DEFAULT_THREADS
    ref_aspect = math.log2(current[0] / current[1]) if current is not None and not bound else 0.0

    def key(f: LaunchFigures) -> tuple:  # rules a-f
        bx, by, bz = f.shape
        return (-f.score,
                0 if (not x_fits or bx % w == 0) else 1,
                0 if f.shape == current else 1,
                round(abs(math.log2(f.threads / ref_threads)), 9),
                round(abs(math.log2(bx / by) - ref_aspect), 9),
                bx, by, bz)

    best = min(cands, key=key)
    if current is None or now is None:
        return Suggestion(best, False)
    if best.shape != current and now_ok and best.score - now.score < MARGIN:  # rule g
        pool = []
        if x_fits and current[0] % w and not uses_threadgroup_memory:
            pool = [c for c in cands if c.score >= now.score and c.shape[0] % w == 0]
        best = min(pool, key=lambda f: key(f)[1:]) if pool else now
    if best.shape == current:
        return Suggestion(best, True)
    return Suggestion(best, False, tuple(_reasons(now, best, x_fits)))


def _powers(top: int) -> Iterable[int]:
    p = 1
    while p <= top:
        yield p
        p *= 2


def _reasons(now: LaunchFigures, best: LaunchFigures, x_fits: bool) -> list[str]:
    """What changes from the current shape to the pick, gains and costs alike."""
    out = []
    w = best.simd_width
    if not now.fits:
        out.append(f"the current shape cannot launch: {'; '.join(now.problems)}")
    elif now.occupancy == 0:
        out.append(f"no group of the current shape fits a core ({now.limiter})")
    if round(now.lane_efficiency, 4) != round(best.lane_efficiency, 4):
        out.append(f"lanes doing work {now.lane_efficiency * 100:.2f} % -> {best.lane_efficiency * 100:.2f} %")
    if now.idle_lanes != best.idle_lanes:
        out.append(f"idle lanes per group {now.idle_lanes} -> {best.idle_lanes}")
    if now.threads_launched is not None and best.threads_launched != now.threads_launched:
        out.append(f"threads launched {now.threads_launched} -> {best.threads_launched} for {best.threads_needed}")
    if now.occupancy != best.occupancy:
        out.append(f"occupancy ceiling {now.occupancy * 100:.2f} % -> {best.occupancy * 100:.2f} %")
    if x_fits and now.shape[0] % w and best.shape[0] % w == 0:
        out.append(f"x a multiple of the SIMD width {w}: each SIMD group spans {w} consecutive x (coalesced)")
    if not out:
        out.append("the same figures, nearer the rules' preferences")
    return out
