"""Per-language built-in variables, thread-ID roles and built-in function typing."""

from __future__ import annotations

import re

from shaderlint.model.types import BOOL, FLOAT, INT, UINT, Type, scalar

LOCAL = "local"  # varies between threads of one group
GROUP = "group"  # varies between groups
UNKNOWN_DEP = "unknown"  # read from shared memory or otherwise not decidable

UINT3 = UINT.with_width(3)

# Metal parameter attributes -> (dependence, is global position, fits 16 bits)
METAL_ROLES: dict[str, frozenset[str]] = {
    "thread_position_in_grid": frozenset({LOCAL, GROUP}),
    "thread_index_in_grid": frozenset({LOCAL, GROUP}),
    "thread_position_in_threadgroup": frozenset({LOCAL}),
    "thread_index_in_threadgroup": frozenset({LOCAL}),
    "thread_index_in_simdgroup": frozenset({LOCAL}),
    "thread_index_in_quadgroup": frozenset({LOCAL}),
    "simdgroup_index_in_threadgroup": frozenset({LOCAL}),
    "quadgroup_index_in_threadgroup": frozenset({LOCAL}),
    "threadgroup_position_in_grid": frozenset({GROUP}),
    "threads_per_threadgroup": frozenset(),
    "threads_per_grid": frozenset(),
    "threadgroups_per_grid": frozenset(),
    "simdgroups_per_threadgroup": frozenset(),
    "quadgroups_per_threadgroup": frozenset(),
    "thread_execution_width": frozenset(),
    "threads_per_simdgroup": frozenset(),
    "dispatch_threads_per_threadgroup": frozenset(),
    "dispatch_simdgroups_per_threadgroup": frozenset(),
    "grid_origin": frozenset(),
    "grid_size": frozenset(),
    "vertex_id": frozenset({LOCAL}),
    "instance_id": frozenset({LOCAL}),
    "stage_in": frozenset({LOCAL}),
    "position": frozenset({LOCAL}),
    "front_facing": frozenset({LOCAL}),
    "sample_id": frozenset({LOCAL}),
    "point_coord": frozenset({LOCAL}),
}
METAL_GRID_ROLES = frozenset({"thread_position_in_grid", "thread_index_in_grid"})
METAL_LOCAL_ROLES = frozenset(
    {"thread_position_in_threadgroup", "thread_index_in_threadgroup", "thread_index_in_simdgroup",
     "simdgroup_index_in_threadgroup", "threads_per_threadgroup", "thread_index_in_quadgroup",
     "quadgroup_index_in_threadgroup", "simdgroups_per_threadgroup", "quadgroups_per_threadgroup",
     "thread_execution_width", "threads_per_simdgroup", "dispatch_threads_per_threadgroup",
     "dispatch_simdgroups_per_threadgroup"}
)
# 16-bit spelling of a 32-bit unsigned thread-ID parameter type (Metal accepts ushort/ushortN for every ID attribute).
METAL_USHORT_SPELLING = {"uint": "ushort", "uint2": "ushort2", "uint3": "ushort3", "unsigned int": "ushort",
                         "unsigned": "ushort", "uint32_t": "ushort"}

# CUDA: built-in structs (x/y/z fields) and scalars
CUDA_BUILTINS: dict[str, tuple[Type, frozenset[str], bool]] = {
    # name: (type, dependence, compile-time constant)
    "threadIdx": (UINT3, frozenset({LOCAL}), False),
    "blockIdx": (UINT3, frozenset({GROUP}), False),
    "blockDim": (UINT3, frozenset(), False),
    "gridDim": (UINT3, frozenset(), False),
    "warpSize": (INT, frozenset(), True),
}

GLSL_BUILTINS: dict[str, tuple[Type, frozenset[str], bool]] = {
    "gl_GlobalInvocationID": (UINT3, frozenset({LOCAL, GROUP}), False),
    "gl_LocalInvocationID": (UINT3, frozenset({LOCAL}), False),
    "gl_LocalInvocationIndex": (UINT, frozenset({LOCAL}), False),
    "gl_WorkGroupID": (UINT3, frozenset({GROUP}), False),
    "gl_NumWorkGroups": (UINT3, frozenset(), False),
    "gl_WorkGroupSize": (UINT3, frozenset(), True),
    "gl_SubgroupSize": (UINT, frozenset(), False),
    "gl_SubgroupInvocationID": (UINT, frozenset({LOCAL}), False),
    "gl_SubgroupID": (UINT, frozenset({LOCAL}), False),
    "gl_NumSubgroups": (UINT, frozenset(), False),
    "gl_FragCoord": (FLOAT.with_width(4), frozenset({LOCAL}), False),
    "gl_VertexIndex": (INT, frozenset({LOCAL}), False),
    "gl_VertexID": (INT, frozenset({LOCAL}), False),
    "gl_InstanceIndex": (INT, frozenset({LOCAL}), False),
    "gl_InstanceID": (INT, frozenset({LOCAL}), False),
    "gl_PrimitiveID": (INT, frozenset({LOCAL}), False),
    "gl_FrontFacing": (BOOL, frozenset({LOCAL}), False),
    "gl_LaunchIDEXT": (UINT3, frozenset({LOCAL, GROUP}), False),
    "gl_LaunchSizeEXT": (UINT3, frozenset(), False),
}

