// softmax_rows.metal
//
// Numerically stable row softmax over a [rows x cols] half matrix (attention
// scores). One threadgroup of up to 256 threads per row: a strided pass for
// the row maximum, a pass for the sum of exponentials, a normalising pass.
// Cross-SIMD reductions go through threadgroup memory. Temperature scaling
// and log-softmax output are selected with function constants.
//
// Intentional pitfalls:
//   SL102 (line 34: `uint rowOffset` is a 32-bit unsigned device offset;
//          the compiler cannot use the signed addressing mode, use int)

#include <metal_stdlib>
using namespace metal;

constant bool kLogSoftmax    [[function_constant(0)]];
constant bool kHasTemperature [[function_constant(1)]];

[[max_total_threads_per_threadgroup(256)]]
kernel void softmax_rows_f16(device const half* logits      [[buffer(0)]],
                             device half*       probs       [[buffer(1)]],
                             constant uint&     cols        [[buffer(2)]],
                             constant float&    temperature [[buffer(3), function_constant(kHasTemperature)]],
                             uint   row  [[threadgroup_position_in_grid]],
                             ushort tid  [[thread_index_in_threadgroup]],
                             ushort tpg  [[threads_per_threadgroup]],
                             ushort lane [[thread_index_in_simdgroup]],
                             ushort sg   [[simdgroup_index_in_threadgroup]],
                             ushort nsg  [[simdgroups_per_threadgroup]])
{
    threadgroup float maxPartials[32];
    threadgroup float sumPartials[32];

    const uint rowOffset = row * cols;
    const int  n = int(cols);
    const float scale = kHasTemperature ? 1.0f / temperature : 1.0f;

    // Pass 1: row maximum.
    float m = -INFINITY;
    for (int i = tid; i < n; i += tpg) {
        m = max(m, float(logits[rowOffset + i]) * scale);
    }
    m = simd_max(m);
    if (lane == 0) {
        maxPartials[sg] = m;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    m = simd_max(lane < nsg ? maxPartials[lane] : -INFINITY);

    // Pass 2: sum of exponentials relative to the maximum.
    float s = 0.0f;
    for (int i = tid; i < n; i += tpg) {
        s += exp(float(logits[rowOffset + i]) * scale - m);
    }
    s = simd_sum(s);
    if (lane == 0) {
        sumPartials[sg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s = simd_sum(lane < nsg ? sumPartials[lane] : 0.0f);

    // Pass 3: normalise.
    if (kLogSoftmax) {
        const float logZ = m + log(s);
        for (int i = tid; i < n; i += tpg) {
            probs[rowOffset + i] = half(float(logits[rowOffset + i]) * scale - logZ);
        }
    } else {
        const float invS = 1.0f / s;
        for (int i = tid; i < n; i += tpg) {
            probs[rowOffset + i] = half(exp(float(logits[rowOffset + i]) * scale - m) * invS);
        }
    }
}

// Small rows (cols <= 32): one SIMD group per row, no threadgroup memory.
// shaderlint: threadgroup-size=32x8
kernel void softmax_rows_small_f16(device const half* logits [[buffer(0)]],
                                   device half*       probs  [[buffer(1)]],
                                   constant int&      rows   [[buffer(2)]],
                                   constant int&      cols   [[buffer(3)]],
                                   uint2 gid [[thread_position_in_grid]])
{
    const int row = int(gid.y);
    const int col = int(gid.x);
    if (row >= rows) {
        return;
    }
    const bool active = col < cols;
    const int  idx = row * cols + col;

    const float x = active ? float(logits[idx]) : -INFINITY;
    const float m = simd_max(x);
    const float e = active ? exp(x - m) : 0.0f;
    const float s = simd_sum(e);
    if (active) {
        probs[idx] = kLogSoftmax ? half(x - m - log(s)) : half(e / s);
    }
}
