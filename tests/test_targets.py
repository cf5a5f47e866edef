"""Target profiles: complete, sourced, and matching the published tables."""

from __future__ import annotations

import dataclasses

import pytest

from shaderlint.estimate.targets import (
    ALIASES,
    DATA_FIELDS,
    DEFAULT_TARGET,
    TARGETS,
    Target,
    default_target,
    get_target,
    target_names,
)

EXPECTED = {
    "apple-a8", "apple-a11", "apple-m1", "apple-m3",
    "sm_75", "sm_80", "sm_86", "sm_89", "sm_90",
    "rdna2-wave32", "rdna2-wave64", "rdna3-wave32", "rdna3-wave64", "gfx9", "generic-32",
}
META_FIELDS = {"name", "vendor", "description", "ptxas_arch", "radv_family", "sources", "estimated", "notes"}


def test_all_profiles_present() -> None:
    assert set(TARGETS) == EXPECTED
    for name, target in TARGETS.items():
        assert target.name == name


def test_data_fields_cover_the_dataclass() -> None:
    names = {f.name for f in dataclasses.fields(Target)}
    assert names == set(DATA_FIELDS) | META_FIELDS


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_field_sourced_or_estimated(name: str) -> None:
    target = TARGETS[name]
    for field in DATA_FIELDS:
        assert field in target.sources or field in target.estimated, f"{name}.{field}"
        if field in target.sources:
            assert target.sources[field].strip(), f"{name}.{field} has an empty citation"
    assert set(target.sources) <= set(DATA_FIELDS)
    assert target.estimated <= set(DATA_FIELDS)
    # Every estimate says why.
    for field in target.estimated:
        assert field in target.notes or "general" in target.notes, f"{name}.{field}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_profile_is_consistent(name: str) -> None:
    t = TARGETS[name]
    assert t.vendor in {"nvidia", "apple", "amd", "generic"}
    assert t.max_threads_per_core == t.max_simd_groups_per_core * t.simd_width
    assert t.max_threads_per_group <= t.max_threads_per_core
    assert max(t.max_group_dims) <= t.max_threads_per_group
    assert t.shared_memory_per_group + t.shared_reserved_per_group <= t.shared_memory_per_core
    assert t.register_unit_bits in (16, 32)
    assert (t.ptxas_arch is not None) == (t.vendor == "nvidia")
    assert (t.radv_family is not None) == (t.vendor == "amd")
    # A full group of the largest size fits the register file at one register.
    assert t.registers_per_core >= t.max_threads_per_group


def test_nvidia_profiles_have_no_estimates() -> None:
    for target in TARGETS.values():
        if target.vendor == "nvidia":
            assert target.estimated == frozenset(), target.name


def test_apple_and_generic_mark_core_figures_estimated() -> None:
    for name in ("apple-a8", "apple-a11", "apple-m1", "apple-m3", "generic-32"):
        t = TARGETS[name]
        assert {"registers_per_core", "max_threads_per_core", "shared_memory_per_core"} <= t.estimated
        assert "max_threads_per_group" not in t.estimated  # published figure


# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability".
CUDA_TABLE = {
    #         threads/SM warps blocks  regs   smem/SM     smem/block   reserved
    "sm_75": (1024, 32, 16, 65536, 64 * 1024, 64 * 1024, 0),
    "sm_80": (2048, 64, 32, 65536, 164 * 1024, 163 * 1024, 1024),
    "sm_86": (1536, 48, 16, 65536, 100 * 1024, 99 * 1024, 1024),
    "sm_89": (1536, 48, 24, 65536, 100 * 1024, 99 * 1024, 1024),
    "sm_90": (2048, 64, 32, 65536, 228 * 1024, 227 * 1024, 1024),
}