# Built-in functions whose result has the type of their first (or widest) arithmetic argument.
GENERIC_MATH = frozenset(
    "abs fabs min max fmin fmax clamp saturate mix lerp fma mad sqrt rsqrt inversesqrt exp exp2 exp10 log log2 log10 "
    "pow powr sin cos tan asin acos atan atan2 sinh cosh tanh floor ceil round trunc rint fract sign step smoothstep "
    "normalize reflect refract faceforward copysign fmod select min3 max3 median3 precise fast radians degrees "
    "__expf __logf __sinf __cosf __powf __fdividef __saturatef exp2f expf logf sqrtf rsqrtf sinf cosf fabsf fminf fmaxf "
    "floorf ceilf roundf truncf powf tanhf fmaf "
    "simd_sum simd_max simd_min simd_product simd_prefix_inclusive_sum simd_prefix_exclusive_sum simd_broadcast "
    "simd_shuffle simd_shuffle_down simd_shuffle_up simd_shuffle_xor simd_broadcast_first simd_and simd_or simd_xor "
    "quad_sum quad_broadcast quad_shuffle quad_shuffle_down quad_shuffle_xor "
    "subgroupAdd subgroupMul subgroupMin subgroupMax subgroupAnd subgroupOr subgroupXor subgroupBroadcast "
    "subgroupBroadcastFirst subgroupShuffle subgroupShuffleXor subgroupShuffleDown subgroupShuffleUp "
    "subgroupInclusiveAdd subgroupExclusiveAdd "
    "dFdx dFdy fwidth dfdx dfdy".split()
)
# (function, index of the value argument) for shuffles/atomics returning the value's type.
VALUE_ARG = {
    "__shfl_sync": 1, "__shfl_down_sync": 1, "__shfl_up_sync": 1, "__shfl_xor_sync": 1,
    "__shfl_down": 0, "__shfl_up": 0, "__shfl_xor": 0, "__shfl": 0,
    "atomicAdd": 1, "atomicSub": 1, "atomicMax": 1, "atomicMin": 1, "atomicExch": 1, "atomicAnd": 1, "atomicOr": 1,
    "atomicXor": 1, "atomicCAS": 2,
}
SCALAR_RESULT = frozenset("dot length distance determinant".split())
FIXED_RESULT: dict[str, Type] = {
    "__float2half": scalar("float", 16), "__float2half_rn": scalar("float", 16), "__half2float": FLOAT,
    "__hadd": scalar("float", 16), "__hmul": scalar("float", 16), "__hsub": scalar("float", 16),
    "__hfma": scalar("float", 16), "__int2float_rn": FLOAT, "__float2int_rn": INT, "__float_as_int": INT,
    "__int_as_float": FLOAT, "__popc": INT, "__clz": INT, "__ffs": INT, "__ballot_sync": UINT, "__activemask": UINT,
    "__any_sync": INT, "__all_sync": INT, "popcount": UINT, "bitCount": INT, "findLSB": INT, "findMSB": INT,
    "floatBitsToInt": INT, "floatBitsToUint": UINT, "intBitsToFloat": FLOAT, "uintBitsToFloat": FLOAT,
    "packHalf2x16": UINT, "packUnorm4x8": UINT, "any": BOOL, "all": BOOL, "isnan": BOOL, "isinf": BOOL,
    "simd_is_first": BOOL, "subgroupElect": BOOL, "subgroupAll": BOOL, "subgroupAny": BOOL,
    "subgroupBallotBitCount": UINT, "atomicCounterIncrement": UINT, "gl_SubgroupSize": UINT,
}

