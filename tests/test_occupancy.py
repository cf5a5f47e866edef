"""Occupancy model: numbers derived by hand from NVIDIA's calculator formulas,
Mesa's Apple GPU table and LLVM's AMDGPU occupancy rules."""

from __future__ import annotations

import pytest

from shaderlint.estimate.occupancy import (
    GROUP_SIZE,
    GROUPS_PER_CORE,
    REGISTERS,
    THREADGROUP_MEMORY,
    group_dims_violations,
    lane_use,
    occupancy,
)
from shaderlint.estimate.targets import get_target


# --- the SPEC seed ---------------------------------------------------------


@pytest.mark.parametrize("target", ["sm_75", "generic-32"])
def test_spec_seed_13x13_on_turing(target: str) -> None:
    # 169 threads -> ceil(169/32) = 6 warps; Turing holds 32 warps per SM, so
    # floor(32/6) = 5 blocks and 30 warps: 30/32 = 0.9375.
    # 16 registers: 16*32 = 512 per warp -> 65536/512 = 128 warps, not binding.
    occ = occupancy(get_target(target), 169, 16)
    assert occ.simd_groups_per_group == 6
    assert occ.groups_per_core == 5
    assert occ.simd_groups_per_core == 30
    assert occ.max_simd_groups == 32
    assert occ.occupancy == 0.9375
    assert occ.limiter == GROUP_SIZE
    assert occ.limits[REGISTERS] == 21  # floor(floor(128/4)*4 / 6)


def test_lane_use() -> None:
    assert lane_use(169, 32) == (6, 23, 169 / 192)
    assert lane_use(256, 32) == (8, 0, 1.0)
    assert lane_use(1, 64) == (1, 63, 1 / 64)
    with pytest.raises(ValueError):
        lane_use(0, 32)


# --- sm_80, 256 threads, by hand from the calculator -----------------------
# 256 threads = 8 warps per block. sm_80: 64 warps, 32 blocks, 65536 registers
# per SM, registers per warp rounded up to 256, warps limited by registers
# rounded down to a multiple of 4 (warp allocation granularity).
#   32 regs: 32*32 = 1024/warp -> 65536/1024 = 64 warps -> 64/8 = 8 blocks
#            = the warp limit 64/8 = 8 -> 64 warps, 100 %
#   64 regs: 2048/warp -> 32 warps -> 4 blocks -> 32 warps, 50 %
#  128 regs: 4096/warp -> 16 warps -> 2 blocks -> 16 warps, 25 %
#  255 regs: 8160 -> rounded to 8192/warp -> 8 warps -> 1 block -> 12.5 %


@pytest.mark.parametrize(
    ("registers", "blocks", "warps", "fraction", "limiter"),
    [
        (32, 8, 64, 1.0, GROUP_SIZE),  # tie with registers: the shape binds first
        (64, 4, 32, 0.5, REGISTERS),
        (128, 2, 16, 0.25, REGISTERS),
        (255, 1, 8, 0.125, REGISTERS),
    ],
)
def test_sm80_256_threads(
    registers: int, blocks: int, warps: int, fraction: float, limiter: str
) -> None:
    occ = occupancy(get_target("sm_80"), 256, registers)
    assert (occ.groups_per_core, occ.simd_groups_per_core) == (blocks, warps)
    assert occ.occupancy == fraction
    assert occ.limiter == limiter
    assert occ.limits[GROUP_SIZE] == 8
    assert occ.limits[GROUPS_PER_CORE] == 32
    assert occ.limits[REGISTERS] == blocks
    assert not occ.estimated


def test_sm80_warp_allocation_granularity() -> None:
    # 192 threads = 6 warps, 48 registers: 48*32 = 1536 per warp;
    # 65536/1536 = 42.7 -> 42 warps -> rounded down to 40 (granularity 4,
    # i.e. 10 warps in each of the 4 SM sub-partitions) -> floor(40/6) = 6
    # blocks = 36 warps = 0.5625. Without the rounding it would be 7 blocks.
    occ = occupancy(get_target("sm_80"), 192, 48)
    assert occ.groups_per_core == 6
    assert occ.simd_groups_per_core == 36
    assert occ.occupancy == 36 / 64


def test_sm80_register_rounding_to_8() -> None:
    # 33 registers -> 1056 -> rounded to 1280 per warp (= 40 registers):
    # 65536/1280 = 51 -> 48 warps -> 6 blocks of 8 warps, same as 40 registers.
    sm80 = get_target("sm_80")
    for registers in (33, 40):
        occ = occupancy(sm80, 256, registers)
        assert (occ.groups_per_core, occ.occupancy) == (6, 0.75)
    assert occupancy(sm80, 256, 41).groups_per_core == 5  # 1536/warp -> 40 warps


# --- shared memory ----------------------------------------------------------


