"""Theoretical occupancy, computed the way NVIDIA's CUDA Occupancy Calculator does.

Occupancy is resident SIMD groups (warps, SIMD-groups, waves) per core over
the most the core can hold. How many groups of ``T`` threads are resident is
the smallest of four limits:

1. **group-size** -- SIMD groups: ``W = ceil(T / simd_width)`` per group and
   ``floor(max_simd_groups_per_core / W)`` groups. Also 0 when ``T`` exceeds
   ``max_threads_per_group`` (the group cannot launch).
2. **groups-per-core** -- ``max_groups_per_core`` (on AMD only for groups of
   more than one wave: single-wave groups take no barrier slot).
3. **registers** -- a SIMD group is given ``R_w = ceil_to(u * simd_width,
   register_alloc_unit)`` registers, where ``u`` is the per-thread count in
   allocation units (``ceil(r * 32 / register_unit_bits)`` for ``r`` 32-bit
   registers). The register file holds ``floor_to(floor(F / R_w),
   simd_alloc_granularity)`` SIMD groups, ``F`` being the file size in
   allocation units, and so ``floor(that / W)`` groups. 0 when ``r`` exceeds
   ``max_registers_per_thread``. Skipped when the register count is unknown.
4. **threadgroup-memory** -- ``floor(shared_memory_per_core / ceil_to(S +
   shared_reserved_per_group, shared_alloc_unit))`` for ``S`` bytes per group.
   0 when ``S`` exceeds ``shared_memory_per_group``.

Resident SIMD groups are ``groups * W`` and occupancy is that over
``max_simd_groups_per_core``. Limits that bind equally are reported in the
order above: when the group shape already caps residency, freeing registers
or memory would not raise occupancy, so they are not "the" limiter.

Per vendor
----------
* **NVIDIA**: exactly the calculator's formulas and GPU data (registers per
  warp rounded up to 256, warps rounded down to a multiple of 4, shared memory
  rounded up to 128 bytes -- 256 on 7.x -- plus the 1 KB the runtime reserves
  per block on 8.0+). Registers are ptxas's ``Used N registers``.
* **Apple**: the register file is allocated in 16-bit halves. Callers pass
  registers in 32-bit-equivalent units, where a ``half``/``short``/``ushort``
  value costs 0.5, a ``float``/``int`` 1, a ``half4`` 2, a ``float4`` 4 (so
  ``registers_per_thread`` may be fractional, e.g. 20.5). Rounded up to whole
  halves, then to 8 halves per thread, then to 64 threads, this reproduces the
  thread-count table of Mesa's Apple GPU compiler. The per-core figures are
  estimates (see :mod:`shaderlint.estimate.targets`).
* **AMD RDNA2**: one CU of two SIMD32; VGPRs rounded up to the gfx10.3 granule
  (16 in wave32, 8 in wave64) and waves counted per SIMD, as LLVM's AMDGPU
  backend does. SGPRs are not modelled.

Nothing here raises for resource overuse: a group too large, too many
registers or too much shared memory gives occupancy 0 with the violated limit
as ``limiter``. Only nonsensical input (fewer than one thread, negative sizes)
raises ValueError.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from shaderlint.estimate.targets import Target

GROUP_SIZE = "group-size"
GROUPS_PER_CORE = "groups-per-core"
REGISTERS = "registers"
THREADGROUP_MEMORY = "threadgroup-memory"

#: Tie-break order for the limiter (see the module docstring).
LIMITER_ORDER: tuple[str, ...] = (GROUP_SIZE, GROUPS_PER_CORE, REGISTERS, THREADGROUP_MEMORY)


@dataclass(frozen=True)
class Occupancy:
    """Result of :func:`occupancy` for one kernel shape on one target."""

    target: str
    threads_per_group: int
    registers_per_thread: float | None
    shared_bytes_per_group: int
    #: SIMD groups (warps) one group occupies.
    simd_groups_per_group: int
    #: Groups resident per core.
    groups_per_core: int
    #: Resident SIMD groups per core (active warps).
    simd_groups_per_core: int
    #: The core's maximum resident SIMD groups.
    max_simd_groups: int
    #: simd_groups_per_core / max_simd_groups, 0..1.
    occupancy: float
    #: The binding limit: one of LIMITER_ORDER.
    limiter: str
    #: Groups per core allowed by each limit that applies.
    limits: dict[str, int] = field(hash=False)
    #: True when a figure this result depends on is an estimate.
    estimated: bool = False


def _ceil_to(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _floor_to(value: int, unit: int) -> int:
    return (value // unit) * unit


def register_units_per_thread(target: Target, registers_per_thread: float) -> int:
    """Registers per thread in the target's allocation units (16-bit on Apple)."""
    exact = Fraction(registers_per_thread) * 32 / target.register_unit_bits
    return math.ceil(exact)


