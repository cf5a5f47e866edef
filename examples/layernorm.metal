// layernorm.metal
//
// LayerNorm forward for transformer activations stored as half:
// y = (x - mean) / sqrt(var + eps) * gamma + beta, one threadgroup per row.
// Mean and variance are accumulated in float with a single pass (sum and
// sum of squares), reduced across SIMD groups through threadgroup memory.
// An RMSNorm variant (no mean subtraction, no beta) shares the reduction.
//
// Intentional pitfalls:
//   SL301 (line 30: `uint tid [[thread_index_in_threadgroup]]`; the
//          threadgroup index always fits ushort)
//   SL102 (line 39: `uint base = row * dim` is a 32-bit unsigned device
//          offset; use int so the addressing hardware can fold it)

#include <metal_stdlib>
using namespace metal;

struct NormParams {
    int   dim;
    float eps;
};

[[max_total_threads_per_threadgroup(256)]]
kernel void layernorm_f16(device const half*    x      [[buffer(0)]],
                          device half*          y      [[buffer(1)]],
                          device const half*    gamma  [[buffer(2)]],
                          device const half*    beta   [[buffer(3)]],
                          constant NormParams&  params [[buffer(4)]],
                          uint   row  [[threadgroup_position_in_grid]],
                          uint   tid  [[thread_index_in_threadgroup]],
                          ushort tpg  [[threads_per_threadgroup]],
                          ushort lane [[thread_index_in_simdgroup]],
                          ushort sg   [[simdgroup_index_in_threadgroup]],
                          ushort nsg  [[simdgroups_per_threadgroup]])
{
    threadgroup float2 partials[32];

    const int dim = params.dim;
    const uint base = row * uint(dim);

    float sum = 0.0f;
    float sumSq = 0.0f;
    for (int i = int(tid); i < dim; i += tpg) {
        const float v = float(x[base + i]);
        sum += v;
        sumSq = fma(v, v, sumSq);
    }

    float2 s = float2(simd_sum(sum), simd_sum(sumSq));
    if (lane == 0) {
        partials[sg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s = lane < nsg ? partials[lane] : float2(0.0f);
    s = float2(simd_sum(s.x), simd_sum(s.y));

    const float invDim = 1.0f / float(dim);
    const float mean = s.x * invDim;
    const float var = max(s.y * invDim - mean * mean, 0.0f);
    const float rstd = rsqrt(var + params.eps);

    for (int i = int(tid); i < dim; i += tpg) {
        const float v = (float(x[base + i]) - mean) * rstd;
        y[base + i] = half(v * float(gamma[i]) + float(beta[i]));
    }
}

[[max_total_threads_per_threadgroup(256)]]
kernel void rmsnorm_f16(device const half*   x      [[buffer(0)]],
                        device half*         y      [[buffer(1)]],
                        device const half*   weight [[buffer(2)]],
                        constant NormParams& params [[buffer(3)]],
                        uint   row  [[threadgroup_position_in_grid]],
                        ushort tid  [[thread_index_in_threadgroup]],
                        ushort tpg  [[threads_per_threadgroup]],
                        ushort lane [[thread_index_in_simdgroup]],
                        ushort sg   [[simdgroup_index_in_threadgroup]],
                        ushort nsg  [[simdgroups_per_threadgroup]])
{
    threadgroup float partials[32];

    const int dim = params.dim;
    const int base = int(row) * dim;

    float sumSq = 0.0f;
    for (int i = tid; i < dim; i += tpg) {
        const float v = float(x[base + i]);
        sumSq = fma(v, v, sumSq);
    }
    sumSq = simd_sum(sumSq);
    if (lane == 0) {
        partials[sg] = sumSq;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sumSq = simd_sum(lane < nsg ? partials[lane] : 0.0f);

    const float rms = rsqrt(sumSq / float(dim) + params.eps);
    for (int i = tid; i < dim; i += tpg) {
        y[base + i] = half(float(x[base + i]) * rms * float(weight[i]));
    }
}
