// reduce_subgroup.comp
//
// First pass of a min/max/sum reduction over a float buffer (depth-range
// and exposure statistics). Grid-stride accumulation, subgroupAdd /
// subgroupMin / subgroupMax inside each subgroup, one partial per subgroup
// in shared memory, then the first subgroup reduces the partials and
// writes one vec4 per workgroup. Works for any subgroup size from 4 to 128.
//
// Intentional pitfalls: none
// (look-alike a precise linter must accept: the value written as the
//  workgroup result comes from a second subgroup reduction over the shared
//  partials, i.e. a proper two-level reduction)

#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Input {
    float values[];
};

layout(std430, binding = 1) writeonly buffer Partials {
    vec4 partials[];   // (sum, min, max, count)
};

layout(push_constant) uniform PushConstants {
    uint count;
} pc;

// Enough slots for the smallest subgroup size we run on: 256 / 8 = 32.
shared vec4 subgroupResults[32];

void main()
{
    float sum = 0.0;
    float lo = 3.402823e38;
    float hi = -3.402823e38;
    float n = 0.0;

    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
        const float v = values[i];
        sum += v;
        lo = min(lo, v);
        hi = max(hi, v);
        n += 1.0;
    }

    sum = subgroupAdd(sum);
    lo = subgroupMin(lo);
    hi = subgroupMax(hi);
    n = subgroupAdd(n);
    if (subgroupElect()) {
        subgroupResults[gl_SubgroupID] = vec4(sum, lo, hi, n);
    }
    memoryBarrierShared();
    barrier();

    if (gl_SubgroupID == 0u) {
        vec4 r = gl_SubgroupInvocationID < gl_NumSubgroups
            ? subgroupResults[gl_SubgroupInvocationID]
            : vec4(0.0, 3.402823e38, -3.402823e38, 0.0);
        r.x = subgroupAdd(r.x);
        r.y = subgroupMin(r.y);
        r.z = subgroupMax(r.z);
        r.w = subgroupAdd(r.w);
        if (subgroupElect()) {
            partials[gl_WorkGroupID.x] = r;
        }
    }
}