def lane_use(threads_per_group: int, simd_width: int) -> tuple[int, int, float]:
    """SIMD groups a group needs, lanes left idle, and the fraction of lanes used.

    ``lane_use(169, 32) == (6, 23, 169 / 192)``.
    """
    if threads_per_group < 1 or simd_width < 1:
        raise ValueError("threads_per_group and simd_width must be positive")
    groups = -(-threads_per_group // simd_width)
    lanes = groups * simd_width
    return groups, lanes - threads_per_group, threads_per_group / lanes


def group_dims_violations(target: Target, dims: tuple[int, ...]) -> list[str]:
    """Human-readable reasons why a group of ``dims`` (x[, y[, z]]) cannot launch."""
    problems: list[str] = []
    padded = tuple(dims) + (1,) * (3 - len(dims))
    total = 1
    for axis, (size, limit) in enumerate(zip(padded, target.max_group_dims)):
        total *= size
        if size > limit:
            problems.append(f"{'xyz'[axis]} = {size} exceeds {limit} on {target.name}")
    if total > target.max_threads_per_group:
        problems.append(
            f"{total} threads exceed {target.max_threads_per_group} per group on {target.name}"
        )
    return problems


def _register_limit(target: Target, registers_per_thread: float, simd_per_group: int) -> int:
    units = register_units_per_thread(target, registers_per_thread)
    max_units = target.max_registers_per_thread * 32 // target.register_unit_bits
    if units > max_units:
        return 0
    per_simd = _ceil_to(max(units, 1) * target.simd_width, target.register_alloc_unit)
    file_units = target.registers_per_core * 32 // target.register_unit_bits
    simd_groups = _floor_to(file_units // per_simd, target.simd_alloc_granularity)
    return simd_groups // simd_per_group


def same_occupancy_registers(target: Target, registers_per_thread: float) -> float:
    """The most registers per thread that keep the SIMD groups per core the register file allows
    with ``registers_per_thread`` (registers alone; at most ``max_registers_per_thread``): sm_80,
    20 -> 32, 37 -> 40."""
    cap = target.max_simd_groups_per_core
    if registers_per_thread >= target.max_registers_per_thread:
        return float(registers_per_thread)
    groups = min(cap, _register_limit(target, registers_per_thread, 1))
    r = max(1, math.ceil(registers_per_thread))
    while r < target.max_registers_per_thread and min(cap, _register_limit(target, r + 1, 1)) >= groups:
        r += 1
    return float(max(r, registers_per_thread))


def max_registers_for_group(target: Target, threads_per_group: int) -> int:
    """The most 32-bit registers per thread with which one group of ``threads_per_group``
    threads still fits a core (0 when none does); at most ``max_registers_per_thread``.

    On sm_80 and sm_90: 255 up to 256 threads, 128 for 512, 168 for 384, 64 for 1024 --
    the limit ptxas derives from ``__launch_bounds__(N)``.
    """
    if threads_per_group < 1:
        raise ValueError("threads_per_group must be >= 1")
    simd_per_group = -(-threads_per_group // target.simd_width)
    lo, hi = 0, target.max_registers_per_thread
    while lo < hi:  # the register limit falls as registers grow: the last count that fits one group
        mid = (lo + hi + 1) // 2
        if _register_limit(target, mid, simd_per_group) >= 1:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _shared_limit(target: Target, shared_bytes: int) -> int | None:
    if shared_bytes > target.shared_memory_per_group:
        return 0
    allocated = _ceil_to(shared_bytes + target.shared_reserved_per_group, target.shared_alloc_unit)
    if allocated == 0 or target.shared_memory_per_core == 0:
        return None
    return target.shared_memory_per_core // allocated


def occupancy(
    target: Target,
    threads_per_group: int,
    registers_per_thread: float | None,
    shared_bytes_per_group: int = 0,
) -> Occupancy:
    """Theoretical occupancy of groups of ``threads_per_group`` threads.

    ``registers_per_thread`` is in 32-bit registers (fractions allowed for
    Apple's 16-bit halves); None leaves registers out. ``shared_bytes_per_group``
    is static plus dynamic shared/threadgroup memory, without the runtime's
    reservation (the target adds it).

    Memoized (a pure function of its arguments; the result is shared and must not be
    modified): an estimate with an unknown group size asks for every group size, and
    SL505 searches for the change that reaches the threshold.
    """
    key = (id(target), threads_per_group, registers_per_thread, registers_per_thread.__class__,
           shared_bytes_per_group, shared_bytes_per_group.__class__)
    got = _MEMO.get(key)
    if got is not None and got[0] is target:
        return got[1]
    result = _occupancy(target, threads_per_group, registers_per_thread, shared_bytes_per_group)
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = (target, result)  # the target is kept alive with its id
    return result


_MEMO: dict[tuple, tuple[Target, Occupancy]] = {}
_MEMO_MAX = 1 << 16


def _occupancy(target: Target, threads_per_group: int, registers_per_thread: float | None,
               shared_bytes_per_group: int) -> Occupancy:
    if threads_per_group < 1:
        raise ValueError(f"threads_per_group must be >= 1, got {threads_per_group}")
    if shared_bytes_per_group < 0:
        raise ValueError("shared_bytes_per_group must be >= 0")
    if registers_per_thread is not None and registers_per_thread < 0:
        raise ValueError("registers_per_thread must be >= 0")

    simd_per_group = -(-threads_per_group // target.simd_width)
    used = {"simd_width", "max_simd_groups_per_core", "max_groups_per_core", "max_threads_per_group"}

    limits: dict[str, int] = {}
    if threads_per_group > target.max_threads_per_group:
        limits[GROUP_SIZE] = 0
    else:
        limits[GROUP_SIZE] = target.max_simd_groups_per_core // simd_per_group
    if simd_per_group > 1 or target.group_limit_counts_single_simd:
        limits[GROUPS_PER_CORE] = target.max_groups_per_core
        used.add("group_limit_counts_single_simd")
    if registers_per_thread is not None:
        limits[REGISTERS] = _register_limit(target, registers_per_thread, simd_per_group)
        used |= {
            "registers_per_core",
            "register_alloc_unit",
            "simd_alloc_granularity",
            "max_registers_per_thread",
            "register_unit_bits",
        }
    shared = _shared_limit(target, shared_bytes_per_group)
    if shared is not None:
        limits[THREADGROUP_MEMORY] = shared
        used |= {
            "shared_memory_per_core",
            "shared_memory_per_group",
            "shared_alloc_unit",
            "shared_reserved_per_group",
        }

    groups = min(limits.values())
    limiter = next(name for name in LIMITER_ORDER if limits.get(name) == groups)
    resident = groups * simd_per_group
    return Occupancy(
        target=target.name,
        threads_per_group=threads_per_group,
        registers_per_thread=registers_per_thread,
        shared_bytes_per_group=shared_bytes_per_group,
        simd_groups_per_group=simd_per_group,
        groups_per_core=groups,
        simd_groups_per_core=resident,
        max_simd_groups=target.max_simd_groups_per_core,
        occupancy=resident / target.max_simd_groups_per_core,
        limiter=limiter,
        limits=limits,
        estimated=bool(used & target.estimated),
    )