def test_shared_memory_limited_sm80() -> None:
    # 48 KB per block + 1 KB reserved = 50176 bytes (already a multiple of 128)
    # 167936 (164 KB) / 50176 = 3.35 -> 3 blocks -> 24 warps -> 0.375.
    occ = occupancy(get_target("sm_80"), 256, 32, 48 * 1024)
    assert occ.groups_per_core == 3
    assert occ.simd_groups_per_core == 24
    assert occ.occupancy == 0.375
    assert occ.limiter == THREADGROUP_MEMORY
    assert occ.limits[THREADGROUP_MEMORY] == 3


def test_reserved_shared_memory_counts_on_sm80() -> None:
    # 41 KB = 41984 bytes: alone 167936/41984 = 4 blocks, but with the 1 KB
    # system reservation 167936/43008 = 3.9 -> 3 blocks.
    assert occupancy(get_target("sm_80"), 128, None, 41984).limits[THREADGROUP_MEMORY] == 3
    # Turing reserves nothing but rounds to 256 bytes: 16384 -> 4 blocks,
    # 16385 -> 16640 -> 65536/16640 = 3.9 -> 3 blocks.
    assert occupancy(get_target("sm_75"), 128, None, 16384).limits[THREADGROUP_MEMORY] == 4
    assert occupancy(get_target("sm_75"), 128, None, 16385).limits[THREADGROUP_MEMORY] == 3


def test_largest_block_shared_memory_sm80_sm90() -> None:
    # 163 KB + 1 KB reserved fills the 164 KB carveout exactly: one block.
    assert occupancy(get_target("sm_80"), 1024, 32, 163 * 1024).groups_per_core == 1
    assert occupancy(get_target("sm_90"), 1024, 32, 227 * 1024).groups_per_core == 1


# --- over the limits: occupancy 0, never an exception -----------------------


@pytest.mark.parametrize(
    ("threads", "registers", "shared", "limiter"),
    [
        (1025, 32, 0, GROUP_SIZE),
        (2048, None, 0, GROUP_SIZE),
        (256, 256, 0, REGISTERS),  # sm_80 allows 255
        (256, 32, 163 * 1024 + 1, THREADGROUP_MEMORY),
        # 1024 threads x 255 registers needs 32 x 8192 registers > 65536.
        (1024, 255, 0, REGISTERS),
    ],
)
def test_over_limit_sm80(threads: int, registers: int | None, shared: int, limiter: str) -> None:
    occ = occupancy(get_target("sm_80"), threads, registers, shared)
    assert occ.groups_per_core == 0
    assert occ.simd_groups_per_core == 0
    assert occ.occupancy == 0.0
    assert occ.limiter == limiter


def test_invalid_input_raises() -> None:
    with pytest.raises(ValueError):
        occupancy(get_target("sm_80"), 0, 32)
    with pytest.raises(ValueError):
        occupancy(get_target("sm_80"), 32, 32, -1)


def test_unknown_registers_are_ignored() -> None:
    occ = occupancy(get_target("sm_80"), 1024, None)
    assert REGISTERS not in occ.limits
    assert occ.groups_per_core == 2  # 64 warps / 32 per block
    assert occ.occupancy == 1.0


# --- blocks-per-SM limit ------------------------------------------------------


@pytest.mark.parametrize(("target", "blocks", "fraction"), [
    ("sm_75", 16, 16 / 32),
    ("sm_80", 32, 32 / 64),
    ("sm_86", 16, 16 / 48),
    ("sm_89", 24, 24 / 48),
    ("sm_90", 32, 32 / 64),
])
def test_one_warp_blocks_hit_blocks_per_sm(target: str, blocks: int, fraction: float) -> None:
    occ = occupancy(get_target(target), 32, 16)
    assert occ.groups_per_core == blocks
    assert occ.occupancy == fraction
    assert occ.limiter == GROUPS_PER_CORE


# --- Apple: 16-bit register halves ------------------------------------------

# Mesa src/asahi/compiler/agx_occupancy.c: half-registers -> threads per core.
MESA_AGX_TABLE = [
    (104, 1024), (112, 896), (128, 832), (136, 768), (144, 704),
    (160, 640), (184, 576), (208, 512), (232, 448), (256, 384),
]


@pytest.mark.parametrize(("halves", "threads"), MESA_AGX_TABLE)
def test_apple_register_steps_match_mesa(halves: int, threads: int) -> None:
    # Registers are passed in 32-bit units: N halves = N/2 registers.
    # 208 KB = 106496 halves; round halves up to 8, threads down to 64:
    # e.g. 112 halves -> 106496/112 = 950 -> 896 threads = 28 SIMD-groups.
    occ = occupancy(get_target("apple-m1"), 32, halves / 2)
    assert occ.limits[REGISTERS] * 32 == threads
    # One half more than the previous row already drops to this row.
    previous = {h: t for h, t in MESA_AGX_TABLE}
    lower = [h for h, _ in MESA_AGX_TABLE if h < halves]
    if lower:
        occ_next = occupancy(get_target("apple-m1"), 32, (lower[-1] + 1) / 2)
        assert occ_next.limits[REGISTERS] * 32 == threads
        assert previous[lower[-1]] > threads


