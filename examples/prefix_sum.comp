// prefix_sum.comp
//
// Workgroup-level inclusive prefix sum of uint counts (stream compaction of
// visible meshlets). Each subgroup scans with subgroupInclusiveAdd, the
// subgroup totals are scanned by the first subgroup through shared memory,
// and every invocation adds its subgroup's offset. The per-workgroup total
// goes to a second buffer for the next pass.
// The early exit for invocations past the end was added later and now sits
// in front of the barriers.
//
// Intentional pitfalls:
//   SL403 (line 55: barrier() after `if (gid >= pc.count) return;`, a
//          thread-dependent early return: invocations of the last workgroup
//          past the end never arrive)
//   SL403 (line 65: same early return, second barrier)

#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Counts {
    uint counts[];
};

layout(std430, binding = 1) writeonly buffer Offsets {
    uint offsets[];
};

layout(std430, binding = 2) writeonly buffer GroupTotals {
    uint groupTotals[];
};

layout(push_constant) uniform PushConstants {
    uint count;
} pc;

shared uint subgroupTotals[32];

void main()
{
    const uint gid = gl_GlobalInvocationID.x;
    if (gid >= pc.count) {
        return;
    }

    const uint value = counts[gid];
    uint scan = subgroupInclusiveAdd(value);

    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) {
        subgroupTotals[gl_SubgroupID] = scan;
    }
    memoryBarrierShared();
    barrier();

    if (gl_SubgroupID == 0u) {
        const uint t = gl_SubgroupInvocationID < gl_NumSubgroups ? subgroupTotals[gl_SubgroupInvocationID] : 0u;
        const uint tScan = subgroupInclusiveAdd(t);
        if (gl_SubgroupInvocationID < gl_NumSubgroups) {
            subgroupTotals[gl_SubgroupInvocationID] = tScan;
        }
    }
    memoryBarrierShared();
    barrier();

    if (gl_SubgroupID > 0u) {
        scan += subgroupTotals[gl_SubgroupID - 1u];
    }
    offsets[gid] = scan;

    if (gl_LocalInvocationIndex == gl_WorkGroupSize.x - 1u) {
        groupTotals[gl_WorkGroupID.x] = scan;
    }
}
