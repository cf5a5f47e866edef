"""Per-language built-in variables, thread-ID roles and built-in function typing."""

from __future__ import annotations

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
