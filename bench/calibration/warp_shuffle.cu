// Warp-level reductions and scans with __shfl_*_sync.
#include <cfloat>

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__global__ void warp_reduce_sum(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}

__global__ void warp_reduce_max_xor(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : -FLT_MAX;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}

__global__ void warp_argmin(int* out_idx, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : FLT_MAX;
    int idx = i;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        float ov = __shfl_down_sync(0xffffffffu, v, off);
        int oi = __shfl_down_sync(0xffffffffu, idx, off);
        if (ov < v || (ov == v && oi < idx)) { v = ov; idx = oi; }
    }
    if ((threadIdx.x & 31) == 0) out_idx[i / 32] = idx;
}

__global__ void warp_inclusive_scan(int* out, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = i < n ? in[i] : 0;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        int t = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += t;
    }
    if (i < n) out[i] = v;
}

__global__ void block_reduce_two_level(float* out, const float* in, int n) {
    __shared__ float partial[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += in[i];
    v = warp_sum(v);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x + 31) / 32 ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

__global__ void warp_ballot_count(int* out, const float* in, float threshold, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = __ballot_sync(0xffffffffu, i < n && in[i] > threshold);
    if ((threadIdx.x & 31) == 0) out[i / 32] = __popc(mask);
}

__global__ void warp_broadcast_normalize(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float lead = __shfl_sync(0xffffffffu, v, 0);
    if (i < n) x[i] = v / (lead == 0.0f ? 1.0f : lead);
}

__global__ void warp_mean_variance(float2* out, const float* in, int cols) {
    const float* row = in + (size_t)blockIdx.x * cols;
    float s = 0.f, ss = 0.f;
    for (int j = threadIdx.x; j < cols; j += 32) { float v = row[j]; s += v; ss += v * v; }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, off);
        ss += __shfl_xor_sync(0xffffffffu, ss, off);
    }
    if (threadIdx.x == 0) { float m = s / cols; out[blockIdx.x] = make_float2(m, ss / cols - m * m); }
}

__global__ void warp_reduce_double(double* out, const double* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = i < n ? in[i] : 0.0;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}

__global__ void warp_transpose_8x(float* out, const float* in) {
    int lane = threadIdx.x & 31;
    float v[8];
    const float* p = in + (blockIdx.x * blockDim.x + threadIdx.x) * 8;
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = p[k];
    float r[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) r[k] = __shfl_sync(0xffffffffu, v[(k + lane) & 7], (lane + k * 4) & 31);
    float* q = out + (blockIdx.x * blockDim.x + threadIdx.x) * 8;
#pragma unroll
    for (int k = 0; k < 8; ++k) q[k] = r[k];
}
