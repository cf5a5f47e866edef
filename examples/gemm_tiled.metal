// gemm_tiled.metal
//
// C = alpha * A * B + beta * C (row-major, fp32) with 16x16 threadgroup
// tiles staged in threadgroup memory, plus an optional bias/ReLU epilogue
// selected by function constants. A half-precision variant accumulates in
// float and uses simdgroup_matrix-free scalar code so it runs on every
// Apple GPU family.
//
// Intentional pitfalls:
//   SL103 (line 35: `device const GemmParams* params` is only ever read as
//          params->field, a single uniform struct: pass it as
//          `constant GemmParams&` so it can be preloaded)
// (look-alike that is fine: the half kernel takes `constant GemmParams&`)

#include <metal_stdlib>
using namespace metal;

#define TILE 16

struct GemmParams {
    int   M;
    int   N;
    int   K;
    float alpha;
    float beta;
};

constant bool kHasBias      [[function_constant(0)]];
constant bool kReluEpilogue [[function_constant(1)]];

// shaderlint: threadgroup-size=16x16
kernel void gemm_tiled_f32(device const float*      A      [[buffer(0)]],
                           device const float*      B      [[buffer(1)]],
                           device float*            C      [[buffer(2)]],
                           device const GemmParams* params [[buffer(3)]],
                           device const float*      bias   [[buffer(4), function_constant(kHasBias)]],
                           uint2   gid [[thread_position_in_grid]],
                           ushort2 lid [[thread_position_in_threadgroup]])
{
    threadgroup float As[TILE][TILE];
    threadgroup float Bs[TILE][TILE];

    const int M = params->M;
    const int N = params->N;
    const int K = params->K;
    const int row = int(gid.y);
    const int col = int(gid.x);

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int ak = k0 + lid.x;
        const int bk = k0 + lid.y;
        As[lid.y][lid.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
        Bs[lid.y][lid.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        for (int k = 0; k < TILE; ++k) {
            acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (row < M && col < N) {
        const int idx = row * N + col;
        float c = params->alpha * acc;
        if (params->beta != 0.0f) {
            c = fma(params->beta, C[idx], c);
        }
        if (kHasBias) {
            c += bias[col];
        }
        if (kReluEpilogue) {
            c = max(c, 0.0f);
        }
        C[idx] = c;
    }
}

// shaderlint: threadgroup-size=16x16
kernel void gemm_tiled_f16(device const half*    A      [[buffer(0)]],
                           device const half*    B      [[buffer(1)]],
                           device half*          C      [[buffer(2)]],
                           constant GemmParams&  params [[buffer(3)]],
                           device const half*    bias   [[buffer(4), function_constant(kHasBias)]],
                           uint2   gid [[thread_position_in_grid]],
                           ushort2 lid [[thread_position_in_threadgroup]])
{
    threadgroup half As[TILE][TILE];
    threadgroup half Bs[TILE][TILE];

    const int row = int(gid.y);
    const int col = int(gid.x);

    float acc = 0.0f;
    for (int k0 = 0; k0 < params.K; k0 += TILE) {
        const int ak = k0 + lid.x;
        const int bk = k0 + lid.y;
        As[lid.y][lid.x] = (row < params.M && ak < params.K) ? A[row * params.K + ak] : 0.0h;
        Bs[lid.y][lid.x] = (bk < params.K && col < params.N) ? B[bk * params.N + col] : 0.0h;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        for (int k = 0; k < TILE; ++k) {
            acc += float(As[lid.y][k]) * float(Bs[k][lid.x]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (row < params.M && col < params.N) {
        const int idx = row * params.N + col;
        float c = params.alpha * acc + params.beta * float(C[idx]);
        if (kHasBias) {
            c += float(bias[col]);
        }
        if (kReluEpilogue) {
            c = max(c, 0.0f);
        }
        C[idx] = half(c);
    }
}