@pytest.mark.parametrize("name", sorted(CUDA_TABLE))
def test_nvidia_figures_match_cuda_guide(name: str) -> None:
    t = get_target(name)
    threads, warps, blocks, regs, smem_sm, smem_block, reserved = CUDA_TABLE[name]
    assert t.max_threads_per_core == threads
    assert t.max_simd_groups_per_core == warps
    assert t.max_groups_per_core == blocks
    assert t.registers_per_core == regs
    assert t.shared_memory_per_core == smem_sm
    assert t.shared_memory_per_group == smem_block
    assert t.shared_reserved_per_group == reserved
    assert t.max_threads_per_group == 1024
    assert t.max_group_dims == (1024, 1024, 64)
    assert t.max_registers_per_thread == 255
    assert (t.simd_width, t.register_alloc_unit, t.simd_alloc_granularity) == (32, 256, 4)
    assert t.shared_alloc_unit == (256 if name == "sm_75" else 128)
    assert t.ptxas_arch == name


def test_apple_published_group_limits() -> None:
    # Metal feature set tables.
    assert get_target("apple-a8").max_threads_per_group == 512
    assert get_target("apple-a8").shared_memory_per_group == 16352
    for name in ("apple-a11", "apple-m1", "apple-m3"):
        assert get_target(name).max_threads_per_group == 1024
        assert get_target(name).shared_memory_per_group == 32 * 1024
    for name in ("apple-a8", "apple-a11", "apple-m1", "apple-m3"):
        assert get_target(name).register_unit_bits == 16


def test_rdna2_wave_modes() -> None:
    w32, w64 = get_target("rdna2-wave32"), get_target("rdna2-wave64")
    assert (w32.simd_width, w64.simd_width) == (32, 64)
    # The same 128 KB of VGPRs per SIMD, counted per lane.
    assert w32.registers_per_core == w64.registers_per_core == 2 * 32 * 1024
    assert w32.max_simd_groups_per_core == w64.max_simd_groups_per_core == 32


def test_rdna3_has_one_and_a_half_times_the_vgprs() -> None:
    w32, w64 = get_target("rdna3-wave32"), get_target("rdna3-wave64")
    assert (w32.simd_width, w64.simd_width) == (32, 64)
    assert w32.registers_per_core == w64.registers_per_core == 3 * get_target("rdna2").registers_per_core // 2
    assert (w32.register_alloc_unit, w64.register_alloc_unit) == (24 * 32, 12 * 64)
    assert w32.radv_family == w64.radv_family == "gfx1100"


def test_gfx9_is_four_simd16_running_wave64() -> None:
    t = get_target("gfx9")
    assert (t.simd_width, t.max_simd_groups_per_core, t.simd_alloc_granularity) == (64, 40, 4)
    assert t.registers_per_core == 4 * 256 * 64 and t.register_alloc_unit == 4 * 64
    assert (t.shared_alloc_unit, t.radv_family) == (512, "vega10")


def test_amd_profiles_name_chips_radv_accepts() -> None:
    from shaderlint.estimate.radv import check_family

    assert {t.radv_family for t in TARGETS.values() if t.vendor == "amd"} == {"navi21", "gfx1100", "vega10"}
    for t in TARGETS.values():
        if t.radv_family is not None:
            assert check_family(t.radv_family) == t.radv_family


def test_aliases_and_lookup() -> None:
    assert get_target("rdna2") is get_target("rdna2-wave32")
    assert get_target("rdna3") is get_target("rdna3-wave32")
    assert get_target("SM_80") is TARGETS["sm_80"]
    assert get_target(" apple-m1 ") is TARGETS["apple-m1"]
    assert set(ALIASES.values()) <= set(TARGETS)
    assert "rdna2" in target_names()
    assert "rdna2" not in target_names(include_aliases=False)


def test_unknown_target_lists_names() -> None:
    with pytest.raises(KeyError) as info:
        get_target("sm_999")
    message = str(info.value)
    for name in EXPECTED:
        assert name in message


def test_defaults() -> None:
    assert dict(DEFAULT_TARGET) == {"metal": "apple-m1", "cuda": "sm_80", "glsl": "generic-32"}
    for language, name in DEFAULT_TARGET.items():
        assert default_target(language).name == name


def test_targets_are_immutable() -> None:
    t = get_target("sm_80")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.simd_width = 64  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.sources["simd_width"] = "x"  # type: ignore[index]
    assert t.as_dict()["max_group_dims"] == [1024, 1024, 64]