# Barriers: name -> (scope, address spaces ordered by default)
BARRIERS: dict[str, dict[str, tuple[str, frozenset[str]]]] = {
    "metal": {
        "threadgroup_barrier": ("group", frozenset()),  # orders what its mem_flags say
        "simdgroup_barrier": ("simd", frozenset()),
    },
    "cuda": {
        "__syncthreads": ("group", frozenset({"threadgroup", "device"})),
        "__syncthreads_count": ("group", frozenset({"threadgroup", "device"})),
        "__syncthreads_and": ("group", frozenset({"threadgroup", "device"})),
        "__syncthreads_or": ("group", frozenset({"threadgroup", "device"})),
        "__syncwarp": ("simd", frozenset({"threadgroup", "device"})),
        "__threadfence_block": ("memory", frozenset({"threadgroup", "device"})),
        "__threadfence": ("memory", frozenset({"device"})),
    },
    "glsl": {
        "barrier": ("group", frozenset({"threadgroup"})),
        "subgroupBarrier": ("simd", frozenset({"threadgroup", "device"})),
        "memoryBarrierShared": ("memory", frozenset({"threadgroup"})),
        "groupMemoryBarrier": ("memory", frozenset({"threadgroup", "device", "texture"})),
        "memoryBarrierBuffer": ("memory", frozenset({"device"})),
        "memoryBarrierImage": ("memory", frozenset({"texture"})),
        "memoryBarrier": ("memory", frozenset({"device", "texture", "threadgroup"})),
        "subgroupMemoryBarrierShared": ("memory", frozenset({"threadgroup"})),
    },
}
METAL_MEM_FLAGS = {"mem_threadgroup": "threadgroup", "mem_device": "device", "mem_texture": "texture",
                   "mem_threadgroup_imageblock": "threadgroup", "mem_object_data": "device",
                   "mem_device_and_threadgroup": "device threadgroup"}  # the last: Metal 1.0 spelling

# ---- built-in functions that touch no memory -----------------------------------------------------
# A call the file does not define may touch any memory (a header's helper or macro, an intrinsic
# wrapping inline PTX): the synchronisation analysis counts it as an access to every address space.
# These built-ins only compute on registers (their arguments' own loads are counted where they are
# written), so they are the exception. Atomics, texture/image stores, async copies, matrix
# loads/stores and anything else reading or writing through a pointer are deliberately absent.
_REGISTER_ONLY_COMMON = frozenset(
    "abs min max clamp saturate mix select sign step smoothstep fract floor ceil round trunc rint "
    "sqrt rsqrt inversesqrt exp exp2 exp10 log log2 log10 pow powr sin cos tan asin acos atan atan2 "
    "sinh cosh tanh asinh acosh atanh fma mad fmod mod dot cross length distance normalize reflect refract "
    "faceforward determinant transpose inverse isnan isinf isfinite signbit all any copysign radians degrees "
    "popcount clz ctz assert frexp modf ldexp sincos".split())
