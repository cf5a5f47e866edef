// reduce_sum.metal
//
// Parallel sum of a float buffer in two dispatches: every threadgroup
// writes one partial sum, then a single threadgroup folds the partials.
// `reduce_sum_simd_only` is the first version that shipped; it forgets that
// a 256-thread threadgroup holds eight SIMD groups. `reduce_sum_two_level`
// is the fix: SIMD reduction, partials through threadgroup memory, then a
// second SIMD reduction by the first SIMD group.
//
// Intentional pitfalls:
//   SL301 (line 26: `uint lid [[thread_position_in_threadgroup]]`; ushort
//          is enough)
//   SL404 (line 33: simd_sum covers one SIMD group, but lane 0 of the
//          threadgroup stores it as the whole 256-thread group's sum)
// (look-alike that is fine: the two-level reduction below, whose final
//  simd_sum reads per-SIMD partials from threadgroup memory)

#include <metal_stdlib>
using namespace metal;

[[max_total_threads_per_threadgroup(256)]]
kernel void reduce_sum_simd_only(device const float* in      [[buffer(0)]],
                                 device float*       partial [[buffer(1)]],
                                 constant int&       count   [[buffer(2)]],
                                 uint gid [[thread_position_in_grid]],
                                 uint lid [[thread_position_in_threadgroup]],
                                 uint tg  [[threadgroup_position_in_grid]])
{
    float x = 0.0f;
    if (int(gid) < count) {
        x = in[gid];
    }
    const float s = simd_sum(x);
    if (lid == 0) {
        partial[tg] = s;
    }
}

[[max_total_threads_per_threadgroup(256)]]
kernel void reduce_sum_two_level(device const float4* in       [[buffer(0)]],
                                 device float*        partial  [[buffer(1)]],
                                 constant int&        count4   [[buffer(2)]],
                                 uint   gid      [[thread_position_in_grid]],
                                 uint   gridSize [[threads_per_grid]],
                                 uint   tg       [[threadgroup_position_in_grid]],
                                 ushort lane     [[thread_index_in_simdgroup]],
                                 ushort sg       [[simdgroup_index_in_threadgroup]],
                                 ushort sgCount  [[simdgroups_per_threadgroup]])
{
    threadgroup float simdPartials[32];

    // Grid-stride over float4 elements: the loop condition is the bounds check.
    float acc = 0.0f;
    for (int i = int(gid); i < count4; i += int(gridSize)) {
        const float4 v = in[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }

    const float simdTotal = simd_sum(acc);
    if (lane == 0) {
        simdPartials[sg] = simdTotal;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (sg == 0) {
        float v = lane < sgCount ? simdPartials[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) {
            partial[tg] = v;
        }
    }
}

// Second dispatch: one threadgroup of 256 threads folds `partialCount` values.
[[max_total_threads_per_threadgroup(256)]]
kernel void reduce_sum_finalize(device const float* partial      [[buffer(0)]],
                                device float*       result       [[buffer(1)]],
                                constant int&       partialCount [[buffer(2)]],
                                ushort tid     [[thread_index_in_threadgroup]],
                                ushort tpg     [[threads_per_threadgroup]],
                                ushort lane    [[thread_index_in_simdgroup]],
                                ushort sg      [[simdgroup_index_in_threadgroup]],
                                ushort sgCount [[simdgroups_per_threadgroup]])
{
    threadgroup float simdPartials[32];

    float acc = 0.0f;
    for (int i = tid; i < partialCount; i += tpg) {
        acc += partial[i];
    }
    const float simdTotal = simd_sum(acc);
    if (lane == 0) {
        simdPartials[sg] = simdTotal;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (sg == 0) {
        float v = lane < sgCount ? simdPartials[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) {
            result[0] = v;
        }
    }
}
