// bitonic_sort64.comp
//
// Sorts each run of 64 (distance, index) pairs in a storage buffer, used to
// sort the candidate lights of a tile front to back. One workgroup of 32
// invocations per run; each invocation owns one compare-exchange pair per
// stage. Keys past `count` are padded with +inf.
//
// Intentional pitfalls, reported with `--target sm_80` (any NVIDIA target:
// 32-wide subgroups). On the default generic target nothing is reported:
// Intel runs 8- or 16-wide subgroups and Arm Mali 4- to 16-wide, where 32
// invocations are several subgroups and subgroupBarrier() would not do.
//   SL401 (line 39: workgroup barrier() although the workgroup is 32
//          invocations, one subgroup on NVIDIA; subgroupBarrier() would do)
//   SL401 (line 53: same, inside the sorting network)

#version 450

layout(local_size_x = 32) in;

layout(std430, binding = 0) buffer Pairs {
    vec2 pairs[];   // x = key (distance), y = payload (light index as float)
};

layout(push_constant) uniform PushConstants {
    uint count;
} pc;

shared vec2 run[64];

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint base = gl_WorkGroupID.x * 64u;
    const float kInf = uintBitsToFloat(0x7f800000u);

    for (uint k = lid; k < 64u; k += 32u) {
        run[k] = base + k < pc.count ? pairs[base + k] : vec2(kInf, 0.0);
    }
    barrier();

    for (uint size = 2u; size <= 64u; size <<= 1u) {
        for (uint stride = size >> 1u; stride > 0u; stride >>= 1u) {
            // Map invocation -> lower index of its pair for this stride.
            const uint lo = 2u * lid - (lid & (stride - 1u));
            const uint hi = lo + stride;
            const bool ascending = (lo & size) == 0u;
            const vec2 a = run[lo];
            const vec2 b = run[hi];
            if ((a.x > b.x) == ascending) {
                run[lo] = b;
                run[hi] = a;
            }
            barrier();
        }
    }

    for (uint k = lid; k < 64u; k += 32u) {
        if (base + k < pc.count) {
            pairs[base + k] = run[k];
        }
    }
}
