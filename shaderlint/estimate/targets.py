"""GPU profiles ("targets") for the register and occupancy model, as data.

A :class:`Target` holds the per-core (SM / GPU core / CU) resources that decide
how many thread groups can be resident at once, and the per-group limits that
decide whether a group can launch at all. Rules and the report never hard-code
hardware numbers: they ask :func:`get_target` and pass the profile to
:mod:`shaderlint.estimate.occupancy`.

What is public and what is estimated
------------------------------------
* **NVIDIA** (``sm_75`` … ``sm_90``): every figure is public. Per-SM and
  per-block limits come from the CUDA C++ Programming Guide table "Technical
  Specifications per Compute Capability" and its per-architecture shared-memory
  notes (sm_80+ keep 1 KB of shared memory per block for system use). The
  allocation granularities (registers per warp rounded up to 256, resident warps
  rounded down to a multiple of 4, shared memory rounded up to 128 bytes, 256 on
  7.x) come from NVIDIA's CUDA Occupancy Calculator GPU data, which Nsight
  Compute's occupancy calculator uses too. Nothing is marked estimated.
* **Apple** (``apple-a8`` … ``apple-m3``): per-group limits (threads per
  threadgroup, threadgroup memory) are in Apple's Metal feature set tables.
  Apple publishes nothing per core. The register file (~208 KB per core,
  allocated in 16-bit halves), the resident-thread range (384–3072 per core)
  and threadgroup memory per core (~52–60 KB) come from Philip Turner's
  metal-benchmarks measurements; the register-to-thread-count steps (rounded to
  8 half-registers per thread and 64 threads per core) reproduce the table in
  Mesa's open-source Apple GPU compiler (``agx_occupancy.c``, Asahi Linux).
  Those fields are listed in ``estimated`` and explained in ``notes``. A8 and
  A11 reuse the Apple7 (M1) per-core figures for lack of any measurement; M3's
  Dynamic Caching allocates registers and threadgroup memory from one on-chip
  cache at run time, so the M1 figures are a conservative floor for it.
* **AMD RDNA2** (``rdna2-wave32``, ``rdna2-wave64``; ``rdna2`` = wave32): a
  "core" is one compute unit (CU mode: 2 SIMD32 units, 64 KB LDS). Waves per
  SIMD (16), VGPRs per SIMD (1024 in wave32, 512 in wave64), VGPR allocation
  granules (16 / 8) and LDS granularity (1 KB) come from the AMDGPU backend in
  LLVM and from Mesa's ``ac_gpu_info.c``; workgroups per CU (16, a barrier
  limit) from LLVM's ``getMaxWorkGroupsPerCU``.
* **AMD RDNA3** (``rdna3-wave32``, ``rdna3-wave64``; ``rdna3`` = wave32):
  gfx1100 / gfx1101 (RX 7900 / 7800), whose SIMDs have 1.5 times RDNA2's
  VGPRs (1536 per SIMD in wave32, granule 24; 768 and 12 in wave64), from
  LLVM's ``FeatureGFX11FullVGPRs`` and confirmed on RADV's null device
  (Mesa 22.3.6, ``RADV_FORCE_FAMILY=gfx1100``: 144 VGPRs in wave32 give 10
  waves per SIMD, 132 in wave64 give 5). gfx1102 (RX 7600) keeps RDNA2's
  1024 and is not this profile.
* **AMD GCN gfx9** (``gfx9``, Vega 10): a CU of four SIMD16 units running
  wave64, 10 waves and 256 VGPRs per SIMD lane, VGPR granule 4, LDS
  granularity 512 bytes (LLVM AMDGPUBaseInfo for gfx9, Mesa ``ac_gpu_info.c``,
  and RADV's null device for the same figures).
* Every AMD profile names the chip (``radv_family``) that
  :mod:`shaderlint.estimate.radv` compiles for to get exact figures.
* **generic-32**: not a real part. Group limits are the minimum maxima that
  OpenGL 4.3+ guarantees for compute shaders; core resources are modelled on an
  NVIDIA Turing SM (the part in the GL_NV_shader_sm_builtins article the SPEC
  cites). Core fields are therefore marked estimated.

Units
-----
``registers_per_core`` and ``max_registers_per_thread`` count 32-bit registers
on every target. ``register_alloc_unit`` is per SIMD group and counts registers
of ``register_unit_bits`` width (32 on NVIDIA and AMD, 16 on Apple, whose
register file is allocated in 16-bit halves: a ``half`` or ``short`` costs half
a 32-bit register). Memory sizes are bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Literal

Vendor = Literal["nvidia", "apple", "amd", "generic"]

#: Fields that carry hardware figures: each must be sourced or estimated.
DATA_FIELDS: tuple[str, ...] = (
    "simd_width",
    "max_threads_per_group",
    "max_group_dims",
    "max_threads_per_core",
    "max_simd_groups_per_core",
    "max_groups_per_core",
    "group_limit_counts_single_simd",
    "registers_per_core",
    "register_alloc_unit",
    "simd_alloc_granularity",
    "max_registers_per_thread",
    "register_unit_bits",
    "shared_memory_per_core",
    "shared_memory_per_group",
    "shared_alloc_unit",
    "shared_reserved_per_group",
)


@dataclass(frozen=True)
class Target:
    """One GPU profile. See the module docstring for units and sources."""

    name: str
    vendor: Vendor
    description: str
    #: Threads per SIMD group (warp, SIMD-group, wave).
    simd_width: int
    #: Most threads one group (block, threadgroup, workgroup) may have.
    max_threads_per_group: int
    #: Most threads along x, y and z.
    max_group_dims: tuple[int, int, int]
    #: Most threads resident on one core (SM, GPU core, CU).
    max_threads_per_core: int
    #: Most SIMD groups resident on one core.
    max_simd_groups_per_core: int
    #: Most groups resident on one core.
    max_groups_per_core: int
    #: Whether ``max_groups_per_core`` also binds groups of a single SIMD group
    #: (on AMD only multi-wave groups take one of the 16 barrier slots).
    group_limit_counts_single_simd: bool
    #: 32-bit registers in one core's register file.
    registers_per_core: int
    #: Registers (of ``register_unit_bits``) allocated to a SIMD group are
    #: rounded up to a multiple of this.
    register_alloc_unit: int
    #: SIMD groups that fit the register file are rounded down to a multiple of
    #: this (NVIDIA's "warp allocation granularity": one per SM sub-partition).
    simd_alloc_granularity: int
    #: Most 32-bit registers one thread may use.
    max_registers_per_thread: int
    #: Width of one register allocation unit in bits (32, or 16 on Apple).
    register_unit_bits: int
    #: Shared / threadgroup / LDS memory on one core, bytes.
    shared_memory_per_core: int
    #: Most shared memory one group may use, bytes.
    shared_memory_per_group: int
    #: A group's shared memory is rounded up to a multiple of this, bytes.
    shared_alloc_unit: int
    #: Shared memory the runtime keeps for each resident group, bytes.
    shared_reserved_per_group: int
    #: ``nvcc -arch`` value for exact register counts, or None.
    ptxas_arch: str | None
    #: ``RADV_FORCE_FAMILY`` chip for exact register counts from Mesa's RADV
    #: driver (:mod:`shaderlint.estimate.radv`), or None (not an AMD part).
    radv_family: str | None = None
    #: Field name -> citation.
    sources: Mapping[str, str] = field(default_factory=dict)
    #: Fields whose values are not published; the reasoning is in ``notes``.
    estimated: frozenset[str] = frozenset()
    #: Field name (or "general") -> why a figure was chosen.
    notes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        object.__setattr__(self, "notes", MappingProxyType(dict(self.notes)))
        object.__setattr__(self, "estimated", frozenset(self.estimated))

    def is_estimated(self, field_name: str) -> bool:
        """True when ``field_name`` is not a published figure."""
        return field_name in self.estimated

    def as_dict(self) -> dict[str, object]:
        """Plain-data view (for JSON output and docs)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, frozenset):
                value = sorted(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


# --------------------------------------------------------------------------
# Citations shared by several profiles.

_CUDA_TABLE = (
    "CUDA C++ Programming Guide, appendix 'Compute Capabilities', table "
    "'Technical Specifications per Compute Capability' ({cc} column)"
)
_CUDA_SMEM_7X = (
    "CUDA C++ Programming Guide, 'Compute Capability 7.x' shared memory: "
    "unified data cache; sm_75 shared memory capacity up to 64 KB per SM, "
    "64 KB per block"
)
_CUDA_SMEM_8X = (
    "CUDA C++ Programming Guide, 'Compute Capability 8.x' shared memory: "
    "capacity up to {sm} KB per SM, {blk} KB per block; 'the 1 KB of shared "
    "memory not made available to a thread block is reserved for system use'"
)
_CUDA_SMEM_90 = (
    "CUDA C++ Programming Guide, 'Compute Capability 9.0' shared memory: "
    "capacity up to 228 KB per SM, 227 KB per block, 1 KB per block reserved "
    "for system use"
)
_CUDA_CALC = (
    "NVIDIA CUDA Occupancy Calculator GPU data (also used by Nsight Compute) "
    "for CC {cc}: {what}"
)
_NV_WARP = "CUDA C++ Programming Guide, 'SIMT Architecture': warp size 32"

_METAL_TABLES = (
    "Apple Metal feature set tables (developer.apple.com/metal/limits), "
    "'{family}' column: {what}"
)
_MTL_DIMS = (
    "Metal MTLDevice.maxThreadsPerThreadgroup (per-dimension limit equals the "
    "total limit on Apple GPUs: {n} x {n} x {n})"
)
_MTL_TG_ALIGN = (
    "Metal setThreadgroupMemoryLength:atIndex: requires a multiple of 16 bytes"
)
_WWDC16_16BIT = (
    "WWDC16 'Advanced Metal Shader Optimization': A8 and later GPUs have "
    "16-bit register units; half/short use half the register space"
)
_TURNER = (
    "Philip Turner, metal-benchmarks README, 'On-Chip Memory' table "
    "(Apple 7/8 per core): {what}"
)
_MESA_AGX = (
    "Mesa src/asahi/compiler agx_occupancy.c (Alyssa Rosenzweig): half-register"
    " count -> thread count table {{104:1024, 112:896, 128:832, 136:768, "
    "144:704, 160:640, 184:576, 208:512, 232:448, 256:384}}"
)
_AGX_ISA = (
    "dougallj/applegpu G13 architecture docs: 32 threads per SIMD-group, up to "
    "128 general-purpose 32-bit registers (r0-r127, each usable as two 16-bit "
    "halves)"
)

_LLVM_GFX103 = (
    "LLVM AMDGPU backend, AMDGPUBaseInfo.cpp for gfx10.3: {what}"
)
_MESA_AC = "Mesa src/amd/common/ac_gpu_info.c: {what}"
_RDNA_WP = (
    "AMD 'RDNA Architecture' whitepaper and RDNA2 ISA guide: a workgroup "
    "processor holds two compute units of two SIMD32 each; wave32 native, "
    "wave64 issued over two passes; max workgroup size 1024"
)

_GL_MIN = (
    "OpenGL 4.6 core specification, table 23.67 'Implementation Dependent "
    "Compute Shader Limits': minimum maximum {what}"
)


# --------------------------------------------------------------------------
# NVIDIA


def _nvidia(
    name: str,
    cc: str,
    *,
    threads_per_sm: int,
    blocks_per_sm: int,
    smem_per_sm_kb: int,
    smem_per_block_kb: int,
    smem_unit: int,
    reserved: int,
    smem_source: str,
    description: str,
) -> Target:
    table = _CUDA_TABLE.format(cc=cc)
    sources = {
        "simd_width": f"{table}; {_NV_WARP}",
        "max_threads_per_group": f"{table}: maximum number of threads per block 1024",
        "max_group_dims": f"{table}: maximum x/y dimension of a block 1024, z 64",
        "max_threads_per_core": f"{table}: maximum number of resident threads per SM {threads_per_sm}",
        "max_simd_groups_per_core": f"{table}: maximum number of resident warps per SM {threads_per_sm // 32}",
        "max_groups_per_core": f"{table}: maximum number of resident blocks per SM {blocks_per_sm}",
        "group_limit_counts_single_simd": f"{table}: the resident-block limit applies to every block, whatever its size",
        "registers_per_core": f"{table}: number of 32-bit registers per SM 64 K",
        "register_alloc_unit": _CUDA_CALC.format(
            cc=cc, what="register allocation unit size 256, allocation granularity 'warp'"
        ),
        "simd_alloc_granularity": _CUDA_CALC.format(
            cc=cc, what="warp allocation granularity 4 (resident warps per SM limited by registers are rounded down to a multiple of 4)"
        ),
        "max_registers_per_thread": f"{table}: maximum number of 32-bit registers per thread 255",
        "register_unit_bits": f"{table}: registers are 32-bit",
        "shared_memory_per_core": f"{table}: maximum amount of shared memory per SM {smem_per_sm_kb} KB; {smem_source}",
        "shared_memory_per_group": f"{table}: maximum amount of shared memory per thread block {smem_per_block_kb} KB; {smem_source}",
        "shared_alloc_unit": _CUDA_CALC.format(
            cc=cc, what=f"shared memory allocation unit size {smem_unit} bytes"
        ),
        "shared_reserved_per_group": (
            f"{smem_source}; CUDA Occupancy Calculator 'CUDA runtime reserved shared memory per block' {reserved} bytes"
            if reserved
            else f"{smem_source}; no per-block reservation before CC 8.0 (CUDA Occupancy Calculator)"
        ),
    }
    return Target(
        name=name,
        vendor="nvidia",
        description=description,
        simd_width=32,
        max_threads_per_group=1024,
        max_group_dims=(1024, 1024, 64),
        max_threads_per_core=threads_per_sm,
        max_simd_groups_per_core=threads_per_sm // 32,
        max_groups_per_core=blocks_per_sm,
        group_limit_counts_single_simd=True,
        registers_per_core=65536,
        register_alloc_unit=256,
        simd_alloc_granularity=4,
        max_registers_per_thread=255,
        register_unit_bits=32,
        shared_memory_per_core=smem_per_sm_kb * 1024,
        shared_memory_per_group=smem_per_block_kb * 1024,
        shared_alloc_unit=smem_unit,
        shared_reserved_per_group=reserved,
        ptxas_arch=name,
        sources=sources,
        notes={
            "general": (
                "Shared memory per SM is the largest carveout; the driver may pick a "
                "smaller one unless cudaFuncAttributePreferredSharedMemoryCarveout asks "
                "otherwise. Static shared memory above 48 KB per block needs dynamic "
                "allocation and cudaFuncSetAttribute opt-in."
            ),
        },
    )


SM_75 = _nvidia(
    "sm_75",
    "7.5",
    threads_per_sm=1024,
    blocks_per_sm=16,
    smem_per_sm_kb=64,
    smem_per_block_kb=64,
    smem_unit=256,
    reserved=0,
    smem_source=_CUDA_SMEM_7X,
    description="NVIDIA Turing (compute capability 7.5: RTX 20xx, T4)",
)
SM_80 = _nvidia(
    "sm_80",
    "8.0",
    threads_per_sm=2048,
    blocks_per_sm=32,
    smem_per_sm_kb=164,
    smem_per_block_kb=163,
    smem_unit=128,
    reserved=1024,
    smem_source=_CUDA_SMEM_8X.format(sm=164, blk=163),
    description="NVIDIA Ampere GA100 (compute capability 8.0: A100, A30)",
)
SM_86 = _nvidia(
    "sm_86",
    "8.6",
    threads_per_sm=1536,
    blocks_per_sm=16,
    smem_per_sm_kb=100,
    smem_per_block_kb=99,
    smem_unit=128,
    reserved=1024,
    smem_source=_CUDA_SMEM_8X.format(sm=100, blk=99),
    description="NVIDIA Ampere GA10x (compute capability 8.6: RTX 30xx, A10, A40)",
)
SM_89 = _nvidia(
    "sm_89",
    "8.9",
    threads_per_sm=1536,
    blocks_per_sm=24,
    smem_per_sm_kb=100,
    smem_per_block_kb=99,
    smem_unit=128,
    reserved=1024,
    smem_source=_CUDA_SMEM_8X.format(sm=100, blk=99),
    description="NVIDIA Ada Lovelace (compute capability 8.9: RTX 40xx, L4, L40)",
)
SM_90 = _nvidia(
    "sm_90",
    "9.0",
    threads_per_sm=2048,
    blocks_per_sm=32,
    smem_per_sm_kb=228,
    smem_per_block_kb=227,
    smem_unit=128,
    reserved=1024,
    smem_source=_CUDA_SMEM_90,
    description="NVIDIA Hopper (compute capability 9.0: H100, H200)",
)


# --------------------------------------------------------------------------
# Apple

_APPLE_CORE_NOTES = {
    "max_threads_per_core": (
        "Apple publishes no per-core limits. Turner measured 384-3072 resident "
        "threads per Apple7/8 core depending on register use; 3072 (96 SIMD-groups) "
        "is the ceiling. Mesa's table tops out at 1024 threads because it also "
        "serves as the pipeline's maxTotalThreadsPerThreadgroup."
    ),
    "max_simd_groups_per_core": "3072 threads / 32 lanes (see max_threads_per_core).",
    "max_groups_per_core": (
        "No documented threadgroup-slot limit; assumed to be one per resident "
        "SIMD-group, so it never binds before the thread limit."
    ),
    "group_limit_counts_single_simd": "Moot while max_groups_per_core never binds.",
    "registers_per_core": (
        "~208 KB register file per core (Turner) = 53248 32-bit = 106496 16-bit "
        "registers. With 8-half rounding per thread and 64-thread steps this "
        "reproduces every row of Mesa's agx_occupancy table "
        "(e.g. 104 halves -> 1024 threads, 256 halves -> 384)."
    ),
    "register_alloc_unit": (
        "256 16-bit registers per SIMD-group = 8 half-registers per thread: the "
        "rounding that makes the 208 KB file reproduce Mesa's table "
        "(105-112 halves -> 896 threads, not 960)."
    ),
    "simd_alloc_granularity": (
        "Mesa's thread counts move in steps of 64 threads = 2 SIMD-groups."
    ),
    "shared_memory_per_core": (
        "Turner measured ~52-60 KB of threadgroup memory per core; 60 KB is used, "
        "so one 32 KB threadgroup fits per core by memory and two 16 KB ones fit."
    ),
    "shared_alloc_unit": (
        "Hardware granularity unknown; 16 bytes is the Metal API's alignment rule "
        "for threadgroup memory lengths."
    ),
    "shared_reserved_per_group": "No reservation is known; 0 assumed.",
}


def _apple(
    name: str,
    family: str,
    chips: str,
    *,
    max_group: int,
    tg_memory: int,
    tg_memory_text: str,
    extra_estimated: frozenset[str] = frozenset(),
    extra_notes: Mapping[str, str] | None = None,
    description: str,
) -> Target:
    core_fields = frozenset(
        {
            "max_threads_per_core",
            "max_simd_groups_per_core",
            "max_groups_per_core",
            "group_limit_counts_single_simd",
            "registers_per_core",
            "register_alloc_unit",
            "simd_alloc_granularity",
            "shared_memory_per_core",
            "shared_alloc_unit",
            "shared_reserved_per_group",
        }
    )
    sources = {
        "simd_width": (
            f"Metal 'Calculating threadgroup and grid sizes' (threadExecutionWidth); {_AGX_ISA}"
        ),
        "max_threads_per_group": _METAL_TABLES.format(
            family=family, what=f"maximum threads per threadgroup {max_group}"
        ),
        "max_group_dims": _MTL_DIMS.format(n=max_group),
        "max_registers_per_thread": _AGX_ISA,
        "register_unit_bits": _WWDC16_16BIT,
        "shared_memory_per_group": _METAL_TABLES.format(
            family=family, what=f"maximum total threadgroup memory allocation {tg_memory_text}"
        ),
        "max_threads_per_core": _TURNER.format(what="max threads 384-3072"),
        "max_simd_groups_per_core": _TURNER.format(what="max threads 384-3072, 32 per SIMD-group"),
        "registers_per_core": _TURNER.format(what="register file ~208 KB") + "; " + _MESA_AGX,
        "register_alloc_unit": _MESA_AGX,
        "simd_alloc_granularity": _MESA_AGX,
        "shared_memory_per_core": _TURNER.format(what="shared memory ~52-60 KB"),
        "shared_alloc_unit": _MTL_TG_ALIGN,
    }
    notes = dict(_APPLE_CORE_NOTES)
    notes["general"] = (
        f"{chips}. Per-group limits are Apple's published figures; per-core "
        "figures are measured or reverse-engineered on Apple7 (M1) and are "
        "estimates: treat occupancy on this target as indicative."
    )
    if extra_notes:
        notes.update(extra_notes)
    return Target(
        name=name,
        vendor="apple",
        description=description,
        simd_width=32,
        max_threads_per_group=max_group,
        max_group_dims=(max_group, max_group, max_group),
        max_threads_per_core=3072,
        max_simd_groups_per_core=96,
        max_groups_per_core=96,
        group_limit_counts_single_simd=True,
        registers_per_core=53248,
        register_alloc_unit=256,
        simd_alloc_granularity=2,
        max_registers_per_thread=128,
        register_unit_bits=16,
        shared_memory_per_core=60 * 1024,
        shared_memory_per_group=tg_memory,
        shared_alloc_unit=16,
        shared_reserved_per_group=0,
        ptxas_arch=None,
        sources=sources,
        estimated=core_fields | extra_estimated,
        notes=notes,
    )


APPLE_A8 = _apple(
    "apple-a8",
    "Apple2",
    "A8/A8X (PowerVR-derived GPU, Metal family Apple2)",
    max_group=512,
    tg_memory=16352,
    tg_memory_text="16352 bytes",
    extra_estimated=frozenset({"simd_width", "max_registers_per_thread"}),
    extra_notes={
        "simd_width": (
            "A8 devices report threadExecutionWidth 32; the feature set tables do "
            "not list it."
        ),
        "max_registers_per_thread": (
            "The 128-register limit is documented for Apple's own G13 design; the "
            "A8's PowerVR-derived GPU is assumed to match."
        ),
        "max_threads_per_core": (
            "No measurement exists for the A8; the Apple7 per-core figures are used "
            "as a placeholder."
        ),
    },
    description="Apple A8 GPU (Metal GPU family Apple2)",
)
APPLE_A11 = _apple(
    "apple-a11",
    "Apple4",
    "A11 Bionic (first Apple-designed GPU, Metal family Apple4)",
    max_group=1024,
    tg_memory=32768,
    tg_memory_text="32 KB",
    extra_notes={
        "max_threads_per_core": (
            "No measurement exists for the A11; the Apple7 (M1) per-core figures "
            "are used, assuming the register file did not change across Apple's own "
            "GPU generations."
        ),
    },
    description="Apple A11 GPU (Metal GPU family Apple4)",
)
APPLE_M1 = _apple(
    "apple-m1",
    "Apple7",
    "M1 family and A14 (Metal family Apple7)",
    max_group=1024,
    tg_memory=32768,
    tg_memory_text="32 KB",
    description="Apple M1 GPU core (Metal GPU family Apple7)",
)
APPLE_M3 = _apple(
    "apple-m3",
    "Apple9",
    "M3/M4 family and A17 Pro (Metal family Apple9)",
    max_group=1024,
    tg_memory=32768,
    tg_memory_text="32 KB",
    extra_notes={
        "registers_per_core": (
            "Apple9 'Dynamic Caching' allocates registers and threadgroup memory "
            "from one on-chip cache by actual use rather than the kernel's peak; "
            "the Apple7 208 KB figure is kept as a conservative floor."
        ),
    },
    description="Apple M3 GPU core (Metal GPU family Apple9, Dynamic Caching)",
)


# --------------------------------------------------------------------------
# AMD RDNA2 (gfx10.3), one compute unit in CU mode


def _rdna2(name: str, wave: int) -> Target:
    waves_per_cu = 2 * 16
    vgprs_per_simd = 1024 if wave == 32 else 512
    granule = 16 if wave == 32 else 8
    sources = {
        "simd_width": f"{_RDNA_WP}; {_LLVM_GFX103.format(what='getWavefrontSize')}",
        "max_threads_per_group": _RDNA_WP,
        "max_group_dims": (
            "Vulkan/HIP device limits reported for RDNA2 (maxComputeWorkGroupSize "
            "1024 x 1024 x 1024, bounded by the 1024 total)"
        ),
        "max_threads_per_core": (
            f"{waves_per_cu} waves x {wave} lanes; "
            + _LLVM_GFX103.format(what="getMaxWavesPerEU 16, getEUsPerCU 2 in CU mode")
        ),
        "max_simd_groups_per_core": _LLVM_GFX103.format(
            what="getMaxWavesPerEU 16 x getEUsPerCU 2 (CU mode)"
        ),
        "max_groups_per_core": _LLVM_GFX103.format(
            what="getMaxWorkGroupsPerCU: 16 barriers per CU in CU mode for multi-wave groups"
        ),
        "group_limit_counts_single_simd": _LLVM_GFX103.format(
            what="getMaxWorkGroupsPerCU: 'Single-wave workgroups don't consume barrier resources'"
        ),
        "registers_per_core": _LLVM_GFX103.format(
            what=f"getTotalNumVGPRs {vgprs_per_simd} (wave{wave}) per SIMD x 2 SIMDs x {wave} lanes"
        ),
        "register_alloc_unit": _LLVM_GFX103.format(
            what=f"getVGPRAllocGranule {granule} (wave{wave}) x {wave} lanes"
        ),
        "simd_alloc_granularity": _LLVM_GFX103.format(
            what="VGPR occupancy is per SIMD (getNumWavesPerEUWithNumVGPRs); 2 SIMDs per CU"
        ),
        "max_registers_per_thread": _LLVM_GFX103.format(what="getAddressableNumVGPRs 256"),
        "register_unit_bits": "RDNA2 ISA guide: VGPRs are 32 bits per lane",
        "shared_memory_per_core": (
            _LLVM_GFX103.format(what="getLocalMemorySize 65536 per CU (doubled per WGP)")
            + "; "
            + _MESA_AC.format(what="lds_size_per_workgroup 128 KB per WGP")
        ),
        "shared_memory_per_group": (
            "Vulkan maxComputeSharedMemorySize 65536 reported by RADV and AMDVLK on RDNA2; "
            + _LLVM_GFX103.format(what="getAddressableLocalMemorySize 65536")
        ),
        "shared_alloc_unit": _MESA_AC.format(what="lds_alloc_granularity 256*4 bytes on GFX10_3"),
        "shared_reserved_per_group": (
            "A workgroup may address the CU's whole 64 KB LDS (getAddressableLocalMemorySize "
            "= getLocalMemorySize in CU mode), so nothing is reserved per workgroup"
        ),
    }
    return Target(
        name=name,
        vendor="amd",
        description=f"AMD RDNA2 compute unit (gfx10.3, RX 6000), wave{wave}",
        simd_width=wave,
        max_threads_per_group=1024,
        max_group_dims=(1024, 1024, 1024),
        max_threads_per_core=waves_per_cu * wave,
        max_simd_groups_per_core=waves_per_cu,
        max_groups_per_core=16,
        group_limit_counts_single_simd=False,
        registers_per_core=2 * vgprs_per_simd * wave,
        register_alloc_unit=granule * wave,
        simd_alloc_granularity=2,
        max_registers_per_thread=256,
        register_unit_bits=32,
        shared_memory_per_core=65536,
        shared_memory_per_group=65536,
        shared_alloc_unit=1024,
        shared_reserved_per_group=0,
        ptxas_arch=None,
        radv_family="navi21",
        sources=sources,
        notes={
            "general": (
                "A core is one CU in CU mode (2 SIMD32, 64 KB LDS). In WGP mode a "
                "workgroup spans 4 SIMDs and 128 KB LDS, which doubles every per-core "
                "figure and leaves the occupancy ratio unchanged. SGPR and scratch "
                "limits are not modelled."
            ),
        },
    )


RDNA2_WAVE32 = _rdna2("rdna2-wave32", 32)
RDNA2_WAVE64 = _rdna2("rdna2-wave64", 64)


# --------------------------------------------------------------------------
# AMD RDNA3 (gfx11: gfx1100 / gfx1101), one compute unit in CU mode

_LLVM_GFX11 = "LLVM AMDGPU backend, AMDGPUBaseInfo.cpp for gfx1100 (FeatureGFX11FullVGPRs): {what}"
_RADV_NULL = (
    "measured with Mesa 22.3.6 RADV on its null device (RADV_FORCE_FAMILY={chip}, "
    "shaderlint.estimate.radv): {what}"
)


def _rdna3(name: str, wave: int) -> Target:
    base = _rdna2(name, wave)
    vgprs_per_simd = 1536 if wave == 32 else 768
    granule = 24 if wave == 32 else 12
    sources = dict(base.sources)
    sources.update({
        "simd_width": "AMD RDNA3 ISA guide: wave32 and wave64; " + _LLVM_GFX11.format(what="getWavefrontSize"),
        "max_threads_per_group": "AMD RDNA3 ISA guide: max workgroup size 1024; " + _RADV_NULL.format(
            chip="gfx1100", what="maxComputeWorkGroupInvocations 1024"),
        "max_threads_per_core": f"32 waves x {wave} lanes; " + _LLVM_GFX11.format(
            what="getMaxWavesPerEU 16, getEUsPerCU 2 in CU mode"),
        "max_simd_groups_per_core": _LLVM_GFX11.format(what="getMaxWavesPerEU 16 x getEUsPerCU 2 (CU mode)")
        + "; " + _RADV_NULL.format(chip="gfx1100", what="a trivial shader reports 32 subgroups per SIMD, "
                                                         "16 wave64 waves times RADV's factor 2"),
        "max_groups_per_core": _LLVM_GFX11.format(
            what="getMaxWorkGroupsPerCU: 16 barriers per CU in CU mode for multi-wave groups"),
        "group_limit_counts_single_simd": _LLVM_GFX11.format(
            what="getMaxWorkGroupsPerCU: 'Single-wave workgroups don't consume barrier resources'"),
        "registers_per_core": _LLVM_GFX11.format(
            what=f"getTotalNumVGPRs {vgprs_per_simd} (wave{wave}) per SIMD x 2 SIMDs x {wave} lanes")
        + "; " + _RADV_NULL.format(chip="gfx1100", what="144 VGPRs in wave32 -> 10 waves per SIMD, "
                                                        "132 in wave64 -> 5"),
        "register_alloc_unit": _LLVM_GFX11.format(what=f"getVGPRAllocGranule {granule} (wave{wave}) x {wave} lanes")
        + "; " + _RADV_NULL.format(chip="gfx1100", what="VGPR counts are multiples of 24 in wave32, 12 in wave64"),
        "simd_alloc_granularity": _LLVM_GFX11.format(
            what="VGPR occupancy is per SIMD (getNumWavesPerEUWithNumVGPRs); 2 SIMDs per CU"),
        "max_registers_per_thread": _LLVM_GFX11.format(what="getAddressableNumVGPRs 256"),
        "register_unit_bits": "AMD RDNA3 ISA guide: VGPRs are 32 bits per lane",
        "shared_memory_per_core": _LLVM_GFX11.format(what="getLocalMemorySize 65536 per CU (doubled per WGP)"),
        "shared_memory_per_group": _RADV_NULL.format(chip="gfx1100", what="maxComputeSharedMemorySize 65536")
        + "; " + _LLVM_GFX11.format(what="getAddressableLocalMemorySize 65536"),
        "shared_alloc_unit": _MESA_AC.format(what="lds_alloc_granularity 256*4 bytes on GFX10_3 and later"),
    })
    return Target(
        **{**{f.name: getattr(base, f.name) for f in fields(Target)},
           "name": name,
           "description": f"AMD RDNA3 compute unit (gfx1100/gfx1101, RX 7900/7800), wave{wave}",
           "registers_per_core": 2 * vgprs_per_simd * wave,
           "register_alloc_unit": granule * wave,
           "radv_family": "gfx1100",
           "sources": sources,
           "notes": {
               "general": (
                   "A core is one CU in CU mode (2 SIMD32, 64 KB LDS); WGP mode doubles every per-core "
                   "figure. gfx1102 (RX 7600) has 1024 VGPRs per SIMD like RDNA2: use an rdna2 profile "
                   "for it. SGPR and scratch limits are not modelled."
               ),
           }},
    )


RDNA3_WAVE32 = _rdna3("rdna3-wave32", 32)
RDNA3_WAVE64 = _rdna3("rdna3-wave64", 64)


# --------------------------------------------------------------------------
# AMD GCN gfx9 (Vega 10), one compute unit

_LLVM_GFX9 = "LLVM AMDGPU backend, AMDGPUBaseInfo.cpp for gfx900: {what}"
_VEGA_ISA = "AMD 'Vega' Instruction Set Architecture reference guide: {what}"

GFX9 = Target(
    name="gfx9",
    vendor="amd",
    description="AMD GCN gfx9 compute unit (Vega 10: RX Vega 56/64), wave64",
    simd_width=64,
    max_threads_per_group=1024,
    max_group_dims=(1024, 1024, 1024),
    max_threads_per_core=40 * 64,
    max_simd_groups_per_core=40,
    max_groups_per_core=16,
    group_limit_counts_single_simd=False,
    registers_per_core=4 * 256 * 64,
    register_alloc_unit=4 * 64,
    simd_alloc_granularity=4,
    max_registers_per_thread=256,
    register_unit_bits=32,
    shared_memory_per_core=65536,
    shared_memory_per_group=65536,
    shared_alloc_unit=512,
    shared_reserved_per_group=0,
    ptxas_arch=None,
    radv_family="vega10",
    sources={
        "simd_width": _VEGA_ISA.format(what="64 work-items per wavefront") + "; "
        + _LLVM_GFX9.format(what="getWavefrontSize 64"),
        "max_threads_per_group": _RADV_NULL.format(chip="vega10", what="maxComputeWorkGroupInvocations 1024"),
        "max_group_dims": "Vulkan device limits reported by RADV for GCN (maxComputeWorkGroupSize 1024 x 1024 x "
                          "1024, bounded by the 1024 total)",
        "max_threads_per_core": "40 waves x 64 lanes; " + _LLVM_GFX9.format(what="getMaxWavesPerEU 10, "
                                                                              "getEUsPerCU 4"),
        "max_simd_groups_per_core": _LLVM_GFX9.format(what="getMaxWavesPerEU 10 x getEUsPerCU 4") + "; "
        + _RADV_NULL.format(chip="vega10", what="a trivial shader reports 10 subgroups per SIMD"),
        "max_groups_per_core": _LLVM_GFX9.format(what="getMaxWorkGroupsPerCU: 16 barriers per CU for multi-wave "
                                                      "groups"),
        "group_limit_counts_single_simd": _LLVM_GFX9.format(
            what="getMaxWorkGroupsPerCU: 'Single-wave workgroups don't consume barrier resources'"),
        "registers_per_core": _LLVM_GFX9.format(what="getTotalNumVGPRs 256 per SIMD x 4 SIMDs x 64 lanes") + "; "
        + _RADV_NULL.format(chip="vega10", what="144 VGPRs -> 1 wave per SIMD"),
        "register_alloc_unit": _LLVM_GFX9.format(what="getVGPRAllocGranule 4 x 64 lanes") + "; "
        + _RADV_NULL.format(chip="vega10", what="a trivial shader reports 4 VGPRs"),
        "simd_alloc_granularity": _LLVM_GFX9.format(
            what="VGPR occupancy is per SIMD (getNumWavesPerEUWithNumVGPRs); 4 SIMDs per CU"),
        "max_registers_per_thread": _LLVM_GFX9.format(what="getAddressableNumVGPRs 256"),
        "register_unit_bits": _VEGA_ISA.format(what="VGPRs are 32 bits per work-item"),
        "shared_memory_per_core": _VEGA_ISA.format(what="64 KB of LDS per compute unit") + "; "
        + _LLVM_GFX9.format(what="getLocalMemorySize 65536"),
        "shared_memory_per_group": _RADV_NULL.format(chip="vega10", what="maxComputeSharedMemorySize 65536"),
        "shared_alloc_unit": _MESA_AC.format(what="lds_encode_granularity 128*4 bytes on GFX7 and later") + "; "
        + _RADV_NULL.format(chip="vega10", what="10400 bytes of shared memory report an LDS size of 10752"),
        "shared_reserved_per_group": "A workgroup may address the CU's whole 64 KB LDS, so nothing is reserved",
    },
    notes={
        "general": (
            "A core is one GCN CU: 4 SIMD16 units, each running wave64 over four cycles, 64 KB LDS. "
            "SGPRs do limit occupancy on gfx9 (800 per SIMD, about 102 per wave) but are not modelled; "
            "RADV's measured SGPR count is shown with --compiler radv."
        ),
    },
)


# --------------------------------------------------------------------------
# Generic 32-wide profile (GLSL default)

_GENERIC_CORE = frozenset(
    {
        "max_threads_per_core",
        "max_simd_groups_per_core",
        "max_groups_per_core",
        "group_limit_counts_single_simd",
        "registers_per_core",
        "register_alloc_unit",
        "simd_alloc_granularity",
        "max_registers_per_thread",
        "shared_memory_per_core",
        "shared_alloc_unit",
        "shared_reserved_per_group",
        "simd_width",
        "register_unit_bits",
    }
)

GENERIC_32 = Target(
    name="generic-32",
    vendor="generic",
    description="Generic 32-wide GPU (GLSL default): GL minimum group limits, Turing-like core",
    simd_width=32,
    max_threads_per_group=1024,
    max_group_dims=(1024, 1024, 64),
    max_threads_per_core=1024,
    max_simd_groups_per_core=32,
    max_groups_per_core=16,
    group_limit_counts_single_simd=True,
    registers_per_core=65536,
    register_alloc_unit=256,
    simd_alloc_granularity=4,
    max_registers_per_thread=255,
    register_unit_bits=32,
    shared_memory_per_core=65536,
    shared_memory_per_group=32768,
    shared_alloc_unit=256,
    shared_reserved_per_group=0,
    ptxas_arch=None,
    sources={
        "max_threads_per_group": _GL_MIN.format(what="MAX_COMPUTE_WORK_GROUP_INVOCATIONS 1024"),
        "max_group_dims": _GL_MIN.format(what="MAX_COMPUTE_WORK_GROUP_SIZE 1024, 1024, 64"),
        "shared_memory_per_group": _GL_MIN.format(what="MAX_COMPUTE_SHARED_MEMORY_SIZE 32768"),
        "simd_width": "Khronos 'Visualizing GL_NV_shader_sm_builtins' (NVIDIA/Intel subgroups of 32)",
    },
    estimated=_GENERIC_CORE,
    notes={
        "general": (
            "Not a real GPU. Group limits are what every OpenGL 4.3+ implementation "
            "must support; everything per core copies an NVIDIA Turing SM (sm_75), "
            "the part in the GL_NV_shader_sm_builtins article, so 13x13 groups give "
            "the article's 5 groups and 30/32 warps."
        ),
        "simd_width": "32 lanes as on NVIDIA and Intel; AMD wave64 parts differ (use rdna2-wave64).",
        "register_unit_bits": "32-bit registers as on NVIDIA (sm_75 profile).",
        "max_threads_per_core": "Copied from sm_75.",
        "max_simd_groups_per_core": "Copied from sm_75.",
        "max_groups_per_core": "Copied from sm_75.",
        "group_limit_counts_single_simd": "Copied from sm_75.",
        "registers_per_core": "Copied from sm_75.",
        "register_alloc_unit": "Copied from sm_75.",
        "simd_alloc_granularity": "Copied from sm_75.",
        "max_registers_per_thread": "Copied from sm_75.",
        "shared_memory_per_core": "Copied from sm_75.",
        "shared_alloc_unit": "Copied from sm_75.",
        "shared_reserved_per_group": "Copied from sm_75.",
    },
)


# --------------------------------------------------------------------------
# Registry

TARGETS: Mapping[str, Target] = MappingProxyType(
    {
        t.name: t
        for t in (
            APPLE_A8,
            APPLE_A11,
            APPLE_M1,
            APPLE_M3,
            SM_75,
            SM_80,
            SM_86,
            SM_89,
            SM_90,
            RDNA2_WAVE32,
            RDNA2_WAVE64,
            RDNA3_WAVE32,
            RDNA3_WAVE64,
            GFX9,
            GENERIC_32,
        )
    }
)

#: Alternative spellings accepted by :func:`get_target`.
ALIASES: Mapping[str, str] = MappingProxyType({"rdna2": "rdna2-wave32", "rdna3": "rdna3-wave32"})

#: The target assumed per language when none is configured.
DEFAULT_TARGET: Mapping[str, str] = MappingProxyType(
    {"metal": "apple-m1", "cuda": "sm_80", "glsl": "generic-32"}
)


def target_names(include_aliases: bool = True) -> list[str]:
    """Every accepted target name, sorted."""
    names = set(TARGETS)
    if include_aliases:
        names |= set(ALIASES)
    return sorted(names)


def get_target(name: str) -> Target:
    """The profile called ``name`` (case-insensitive; aliases accepted).

    Raises KeyError naming the known targets when ``name`` is unknown.
    """
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    try:
        return TARGETS[key]
    except KeyError:
        raise KeyError(
            f"unknown target {name!r}; known targets: {', '.join(target_names())}"
        ) from None


def default_target(language: str) -> Target:
    """The default profile for a language ("metal", "cuda" or "glsl")."""
    return get_target(DEFAULT_TARGET[language])