def test_apple_half_precision_counts_half() -> None:
    m1 = get_target("apple-m1")
    # 52 float registers = 104 halves -> 1024 threads (32 SIMD-groups);
    # one extra half value (52.5) -> 105 halves -> 896 threads.
    assert occupancy(m1, 1024, 52).groups_per_core == 1
    assert occupancy(m1, 32, 52.5).limits[REGISTERS] == 28
    # 40 float registers as 80 halves... or the same values in half: 20.
    assert occupancy(m1, 64, 20).limits[REGISTERS] > occupancy(m1, 64, 40).limits[REGISTERS]


def test_apple_large_group_with_many_registers_cannot_launch() -> None:
    # 64 registers = 128 halves -> 832 threads per core < 1024 threads in the
    # group (Metal would report maxTotalThreadsPerThreadgroup 832).
    occ = occupancy(get_target("apple-m1"), 1024, 64)
    assert occ.groups_per_core == 0
    assert occ.limiter == REGISTERS
    assert occ.estimated


def test_apple_threadgroup_memory() -> None:
    # 32 KB threadgroups: 60 KB per core (estimated) holds one.
    occ = occupancy(get_target("apple-m1"), 256, 16, 32 * 1024)
    assert occ.groups_per_core == 1
    assert occ.limiter == THREADGROUP_MEMORY
    # Over the 32 KB per-group limit of the feature set tables.
    assert occupancy(get_target("apple-m1"), 256, 16, 32 * 1024 + 16).groups_per_core == 0
    # A8 allows 512 threads and 16352 bytes per threadgroup.
    assert occupancy(get_target("apple-a8"), 513, None).limiter == GROUP_SIZE
    assert occupancy(get_target("apple-a8"), 512, None, 16353).limiter == THREADGROUP_MEMORY


# --- AMD RDNA2 ---------------------------------------------------------------


@pytest.mark.parametrize(("vgprs", "waves_per_simd"), [(24, 16), (64, 16), (72, 12), (96, 10), (128, 8), (256, 4)])
def test_rdna2_wave32_vgpr_occupancy(vgprs: int, waves_per_simd: int) -> None:
    # LLVM gfx10.3 wave32: min(16, floor(1024 / ceil_to(vgprs, 16))) waves per
    # SIMD, 2 SIMDs per CU. 72 -> 80 -> 12.8 -> 12; 96 -> 10.7 -> 10.
    occ = occupancy(get_target("rdna2"), 32, vgprs)  # one wave per group
    assert occ.simd_groups_per_core == 2 * waves_per_simd
    assert occ.occupancy == waves_per_simd / 16


@pytest.mark.parametrize(("vgprs", "waves_per_simd"), [(32, 16), (40, 12), (96, 5), (128, 4)])
def test_rdna2_wave64_vgpr_occupancy(vgprs: int, waves_per_simd: int) -> None:
    # wave64: 512 VGPRs per SIMD, granule 8. 40 -> 512/40 = 12.8 -> 12.
    occ = occupancy(get_target("rdna2-wave64"), 64, vgprs)
    assert occ.simd_groups_per_core == 2 * waves_per_simd


def test_rdna2_workgroup_barrier_limit() -> None:
    # 64-thread wave32 groups (2 waves) with few VGPRs: 32 waves / 2 = 16
    # groups, which is also LLVM's 16-workgroups-per-CU barrier limit.
    occ = occupancy(get_target("rdna2-wave32"), 64, 16)
    assert occ.groups_per_core == 16
    assert occ.occupancy == 1.0


# --- group dimensions (SL502) -----------------------------------------------


def test_group_dims_violations() -> None:
    sm80 = get_target("sm_80")
    assert group_dims_violations(sm80, (32, 32)) == []
    assert group_dims_violations(sm80, (1, 1, 65)) == ["z = 65 exceeds 64 on sm_80"]
    assert group_dims_violations(sm80, (64, 32)) == ["2048 threads exceed 1024 per group on sm_80"]
    assert group_dims_violations(get_target("apple-a8"), (16, 16, 4)) == [
        "1024 threads exceed 512 per group on apple-a8"
    ]


@pytest.mark.parametrize("threads,cap", [(1, 255), (256, 255), (288, 168), (384, 168), (512, 128), (768, 80),
                                         (1024, 64)])
def test_max_registers_for_group_matches_the_register_file(threads, cap):
    # 65,536 registers per SM, per-warp allocation in units of 256: the limit __launch_bounds__(N) implies
    # (ptxas gives 168 registers with 200 bytes of spills for a 211-register kernel under (288) and (384)).
    from shaderlint.estimate.occupancy import max_registers_for_group
    for name in ("sm_80", "sm_90"):
        assert max_registers_for_group(get_target(name), threads) == cap