_REGISTER_ONLY = {
    "cuda": _REGISTER_ONLY_COMMON | frozenset(
        "__syncwarp __activemask __ballot_sync __any_sync __all_sync __uni_sync __match_any_sync __match_all_sync "
        "__shfl __shfl_sync __shfl_up __shfl_up_sync __shfl_down __shfl_down_sync __shfl_xor __shfl_xor_sync "
        "__reduce_add_sync __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync "
        "__popc __popcll __clz __clzll __ffs __ffsll __brev __brevll __byte_perm __funnelshift_l __funnelshift_r "
        "__funnelshift_lc __funnelshift_rc __mul24 __umul24 __mulhi __umulhi __mul64hi __umul64hi __sad __usad "
        "__dp4a __dp2a_lo __dp2a_hi __fdividef __saturatef __expf __exp10f __logf __log2f __log10f __sinf __cosf "
        "__tanf __powf __sincosf __frcp_rn __fsqrt_rn __frsqrt_rn __nanosleep __trap __brkpt clock clock64 "
        "__cvta_generic_to_shared __cvta_generic_to_global __cvta_shared_to_generic __isShared __isGlobal "
        "__builtin_expect __builtin_assume __builtin_unreachable __assume __builtin_bit_cast "
        "static_cast reinterpret_cast const_cast bit_cast min max umin umax llmin llmax ullmin ullmax "
        "fminf fmaxf fabsf sqrtf rsqrtf cbrtf rcbrtf expf exp2f exp10f expm1f logf log2f log10f log1pf powf "
        "sinf cosf tanf asinf acosf atanf atan2f sinhf coshf tanhf asinhf acoshf atanhf erff erfcf erfinvf "
        "floorf ceilf roundf truncf rintf lrintf llrintf lroundf nearbyintf fmaf fmodf remainderf copysignf "
        "hypotf ldexpf frexpf modff sincosf sincospif sinpif cospif normcdff normcdfinvf lgammaf tgammaf fdimf "
        "ilogbf logbf nextafterf exp2 fmin fmax fabs llrint lrint lround llround isinf isnan "
        "hexp hexp2 hexp10 hlog hlog2 hlog10 hsqrt hrsqrt hrcp hsin hcos hceil hfloor hrint htrunc "
        "h2exp h2exp2 h2exp10 h2log h2log2 h2log10 h2sqrt h2rsqrt h2rcp h2sin h2cos h2ceil h2floor h2rint h2trunc".split()),
    "metal": _REGISTER_ONLY_COMMON | frozenset(
        "as_type static_cast reinterpret_cast bit_cast fmin fmax fabs fmin3 fmax3 min3 max3 median3 precise fast "
        "extract_bits insert_bits reverse_bits mulhi mad24 mul24 abs_diff add_sat sub_sat hadd rhadd rotate "
        "simd_sum simd_product simd_min simd_max simd_and simd_or simd_xor simd_ballot simd_all simd_any "
        "simd_broadcast simd_broadcast_first simd_shuffle simd_shuffle_down simd_shuffle_up simd_shuffle_xor "
        "simd_shuffle_rotate_down simd_shuffle_rotate_up simd_shuffle_and_fill_down simd_shuffle_and_fill_up "
        "simd_prefix_inclusive_sum simd_prefix_exclusive_sum simd_prefix_inclusive_product "
        "simd_prefix_exclusive_product simd_is_first simd_active_threads_mask "
        "quad_sum quad_broadcast quad_shuffle quad_shuffle_down quad_shuffle_up quad_shuffle_xor quad_ballot "
        "simdgroup_multiply_accumulate simdgroup_multiply "
        "dfdx dfdy fwidth exp10 divide recip cospi sinpi tanpi".split()),
    "glsl": _REGISTER_ONLY_COMMON | frozenset(
        "floatBitsToInt floatBitsToUint intBitsToFloat uintBitsToFloat packHalf2x16 unpackHalf2x16 "
        "packUnorm4x8 unpackUnorm4x8 packSnorm4x8 unpackSnorm4x8 packUnorm2x16 unpackUnorm2x16 "
        "packSnorm2x16 unpackSnorm2x16 packFloat2x16 unpackFloat2x16 pack32 unpack32 pack16 unpack16 pack8 unpack8 "
        "bitfieldExtract bitfieldInsert bitfieldReverse bitCount findLSB findMSB uaddCarry usubBorrow "
        "umulExtended imulExtended ldexp frexp modf roundEven matrixCompMult outerProduct "
        "lessThan lessThanEqual greaterThan greaterThanEqual equal notEqual not fmin fmax "
        "subgroupElect subgroupAll subgroupAny subgroupAllEqual subgroupBroadcast subgroupBroadcastFirst "
        "subgroupBallot subgroupInverseBallot subgroupBallotBitExtract subgroupBallotBitCount "
        "subgroupBallotInclusiveBitCount subgroupBallotExclusiveBitCount subgroupBallotFindLSB "
        "subgroupBallotFindMSB subgroupShuffle subgroupShuffleXor subgroupShuffleUp subgroupShuffleDown "
        "subgroupAdd subgroupMul subgroupMin subgroupMax subgroupAnd subgroupOr subgroupXor "
        "subgroupInclusiveAdd subgroupInclusiveMul subgroupInclusiveMin subgroupInclusiveMax "
        "subgroupExclusiveAdd subgroupExclusiveMul subgroupExclusiveMin subgroupExclusiveMax "
        "subgroupClusteredAdd subgroupClusteredMul subgroupClusteredMin subgroupClusteredMax "
        "subgroupClusteredAnd subgroupClusteredOr subgroupClusteredXor subgroupQuadBroadcast "
        "subgroupQuadSwapHorizontal subgroupQuadSwapVertical subgroupQuadSwapDiagonal "
        "dFdx dFdy fwidth dFdxFine dFdyFine dFdxCoarse dFdyCoarse coopMatMulAdd "
        # reads of samplers / sampled textures: read-only memory no barrier orders
        "texture textureLod textureGrad textureOffset textureLodOffset textureProj textureGather "
        "textureGatherOffset texelFetch texelFetchOffset textureSize textureQueryLevels textureQueryLod "
        "textureSamples imageSize imageSamples".split()),
}
# CUDA's half/bfloat16 arithmetic and conversion intrinsics (`__hadd2`, `__float2half_rn`,
# `__half22float2`, `__float_as_uint`, `make_float4`, `__vadd4`): register-only by construction.
_CUDA_REGISTER_PATTERN = re.compile(
    r"__h[a-z0-9_]+|__(?:float|half|int|uint|ll|ull|double|bfloat16|float2|half2|bfloat162|floats2|halves2|"
    r"low|high|lows|highs|short|ushort)2[a-z0-9_]+|__[a-z0-9]+_as_[a-z0-9]+|__v[a-z0-9]+|__[fdi](?:add|sub|mul|div|"
    r"fma|sqrt|rcp)[a-z0-9_]*|make_[a-z0-9_]+|__(?:low|high)[a-z0-9_]*|__[a-z]+_rn")


def register_only(language: str, name: str) -> bool:
    """``name`` is a built-in function that reads and writes only registers (no memory)."""
    if name in _REGISTER_ONLY.get(language, ()):
        return True
    return language == "cuda" and _CUDA_REGISTER_PATTERN.fullmatch(name) is not None
