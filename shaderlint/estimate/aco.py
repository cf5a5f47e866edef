"""What Mesa's ACO compiler (RADV's shader compiler for AMD GPUs) does with a shader's register
demand, for the estimate on AMD targets.

The register walk (:mod:`shaderlint.estimate.liveness`) counts the values live at once. ACO
reports more than that: its pre-RA scheduler moves memory loads up (latency hiding, clauses) and
lets the register demand grow while the shader keeps a wave target it chooses from the demand
before scheduling (RADV's pipeline statistics show both: ``Pre-Sched VGPRs`` and ``VGPRs``). The
facts below are ACO's as of Mesa 22.3 (``aco_scheduler.cpp``: ``schedule_program``; ``aco_ir.cpp``:
``get_addr_vgpr_from_waves``), written down from its documented behaviour, not its code:

* the waves a shader reaches with ``d`` VGPRs: the VGPRs one SIMD holds for the wave size
  divided by ``d`` rounded up to the allocation granule, at most the SIMD's wave slots;
* the scheduler's wave target: the shader's own when that is at most 5 × ``f`` (``f`` = the
  SIMD's VGPRs for the wave size / 256: 1 on GCN, 2 on RDNA2 wave64, 4 in wave32), else
  5 × ``f`` from a demand of 29 VGPRs, 6 × ``f`` from 25, 7 × ``f`` below;
* the scheduler's register budget: the VGPRs one wave may address at that target (the SIMD's
  VGPRs / target, rounded down to the granule), less 2; the target is first rounded down to a
  multiple of ``f`` (ACO divides it by ``f`` and multiplies back), so a shader reaching 16 waves on
  RDNA3 wave32 (``f`` 6) may grow to 118 VGPRs, and one reaching 5 on RDNA2 wave64 to 126
  (measured with RADV on the null device: a chain of independent loads saturates at 120 on gfx1100
  wave32, 64 on navi21 wave32, 32 on navi21 wave64, 36 on vega10).

So a shader with a small demand may end up with up to ~30 VGPRs on RDNA2 wave64 when it has
loads to move (``dequant_f32.comp`` of llama.cpp: 5 before scheduling, 24 allocated) and one near
the limit gets nothing more.
"""

from __future__ import annotations

from shaderlint.estimate.targets import Target


def vgpr_granule(target: Target) -> int:
    """VGPRs are allocated in multiples of this (RDNA2 wave64: 8; gfx9: 4)."""
    return max(1, target.register_alloc_unit // target.simd_width)


def simd_vgprs(target: Target) -> int:
    """VGPRs of one SIMD for the target's wave size (RDNA2: 1024 in wave32, 512 in wave64; gfx9: 256)."""
    return target.registers_per_core // max(1, target.simd_alloc_granularity) // target.simd_width


def waves_with(target: Target, vgprs: float) -> int:
    """Waves per SIMD a shader with ``vgprs`` reaches (registers only)."""
    g = vgpr_granule(target)
    alloc = max(g, -(-int(-(-vgprs // 1)) // g) * g)
    slots = target.max_simd_groups_per_core // max(1, target.simd_alloc_granularity)
    return max(1, min(slots, simd_vgprs(target) // alloc))


def scheduler_budget(target: Target, demand: float) -> int:
    """VGPRs ACO's scheduler may let the demand grow to, for a demand of ``demand`` before scheduling."""
    total = simd_vgprs(target)
    f = max(1, total // 256)
    waves = waves_with(target, demand)
    if waves <= 5 * f:
        goal = waves
    elif demand >= 29:
        goal = 5 * f
    elif demand >= 25:
        goal = 6 * f
    else:
        goal = 7 * f
    goal = max(1, min(goal, waves))
    goal = max(1, goal // f) * f  # ACO counts the target in waves of 256 VGPRs (rounded down), then scales back
    g = vgpr_granule(target)
    return max(int(-(-demand // 1)), (total // goal) // g * g - 2)


def scheduled_vgprs(target: Target, before: float, hoisted: float) -> float:
    """The demand after scheduling: the walk's count with the loads of later loop iterations moved up
    (``hoisted``), within the scheduler's budget for the demand without them (``before``)."""
    return max(before, min(hoisted, float(scheduler_budget(target, before))))
