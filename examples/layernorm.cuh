// layernorm.cuh
//
// Header-only LayerNorm forward kernels, templated on the element type
// (float or __half) and on the block size. One block normalises one row:
// Welford statistics per thread, merged across the warp with shuffles and
// across warps through shared memory; the host wrapper picks the block
// size from the row length.
//
// Intentional pitfalls: none
// (look-alikes a precise linter must accept: `/` and `%` by the template
//  parameter BLOCK and by constexpr constants; `delta / w.count` is float
//  division; the barrier sits outside all thread-dependent branches)

#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace layernorm {

constexpr int kWarp = 32;

struct Welford {
    float mean;
    float m2;
    float count;
};

__device__ __forceinline__ Welford welford_merge(const Welford& a, const Welford& b)
{
    const float count = a.count + b.count;
    if (count == 0.0f) {
        return a;
    }
    const float delta = b.mean - a.mean;
    const float wb = b.count / count;
    Welford r;
    r.mean = a.mean + delta * wb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.count * wb;
    r.count = count;
    return r;
}

__device__ __forceinline__ Welford warp_welford(Welford w)
{
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
        Welford o;
        o.mean = __shfl_xor_sync(0xffffffffu, w.mean, offset);
        o.m2 = __shfl_xor_sync(0xffffffffu, w.m2, offset);
        o.count = __shfl_xor_sync(0xffffffffu, w.count, offset);
        w = welford_merge(w, o);
    }
    return w;
}

template <typename T> __device__ __forceinline__ float to_float(T v);
template <> __device__ __forceinline__ float to_float<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
layernorm_fwd(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
              T* __restrict__ y, float* __restrict__ meanOut, float* __restrict__ rstdOut,
              int cols, float eps)
{
    static_assert(BLOCK % kWarp == 0, "BLOCK must be a multiple of the warp size");
    constexpr int kWarps = BLOCK / kWarp;
    __shared__ Welford warpStats[kWarps];
    __shared__ float rowMean;
    __shared__ float rowRstd;

    const int row = blockIdx.x;
    const T* src = x + static_cast<size_t>(row) * cols;
    T* dst = y + static_cast<size_t>(row) * cols;

    Welford w = {0.0f, 0.0f, 0.0f};
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        const float v = to_float(src[c]);
        w.count += 1.0f;
        const float delta = v - w.mean;
        w.mean += delta / w.count;
        w.m2 += delta * (v - w.mean);
    }

    w = warp_welford(w);
    const int lane = threadIdx.x % kWarp;
    const int warp = threadIdx.x / kWarp;
    if (lane == 0) {
        warpStats[warp] = w;
    }
    __syncthreads();

    if (warp == 0) {
        Welford t = lane < kWarps ? warpStats[lane] : Welford{0.0f, 0.0f, 0.0f};
        t = warp_welford(t);
        if (lane == 0) {
            rowMean = t.mean;
            rowRstd = rsqrtf(t.m2 / t.count + eps);
            if (meanOut != nullptr) {
                meanOut[row] = t.mean;
                rstdOut[row] = rowRstd;
            }
        }
    }
    __syncthreads();

    const float mean = rowMean;
    const float rstd = rowRstd;
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        const float v = (to_float(src[c]) - mean) * rstd;
        dst[c] = from_float<T>(v * to_float(gamma[c]) + to_float(beta[c]));
    }
}

template <typename T>
inline cudaError_t launch_layernorm(const T* x, const T* gamma, const T* beta, T* y,
                                    float* meanOut, float* rstdOut, int rows, int cols,
                                    float eps, cudaStream_t stream)
{
    if (cols <= 1024) {
        layernorm_fwd<T, 128><<<rows, 128, 0, stream>>>(x, gamma, beta, y, meanOut, rstdOut, cols, eps);
    } else {
        layernorm_fwd<T, 512><<<rows, 512, 0, stream>>>(x, gamma, beta, y, meanOut, rstdOut, cols, eps);
    }
    return cudaGetLastError();
}

}  // namespace layernorm
